package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/seatghor/seatghor/clients/go/seatghor/internal/devserver"
)

// TestResellerSellsTwoSeats runs the program against the real binary
// (seatghor dev, its demo shows) with a partner's credentials: two seats of
// the first bus trip are held, ordered, paid and confirmed. A second run
// sells two more, choosing again around the seats the first one took.
// (The partner's credential is a partner-role token until the API keys of
// PartnerService land; the SDK sends both the same way.)
func TestResellerSellsTwoSeats(t *testing.T) {
	ctx := t.Context()
	srv, err := devserver.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	key, err := srv.Token(ctx, "go-reseller", "partner")
	if err != nil {
		t.Fatal(err)
	}
	held := regexp.MustCompile(`held \[(\w+) (\w+)\] of show (\d+)`)
	sold := map[string]bool{} // show/seat
	for i := range 2 {
		var out bytes.Buffer
		if err := run(ctx, []string{"-base-url", srv.BaseURL, "-api-key", key}, &out); err != nil {
			t.Fatalf("run %d: %v\n%s", i, err, out.String())
		}
		m := held.FindStringSubmatch(out.String())
		if m == nil || !strings.Contains(out.String(), "confirmed: order ") {
			t.Fatalf("run %d printed:\n%s", i, out.String())
		}
		for _, seat := range m[1:3] {
			if sold[m[3]+"/"+seat] {
				t.Fatalf("run %d sold seat %s of show %s again", i, seat, m[3])
			}
			sold[m[3]+"/"+seat] = true
		}
	}
}
