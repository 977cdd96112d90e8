package api_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	partnerv1 "github.com/seatghor/seatghor/gen/seatghor/partner/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/keyset"
)

// TestPartnerSellsNothingUntilAllowed: a new partner holds no show until
// someone allows it (decision 0284): a manager of the show's organisation
// for its shows, an admin for anything. A manager cannot allow another
// organisation's shows, nor set what only admins set; a repeated change
// changes nothing; a withdrawn show is refused again.
func TestPartnerSellsNothingUntilAllowed(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 1})
	ctx := context.Background()
	env.Member(t, "green-line", "green-manager", catalog.RoleManager)
	env.Member(t, "blue-line", "blue-manager", catalog.RoleManager)
	green, blue := seatedShow("Green Line 08:00", 1, 4), seatedShow("Blue Line 09:00", 1, 4)
	green.OrganizationId, blue.OrganizationId = "green-line", "blue-line"
	greenShow, blueShow := createShow(t, env, green).GetShowId(), createShow(t, env, blue).GetShowId()

	admin := withBearer(env, env.Token(t, "admin", auth.RoleAdmin))
	created, err := admin.partners.CreatePartner(ctx, connect.NewRequest(&partnerv1.CreatePartnerRequest{Name: "New desk"}))
	require.NoError(t, err)
	p := created.Msg.GetPartner()
	require.False(t, p.GetSellsEveryShow())
	require.Zero(t, p.GetShowHoldCap(), "the platform's default")
	id := p.GetPartnerId()
	key := withBearer(env, newAPIKey(t, env, id, partnerv1.ApiKeyScope_API_KEY_SCOPE_BOOKING).GetSecret())
	hold := func(show int64, seat string) error {
		_, err := key.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{seat}}))
		return err
	}
	requireReason(t, hold(greenShow, "A1"), connect.CodePermissionDenied, "PARTNER_SHOW_FORBIDDEN")
	requireReason(t, hold(blueShow, "A1"), connect.CodePermissionDenied, "PARTNER_SHOW_FORBIDDEN")

	update := func(c bearerClients, req *partnerv1.UpdatePartnerAccessRequest) (*partnerv1.Partner, error) {
		req.PartnerId = id
		resp, err := c.partners.UpdatePartnerAccess(ctx, connect.NewRequest(req))
		if err != nil {
			return nil, err
		}
		return resp.Msg.GetPartner(), nil
	}
	greenManager := withBearer(env, env.Token(t, "green-manager", auth.RoleOperator))
	for _, tc := range []struct {
		name   string
		caller bearerClients
		req    *partnerv1.UpdatePartnerAccessRequest
		code   connect.Code
		reason string
	}{
		{"a buyer", withBearer(env, env.Token(t, "rumana", auth.RoleUser)),
			&partnerv1.UpdatePartnerAccessRequest{AllowShowIds: []int64{greenShow}}, connect.CodePermissionDenied, "PERMISSION_DENIED"},
		{"the partner itself", withBearer(env, partnerToken(t, env, id)),
			&partnerv1.UpdatePartnerAccessRequest{AllowShowIds: []int64{greenShow}}, connect.CodePermissionDenied, "PERMISSION_DENIED"},
		{"another organisation's show", greenManager,
			&partnerv1.UpdatePartnerAccessRequest{AllowShowIds: []int64{blueShow}}, connect.CodePermissionDenied, "PARTNER_ACCESS_FORBIDDEN"},
		{"another organisation", greenManager,
			&partnerv1.UpdatePartnerAccessRequest{AllowOrganizationIds: []string{"blue-line"}}, connect.CodePermissionDenied, "PARTNER_ACCESS_FORBIDDEN"},
		{"every show", greenManager,
			&partnerv1.UpdatePartnerAccessRequest{SellsEveryShow: ptr(true)}, connect.CodePermissionDenied, "PARTNER_ACCESS_FORBIDDEN"},
		{"the cap", greenManager,
			&partnerv1.UpdatePartnerAccessRequest{ShowHoldCap: ptr[int32](1000)}, connect.CodePermissionDenied, "PARTNER_ACCESS_FORBIDDEN"},
		{"a manager naming nothing", greenManager,
			&partnerv1.UpdatePartnerAccessRequest{}, connect.CodePermissionDenied, "PARTNER_ACCESS_FORBIDDEN"},
		{"an operator of no organisation", withBearer(env, env.Token(t, "stranger", auth.RoleOperator)),
			&partnerv1.UpdatePartnerAccessRequest{AllowShowIds: []int64{greenShow}}, connect.CodePermissionDenied, "PARTNER_ACCESS_FORBIDDEN"},
		{"no such show", admin,
			&partnerv1.UpdatePartnerAccessRequest{AllowShowIds: []int64{987654}}, connect.CodeInvalidArgument, "PARTNER_INVALID"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := update(tc.caller, tc.req)
			requireReason(t, err, tc.code, tc.reason)
		})
	}
	requireReason(t, hold(greenShow, "A1"), connect.CodePermissionDenied, "PARTNER_SHOW_FORBIDDEN")

	// The show's organisation allows it its show, twice: the same answer.
	for range 2 {
		got, err := update(greenManager, &partnerv1.UpdatePartnerAccessRequest{AllowShowIds: []int64{greenShow}})
		require.NoError(t, err)
		require.Equal(t, []int64{greenShow}, got.GetAllowedShowIds())
	}
	require.NoError(t, hold(greenShow, "A1"))
	requireReason(t, hold(blueShow, "A1"), connect.CodePermissionDenied, "PARTNER_SHOW_FORBIDDEN")

	// An admin allows the other organisation whole.
	got, err := update(admin, &partnerv1.UpdatePartnerAccessRequest{AllowOrganizationIds: []string{"blue-line"}})
	require.NoError(t, err)
	require.Equal(t, []string{"blue-line"}, got.GetAllowedOrganizationIds())
	require.Equal(t, []int64{greenShow}, got.GetAllowedShowIds(), "a change keeps what it does not name")
	require.NoError(t, hold(blueShow, "A1"))

	// Withdrawn, the show is refused again; what was held stays held. The
	// manager is told what concerns its organisation only, not the
	// partner's other grants or its terms.
	got, err = update(greenManager, &partnerv1.UpdatePartnerAccessRequest{WithdrawShowIds: []int64{greenShow}})
	require.NoError(t, err)
	require.Empty(t, got.GetAllowedShowIds())
	require.Empty(t, got.GetAllowedOrganizationIds(), "blue-line's grant is not the green manager's business")
	require.Empty(t, got.GetContact().GetEmail())
	requireReason(t, hold(greenShow, "A2"), connect.CodePermissionDenied, "PARTNER_SHOW_FORBIDDEN")
	read, err := admin.partners.GetPartner(ctx, connect.NewRequest(&partnerv1.GetPartnerRequest{PartnerId: id}))
	require.NoError(t, err)
	require.Empty(t, read.Msg.GetPartner().GetAllowedShowIds())
	require.Equal(t, []string{"blue-line"}, read.Msg.GetPartner().GetAllowedOrganizationIds())
}

