package api

import (
	"context"
	"log/slog"
	"strconv"

	"connectrpc.com/connect"
	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/types/known/timestamppb"

	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	partnerv1 "github.com/seatghor/seatghor/gen/seatghor/partner/v1"
	"github.com/seatghor/seatghor/server/audit"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/partner"
	"github.com/seatghor/seatghor/server/webhook"
)

// partnerHandler serves PartnerService: admins manage partners; a partner
// manages its own keys and reads its own statement.
type partnerHandler struct {
	svc *partner.Service
	// hooks disables the webhook endpoints a revoked key created; nil on a
	// server without webhooks.
	hooks *webhook.Service
	log   *slog.Logger
}

// errPartnersNotServed answers everything on a server built without partners.
var errPartnersNotServed = fault.New(fault.NotServed, "partners are not served here")

// partnerCaller returns the caller if it is an admin or acts for partner
// id; keyOK says whether a caller signed in with an API key will do (keys
// may not manage keys, so a leaked key cannot mint its successors).
func (h *partnerHandler) partnerCaller(ctx context.Context, id int64, keyOK bool) (auth.Principal, error) {
	p, ok := auth.FromContext(ctx)
	switch {
	case h.svc == nil:
		return p, errPartnersNotServed
	case !ok:
		return p, errNotSignedIn
	case p.Is(auth.RoleAdmin):
		return p, nil
	case !p.Is(auth.RolePartner) || p.PartnerID != id:
		return p, fault.New(fault.PermissionDenied, "only admins and partner %d itself may do this", id)
	case !keyOK && p.APIKey != "":
		return p, fault.New(fault.PermissionDenied, "API keys cannot manage API keys: sign in with the partner's token")
	}
	return p, nil
}

func (h *partnerHandler) err(ctx context.Context, err error) error { return toConnect(ctx, h.log, err) }

// adminOf is the admin who calls; anyone else is refused to verb
// partners.
func (h *partnerHandler) adminOf(ctx context.Context, verb string) (string, error) {
	p, ok := auth.FromContext(ctx)
	switch {
	case h.svc == nil:
		return "", errPartnersNotServed
	case !ok:
		return "", errNotSignedIn
	case !p.Is(auth.RoleAdmin):
		return "", fault.New(fault.PermissionDenied, "only admins %s partners", verb)
	}
	return p.UserID, nil
}

func (h *partnerHandler) CreatePartner(ctx context.Context, req *connect.Request[partnerv1.CreatePartnerRequest]) (*connect.Response[partnerv1.CreatePartnerResponse], error) {
	admin, err := h.adminOf(ctx, "create")
	if err != nil {
		return nil, h.err(ctx, err)
	}
	m := req.Msg
	c := m.GetContact()
	out, err := h.svc.CreatePartner(ctx, admin, partner.Partner{
		Name: m.GetName(), CommissionBps: m.GetCommissionBps(),
		Contact:              partner.Contact{Name: c.GetName(), Email: c.GetEmail(), Phone: c.GetPhone()},
		AllowedOrganizations: m.GetAllowedOrganizationIds(), AllowedShows: m.GetAllowedShowIds(),
		SellsEveryShow: m.GetSellsEveryShow(), ShowHoldCap: int(m.GetShowHoldCap()),
	})
	if err != nil {
		return nil, h.err(ctx, err)
	}
	return connect.NewResponse(&partnerv1.CreatePartnerResponse{Partner: partnerProto(out)}), nil
}

func (h *partnerHandler) UpdatePartnerAccess(ctx context.Context, req *connect.Request[partnerv1.UpdatePartnerAccessRequest]) (*connect.Response[partnerv1.UpdatePartnerAccessResponse], error) {
	p, ok := auth.FromContext(ctx)
	switch {
	case h.svc == nil:
		return nil, h.err(ctx, errPartnersNotServed)
	case !ok:
		return nil, h.err(ctx, errNotSignedIn)
	case !p.Is(auth.RoleAdmin, auth.RoleOperator):
		return nil, h.err(ctx, fault.New(fault.PermissionDenied, "only admins and operators change what a partner may sell"))
	}
	m := req.Msg
	ch := partner.AccessChange{
		PartnerID: m.GetPartnerId(), AllowOrganizations: m.GetAllowOrganizationIds(), AllowShows: m.GetAllowShowIds(),
		WithdrawOrganizations: m.GetWithdrawOrganizationIds(), WithdrawShows: m.GetWithdrawShowIds(),
		SellsEveryShow: m.SellsEveryShow,
	}
	if m.ShowHoldCap != nil {
		n := int(m.GetShowHoldCap())
		ch.ShowHoldCap = &n
	}
	out, err := h.svc.UpdateAccess(ctx, partner.Caller{UserID: p.UserID, Admin: p.Is(auth.RoleAdmin)}, ch)
	if err != nil {
		return nil, h.err(ctx, err)
	}
	return connect.NewResponse(&partnerv1.UpdatePartnerAccessResponse{Partner: partnerProto(out)}), nil
}

