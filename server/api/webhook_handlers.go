package api

import (
	"context"
	"log/slog"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	partnerv1 "github.com/seatghor/seatghor/gen/seatghor/partner/v1"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/partner"
	"github.com/seatghor/seatghor/server/webhook"
)

// webhookHandler serves WebhookService: partners manage their own
// endpoints, admins everyone's (decision 0190).
type webhookHandler struct {
	svc *webhook.Service
	log *slog.Logger
}

// caller is the webhook service's view of the principal; anyone but a
// partner or an admin is refused here.
func (h *webhookHandler) caller(ctx context.Context) (webhook.Caller, error) {
	p, ok := auth.FromContext(ctx)
	if !ok {
		return webhook.Caller{}, errNotSignedIn
	}
	if h.svc == nil {
		return webhook.Caller{}, fault.New(fault.NotServed, "webhooks are not served here")
	}
	switch {
	case p.Is(auth.RoleAdmin):
		return webhook.Caller{UserID: p.UserID, Admin: true}, nil
	case p.Is(auth.RolePartner) && p.PartnerID > 0:
		// Decision 0276: the partner's signed-in account, or a key of
		// scope webhooks, may change endpoints; other keys only read.
		manages := p.APIKey == "" || p.Grant == string(partner.ScopeWebhooks)
		return webhook.Caller{UserID: p.UserID, PartnerID: p.PartnerID, APIKey: p.APIKey, Manages: manages}, nil
	}
	return webhook.Caller{}, fault.New(fault.PermissionDenied, "only partners and admins manage webhooks")
}

func (h *webhookHandler) error(ctx context.Context, err error) error {
	return toConnect(ctx, h.log, err)
}

func (h *webhookHandler) CreateEndpoint(ctx context.Context, req *connect.Request[partnerv1.CreateEndpointRequest]) (*connect.Response[partnerv1.CreateEndpointResponse], error) {
	c, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	m := req.Msg
	created, err := h.svc.CreateEndpoint(ctx, c, webhook.NewEndpoint{
		PartnerID: m.GetPartnerId(), URL: m.GetUrl(), EventTypes: m.GetEventTypes(), Description: m.GetDescription()})
	if err != nil {
		return nil, h.error(ctx, err)
	}
	return connect.NewResponse(&partnerv1.CreateEndpointResponse{Endpoint: endpointProto(created.Endpoint), Secret: created.Secret}), nil
}

func (h *webhookHandler) ListEndpoints(ctx context.Context, req *connect.Request[partnerv1.ListEndpointsRequest]) (*connect.Response[partnerv1.ListEndpointsResponse], error) {
	c, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	list, err := h.svc.ListEndpoints(ctx, c, req.Msg.GetPartnerId())
	if err != nil {
		return nil, h.error(ctx, err)
	}
	resp := &partnerv1.ListEndpointsResponse{}
	for _, e := range list {
		resp.Endpoints = append(resp.Endpoints, endpointProto(e))
	}
	return connect.NewResponse(resp), nil
}

func (h *webhookHandler) RotateEndpointSecret(ctx context.Context, req *connect.Request[partnerv1.RotateEndpointSecretRequest]) (*connect.Response[partnerv1.RotateEndpointSecretResponse], error) {
	c, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	overlap := webhook.DefaultOverlap
	if req.Msg.Overlap != nil {
		overlap = req.Msg.GetOverlap().AsDuration()
	}
	rotated, err := h.svc.RotateSecret(ctx, c, req.Msg.GetEndpointId(), overlap)
	if err != nil {
		return nil, h.error(ctx, err)
	}
	return connect.NewResponse(&partnerv1.RotateEndpointSecretResponse{Endpoint: endpointProto(rotated.Endpoint), Secret: rotated.Secret}), nil
}

func (h *webhookHandler) EnableEndpoint(ctx context.Context, req *connect.Request[partnerv1.EnableEndpointRequest]) (*connect.Response[partnerv1.EnableEndpointResponse], error) {
	c, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	e, err := h.svc.Enable(ctx, c, req.Msg.GetEndpointId())
	if err != nil {
		return nil, h.error(ctx, err)
	}
	return connect.NewResponse(&partnerv1.EnableEndpointResponse{Endpoint: endpointProto(e)}), nil
}

func (h *webhookHandler) DisableEndpoint(ctx context.Context, req *connect.Request[partnerv1.DisableEndpointRequest]) (*connect.Response[partnerv1.DisableEndpointResponse], error) {
	c, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	e, dropped, err := h.svc.Disable(ctx, c, req.Msg.GetEndpointId(), req.Msg.GetReason())
	if err != nil {
		return nil, h.error(ctx, err)
	}
	return connect.NewResponse(&partnerv1.DisableEndpointResponse{Endpoint: endpointProto(e), Dropped: int32(dropped)}), nil
}

func (h *webhookHandler) DeleteEndpoint(ctx context.Context, req *connect.Request[partnerv1.DeleteEndpointRequest]) (*connect.Response[partnerv1.DeleteEndpointResponse], error) {
	c, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	if err := h.svc.Delete(ctx, c, req.Msg.GetEndpointId()); err != nil {
		return nil, h.error(ctx, err)
	}
	return connect.NewResponse(&partnerv1.DeleteEndpointResponse{EndpointId: req.Msg.GetEndpointId()}), nil
}

