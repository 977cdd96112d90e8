package main

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/seatghor/seatghor/clients/go/seatghor"
	partnerv1 "github.com/seatghor/seatghor/clients/go/seatghor/gen/seatghor/partner/v1"
	"github.com/seatghor/seatghor/clients/go/seatghor/internal/devserver"
)

// TestResellerSellsTwoSeats runs the program against the real binary
// (seatghor dev, its demo shows) with a partner's API key made by
// CreateApiKey (a booking key to sell, a webhooks key to subscribe): two seats of the first bus trip are held, ordered and paid,
// and the confirmation arrives at the program's receiver as a signed
// booking.confirmed webhook; the program then deletes its endpoint. A
// second run sells two more, choosing again around the seats the first one
// took.
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

	hooks := seatghor.NewClient(srv.BaseURL, seatghor.WithAPIKey(hk.Msg.GetSecret()))
	held := regexp.MustCompile(`held \[(\w+) (\w+)\] of show (\d+)`)
	deleted := regexp.MustCompile(`(?m)^subscribed endpoint (\d+) at .*\n(?s:.*)^deleted endpoint (\d+)$`)
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
		if d := deleted.FindStringSubmatch(out.String()); d == nil || d[1] != d[2] {
			t.Fatalf("run %d did not delete the endpoint it made:\n%s", i, out.String())
		}
		left, err := hooks.Webhook.ListEndpoints(ctx, connect.NewRequest(&partnerv1.ListEndpointsRequest{}))
		if err != nil {
			t.Fatalf("ListEndpoints: %v", err)
		}
		if n := len(left.Msg.GetEndpoints()); n != 0 {
			t.Fatalf("run %d left %d endpoints", i, n)
		}
		for _, seat := range m[1:3] {
			if sold[m[3]+"/"+seat] {
				t.Fatalf("run %d sold seat %s of show %s again", i, seat, m[3])
			}
			sold[m[3]+"/"+seat] = true
		}
	}
}

// TestReceiverRefusesWhatDoesNotVerify: the receiver takes a delivery
// signed with its endpoint's secret and refuses one signed with another
// secret, or whose body was changed after signing.
func TestReceiverRefusesWhatDoesNotVerify(t *testing.T) {
	secret := "whsec_" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	recv, err := newReceiver(secret)
	if err != nil {
		t.Fatal(err)
	}
	body := `{"type":"booking.confirmed","event_id":"evt_1","data":{"order_id":"ord_x","seats":["A1"]}}`
	post := func(id, secret, signed string) int {
		t.Helper()
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		sig, err := wh.Sign(id, now, []byte(signed))
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodPost, "/seatghor", strings.NewReader(body))
		req.Header.Set("webhook-id", id)
		req.Header.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
		req.Header.Set("webhook-signature", sig)
		w := httptest.NewRecorder()
		recv.ServeHTTP(w, req)
		return w.Code
	}
	other := "whsec_" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{8}, 32))
	if code := post("msg_1", other, body); code != http.StatusUnauthorized {
		t.Errorf("another secret's signature: %d, want 401", code)
	}
	if code := post("msg_2", secret, strings.Replace(body, "A1", "A2", 1)); code != http.StatusUnauthorized {
		t.Errorf("a changed body: %d, want 401", code)
	}
	if code := post("msg_3", secret, body); code != http.StatusNoContent {
		t.Fatalf("a good delivery: %d, want 204", code)
	}
	c, err := recv.wait(t.Context(), "ord_x")
	if err != nil || !slices.Equal(c.Seats, []string{"A1"}) {
		t.Fatalf("confirmation %+v, %v", c, err)
	}
}
