// Command reseller is a partner's program selling Seatghor tickets through
// the Go SDK: it subscribes a webhook receiver to booking.confirmed, finds a
// show, holds seats (choosing again when someone was quicker), orders them,
// pays, waits for the order's confirmation to arrive by webhook, its
// Standard Webhooks signature verified, and deletes the endpoint it made.
//
//	go run ./examples/reseller -base-url http://127.0.0.1:8080 -api-key "$SEATGHOR_API_KEY" \
//		-webhooks-key "$SEATGHOR_WEBHOOKS_KEY" -seats 2
//
// It sells with a booking key and subscribes with a key of scope webhooks:
// a booking key may not change webhook endpoints (decision 0276).
//
// The receiver listens on -listen; Seatghor must reach it at -webhook-url
// (https, or http to 127.0.0.1 on a dev server). A real integration
// subscribes once and keeps the secret; this program subscribes and deletes
// on every run so it is self-contained.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"sync"
	"time"

	"connectrpc.com/connect"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/seatghor/seatghor/clients/go/seatghor"
	bookingv1 "github.com/seatghor/seatghor/clients/go/seatghor/gen/seatghor/booking/v1"
	catalogv1 "github.com/seatghor/seatghor/clients/go/seatghor/gen/seatghor/catalog/v1"
	partnerv1 "github.com/seatghor/seatghor/clients/go/seatghor/gen/seatghor/partner/v1"
	paymentv1 "github.com/seatghor/seatghor/clients/go/seatghor/gen/seatghor/payment/v1"
	seatmapv1 "github.com/seatghor/seatghor/clients/go/seatghor/gen/seatghor/seatmap/v1"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "reseller:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) (err error) {
	fs := flag.NewFlagSet("reseller", flag.ContinueOnError)
	baseURL := fs.String("base-url", envOr("SEATGHOR_URL", "http://127.0.0.1:8080"), "the Seatghor API")
	apiKey := fs.String("api-key", os.Getenv("SEATGHOR_API_KEY"), "the partner's booking API key (sk_live_… or sk_test_…)")
	hooksKey := fs.String("webhooks-key", os.Getenv("SEATGHOR_WEBHOOKS_KEY"), "the partner's API key of scope webhooks, to subscribe")
	showID := fs.Int64("show", 0, "the show to sell; 0 takes the first bus trip without stops listed")
	seats := fs.Int("seats", 2, "how many seats to sell")
	payToken := fs.String("sandbox-token", "tok_success", "the sandbox gateway's test token")
	listen := fs.String("listen", "127.0.0.1:0", "where the webhook receiver listens")
	webhookURL := fs.String("webhook-url", "", "the receiver's URL as Seatghor reaches it; empty: http://<listen address>/seatghor")
	wait := fs.Duration("wait", time.Minute, "how long to wait for the confirmation")
	if err := fs.Parse(args); err != nil {
		return err
	}
	r := reseller{c: seatghor.NewClient(*baseURL, seatghor.WithAPIKey(*apiKey)),
		hooks: seatghor.NewClient(*baseURL, seatghor.WithAPIKey(*hooksKey)), out: stdout}

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("webhook receiver: %w", err)
	}
	if *webhookURL == "" {
		*webhookURL = "http://" + ln.Addr().String() + "/seatghor"
	}
	recv, endpointID, err := r.subscribe(ctx, *webhookURL)
	if err != nil {
		ln.Close()
		return err
	}
	// Deleted however the sale went, even when ctx was cancelled.
	defer func() { err = errors.Join(err, r.unsubscribe(context.WithoutCancel(ctx), endpointID)) }()
	srv := &http.Server{Handler: recv, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	if *showID == 0 {
		id, err := r.firstBusTrip(ctx)
		if err != nil {
			return err
		}
		*showID = id
	}
	order, err := r.sell(ctx, *showID, *seats, *payToken)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *wait)
	defer cancel()
	return r.confirm(ctx, recv, order.GetOrderId())
}

type reseller struct {
	c *seatghor.Client
	// hooks manages the webhook endpoints (a webhooks-scoped key).
	hooks *seatghor.Client
	out   io.Writer
}

// firstBusTrip is the first bus trip listed that is sold whole: one with
// stops sells journeys and names its passengers, which this example does
// not (see the SDK's journey fields on CreateHold and CreateOrder).
func (r reseller) firstBusTrip(ctx context.Context) (int64, error) {
	for show, err := range r.c.Catalog.ListShowsAll(ctx, &catalogv1.ListShowsRequest{Kind: catalogv1.ShowKind_SHOW_KIND_BUS_TRIP}) {
		if err != nil {
			return 0, fmt.Errorf("list shows: %w", err)
		}
		if len(show.GetStops()) == 0 {
			return show.GetShowId(), nil
		}
	}
	return 0, errors.New("no bus trip without stops is listed")
}