var deliveryStatusOf = map[partnerv1.DeliveryStatus]webhook.DeliveryStatus{
	partnerv1.DeliveryStatus_DELIVERY_STATUS_PENDING:   webhook.DeliveryPending,
	partnerv1.DeliveryStatus_DELIVERY_STATUS_SUCCEEDED: webhook.DeliverySucceeded,
	partnerv1.DeliveryStatus_DELIVERY_STATUS_FAILED:    webhook.DeliveryFailed,
	partnerv1.DeliveryStatus_DELIVERY_STATUS_DROPPED:   webhook.DeliveryDropped,
}

func (h *webhookHandler) ListDeliveries(ctx context.Context, req *connect.Request[partnerv1.ListDeliveriesRequest]) (*connect.Response[partnerv1.ListDeliveriesResponse], error) {
	c, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	m := req.Msg
	list, next, err := h.svc.ListDeliveries(ctx, c, webhook.DeliveryFilter{EndpointID: m.GetEndpointId(),
		Status: deliveryStatusOf[m.GetStatus()], EventID: m.GetEventId(), PageSize: int(m.GetPageSize()), PageToken: m.GetPageToken()})
	if err != nil {
		return nil, h.error(ctx, err)
	}
	resp := &partnerv1.ListDeliveriesResponse{NextPageToken: next}
	for _, d := range list {
		resp.Deliveries = append(resp.Deliveries, deliveryProto(d))
	}
	return connect.NewResponse(resp), nil
}

func (h *webhookHandler) ReplayDeliveries(ctx context.Context, req *connect.Request[partnerv1.ReplayDeliveriesRequest]) (*connect.Response[partnerv1.ReplayDeliveriesResponse], error) {
	c, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	m := req.Msg
	r := webhook.Replay{EndpointID: m.GetEndpointId(), EventID: m.GetEventId()}
	if rg := m.GetRange(); rg != nil {
		r.Since, r.Until = rg.GetSince().AsTime(), rg.GetUntil().AsTime()
	}
	n, err := h.svc.ReplayDeliveries(ctx, c, r)
	if err != nil {
		return nil, h.error(ctx, err)
	}
	return connect.NewResponse(&partnerv1.ReplayDeliveriesResponse{Replayed: int32(n)}), nil
}

var endpointStatusProto = map[webhook.Status]partnerv1.EndpointStatus{
	webhook.StatusActive:   partnerv1.EndpointStatus_ENDPOINT_STATUS_ACTIVE,
	webhook.StatusDisabled: partnerv1.EndpointStatus_ENDPOINT_STATUS_DISABLED,
}

func endpointProto(e webhook.Endpoint) *partnerv1.WebhookEndpoint {
	return &partnerv1.WebhookEndpoint{
		EndpointId: e.ID, PartnerId: e.PartnerID, Url: e.URL, EventTypes: e.EventTypes, Description: e.Description,
		Status: endpointStatusProto[e.Status], DisabledReason: e.DisabledReason, DisabledAt: timestampOrNil(e.DisabledAt),
		ConsecutiveFailures: int32(e.ConsecutiveFailures), FailingSince: timestampOrNil(e.FailingSince),
		CreatedAt: timestamppb.New(e.CreatedAt), PreviousSecretExpiresAt: timestampOrNil(e.PreviousSecretExpiresAt),
		CreatedByKey: e.CreatedByKey, NeedsConfirmation: e.NeedsConfirmation, DisabledBy: disabledByProto[e.DisabledBy],
	}
}

var deliveryStatusProto = map[webhook.DeliveryStatus]partnerv1.DeliveryStatus{
	webhook.DeliveryPending:   partnerv1.DeliveryStatus_DELIVERY_STATUS_PENDING,
	webhook.DeliverySucceeded: partnerv1.DeliveryStatus_DELIVERY_STATUS_SUCCEEDED,
	webhook.DeliveryFailed:    partnerv1.DeliveryStatus_DELIVERY_STATUS_FAILED,
	webhook.DeliveryDropped:   partnerv1.DeliveryStatus_DELIVERY_STATUS_DROPPED,
}

var disabledByProto = map[webhook.DisabledBy]partnerv1.EndpointDisabledBy{
	webhook.DisabledByFailures:      partnerv1.EndpointDisabledBy_ENDPOINT_DISABLED_BY_FAILURES,
	webhook.DisabledByPartner:       partnerv1.EndpointDisabledBy_ENDPOINT_DISABLED_BY_PARTNER,
	webhook.DisabledByAdmin:         partnerv1.EndpointDisabledBy_ENDPOINT_DISABLED_BY_ADMIN,
	webhook.DisabledByKeyRevocation: partnerv1.EndpointDisabledBy_ENDPOINT_DISABLED_BY_KEY_REVOCATION,
}

func deliveryProto(d webhook.Delivery) *partnerv1.WebhookDelivery {
	out := &partnerv1.WebhookDelivery{
		DeliveryId: d.ID, EndpointId: d.EndpointID, EventId: d.EventID, EventType: d.EventType, WebhookId: d.WebhookID,
		Status: deliveryStatusProto[d.Status], Attempts: int32(d.Attempts), OccurredAt: timestamppb.New(d.OccurredAt),
		CreatedAt: timestamppb.New(d.CreatedAt), DroppedReason: d.DroppedReason,
	}
	if d.Status == webhook.DeliveryPending {
		out.NextAttemptAt = timestamppb.New(d.NextAttemptAt)
	}
	for _, a := range d.Recent {
		out.RecentAttempts = append(out.RecentAttempts, &partnerv1.DeliveryAttempt{Attempt: int32(a.Number),
			AttemptedAt: timestamppb.New(a.At), StatusCode: int32(a.StatusCode), Error: a.Error, Duration: durationpb.New(a.Duration)})
	}
	return out
}

// timestampOrNil leaves an unset time unset on the wire.
func timestampOrNil(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}
