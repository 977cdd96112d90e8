package seatghor_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/seatghor/seatghor/clients/go/seatghor"
	bookingv1 "github.com/seatghor/seatghor/clients/go/seatghor/gen/seatghor/booking/v1"
	partnerv1 "github.com/seatghor/seatghor/clients/go/seatghor/gen/seatghor/partner/v1"
	paymentv1 "github.com/seatghor/seatghor/clients/go/seatghor/gen/seatghor/payment/v1"
)

// TestPartnerResellsEndToEnd is issue 12's "what must show", through the real
// binary and nothing but the SDK and a Standard Webhooks library: an admin
// creates a partner; the partner's staff make an API key; an admin allocates
// 10 seats of a show to the partner until a few seconds from now; the
// partner, with its key, subscribes a receiver and sells 2 of them while a
// public buyer cannot hold any allocated seat; booking.confirmed arrives at
// the receiver, signed, and verifies; at return_at the 8 unsold seats go
// back to general sale (a public buyer holds one; the sold ones stay sold)
// and allocation.returned arrives; revoking the key refuses its next call.
func TestPartnerResellsEndToEnd(t *testing.T) {
	ctx := t.Context()
	admin := seatghor.NewClient(server.BaseURL, seatghor.WithToken(token(t, "go-e2e-admin", "admin")))
	public := seatghor.NewClient(server.BaseURL, seatghor.WithToken(token(t, "go-e2e-public", "user")))

	p, err := admin.Partner.CreatePartner(ctx, connect.NewRequest(&partnerv1.CreatePartnerRequest{
		Name: "Go e2e travels", CommissionBps: 500, Contact: &partnerv1.Contact{Name: "Nadia", Email: "api@e2e.example"},
	}))
	if err != nil {
		t.Fatalf("CreatePartner: %v", err)
	}
	partnerID := p.Msg.GetPartner().GetPartnerId()

	staffToken, err := server.PartnerToken(ctx, "go-e2e-staff", partnerID)
	if err != nil {
		t.Fatal(err)
	}
	staff := seatghor.NewClient(server.BaseURL, seatghor.WithToken(staffToken))
	k, err := staff.Partner.CreateApiKey(ctx, connect.NewRequest(&partnerv1.CreateApiKeyRequest{PartnerId: partnerID, Name: "e2e"}))
	if err != nil {
		t.Fatalf("CreateApiKey: %v", err)
	}
	if !strings.HasPrefix(k.Msg.GetSecret(), "sk_test_") {
		t.Fatalf("secret %q, want sk_test_…", k.Msg.GetSecret())
	}
	reseller := seatghor.NewClient(server.BaseURL, seatghor.WithAPIKey(k.Msg.GetSecret()))
	// Endpoints are changed with a key of scope webhooks; the booking key
	// may only list them (decision 0276).
	hk, err := staff.Partner.CreateApiKey(ctx, connect.NewRequest(&partnerv1.CreateApiKeyRequest{PartnerId: partnerID, Name: "e2e webhooks",
		Scope: partnerv1.ApiKeyScope_API_KEY_SCOPE_WEBHOOKS}))
	if err != nil {
		t.Fatalf("CreateApiKey of scope webhooks: %v", err)
	}
	hooks := seatghor.NewClient(server.BaseURL, seatghor.WithAPIKey(hk.Msg.GetSecret()))

	show := newShow(t, "Go SDK partner end to end")
	// A new partner sells nothing until allowed (decision 0284).
	if _, err := admin.Partner.UpdatePartnerAccess(ctx, connect.NewRequest(&partnerv1.UpdatePartnerAccessRequest{
		PartnerId: partnerID, AllowShowIds: []int64{show.GetShowId()},
	})); err != nil {
		t.Fatalf("UpdatePartnerAccess: %v", err)
	}
	allocated := []string{"A1", "A2", "A3", "A4", "B1", "B2", "B3", "B4", "C1", "C2"}
	// Long enough for the checks that need the allocation active below
	// (a few calls), short enough for a test.
	returnAt := time.Now().Add(8 * time.Second)
	alloc, err := admin.Allocation.AllocateSeats(ctx, connect.NewRequest(&partnerv1.AllocateSeatsRequest{
		ShowId: show.GetShowId(), PartnerId: partnerID, Seats: allocated, ReturnAt: timestamppb.New(returnAt),
	}))
	if err != nil {
		t.Fatalf("AllocateSeats: %v", err)
	}
	allocationID := alloc.Msg.GetAllocation().GetAllocationId()

	// The public cannot hold an allocated seat, and is told it is not sold
	// in its channel (not a lost race); the rest of the show sells as ever.
	for _, seat := range []string{"A1", "B3", "C2"} {
		_, err := public.Hold.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show.GetShowId(), Seats: []string{seat}}))
		var refused seatghor.APIError
		var taken seatghor.SeatsUnavailableError
		if !errors.As(err, &refused) || refused.Reason != seatghor.ReasonSeatsNotInChannel || errors.As(err, &taken) {
			t.Fatalf("public CreateHold of allocated %s: %v, want %s", seat, err, seatghor.ReasonSeatsNotInChannel)
		}
	}
	if _, err := public.Hold.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show.GetShowId(), Seats: []string{"C3"}})); err != nil {
		t.Fatalf("public CreateHold of unallocated C3: %v", err)
	}

	recv := newReceiver(t)
	subscribe := &partnerv1.CreateEndpointRequest{
		Url: recv.url, EventTypes: []string{"booking.confirmed", "allocation.returned"},
	}
	if _, err := reseller.Webhook.CreateEndpoint(ctx, connect.NewRequest(subscribe)); connect.CodeOf(err) != connect.CodePermissionDenied {
		t.Fatalf("CreateEndpoint with the booking key: %v, want permission_denied", err)
	}
	ep, err := hooks.Webhook.CreateEndpoint(ctx, connect.NewRequest(subscribe))
	if err != nil {
		t.Fatalf("CreateEndpoint with the webhooks key: %v", err)
	}
	if got := ep.Msg.GetEndpoint().GetPartnerId(); got != partnerID {
		t.Fatalf("endpoint of partner %d, want %d", got, partnerID)
	}
	recv.setSecret(t, ep.Msg.GetSecret())

	// The partner sells two of its seats with the API key.
	hold, err := reseller.Hold.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show.GetShowId(), Seats: []string{"A1", "A2"}}))
	if err != nil {
		t.Fatalf("partner CreateHold: %v", err)
	}
	if time.Now().After(returnAt) {
		t.Fatalf("the partner's hold came after return_at: make return_at later")
	}
	order, err := reseller.Order.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: hold.Msg.GetHold().GetHoldId()}))
	if err != nil {
		t.Fatalf("partner CreateOrder: %v", err)
	}
	orderID := order.Msg.GetOrder().GetOrderId()
	pay, err := reseller.Payment.StartPayment(ctx, connect.NewRequest(&paymentv1.StartPaymentRequest{
		OrderId: orderID, Sandbox: &paymentv1.SandboxPayment{Token: "tok_success"},
	}))
	if err != nil {
		t.Fatalf("partner StartPayment: %v", err)
	}
	if s := pay.Msg.GetPayment().GetStatus(); s != paymentv1.PaymentState_PAYMENT_STATE_SUCCEEDED {
		t.Fatalf("payment %v, want SUCCEEDED", s)
	}

	confirmed := recv.await(t, func(e hookEvent) bool { return e.Type == "booking.confirmed" && e.Data.OrderID == orderID })
	if !slices.Equal(confirmed.Data.Seats, []string{"A1", "A2"}) || !strings.HasPrefix(confirmed.webhookID, "msg_") {
		t.Fatalf("booking.confirmed %+v, want seats A1 A2 and a msg_ webhook-id", confirmed)
	}

	// At return_at, and not before, the 8 unsold seats are general sale again.
	for {
		_, err := public.Hold.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show.GetShowId(), Seats: []string{"B3"}}))
		if err == nil {
			break
		}
		var refused seatghor.APIError
		if !errors.As(err, &refused) || refused.Reason != seatghor.ReasonSeatsNotInChannel {
			t.Fatalf("public CreateHold of B3 waiting for the return: %v, want %s", err, seatghor.ReasonSeatsNotInChannel)
		}
		if time.Since(returnAt) > projectionTimeout {
			t.Fatalf("B3 not back in general sale %s after return_at", projectionTimeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if time.Now().Before(returnAt) {
		t.Fatalf("an allocated seat was public before return_at %s", returnAt)
	}
	_, err = public.Hold.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show.GetShowId(), Seats: []string{"A2"}}))
	if !errors.As(err, &seatghor.SeatsUnavailableError{}) {
		t.Fatalf("public CreateHold of A2, sold by the partner: %v, want SeatsUnavailableError", err)
	}
	allocs, err := admin.Allocation.ListAllocations(ctx, connect.NewRequest(&partnerv1.ListAllocationsRequest{ShowId: show.GetShowId()}))
	if err != nil {
		t.Fatalf("ListAllocations: %v", err)
	}
	if a := allocs.Msg.GetAllocations(); len(a) != 1 || a[0].GetStatus() != partnerv1.AllocationStatus_ALLOCATION_STATUS_RETURNED {
		t.Fatalf("allocations %v, want one, returned", a)
	}
	returned := recv.await(t, func(e hookEvent) bool { return e.Type == "allocation.returned" && e.Data.AllocationID == allocationID })
	for _, seat := range allocated[2:] { // the 8 unsold
		if !slices.Contains(returned.Data.Seats, seat) {
			t.Fatalf("allocation.returned seats %v, want the unsold %v among them", returned.Data.Seats, allocated[2:])
		}
	}

	// Revoked, the key is refused at its next call.
	if _, err := reseller.Order.GetOrder(ctx, connect.NewRequest(&bookingv1.GetOrderRequest{OrderId: orderID})); err != nil {
		t.Fatalf("GetOrder before the revocation: %v", err)
	}
	if _, err := staff.Partner.RevokeApiKey(ctx, connect.NewRequest(&partnerv1.RevokeApiKeyRequest{KeyId: k.Msg.GetApiKey().GetKeyId()})); err != nil {
		t.Fatalf("RevokeApiKey: %v", err)
	}
	_, err = reseller.Order.GetOrder(ctx, connect.NewRequest(&bookingv1.GetOrderRequest{OrderId: orderID}))
	if !errors.As(err, &seatghor.UnauthenticatedError{}) {
		t.Fatalf("GetOrder with the revoked key: %v, want UnauthenticatedError", err)
	}
	if n := recv.refused(); n != 0 {
		t.Fatalf("the receiver refused %d deliveries that did not verify", n)
	}
}

