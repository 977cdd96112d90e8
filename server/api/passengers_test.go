package api_test

import (
	"context"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	paymentv1 "github.com/seatghor/seatghor/gen/seatghor/payment/v1"
	ticketsv1 "github.com/seatghor/seatghor/gen/seatghor/tickets/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/ticket"
)

// straightBus returns a bus trip of rows × 4 seats run by organisation org.
func straightBus(title, org string, rows int) *catalogv1.CreateShowRequest {
	req := seatedShow(title, rows, 4)
	req.Kind, req.Origin, req.Destination, req.Venue = catalogv1.ShowKind_SHOW_KIND_BUS_TRIP, "Dhaka", "Chattogram", ""
	req.OrganizationId = org
	return req
}

// TestOrderPassengers (issue 24 §5, decisions 0380, 0381): an order of a
// bus trip names who travels on each seat. Bad input is refused
// invalid_argument naming the field, and nothing is written (the hold is
// still there to order); good input is stored cleaned (names trimmed, the
// mobile number in E.164) and read back by the buyer, the trip's managers
// and admins, by nobody else; the tickets name their passengers in "my
// tickets", and the gate's answer names them without their number.
func TestOrderPassengers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Projectors: true, Tickets: true})
	env.Member(t, "hanif", "hanif-mgr", catalog.RoleManager)
	env.Member(t, "hanif", "hanif-gate", catalog.RoleGate)
	env.Member(t, "shyamoli", "shyamoli-mgr", catalog.RoleManager)
	trip := createShow(t, env, straightBus("Hanif 08:00", "hanif", 2)).GetShowId()
	ga := seatedShow("Open air", 0, 0)
	ga.Sections, ga.GaAreas = nil, []*catalogv1.GaArea{{Name: "Floor", Capacity: 50, PriceMinor: 50000, Buckets: 2}}
	gaShow := createShow(t, env, ga).GetShowId()

	rumana := newBuyer(t, env, "rumana")
	hold, err := rumana.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: trip, Seats: []string{"A2", "A1"}}))
	require.NoError(t, err)
	holdID := hold.Msg.GetHold().GetHoldId()
	p := func(seat, name, phone string) *commonv1.Passenger {
		return &commonv1.Passenger{Seat: seat, Name: name, Phone: phone}
	}
	good := []*commonv1.Passenger{p("A2", "সুন্দরী  খাতুন", "+880 1819-000000"), p("A1", "  Rahim   Uddin ", "01711-234567")}
	good[0].Woman = true
	for _, tc := range []struct {
		name       string
		passengers []*commonv1.Passenger
		field      string
	}{
		{"not a mobile number", []*commonv1.Passenger{good[1], p("A2", "Karim", "02-9876543")}, "passengers[1].phone"},
		{"an operator prefix not in use", []*commonv1.Passenger{p("A1", "Karim", "01211-234567"), good[0]}, "passengers[0].phone"},
		{"a foreign number", []*commonv1.Passenger{good[1], p("A2", "Karim", "+44 7911 123456")}, "passengers[1].phone"},
		{"no name", []*commonv1.Passenger{p("A1", "", "01711234567"), good[0]}, "passengers[0].name"},
		{"a name of spaces", []*commonv1.Passenger{p("A1", "   ", "01711234567"), good[0]}, "passengers[0].name"},
		{"a name with a control character", []*commonv1.Passenger{p("A1", "Ra\x07him", "01711234567"), good[0]}, "passengers[0].name"},
		{"a name too long", []*commonv1.Passenger{p("A1", longName(101), "01711234567"), good[0]}, "passengers[0].name"},
		{"a seat not in the hold", []*commonv1.Passenger{good[1], p("B1", "Karim", "01711234567")}, "passengers[1].seat"},
		{"a seat twice", []*commonv1.Passenger{good[1], p("A1", "Karim", "01711234567")}, "passengers[1].seat"},
		{"a seat without one", []*commonv1.Passenger{good[1]}, "passengers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rumana.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: holdID, Passengers: tc.passengers}))
			require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err), "%v", err)
			require.Equal(t, tc.field, badField(t, err), "%v", err)
		})
	}
	gaHold, err := rumana.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: gaShow, Quantity: proto.Int32(1)}))
	require.NoError(t, err)
	_, err = rumana.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{
		HoldId: gaHold.Msg.GetHold().GetHoldId(), Passengers: []*commonv1.Passenger{good[1]}}))
	require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err), "%v", err)
	require.Equal(t, "passengers", badField(t, err))

	// Refused requests wrote nothing: the hold is still there to order.
	created, err := rumana.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: holdID, Passengers: good}))
	require.NoError(t, err)
	order := created.Msg.GetOrder()
	want := []*commonv1.Passenger{
		{Seat: "A1", Name: "Rahim Uddin", Phone: "+8801711234567"},
		{Seat: "A2", Name: "সুন্দরী খাতুন", Phone: "+8801819000000", Woman: true},
	}
	require.Empty(t, cmpPassengers(want, order.GetPassengers()), "in seat order, cleaned")

	// Who reads them: the buyer, the trip's managers, admins; nobody else
	// reads the order at all.
	for _, tc := range []struct {
		who  string
		role auth.Role
		sees bool
	}{
		{"rumana", auth.RoleUser, true},
		{"hanif-mgr", auth.RoleOperator, true},
		{"admin", auth.RoleAdmin, true},
		{"hanif-gate", auth.RoleOperator, false},
		{"shyamoli-mgr", auth.RoleOperator, false},
		{"karim", auth.RoleUser, false},
	} {
		t.Run("read by "+tc.who, func(t *testing.T) {
			got, err := as(t, env, tc.who, tc.role).orders.GetOrder(ctx, connect.NewRequest(&bookingv1.GetOrderRequest{OrderId: order.GetOrderId()}))
			if !tc.sees {
				requireReason(t, err, connect.CodeNotFound, "BOOKING_NOT_FOUND")
				return
			}
			require.NoError(t, err)
			require.Empty(t, cmpPassengers(want, got.Msg.GetOrder().GetPassengers()))
		})
	}
	list, err := rumana.orders.ListMyOrders(ctx, connect.NewRequest(&bookingv1.ListMyOrdersRequest{}))
	require.NoError(t, err)
	require.Len(t, list.Msg.GetOrders(), 1)
	require.Empty(t, cmpPassengers(want, list.Msg.GetOrders()[0].GetPassengers()))

	// Paid, the tickets name their passengers.
	pay, err := rumana.pay(order.GetOrderId(), "tok_success")
	require.NoError(t, err)
	require.Equal(t, paymentv1.PaymentState_PAYMENT_STATE_SUCCEEDED, pay.GetStatus())
	tickets := myTickets(t, ticketsAs(t, env, "rumana", auth.RoleUser), func(ts []*ticketsv1.Ticket) bool { return len(ts) == 2 })
	for _, tk := range tickets {
		var w *commonv1.Passenger
		for _, x := range want {
			if x.GetSeat() == tk.GetSeat() {
				w = x
			}
		}
		require.NotNil(t, w, "ticket of seat %s", tk.GetSeat())
		require.Empty(t, cmpPassengers([]*commonv1.Passenger{w}, []*commonv1.Passenger{tk.GetPassenger()}))
	}

	// The gate staff of the trip see who travels, not their number.
	id, err := ticket.ID(order.GetOrderId(), 2)
	require.NoError(t, err)
	scan, err := ticketsAs(t, env, "hanif-gate", auth.RoleOperator).CheckInTicket(ctx, connect.NewRequest(&ticketsv1.CheckInTicketRequest{
		ShowId: trip, Ticket: &ticketsv1.CheckInTicketRequest_TicketId{TicketId: id}, Gate: "Kalabagan"}))
	require.NoError(t, err)
	require.True(t, scan.Msg.GetAdmitted())
	require.Empty(t, cmpPassengers([]*commonv1.Passenger{{Seat: "A2", Name: "সুন্দরী খাতুন", Woman: true}},
		[]*commonv1.Passenger{scan.Msg.GetTicket().GetPassenger()}))
}

// TestOrderWithoutPassengers: a bus trip without intermediate stops takes
// orders without passengers as before (decision 0380), and their tickets
// name none.
func TestOrderWithoutPassengers(t *testing.T) {
	t.Parallel()
	env := apptest.New(t, apptest.Options{})
	trip := createShow(t, env, straightBus("Hanif 09:00", "", 1)).GetShowId()
	o := newBuyer(t, env, "rumana").order(trip, "A1")
	require.Empty(t, o.GetPassengers())
	require.Empty(t, newBuyer(t, env, "rumana").getOrder(o.GetOrderId()).GetPassengers())
}

func longName(n int) string {
	b := make([]rune, n)
	for i := range b {
		b[i] = 'a'
	}
	return string(b)
}

// cmpPassengers is the difference of two lists of passengers, "" when none.
func cmpPassengers(want, got []*commonv1.Passenger) string {
	if len(want) != len(got) {
		return "different lengths"
	}
	for i := range want {
		if !proto.Equal(want[i], got[i]) {
			return "want " + want[i].String() + ", got " + got[i].String()
		}
	}
	return ""
}
