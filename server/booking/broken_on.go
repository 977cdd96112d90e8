//go:build chaosbroken

package booking

import (
	"os"
	"slices"
	"strings"
)

// brokenHolds drops the status condition of the holds' seat update
// (seatFree), so that two holds can take one seat: the bug `seatghor chaos`
// must report (decision 0411). Only a binary built with the tag chaosbroken
// has this file; it reads SEATGHOR_CHAOS_BROKEN=holds once, at start.
var brokenHolds = slices.Contains(strings.Split(os.Getenv("SEATGHOR_CHAOS_BROKEN"), ","), "holds")