// hookEvent is a delivery's body (the event in proto field names) and its
// webhook-id.
type hookEvent struct {
	Type string `json:"type"`
	Data struct {
		OrderID      string   `json:"order_id"`
		AllocationID string   `json:"allocation_id"`
		Seats        []string `json:"seats"`
	} `json:"data"`
	webhookID string
}

// receiver is a partner's webhook endpoint: it verifies each delivery with
// the Standard Webhooks library and keeps those that verify.
type receiver struct {
	url     string
	mu      sync.Mutex
	wh      *standardwebhooks.Webhook
	events  []hookEvent
	bad     int
	arrived chan struct{} // closed and replaced on every delivery kept
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{arrived: make(chan struct{})}
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	r.url = srv.URL + "/seatghor"
	return r
}

// setSecret starts verifying with the endpoint's secret; until then every
// delivery is refused (none can come before the endpoint exists).
func (r *receiver) setSecret(t *testing.T, secret string) {
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatalf("endpoint secret %q: %v", secret, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.wh = wh
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	var e hookEvent
	if err != nil || r.wh == nil || r.wh.Verify(body, req.Header) != nil || json.Unmarshal(body, &e) != nil {
		r.bad++
		http.Error(w, "does not verify", http.StatusUnauthorized)
		return
	}
	e.webhookID = req.Header.Get("webhook-id")
	r.events = append(r.events, e)
	close(r.arrived)
	r.arrived = make(chan struct{})
	w.WriteHeader(http.StatusNoContent)
}

// await returns the first verified delivery that match accepts.
func (r *receiver) await(t *testing.T, match func(hookEvent) bool) hookEvent {
	t.Helper()
	timeout := time.After(projectionTimeout)
	for {
		r.mu.Lock()
		i := slices.IndexFunc(r.events, match)
		arrived := r.arrived
		var e hookEvent
		if i >= 0 {
			e = r.events[i]
		}
		r.mu.Unlock()
		if i >= 0 {
			return e
		}
		select {
		case <-arrived:
		case <-timeout:
			t.Fatalf("no matching webhook within %s; received %+v", projectionTimeout, r.received())
		}
	}
}

func (r *receiver) received() []hookEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

func (r *receiver) refused() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bad
}
