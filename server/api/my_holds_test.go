package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/clock"
)

// TestListMyHolds: a buyer finds their own live holds again (a page
// reloaded during a hold, decision 0300): of one show or of every show,
// soonest expiry first, an ordered one with its order; never someone
// else's (an admin's list is their own too), never a released or expired
// one; over Connect and REST.
func TestListMyHolds(t *testing.T) {
	clk := clock.NewFake(time.Now().UTC().Truncate(time.Second))
	env := apptest.New(t, apptest.Options{Shards: 2, Clock: clk})
	ctx := context.Background()
	show := createShow(t, env, seatedShow("my holds", 2, 5)).GetShowId()
	other := createShow(t, env, seatedShow("my other holds", 1, 5)).GetShowId()
	rumana := as(t, env, "rumana", auth.RoleUser)
	nila := as(t, env, "nila", auth.RoleUser)
	admin := as(t, env, "admin", auth.RoleAdmin)

	hold := func(c clients, showID int64, seats ...string) *bookingv1.Hold {
		t.Helper()
		r, err := c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: showID, Seats: seats}))
		require.NoError(t, err)
		clk.Advance(time.Second) // each later hold expires later
		return r.Msg.GetHold()
	}
	var me string // rumana's user id, as her first hold names it
	list := func(c clients, showID int64) []string {
		t.Helper()
		req := &bookingv1.ListMyHoldsRequest{}
		if showID != 0 {
			req.ShowId = proto.Int64(showID)
		}
		r, err := c.holds.ListMyHolds(ctx, connect.NewRequest(req))
		require.NoError(t, err)
		var ids []string
		for _, h := range r.Msg.GetHolds() {
			require.Equal(t, me, h.GetUserId(), "only the caller's: %v", h)
			ids = append(ids, h.GetHoldId())
		}
		return ids
	}

	first := hold(rumana, show, "A1", "A2")
	me = first.GetUserId()
	ordered := hold(rumana, show, "A3")
	o, err := rumana.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: ordered.GetHoldId()}))
	require.NoError(t, err)
	elsewhere := hold(rumana, other, "A1")
	released := hold(rumana, show, "B1")
	_, err = rumana.holds.ReleaseHold(ctx, connect.NewRequest(&bookingv1.ReleaseHoldRequest{HoldId: released.GetHoldId()}))
	require.NoError(t, err)
	hold(nila, show, "B2")

	require.Equal(t, []string{first.GetHoldId(), ordered.GetHoldId()}, list(rumana, show))
	require.Equal(t, []string{first.GetHoldId(), ordered.GetHoldId(), elsewhere.GetHoldId()}, list(rumana, 0))
	ar, err := admin.holds.ListMyHolds(ctx, connect.NewRequest(&bookingv1.ListMyHoldsRequest{ShowId: proto.Int64(show)}))
	require.NoError(t, err)
	require.Empty(t, ar.Msg.GetHolds(), "an admin's list is their own holds")

	r, err := rumana.holds.ListMyHolds(ctx, connect.NewRequest(&bookingv1.ListMyHoldsRequest{ShowId: proto.Int64(show)}))
	require.NoError(t, err)
	got := r.Msg.GetHolds()
	require.Equal(t, []string{"A1", "A2"}, got[0].GetSeats())
	require.Equal(t, bookingv1.HoldStatus_HOLD_STATUS_ACTIVE, got[0].GetStatus())
	require.Equal(t, first.GetExpiresAt().AsTime(), got[0].GetExpiresAt().AsTime())
	require.Equal(t, bookingv1.HoldStatus_HOLD_STATUS_ORDERED, got[1].GetStatus())
	require.Equal(t, o.Msg.GetOrder().GetOrderId(), got[1].GetOrderId(), "an ordered hold names its order")

	t.Run("grpc", func(t *testing.T) {
		g := clientsWithHTTP(t, env, env.H2C, "rumana", connect.WithGRPC())
		r, err := g.holds.ListMyHolds(ctx, connect.NewRequest(&bookingv1.ListMyHoldsRequest{ShowId: proto.Int64(show)}))
		require.NoError(t, err)
		require.Len(t, r.Msg.GetHolds(), 2)
		require.Equal(t, first.GetHoldId(), r.Msg.GetHolds()[0].GetHoldId())
	})

	t.Run("rest", func(t *testing.T) {
		req, err := http.NewRequest(http.MethodGet, env.URL+"/v1/holds?show_id="+itoa(show), nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+env.Token(t, "rumana", auth.RoleUser))
		resp, err := env.HTTP.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
		var out struct {
			Holds []struct {
				HoldID string `json:"hold_id"`
			} `json:"holds"`
		}
		require.NoError(t, json.Unmarshal(body, &out), "%s", body)
		require.Len(t, out.Holds, 2)
		require.Equal(t, first.GetHoldId(), out.Holds[0].HoldID)
	})

	t.Run("refusals", func(t *testing.T) {
		_, err := clientsFor(env.HTTP, env.URL).holds.ListMyHolds(ctx, connect.NewRequest(&bookingv1.ListMyHoldsRequest{}))
		requireReason(t, err, connect.CodeUnauthenticated, "UNAUTHENTICATED")
		_, err = rumana.holds.ListMyHolds(ctx, connect.NewRequest(&bookingv1.ListMyHoldsRequest{ShowId: proto.Int64(0)}))
		require.Equal(t, answer{connect.CodeInvalidArgument, "INVALID_ARGUMENT", []string{"show_id"}, nil}, answerOf(t, err))
		// A show that does not exist says so (issue 29).
		_, err = rumana.holds.ListMyHolds(ctx, connect.NewRequest(&bookingv1.ListMyHoldsRequest{ShowId: proto.Int64(999999)}))
		requireReason(t, err, connect.CodeNotFound, "SHOW_NOT_FOUND")
	})

	// Past their expiry the holds are gone from the list before any sweeper
	// marks them.
	clk.Advance(10 * time.Minute)
	require.Empty(t, list(rumana, 0))
}

