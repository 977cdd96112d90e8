// Command reseller is a partner's program selling Seatghor tickets through
// the Go SDK: it finds a show, holds seats (choosing again when someone was
// quicker), orders them, pays and waits for the confirmation.
//
//	go run ./examples/reseller -base-url http://127.0.0.1:8080 -api-key "$SEATGHOR_API_KEY" -seats 2
//
// The confirmation is read back with GetOrder for now. When Seatghor's
// outgoing webhooks land (WebhookService, issue 12), confirm becomes a
// receiver: an HTTP handler that verifies the Standard Webhooks signature
// and waits for the order's booking-confirmed event instead of polling.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"time"

	"connectrpc.com/connect"

	"github.com/seatghor/seatghor/clients/go/seatghor"
	bookingv1 "github.com/seatghor/seatghor/clients/go/seatghor/gen/seatghor/booking/v1"
	catalogv1 "github.com/seatghor/seatghor/clients/go/seatghor/gen/seatghor/catalog/v1"
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

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("reseller", flag.ContinueOnError)
	baseURL := fs.String("base-url", envOr("SEATGHOR_URL", "http://127.0.0.1:8080"), "the Seatghor API")
	apiKey := fs.String("api-key", os.Getenv("SEATGHOR_API_KEY"), "the partner's API key (sk_live_… or sk_test_…)")
	showID := fs.Int64("show", 0, "the show to sell; 0 takes the first bus trip listed")
	seats := fs.Int("seats", 2, "how many seats to sell")
	payToken := fs.String("sandbox-token", "tok_success", "the sandbox gateway's test token")
	if err := fs.Parse(args); err != nil {
		return err
	}
	r := reseller{c: seatghor.NewClient(*baseURL, seatghor.WithAPIKey(*apiKey)), out: stdout}
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
	return r.confirm(ctx, order.GetOrderId())
}

type reseller struct {
	c   *seatghor.Client
	out io.Writer
}

func (r reseller) firstBusTrip(ctx context.Context) (int64, error) {
	for show, err := range r.c.Catalog.ListShowsAll(ctx, &catalogv1.ListShowsRequest{Kind: catalogv1.ShowKind_SHOW_KIND_BUS_TRIP}) {
		if err != nil {
			return 0, fmt.Errorf("list shows: %w", err)
		}
		return show.GetShowId(), nil
	}
	return 0, errors.New("no bus trip is listed")
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

// confirm waits until the order is confirmed. The webhook receiver replaces
// this poll when the API sends webhooks.
func (r reseller) confirm(ctx context.Context, orderID string) error {
	for {
		res, err := r.c.Order.GetOrder(ctx, connect.NewRequest(&bookingv1.GetOrderRequest{OrderId: orderID}))
		if err != nil {
			return fmt.Errorf("order %s: %w", orderID, err)
		}
		switch o := res.Msg.GetOrder(); o.GetStatus() {
		case bookingv1.OrderStatus_ORDER_STATUS_CONFIRMED:
			fmt.Fprintf(r.out, "confirmed: order %s, %d lines, total %d %s\n",
				orderID, len(o.GetLines()), o.GetTotal().GetAmountMinor(), o.GetTotal().GetCurrency())
			return nil
		case bookingv1.OrderStatus_ORDER_STATUS_PENDING_PAYMENT:
		default:
			return fmt.Errorf("order %s is %s", orderID, o.GetStatus())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
