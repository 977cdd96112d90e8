package webhook_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/jackc/pgx/v5"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/dns/dnsmessage"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	"github.com/seatghor/seatghor/gen/seatghor/booking/v1/bookingv1connect"
	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/gen/seatghor/catalog/v1/catalogv1connect"
	eventsv1 "github.com/seatghor/seatghor/gen/seatghor/events/v1"
	partnerv1 "github.com/seatghor/seatghor/gen/seatghor/partner/v1"
	"github.com/seatghor/seatghor/gen/seatghor/partner/v1/partnerv1connect"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/internal/testkit/pgtest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/outbox"
	"github.com/seatghor/seatghor/server/partner"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/webhook"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Cleanup()
	os.Exit(code)
}

// received is one POST a receiver got.
type received struct {
	id     string
	header http.Header
	body   []byte
	event  struct {
		Type    string          `json:"type"`
		EventID string          `json:"event_id"`
		Data    json.RawMessage `json:"data"`
	}
}

// receiver is a partner's endpoint: an httptest server that records every
// POST and answers what answer says for the n-th one (1-based).
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []received
	answer func(n int, r *http.Request) int
}

func newReceiver(t *testing.T, answer func(n int, r *http.Request) int) *receiver {
	rc := &receiver{answer: answer}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		g := received{id: r.Header.Get("webhook-id"), header: r.Header.Clone(), body: body}
		_ = json.Unmarshal(body, &g.event)
		rc.mu.Lock()
		rc.got = append(rc.got, g)
		n := len(rc.got)
		rc.mu.Unlock()
		code := http.StatusNoContent
		if rc.answer != nil {
			code = rc.answer(n, r)
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) all() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

// ids counts the POSTs the receiver got per webhook-id.
func (rc *receiver) ids() map[string]int {
	out := map[string]int{}
	for _, g := range rc.all() {
		out[g.id]++
	}
	return out
}

// api is one caller's clients, sending a fresh idempotency key with every
// write.
type api struct {
	hooks   partnerv1connect.WebhookServiceClient
	catalog catalogv1connect.CatalogServiceClient
	holds   bookingv1connect.HoldServiceClient
	orders  bookingv1connect.OrderServiceClient
}

// signedIn is the client option of a caller with credential (a token or an
// API key's secret): it sends it as a bearer and gives every call with side
// effects a fresh Idempotency-Key.
func signedIn(credential string) connect.ClientOption {
	return connect.WithInterceptors(connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			req.Header().Set("Authorization", "Bearer "+credential)
			if req.Spec().IdempotencyLevel != connect.IdempotencyNoSideEffects && req.Header().Get("Idempotency-Key") == "" {
				var b [12]byte
				_, _ = rand.Read(b[:])
				req.Header().Set("Idempotency-Key", hex.EncodeToString(b[:]))
			}
			return next(ctx, req)
		}
	}))
}

func as(t *testing.T, env *apptest.Env, p auth.Principal) api {
	token, err := env.App.Tokens.MintPrincipal(p, 365*24*time.Hour) // outlives a fake clock's days
	require.NoError(t, err)
	opts := signedIn(token)
	return api{
		hooks:   partnerv1connect.NewWebhookServiceClient(env.HTTP, env.URL, opts),
		catalog: catalogv1connect.NewCatalogServiceClient(env.HTTP, env.URL, opts),
		holds:   bookingv1connect.NewHoldServiceClient(env.HTTP, env.URL, opts),
		orders:  bookingv1connect.NewOrderServiceClient(env.HTTP, env.URL, opts),
	}
}

var (
	admin    = auth.Principal{UserID: "ops", Role: auth.RoleAdmin}
	partner1 = auth.Principal{UserID: "agency-1", Role: auth.RolePartner, PartnerID: 1}
	partner2 = auth.Principal{UserID: "agency-2", Role: auth.RolePartner, PartnerID: 2}
	buyer    = auth.Principal{UserID: "rumana", Role: auth.RoleUser}
)

// start runs the platform with its projectors and a delivery worker tuned
// for tests: short timeouts and retries.
func start(t *testing.T, w webhook.WorkerConfig) *apptest.Env {
	w.AllowLoopback = true
	if w.Timeout == 0 {
		w.Timeout = 2 * time.Second
	}
	if w.RetryBase == 0 {
		w.RetryBase, w.RetryMax = 20*time.Millisecond, 200*time.Millisecond
	}
	w.Poll = 20 * time.Millisecond
	return apptest.New(t, apptest.Options{Shards: 2, Projectors: true, Webhooks: &w, ProjectorMaxBackoff: 200 * time.Millisecond})
}

func createEndpoint(t *testing.T, c api, url string, partnerID int64, types ...string) *partnerv1.CreateEndpointResponse {
	t.Helper()
	resp, err := c.hooks.CreateEndpoint(context.Background(), connect.NewRequest(&partnerv1.CreateEndpointRequest{
		PartnerId: partnerID, Url: url, EventTypes: types}))
	require.NoError(t, err)
	return resp.Msg
}

// freeShow is a free concert of n seats: its orders confirm at once
// (decision 0070), so each booking is a BookingConfirmed in two calls.
func freeShow(t *testing.T, env *apptest.Env, seats int) int64 {
	resp, err := as(t, env, admin).catalog.CreateShow(context.Background(), connect.NewRequest(&catalogv1.CreateShowRequest{
		Kind: catalogv1.ShowKind_SHOW_KIND_CONCERT, Title: "Free in the park", Venue: "Ramna",
		StartsAt: timestamppb.New(time.Now().Add(30 * 24 * time.Hour)), Currency: "BDT",
		Sections:        []*catalogv1.Section{{Name: "Lawn", Rows: []string{"A"}, SeatsPerRow: int32(seats), PriceMinor: 0}},
		HoldTtl:         durationpb.New(10 * time.Minute),
		MaxSeatsPerHold: 4, MaxSeatsPerAccount: int32(seats),
	}))
	require.NoError(t, err)
	return resp.Msg.GetShow().GetShowId()
}