// ListPartners pages through the partners (admins only); the page token
// is the last partner id of the page.
func (h *partnerHandler) ListPartners(ctx context.Context, req *connect.Request[partnerv1.ListPartnersRequest]) (*connect.Response[partnerv1.ListPartnersResponse], error) {
	if _, err := h.adminOf(ctx, "list"); err != nil {
		return nil, h.err(ctx, err)
	}
	var after int64
	if t := req.Msg.GetPageToken(); t != "" {
		n, err := strconv.ParseInt(t, 10, 64)
		if err != nil || n <= 0 {
			return nil, h.err(ctx, &fault.Error{Reason: fault.PartnerInvalid, Field: "page_token", Message: "not a token of this list"})
		}
		after = n
	}
	size := int(req.Msg.GetPageSize())
	if size == 0 {
		size = 50
	}
	got, err := h.svc.ListPartners(ctx, after, size+1)
	if err != nil {
		return nil, h.err(ctx, err)
	}
	resp := &partnerv1.ListPartnersResponse{}
	if len(got) > size {
		got = got[:size]
		resp.NextPageToken = strconv.FormatInt(got[size-1].ID, 10)
	}
	for _, x := range got {
		resp.Partners = append(resp.Partners, partnerProto(x))
	}
	return connect.NewResponse(resp), nil
}

func (h *partnerHandler) GetPartner(ctx context.Context, req *connect.Request[partnerv1.GetPartnerRequest]) (*connect.Response[partnerv1.GetPartnerResponse], error) {
	if _, err := h.partnerCaller(ctx, req.Msg.GetPartnerId(), true); err != nil {
		return nil, h.err(ctx, err)
	}
	out, err := h.svc.GetPartner(ctx, req.Msg.GetPartnerId())
	if err != nil {
		return nil, h.err(ctx, err)
	}
	return connect.NewResponse(&partnerv1.GetPartnerResponse{Partner: partnerProto(out)}), nil
}

var (
	scopeOf = map[partnerv1.ApiKeyScope]partner.Scope{
		partnerv1.ApiKeyScope_API_KEY_SCOPE_READ_ONLY: partner.ScopeReadOnly,
		partnerv1.ApiKeyScope_API_KEY_SCOPE_BOOKING:   partner.ScopeBooking,
		partnerv1.ApiKeyScope_API_KEY_SCOPE_WEBHOOKS:  partner.ScopeWebhooks,
	}
	scopeProto = map[partner.Scope]partnerv1.ApiKeyScope{
		partner.ScopeReadOnly: partnerv1.ApiKeyScope_API_KEY_SCOPE_READ_ONLY,
		partner.ScopeBooking:  partnerv1.ApiKeyScope_API_KEY_SCOPE_BOOKING,
		partner.ScopeWebhooks: partnerv1.ApiKeyScope_API_KEY_SCOPE_WEBHOOKS,
	}
	modeOf = map[partnerv1.ApiKeyMode]partner.Mode{
		partnerv1.ApiKeyMode_API_KEY_MODE_LIVE: partner.ModeLive,
		partnerv1.ApiKeyMode_API_KEY_MODE_TEST: partner.ModeTest,
	}
	modeProto = map[partner.Mode]partnerv1.ApiKeyMode{
		partner.ModeLive: partnerv1.ApiKeyMode_API_KEY_MODE_LIVE,
		partner.ModeTest: partnerv1.ApiKeyMode_API_KEY_MODE_TEST,
	}
)

func (h *partnerHandler) CreateApiKey(ctx context.Context, req *connect.Request[partnerv1.CreateApiKeyRequest]) (*connect.Response[partnerv1.CreateApiKeyResponse], error) {
	m := req.Msg
	p, err := h.partnerCaller(ctx, m.GetPartnerId(), false)
	if err != nil {
		return nil, h.err(ctx, err)
	}
	k, secret, err := h.svc.CreateKey(ctx, p.UserID, partner.NewKey{
		PartnerID: m.GetPartnerId(), Name: m.GetName(), Scope: scopeOf[m.GetScope()], Mode: modeOf[m.GetMode()],
	})
	if err != nil {
		return nil, h.err(ctx, err)
	}
	return connect.NewResponse(&partnerv1.CreateApiKeyResponse{ApiKey: keyProto(k), Secret: secret}), nil
}

func (h *partnerHandler) ListApiKeys(ctx context.Context, req *connect.Request[partnerv1.ListApiKeysRequest]) (*connect.Response[partnerv1.ListApiKeysResponse], error) {
	if _, err := h.partnerCaller(ctx, req.Msg.GetPartnerId(), true); err != nil {
		return nil, h.err(ctx, err)
	}
	keys, err := h.svc.ListKeys(ctx, req.Msg.GetPartnerId())
	if err != nil {
		return nil, h.err(ctx, err)
	}
	resp := &partnerv1.ListApiKeysResponse{}
	for _, k := range keys {
		resp.ApiKeys = append(resp.ApiKeys, keyProto(k))
	}
	return connect.NewResponse(resp), nil
}

