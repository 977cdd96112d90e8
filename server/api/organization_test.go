package api_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/types/known/timestamppb"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	ticketsv1 "github.com/seatghor/seatghor/gen/seatghor/tickets/v1"
	waitingroomv1 "github.com/seatghor/seatghor/gen/seatghor/waitingroom/v1"
	"github.com/seatghor/seatghor/gen/seatghor/waitingroom/v1/waitingroomv1connect"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/internal/testkit/redistest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/ticket"
)

// badField returns the field a BadRequest detail of err names.
func badField(tb testing.TB, err error) string {
	tb.Helper()
	var ce *connect.Error
	require.True(tb, errors.As(err, &ce), "want a connect error, got %v", err)
	for _, d := range ce.Details() {
		v, derr := d.Value()
		require.NoError(tb, derr)
		if br, ok := v.(*errdetails.BadRequest); ok && len(br.GetFieldViolations()) > 0 {
			return br.GetFieldViolations()[0].GetField()
		}
	}
	return ""
}

// orgs is a platform with two operators, made through the admin RPCs:
// "hanif" (manager hanif-mgr, gate staff hanif-gate) and "shyamoli" (gate
// staff shyamoli-gate).
type orgs struct {
	env   *apptest.Env
	admin clients
}

func newOrgs(t *testing.T, policy ...catalog.Policy) orgs {
	t.Helper()
	r := redistest.New(t) // the sale RPCs need waiting rooms
	opts := apptest.Options{Shards: 2, RedisURL: r.URL, RedisPrefix: r.Prefix}
	if len(policy) > 0 {
		opts.CatalogPolicy = policy[0]
	}
	env := apptest.New(t, opts)
	admin := as(t, env, "admin", auth.RoleAdmin)
	ctx := context.Background()
	for id, name := range map[string]string{"hanif": "Hanif Enterprise", "shyamoli": "Shyamoli Paribahan"} {
		resp, err := admin.catalog.CreateOrganization(ctx, connect.NewRequest(&catalogv1.CreateOrganizationRequest{
			OrganizationId: id, Name: name}))
		require.NoError(t, err)
		require.Equal(t, name, resp.Msg.GetOrganization().GetName())
	}
	for _, m := range []struct {
		org, user string
		role      catalogv1.OrganizationRole
	}{
		{"hanif", "hanif-mgr", catalogv1.OrganizationRole_ORGANIZATION_ROLE_MANAGER},
		{"hanif", "hanif-gate", catalogv1.OrganizationRole_ORGANIZATION_ROLE_GATE},
		{"shyamoli", "shyamoli-gate", catalogv1.OrganizationRole_ORGANIZATION_ROLE_GATE},
	} {
		resp, err := admin.catalog.AddOrganizationMember(ctx, connect.NewRequest(&catalogv1.AddOrganizationMemberRequest{
			OrganizationId: m.org, UserId: m.user, Role: m.role}))
		require.NoError(t, err)
		require.Equal(t, m.role, resp.Msg.GetMember().GetRole())
	}
	return orgs{env: env, admin: admin}
}

// grpcAs is as over the gRPC protocol (HTTP/2 without TLS).
func (o orgs) grpcAs(t *testing.T, sub string, role auth.Role) clients {
	h2 := *o.env
	h2.HTTP = o.env.H2C
	return as(t, &h2, sub, role, connect.WithGRPC())
}

