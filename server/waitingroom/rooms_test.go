package waitingroom_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/waitingroom"
)

// TestRoomCacheIsBounded: the per-process cache of rooms is keyed by any
// show id a caller sends; after lookups of many distinct unknown show ids it
// holds at most its capacity, the rooms of real sales stay cached (the flood
// evicts only "no room" answers) and every show still gets the right answer.
func TestRoomCacheIsBounded(t *testing.T) {
	const size = 8
	e := newEnv(t, waitingroom.Config{RoomCacheSize: size})
	ctx := context.Background()
	onSale := []int64{e.show(t, 1, enabled), e.show(t, 1, enabled)}
	calm := e.show(t, 1, nil)
	check := func() {
		t.Helper()
		for _, show := range onSale {
			sale, err := e.rooms.ActiveSale(ctx, show)
			require.NoError(t, err)
			require.Equal(t, show, sale, "show %d sells through its room", show)
		}
		sale, err := e.rooms.ActiveSale(ctx, calm)
		require.NoError(t, err)
		require.Zero(t, sale, "a show without a room needs no Queue-Token")
	}
	check()
	for i := range int64(2_000) {
		unknown := 1_000_000_000 + i
		sale, err := e.rooms.ActiveSale(ctx, unknown)
		require.NoError(t, err)
		require.Zero(t, sale)
		of, err := e.rooms.SaleOf(ctx, unknown)
		require.NoError(t, err)
		require.Equal(t, unknown, of)
		if i%100 == 0 {
			check()
		}
	}
	rooms, noRoom := waitingroom.CachedRooms(e.rooms)
	require.LessOrEqual(t, noRoom, size, "the answers for unknown shows are bounded")
	require.Equal(t, len(onSale), rooms, "the flood did not evict the rooms of the sales")
	check()
}

// TestShowsWithoutARoomAreAnsweredFromOneList: which shows sell through a
// room is one list per process (decision 0267), so asking about many shows
// without one (3,000 buses on sale) costs no catalog query each; a show
// created after the list was read is asked about on its own, so its room
// counts at once.
func TestShowsWithoutARoomAreAnsweredFromOneList(t *testing.T) {
	e := newEnv(t, waitingroom.Config{RoomCacheTTL: time.Hour})
	ctx := context.Background()
	catalog := e.App.Router.Catalog()
	var calm []int64
	for range 30 {
		calm = append(calm, e.show(t, 1, nil))
	}
	onSale := e.show(t, 1, enabled)
	sale, err := e.rooms.ActiveSale(ctx, onSale) // reads the list and the room
	require.NoError(t, err)
	require.Equal(t, onSale, sale)

	before := catalog.Queries()
	for range 3 {
		for _, show := range calm {
			sale, err := e.rooms.ActiveSale(ctx, show)
			require.NoError(t, err)
			require.Zero(t, sale, "show %d has no room", show)
			of, err := e.rooms.SaleOf(ctx, show)
			require.NoError(t, err)
			require.Equal(t, show, of)
		}
	}
	require.Zero(t, catalog.Queries()-before, "shows without a room asked the catalog")

	later := e.show(t, 1, enabled)
	sale, err = e.rooms.ActiveSale(ctx, later)
	require.NoError(t, err)
	require.Equal(t, later, sale, "a show newer than the list sells through its room at once")
	sale, err = e.rooms.ActiveSale(ctx, onSale)
	require.NoError(t, err)
	require.Equal(t, onSale, sale)
}
