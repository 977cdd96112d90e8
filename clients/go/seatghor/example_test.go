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
	partnerv1 "github.com/seatghor/seatghor/clients/go/seatghor/gen/seatghor/partner/v1"
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

// A partner subscribes its receiver to booking.confirmed with an API key of
// scope webhooks (a booking key may only list endpoints), keeps the secret
// to verify deliveries with a Standard Webhooks library, and deletes the
// endpoint when it no longer wants the events; examples/reseller does all
// of it with a receiver. (Needs a server, so it is compiled, not run.)
func ExampleWebhookClient_CreateEndpoint() {
	ctx := context.Background()
	c := seatghor.NewClient("http://127.0.0.1:8080", seatghor.WithAPIKey(os.Getenv("SEATGHOR_WEBHOOKS_KEY")))

	created, err := c.Webhook.CreateEndpoint(ctx, connect.NewRequest(&partnerv1.CreateEndpointRequest{
		Url: "https://agency.example/seatghor", EventTypes: []string{"booking.confirmed", "allocation.returned"},
	}))
	if err != nil {
		log.Fatal(err)
	}
	id := created.Msg.GetEndpoint().GetEndpointId()
	fmt.Println("endpoint", id, "secret", created.Msg.GetSecret()) // shown only here: keep it
	if _, err := c.Webhook.DeleteEndpoint(ctx, connect.NewRequest(&partnerv1.DeleteEndpointRequest{EndpointId: id})); err != nil {
		log.Fatal(err)
	}
}

// A partner reads its allocations of a show: the seats ring-fenced for its
// channel, how many nobody holds yet, and when the rest returns to general
// sale. (Needs a server, so it is compiled, not run.)
func ExampleAllocationClient_ListAllocations() {
	c := seatghor.NewClient("http://127.0.0.1:8080", seatghor.WithAPIKey(os.Getenv("SEATGHOR_API_KEY")))
	res, err := c.Allocation.ListAllocations(context.Background(), connect.NewRequest(&partnerv1.ListAllocationsRequest{ShowId: 7}))
	if err != nil {
		log.Fatal(err)
	}
	for _, a := range res.Msg.GetAllocations() {
		if a.GetStatus() == partnerv1.AllocationStatus_ALLOCATION_STATUS_ACTIVE {
			fmt.Println(a.GetSeats(), a.GetAvailable(), "free until", a.GetReturnAt().AsTime())
		}
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