// book books seat A<n> of show as buyer; it returns the order id.
func book(t *testing.T, env *apptest.Env, show int64, seat int) string {
	t.Helper()
	c := as(t, env, buyer)
	hold, err := c.holds.CreateHold(context.Background(), connect.NewRequest(&bookingv1.CreateHoldRequest{
		ShowId: show, Seats: []string{"A" + strconv.Itoa(seat)}}))
	require.NoError(t, err)
	order, err := c.orders.CreateOrder(context.Background(), connect.NewRequest(&bookingv1.CreateOrderRequest{
		HoldId: hold.Msg.GetHold().GetHoldId()}))
	require.NoError(t, err)
	require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_CONFIRMED, order.Msg.GetOrder().GetStatus())
	return order.Msg.GetOrder().GetOrderId()
}

func verify(t *testing.T, secret string, g received) error {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	require.NoError(t, err)
	return wh.Verify(g.body, g.header)
}

// orderOf is the order id in a received event's data.
func orderOf(g received) string {
	var d struct {
		OrderID string `json:"order_id"`
	}
	_ = json.Unmarshal(g.event.Data, &d)
	return d.OrderID
}

// tries are the receiver's POSTs of an event type for order.
func tries(rc *receiver, typ, order string) []received {
	var out []received
	for _, g := range rc.all() {
		if g.event.Type == typ && orderOf(g) == order {
			out = append(out, g)
		}
	}
	return out
}

// TestDeliveriesVerifyAndSurviveAFailingReceiver: the receiver answers 500,
// then hangs past the timeout, then recovers. The booking's webhook arrives
// in the end, signed so that the Standard Webhooks library verifies it, and
// every attempt carries the same webhook-id; the delivery log shows the
// three attempts.
func TestDeliveriesVerifyAndSurviveAFailingReceiver(t *testing.T) {
	env := start(t, webhook.WorkerConfig{Timeout: 500 * time.Millisecond})
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	rc := newReceiver(t, func(n int, r *http.Request) int {
		switch n {
		case 1:
			return http.StatusInternalServerError
		case 2:
			select { // past the worker's timeout
			case <-release:
			case <-r.Context().Done():
			}
		}
		return http.StatusOK
	})
	ops := as(t, env, admin)
	ep := createEndpoint(t, ops, rc.URL, 0, "booking.confirmed")
	require.Regexp(t, `^whsec_[A-Za-z0-9+/]{43}=$`, ep.GetSecret())
	id := ep.GetEndpoint().GetEndpointId()

	order := book(t, env, freeShow(t, env, 4), 1)
	var d *partnerv1.WebhookDelivery
	require.Eventually(t, func() bool {
		log, err := ops.hooks.ListDeliveries(context.Background(), connect.NewRequest(&partnerv1.ListDeliveriesRequest{EndpointId: id}))
		require.NoError(t, err)
		if len(log.Msg.GetDeliveries()) == 0 {
			return false
		}
		d = log.Msg.GetDeliveries()[0]
		return d.GetStatus() == partnerv1.DeliveryStatus_DELIVERY_STATUS_SUCCEEDED
	}, 30*time.Second, 20*time.Millisecond)
	got := tries(rc, "booking.confirmed", order)
	require.Len(t, got, 3, "a 500, a timeout, then a success")
	for _, g := range got {
		require.Equal(t, d.GetWebhookId(), g.id, "every attempt carries the delivery's webhook-id")
		require.NoError(t, verify(t, ep.GetSecret(), g))
		require.Equal(t, d.GetEventId(), g.event.EventID)
	}
	require.Regexp(t, `^msg_[0-9a-f]{32}$`, d.GetWebhookId())
	require.Equal(t, int32(3), d.GetAttempts())
	var codes []int32
	for _, a := range d.GetRecentAttempts() { // newest first
		codes = append(codes, a.GetStatusCode())
	}
	require.Equal(t, []int32{200, 0, 500}, codes, "the success, the timeout (no answer), the 500")
	require.Equal(t, "timed out", d.GetRecentAttempts()[1].GetError())

	// The admin listener counts them. The worker counts an attempt
	// after its transaction commits, so the delivery above may be read
	// before the count of its last attempt: wait for that one.
	var metrics []byte
	require.Eventually(t, func() bool {
		resp, err := http.Get(env.AdminURL + "/metrics")
		require.NoError(t, err)
		defer resp.Body.Close()
		metrics, err = io.ReadAll(resp.Body)
		require.NoError(t, err)
		return strings.Contains(string(metrics), `seatghor_webhook_deliveries_total{outcome="succeeded"} 1`)
	}, 5*time.Second, 20*time.Millisecond, "the success is counted")
	require.Contains(t, string(metrics), `seatghor_webhook_deliveries_total{outcome="retry"} 2`)
	require.Contains(t, string(metrics), `seatghor_webhook_deliveries_total{outcome="succeeded"} 1`)
	require.Contains(t, string(metrics), `seatghor_webhook_queue_depth{endpoint_status="active"} 0`)
	require.Contains(t, string(metrics), `seatghor_webhook_queue_oldest_due_seconds 0`)
}

// setPartner records that an order came through a partner (standing in for
// the channel recording of issue 12 §1, which fills orders.partner_id).
func setPartner(t *testing.T, env *apptest.Env, show int64, order string, partner int64) {
	t.Helper()
	pool, err := env.App.Router.ForShow(context.Background(), show)
	require.NoError(t, err)
	_, err = pool.Exec(context.Background(), `UPDATE orders SET partner_id = $2 WHERE order_id = $1`, order, partner)
	require.NoError(t, err)
}

func cancel(t *testing.T, env *apptest.Env, order string) {
	t.Helper()
	_, err := as(t, env, buyer).orders.CancelOrder(context.Background(), connect.NewRequest(&bookingv1.CancelOrderRequest{OrderId: order}))
	require.NoError(t, err)
}

func deliveries(t *testing.T, c api, endpoint int64) []*partnerv1.WebhookDelivery {
	t.Helper()
	log, err := c.hooks.ListDeliveries(context.Background(), connect.NewRequest(&partnerv1.ListDeliveriesRequest{EndpointId: endpoint}))
	require.NoError(t, err)
	return log.Msg.GetDeliveries()
}

