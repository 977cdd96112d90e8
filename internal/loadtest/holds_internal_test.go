package loadtest

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSeatMapDelayQuantileIsItsBucketsUpperBound: the projector's delay p99
// is read from the histogram's cumulative buckets as the upper bound of the
// bucket the quantile falls in; beyond the last finite bucket it is that
// bucket's bound, and without events 0.
func TestSeatMapDelayQuantileIsItsBucketsUpperBound(t *testing.T) {
	hist := func(counts ...float64) seatMapMetrics {
		m := seatMapMetrics{delay: map[float64]float64{}}
		for i, le := range []float64{0.05, 0.1, 0.25, math.Inf(1)} {
			m.delay[le] = counts[i]
		}
		return m
	}
	for _, tc := range []struct {
		name string
		m    seatMapMetrics
		want float64
	}{
		{"no events", hist(0, 0, 0, 0), 0},
		{"all fast", hist(100, 100, 100, 100), 0.05},
		{"p99 in the second bucket", hist(50, 99, 100, 100), 0.1},
		{"one slow in a hundred", hist(98, 99, 99, 100), 0.1},
		{"beyond the last bucket", hist(0, 0, 0, 100), 0.25},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, tc.m.quantile(0.99))
		})
	}
	// The delta between two scrapes is the histogram of the events between.
	after, before := hist(150, 199, 200, 200), hist(100, 100, 100, 100)
	require.Equal(t, 0.1, after.sub(before).quantile(0.99))
}

// TestHoldPlanCutsEverySeatIntoJourneys: with stops, the plan's holds are
// journeys over the stop pairs that take every leg of every seat exactly
// once (no hold can lose to another, so the run measures writes, not
// conflicts) and draw more than one kind of journey; consecutive holds are
// of different coaches, nearly always. Without stops, one hold a seat, as before.
func TestHoldPlanCutsEverySeatIntoJourneys(t *testing.T) {
	const shows, seats, stops = 7, 40, 5
	plan := holdPlan(shows, seats, stops, "seed")
	taken := map[[3]int]int{}
	kinds := map[[2]int]bool{}
	same := 0
	for i, h := range plan {
		require.True(t, h.stops)
		require.True(t, 0 <= h.from && h.from < h.to && h.to <= stops-1, "%+v", h)
		kinds[[2]int{h.from, h.to}] = true
		for leg := h.from; leg < h.to; leg++ {
			taken[[3]int{h.show, h.seat, leg}]++
		}
		if i > 0 && plan[i-1].show == h.show {
			same++
		}
	}
	require.Less(t, same, len(plan)/20, "consecutive holds spread over the coaches")
	require.Len(t, taken, shows*seats*(stops-1), "every seat-leg")
	for k, n := range taken {
		require.Equal(t, 1, n, "seat-leg %v taken %d times", k, n)
	}
	require.Greater(t, len(kinds), 5, "journeys of many stop pairs")
	require.Contains(t, holdPlan(2, 3, 5, "a")[0].journeyJSON(), `"journey":{"fromStopId":"dhaka"`)

	whole := holdPlan(shows, seats, 0, "seed")
	require.Len(t, whole, shows*seats)
	require.Empty(t, whole[0].journeyJSON())
}
