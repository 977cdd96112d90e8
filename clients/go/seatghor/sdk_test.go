package seatghor_test

// The SDK against the real binary: TestMain starts `seatghor dev` on a
// temporary directory and a free port (internal/devserver), as the
// TypeScript client's tests do. Its workers sweep every 200 ms so that an
// allocation returns to general sale soon after its return_at
// (TestPartnerResellsEndToEnd).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/seatghor/seatghor/clients/go/seatghor"
	bookingv1 "github.com/seatghor/seatghor/clients/go/seatghor/gen/seatghor/booking/v1"
	catalogv1 "github.com/seatghor/seatghor/clients/go/seatghor/gen/seatghor/catalog/v1"
	paymentv1 "github.com/seatghor/seatghor/clients/go/seatghor/gen/seatghor/payment/v1"
	searchv1 "github.com/seatghor/seatghor/clients/go/seatghor/gen/seatghor/search/v1"
	seatmapv1 "github.com/seatghor/seatghor/clients/go/seatghor/gen/seatghor/seatmap/v1"
	"github.com/seatghor/seatghor/clients/go/seatghor/internal/devserver"
)

var server *devserver.Server

func TestMain(m *testing.M) {
	ctx := context.Background()
	s, err := devserver.Start(ctx, "SEATGHOR_SWEEP_INTERVAL=200ms")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	server = s
	code := m.Run()
	s.Stop()
	os.Exit(code)
}

// token mints a token of role for sub on the test server.
func token(t *testing.T, sub, role string) string {
	t.Helper()
	tok, err := server.Token(t.Context(), sub, role)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// newShow creates a 12-seat bus trip (rows A–C, 4 seats each) as an admin.
func newShow(t *testing.T, title string) *catalogv1.Show {
	t.Helper()
	admin := seatghor.NewClient(server.BaseURL, seatghor.WithToken(token(t, "go-admin", "admin")))
	res, err := admin.Catalog.CreateShow(t.Context(), connect.NewRequest(&catalogv1.CreateShowRequest{
		Kind:        catalogv1.ShowKind_SHOW_KIND_BUS_TRIP,
		Title:       title,
		Origin:      "Dhaka",
		Destination: "Sylhet",
		StartsAt:    timestamppb.New(time.Now().Add(30 * 24 * time.Hour)),
		Currency:    "BDT",
		Sections:    []*catalogv1.Section{{Name: "Main", Rows: []string{"A", "B", "C"}, SeatsPerRow: 4, PriceMinor: 75000}},
	}))
	if err != nil {
		t.Fatalf("CreateShow: %v", err)
	}
	return res.Msg.GetShow()
}

// TestPurchase: find the show by trip search and in the catalog (the paged
// iterators), hold two seats, order them and pay with the sandbox's
// tok_success, over each protocol; the order is confirmed.
func TestPurchase(t *testing.T) {
	protocols := []struct {
		name string
		opt  []seatghor.Option
	}{
		{"connect", nil},
		{"connect-json", []seatghor.Option{seatghor.WithJSON()}},
		{"grpc", []seatghor.Option{seatghor.WithGRPC()}},
		{"grpc-web", []seatghor.Option{seatghor.WithGRPCWeb()}},
	}
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			ctx := t.Context()
			title := "Go SDK purchase over " + p.name
			created := newShow(t, title)
			c := seatghor.NewClient(server.BaseURL, append(p.opt, seatghor.WithAPIKey(token(t, "go-buyer-"+p.name, "user")))...)

			var show *catalogv1.Show
			for s, err := range c.Catalog.ListShowsAll(ctx, &catalogv1.ListShowsRequest{PageSize: 2, Kind: catalogv1.ShowKind_SHOW_KIND_BUS_TRIP}) {
				if err != nil {
					t.Fatalf("ListShows: %v", err)
				}
				if s.GetTitle() == title {
					show = s
					break
				}
			}
			if show == nil {
				t.Fatalf("ListShowsAll never yielded %q", title)
			}
			if found := searchTrip(t, c, title); found != created.GetShowId() {
				t.Fatalf("SearchTrips found show %d, want %d", found, created.GetShowId())
			}

			hold, err := c.Hold.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show.GetShowId(), Seats: []string{"A1", "A2"}}))
			if err != nil {
				t.Fatalf("CreateHold: %v", err)
			}
			if got := hold.Msg.GetHold().GetSeats(); !slices.Equal(got, []string{"A1", "A2"}) {
				t.Fatalf("held %v, want A1 A2", got)
			}
			order, err := c.Order.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: hold.Msg.GetHold().GetHoldId()}))
			if err != nil {
				t.Fatalf("CreateOrder: %v", err)
			}
			orderID := order.Msg.GetOrder().GetOrderId()
			pay, err := c.Payment.StartPayment(ctx, connect.NewRequest(&paymentv1.StartPaymentRequest{
				OrderId: orderID, Sandbox: &paymentv1.SandboxPayment{Token: "tok_success"},
			}))
			if err != nil {
				t.Fatalf("StartPayment: %v", err)
			}
			if got := pay.Msg.GetPayment().GetStatus(); got != paymentv1.PaymentState_PAYMENT_STATE_SUCCEEDED {
				t.Fatalf("payment %v, want SUCCEEDED", got)
			}
			got, err := c.Order.GetOrder(ctx, connect.NewRequest(&bookingv1.GetOrderRequest{OrderId: orderID}))
			if err != nil {
				t.Fatalf("GetOrder: %v", err)
			}
			if s := got.Msg.GetOrder().GetStatus(); s != bookingv1.OrderStatus_ORDER_STATUS_CONFIRMED {
				t.Fatalf("order %v, want CONFIRMED", s)
			}
		})
	}
}