// TestEventsReachTheirPartner: an order's events go to the partner it came
// through and to admins' endpoints, never to another partner (decision
// 0190; a sale's new opening: TestSaleOpeningMovedReachesItsSellersOnly).
func TestEventsReachTheirPartner(t *testing.T) {
	env := start(t, webhook.WorkerConfig{})
	ops, p1, p2 := as(t, env, admin), as(t, env, partner1), as(t, env, partner2)
	all, r1, r2 := newReceiver(t, nil), newReceiver(t, nil), newReceiver(t, nil)
	epAll := createEndpoint(t, ops, all.URL, 0, "booking.confirmed", "order.cancelled").GetEndpoint()
	// The bookings are made before the test records their channel (the
	// projector may read the order either side of that), so the partners
	// follow the cancellations, made after.
	ep1 := createEndpoint(t, p1, r1.URL, 0, "order.cancelled").GetEndpoint()
	ep2 := createEndpoint(t, p2, r2.URL, 2, "order.cancelled").GetEndpoint()

	show := freeShow(t, env, 4)
	viaPartner, viaWeb := book(t, env, show, 1), book(t, env, show, 2)
	setPartner(t, env, show, viaPartner, 1)
	cancel(t, env, viaPartner)
	cancel(t, env, viaWeb)

	require.Eventually(t, func() bool { return len(all.ids()) == 4 }, 30*time.Second, 20*time.Millisecond,
		"the admin's endpoint gets every event: 2 bookings, 2 cancellations")
	// One statement enqueues an event for every endpoint, so the partners'
	// logs are complete now.
	require.Len(t, deliveries(t, p1, ep1.GetEndpointId()), 1)
	require.Empty(t, deliveries(t, p2, ep2.GetEndpointId()))
	require.Eventually(t, func() bool { return len(r1.ids()) == 1 }, 10*time.Second, 20*time.Millisecond)
	require.Len(t, tries(r1, "order.cancelled", viaPartner), 1, "partner 1 sold it")
	for _, g := range append(r2.all(), r1.all()...) {
		require.NotEqual(t, viaWeb, orderOf(g), "the web's order is no partner's business")
	}
	require.Len(t, deliveries(t, ops, epAll.GetEndpointId()), 4)
	// The same event has another webhook-id at another endpoint.
	require.NotEqual(t, tries(r1, "order.cancelled", viaPartner)[0].id, tries(all, "order.cancelled", viaPartner)[0].id)
}

// TestSaleOpeningMovedReachesItsSellersOnly: a show's new opening goes to
// the partners allowed to sell it (decision 0285: the rule holds keep to,
// partner_may_sell) and to admins' endpoints, never to another partner;
// and no endpoint is told which staff member moved it.
func TestSaleOpeningMovedReachesItsSellersOnly(t *testing.T) {
	env := start(t, webhook.WorkerConfig{})
	ctx := context.Background()
	partners := env.App.Partners
	for i, p := range []partner.Partner{{Name: "Allowed the show"}, {Name: "Allowed another show"}, {Name: "Sells every show", SellsEveryShow: true}} {
		got, err := partners.CreatePartner(ctx, "ops", p)
		require.NoError(t, err)
		require.Equal(t, int64(i+1), got.ID, "a fresh catalog numbers partners from 1")
	}
	show, other := freeShow(t, env, 4), freeShow(t, env, 4)
	for id, allowed := range map[int64]int64{1: show, 2: other} {
		_, err := partners.UpdateAccess(ctx, partner.Caller{UserID: "ops", Admin: true},
			partner.AccessChange{PartnerID: id, AllowShows: []int64{allowed}})
		require.NoError(t, err)
	}
	partner3 := auth.Principal{UserID: "agency-3", Role: auth.RolePartner, PartnerID: 3}
	all, r1, r2, r3 := newReceiver(t, nil), newReceiver(t, nil), newReceiver(t, nil), newReceiver(t, nil)
	createEndpoint(t, as(t, env, admin), all.URL, 0, "sale.opening_moved")
	createEndpoint(t, as(t, env, partner1), r1.URL, 0, "sale.opening_moved")
	createEndpoint(t, as(t, env, partner2), r2.URL, 0, "sale.opening_moved")
	createEndpoint(t, as(t, env, partner3), r3.URL, 0, "sale.opening_moved")

	// The catalog writes this when a staff member moves a sale's opening.
	for _, s := range []int64{show, other} {
		moved := &eventsv1.SaleOpeningMoved{ShowId: s, SaleId: s, OpensAt: timestamppb.Now(), MovedBy: "staff-7",
			OccurredAt: timestamppb.Now()}
		require.NoError(t, pg.InTx(ctx, env.App.Router.Catalog(), func(tx pgx.Tx) error {
			return outbox.Append(ctx, tx, s, time.Now(), moved)
		}))
	}
	require.Eventually(t, func() bool { return len(all.ids()) == 2 && len(r3.ids()) == 2 }, 30*time.Second, 20*time.Millisecond,
		"admins and a partner selling every show get both")
	require.Eventually(t, func() bool { return len(r1.ids()) == 1 && len(r2.ids()) == 1 }, 10*time.Second, 20*time.Millisecond)
	shown := func(rc *receiver) []int64 {
		var out []int64
		for _, g := range rc.all() {
			var d struct {
				ShowID int64 `json:"show_id,string"`
			}
			require.NoError(t, json.Unmarshal(g.event.Data, &d))
			out = append(out, d.ShowID)
		}
		return out
	}
	require.Equal(t, []int64{show}, shown(r1), "partner 1 may sell only the show")
	require.Equal(t, []int64{other}, shown(r2), "partner 2 may sell only the other")
	for _, rc := range []*receiver{all, r1, r2, r3} {
		for _, g := range rc.all() {
			require.NotContains(t, string(g.body), "staff-7", "no staff user id in a webhook")
			require.NotContains(t, string(g.body), "moved_by")
		}
	}
}