// TestOnlyAdminsManageOrganizations: creating an organisation is for
// admins, and adding or removing its members for admins and its managers
// (decision 0446); its gate staff, another organisation's staff and a user
// are refused, and an admin's mistakes are named.
func TestOnlyAdminsManageOrganizations(t *testing.T) {
	o := newOrgs(t)
	ctx := context.Background()
	_, err := as(t, o.env, "hanif-mgr", auth.RoleOperator).catalog.CreateOrganization(ctx, connect.NewRequest(&catalogv1.CreateOrganizationRequest{
		OrganizationId: "mine", Name: "Mine"}))
	require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err), "a manager creates no organisation: %v", err)
	for _, c := range []clients{as(t, o.env, "hanif-gate", auth.RoleOperator), as(t, o.env, "shyamoli-gate", auth.RoleOperator),
		as(t, o.env, "rumana", auth.RoleUser), o.grpcAs(t, "hanif-gate", auth.RoleOperator)} {
		_, err := c.catalog.CreateOrganization(ctx, connect.NewRequest(&catalogv1.CreateOrganizationRequest{
			OrganizationId: "mine", Name: "Mine"}))
		require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err), "%v", err)
		_, err = c.catalog.AddOrganizationMember(ctx, connect.NewRequest(&catalogv1.AddOrganizationMemberRequest{
			OrganizationId: "hanif", UserId: "friend", Role: catalogv1.OrganizationRole_ORGANIZATION_ROLE_MANAGER}))
		require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err), "%v", err)
		_, err = c.catalog.RemoveOrganizationMember(ctx, connect.NewRequest(&catalogv1.RemoveOrganizationMemberRequest{
			OrganizationId: "hanif", UserId: "hanif-gate"}))
		require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err), "%v", err)
	}
	// Nothing was created: the admin can still take the id.
	_, err = o.admin.catalog.CreateOrganization(ctx, connect.NewRequest(&catalogv1.CreateOrganizationRequest{
		OrganizationId: "mine", Name: "Mine"}))
	require.NoError(t, err)
	_, err = o.admin.catalog.CreateOrganization(ctx, connect.NewRequest(&catalogv1.CreateOrganizationRequest{
		OrganizationId: "mine", Name: "Mine"}))
	require.NoError(t, err, "the same organisation again is the same organisation")
	_, err = o.admin.catalog.CreateOrganization(ctx, connect.NewRequest(&catalogv1.CreateOrganizationRequest{
		OrganizationId: "hanif", Name: "Not Hanif"}))
	require.Equal(t, connect.CodeAlreadyExists, connect.CodeOf(err), "%v", err)
	_, err = o.admin.catalog.CreateOrganization(ctx, connect.NewRequest(&catalogv1.CreateOrganizationRequest{
		OrganizationId: "Bad Id", Name: "x"}))
	require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err), "%v", err)
	_, err = o.admin.catalog.AddOrganizationMember(ctx, connect.NewRequest(&catalogv1.AddOrganizationMemberRequest{
		OrganizationId: "nobody", UserId: "x", Role: catalogv1.OrganizationRole_ORGANIZATION_ROLE_GATE}))
	require.Equal(t, connect.CodeNotFound, connect.CodeOf(err), "%v", err)
	_, err = o.admin.catalog.AddOrganizationMember(ctx, connect.NewRequest(&catalogv1.AddOrganizationMemberRequest{
		OrganizationId: "hanif", UserId: "x"}))
	require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err), "a role is required: %v", err)
	_, err = o.admin.catalog.RemoveOrganizationMember(ctx, connect.NewRequest(&catalogv1.RemoveOrganizationMemberRequest{
		OrganizationId: "hanif", UserId: "not-a-member"}))
	require.Equal(t, connect.CodeNotFound, connect.CodeOf(err), "%v", err)
}

