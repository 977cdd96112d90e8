package api_test

import (
	"context"
	"fmt"
	"math/rand/v2"
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

// TestGARace: 400 buyers ask for 1–4 places of a 500-place area split into
// 8 buckets. Demand exceeds supply; the area must sell out without
// ever selling a place twice, and every hold's takes must add up to it.
func TestGARace(t *testing.T) {
	env := apptest.New(t, apptest.Options{})
	ctx := context.Background()
	req := seatedShow("ga race", 1, 1)
	req.Sections = nil
	req.GaAreas = []*catalogv1.GaArea{{Name: "Field", Capacity: 500, PriceMinor: 10000, Buckets: 8}}
	show := createShow(t, env, req)

	var (
		wg              sync.WaitGroup
		sold, refusals  atomic.Int64
		badRefusalCount atomic.Int64
	)
	for b := range 400 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := int32(1 + rand.IntN(4))
			c := as(t, env, fmt.Sprintf("fan-%d", b), auth.RoleUser)
			resp, err := c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{
				ShowId: show.GetShowId(), Quantity: proto.Int32(n)}))
			if err != nil {
				su := unavailable(t, err)
				if su.GetRemaining() >= n {
					badRefusalCount.Add(1)
				}
				refusals.Add(1)
				return
			}
			if got := resp.Msg.GetHold().GetQuantity(); got != n {
				t.Errorf("asked %d places, got %d", n, got)
			}
			sold.Add(int64(n))
		}()
	}
	wg.Wait()
	require.Positive(t, refusals.Load(), "demand exceeds supply")
	require.Zero(t, badRefusalCount.Load(), "a refusal must mean too few places were left")

	pool, err := env.App.Router.ForShow(ctx, show.GetShowId())
	require.NoError(t, err)
	var remaining, taken, held, mismatched int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT sum(remaining) FROM ga_buckets WHERE show_id = $1`, show.GetShowId()).Scan(&remaining))
	require.NoError(t, pool.QueryRow(ctx, `SELECT coalesce(sum(quantity), 0) FROM hold_ga_takes WHERE show_id = $1`, show.GetShowId()).Scan(&taken))
	require.NoError(t, pool.QueryRow(ctx, `SELECT coalesce(sum(quantity), 0) FROM holds WHERE show_id = $1 AND status = 'active'`, show.GetShowId()).Scan(&held))
	require.NoError(t, pool.QueryRow(ctx, `
		SELECT count(*) FROM holds h
		WHERE h.show_id = $1 AND h.quantity <> (SELECT sum(quantity) FROM hold_ga_takes t WHERE t.hold_id = h.hold_id)`,
		show.GetShowId()).Scan(&mismatched))
	require.Equal(t, sold.Load(), held, "what buyers were told equals what is held")
	require.Equal(t, held, taken)
	require.EqualValues(t, 500, remaining+taken, "no place lost or sold twice")
	require.Less(t, remaining, int64(4), "the area sells out")
	require.Zero(t, mismatched, "each hold's takes add up to its quantity")
	t.Logf("%d places sold, %d left, %d refusals", sold.Load(), remaining, refusals.Load())
}
