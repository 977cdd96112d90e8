package api

import (
	"time"

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
	// cancels reads how far a show's cancellation has got.
	cancels cancellations
	// now is the time a show's status is read at.
	now func() time.Time
}

// showProto is a show as the API answers it: with its status now.
func (h *catalogHandler) showProto(s catalog.Show) *catalogv1.Show {
	p := s.Proto()
	p.Status = s.Status(h.now())
	return p
}

func (h *catalogHandler) CreateShow(ctx context.Context, req *connect.Request[catalogv1.CreateShowRequest]) (*connect.Response[catalogv1.CreateShowResponse], error) {
	p, _ := auth.FromContext(ctx)
	// The role is coarse: whether this operator manages the organisation is
	// the catalog's call (decision 0075).
	if !p.Is(auth.RoleOperator, auth.RoleAdmin) {
		return nil, fault.New(fault.PermissionDenied, "only operators and admins create shows")
	}
	m := req.Msg
	if m.GetWaitingRoom().GetEnabled() && !h.waitingRooms {
		return nil, fault.New(fault.WaitingRoomsNotServed, "waiting rooms need Redis (SEATGHOR_REDIS_URL), which this server has not")
	}
	in := catalog.FromRequest(m)
	in.Admin = p.Is(auth.RoleAdmin)
	show, err := h.svc.CreateShow(ctx, p.UserID, in)
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&catalogv1.CreateShowResponse{Show: h.showProto(show)}), nil
}

func (h *catalogHandler) GetShow(ctx context.Context, req *connect.Request[catalogv1.GetShowRequest]) (*connect.Response[catalogv1.GetShowResponse], error) {
	show, err := h.svc.GetShow(ctx, req.Msg.GetShowId())
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&catalogv1.GetShowResponse{Show: h.showProto(show)}), nil
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
		resp.Shows = append(resp.Shows, h.showProto(s))
	}
	return connect.NewResponse(resp), nil
}

var orgRoles = map[catalogv1.OrganizationRole]catalog.Role{
	catalogv1.OrganizationRole_ORGANIZATION_ROLE_MANAGER: catalog.RoleManager,
	catalogv1.OrganizationRole_ORGANIZATION_ROLE_GATE:    catalog.RoleGate,
	catalogv1.OrganizationRole_ORGANIZATION_ROLE_COUNTER: catalog.RoleCounter,
}

func (h *catalogHandler) CreateOrganization(ctx context.Context, req *connect.Request[catalogv1.CreateOrganizationRequest]) (*connect.Response[catalogv1.CreateOrganizationResponse], error) {
	p, _ := auth.FromContext(ctx)
	if !p.Is(auth.RoleAdmin) {
		return nil, toConnect(ctx, h.log, fault.New(fault.PermissionDenied, "only admins manage organizations"))
	}
	o, err := h.svc.CreateOrganization(ctx, p.UserID, req.Msg.GetOrganizationId(), req.Msg.GetName(), req.Msg.GetNameBn())
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&catalogv1.CreateOrganizationResponse{Organization: &catalogv1.Organization{
		OrganizationId: o.ID, Name: o.Name, NameBn: o.NameBn, CreatedAt: timestamppb.New(o.CreatedAt),
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

// The layout templates (decision 0372): an organisation's are its managers'
// and admins' (the catalog checks membership); the shipped ones any
// operator's or admin's to read.

func (h *catalogHandler) CreateLayoutTemplate(ctx context.Context, req *connect.Request[catalogv1.CreateLayoutTemplateRequest]) (*connect.Response[catalogv1.CreateLayoutTemplateResponse], error) {
	p, _ := auth.FromContext(ctx)
	if !p.Is(auth.RoleOperator, auth.RoleAdmin) {
		return nil, fault.New(fault.PermissionDenied, "only operators and admins keep layout templates")
	}
	t, err := h.svc.CreateLayoutTemplate(ctx, p.UserID, p.Is(auth.RoleAdmin), catalog.TemplateFromProto(req.Msg.GetTemplate()))
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&catalogv1.CreateLayoutTemplateResponse{Template: t.Proto()}), nil
}

func (h *catalogHandler) GetLayoutTemplate(ctx context.Context, req *connect.Request[catalogv1.GetLayoutTemplateRequest]) (*connect.Response[catalogv1.GetLayoutTemplateResponse], error) {
	p, _ := auth.FromContext(ctx)
	if !p.Is(auth.RoleOperator, auth.RoleAdmin) {
		return nil, fault.New(fault.PermissionDenied, "only operators and admins read layout templates")
	}
	t, err := h.svc.LayoutTemplate(ctx, p.UserID, p.Is(auth.RoleAdmin), req.Msg.GetOrganizationId(), req.Msg.GetTemplateId())
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&catalogv1.GetLayoutTemplateResponse{Template: t.Proto()}), nil
}

func (h *catalogHandler) ListLayoutTemplates(ctx context.Context, req *connect.Request[catalogv1.ListLayoutTemplatesRequest]) (*connect.Response[catalogv1.ListLayoutTemplatesResponse], error) {
	p, _ := auth.FromContext(ctx)
	if !p.Is(auth.RoleOperator, auth.RoleAdmin) {
		return nil, fault.New(fault.PermissionDenied, "only operators and admins read layout templates")
	}
	list, err := h.svc.LayoutTemplates(ctx, p.UserID, p.Is(auth.RoleAdmin), req.Msg.GetOrganizationId())
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	resp := &catalogv1.ListLayoutTemplatesResponse{}
	for _, t := range list {
		resp.Templates = append(resp.Templates, t.Proto())
	}
	return connect.NewResponse(resp), nil
}