// sell holds n seats of the show, orders and pays them. When some of the
// seats it asked for were taken meanwhile, it leaves those out and asks for
// others: the SeatsUnavailableError names them.
func (r reseller) sell(ctx context.Context, showID int64, n int, payToken string) (*bookingv1.Order, error) {
	layout, err := r.c.SeatMap.GetSeatLayout(ctx, connect.NewRequest(&seatmapv1.GetSeatLayoutRequest{ShowId: showID}))
	if err != nil {
		return nil, fmt.Errorf("seat layout of show %d: %w", showID, err)
	}
	var free []string
	for _, sec := range layout.Msg.GetSections() {
		for _, row := range sec.GetRows() {
			free = append(free, row.GetSeats()...)
		}
	}
	var hold *bookingv1.Hold
	for hold == nil {
		if len(free) < n {
			return nil, fmt.Errorf("show %d has fewer than %d seats left", showID, n)
		}
		res, err := r.c.Hold.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: showID, Seats: free[:n]}))
		var taken seatghor.SeatsUnavailableError
		switch {
		case errors.As(err, &taken):
			free = slices.DeleteFunc(free, func(s string) bool { return slices.Contains(taken.Seats, s) })
		case err != nil:
			return nil, fmt.Errorf("hold: %w", err)
		default:
			hold = res.Msg.GetHold()
		}
	}
	fmt.Fprintf(r.out, "held %v of show %d: %s\n", hold.GetSeats(), showID, hold.GetHoldId())

	order, err := r.c.Order.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: hold.GetHoldId()}))
	if err != nil {
		return nil, fmt.Errorf("order: %w", err)
	}
	o := order.Msg.GetOrder()
	pay, err := r.c.Payment.StartPayment(ctx, connect.NewRequest(&paymentv1.StartPaymentRequest{
		OrderId: o.GetOrderId(), Sandbox: &paymentv1.SandboxPayment{Token: payToken},
	}))
	if err != nil {
		return nil, fmt.Errorf("pay: %w", err)
	}
	fmt.Fprintf(r.out, "order %s: payment %s %s\n", o.GetOrderId(), pay.Msg.GetPayment().GetPaymentId(), pay.Msg.GetPayment().GetStatus())
	return o, nil
}

// subscribe registers url for booking.confirmed and returns the endpoint's
// id and the receiver that verifies deliveries with its secret (shown only
// in this answer).
func (r reseller) subscribe(ctx context.Context, url string) (*receiver, int64, error) {
	res, err := r.hooks.Webhook.CreateEndpoint(ctx, connect.NewRequest(&partnerv1.CreateEndpointRequest{
		Url: url, EventTypes: []string{"booking.confirmed"}, Description: "reseller example",
	}))
	if err != nil {
		return nil, 0, fmt.Errorf("subscribe %s: %w", url, err)
	}
	id := res.Msg.GetEndpoint().GetEndpointId()
	recv, err := newReceiver(res.Msg.GetSecret())
	if err != nil {
		return nil, 0, errors.Join(err, r.unsubscribe(ctx, id))
	}
	fmt.Fprintf(r.out, "subscribed endpoint %d at %s\n", id, url)
	return recv, id, nil
}

// unsubscribe deletes the endpoint.
func (r reseller) unsubscribe(ctx context.Context, endpointID int64) error {
	if _, err := r.hooks.Webhook.DeleteEndpoint(ctx, connect.NewRequest(&partnerv1.DeleteEndpointRequest{EndpointId: endpointID})); err != nil {
		return fmt.Errorf("delete endpoint %d: %w", endpointID, err)
	}
	fmt.Fprintf(r.out, "deleted endpoint %d\n", endpointID)
	return nil
}

// event is a delivery's body: the Standard Webhooks envelope around the
// event in proto field names.
type event struct {
	Type    string       `json:"type"`
	EventID string       `json:"event_id"`
	Data    confirmation `json:"data"`
}

// confirmation is the part of a BookingConfirmed event the reseller reads.
type confirmation struct {
	OrderID string   `json:"order_id"`
	Seats   []string `json:"seats"`
	Total   struct {
		Currency    string `json:"currency"`
		AmountMinor string `json:"amount_minor"`
	} `json:"total"`
}

// receiver is the webhook endpoint: it refuses what does not verify, and
// records each booking.confirmed once (deliveries are at least once: the
// webhook-id repeats).
type receiver struct {
	wh        *standardwebhooks.Webhook
	mu        sync.Mutex
	seen      map[string]bool
	confirmed map[string]confirmation // by order id
	changed   chan struct{}           // closed and replaced on each new confirmation
}

// newReceiver returns the receiver of an endpoint whose secret (whsec_…)
// is given.
func newReceiver(secret string) (*receiver, error) {
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return nil, fmt.Errorf("webhook secret: %w", err)
	}
	return &receiver{wh: wh, confirmed: map[string]confirmation{}, seen: map[string]bool{}, changed: make(chan struct{})}, nil
}

func (v *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if err != nil || v.wh.Verify(body, req.Header) != nil { // signature and timestamp
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var e event
	if err := json.Unmarshal(body, &e); err != nil {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if id := req.Header.Get("webhook-id"); !v.seen[id] {
		v.seen[id] = true
		if e.Type == "booking.confirmed" {
			v.confirmed[e.Data.OrderID] = e.Data
			close(v.changed)
			v.changed = make(chan struct{})
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// wait returns the order's confirmation once it has arrived.
func (v *receiver) wait(ctx context.Context, orderID string) (confirmation, error) {
	for {
		v.mu.Lock()
		c, ok := v.confirmed[orderID]
		changed := v.changed
		v.mu.Unlock()
		if ok {
			return c, nil
		}
		select {
		case <-ctx.Done():
			return confirmation{}, fmt.Errorf("no booking.confirmed for order %s: %w", orderID, ctx.Err())
		case <-changed:
		}
	}
}

// confirm waits for the order's booking.confirmed webhook.
func (r reseller) confirm(ctx context.Context, recv *receiver, orderID string) error {
	c, err := recv.wait(ctx, orderID)
	if err != nil {
		return err
	}
	fmt.Fprintf(r.out, "confirmed by webhook: order %s, seats %v, total %s %s\n",
		orderID, c.Seats, c.Total.AmountMinor, c.Total.Currency)
	return nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
