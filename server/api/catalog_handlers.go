package api

import (
	"time"

	"context"
	"fmt"
	"log/slog"
	"strconv"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/server/audit"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/page"
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
	if show.PublishedAt == nil {
		// A draft is its managers' (decision 0455): to anyone else there
		// is no such show.
		if _, err := h.showManager(ctx, show, "read"); err != nil {
			return nil, toConnect(ctx, h.log, fmt.Errorf("show %d: %w", show.ID, catalog.ErrNotFound))
		}
	}
	return connect.NewResponse(&catalogv1.GetShowResponse{Show: h.showProto(show)}), nil
}

func (h *catalogHandler) ListShows(ctx context.Context, req *connect.Request[catalogv1.ListShowsRequest]) (*connect.Response[catalogv1.ListShowsResponse], error) {
	f := catalog.ShowFilter{Kind: req.Msg.GetKind(), OrganizationID: req.Msg.GetOrganizationId()}
	if req.Msg.GetIncludeDrafts() {
		if f.OrganizationID == "" {
			return nil, toConnect(ctx, h.log, fault.OnField(fault.ShowInvalid, "include_drafts", "drafts are listed by organisation: set organization_id"))
		}
		refused := fault.New(fault.PermissionDenied, "only the organisation's managers and admins see its drafts")
		if _, err := h.orgManager(ctx, f.OrganizationID, refused); err != nil {
			return nil, toConnect(ctx, h.log, err)
		}
		f.Drafts = true
	}
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
	return connect.NewResponse(&catalogv1.CreateOrganizationResponse{Organization: organizationProto(o)}), nil
}

func (h *catalogHandler) AddOrganizationMember(ctx context.Context, req *connect.Request[catalogv1.AddOrganizationMemberRequest]) (*connect.Response[catalogv1.AddOrganizationMemberResponse], error) {
	m := req.Msg
	by, err := h.staffManager(ctx, m.GetOrganizationId(), m.GetUserId())
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	mem, err := h.svc.SetMember(ctx, by, m.GetOrganizationId(), m.GetUserId(), orgRoles[m.GetRole()])
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&catalogv1.AddOrganizationMemberResponse{Member: memberProto(mem)}), nil
}

func (h *catalogHandler) RemoveOrganizationMember(ctx context.Context, req *connect.Request[catalogv1.RemoveOrganizationMemberRequest]) (*connect.Response[catalogv1.RemoveOrganizationMemberResponse], error) {
	by, err := h.staffManager(ctx, req.Msg.GetOrganizationId(), req.Msg.GetUserId())
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	if err := h.svc.RemoveMember(ctx, by, req.Msg.GetOrganizationId(), req.Msg.GetUserId()); err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&catalogv1.RemoveOrganizationMemberResponse{}), nil
}

// staffManager says who changes an organisation's staff when the caller
// may (decision 0446): an admin, or a manager of the organisation changing
// someone else's membership (a manager neither promotes nor removes
// themselves, so an organisation is never left without the manager who
// was there).
func (h *catalogHandler) staffManager(ctx context.Context, orgID, userID string) (audit.Actor, error) {
	by, err := h.orgManager(ctx, orgID, fault.New(fault.PermissionDenied, "only the organization's managers and admins manage its staff"))
	if err != nil {
		return audit.Actor{}, err
	}
	if by.Kind == audit.ActorUser && userID == by.ID {
		return audit.Actor{}, fault.New(fault.PermissionDenied, "a manager does not change their own membership: another manager or an admin does")
	}
	return by, nil
}

// orgManager says who acts for organisation orgID when the caller may: an
// admin, or one of its managers (an empty orgID, the platform's own, has
// none); anyone else gets refused.
func (h *catalogHandler) orgManager(ctx context.Context, orgID string, refused error) (audit.Actor, error) {
	return h.orgMember(ctx, orgID, refused, catalog.RoleManager)
}

// orgMember says who acts for organisation orgID when the caller may: an
// admin, or a member of it in one of roles; refused otherwise.
func (h *catalogHandler) orgMember(ctx context.Context, orgID string, refused error, roles ...catalog.Role) (audit.Actor, error) {
	p, _ := auth.FromContext(ctx)
	if p.Is(auth.RoleAdmin) {
		return audit.Actor{Kind: audit.ActorAdmin, ID: p.UserID}, nil
	}
	if !p.Is(auth.RoleOperator) || p.UserID == "" {
		return audit.Actor{}, refused
	}
	ok, err := h.svc.HasRole(ctx, orgID, p.UserID, roles...)
	if err != nil {
		return audit.Actor{}, err
	}
	if !ok {
		return audit.Actor{}, refused
	}
	return audit.Actor{Kind: audit.ActorUser, ID: p.UserID}, nil
}

func memberProto(m catalog.Member) *catalogv1.OrganizationMember {
	return &catalogv1.OrganizationMember{OrganizationId: m.OrganizationID, UserId: m.UserID,
		Role: roleProto(m.Role), AddedAt: timestamppb.New(m.AddedAt)}
}

func roleProto(r catalog.Role) catalogv1.OrganizationRole {
	for p, role := range orgRoles {
		if role == r {
			return p
		}
	}
	return catalogv1.OrganizationRole_ORGANIZATION_ROLE_UNSPECIFIED
}

