package api_test

import (
	"context"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/idempotency"
)

// An Idempotency-Key is scoped to the caller, the procedure and the show
// (or hold, order …) the request acts on (decision 0087): the same key by
// the same caller for holds on three shows — two on one shard, one on
// another — gives three independent holds, wherever the shows live; a
// retry on each show replays that show's answer; the same key with another
// body on the same show is still refused.
func TestIdempotencyKeyIsScopedToTheShow(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 2})
	ctx := context.Background()
	on := func(shard int32) int64 {
		req := seatedShow("scoped", 1, 4)
		req.Shard = proto.Int32(shard)
		s := createShow(t, env, req)
		require.EqualValues(t, shard, s.GetShard())
		return s.GetShowId()
	}
	shows := []int64{on(0), on(1), on(0)}
	c := as(t, env, "rumana", auth.RoleUser)
	const key = "reused-key"
	first := map[int64]*bookingv1.Hold{}
	for _, show := range shows {
		resp, err := c.holds.CreateHold(ctx, withKey(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"A1"}}, key))
		require.NoError(t, err, "show %d: the key on another show is another request", show)
		require.Equal(t, show, resp.Msg.GetHold().GetShowId(), "not another show's replayed answer")
		first[show] = resp.Msg.GetHold()
		require.Equal(t, 1, countHolds(t, env, show))
	}
	require.Len(t, map[string]bool{first[shows[0]].GetHoldId(): true, first[shows[1]].GetHoldId(): true,
		first[shows[2]].GetHoldId(): true}, 3, "three independent holds")
	for _, show := range shows {
		again, err := c.holds.CreateHold(ctx, withKey(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"A1"}}, key))
		require.NoError(t, err)
		require.True(t, proto.Equal(first[show], again.Msg.GetHold()), "show %d: the retry gets that show's answer", show)
		require.Equal(t, 1, countHolds(t, env, show), "and does nothing twice")
	}
	_, err := c.holds.CreateHold(ctx, withKey(&bookingv1.CreateHoldRequest{ShowId: shows[0], Seats: []string{"A2"}}, key))
	require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err), "another body on the same show: %v", err)
	require.Contains(t, err.Error(), "different request")
	require.Equal(t, 1, countHolds(t, env, shows[0]))
}

// The catalog's idempotency records (CreateShow) are purged like the
// shards' once they are older than the retention.
func TestCatalogIdempotencyRecordsArePurged(t *testing.T) {
	clk := clock.NewFake(time.Now())
	env := apptest.New(t, apptest.Options{Shards: 1, Clock: clk})
	ctx := context.Background()
	records := func() int {
		var n int
		require.NoError(t, env.App.Router.Catalog().QueryRow(ctx,
			`SELECT count(*) FROM idempotency_keys WHERE scope = 'admin'`).Scan(&n))
		return n
	}
	create := func(key string) {
		// A fresh token: the fake clock runs past a day's token.
		_, err := as(t, env, "admin", auth.RoleAdmin).catalog.CreateShow(ctx, withKey(seatedShow("purged", 1, 4), key))
		require.NoError(t, err)
	}
	create("old-show")
	require.Equal(t, 1, records())
	clk.Advance(idempotency.Retention - time.Minute)
	create("new-show")
	_, err := env.App.Booking.Sweep(ctx, 100)
	require.NoError(t, err)
	require.Equal(t, 2, records(), "nothing is purged before the retention")

	clk.Advance(2 * time.Minute)
	_, err = env.App.Booking.Sweep(ctx, 100)
	require.NoError(t, err)
	require.Equal(t, 1, records(), "the record older than the retention is purged, the newer one stays")
	var key string
	require.NoError(t, env.App.Router.Catalog().QueryRow(ctx, `SELECT key FROM idempotency_keys`).Scan(&key))
	require.Equal(t, "new-show", key)
}
