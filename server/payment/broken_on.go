//go:build chaosbroken

package payment

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"slices"
	"strings"
)

// brokenEventDedup stores every delivery of a webhook event under a key of
// its own, so the event-id de-duplication of is gone: the bug
// `seatghor chaos` must report (decision 0411). Only a binary built with
// the tag chaosbroken has this file; it reads SEATGHOR_CHAOS_BROKEN=webhooks
// once, at start.
var brokenEventDedup = slices.Contains(strings.Split(os.Getenv("SEATGHOR_CHAOS_BROKEN"), ","), "webhooks")

// storedEventID is the gateway's event id, or, broken, one per delivery.
func storedEventID(eventID string) string {
	if !brokenEventDedup {
		return eventID
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	return eventID + "#" + hex.EncodeToString(b[:])
}
