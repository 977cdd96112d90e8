package api_test

import (
	"context"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	"github.com/seatghor/seatghor/server/apptest"
	"github.com/seatghor/seatghor/server/auth"
)

// TestCreateHoldTakesTwoRoundTrips: a seated hold through the API, with its
// idempotency key, costs the show's shard two round trips (decision 0125):
// the work pipelined after BEGIN, then the outbox row, the key's record and
// COMMIT.
func TestCreateHoldTakesTwoRoundTrips(t *testing.T) {
	env := apptest.New(t, apptest.Options{})
	ctx := context.Background()
	show := createShow(t, env, seatedShow("pipelined", 2, 10))
	pool, err := env.App.Router.ForShow(ctx, show.GetShowId())
	require.NoError(t, err)
	c := as(t, env, "hasan", auth.RoleUser)
	hold := func(seat string) {
		_, err := c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{
			ShowId: show.GetShowId(), Seats: []string{seat}}))
		require.NoError(t, err)
	}
	hold("A1") // warms the directory cache and the connection's statement cache
	statements, trips := pool.Queries(), pool.RoundTrips()
	hold("A2")
	statements, trips = pool.Queries()-statements, pool.RoundTrips()-trips
	t.Logf("one seated hold: %d statements in %d round trips", statements, trips)
	// BEGIN, the key's lock and look-up, the account's lock, the hold, then
	// the outbox row, the key's record and COMMIT.
	require.EqualValues(t, 2, trips, "round trips of one seated hold")
	require.LessOrEqual(t, statements, int64(8), "statements of one seated hold")
}
