package seatghor_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"github.com/seatghor/seatghor/clients/go/seatghor"
	bookingv1 "github.com/seatghor/seatghor/clients/go/seatghor/gen/seatghor/booking/v1"
	catalogv1 "github.com/seatghor/seatghor/clients/go/seatghor/gen/seatghor/catalog/v1"
	paymentv1 "github.com/seatghor/seatghor/clients/go/seatghor/gen/seatghor/payment/v1"
)

// A purchase: hold two seats, order them, pay. Each write gets an
// Idempotency-Key by itself, reused if the SDK retries it. (Needs a server,
// so it is compiled, not run.)
func ExampleNewClient() {
	ctx := context.Background()
	c := seatghor.NewClient("http://127.0.0.1:8080", seatghor.WithAPIKey(os.Getenv("SEATGHOR_API_KEY")))

	hold, err := c.Hold.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: 7, Seats: []string{"A1", "A2"}}))
	if err != nil {
		log.Fatal(err)
	}
	order, err := c.Order.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: hold.Msg.GetHold().GetHoldId()}))
	if err != nil {
		log.Fatal(err)
	}
	pay, err := c.Payment.StartPayment(ctx, connect.NewRequest(&paymentv1.StartPaymentRequest{
		OrderId: order.Msg.GetOrder().GetOrderId(),
		Sandbox: &paymentv1.SandboxPayment{Token: "tok_success"},
	}))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(pay.Msg.GetPayment().GetStatus())
}

// gRPC instead of the Connect protocol (over http:// the SDK speaks h2c).
func ExampleWithGRPC() {
	c := seatghor.NewClient("http://127.0.0.1:8080", seatghor.WithGRPC(), seatghor.WithAPIKey("sk_test_…"))
	_ = c
}

// Every show, page after page. (Needs a server, so it is compiled, not run.)
func ExampleCatalogClient_ListShowsAll() {
	c := seatghor.NewClient("http://127.0.0.1:8080", seatghor.WithAPIKey(os.Getenv("SEATGHOR_API_KEY")))
	for show, err := range c.Catalog.ListShowsAll(context.Background(), &catalogv1.ListShowsRequest{Kind: catalogv1.ShowKind_SHOW_KIND_BUS_TRIP}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(show.GetShowId(), show.GetTitle())
	}
}

// The seats were taken: the error says which, so the buyer can choose again.
func ExampleSeatsUnavailableError() {
	// What the server answers when someone else holds A2 (built here so the
	// example runs without a server; the Client's calls return it as is).
	answer := connect.NewError(connect.CodeAborted, errors.New("seats not available"))
	info, _ := connect.NewErrorDetail(&errdetails.ErrorInfo{Domain: seatghor.ErrorDomain, Reason: "SEATS_UNAVAILABLE"})
	taken, _ := connect.NewErrorDetail(&bookingv1.SeatsUnavailable{Seats: []string{"A2"}, SeatmapVersion: 42})
	answer.AddDetail(info)
	answer.AddDetail(taken)
	err := seatghor.Typed(answer)

	var su seatghor.SeatsUnavailableError
	if errors.As(err, &su) {
		fmt.Println(su.Reason, su.Seats, "reload the seat map at version", su.SeatmapVersion)
	}
	fmt.Println(connect.CodeOf(err))
	// Output:
	// SEATS_UNAVAILABLE [A2] reload the seat map at version 42
	// aborted
}
