package api

import (
	"context"
	"log/slog"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/fault"
)

type catalogHandler struct {
	svc *catalog.Service
	log *slog.Logger
	// waitingRooms says whether the platform runs waiting rooms (it needs
	// Redis); without them a show asking for one is refused.
	waitingRooms bool
}

func (h *catalogHandler) CreateShow(ctx context.Context, req *connect.Request[catalogv1.CreateShowRequest]) (*connect.Response[catalogv1.CreateShowResponse], error) {
	p, _ := auth.FromContext(ctx)
	// The role is coarse: whether this operator manages the organisation is
	// the catalog's call (decision 0075).
	if !p.Is(auth.RoleOperator, auth.RoleAdmin) {
		return nil, fault.New(fault.PermissionDenied, "only operators and admins create shows")
	}
	m := req.Msg
	in := catalog.NewShow{Show: catalog.Show{
		Kind: m.GetKind(), Title: m.GetTitle(), Operator: m.GetOperator(), OrganizationID: m.GetOrganizationId(),
		Origin:      m.GetOrigin(),
		Destination: m.GetDestination(), Venue: m.GetVenue(), StartsAt: m.GetStartsAt().AsTime(),
		Currency: m.GetCurrency(), HoldTTL: m.GetHoldTtl().AsDuration(),
		PaymentExtension:   m.GetPaymentExtension().AsDuration(),
		MaxSeatsPerAccount: int(m.GetMaxSeatsPerAccount()), MaxSeatsPerHold: int(m.GetMaxSeatsPerHold()),
		TimeZone: m.GetTimeZone(),
	}}
	if m.GetOnSaleAt() != nil {
		in.OnSaleAt = m.GetOnSaleAt().AsTime()
	}
	if m.Shard != nil {
		in.RequestedShard = m.Shard
	}
	in.Admin = p.Is(auth.RoleAdmin)
	if m.CommissionBps != nil {
		in.CommissionBps = new(int(m.GetCommissionBps()))
	}
	if m.CancellationFeeBps != nil {
		in.CancellationFeeBps = new(int(m.GetCancellationFeeBps()))
	}
	if w := m.GetWaitingRoom(); w.GetEnabled() {
		if !h.waitingRooms {
			return nil, fault.New(fault.WaitingRoomsNotServed, "waiting rooms need Redis (SEATGHOR_REDIS_URL), which this server has not")
		}
		in.WaitingRoom = &catalog.WaitingRoom{MinRate: int(w.GetMinAdmissionRate()), MaxRate: int(w.GetMaxAdmissionRate()),
			AdmittedTTL: w.GetAdmittedTokenTtl().AsDuration(), SaleID: w.GetSaleId()}
		if w.GetEndsAt() != nil {
			in.WaitingRoom.EndsAt = w.GetEndsAt().AsTime()
		}
	}
	for _, s := range m.GetSections() {
		in.Sections = append(in.Sections, catalog.Section{Name: s.GetName(), NameBn: s.GetNameBn(), Rows: s.GetRows(),
			SeatsPerRow: int(s.GetSeatsPerRow()), PriceMinor: s.GetPriceMinor()})
	}
	for _, a := range m.GetGaAreas() {
		in.GAAreas = append(in.GAAreas, catalog.GAArea{Name: a.GetName(), Capacity: int(a.GetCapacity()),
			PriceMinor: a.GetPriceMinor(), Buckets: int(a.GetBuckets())})
	}
	show, err := h.svc.CreateShow(ctx, p.UserID, in)
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&catalogv1.CreateShowResponse{Show: show.Proto()}), nil
}

func (h *catalogHandler) GetShow(ctx context.Context, req *connect.Request[catalogv1.GetShowRequest]) (*connect.Response[catalogv1.GetShowResponse], error) {
	show, err := h.svc.GetShow(ctx, req.Msg.GetShowId())
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&catalogv1.GetShowResponse{Show: show.Proto()}), nil
}