// TestManagersCreateTheirOrganizationsShows: a manager creates shows for
// the organisation it manages, named after it unless the request names the
// operator; it may not set the commission or the shard, nor a cancellation
// fee above the platform's policy; it may not create for another
// organisation or for none; gate staff create nothing. Admins may do all of
// it.
func TestManagersCreateTheirOrganizationsShows(t *testing.T) {
	o := newOrgs(t)
	ctx := context.Background()
	mgr := as(t, o.env, "hanif-mgr", auth.RoleOperator)
	req := func(org string, edit func(*catalogv1.CreateShowRequest)) *catalogv1.CreateShowRequest {
		r := seatedShow("Dhaka to Cox's Bazar 10:00", 2, 4)
		r.OrganizationId = org
		if edit != nil {
			edit(r)
		}
		return r
	}
	resp, err := mgr.catalog.CreateShow(ctx, connect.NewRequest(req("hanif", func(r *catalogv1.CreateShowRequest) {
		r.CancellationFeeBps = new(int32(500))
	})))
	require.NoError(t, err)
	show := resp.Msg.GetShow()
	require.Equal(t, "hanif", show.GetOrganizationId())
	require.Equal(t, "Hanif Enterprise", show.GetOperator(), "the display name defaults to the organisation's")
	require.EqualValues(t, 500, show.GetCancellationFeeBps(), "a lower fee is within the policy")
	require.EqualValues(t, 1000, show.GetCommissionBps())
	named, err := mgr.catalog.CreateShow(ctx, connect.NewRequest(req("hanif", func(r *catalogv1.CreateShowRequest) { r.Operator = "Hanif" })))
	require.NoError(t, err)
	require.Equal(t, "Hanif", named.Msg.GetShow().GetOperator(), "the display name stays a name")

	for _, tc := range []struct {
		name  string
		as    clients
		req   *catalogv1.CreateShowRequest
		code  connect.Code
		field string
	}{
		{"the commission", mgr, req("hanif", func(r *catalogv1.CreateShowRequest) { r.CommissionBps = new(int32(0)) }),
			connect.CodePermissionDenied, "commission_bps"},
		{"the commission, over gRPC", o.grpcAs(t, "hanif-mgr", auth.RoleOperator),
			req("hanif", func(r *catalogv1.CreateShowRequest) { r.CommissionBps = new(int32(1000)) }),
			connect.CodePermissionDenied, "commission_bps"},
		{"the shard", mgr, req("hanif", func(r *catalogv1.CreateShowRequest) { r.Shard = new(int32(1)) }),
			connect.CodePermissionDenied, "shard"},
		{"a fee above the policy", mgr, req("hanif", func(r *catalogv1.CreateShowRequest) { r.CancellationFeeBps = new(int32(5000)) }),
			connect.CodeInvalidArgument, "cancellation_fee_bps"},
		{"another organisation's show", mgr, req("shyamoli", nil), connect.CodePermissionDenied, "organization_id"},
		{"a show of no organisation", mgr, req("", nil), connect.CodeInvalidArgument, "organization_id"},
		{"gate staff", as(t, o.env, "hanif-gate", auth.RoleOperator), req("hanif", nil),
			connect.CodePermissionDenied, "organization_id"},
		{"a user who manages it but is no operator", as(t, o.env, "hanif-mgr", auth.RoleUser), req("hanif", nil),
			connect.CodePermissionDenied, ""},
		{"an admin, for no such organisation", o.admin, req("nobody", nil), connect.CodeInvalidArgument, "organization_id"},
	} {
		_, err := tc.as.catalog.CreateShow(ctx, connect.NewRequest(tc.req))
		require.Equal(t, tc.code, connect.CodeOf(err), "%s: %v", tc.name, err)
		require.Equal(t, tc.field, badField(t, err), tc.name)
	}

	// Admins set what managers may not, for any organisation.
	adm, err := o.admin.catalog.CreateShow(ctx, connect.NewRequest(req("shyamoli", func(r *catalogv1.CreateShowRequest) {
		r.CommissionBps, r.Shard, r.CancellationFeeBps = new(int32(700)), new(int32(1)), new(int32(5000))
	})))
	require.NoError(t, err)
	require.EqualValues(t, 700, adm.Msg.GetShow().GetCommissionBps())
	require.EqualValues(t, 1, adm.Msg.GetShow().GetShard())
	require.Equal(t, "shyamoli", adm.Msg.GetShow().GetOrganizationId())
}

// TestTheCancellationFeePolicyIsConfigured: with the platform's maximum at
// 0, a manager's show charges no cancellation fee at all.
func TestTheCancellationFeePolicyIsConfigured(t *testing.T) {
	o := newOrgs(t, catalog.Policy{MaxCancellationFeeBps: new(0)})
	ctx := context.Background()
	mgr := as(t, o.env, "hanif-mgr", auth.RoleOperator)
	r := seatedShow("x", 1, 4)
	r.OrganizationId, r.CancellationFeeBps = "hanif", new(int32(1))
	_, err := mgr.catalog.CreateShow(ctx, connect.NewRequest(r))
	require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err), "%v", err)
	require.Equal(t, "cancellation_fee_bps", badField(t, err))
	r.CancellationFeeBps = new(int32(0))
	resp, err := mgr.catalog.CreateShow(ctx, connect.NewRequest(r))
	require.NoError(t, err)
	require.Zero(t, resp.Msg.GetShow().GetCancellationFeeBps())
	r.CancellationFeeBps = nil
	resp, err = mgr.catalog.CreateShow(ctx, connect.NewRequest(r))
	require.NoError(t, err)
	require.Zero(t, resp.Msg.GetShow().GetCancellationFeeBps(), "the default fee, bounded by the policy")
}

