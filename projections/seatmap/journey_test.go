package seatmap_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	"github.com/seatghor/seatghor/projections/seatmap"
	"github.com/seatghor/seatghor/server/auth"
)

// TestRedisKeepsEveryLegOfATrip (decision 0354): a coach of 14 seats (its
// legs padded to 16 places) and four stops, holds and orders on journeys
// that end on every leg, some concurrent on one seat; after quiescence the
// Redis map equals the shard's leg for leg, and every journey's view of it
// (states, prices, layout etag) is the shard's. Then the map is dropped and
// read again: the same.
func TestRedisKeepsEveryLegOfATrip(t *testing.T) {
	t.Parallel()
	env, r := newEnv(t, true, nil)
	store := seatmap.NewStore(env.App.Redis, r.Prefix, 0)
	ctx := context.Background()
	req := &catalogv1.CreateShowRequest{
		Kind: catalogv1.ShowKind_SHOW_KIND_BUS_TRIP, Title: "legs", Currency: "BDT",
		StartsAt: timestamppb.New(time.Now().Add(30 * 24 * time.Hour)),
		Sections: []*catalogv1.Section{{Name: "Coach", Rows: []string{"A", "B", "C"}, SeatsPerRow: 4},
			{Name: "Front", Rows: []string{"K"}, SeatsPerRow: 2, PriceMinor: 1}},
		HoldTtl: durationpb.New(10 * time.Minute), MaxSeatsPerAccount: 10, MaxSeatsPerHold: 10,
		Stops: []*catalogv1.TripStop{{Place: "Dhaka"}, {Place: "Cumilla", MinutesFromStart: 120},
			{Place: "Feni", MinutesFromStart: 180}, {Place: "Chattogram", MinutesFromStart: 330}},
	}
	stops := []string{"dhaka", "cumilla", "feni", "chattogram"}
	for i := range stops {
		for j := i + 1; j < len(stops); j++ {
			req.Fares = append(req.Fares, &catalogv1.Fare{FromStopId: stops[i], ToStopId: stops[j], PriceMinor: int64(30000 * (j - i))})
		}
	}
	resp, err := as(t, env, "admin", auth.RoleAdmin).catalog.CreateShow(ctx, connect.NewRequest(req))
	require.NoError(t, err)
	show := resp.Msg.GetShow().GetShowId()
	_, err = env.App.SeatMaps.SeatMap(ctx, show) // in Redis before the holds: the projector follows them
	require.NoError(t, err)

	// Journeys on every leg, K2 (the last seat, before the padding) on
	// each, and a crowd on A1.
	c := as(t, env, "rider", auth.RoleUser)
	hold := func(c caller, from, to int, seats ...string) (*bookingv1.Hold, error) {
		h, err := c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: seats,
			Journey: &commonv1.Journey{FromStopId: stops[from], ToStopId: stops[to]}}))
		if err != nil {
			return nil, err
		}
		return h.Msg.GetHold(), nil
	}
	for _, h := range []struct {
		from, to int
		seats    []string
	}{{0, 1, []string{"K2", "B4"}}, {1, 2, []string{"K2"}}, {2, 3, []string{"K2", "C3"}}, {0, 3, []string{"K1"}}} {
		_, err := hold(c, h.from, h.to, h.seats...)
		require.NoError(t, err)
	}
	ordered, err := hold(c, 1, 3, "A2")
	require.NoError(t, err)
	_, err = c.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: ordered.GetHoldId()}))
	require.NoError(t, err)
	released, err := hold(c, 0, 2, "C1")
	require.NoError(t, err)
	_, err = c.holds.ReleaseHold(ctx, connect.NewRequest(&bookingv1.ReleaseHoldRequest{HoldId: released.GetHoldId()}))
	require.NoError(t, err)
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Go(func() { _, _ = hold(as(t, env, fmt.Sprintf("crowd-%d", i), auth.RoleUser), i%3, i%3+1, "A1") })
	}
	wg.Wait()

	compare := func() {
		t.Helper()
		_, err := env.App.SeatMaps.SeatMap(ctx, show)
		require.NoError(t, err)
		requireConverged(t, env, store, []int64{show})
		want, err := env.App.Booking.SeatMap(ctx, show)
		require.NoError(t, err)
		got, err := env.App.SeatMaps.SeatMap(ctx, show)
		require.NoError(t, err)
		require.Equal(t, 3, got.Legs)
		require.Equal(t, want.States, got.States)
		require.Len(t, got.States, 12, "three legs of 16 places")
		require.Equal(t, want.LayoutETag(), got.LayoutETag())
		a, err := env.App.SeatMaps.Availability(ctx, show)
		require.NoError(t, err)
		for f := range 3 {
			for to := f + 1; to < 4; to++ {
				wv, err := want.Journey(f, to)
				require.NoError(t, err)
				gv, err := got.Journey(f, to)
				require.NoError(t, err)
				av, err := a.Journey(f, to)
				require.NoError(t, err)
				require.Equal(t, wv.States, gv.States, "%d → %d", f, to)
				require.Equal(t, wv.States, av.States, "%d → %d", f, to)
				require.Equal(t, wv.Sections, gv.Sections, "%d → %d", f, to)
				require.Equal(t, wv.LayoutETag(), gv.LayoutETag(), "%d → %d", f, to)
				require.Equal(t, wv.LayoutETag(), av.LayoutETag, "%d → %d", f, to)
			}
		}
	}
	compare()
	require.NoError(t, store.Drop(ctx, show))
	compare()
}
