// Package amount bounds money in integer minor units and does the
// arithmetic on it that must never wrap around: a price times a quantity, a
// sum of prices, a fee in basis points of a total. Every function answers
// ErrOverflow rather than a wrong number (decision 0071).
package amount

import (
	"errors"
	"math"
)

// MaxPriceMinor is the highest price of one seat or general-admission place:
// 10,000,000 Tk (1,000,000,000 paisa), far above any ticket sold, far below
// where a hold's total could overflow: a hold has at most MaxPlacesPerHold
// places, so no order total exceeds 10^11 minor units (decision 0071).
const MaxPriceMinor int64 = 1_000_000_000

// MaxPlacesPerHold is the most seats or places one hold may have: the upper
// bound of a show's max_seats_per_hold.
const MaxPlacesPerHold = 100

// ErrOverflow means a result does not fit 64 bits.
var ErrOverflow = errors.New("amount overflows 64 bits")

// Add returns a + b, or ErrOverflow.
func Add(a, b int64) (int64, error) {
	s := a + b
	// Overflow iff both operands have the sign the sum does not.
	if (a >= 0) == (b >= 0) && (s >= 0) != (a >= 0) {
		return 0, ErrOverflow
	}
	return s, nil
}

// Sub returns a − b, or ErrOverflow.
func Sub(a, b int64) (int64, error) {
	if b == math.MinInt64 {
		if a >= 0 {
			return 0, ErrOverflow
		}
		return a - b, nil
	}
	return Add(a, -b)
}

// Sum returns the sum of xs, or ErrOverflow as soon as a partial sum
// overflows.
func Sum(xs ...int64) (int64, error) {
	var s int64
	for _, x := range xs {
		var err error
		if s, err = Add(s, x); err != nil {
			return 0, err
		}
	}
	return s, nil
}

// Mul returns a × n (a price times a quantity), or ErrOverflow.
func Mul(a, n int64) (int64, error) {
	if a == 0 || n == 0 {
		return 0, nil
	}
	p := a * n
	if p/n != a || (a == -1 && n == math.MinInt64) || (n == -1 && a == math.MinInt64) {
		return 0, ErrOverflow
	}
	return p, nil
}