// TestEndpointAccess: partners manage only their own endpoints; buyers
// none; bad requests name their field.
func TestEndpointAccess(t *testing.T) {
	env := start(t, webhook.WorkerConfig{})
	ctx := context.Background()
	p1, p2 := as(t, env, partner1), as(t, env, partner2)
	ep := createEndpoint(t, p1, "https://agency-1.example/hooks", 0, "booking.confirmed").GetEndpoint()

	reason := func(err error) string {
		var ce *connect.Error
		require.ErrorAs(t, err, &ce)
		for _, d := range ce.Details() {
			if v, err := d.Value(); err == nil {
				if info, ok := v.(*errdetails.ErrorInfo); ok {
					return ce.Code().String() + " " + info.GetReason()
				}
			}
		}
		return ce.Code().String()
	}
	_, err := p2.hooks.RotateEndpointSecret(ctx, connect.NewRequest(&partnerv1.RotateEndpointSecretRequest{EndpointId: ep.GetEndpointId()}))
	require.Equal(t, "not_found WEBHOOK_ENDPOINT_NOT_FOUND", reason(err))
	_, err = p2.hooks.ListDeliveries(ctx, connect.NewRequest(&partnerv1.ListDeliveriesRequest{EndpointId: ep.GetEndpointId()}))
	require.Equal(t, "not_found WEBHOOK_ENDPOINT_NOT_FOUND", reason(err))
	list, err := p2.hooks.ListEndpoints(ctx, connect.NewRequest(&partnerv1.ListEndpointsRequest{}))
	require.NoError(t, err)
	require.Empty(t, list.Msg.GetEndpoints())
	_, err = p2.hooks.CreateEndpoint(ctx, connect.NewRequest(&partnerv1.CreateEndpointRequest{
		PartnerId: 1, Url: "https://x.example", EventTypes: []string{"booking.confirmed"}}))
	require.Equal(t, "permission_denied WEBHOOK_FORBIDDEN", reason(err))
	_, err = as(t, env, buyer).hooks.ListEndpoints(ctx, connect.NewRequest(&partnerv1.ListEndpointsRequest{}))
	require.Equal(t, "permission_denied PERMISSION_DENIED", reason(err))

	for _, tc := range []struct {
		name, url, typ, want string
	}{
		{"plain http elsewhere", "http://agency.example/hooks", "booking.confirmed", "url"},
		{"not a URL", "agency.example", "booking.confirmed", "url"},
		{"credentials", "https://u:p@agency.example/", "booking.confirmed", "url"},
		{"unknown type", "https://agency.example/", "seats.held", "event_types"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := p1.hooks.CreateEndpoint(ctx, connect.NewRequest(&partnerv1.CreateEndpointRequest{
				Url: tc.url, EventTypes: []string{tc.typ}}))
			require.Equal(t, "invalid_argument WEBHOOK_INVALID", reason(err))
			var ce *connect.Error
			require.ErrorAs(t, err, &ce)
			require.Contains(t, ce.Message(), tc.want)
		})
	}
	mine, err := as(t, env, admin).hooks.ListEndpoints(ctx, connect.NewRequest(&partnerv1.ListEndpointsRequest{PartnerId: 1}))
	require.NoError(t, err)
	require.Len(t, mine.Msg.GetEndpoints(), 1, "admins see every partner's")

	// A retried create (same Idempotency-Key) answers the same endpoint
	// and secret; it does not make a second one.
	create := func() *partnerv1.CreateEndpointResponse {
		req := connect.NewRequest(&partnerv1.CreateEndpointRequest{Url: "https://agency-1.example/other", EventTypes: []string{"refund.issued"}})
		req.Header().Set("Idempotency-Key", "create-other")
		resp, err := p1.hooks.CreateEndpoint(ctx, req)
		require.NoError(t, err)
		return resp.Msg
	}
	a, b := create(), create()
	require.Equal(t, a.GetSecret(), b.GetSecret())
	require.Equal(t, a.GetEndpoint().GetEndpointId(), b.GetEndpoint().GetEndpointId())
	list, err = p1.hooks.ListEndpoints(ctx, connect.NewRequest(&partnerv1.ListEndpointsRequest{}))
	require.NoError(t, err)
	require.Len(t, list.Msg.GetEndpoints(), 2)
}

// TestRotationSignsWithBothSecrets: after a rotation with an overlap every
// delivery verifies with the old secret and with the new one; after a
// rotation without overlap only with the newest.
func TestRotationSignsWithBothSecrets(t *testing.T) {
	env := start(t, webhook.WorkerConfig{})
	rc := newReceiver(t, nil)
	ops := as(t, env, admin)
	ep := createEndpoint(t, ops, rc.URL, 0, "booking.confirmed")
	id := ep.GetEndpoint().GetEndpointId()
	rotated, err := ops.hooks.RotateEndpointSecret(context.Background(), connect.NewRequest(&partnerv1.RotateEndpointSecretRequest{EndpointId: id}))
	require.NoError(t, err)
	require.NotEqual(t, ep.GetSecret(), rotated.Msg.GetSecret())
	require.WithinDuration(t, time.Now().Add(webhook.DefaultOverlap), rotated.Msg.GetEndpoint().GetPreviousSecretExpiresAt().AsTime(), time.Minute)

	show := freeShow(t, env, 4)
	first := book(t, env, show, 1)
	require.Eventually(t, func() bool { return len(tries(rc, "booking.confirmed", first)) == 1 }, 30*time.Second, 20*time.Millisecond)
	g := tries(rc, "booking.confirmed", first)[0]
	require.NoError(t, verify(t, ep.GetSecret(), g), "the old secret during the overlap")
	require.NoError(t, verify(t, rotated.Msg.GetSecret(), g), "the new secret")
	require.Len(t, strings.Fields(g.header.Get("webhook-signature")), 2)

	again, err := ops.hooks.RotateEndpointSecret(context.Background(), connect.NewRequest(&partnerv1.RotateEndpointSecretRequest{
		EndpointId: id, Overlap: durationpb.New(0)}))
	require.NoError(t, err)
	second := book(t, env, show, 2)
	require.Eventually(t, func() bool { return len(tries(rc, "booking.confirmed", second)) == 1 }, 30*time.Second, 20*time.Millisecond)
	g = tries(rc, "booking.confirmed", second)[0]
	require.NoError(t, verify(t, again.Msg.GetSecret(), g))
	require.ErrorIs(t, verify(t, rotated.Msg.GetSecret(), g), standardwebhooks.ErrNoMatchingSignature, "no overlap: the last secret no longer signs")
	require.ErrorIs(t, verify(t, ep.GetSecret(), g), standardwebhooks.ErrNoMatchingSignature)
}