// TestGateStaffOnlyScanTheirOrganizationsTickets: gate staff of a show's
// organisation check its tickets in, but neither create shows nor see or
// change its sale nor read its orders; gate staff of another organisation
// may not scan; a member removed scans no more. The organisation's manager
// does all of it.
func TestGateStaffOnlyScanTheirOrganizationsTickets(t *testing.T) {
	o := newOrgs(t)
	ctx := context.Background()
	mgr := as(t, o.env, "hanif-mgr", auth.RoleOperator)
	create := func(edit func(*catalogv1.CreateShowRequest)) *catalogv1.Show {
		r := seatedShow("Dhaka to Cox's Bazar 10:00", 2, 4)
		r.OrganizationId = "hanif"
		if edit != nil {
			edit(r)
		}
		resp, err := mgr.catalog.CreateShow(ctx, connect.NewRequest(r))
		require.NoError(t, err)
		return resp.Msg.GetShow()
	}
	show := create(nil)
	sale := create(func(r *catalogv1.CreateShowRequest) {
		r.OnSaleAt = timestamppb.New(time.Now().Add(time.Hour))
		r.WaitingRoom = &catalogv1.WaitingRoom{Enabled: true}
	})
	order := paid(t, newBuyer(t, o.env, "rumana"), show.GetShowId(), "A1", "A2")
	scan := func(sub string, position int) (*ticketsv1.CheckInTicketResponse, error) {
		id, err := ticket.ID(order.GetOrderId(), position)
		require.NoError(t, err)
		resp, err := ticketsAs(t, o.env, sub, auth.RoleOperator).CheckInTicket(ctx, connect.NewRequest(&ticketsv1.CheckInTicketRequest{
			ShowId: show.GetShowId(), Ticket: &ticketsv1.CheckInTicketRequest_TicketId{TicketId: id}, Gate: "north-1"}))
		if err != nil {
			return nil, err
		}
		return resp.Msg, nil
	}

	// Another organisation's gate staff: refused, and nothing recorded.
	_, err := scan("shyamoli-gate", 1)
	require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err), "%v", err)
	// The show's gate staff: admitted.
	res, err := scan("hanif-gate", 1)
	require.NoError(t, err)
	require.True(t, res.GetAdmitted())
	res, err = scan("hanif-mgr", 1)
	require.NoError(t, err)
	require.True(t, res.GetAlreadyCheckedIn(), "managers scan too")

	// Gate staff do nothing else.
	gate := as(t, o.env, "hanif-gate", auth.RoleOperator)
	r := seatedShow("x", 1, 1)
	r.OrganizationId = "hanif"
	_, err = gate.catalog.CreateShow(ctx, connect.NewRequest(r))
	require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err), "%v", err)
	_, err = gate.orders.GetOrder(ctx, connect.NewRequest(&bookingv1.GetOrderRequest{OrderId: order.GetOrderId()}))
	require.Equal(t, connect.CodeNotFound, connect.CodeOf(err), "%v", err)
	wrAs := func(sub string) waitingroomv1connect.WaitingRoomServiceClient {
		token := o.env.Token(t, sub, auth.RoleOperator)
		return waitingroomv1connect.NewWaitingRoomServiceClient(o.env.HTTP, o.env.URL, connect.WithInterceptors(connect.UnaryInterceptorFunc(
			func(next connect.UnaryFunc) connect.UnaryFunc {
				return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
					req.Header().Set("Authorization", "Bearer "+token)
					req.Header().Set(keyHeader, newKey())
					return next(ctx, req)
				}
			})))
	}
	_, err = wrAs("hanif-gate").GetSale(ctx, connect.NewRequest(&waitingroomv1.GetSaleRequest{ShowId: sale.GetShowId()}))
	require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err), "%v", err)
	_, err = wrAs("hanif-gate").UpdateSale(ctx, connect.NewRequest(&waitingroomv1.UpdateSaleRequest{ShowId: sale.GetShowId(), Paused: new(true)}))
	require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err), "%v", err)

	// The manager does.
	_, err = mgr.orders.GetOrder(ctx, connect.NewRequest(&bookingv1.GetOrderRequest{OrderId: order.GetOrderId()}))
	require.NoError(t, err)
	_, err = wrAs("hanif-mgr").GetSale(ctx, connect.NewRequest(&waitingroomv1.GetSaleRequest{ShowId: sale.GetShowId()}))
	require.NoError(t, err)
	paused, err := wrAs("hanif-mgr").UpdateSale(ctx, connect.NewRequest(&waitingroomv1.UpdateSaleRequest{ShowId: sale.GetShowId(), Paused: new(true)}))
	require.NoError(t, err)
	require.True(t, paused.Msg.GetSale().GetPaused())

	// Removed from the organisation: no more scans.
	_, err = o.admin.catalog.RemoveOrganizationMember(ctx, connect.NewRequest(&catalogv1.RemoveOrganizationMemberRequest{
		OrganizationId: "hanif", UserId: "hanif-gate"}))
	require.NoError(t, err)
	_, err = scan("hanif-gate", 2)
	require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err), "%v", err)
}