func (h *catalogHandler) ListShows(ctx context.Context, req *connect.Request[catalogv1.ListShowsRequest]) (*connect.Response[catalogv1.ListShowsResponse], error) {
	f := catalog.ShowFilter{Kind: req.Msg.GetKind()}
	if req.Msg.GetStartsFrom() != nil {
		f.StartsFrom = req.Msg.GetStartsFrom().AsTime()
	}
	if req.Msg.GetForGate() {
		// Who checks tickets in, as CheckInTicket decides it: an admin every
		// show, an operator their organisations' (as manager or gate staff).
		p, _ := auth.FromContext(ctx)
		switch {
		case p.Is(auth.RoleAdmin):
		case p.Is(auth.RoleOperator) && p.UserID != "":
			f.StaffOf = p.UserID
		default:
			return connect.NewResponse(&catalogv1.ListShowsResponse{}), nil
		}
	}
	shows, next, err := h.svc.ListShows(ctx, int(req.Msg.GetPageSize()), req.Msg.GetPageToken(), f)
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	resp := &catalogv1.ListShowsResponse{NextPageToken: next}
	for _, s := range shows {
		resp.Shows = append(resp.Shows, s.Proto())
	}
	return connect.NewResponse(resp), nil
}

var orgRoles = map[catalogv1.OrganizationRole]catalog.Role{
	catalogv1.OrganizationRole_ORGANIZATION_ROLE_MANAGER: catalog.RoleManager,
	catalogv1.OrganizationRole_ORGANIZATION_ROLE_GATE:    catalog.RoleGate,
}

func (h *catalogHandler) CreateOrganization(ctx context.Context, req *connect.Request[catalogv1.CreateOrganizationRequest]) (*connect.Response[catalogv1.CreateOrganizationResponse], error) {
	p, _ := auth.FromContext(ctx)
	if !p.Is(auth.RoleAdmin) {
		return nil, toConnect(ctx, h.log, fault.New(fault.PermissionDenied, "only admins manage organizations"))
	}
	o, err := h.svc.CreateOrganization(ctx, p.UserID, req.Msg.GetOrganizationId(), req.Msg.GetName())
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&catalogv1.CreateOrganizationResponse{Organization: &catalogv1.Organization{
		OrganizationId: o.ID, Name: o.Name, CreatedAt: timestamppb.New(o.CreatedAt),
	}}), nil
}

func (h *catalogHandler) AddOrganizationMember(ctx context.Context, req *connect.Request[catalogv1.AddOrganizationMemberRequest]) (*connect.Response[catalogv1.AddOrganizationMemberResponse], error) {
	p, _ := auth.FromContext(ctx)
	if !p.Is(auth.RoleAdmin) {
		return nil, toConnect(ctx, h.log, fault.New(fault.PermissionDenied, "only admins manage organizations"))
	}
	m := req.Msg
	mem, err := h.svc.SetMember(ctx, p.UserID, m.GetOrganizationId(), m.GetUserId(), orgRoles[m.GetRole()])
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&catalogv1.AddOrganizationMemberResponse{Member: &catalogv1.OrganizationMember{
		OrganizationId: mem.OrganizationID, UserId: mem.UserID, Role: m.GetRole(), AddedAt: timestamppb.New(mem.AddedAt),
	}}), nil
}

func (h *catalogHandler) RemoveOrganizationMember(ctx context.Context, req *connect.Request[catalogv1.RemoveOrganizationMemberRequest]) (*connect.Response[catalogv1.RemoveOrganizationMemberResponse], error) {
	p, _ := auth.FromContext(ctx)
	if !p.Is(auth.RoleAdmin) {
		return nil, toConnect(ctx, h.log, fault.New(fault.PermissionDenied, "only admins manage organizations"))
	}
	if err := h.svc.RemoveMember(ctx, req.Msg.GetOrganizationId(), req.Msg.GetUserId()); err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&catalogv1.RemoveOrganizationMemberResponse{}), nil
}
