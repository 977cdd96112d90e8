package api_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	seatmapv1 "github.com/seatghor/seatghor/gen/seatghor/seatmap/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
)

// TestShards: shows spread over the shards, a show can be placed on a
// chosen shard, and every request about a show, a hold or an order
// touches exactly one shard — counted per database.
func TestShards(t *testing.T) {
	env := apptest.New(t, apptest.Options{})
	ctx := context.Background()
	shards := env.App.Router.Shards()

	perShard := make([]int, len(shards))
	var shows []int64
	placed := map[int64]int{}
	for range 8 {
		s := createShow(t, env, seatedShow("spread", 1, 4))
		perShard[s.GetShard()]++
		shows = append(shows, s.GetShowId())
		placed[s.GetShowId()] = int(s.GetShard())
	}
	for i, n := range perShard {
		require.Equal(t, 2, n, "shard %d holds %d of 8 shows", i, n)
	}

	big := seatedShow("stadium", 10, 50)
	big.Shard = proto.Int32(3)
	stadium := createShow(t, env, big)
	require.EqualValues(t, 3, stadium.GetShard())
	var seats int
	require.NoError(t, shards[3].QueryRow(ctx, `SELECT count(*) FROM seats WHERE show_id = $1`, stadium.GetShowId()).Scan(&seats))
	require.Equal(t, 500, seats)
	for i := range 3 {
		require.NoError(t, shards[i].QueryRow(ctx, `SELECT count(*) FROM seats WHERE show_id = $1`, stadium.GetShowId()).Scan(&seats))
		require.Zero(t, seats, "shard %d has none of the stadium's seats", i)
	}

	c := as(t, env, "rumana", auth.RoleUser)
	// onlyShard runs f and asserts that only shard want saw statements.
	onlyShard := func(want int, what string, f func()) {
		t.Helper()
		before := make([]int64, len(shards))
		for i, s := range shards {
			before[i] = s.Queries()
		}
		f()
		for i, s := range shards {
			touched := s.Queries() - before[i]
			if i == want {
				require.Positive(t, touched, "%s: shard %d not used", what, i)
			} else {
				require.Zero(t, touched, "%s touched shard %d as well", what, i)
			}
		}
	}
	for _, id := range append(shows, stadium.GetShowId()) {
		shardOf := placed[id]
		if id == stadium.GetShowId() {
			shardOf = 3
		}
		// Warm the directory cache so the catalog lookup is not counted.
		_, err := env.App.Router.ForShow(ctx, id)
		require.NoError(t, err)
		var hold *bookingv1.Hold
		onlyShard(shardOf, "CreateHold", func() {
			resp, err := c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: id, Seats: []string{"A1"}}))
			require.NoError(t, err)
			hold = resp.Msg.GetHold()
		})
		onlyShard(shardOf, "GetHold", func() {
			_, err := c.holds.GetHold(ctx, connect.NewRequest(&bookingv1.GetHoldRequest{HoldId: hold.GetHoldId()}))
			require.NoError(t, err)
		})
		var order *bookingv1.Order
		onlyShard(shardOf, "CreateOrder", func() {
			resp, err := c.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: hold.GetHoldId()}))
			require.NoError(t, err)
			order = resp.Msg.GetOrder()
		})
		onlyShard(shardOf, "GetOrder", func() {
			_, err := c.orders.GetOrder(ctx, connect.NewRequest(&bookingv1.GetOrderRequest{OrderId: order.GetOrderId()}))
			require.NoError(t, err)
		})
		onlyShard(shardOf, "GetSeatMap", func() {
			_, err := c.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: id}))
			require.NoError(t, err)
		})
	}

	t.Run("the directory is asked once per show", func(t *testing.T) {
		s := createShow(t, env, seatedShow("cold", 1, 2))
		cat := env.App.Router.Catalog()
		read := func() int64 {
			before := cat.Queries()
			_, err := c.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: s.GetShowId()}))
			require.NoError(t, err)
			return cat.Queries() - before
		}
		require.EqualValues(t, 1, read(), "first lookup asks the catalog's directory")
		require.EqualValues(t, 0, read(), "placement never changes: later lookups are cached")
	})
}

// TestConcurrentCreateShowsOutnumberingTheCatalogPool: CreateShow holds a
// catalog connection in its transaction while it places the show; with
// more concurrent creations than the pool has connections, each placement
// once waited for a second connection that never came. Now every creation
// ends (the minute is a guard against the hang, not a speed claim).
func TestConcurrentCreateShowsOutnumberingTheCatalogPool(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 2, MaxConns: 3})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cat := as(t, env, "admin", auth.RoleAdmin).catalog
	const n = 12
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			_, err := cat.CreateShow(ctx, connect.NewRequest(seatedShow("pool", 1, 4)))
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}