// TestTheNamedOperatorScansItsTickets: a show an admin creates for the
// operator Hanif, with "Hanif" as its display name, is checked in at the
// gate by Hanif's people: the organisation's members, whoever created the
// show.
func TestTheNamedOperatorScansItsTickets(t *testing.T) {
	o := newOrgs(t)
	ctx := context.Background()
	r := seatedShow("Dhaka to Cox's Bazar 10:00", 1, 4)
	r.Operator, r.OrganizationId = "Hanif", "hanif"
	show := createShow(t, o.env, r)
	require.Equal(t, "Hanif", show.GetOperator())
	order := paid(t, newBuyer(t, o.env, "rumana"), show.GetShowId(), "A1")
	id, err := ticket.ID(order.GetOrderId(), 1)
	require.NoError(t, err)
	resp, err := ticketsAs(t, o.env, "hanif-gate", auth.RoleOperator).CheckInTicket(ctx, connect.NewRequest(&ticketsv1.CheckInTicketRequest{
		ShowId: show.GetShowId(), Ticket: &ticketsv1.CheckInTicketRequest_TicketId{TicketId: id}, Gate: "north-1"}))
	require.NoError(t, err)
	require.True(t, resp.Msg.GetAdmitted())
	// The manager reads the show's orders, though an admin created it.
	_, err = as(t, o.env, "hanif-mgr", auth.RoleOperator).orders.GetOrder(ctx, connect.NewRequest(&bookingv1.GetOrderRequest{OrderId: order.GetOrderId()}))
	require.NoError(t, err)
}