// TestDeadEndpointDoesNotDelayAHealthyOne: an endpoint that never answers,
// with a backlog of 2,500 due deliveries, holds at most PerEndpoint sends
// at a time; every delivery to a healthy endpoint completes while those
// sends are still stuck. Both are admins' endpoints, which share one
// partner's share (decision 0280): it has room for both.
func TestDeadEndpointDoesNotDelayAHealthyOne(t *testing.T) {
	const perEndpoint = 2
	env := start(t, webhook.WorkerConfig{Timeout: time.Minute, Concurrency: 4, PerEndpoint: perEndpoint, PerPartner: 2 * perEndpoint})
	stuck := make(chan struct{})
	var mu sync.Mutex
	inFlight, most := 0, 0
	dead := newReceiver(t, func(_ int, r *http.Request) int {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		defer func() {
			mu.Lock()
			inFlight--
			mu.Unlock()
		}()
		select {
		case <-stuck:
		case <-r.Context().Done():
		}
		return http.StatusServiceUnavailable
	})
	healthy := newReceiver(t, nil)
	ops := as(t, env, admin)
	createEndpoint(t, ops, dead.URL, 0, "booking.confirmed", "refund.issued")
	createEndpoint(t, ops, healthy.URL, 0, "booking.confirmed")
	// A backlog at the dead endpoint, due before anything of the healthy
	// one: more than a claim would look at if it took the oldest due rows
	// of all endpoints together.
	var backlog []webhook.Message
	for i := range 2500 {
		backlog = append(backlog, webhook.Message{EventID: "evt_backlog_" + strconv.Itoa(i), Type: "refund.issued",
			OccurredAt: time.Now(), Body: []byte(`{}`)})
	}
	n, err := env.App.Webhooks.Enqueue(context.Background(), backlog)
	require.NoError(t, err)
	require.Equal(t, 2500, n)

	show := freeShow(t, env, 10)
	for seat := 1; seat <= 10; seat++ {
		book(t, env, show, seat)
	}
	require.Eventually(t, func() bool { return len(healthy.ids()) == 10 }, 30*time.Second, 20*time.Millisecond)
	mu.Lock()
	require.Equal(t, perEndpoint, inFlight, "the dead endpoint's sends are still hanging")
	require.LessOrEqual(t, most, perEndpoint)
	mu.Unlock()
	require.Len(t, dead.all(), perEndpoint, "nothing more was sent to it meanwhile")
	close(stuck)
}

// TestEndpointDisabledAfterSustainedFailureAndEnabledAgain: an endpoint
// whose every attempt fails is disabled (the partner sees it, and why, in
// ListEndpoints); its events wait, and after EnableEndpoint they arrive.
func TestEndpointDisabledAfterSustainedFailureAndEnabledAgain(t *testing.T) {
	env := start(t, webhook.WorkerConfig{DisableFailures: 3, DisableAfter: time.Millisecond})
	var mu sync.Mutex
	up := false
	rc := newReceiver(t, func(int, *http.Request) int {
		mu.Lock()
		defer mu.Unlock()
		if up {
			return http.StatusOK
		}
		return http.StatusBadGateway
	})
	p := as(t, env, partner1)
	ep := createEndpoint(t, p, rc.URL, 0, "order.cancelled").GetEndpoint()
	show := freeShow(t, env, 4)
	order := book(t, env, show, 1)
	setPartner(t, env, show, order, 1)
	cancel(t, env, order)

	var got *partnerv1.WebhookEndpoint
	require.Eventually(t, func() bool {
		list, err := p.hooks.ListEndpoints(context.Background(), connect.NewRequest(&partnerv1.ListEndpointsRequest{}))
		require.NoError(t, err)
		got = list.Msg.GetEndpoints()[0]
		return got.GetStatus() == partnerv1.EndpointStatus_ENDPOINT_STATUS_DISABLED
	}, 30*time.Second, 20*time.Millisecond)
	require.Contains(t, got.GetDisabledReason(), "HTTP 502")
	require.NotNil(t, got.GetDisabledAt())
	require.GreaterOrEqual(t, got.GetConsecutiveFailures(), int32(3))
	n := len(rc.all())
	d := deliveries(t, p, ep.GetEndpointId())
	require.Len(t, d, 1)
	require.Equal(t, partnerv1.DeliveryStatus_DELIVERY_STATUS_PENDING, d[0].GetStatus(), "kept for when it is back")

	// A second cancellation while disabled is recorded, not sent.
	other := book(t, env, show, 2)
	setPartner(t, env, show, other, 1)
	cancel(t, env, other)
	require.Eventually(t, func() bool { return len(deliveries(t, p, ep.GetEndpointId())) == 2 }, 30*time.Second, 20*time.Millisecond)
	require.Len(t, rc.all(), n, "a disabled endpoint is sent nothing")

	mu.Lock()
	up = true
	mu.Unlock()
	enabled, err := p.hooks.EnableEndpoint(context.Background(), connect.NewRequest(&partnerv1.EnableEndpointRequest{EndpointId: ep.GetEndpointId()}))
	require.NoError(t, err)
	require.Equal(t, partnerv1.EndpointStatus_ENDPOINT_STATUS_ACTIVE, enabled.Msg.GetEndpoint().GetStatus())
	require.Zero(t, enabled.Msg.GetEndpoint().GetConsecutiveFailures())
	require.Eventually(t, func() bool {
		for _, d := range deliveries(t, p, ep.GetEndpointId()) {
			if d.GetStatus() != partnerv1.DeliveryStatus_DELIVERY_STATUS_SUCCEEDED {
				return false
			}
		}
		return true
	}, 30*time.Second, 20*time.Millisecond)
	require.Len(t, tries(rc, "order.cancelled", other), 1)
}