// searchTrip returns the show id of the first trip search hit for query,
// waiting for the trip index, a read model the projector fills shortly
// after the show is created.
func searchTrip(t *testing.T, c *seatghor.Client, query string) int64 {
	t.Helper()
	deadline := time.Now().Add(projectionTimeout)
	for {
		for hit, err := range c.TripSearch.SearchTripsAll(t.Context(), &searchv1.SearchTripsRequest{Query: query, Origin: "Dhaka", Destination: "Sylhet"}) {
			if err != nil {
				t.Fatalf("SearchTrips: %v", err)
			}
			if hit.GetTitle() == query {
				return hit.GetShowId()
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("SearchTrips found no %q within %s", query, projectionTimeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// projectionTimeout is how long a read model may take to catch up with a write.
const projectionTimeout = 15 * time.Second

// dropFirstAnswer sends every request to the server but loses the server's
// answer to the first CreateHold, as a connection reset after the server
// did the work would; it records the Idempotency-Key of every CreateHold.
type dropFirstAnswer struct {
	next    http.RoundTripper
	mu      sync.Mutex
	keys    []string
	dropped bool
}

func (d *dropFirstAnswer) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := d.next.RoundTrip(r)
	if r.URL.Path != "/seatghor.booking.v1.HoldService/CreateHold" {
		return res, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.keys = append(d.keys, r.Header.Get(seatghor.IdempotencyKeyHeader))
	if err != nil || d.dropped {
		return res, err
	}
	d.dropped = true
	// The whole answer arrives, so the server is done with the call; then it is lost.
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return nil, errors.New("connection reset by peer (the test dropped the answer)")
}

// TestRetryReusesItsIdempotencyKey: the server made the hold but its answer
// was lost; the SDK retries with the same key and the server answers with
// the hold it made (a new key would find the seats taken).
func TestRetryReusesItsIdempotencyKey(t *testing.T) {
	ctx := t.Context()
	show := newShow(t, "Go SDK retry")
	rt := &dropFirstAnswer{next: http.DefaultTransport}
	var retried []seatghor.RetryEvent
	c := seatghor.NewClient(server.BaseURL,
		seatghor.WithToken(token(t, "go-retry", "user")),
		seatghor.WithHTTPClient(&http.Client{Transport: rt}),
		seatghor.WithRetry(seatghor.RetryPolicy{OnRetry: func(e seatghor.RetryEvent) { retried = append(retried, e) }}),
	)
	res, err := c.Hold.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show.GetShowId(), Seats: []string{"B1", "B2"}}))
	if err != nil {
		t.Fatalf("CreateHold: %v", err)
	}
	if len(rt.keys) < 2 || rt.keys[0] == "" || slices.ContainsFunc(rt.keys, func(k string) bool { return k != rt.keys[0] }) {
		t.Fatalf("Idempotency-Keys sent %q, want the same non-empty key on every attempt", rt.keys)
	}
	if len(retried) != len(rt.keys)-1 || retried[0].Err.Code() != connect.CodeUnavailable || retried[0].FromServer {
		t.Fatalf("retries %+v, want a backoff after unavailable first", retried)
	}
	for _, r := range retried {
		if r.IdempotencyKey != rt.keys[0] {
			t.Fatalf("retry %+v, want key %s", r, rt.keys[0])
		}
	}
	hold := res.Msg.GetHold()
	got, err := c.Hold.GetHold(ctx, connect.NewRequest(&bookingv1.GetHoldRequest{HoldId: hold.GetHoldId()}))
	if err != nil {
		t.Fatalf("GetHold: %v", err)
	}
	if !slices.Equal(got.Msg.GetHold().GetSeats(), []string{"B1", "B2"}) {
		t.Fatalf("hold %v, want B1 B2", got.Msg.GetHold())
	}
	// The same request with a new key is a new hold: the seats are taken.
	_, err = c.Hold.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show.GetShowId(), Seats: []string{"B1", "B2"}}))
	if !errors.As(err, &seatghor.SeatsUnavailableError{}) {
		t.Fatalf("a second CreateHold with a new key: %v, want SeatsUnavailableError", err)
	}
}

