package api

import (
	"context"
	"errors"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	"github.com/seatghor/seatghor/server/audit"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/payment"
)

// cancellations is what the catalog's cancellation RPCs ask of the payment
// service: the job's progress (decision 0440).
type cancellations interface {
	CancellationProgress(ctx context.Context, showID int64) (payment.Cancellation, error)
}

// CancelShow cancels a show for good; its shard's mark starts the job
// that ends its orders (decision 0440).
func (h *catalogHandler) CancelShow(ctx context.Context, req *connect.Request[catalogv1.CancelShowRequest]) (*connect.Response[catalogv1.CancelShowResponse], error) {
	by, err := h.mayCancel(ctx, req.Msg.GetShowId())
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	if _, err := h.svc.CancelShow(ctx, req.Msg.GetShowId(), by, req.Msg.GetReason()); err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	c, err := h.cancels.CancellationProgress(ctx, req.Msg.GetShowId())
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&catalogv1.CancelShowResponse{Cancellation: cancellationProto(c)}), nil
}

// GetShowCancellation reports how far a show's cancellation has got.
func (h *catalogHandler) GetShowCancellation(ctx context.Context, req *connect.Request[catalogv1.GetShowCancellationRequest]) (*connect.Response[catalogv1.GetShowCancellationResponse], error) {
	if _, err := h.mayCancel(ctx, req.Msg.GetShowId()); err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	c, err := h.cancels.CancellationProgress(ctx, req.Msg.GetShowId())
	if errors.Is(err, catalog.ErrNotFound) {
		err = fault.New(fault.ShowNotFound, "show %d is not cancelled", req.Msg.GetShowId())
	}
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&catalogv1.GetShowCancellationResponse{Cancellation: cancellationProto(c)}), nil
}

// RescheduleShow moves a show to a later time; its paid orders hear of it
// through their shard's outbox (decision 0441).
func (h *catalogHandler) RescheduleShow(ctx context.Context, req *connect.Request[catalogv1.RescheduleShowRequest]) (*connect.Response[catalogv1.RescheduleShowResponse], error) {
	by, err := h.manager(ctx, req.Msg.GetShowId(), "reschedule")
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	show, err := h.svc.RescheduleShow(ctx, req.Msg.GetShowId(), req.Msg.GetStartsAt().AsTime(), by, req.Msg.GetReason(),
		booking.AnnounceReschedule)
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&catalogv1.RescheduleShowResponse{Show: h.showProto(show)}), nil
}

// UpdateShow changes a show's names, opening and hold settings (decision
// 0454): its managers and admins.
func (h *catalogHandler) UpdateShow(ctx context.Context, req *connect.Request[catalogv1.UpdateShowRequest]) (*connect.Response[catalogv1.UpdateShowResponse], error) {
	m := req.Msg
	by, err := h.manager(ctx, m.GetShowId(), "change")
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	c := catalog.ShowChange{Title: m.Title, TitleBn: m.TitleBn, Venue: m.Venue, VenueBn: m.VenueBn,
		MaxSeatsPerAccount: optionalInt(m.MaxSeatsPerAccount), MaxSeatsPerHold: optionalInt(m.MaxSeatsPerHold)}
	if m.GetOnSaleAt() != nil {
		at := m.GetOnSaleAt().AsTime()
		c.OnSaleAt = &at
	}
	if m.GetHoldTtl() != nil {
		ttl := m.GetHoldTtl().AsDuration()
		c.HoldTTL = &ttl
	}
	for _, p := range m.GetSectionPrices() {
		c.SectionPrices = append(c.SectionPrices, catalog.SectionPrice{Section: p.GetSection(), PriceMinor: p.GetPriceMinor()})
	}
	for _, p := range m.GetGaAreaPrices() {
		c.AreaPrices = append(c.AreaPrices, catalog.AreaPrice{Area: p.GetGaArea(), PriceMinor: p.GetPriceMinor()})
	}
	show, err := h.svc.UpdateShow(ctx, m.GetShowId(), c, by, m.GetReason())
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&catalogv1.UpdateShowResponse{Show: h.showProto(show)}), nil
}

// optionalInt is an optional proto int32 as an optional int.
func optionalInt(v *int32) *int {
	if v == nil {
		return nil
	}
	n := int(*v)
	return &n
}

// mayCancel says who cancels the show when the caller may (manager).
func (h *catalogHandler) mayCancel(ctx context.Context, showID int64) (audit.Actor, error) {
	if h.cancels == nil {
		return audit.Actor{}, fault.New(fault.NotServed, "this server does not run payments, which cancellations refund through")
	}
	return h.manager(ctx, showID, "cancel")
}