func organizationProto(o catalog.Organization) *catalogv1.Organization {
	return &catalogv1.Organization{OrganizationId: o.ID, Name: o.Name, NameBn: o.NameBn, CreatedAt: timestamppb.New(o.CreatedAt)}
}

func (h *catalogHandler) ListOrganizations(ctx context.Context, _ *connect.Request[catalogv1.ListOrganizationsRequest]) (*connect.Response[catalogv1.ListOrganizationsResponse], error) {
	p, _ := auth.FromContext(ctx)
	resp := &catalogv1.ListOrganizationsResponse{}
	if p.UserID == "" || !(p.Is(auth.RoleAdmin) || p.Is(auth.RoleOperator)) {
		return connect.NewResponse(resp), nil // a buyer runs no organisation
	}
	list, err := h.svc.Organizations(ctx, p.UserID, p.Is(auth.RoleAdmin))
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	for _, a := range list {
		resp.Organizations = append(resp.Organizations, &catalogv1.OrganizationAccess{
			Organization: organizationProto(a.Organization), Role: roleProto(a.Role)})
	}
	return connect.NewResponse(resp), nil
}

func (h *catalogHandler) ListOrganizationMembers(ctx context.Context, req *connect.Request[catalogv1.ListOrganizationMembersRequest]) (*connect.Response[catalogv1.ListOrganizationMembersResponse], error) {
	if _, err := h.orgManager(ctx, req.Msg.GetOrganizationId(),
		fault.New(fault.PermissionDenied, "only the organization's managers and admins list its staff")); err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	list, err := h.svc.Members(ctx, req.Msg.GetOrganizationId())
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	resp := &catalogv1.ListOrganizationMembersResponse{}
	for _, m := range list {
		resp.Members = append(resp.Members, memberProto(m))
	}
	return connect.NewResponse(resp), nil
}

func (h *catalogHandler) ListAuditEntries(ctx context.Context, req *connect.Request[catalogv1.ListAuditEntriesRequest]) (*connect.Response[catalogv1.ListAuditEntriesResponse], error) {
	m := req.Msg
	p, _ := auth.FromContext(ctx)
	if !p.Is(auth.RoleAdmin) {
		if m.GetOrganizationId() == "" {
			return nil, toConnect(ctx, h.log, fault.New(fault.PermissionDenied, "only admins read the whole audit log; a manager names their organization"))
		}
		if _, err := h.orgManager(ctx, m.GetOrganizationId(),
			fault.New(fault.PermissionDenied, "only the organization's managers and admins read its audit log")); err != nil {
			return nil, toConnect(ctx, h.log, err)
		}
	}
	f := audit.Filter{OrganizationID: m.GetOrganizationId(), Target: m.GetTarget(), ActorID: m.GetActorId(),
		Action: m.GetAction(), Limit: int(m.GetPageSize())}
	if f.Limit == 0 {
		f.Limit = 50
	}
	if t := m.GetPageToken(); t != "" {
		before, err := strconv.ParseInt(t, 10, 64)
		if err != nil || before <= 0 {
			return nil, toConnect(ctx, h.log, &fault.Error{Reason: fault.ShowInvalid, Field: "page_token", Message: page.ErrBadToken.Message})
		}
		f.Before = before
	}
	f.Limit++ // one more than the page: is there a next one?
	entries, err := h.svc.AuditEntries(ctx, f)
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	resp := &catalogv1.ListAuditEntriesResponse{}
	if len(entries) == f.Limit {
		entries = entries[:f.Limit-1]
		resp.NextPageToken = strconv.FormatInt(entries[len(entries)-1].ID, 10)
	}
	for _, e := range entries {
		detail, err := structpb.NewStruct(e.Detail)
		if err != nil {
			return nil, toConnect(ctx, h.log, fmt.Errorf("audit entry %d: %w", e.ID, err))
		}
		resp.Entries = append(resp.Entries, &catalogv1.AuditEntry{AuditId: e.ID, At: timestamppb.New(e.At),
			ActorKind: string(e.Actor.Kind), ActorId: e.Actor.ID, Action: e.Action, Target: e.Target,
			OrganizationId: e.OrganizationID, Detail: detail})
	}
	return connect.NewResponse(resp), nil
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

// UpdateLayoutTemplate replaces an organisation's template (decision
// 0466): its managers and admins.
func (h *catalogHandler) UpdateLayoutTemplate(ctx context.Context, req *connect.Request[catalogv1.UpdateLayoutTemplateRequest]) (*connect.Response[catalogv1.UpdateLayoutTemplateResponse], error) {
	p, _ := auth.FromContext(ctx)
	if !p.Is(auth.RoleOperator, auth.RoleAdmin) {
		return nil, fault.New(fault.PermissionDenied, "only operators and admins keep layout templates")
	}
	t, err := h.svc.UpdateLayoutTemplate(ctx, p.UserID, p.Is(auth.RoleAdmin), catalog.TemplateFromProto(req.Msg.GetTemplate()))
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&catalogv1.UpdateLayoutTemplateResponse{Template: t.Proto()}), nil
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
