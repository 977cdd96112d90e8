//go:build chaosbroken

package audit

import (
	"os"
	"slices"
	"strings"
)

// brokenAudit drops every catalog entry, so that a staff write commits
// without its record: the bug `seatghor chaos` must report (its console
// edits check, decision 0411). Only a binary built with the tag
// chaosbroken has this file; it reads SEATGHOR_CHAOS_BROKEN=audit once, at
// start.
var brokenAudit = slices.Contains(strings.Split(os.Getenv("SEATGHOR_CHAOS_BROKEN"), ","), "audit")

// recorded says whether Record writes its entry: not, broken.
func recorded() bool { return !brokenAudit }