func (h *partnerHandler) RevokeApiKey(ctx context.Context, req *connect.Request[partnerv1.RevokeApiKeyRequest]) (*connect.Response[partnerv1.RevokeApiKeyResponse], error) {
	if h.svc == nil {
		return nil, h.err(ctx, errPartnersNotServed)
	}
	if _, ok := auth.FromContext(ctx); !ok {
		return nil, h.err(ctx, errNotSignedIn)
	}
	k, err := h.svc.GetKey(ctx, req.Msg.GetKeyId())
	if err != nil {
		return nil, h.err(ctx, err)
	}
	p, err := h.partnerCaller(ctx, k.PartnerID, false)
	if err != nil {
		return nil, h.err(ctx, err)
	}
	by := audit.Actor{Kind: audit.ActorUser, ID: p.UserID}
	if p.Is(auth.RoleAdmin) {
		by.Kind = audit.ActorAdmin
	}
	var also partner.Revocation
	if h.hooks != nil {
		// Decision 0276: the endpoints the key made stop with it.
		also = func(ctx context.Context, tx pgx.Tx, k partner.Key) ([]int64, error) {
			return h.hooks.DisableForRevokedKey(ctx, tx, by, k.PartnerID, k.ID)
		}
	}
	k, disabled, err := h.svc.RevokeKey(ctx, by, k.ID, also)
	if err != nil {
		return nil, h.err(ctx, err)
	}
	return connect.NewResponse(&partnerv1.RevokeApiKeyResponse{ApiKey: keyProto(k), DisabledEndpointIds: disabled}), nil
}

func (h *partnerHandler) GetStatement(ctx context.Context, req *connect.Request[partnerv1.GetStatementRequest]) (*connect.Response[partnerv1.GetStatementResponse], error) {
	m := req.Msg
	if _, err := h.partnerCaller(ctx, m.GetPartnerId(), true); err != nil {
		return nil, h.err(ctx, err)
	}
	if err := m.GetPeriodStart().CheckValid(); err != nil {
		return nil, h.err(ctx, invalidField("period_start", "not a valid time: %v", err))
	}
	if err := m.GetPeriodEnd().CheckValid(); err != nil {
		return nil, h.err(ctx, invalidField("period_end", "not a valid time: %v", err))
	}
	st, err := h.svc.Statement(ctx, m.GetPartnerId(), m.GetPeriodStart().AsTime(), m.GetPeriodEnd().AsTime())
	if err != nil {
		return nil, h.err(ctx, err)
	}
	out := &partnerv1.Statement{PartnerId: st.PartnerID, PeriodStart: timestamppb.New(st.From),
		PeriodEnd: timestamppb.New(st.To), CommissionBps: st.CommissionBps}
	for _, l := range st.Lines {
		money := func(minor int64) *commonv1.Money { return &commonv1.Money{Currency: l.Currency, AmountMinor: minor} }
		out.Lines = append(out.Lines, &partnerv1.StatementLine{
			Currency: l.Currency, SalesCount: l.SalesCount, Sales: money(l.SalesMinor),
			RefundsCount: l.RefundsCount, Refunds: money(l.RefundsMinor), Net: money(l.NetMinor()),
			Commission: money(l.CommissionMinor(st.CommissionBps)),
		})
	}
	return connect.NewResponse(&partnerv1.GetStatementResponse{Statement: out}), nil
}

func partnerProto(p partner.Partner) *partnerv1.Partner {
	return &partnerv1.Partner{
		PartnerId: p.ID, Name: p.Name, CommissionBps: p.CommissionBps,
		Contact:                &partnerv1.Contact{Name: p.Contact.Name, Email: p.Contact.Email, Phone: p.Contact.Phone},
		AllowedOrganizationIds: p.AllowedOrganizations, AllowedShowIds: p.AllowedShows,
		CreatedAt: timestamppb.New(p.CreatedAt), CreatedBy: p.CreatedBy,
		SellsEveryShow: p.SellsEveryShow, ShowHoldCap: int32(p.ShowHoldCap),
	}
}

func keyProto(k partner.Key) *partnerv1.ApiKey {
	out := &partnerv1.ApiKey{
		KeyId: k.ID, PartnerId: k.PartnerID, Name: k.Name, Scope: scopeProto[k.Scope], Mode: modeProto[k.Mode],
		Prefix: k.Prefix, Last4: k.Last4, CreatedAt: timestamppb.New(k.CreatedAt), CreatedBy: k.CreatedBy,
	}
	if !k.LastUsedAt.IsZero() {
		out.LastUsedAt = timestamppb.New(k.LastUsedAt)
	}
	if !k.RevokedAt.IsZero() {
		out.RevokedAt = timestamppb.New(k.RevokedAt)
	}
	return out
}
