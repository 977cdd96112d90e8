package amount_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/amount"
)

func TestCheckedArithmeticRefusesOverflow(t *testing.T) {
	const maxI, minI = math.MaxInt64, math.MinInt64
	type op func() (int64, error)
	for _, tc := range []struct {
		name string
		op   op
		want int64
		err  bool
	}{
		{"add", func() (int64, error) { return amount.Add(170000, 85000) }, 255000, false},
		{"add to the top", func() (int64, error) { return amount.Add(maxI-1, 1) }, maxI, false},
		{"add past the top", func() (int64, error) { return amount.Add(maxI, 1) }, 0, true},
		{"add past the bottom", func() (int64, error) { return amount.Add(minI, -1) }, 0, true},
		{"add of mixed signs never overflows", func() (int64, error) { return amount.Add(maxI, minI) }, -1, false},
		{"sub", func() (int64, error) { return amount.Sub(170000, 17000) }, 153000, false},
		{"sub past the bottom", func() (int64, error) { return amount.Sub(minI, 1) }, 0, true},
		{"sub of the smallest", func() (int64, error) { return amount.Sub(0, minI) }, 0, true},
		{"sub of the smallest from a negative", func() (int64, error) { return amount.Sub(-1, minI) }, maxI, false},
		{"sum", func() (int64, error) { return amount.Sum(85000, 85000, 0, 40000) }, 210000, false},
		{"sum of nothing", func() (int64, error) { return amount.Sum() }, 0, false},
		{"sum that overflows midway", func() (int64, error) { return amount.Sum(maxI, 1, -2) }, 0, true},
		{"sum of the largest prices of the largest hold", func() (int64, error) {
			xs := make([]int64, amount.MaxPlacesPerHold)
			for i := range xs {
				xs[i] = amount.MaxPriceMinor
			}
			return amount.Sum(xs...)
		}, amount.MaxPriceMinor * amount.MaxPlacesPerHold, false},
		{"mul", func() (int64, error) { return amount.Mul(40000, 3) }, 120000, false},
		{"mul by zero", func() (int64, error) { return amount.Mul(maxI, 0) }, 0, false},
		{"mul of a free place", func() (int64, error) { return amount.Mul(0, 100) }, 0, false},
		{"mul at the bound", func() (int64, error) { return amount.Mul(amount.MaxPriceMinor, amount.MaxPlacesPerHold) }, 100_000_000_000, false},
		{"mul past the top", func() (int64, error) { return amount.Mul(maxI/2+1, 2) }, 0, true},
		{"mul of a huge price by a quantity", func() (int64, error) { return amount.Mul(4_611_686_018_427_387_904, 3) }, 0, true},
		{"mul that wraps to a positive", func() (int64, error) { return amount.Mul(1<<62, 4) }, 0, true},
		{"mul of the smallest by -1", func() (int64, error) { return amount.Mul(minI, -1) }, 0, true},
		{"mul of -1 by the smallest", func() (int64, error) { return amount.Mul(-1, minI) }, 0, true},
		{"mul to the top", func() (int64, error) { return amount.Mul(maxI, 1) }, maxI, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.op()
			if tc.err {
				require.ErrorIs(t, err, amount.ErrOverflow)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}