// TestPartnerShowCapUnderConcurrentHolds: a partner's holds of one show
// stop at its per-show cap (decision 0286) however many arrive at once,
// through every key and token of the partner; the cap is per show and
// counts every place of a hold; an admin sets and raises it.
func TestPartnerShowCapUnderConcurrentHolds(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 1})
	ctx := context.Background()
	show := createShow(t, env, seatedShow("partner cap race", 4, 10)).GetShowId()
	second := createShow(t, env, seatedShow("another show", 1, 4)).GetShowId()
	admin := withBearer(env, env.Token(t, "admin", auth.RoleAdmin))
	p := newPartner(t, env, "Greedy agency", 0)
	id := p.GetPartnerId()
	require.Zero(t, p.GetShowHoldCap())
	_, err := admin.partners.UpdatePartnerAccess(ctx, connect.NewRequest(&partnerv1.UpdatePartnerAccessRequest{
		PartnerId: id, ShowHoldCap: ptr[int32](5)}))
	require.NoError(t, err)

	// Two keys and the partner's token, 30 holds of one seat at once.
	callers := []bearerClients{
		withBearer(env, newAPIKey(t, env, id, partnerv1.ApiKeyScope_API_KEY_SCOPE_BOOKING).GetSecret()),
		withBearer(env, newAPIKey(t, env, id, partnerv1.ApiKeyScope_API_KEY_SCOPE_BOOKING).GetSecret()),
		withBearer(env, partnerToken(t, env, id)),
	}
	rows := rowsAZ(4)
	var (
		wg            sync.WaitGroup
		held, refused atomic.Int64
	)
	for i := range 30 {
		wg.Go(func() {
			_, err := callers[i%len(callers)].holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{
				ShowId: show, Seats: []string{fmt.Sprintf("%s%d", rows[i/10], 1+i%10)}}))
			switch {
			case err == nil:
				held.Add(1)
			case connect.CodeOf(err) == connect.CodeFailedPrecondition && answerOf(t, err).reason == "BOOKING_NOT_ALLOWED":
				refused.Add(1)
			default:
				t.Errorf("hold %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	require.EqualValues(t, 5, held.Load(), "holds within the partner's cap")
	require.EqualValues(t, 25, refused.Load(), "holds past it")
	require.Equal(t, 5, countHolds(t, env, show))

	// A hold of several seats counts them all; another show has its own cap.
	key := callers[0]
	_, err = key.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"D9", "D10"}}))
	requireReason(t, err, connect.CodeFailedPrecondition, "BOOKING_NOT_ALLOWED")
	_, err = key.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: second, Seats: []string{"A1", "A2", "A3", "A4"}}))
	require.NoError(t, err)

	// An admin raises the cap: two more fit, a third does not.
	_, err = admin.partners.UpdatePartnerAccess(ctx, connect.NewRequest(&partnerv1.UpdatePartnerAccessRequest{
		PartnerId: id, ShowHoldCap: ptr[int32](7)}))
	require.NoError(t, err)
	_, err = key.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"D9", "D10"}}))
	require.NoError(t, err)
	_, err = key.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"D8"}}))
	requireReason(t, err, connect.CodeFailedPrecondition, "BOOKING_NOT_ALLOWED")
}

