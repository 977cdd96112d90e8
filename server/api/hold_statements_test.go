package api_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
)

// TestCreateHoldTakesTwoRoundTrips: a lone hold through the API, with its
// idempotency key, costs the show's shard two round trips and six
// statements (decisions 0125, 0226, 0270): BEGIN, the key's and the
// account's locks in one statement and the hold itself, then the outbox
// row, the key's record and COMMIT — for seats and for general admission
// alike. A lone hold is a batch of one; holds that arrive together share
// the six.
func TestCreateHoldTakesTwoRoundTrips(t *testing.T) {
	env := apptest.New(t, apptest.Options{})
	ctx := context.Background()
	req := seatedShow("pipelined", 2, 10)
	req.GaAreas = []*catalogv1.GaArea{{Name: "Floor", Capacity: 40, PriceMinor: 40000, Buckets: 4}}
	show := createShow(t, env, req)
	pool, err := env.App.Router.ForShow(ctx, show.GetShowId())
	require.NoError(t, err)
	c := as(t, env, "hasan", auth.RoleUser)

	for _, tt := range []struct {
		name        string
		warm, count *bookingv1.CreateHoldRequest
	}{
		{"seats",
			&bookingv1.CreateHoldRequest{ShowId: show.GetShowId(), Seats: []string{"A1"}},
			&bookingv1.CreateHoldRequest{ShowId: show.GetShowId(), Seats: []string{"A2", "A3"}}},
		{"general admission",
			&bookingv1.CreateHoldRequest{ShowId: show.GetShowId(), GaArea: "Floor", Quantity: proto.Int32(1)},
			&bookingv1.CreateHoldRequest{ShowId: show.GetShowId(), GaArea: "Floor", Quantity: proto.Int32(2)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// The first hold warms the directory cache and the connection's
			// statement cache.
			_, err := c.holds.CreateHold(ctx, connect.NewRequest(tt.warm))
			require.NoError(t, err)
			statements, trips := pool.Queries(), pool.RoundTrips()
			_, err = c.holds.CreateHold(ctx, connect.NewRequest(tt.count))
			require.NoError(t, err)
			statements, trips = pool.Queries()-statements, pool.RoundTrips()-trips
			t.Logf("one hold: %d statements in %d round trips", statements, trips)
			require.EqualValues(t, 2, trips, "round trips of one hold")
			require.EqualValues(t, 6, statements, "statements of one hold")
		})
	}
}

// TestAccountCapUnderConcurrentHolds: one account sends 40 one-seat holds
// of one show at once, with a cap of 10: exactly 10 succeed, the
// rest are refused, whichever path (pipelined or not) each one takes.
func TestAccountCapUnderConcurrentHolds(t *testing.T) {
	env := apptest.New(t, apptest.Options{})
	ctx := context.Background()
	show := createShow(t, env, seatedShow("cap race", 4, 10)) // cap 10 per account
	c := as(t, env, "greedy", auth.RoleUser)
	rows := rowsAZ(4)
	var (
		wg            sync.WaitGroup
		held, refused atomic.Int64
	)
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{
				ShowId: show.GetShowId(), Seats: []string{fmt.Sprintf("%s%d", rows[i/10], 1+i%10)}}))
			switch {
			case err == nil:
				held.Add(1)
			case connect.CodeOf(err) == connect.CodeFailedPrecondition:
				refused.Add(1)
			default:
				t.Errorf("hold %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	require.EqualValues(t, 10, held.Load(), "holds within the cap")
	require.EqualValues(t, 30, refused.Load(), "holds past the cap")
	require.Equal(t, 10, countHolds(t, env, show.GetShowId()))
}
