package api_test

import (
	"context"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/booking"
)

// bookedTwice is seatghor_seats_booked_twice as the admin registry has it
// (-1: not reported).
func bookedTwice(t *testing.T, env *apptest.Env) float64 {
	families, err := env.App.Registry.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() == "seatghor_seats_booked_twice" {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	return -1
}

// TestSeatsBookedTwiceAreCountedForTheAlert: the seat check counts the
// seats two confirmed bookings of one show hold and reports them in
// seatghor_seats_booked_twice (R-11: always 0). The double booking is
// written by hand, since the platform cannot make one.
func TestSeatsBookedTwiceAreCountedForTheAlert(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 2})
	ctx := context.Background()
	show := createShow(t, env, seatedShow("checked", 2, 4)).GetShowId()
	require.InDelta(t, -1, bookedTwice(t, env), 0, "nothing before the first check")
	n, err := env.App.Booking.CheckSeats(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
	require.InDelta(t, 0, bookedTwice(t, env), 0)

	pool, err := env.App.Router.ForShow(ctx, show)
	require.NoError(t, err)
	now := time.Now()
	for i, seats := range [][]string{{"A1", "A2"}, {"A2", "B1"}, {"A1"}, {"B2"}} {
		status := "confirmed"
		if i == 3 {
			status = "released"
		}
		_, err := pool.Exec(ctx, `
			INSERT INTO holds (hold_id, show_id, user_id, status, seats, quantity, amount_minor, currency,
			                   expires_at, created_at, updated_at)
			VALUES ($1, $2, 'u', $3, $4, $5, 0, 'BDT', $6, $6, $6)`,
			"hld_twice_"+string(rune('a'+i)), show, status, seats, len(seats), now)
		require.NoError(t, err)
	}
	_, err = pool.Exec(ctx, `
		INSERT INTO holds (hold_id, show_id, user_id, status, seats, quantity, amount_minor, currency,
		                   expires_at, created_at, updated_at)
		VALUES ('hld_twice_e', $1, 'u', 'released', '{B1}', 1, 0, 'BDT', $2, $2, $2)`, show, now)
	require.NoError(t, err)
	n, err = env.App.Booking.CheckSeats(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 2, n, "A1 and A2 are booked twice; B1's second hold was released")
	require.InDelta(t, 2, bookedTwice(t, env), 0)
}

// TestHoldCheckFindsWhatTheHoldsMakeImpossible: the hold check (`seatghor
// verify`, `seatghor chaos`) finds nothing after real holds of seats and
// general-admission places, and finds each impossible state written by
// hand: a seat in two live holds (one of which owns none of it), a hold
// past its area's capacity, a bucket whose count is off. Holds that ran
// out or were released are not live.
func TestHoldCheckFindsWhatTheHoldsMakeImpossible(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 2})
	ctx := context.Background()
	req := seatedShow("hold check", 2, 4)
	req.GaAreas = []*catalogv1.GaArea{{Name: "Lawn", Capacity: 10, PriceMinor: 50000}}
	show := createShow(t, env, req).GetShowId()
	buyer := as(t, env, "checked-buyer", auth.RoleUser)
	_, err := buyer.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"A1", "A2"}}))
	require.NoError(t, err)
	_, err = buyer.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, GaArea: "Lawn", Quantity: proto.Int32(3)}))
	require.NoError(t, err)
	released, err := buyer.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"B1"}}))
	require.NoError(t, err)
	_, err = buyer.holds.ReleaseHold(ctx, connect.NewRequest(&bookingv1.ReleaseHoldRequest{HoldId: released.Msg.GetHold().GetHoldId()}))
	require.NoError(t, err)

	c, err := env.App.Booking.CheckHolds(ctx, time.Now())
	require.NoError(t, err)
	require.Equal(t, booking.HoldCheck{Holds: 2}, c)

	pool, err := env.App.Router.ForShow(ctx, show)
	require.NoError(t, err)
	now := time.Now()
	insert := func(id, status string, seats []string, area string, n int, expires time.Time) {
		t.Helper()
		_, err := pool.Exec(ctx, `
			INSERT INTO holds (hold_id, show_id, user_id, status, seats, ga_area, quantity, amount_minor, currency,
			                   expires_at, created_at, updated_at)
			VALUES ($1, $2, 'u', $3, $4, $5, $6, 0, 'BDT', $7, $8, $8)`, id, show, status, seats, area, n, expires, now)
		require.NoError(t, err)
	}
	insert("hld_check_a", "active", []string{"A2", "B2"}, "", 2, now.Add(time.Hour)) // A2 is another's; B2 is free
	insert("hld_check_b", "active", []string{"B3"}, "", 1, now.Add(-time.Minute))    // ran out: not live
	insert("hld_check_c", "ordered", []string{}, "Lawn", 8, now.Add(time.Hour))      // 3 + 8 > 10
	_, err = pool.Exec(ctx, `UPDATE ga_buckets SET remaining = remaining - 1 WHERE show_id = $1 AND bucket = (
		SELECT min(bucket) FROM ga_buckets WHERE show_id = $1)`, show)
	require.NoError(t, err)

	c, err = env.App.Booking.CheckHolds(ctx, now)
	require.NoError(t, err)
	require.Equal(t, booking.HoldCheck{Holds: 4, SeatsTwice: 1, Partial: 1, GAOver: 1, GABuckets: 1}, c)
}