// TestTheGateListsItsShowsAndNamesAnotherShowsTicket: a gate lists the
// shows whose tickets its staff check in (their organisation's, soonest
// first, from a time), over Connect and gRPC; a ticket of another show of
// the organisation is refused with that show named (TicketOfOtherShow), a
// ticket of another organisation's show with nothing of it (decisions 0296,
// 0297); a ticket id typed in upper case with spaces around it admits
// (decision 0298).
func TestTheGateListsItsShowsAndNamesAnotherShowsTicket(t *testing.T) {
	o := newOrgs(t)
	ctx := context.Background()
	now := time.Now()
	create := func(org string, startsIn time.Duration) *catalogv1.Show {
		r := seatedShow("Gate "+org+" "+startsIn.String(), 1, 4)
		r.OrganizationId = org
		r.StartsAt = timestamppb.New(now.Add(startsIn))
		r.OnSaleAt = timestamppb.New(now.Add(-72 * time.Hour))
		return createShow(t, o.env, r)
	}
	ran := create("hanif", -24*time.Hour) // a show the organisation ran yesterday
	soon := create("shyamoli", time.Hour) // another organisation's, sooner than Hanif's next
	next := create("hanif", 2*time.Hour)
	later := create("hanif", 72*time.Hour)
	ids := func(c clients, req *catalogv1.ListShowsRequest) []int64 {
		t.Helper()
		resp, err := c.catalog.ListShows(ctx, connect.NewRequest(req))
		require.NoError(t, err)
		var out []int64
		for _, s := range resp.Msg.GetShows() {
			out = append(out, s.GetShowId())
		}
		return out
	}
	hanifGate := as(t, o.env, "hanif-gate", auth.RoleOperator)
	fromToday := timestamppb.New(now.Add(-12 * time.Hour))
	for name, c := range map[string]clients{"connect": hanifGate, "grpc": o.grpcAs(t, "hanif-gate", auth.RoleOperator)} {
		require.Equal(t, []int64{ran.GetShowId(), next.GetShowId(), later.GetShowId()},
			ids(c, &catalogv1.ListShowsRequest{ForGate: true}), name)
		require.Equal(t, []int64{next.GetShowId(), later.GetShowId()},
			ids(c, &catalogv1.ListShowsRequest{ForGate: true, StartsFrom: fromToday}), name)
	}
	require.Equal(t, []int64{next.GetShowId()}, ids(hanifGate, &catalogv1.ListShowsRequest{ForGate: true, StartsFrom: fromToday, PageSize: 1}))
	require.Equal(t, []int64{soon.GetShowId()}, ids(as(t, o.env, "shyamoli-gate", auth.RoleOperator), &catalogv1.ListShowsRequest{ForGate: true}))
	require.Empty(t, ids(as(t, o.env, "hanif-gate", auth.RoleUser), &catalogv1.ListShowsRequest{ForGate: true}), "a buyer's token checks nothing in")
	require.Empty(t, ids(as(t, o.env, "stranger", auth.RoleOperator), &catalogv1.ListShowsRequest{ForGate: true}), "no organisation")
	require.Equal(t, []int64{soon.GetShowId(), next.GetShowId(), later.GetShowId()},
		ids(o.admin, &catalogv1.ListShowsRequest{ForGate: true, StartsFrom: fromToday}), "an admin checks every show in")
	require.Equal(t, []int64{soon.GetShowId(), next.GetShowId(), later.GetShowId()},
		ids(as(t, o.env, "rumana", auth.RoleUser), &catalogv1.ListShowsRequest{StartsFrom: fromToday}), "without for_gate: every show")

	// A ticket of Hanif's later show at the gate of its next one.
	order := paid(t, newBuyer(t, o.env, "rumana"), later.GetShowId(), "A1")
	id, err := ticket.ID(order.GetOrderId(), 1)
	require.NoError(t, err)
	scan := func(sub string, showID int64, typed string) (*ticketsv1.CheckInTicketResponse, error) {
		resp, err := ticketsAs(t, o.env, sub, auth.RoleOperator).CheckInTicket(ctx, connect.NewRequest(&ticketsv1.CheckInTicketRequest{
			ShowId: showID, Ticket: &ticketsv1.CheckInTicketRequest_TicketId{TicketId: typed}, Gate: "north-1"}))
		if err != nil {
			return nil, err
		}
		return resp.Msg, nil
	}
	otherShow := func(err error) []int64 {
		t.Helper()
		var ce *connect.Error
		require.True(t, errors.As(err, &ce), "want a connect error, got %v", err)
		var out []int64
		for _, d := range ce.Details() {
			v, derr := d.Value()
			require.NoError(t, derr)
			if o, ok := v.(*ticketsv1.TicketOfOtherShow); ok {
				out = append(out, o.GetShowId())
			}
		}
		return out
	}
	_, err = scan("hanif-gate", next.GetShowId(), id)
	require.Equal(t, connect.CodeFailedPrecondition, connect.CodeOf(err), "%v", err)
	require.Equal(t, "TICKET_NOT_ADMISSIBLE", answerOf(t, err).reason)
	require.Equal(t, []int64{later.GetShowId()}, otherShow(err), "the show the ticket is for")
	// Shyamoli's gate staff, scanning at their own show: refused, told
	// nothing of Hanif's show.
	_, err = scan("shyamoli-gate", soon.GetShowId(), id)
	require.Equal(t, connect.CodeFailedPrecondition, connect.CodeOf(err), "%v", err)
	require.Empty(t, otherShow(err))
	require.NotContains(t, err.Error(), fmt.Sprintf("show %d", later.GetShowId()), "the other organisation's show is not named")

	// Typed as a person reads it off the paper: upper case, spaces around.
	res, err := scan("hanif-gate", later.GetShowId(), "  "+strings.ToUpper(id)+" ")
	require.NoError(t, err)
	require.True(t, res.GetAdmitted())
	require.Equal(t, id, res.GetTicket().GetTicketId(), "the one spelling (decision 0066)")
	res, err = scan("hanif-gate", later.GetShowId(), id)
	require.NoError(t, err)
	require.True(t, res.GetAlreadyCheckedIn(), "the same ticket, however it was typed")
}