// manager says who acts on the show when the caller may: an admin, or a
// manager of the show's organisation (a show of the platform's own is
// admins' only). verb names the act in the refusal.
func (h *catalogHandler) manager(ctx context.Context, showID int64, verb string) (audit.Actor, error) {
	return h.showStaff(ctx, showID, managersOnly(verb), catalog.RoleManager)
}

// showStaff says who acts on the show when the caller may: an admin, or a
// member of the show's organisation in one of roles (a show of the
// platform's own is admins' only); refused otherwise. The show is read
// only for an operator, who may be one of its staff.
func (h *catalogHandler) showStaff(ctx context.Context, showID int64, refused error, roles ...catalog.Role) (audit.Actor, error) {
	show := catalog.Show{ID: showID}
	if p, _ := auth.FromContext(ctx); !p.Is(auth.RoleAdmin) && p.Is(auth.RoleOperator) && p.UserID != "" {
		var err error
		if show, err = h.svc.GetShow(ctx, showID); err != nil {
			return audit.Actor{}, err
		}
	}
	return h.orgMember(ctx, show.OrganizationID, refused, roles...)
}

// showManager is manager for a show already read.
func (h *catalogHandler) showManager(ctx context.Context, show catalog.Show, verb string) (audit.Actor, error) {
	return h.orgMember(ctx, show.OrganizationID, managersOnly(verb), catalog.RoleManager)
}

// managersOnly is the refusal of a show's act (verb) to whoever is not its
// manager or an admin.
func managersOnly(verb string) error {
	return fault.New(fault.PermissionDenied, "only the show's managers and admins %s it", verb)
}

// PublishShow puts a draft on sale (decision 0455): its managers and
// admins.
func (h *catalogHandler) PublishShow(ctx context.Context, req *connect.Request[catalogv1.PublishShowRequest]) (*connect.Response[catalogv1.PublishShowResponse], error) {
	by, err := h.manager(ctx, req.Msg.GetShowId(), "publish")
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	show, err := h.svc.PublishShow(ctx, req.Msg.GetShowId(), by)
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&catalogv1.PublishShowResponse{Show: h.showProto(show)}), nil
}

// MarkTrip records a coach's progress (decision 0468): the trip's gate
// staff (its supervisors, who board it from the manifest), its managers
// and admins.
func (h *catalogHandler) MarkTrip(ctx context.Context, req *connect.Request[catalogv1.MarkTripRequest]) (*connect.Response[catalogv1.MarkTripResponse], error) {
	refused := fault.New(fault.PermissionDenied, "only the trip's supervisors, managers and admins mark where its coach is")
	by, err := h.showStaff(ctx, req.Msg.GetShowId(), refused, catalog.RoleGate, catalog.RoleManager)
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	got, err := h.svc.MarkTrip(ctx, req.Msg.GetShowId(), catalog.TripMark{Arrived: req.Msg.GetMark() == catalogv1.TripMark_TRIP_MARK_ARRIVED,
		StopID: req.Msg.GetStopId()}, by)
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&catalogv1.MarkTripResponse{Show: h.showProto(got)}), nil
}

// DeleteShow deletes a draft that will never run (decision 0462): its
// managers and admins.
func (h *catalogHandler) DeleteShow(ctx context.Context, req *connect.Request[catalogv1.DeleteShowRequest]) (*connect.Response[catalogv1.DeleteShowResponse], error) {
	by, err := h.manager(ctx, req.Msg.GetShowId(), "delete")
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	if err := h.svc.DeleteDraft(ctx, req.Msg.GetShowId(), by, req.Msg.GetReason()); err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&catalogv1.DeleteShowResponse{}), nil
}

func cancellationProto(c payment.Cancellation) *catalogv1.ShowCancellation {
	out := &catalogv1.ShowCancellation{
		ShowId: c.ShowID, CancelledAt: timestamppb.New(c.At), CancelledBy: c.By, Reason: c.Reason,
		OrdersLeft: int32(c.OrdersLeft), OrdersCancelled: int32(c.OrdersCancelled),
		RefundsSucceeded: int32(c.RefundsSucceeded), RefundsPending: int32(c.RefundsPending),
		RefundsFailed: int32(c.RefundsFailed),
	}
	if c.Currency != "" {
		out.Refunded = &commonv1.Money{AmountMinor: c.RefundedMinor, Currency: c.Currency}
	}
	if c.DoneAt != nil {
		out.DoneAt = timestamppb.New(*c.DoneAt)
	}
	return out
}
