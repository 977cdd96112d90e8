//go:build chaosbroken

package counter

import (
	"os"
	"slices"
	"strings"
)

// brokenSaleCash records every cash sale one minor unit short of what its
// journal posts, so that the shift report's entries no longer sum to the
// ledger: the bug `seatghor chaos` must report (its counter cash check,
// decision 0473). Only a binary built with the tag chaosbroken has this
// file; it reads SEATGHOR_CHAOS_BROKEN=counter once, at start.
var brokenSaleCash = slices.Contains(strings.Split(os.Getenv("SEATGHOR_CHAOS_BROKEN"), ","), "counter")

// saleCash is the order's total, or, broken, one minor unit less.
func saleCash(totalMinor int64) int64 {
	if !brokenSaleCash {
		return totalMinor
	}
	return totalMinor - 1
}