// TestReplayOneEventOrARange: a replay sends delivered events again, with
// the webhook-id they had.
func TestReplayOneEventOrARange(t *testing.T) {
	env := start(t, webhook.WorkerConfig{})
	rc := newReceiver(t, nil)
	ops := as(t, env, admin)
	id := createEndpoint(t, ops, rc.URL, 0, "booking.confirmed").GetEndpoint().GetEndpointId()
	since := time.Now().Add(-time.Second)
	show := freeShow(t, env, 4)
	a, b := book(t, env, show, 1), book(t, env, show, 2)
	require.Eventually(t, func() bool { return len(rc.ids()) == 2 }, 30*time.Second, 20*time.Millisecond)
	first := tries(rc, "booking.confirmed", a)[0]

	n, err := ops.hooks.ReplayDeliveries(context.Background(), connect.NewRequest(&partnerv1.ReplayDeliveriesRequest{
		EndpointId: id, Which: &partnerv1.ReplayDeliveriesRequest_EventId{EventId: first.event.EventID}}))
	require.NoError(t, err)
	require.Equal(t, int32(1), n.Msg.GetReplayed())
	require.Eventually(t, func() bool { return len(tries(rc, "booking.confirmed", a)) == 2 }, 30*time.Second, 20*time.Millisecond)
	again := tries(rc, "booking.confirmed", a)[1]
	require.Equal(t, first.id, again.id, "a replay is the same message to the receiver")
	require.Equal(t, first.body, again.body)

	n, err = ops.hooks.ReplayDeliveries(context.Background(), connect.NewRequest(&partnerv1.ReplayDeliveriesRequest{
		EndpointId: id, Which: &partnerv1.ReplayDeliveriesRequest_Range{Range: &partnerv1.DeliveryTimeRange{
			Since: timestamppb.New(since), Until: timestamppb.New(time.Now().Add(time.Second))}}}))
	require.NoError(t, err)
	require.Equal(t, int32(2), n.Msg.GetReplayed())
	// At least: delivery is at least once, and on a crowded machine an
	// attempt that outlives its timeout is tried again.
	require.Eventually(t, func() bool {
		return len(tries(rc, "booking.confirmed", a)) >= 3 && len(tries(rc, "booking.confirmed", b)) >= 2
	}, 30*time.Second, 20*time.Millisecond)

	_, err = ops.hooks.ReplayDeliveries(context.Background(), connect.NewRequest(&partnerv1.ReplayDeliveriesRequest{EndpointId: id}))
	require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err), "one event or a range")

	// The log pages, newest first.
	page1, err := ops.hooks.ListDeliveries(context.Background(), connect.NewRequest(&partnerv1.ListDeliveriesRequest{EndpointId: id, PageSize: 1}))
	require.NoError(t, err)
	require.Len(t, page1.Msg.GetDeliveries(), 1)
	require.NotEmpty(t, page1.Msg.GetNextPageToken())
	page2, err := ops.hooks.ListDeliveries(context.Background(), connect.NewRequest(&partnerv1.ListDeliveriesRequest{
		EndpointId: id, PageSize: 1, PageToken: page1.Msg.GetNextPageToken()}))
	require.NoError(t, err)
	require.Len(t, page2.Msg.GetDeliveries(), 1)
	require.Empty(t, page2.Msg.GetNextPageToken())
	require.Greater(t, page1.Msg.GetDeliveries()[0].GetDeliveryId(), page2.Msg.GetDeliveries()[0].GetDeliveryId())
	require.Equal(t, first.id, page2.Msg.GetDeliveries()[0].GetWebhookId())
	require.GreaterOrEqual(t, page2.Msg.GetDeliveries()[0].GetAttempts(), int32(3), "sent, replayed alone, replayed with the range")
}

// TestRetriesForThreeDaysThenDisablesAndGivesUp runs on a fake clock with
// the default rules: an endpoint that always fails is retried with growing
// waits, disabled once every attempt for 24 hours failed (and at least 10
// in a row), and a delivery not delivered within 3 days is given up.
func TestRetriesForThreeDaysThenDisablesAndGivesUp(t *testing.T) {
	clk := clock.NewFake(time.Now())
	w := webhook.WorkerConfig{AllowLoopback: true, Poll: 10 * time.Millisecond}
	env := apptest.New(t, apptest.Options{Shards: 1, Projectors: true, Webhooks: &w, Clock: clk})
	rc := newReceiver(t, func(int, *http.Request) int { return http.StatusInternalServerError })
	ops := as(t, env, admin)
	id := createEndpoint(t, ops, rc.URL, 0, "booking.confirmed").GetEndpoint().GetEndpointId()
	book(t, env, freeShow(t, env, 4), 1)

	attempts := func() int32 {
		d := deliveries(t, ops, id)
		if len(d) == 0 {
			return 0
		}
		return d[0].GetAttempts()
	}
	endpoint := func() *partnerv1.WebhookEndpoint {
		list, err := ops.hooks.ListEndpoints(context.Background(), connect.NewRequest(&partnerv1.ListEndpointsRequest{}))
		require.NoError(t, err)
		return list.Msg.GetEndpoints()[0]
	}
	// answered is whether attempt n is counted and its answer logged (the
	// claim counts the attempt before the POST; the log row and the next
	// schedule follow the answer, so the clock moves only after both).
	answered := func(n int32) bool {
		list := deliveries(t, ops, id)
		return len(list) > 0 && list[0].GetAttempts() == n && len(list[0].GetRecentAttempts()) > 0 &&
			list[0].GetRecentAttempts()[0].GetAttempt() == n
	}
	// The first attempt: wait for both.
	var d *partnerv1.WebhookDelivery
	require.Eventually(t, func() bool {
		list := deliveries(t, ops, id)
		if len(list) == 0 || list[0].GetAttempts() != 1 || len(list[0].GetRecentAttempts()) == 0 {
			return false
		}
		d = list[0]
		return true
	}, 30*time.Second, 10*time.Millisecond)
	// The next attempt waits: 5 s doubling, the upper half random.
	wait := d.GetNextAttemptAt().AsTime().Sub(d.GetRecentAttempts()[0].GetAttemptedAt().AsTime())
	require.True(t, wait >= 2500*time.Millisecond && wait <= 5*time.Second, "first retry after %s", wait)
	for n := int32(2); n <= 9; n++ { // nine attempts within the first 24 hours
		clk.Advance(160 * time.Minute)
		require.Eventually(t, func() bool { return answered(n) }, 30*time.Second, 10*time.Millisecond)
	}
	require.Equal(t, partnerv1.EndpointStatus_ENDPOINT_STATUS_ACTIVE, endpoint().GetStatus(), "failing for under 24 hours")
	clk.Advance(4 * time.Hour) // the tenth, after 24 hours of failures
	require.Eventually(t, func() bool {
		return endpoint().GetStatus() == partnerv1.EndpointStatus_ENDPOINT_STATUS_DISABLED
	}, 30*time.Second, 10*time.Millisecond)
	require.Equal(t, int32(10), attempts())

	// Enabled again it is retried for a fresh 3 days, then given up.
	_, err := ops.hooks.EnableEndpoint(context.Background(), connect.NewRequest(&partnerv1.EnableEndpointRequest{EndpointId: id}))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return answered(11) }, 30*time.Second, 10*time.Millisecond)
	clk.Advance(webhook.Retry)
	require.Eventually(t, func() bool {
		d := deliveries(t, ops, id)[0]
		return d.GetStatus() == partnerv1.DeliveryStatus_DELIVERY_STATUS_FAILED
	}, 30*time.Second, 10*time.Millisecond)
	require.Equal(t, int32(12), attempts())
}

