package api_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/internal/testkit/apptest"
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
