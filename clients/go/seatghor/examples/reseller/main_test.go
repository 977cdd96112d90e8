package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"connectrpc.com/connect"

	"github.com/seatghor/seatghor/clients/go/seatghor"
	partnerv1 "github.com/seatghor/seatghor/clients/go/seatghor/gen/seatghor/partner/v1"
	"github.com/seatghor/seatghor/clients/go/seatghor/internal/devserver"
)

// TestResellerSellsTwoSeats runs the program against the real binary
// (seatghor dev, its demo shows) with a partner's API key made by
// CreateApiKey (a booking key to sell, a webhooks key to subscribe): two seats of the first bus trip are held, ordered and paid,
// and the confirmation arrives at the program's receiver as a signed
// booking.confirmed webhook. A second run sells two more, choosing again
// around the seats the first one took.
func TestResellerSellsTwoSeats(t *testing.T) {
	ctx := t.Context()
	srv, err := devserver.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	admin, err := srv.Token(ctx, "go-reseller-admin", "admin")
	if err != nil {
		t.Fatal(err)
	}
	partners := seatghor.NewClient(srv.BaseURL, seatghor.WithToken(admin)).Partner
	// A partner sells what it is allowed to (decision 0284): here the dev
	// server's demo organisation, whose bus trips the example sells.
	p, err := partners.CreatePartner(ctx, connect.NewRequest(&partnerv1.CreatePartnerRequest{
		Name: "Go reseller example", CommissionBps: 500, AllowedOrganizationIds: []string{"demo-operator"}}))
	if err != nil {
		t.Fatalf("CreatePartner: %v", err)
	}
	k, err := partners.CreateApiKey(ctx, connect.NewRequest(&partnerv1.CreateApiKeyRequest{PartnerId: p.Msg.GetPartner().GetPartnerId(), Name: "reseller"}))
	if err != nil {
		t.Fatalf("CreateApiKey: %v", err)
	}
	key := k.Msg.GetSecret()
	if !strings.HasPrefix(key, "sk_test_") {
		t.Fatalf("API key %q, want an sk_test_ secret", key)
	}
	hk, err := partners.CreateApiKey(ctx, connect.NewRequest(&partnerv1.CreateApiKeyRequest{PartnerId: p.Msg.GetPartner().GetPartnerId(),
		Name: "reseller webhooks", Scope: partnerv1.ApiKeyScope_API_KEY_SCOPE_WEBHOOKS}))
	if err != nil {
		t.Fatalf("CreateApiKey of scope webhooks: %v", err)
	}

	held := regexp.MustCompile(`held \[(\w+) (\w+)\] of show (\d+)`)
	sold := map[string]bool{} // show/seat
	for i := range 2 {
		var out bytes.Buffer
		if err := run(ctx, []string{"-base-url", srv.BaseURL, "-api-key", key, "-webhooks-key", hk.Msg.GetSecret()}, &out); err != nil {
			t.Fatalf("run %d: %v\n%s", i, err, out.String())
		}
		m := held.FindStringSubmatch(out.String())
		if m == nil || !strings.Contains(out.String(), "confirmed by webhook: order ") ||
			!strings.Contains(out.String(), "seats ["+m[1]+" "+m[2]+"]") {
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