func ptr[T any](v T) *T { return &v }

// TestPartnerTokenWithoutPartnerRefused: a partner-role token naming no
// partner (as `seatghor token --role partner` minted before it required
// --partner) acted for no channel, so it held seats of a show no partner
// was allowed. It is refused as an invalid token on every procedure, and
// the refused hold holds nothing (decision 0326).
func TestPartnerTokenWithoutPartnerRefused(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 1})
	ctx := context.Background()
	show := createShow(t, env, seatedShow("Not for partners", 1, 4)).GetShowId()
	admin := withBearer(env, env.Token(t, "admin", auth.RoleAdmin))
	created, err := admin.partners.CreatePartner(ctx, connect.NewRequest(&partnerv1.CreatePartnerRequest{Name: "Allowed nothing"}))
	require.NoError(t, err)
	id := created.Msg.GetPartner().GetPartnerId()

	key := keyset.Derive(apptest.Secret, keyset.Tokens)
	unsigned := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "shop", "role": "partner", "iss": "seatghor",
		"iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix()})
	unsigned.Header["kid"] = key.ID
	noPartner, err := unsigned.SignedString(key.Secret)
	require.NoError(t, err)
	_, err = env.App.Tokens.MintPrincipal(auth.Principal{UserID: "shop", Role: auth.RolePartner}, time.Hour)
	require.Error(t, err, "the platform mints no such token")

	bad := withBearer(env, noPartner)
	_, err = bad.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"A1"}}))
	requireReason(t, err, connect.CodeUnauthenticated, "TOKEN_INVALID")
	_, err = bad.partners.GetPartner(ctx, connect.NewRequest(&partnerv1.GetPartnerRequest{PartnerId: id}))
	requireReason(t, err, connect.CodeUnauthenticated, "TOKEN_INVALID")
	require.Zero(t, countHolds(t, env, show), "the refused hold held nothing")

	// The same staff member with the partner named is the partner, kept to
	// the shows it may sell.
	_, err = withBearer(env, partnerToken(t, env, id)).holds.CreateHold(ctx,
		connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"A1"}}))
	requireReason(t, err, connect.CodePermissionDenied, "PARTNER_SHOW_FORBIDDEN")
	require.Zero(t, countHolds(t, env, show))
}