// TestConcurrentWorkersSendEachDeliveryOnce: four workers (as four
// processes would) claim from one queue with FOR UPDATE SKIP LOCKED; when
// every endpoint answers, each delivery is sent exactly once.
func TestConcurrentWorkersSendEachDeliveryOnce(t *testing.T) {
	env := start(t, webhook.WorkerConfig{Concurrency: 2})
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { stop(); wg.Wait() })
	for range 3 {
		w, err := webhook.NewWorker(env.App.Router.Catalog(), clock.Real{}, env.App.Seal, webhook.WorkerConfig{
			Concurrency: 3, PerEndpoint: 4, Poll: 5 * time.Millisecond, AllowLoopback: true})
		require.NoError(t, err)
		wg.Go(func() { w.Run(ctx) })
	}
	ops := as(t, env, admin)
	var receivers []*receiver
	for range 3 {
		rc := newReceiver(t, nil)
		receivers = append(receivers, rc)
		createEndpoint(t, ops, rc.URL, 0, "booking.confirmed", "order.cancelled")
	}
	show := freeShow(t, env, 12)
	var orders []string
	for seat := 1; seat <= 12; seat++ {
		orders = append(orders, book(t, env, show, seat))
	}
	var cancels sync.WaitGroup
	for _, o := range orders[:6] {
		cancels.Go(func() { cancel(t, env, o) })
	}
	cancels.Wait()
	for _, rc := range receivers {
		require.Eventually(t, func() bool { return len(rc.ids()) == 18 }, 30*time.Second, 20*time.Millisecond)
	}
	require.Eventually(t, func() bool { // recorded after the answer
		var pending int
		require.NoError(t, env.App.Router.Catalog().QueryRow(context.Background(),
			`SELECT count(*) FROM webhook_deliveries WHERE status <> 'succeeded'`).Scan(&pending))
		return pending == 0
	}, 10*time.Second, 20*time.Millisecond)
	for _, rc := range receivers {
		for id, n := range rc.ids() {
			require.Equal(t, 1, n, "webhook-id %s sent %d times", id, n)
		}
	}

	// The log keeps finished deliveries for LogRetention.
	w, err := webhook.NewWorker(env.App.Router.Catalog(), clock.Real{}, env.App.Seal, webhook.WorkerConfig{})
	require.NoError(t, err)
	n, err := w.Prune(context.Background(), time.Now().Add(-time.Hour))
	require.NoError(t, err)
	require.Zero(t, n)
	n, err = w.Prune(context.Background(), time.Now().Add(time.Minute))
	require.NoError(t, err)
	require.Equal(t, int64(54), n)
	var attempts int
	require.NoError(t, env.App.Router.Catalog().QueryRow(context.Background(), `SELECT count(*) FROM webhook_attempts`).Scan(&attempts))
	require.Zero(t, attempts)
}

// TestOnePartnerCannotStarveAnother (issue 22 §2, decision 0280): partner
// 1 has five endpoints (its quota) that answer after 9 s and a burst of 48
// events; two workers (as two processes would) run 4 sending slots each.
// Partner 2's events, enqueued one by one while partner 1's sends stall,
// still arrive within a few seconds, and partner 1 never has more than its
// share in flight over both workers. Without the share, its five
// endpoints at two sends each take all 8 slots for 9 s at a time, and its
// backlog, older, comes first whenever they free up.
func TestOnePartnerCannotStarveAnother(t *testing.T) {
	const (
		slots = 4 // per worker
		share = 2 // the default PerPartner: max(Concurrency/4, PerEndpoint)
		bound = 3 * time.Second
	)
	cfg := webhook.WorkerConfig{Concurrency: slots, Timeout: 12 * time.Second}
	env := start(t, cfg)
	second, err := webhook.NewWorker(env.App.Router.Catalog(), clock.Real{}, env.App.Seal, webhook.WorkerConfig{
		Concurrency: slots, Timeout: 12 * time.Second, Poll: 20 * time.Millisecond, AllowLoopback: true})
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { second.Run(ctx); close(stopped) }()
	t.Cleanup(func() { stop(); <-stopped })

	release := make(chan struct{})
	var mu sync.Mutex
	inFlight, most, answered := 0, 0, 0
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		select {
		case <-time.After(9 * time.Second):
		case <-release:
		case <-r.Context().Done():
		}
		mu.Lock()
		inFlight--
		answered++
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(func() { close(release) }) // first: cut the stalled sends short
	var arrivedMu sync.Mutex
	arrived := map[string]time.Time{}
	fast := newReceiver(t, func(_ int, r *http.Request) int {
		arrivedMu.Lock()
		defer arrivedMu.Unlock()
		arrived[r.Header.Get("webhook-id")] = time.Now()
		return http.StatusNoContent
	})

	ops := as(t, env, admin)
	for i := range 5 {
		createEndpoint(t, ops, slow.URL+"/hooks/"+strconv.Itoa(i), 1, "allocation.returned")
	}
	b := createEndpoint(t, ops, fast.URL, 2, "allocation.returned").GetEndpoint().GetEndpointId()
	returned := func(partner int64, id string) webhook.Message {
		return webhook.Message{EventID: id, Type: "allocation.returned", OccurredAt: time.Now(), PartnerID: partner,
			Body: []byte(`{"type":"allocation.returned","event_id":"` + id + `"}`)}
	}
	var burst []webhook.Message
	for i := range 48 {
		burst = append(burst, returned(1, "evt_a_"+strconv.Itoa(i)))
	}
	n, err := env.App.Webhooks.Enqueue(context.Background(), burst)
	require.NoError(t, err)
	require.Equal(t, 48*5, n)
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return inFlight >= share
	}, 10*time.Second, 5*time.Millisecond, "partner 1's sends stall")

	// Partner 2's events, one every 100 ms while partner 1's sends hang.
	enqueued := map[string]time.Time{} // by webhook-id
	for i := range 12 {
		at := time.Now()
		n, err := env.App.Webhooks.Enqueue(context.Background(), []webhook.Message{returned(2, "evt_b_"+strconv.Itoa(i))})
		require.NoError(t, err)
		require.Equal(t, 1, n)
		time.Sleep(100 * time.Millisecond)
		enqueued["evt_b_"+strconv.Itoa(i)] = at
	}
	ids := map[string]string{} // webhook-id → event id
	for _, d := range deliveries(t, ops, b) {
		ids[d.GetWebhookId()] = d.GetEventId()
	}
	require.Len(t, ids, 12)
	require.Eventually(t, func() bool {
		arrivedMu.Lock()
		defer arrivedMu.Unlock()
		return len(arrived) == 12
	}, 15*time.Second, 10*time.Millisecond, "partner 2's deliveries arrive")

	arrivedMu.Lock()
	var delays []time.Duration
	for id, at := range arrived {
		delays = append(delays, at.Sub(enqueued[ids[id]]))
	}
	arrivedMu.Unlock()
	slices.Sort(delays)
	mu.Lock()
	stalled, done, peak := inFlight, answered, most
	mu.Unlock()
	t.Logf("partner 2's delivery delay while partner 1's 5 endpoints stall (%d sends hanging, %d answered, at most %d at once): max %s, median %s",
		stalled, done, peak, delays[len(delays)-1].Round(time.Millisecond), delays[len(delays)/2].Round(time.Millisecond))
	require.LessOrEqual(t, delays[len(delays)-1], bound, "every delivery of partner 2 arrives within %s of its enqueue", bound)
	require.LessOrEqual(t, peak, share, "partner 1's sends in flight over both workers")
}

