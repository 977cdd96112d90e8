package api_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	paymentv1 "github.com/seatghor/seatghor/gen/seatghor/payment/v1"
	ticketsv1 "github.com/seatghor/seatghor/gen/seatghor/tickets/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/ticket"
)

// TestTicketNamesItsJourney (issue 24 §2, decision 0384): a ticket of a
// trip with stops Dhaka → Cumilla → Chattogram, sold for Cumilla →
// Chattogram boarding at a Cumilla counter, names its journey, counters and
// boarding time in "my tickets"; a gate at Dhaka refuses it with
// TICKET_BOARDS_ELSEWHERE naming where it boards, a gate at Cumilla admits
// it. A show without stops: no journey, and a stop_id changes nothing.
func TestTicketNamesItsJourney(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Projectors: true, Tickets: true})
	req := tripShow("Dhaka to Chattogram 08:00", 1, 30000, "Dhaka", "Cumilla", "Chattogram")
	req.Stops[1].Counters = []*catalogv1.Counter{{CounterId: "paduar-bazar", Name: "Paduar Bazar", NameBn: "পদুয়ার বাজার",
		MinutesAfterDeparture: 55}}
	req.Stops[2].Counters = []*catalogv1.Counter{{CounterId: "dampara", Name: "Dampara", NameBn: "দামপাড়া",
		MinutesAfterDeparture: 125}}
	trip := createShow(t, env, req)

	rumana := newBuyer(t, env, "rumana")
	hold, err := rumana.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: trip.GetShowId(),
		Seats: []string{"A1"}, Journey: &commonv1.Journey{FromStopId: "cumilla", ToStopId: "chattogram",
			BoardingCounterId: "paduar-bazar", DroppingCounterId: "dampara"}}))
	require.NoError(t, err)
	order, err := rumana.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: hold.Msg.GetHold().GetHoldId(),
		Passengers: []*commonv1.Passenger{{Seat: "A1", Name: "Rahim Uddin", Phone: "01711-234567"}}}))
	require.NoError(t, err)
	pay, err := rumana.pay(order.Msg.GetOrder().GetOrderId(), "tok_success")
	require.NoError(t, err)
	require.Equal(t, paymentv1.PaymentState_PAYMENT_STATE_SUCCEEDED, pay.GetStatus())
	plain := paid(t, rumana, createShow(t, env, straightBus("Hanif 09:00", "", 1)).GetShowId(), "A1")

	mine := myTickets(t, ticketsAs(t, env, "rumana", auth.RoleUser), func(ts []*ticketsv1.Ticket) bool { return len(ts) == 2 })
	var onTrip, onPlain *ticketsv1.Ticket
	for _, tk := range mine {
		if tk.GetShowId() == trip.GetShowId() {
			onTrip = tk
		} else {
			onPlain = tk
		}
	}
	require.NotNil(t, onTrip)
	require.Nil(t, onPlain.GetJourney(), "a show without stops: no journey, as before")
	j := onTrip.GetJourney()
	require.NotNil(t, j, "the ticket names its journey")
	for _, c := range []struct{ got, want string }{
		{j.GetFromStopId(), "cumilla"}, {j.GetToStopId(), "chattogram"},
		{j.GetFromName(), "Cumilla"}, {j.GetFromNameBn(), "কুমিল্লা"}, {j.GetToName(), "Chattogram"},
		{j.GetBoardingCounterId(), "paduar-bazar"}, {j.GetBoardingCounterName(), "Paduar Bazar"},
		{j.GetBoardingCounterNameBn(), "পদুয়ার বাজার"}, {j.GetDroppingCounterName(), "Dampara"},
		{j.GetBoardingAtLocal().GetTimeZone(), "Asia/Dhaka"},
	} {
		require.Equal(t, c.want, c.got)
	}
	require.Equal(t, trip.GetStartsAt().AsTime().Add(55*time.Minute), j.GetBoardingAt().AsTime())
	require.NotEmpty(t, j.GetBoardingAtLocal().GetBn())

	// The gate at Dhaka refuses it and says where it boards; at Cumilla it
	// admits, and the answer names the journey.
	gate := ticketsAs(t, env, "admin", auth.RoleAdmin)
	id, err := ticket.ID(order.Msg.GetOrder().GetOrderId(), 1)
	require.NoError(t, err)
	scan := func(showID int64, id, stop string) (*ticketsv1.CheckInTicketResponse, error) {
		r, err := gate.CheckInTicket(ctx, connect.NewRequest(&ticketsv1.CheckInTicketRequest{ShowId: showID,
			Ticket: &ticketsv1.CheckInTicketRequest_TicketId{TicketId: id}, Gate: "coach door", StopId: stop}))
		if err != nil {
			return nil, err
		}
		return r.Msg, nil
	}
	_, err = scan(trip.GetShowId(), id, "dhaka")
	requireReason(t, err, connect.CodeFailedPrecondition, "TICKET_BOARDS_ELSEWHERE")
	var ce *connect.Error
	require.True(t, errors.As(err, &ce))
	require.Contains(t, ce.Message(), "boards at Cumilla, Paduar Bazar counter")
	got, err := scan(trip.GetShowId(), id, "cumilla")
	require.NoError(t, err)
	require.True(t, got.GetAdmitted())
	require.Equal(t, "Paduar Bazar", got.GetTicket().GetJourney().GetBoardingCounterName())

	// Without stops, a stop_id is no rule: admitted as before.
	plainID, err := ticket.ID(plain.GetOrderId(), 1)
	require.NoError(t, err)
	got, err = scan(plain.GetShowId(), plainID, "dhaka")
	require.NoError(t, err)
	require.True(t, got.GetAdmitted())
	require.Nil(t, got.GetTicket().GetJourney())
}

