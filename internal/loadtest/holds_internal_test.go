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