// TestAccountCapSaysHowMany: a hold refused by the per-account cap
// carries an AccountSeatCap detail with the cap, what the account has and
// what it asked for (decision 0302), and a retry with the same key gets
// the same answer.
func TestAccountCapSaysHowMany(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 1})
	ctx := context.Background()
	show := createShow(t, env, seatedShow("cap", 2, 10)).GetShowId()
	rumana := as(t, env, "rumana", auth.RoleUser)
	_, err := rumana.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show,
		Seats: []string{"A1", "A2", "A3", "A4", "A5", "A6", "A7", "A8", "A9"}}))
	require.NoError(t, err)

	key := newKey()
	// Over Connect, then the same request over gRPC: the retry is answered
	// from the idempotency record, with the same detail.
	for _, c := range []clients{rumana, clientsWithHTTP(t, env, env.H2C, "rumana", connect.WithGRPC())} {
		_, err = c.holds.CreateHold(ctx, withKey(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"B1", "B2"}}, key))
		require.Equal(t, answer{connect.CodeFailedPrecondition, "BOOKING_NOT_ALLOWED", nil,
			[]string{"seatghor.booking.v1.AccountSeatCap"}}, answerOf(t, err), "%v", err)
		var ce *connect.Error
		require.True(t, errors.As(err, &ce))
		var cap *bookingv1.AccountSeatCap
		for _, d := range ce.Details() {
			if v, derr := d.Value(); derr == nil {
				if c, ok := v.(*bookingv1.AccountSeatCap); ok {
					cap = c
				}
			}
		}
		require.True(t, proto.Equal(&bookingv1.AccountSeatCap{ShowId: show, MaxSeats: 10, Held: 9, Asked: 2}, cap), "%v", cap)
	}
}