// TestTypedErrors: the reasons of docs/errors.md arrive as their types,
// which unwrap to APIError and to the *connect.Error.
func TestTypedErrors(t *testing.T) {
	ctx := t.Context()
	show := newShow(t, "Go SDK typed errors")
	alice := seatghor.NewClient(server.BaseURL, seatghor.WithToken(token(t, "go-alice", "user")))
	bob := seatghor.NewClient(server.BaseURL, seatghor.WithToken(token(t, "go-bob", "user")))
	if _, err := alice.Hold.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show.GetShowId(), Seats: []string{"C1", "C2"}})); err != nil {
		t.Fatalf("alice's CreateHold: %v", err)
	}

	t.Run("SEATS_UNAVAILABLE", func(t *testing.T) {
		_, err := bob.Hold.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show.GetShowId(), Seats: []string{"C2", "C3"}}))
		var taken seatghor.SeatsUnavailableError
		if !errors.As(err, &taken) {
			t.Fatalf("err %v (%T), want a SeatsUnavailableError", err, err)
		}
		if !slices.Equal(taken.Seats, []string{"C2"}) || taken.SeatmapVersion <= 0 || taken.Reason != seatghor.ReasonSeatsUnavailable {
			t.Fatalf("SeatsUnavailableError %+v, want seat C2 and a seat-map version", taken)
		}
		var api seatghor.APIError
		if !errors.As(err, &api) || api.Code != connect.CodeAborted || connect.CodeOf(err) != connect.CodeAborted {
			t.Fatalf("err %v: want an APIError and a *connect.Error with code aborted", err)
		}
	})

	t.Run("INVALID_ARGUMENT names the field", func(t *testing.T) {
		_, err := bob.Hold.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show.GetShowId(), Seats: []string{"c3"}}))
		var bad seatghor.InvalidRequestError
		if !errors.As(err, &bad) {
			t.Fatalf("err %v (%T), want an InvalidRequestError", err, err)
		}
		if _, ok := bad.Field("seats[0]"); !ok {
			t.Fatalf("field violations %+v, want seats[0]", bad.FieldViolations)
		}
	})

	t.Run("TOKEN_INVALID", func(t *testing.T) {
		nobody := seatghor.NewClient(server.BaseURL, seatghor.WithAPIKey("sk_test_not_a_key"))
		_, err := nobody.Hold.GetHold(ctx, connect.NewRequest(&bookingv1.GetHoldRequest{HoldId: "hld_1_x"}))
		var unauth seatghor.UnauthenticatedError
		if !errors.As(err, &unauth) {
			t.Fatalf("err %v (%T), want an UnauthenticatedError", err, err)
		}
	})
}

// TestSeatStatesOfAServedMap: SeatStates reads the server's seat map as it
// is served: the seats a buyer holds are held, the others free.
func TestSeatStatesOfAServedMap(t *testing.T) {
	ctx := t.Context()
	show := newShow(t, "Go SDK seat states")
	c := seatghor.NewClient(server.BaseURL, seatghor.WithToken(token(t, "go-seat-states", "user")))
	if _, err := c.Hold.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show.GetShowId(), Seats: []string{"A2", "B3"}})); err != nil {
		t.Fatalf("CreateHold: %v", err)
	}
	m, err := c.SeatMap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: show.GetShowId()}))
	if err != nil {
		t.Fatalf("GetSeatMap: %v", err)
	}
	states := seatghor.SeatStates(m.Msg)
	if len(states) != 12 {
		t.Fatalf("%d seats, want 12: %v", len(states), states)
	}
	for seat, st := range states {
		want := seatmapv1.SeatState_SEAT_STATE_AVAILABLE_UNSPECIFIED
		if seat == "A2" || seat == "B3" {
			want = seatmapv1.SeatState_SEAT_STATE_HELD
		}
		if st != want {
			t.Errorf("%s is %v, want %v", seat, st, want)
		}
	}
}