// nameServer answers DNS queries over UDP on 127.0.0.1: the A records of
// names (fully qualified), no data for their other types, and "no such
// name" for every other name. It returns its address.
func nameServer(t *testing.T, names map[string]netip.Addr) string {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = pc.Close() })
	answer := func(query []byte) ([]byte, error) {
		var p dnsmessage.Parser
		h, err := p.Start(query)
		if err != nil {
			return nil, err
		}
		q, err := p.Question()
		if err != nil {
			return nil, err
		}
		a, known := names[q.Name.String()]
		rcode := dnsmessage.RCodeNameError
		if known {
			rcode = dnsmessage.RCodeSuccess
		}
		b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RCode: rcode})
		if err := b.StartQuestions(); err != nil {
			return nil, err
		}
		if err := b.Question(q); err != nil {
			return nil, err
		}
		if err := b.StartAnswers(); err != nil {
			return nil, err
		}
		if known && q.Type == dnsmessage.TypeA {
			if err := b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60},
				dnsmessage.AResource{A: a.As4()}); err != nil {
				return nil, err
			}
		}
		return b.Finish()
	}
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return // closed
			}
			if resp, err := answer(buf[:n]); err == nil {
				_, _ = pc.WriteTo(resp, from)
			}
		}
	}()
	return pc.LocalAddr().String()
}

// syncBuffer is a log the worker writes while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestAttemptLogShowsNoAddressNorResolverError (issue 22 §4, decisions
// 0281 and 0282): with loopback not allowed, the endpoints whose names
// resolve inside the network (a private address; localhost) are refused
// and the one whose name does not resolve fails. What their partner reads
// (the attempt log, the endpoint) says "destination refused" or
// "connection failed" and nothing more: never the address a name resolved
// to, nor the resolver's message or address. The server's log has them.
func TestAttemptLogShowsNoAddressNorResolverError(t *testing.T) {
	dns := nameServer(t, map[string]netip.Addr{"intranet.agency.test.": netip.MustParseAddr("10.1.2.3")})
	env := apptest.New(t, apptest.Options{Shards: 1})
	var logs syncBuffer
	w, err := webhook.NewWorker(env.App.Router.Catalog(), clock.Real{}, env.App.Seal, webhook.WorkerConfig{
		Poll: 20 * time.Millisecond, RetryBase: time.Hour, RetryMax: time.Hour, // one attempt each
		Resolver: &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "udp", dns)
		}},
		Log: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { w.Run(ctx); close(stopped) }()
	t.Cleanup(func() { stop(); <-stopped })

	ops := as(t, env, admin)
	want := map[string]string{ // URL → what the attempt log says
		"https://intranet.agency.test/hooks": "destination refused",
		"https://localhost:8443/hooks":       "destination refused",
		"https://gone.agency.test/hooks":     "connection failed",
	}
	ids := map[string]int64{}
	for url := range want {
		ids[url] = createEndpoint(t, ops, url, 0, "refund.issued").GetEndpoint().GetEndpointId()
	}
	_, err = env.App.Webhooks.Enqueue(context.Background(), []webhook.Message{{EventID: "evt_ssrf", Type: "refund.issued",
		OccurredAt: time.Now(), Body: []byte(`{"type":"refund.issued"}`)}})
	require.NoError(t, err)

	for url, words := range want {
		var d *partnerv1.WebhookDelivery
		require.Eventually(t, func() bool {
			list := deliveries(t, ops, ids[url])
			if len(list) != 1 || len(list[0].GetRecentAttempts()) == 0 {
				return false
			}
			d = list[0]
			return true
		}, 30*time.Second, 20*time.Millisecond, url)
		require.Equal(t, words, d.GetRecentAttempts()[0].GetError(), url)
		require.Zero(t, d.GetRecentAttempts()[0].GetStatusCode())
	}
	// Nothing a partner can read names an address or the resolver.
	list, err := ops.hooks.ListEndpoints(context.Background(), connect.NewRequest(&partnerv1.ListEndpointsRequest{}))
	require.NoError(t, err)
	seen, err := protojson.Marshal(list.Msg)
	require.NoError(t, err)
	for _, id := range ids {
		log, err := ops.hooks.ListDeliveries(context.Background(), connect.NewRequest(&partnerv1.ListDeliveriesRequest{EndpointId: id}))
		require.NoError(t, err)
		b, err := protojson.Marshal(log.Msg)
		require.NoError(t, err)
		seen = append(seen, b...)
	}
	for _, leak := range []string{"10.1.2.3", "127.0.0.1", "::1", "lookup", "no such host", "dial", dns} {
		require.NotContains(t, string(seen), leak)
	}
	// The operator's log keeps the details.
	require.Eventually(t, func() bool {
		l := logs.String()
		return strings.Contains(l, "10.1.2.3") && strings.Contains(l, "127.0.0.1") && strings.Contains(l, "no such host")
	}, 5*time.Second, 20*time.Millisecond, logs.String())
}
