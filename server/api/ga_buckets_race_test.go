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

// TestGABucketChoiceUnderConcurrency races one-place holds and releases on
// an area of 64 buckets of 3 places, the shape where a hold takes the
// first free bucket from a random start (decision 0235): 48 buyers each hold
// and release in turn while the others do, then one buyer takes what is left
// one place at a time. Every bucket's counter must equal its capacity less
// the live holds' takes from it (a release gives its places back to the
// bucket they came from), the holds spread over the buckets, and the last
// places are found wherever they are, down to an empty area.
func TestGABucketChoiceUnderConcurrency(t *testing.T) {
	env := apptest.New(t, apptest.Options{})
	ctx := context.Background()
	const buckets, perBucket = 64, 3
	req := seatedShow("ga buckets", 1, 1)
	req.Sections = nil
	req.GaAreas = []*catalogv1.GaArea{{Name: "Field", Capacity: buckets * perBucket, PriceMinor: 10000, Buckets: buckets}}
	show := createShow(t, env, req)
	hold := func(c clients) (string, error) {
		resp, err := c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{
			ShowId: show.GetShowId(), GaArea: "Field", Quantity: proto.Int32(1)}))
		if err != nil {
			return "", err
		}
		return resp.Msg.GetHold().GetHoldId(), nil
	}

	var (
		wg       sync.WaitGroup
		held     atomic.Int64
		released atomic.Int64
	)
	for b := range 48 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := as(t, env, fmt.Sprintf("fan-%d", b), auth.RoleUser)
			// Five holds, every other one released at once: at most three
			// live, under the account's cap of ten.
			for i := range 5 {
				id, err := hold(c)
				if err != nil {
					if su := unavailable(t, err); su.GetRemaining() >= 1 {
						t.Errorf("refused 1 place with %d remaining", su.GetRemaining())
					}
					return
				}
				held.Add(1)
				if i%2 == 1 {
					_, err := c.holds.ReleaseHold(ctx, connect.NewRequest(&bookingv1.ReleaseHoldRequest{HoldId: id}))
					if err != nil {
						t.Errorf("release %s: %v", id, err)
						return
					}
					released.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	require.EqualValues(t, 48*5, held.Load(), "240 holds of one place fit in 192 places with 96 released")

	pool, err := env.App.Router.ForShow(ctx, show.GetShowId())
	require.NoError(t, err)
	perBucketMismatch := func() int {
		var n int
		require.NoError(t, pool.QueryRow(ctx, `
			SELECT count(*) FROM ga_buckets b
			WHERE b.show_id = $1 AND b.capacity - b.remaining <> (
				SELECT coalesce(sum(t.quantity), 0) FROM hold_ga_takes t JOIN holds h USING (hold_id)
				WHERE t.show_id = b.show_id AND t.area = b.area AND t.bucket = b.bucket AND h.status = 'active')`,
			show.GetShowId()).Scan(&n))
		return n
	}
	require.Zero(t, perBucketMismatch(), "each bucket's counter is its capacity less its live takes")
	var used int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(DISTINCT bucket) FROM hold_ga_takes WHERE show_id = $1`,
		show.GetShowId()).Scan(&used))
	require.Greater(t, used, buckets/4, "the holds spread over the buckets")

	// The rest, one place at a time, by buyers of three places each, until
	// refused: every last place is found, whichever bucket it is in.
	live := held.Load() - released.Load()
	for i := 0; ; i++ {
		_, err := hold(as(t, env, fmt.Sprintf("late-%d", i/3), auth.RoleUser))
		if err != nil {
			require.Zero(t, unavailable(t, err).GetRemaining())
			break
		}
		live++
	}
	var remaining, active int64
	require.NoError(t, pool.QueryRow(ctx, `
		SELECT (SELECT sum(remaining) FROM ga_buckets WHERE show_id = $1),
		       (SELECT coalesce(sum(quantity), 0) FROM holds WHERE show_id = $1 AND status = 'active')`,
		show.GetShowId()).Scan(&remaining, &active))
	require.Zero(t, remaining, "the area sells out")
	require.EqualValues(t, buckets*perBucket, active, "every place held once")
	require.Equal(t, live, active)
	require.Zero(t, perBucketMismatch())
	t.Logf("%d holds, %d released, %d buckets used in the race", held.Load(), released.Load(), used)
}