// journeyPaid is a paid order of buyer b for seat on trip showID from stop
// from to stop to.
func journeyPaid(t *testing.T, b buyer, showID int64, seat, from, to string) *bookingv1.Order {
	t.Helper()
	ctx := context.Background()
	hold, err := b.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: showID,
		Seats: []string{seat}, Journey: &commonv1.Journey{FromStopId: from, ToStopId: to}}))
	require.NoError(t, err)
	order, err := b.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: hold.Msg.GetHold().GetHoldId(),
		Passengers: []*commonv1.Passenger{{Seat: seat, Name: "Passenger " + seat, Phone: "01711-234567"}}}))
	require.NoError(t, err)
	pay, err := b.pay(order.Msg.GetOrder().GetOrderId(), "tok_success")
	require.NoError(t, err)
	require.Equal(t, paymentv1.PaymentState_PAYMENT_STATE_SUCCEEDED, pay.GetStatus())
	return order.Msg.GetOrder()
}

// TestOfflineGateAtAStop (decision 0408): the admission list a device
// downloads names each ticket's boarding stop; a device at Dhaka that
// scanned, with no network, a ticket boarding at Cumilla has it settled
// BOARDS_ELSEWHERE naming Cumilla, not admitted, the same on a resend,
// and counted on the supervisor's view; the device at Cumilla then admits
// it, and the one at Dhaka admits the ticket boarding there.
func TestOfflineGateAtAStop(t *testing.T) {
	t.Parallel()
	env := apptest.New(t, apptest.Options{Projectors: true, Tickets: true})
	trip := createShow(t, env, tripShow("Dhaka to Chattogram 07:30", 1, 30000, "Dhaka", "Cumilla", "Chattogram"))
	rumana := newBuyer(t, env, "rumana")
	fromDhaka := journeyPaid(t, rumana, trip.GetShowId(), "A1", "dhaka", "chattogram")
	fromCumilla := journeyPaid(t, rumana, trip.GetShowId(), "A2", "cumilla", "chattogram")
	dhakaID, err := ticket.ID(fromDhaka.GetOrderId(), 1)
	require.NoError(t, err)
	cumillaID, err := ticket.ID(fromCumilla.GetOrderId(), 1)
	require.NoError(t, err)

	gate := ticketsAs(t, env, "admin", auth.RoleAdmin)
	list := admissions(t, gate, trip.GetShowId())
	require.Equal(t, "dhaka", list[dhakaID].GetBoardingStopId())
	require.Equal(t, "cumilla", list[cumillaID].GetBoardingStopId())

	mine := myTickets(t, ticketsAs(t, env, "rumana", auth.RoleUser), func(ts []*ticketsv1.Ticket) bool { return len(ts) == 2 })
	codes := map[string]string{}
	for _, tk := range mine {
		codes[tk.GetTicketId()] = tk.GetCode()
	}
	atStop := func(d device, stop string, scans ...*ticketsv1.GateScan) []*ticketsv1.SettledScan {
		req := syncRequest(trip.GetShowId(), d, scans...)
		req.StopId = stop
		r, err := gate.SyncGateScans(context.Background(), connect.NewRequest(req))
		require.NoError(t, err)
		require.Len(t, r.Msg.GetScans(), len(scans))
		return r.Msg.GetScans()
	}
	dhaka := device{id: "coach-door-dhaka", gate: "Kalabagan"}
	batch := []*ticketsv1.GateScan{scanOf("d1", codes[dhakaID], time.Now()), scanOf("d2", codes[cumillaID], time.Now())}
	for range 2 { // the resend of a batch settles as the first send did
		got := atStop(dhaka, "dhaka", batch...)
		require.Equal(t, ticketsv1.ScanOutcome_SCAN_OUTCOME_ADMITTED, got[0].GetOutcome(), "%v", got[0])
		require.Equal(t, ticketsv1.ScanOutcome_SCAN_OUTCOME_BOARDS_ELSEWHERE, got[1].GetOutcome(), "%v", got[1])
		require.Equal(t, "cumilla", got[1].GetBoardingStopId())
		require.Contains(t, got[1].GetDetail(), "boards at Cumilla")
		require.Equal(t, cumillaID, got[1].GetTicketId())
	}
	status := gateStatus(t, gate, trip.GetShowId())
	require.Len(t, status.GetDevices(), 1)
	require.EqualValues(t, 1, status.GetDevices()[0].GetBoardsElsewhere())
	require.EqualValues(t, 1, status.GetDevices()[0].GetAdmitted())

	got := atStop(device{id: "coach-door-cumilla", gate: "Paduar Bazar"}, "cumilla", scanOf("c1", codes[cumillaID], time.Now()))
	require.Equal(t, ticketsv1.ScanOutcome_SCAN_OUTCOME_ADMITTED, got[0].GetOutcome(), "refused at Dhaka, so not yet admitted: %v", got[0])
	list = admissions(t, gate, trip.GetShowId())
	require.Equal(t, "Paduar Bazar", list[cumillaID].GetCheckedInGate())
	require.Equal(t, "Kalabagan", list[dhakaID].GetCheckedInGate())
}
