package api_test

import (
	"context"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/timestamppb"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	counterv1 "github.com/seatghor/seatghor/gen/seatghor/counter/v1"
	seatmapv1 "github.com/seatghor/seatghor/gen/seatghor/seatmap/v1"
	ticketsv1 "github.com/seatghor/seatghor/gen/seatghor/tickets/v1"
	"github.com/seatghor/seatghor/gen/seatghor/tickets/v1/ticketsv1connect"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/ticket"
)

// TestManifest: the supervisor's manifest of a coach through Dhaka,
// Cumilla, Feni and Chattogram (decision 0442) lists its three paid
// passengers by seat, with names, phones, journeys, counters and channels
// (not the cancelled one), by stop on request; a scan boards; a no-show is
// refused before the coach leaves and for a passenger who boarded; once it
// has left, the no-show's later legs go back on sale and another buyer
// takes them, while the leg being driven stays sold; the CSV has the
// Bengali names intact.
func TestManifest(t *testing.T) {
	env, clk, req := departingCoach(t, "Dhaka to Chattogram 08:00")
	ctx := context.Background()
	req.Stops[1].Counters = []*catalogv1.Counter{{CounterId: "cantonment", Name: "Cantonment", NameBn: "ক্যান্টনমেন্ট",
		MinutesAfterDeparture: 65, Boarding: true}}
	show := createShow(t, env, req).GetShowId()
	partner := newPartner(t, env, "Shohoz Travels", 500)
	book := func(user, seat string, j *commonv1.Journey, p *commonv1.Passenger) string {
		t.Helper()
		b := newBuyer(t, env, user)
		h, err := b.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{seat}, Journey: j}))
		require.NoError(t, err)
		r := &bookingv1.CreateOrderRequest{HoldId: h.Msg.GetHold().GetHoldId(), Contact: &commonv1.Contact{Phone: "01811-000000"}}
		if p != nil {
			r.Passengers = []*commonv1.Passenger{p}
		}
		o, err := b.orders.CreateOrder(ctx, connect.NewRequest(r))
		require.NoError(t, err)
		require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_CONFIRMED, o.Msg.GetOrder().GetStatus(), "a free journey is confirmed at once")
		return o.Msg.GetOrder().GetOrderId()
	}
	rahim := book("rahim", "A1", journey("dhaka", "chattogram"), &commonv1.Passenger{Seat: "A1", Name: "রহিম উদ্দিন", Phone: "01711-111111"})
	karim := book("karim", "A2", &commonv1.Journey{FromStopId: "cumilla", ToStopId: "chattogram", BoardingCounterId: "cantonment"},
		&commonv1.Passenger{Seat: "A2", Name: "Karim Mia", Phone: "01711-222222"})
	resold := book("salma", "B1", journey("dhaka", "feni"), nil)
	setPartner(t, env, resold, partner.GetPartnerId())
	gone := book("nila", "B2", journey("dhaka", "feni"), nil)
	_, err := newBuyer(t, env, "nila").orders.CancelOrder(ctx, connect.NewRequest(&bookingv1.CancelOrderRequest{OrderId: gone}))
	require.NoError(t, err)
	ticketOf := func(order string) string { id, err := ticket.ID(order, 1); require.NoError(t, err); return id }

	supervisor := manifestAs(t, env, "supervisor", auth.RoleAdmin)
	gate := ticketsAs(t, env, "supervisor", auth.RoleAdmin)
	manifest := func(stop string) *ticketsv1.GetManifestResponse {
		t.Helper()
		m, err := supervisor.GetManifest(ctx, connect.NewRequest(&ticketsv1.GetManifestRequest{ShowId: show, StopId: stop}))
		require.NoError(t, err)
		return m.Msg
	}
	m := manifest("")
	require.Len(t, m.GetEntries(), 3, "paid passengers only")
	a1, a2, b1 := m.GetEntries()[0], m.GetEntries()[1], m.GetEntries()[2]
	require.Equal(t, []string{"A1", "A2", "B1"}, []string{a1.GetSeat(), a2.GetSeat(), b1.GetSeat()})
	require.Equal(t, "রহিম উদ্দিন", a1.GetPassengerName())
	require.Equal(t, "+8801711111111", a1.GetPhone())
	require.Equal(t, "+8801811000000", b1.GetPhone(), "no passenger given: the buyer's contact")
	require.Equal(t, "Cantonment", a2.GetJourney().GetBoardingCounterName())
	require.Equal(t, ticketsv1.SalesChannel_SALES_CHANNEL_WEB, a1.GetChannel())
	require.Equal(t, ticketsv1.SalesChannel_SALES_CHANNEL_PARTNER, b1.GetChannel())
	require.Equal(t, partner.GetPartnerId(), b1.GetPartnerId())
	require.EqualValues(t, 3, m.GetExpected())
	cumilla := manifest("cumilla").GetEntries()
	require.Len(t, cumilla, 1)
	require.Equal(t, karim, cumilla[0].GetOrderId())

	noShow := func(order string) (*ticketsv1.ManifestEntry, error) {
		r, err := supervisor.MarkNoShow(ctx, connect.NewRequest(&ticketsv1.MarkNoShowRequest{ShowId: show, TicketId: ticketOf(order)}))
		if err != nil {
			return nil, err
		}
		return r.Msg.GetEntry(), nil
	}
	_, err = noShow(resold)
	require.Equal(t, "NO_SHOW_REFUSED", answerOf(t, err).reason, "the coach has not left: %v", err)
	_, err = gate.CheckInTicket(ctx, connect.NewRequest(&ticketsv1.CheckInTicketRequest{ShowId: show,
		Ticket: &ticketsv1.CheckInTicketRequest_TicketId{TicketId: ticketOf(rahim)}, Gate: "dhaka-supervisor"}))
	require.NoError(t, err)

	clk.Advance(2*time.Hour + 5*time.Minute) // the coach has left Dhaka, not yet Cumilla
	_, err = noShow(rahim)
	require.Equal(t, "NO_SHOW_REFUSED", answerOf(t, err).reason, "a passenger who boarded: %v", err)
	_, err = noShow(karim)
	require.Equal(t, "NO_SHOW_REFUSED", answerOf(t, err).reason, "the coach has not reached Cumilla: %v", err)
	e, err := noShow(resold)
	require.NoError(t, err)
	require.Equal(t, ticketsv1.BoardingStatus_BOARDING_STATUS_NO_SHOW, e.GetStatus())
	require.EqualValues(t, 1, e.GetReleasedLegs(), "Cumilla → Feni; Dhaka → Cumilla is being driven")
	again, err := noShow(resold)
	require.NoError(t, err)
	require.Equal(t, e.GetNoShowAt().AsTime(), again.GetNoShowAt().AsTime(), "the first mark stands")

	// The seat sells again from Cumilla, at the counters first until the
	// coach leaves Cumilla (TestNoShowLegsAreTheCountersFirst); from
	// Dhaka it sells no more.
	walkIn := newBuyer(t, env, "walk-in")
	_, err = walkIn.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"B1"},
		Journey: journey("dhaka", "cumilla")}))
	require.Equal(t, "BOOKING_NOT_ALLOWED", answerOf(t, err).reason, "%v", err)
	_, err = walkIn.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"B1"},
		Journey: journey("cumilla", "feni")}))
	require.Equal(t, "SEATS_UNAVAILABLE", answerOf(t, err).reason, "online, the counters' first: %v", err)

	m = manifest("")
	require.EqualValues(t, 1, m.GetBoarded())
	require.EqualValues(t, 1, m.GetNoShows())
	require.EqualValues(t, 1, m.GetExpected())
	require.Equal(t, ticketsv1.BoardingStatus_BOARDING_STATUS_BOARDED, m.GetEntries()[0].GetStatus())
	require.Equal(t, "dhaka-supervisor", m.GetEntries()[0].GetBoardedGate())

	file, err := supervisor.ExportManifest(ctx, connect.NewRequest(&ticketsv1.ExportManifestRequest{ShowId: show, Language: "bn"}))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(file.Msg.GetData()), "\ufeff"), "a byte-order mark for spreadsheets")
	rows, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(string(file.Msg.GetData()), "\ufeff"))).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 4)
	require.Equal(t, "আসন", rows[0][0])
	require.Equal(t, []string{"A1", "রহিম উদ্দিন", "ঢাকা", "উঠেছেন"}, []string{rows[1][0], rows[1][2], rows[1][5], rows[1][10]})
	require.Equal(t, "ক্যান্টনমেন্ট", rows[2][7])
	require.Equal(t, "অনুপস্থিত", rows[3][10])
	printed, err := supervisor.ExportManifest(ctx, connect.NewRequest(&ticketsv1.ExportManifestRequest{ShowId: show, Language: "bn", Format: "pdf"}))
	require.NoError(t, err)
	require.Equal(t, "application/pdf", printed.Msg.GetContentType())
	require.True(t, strings.HasPrefix(string(printed.Msg.GetData()), "%PDF-"), "a PDF to print")
	require.True(t, strings.Contains(string(printed.Msg.GetData()), "/MediaBox[0 0 841.88"), "A4 across")

	// Someone else's staff and a buyer see nothing of it.
	_, err = manifestAs(t, env, "rahim", auth.RoleUser).GetManifest(ctx, connect.NewRequest(&ticketsv1.GetManifestRequest{ShowId: show}))
	require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err), "%v", err)
}

// TestNoShowLegsAreTheCountersFirst (issue 25 §4, decision 0482): once the
// coach has left Dhaka, the legs two no-shows leave are the counters'
// first until it leaves the next stop, Cumilla. Online buyers and
// partners see them held and cannot hold them; a clerk in an open shift
// sees them free on the counter's map and sells one; a clerk of another
// operator may not read that map. Once the coach has left Cumilla, the
// later leg left is on general sale, online too.
func TestNoShowLegsAreTheCountersFirst(t *testing.T) {
	env, clk, req := departingCoach(t, "Dhaka to Chattogram 08:00, counters")
	ctx := context.Background()
	env.Member(t, "sohag", "cumilla-clerk", catalog.RoleCounter)
	env.Member(t, "hanif", "hanif-clerk", catalog.RoleCounter)
	req.OrganizationId = "sohag"
	show := createShow(t, env, req).GetShowId()
	var orders []string
	for _, b := range []struct{ user, seat, to string }{{"salma", "B1", "feni"}, {"nila", "B2", "chattogram"}} {
		buyer := newBuyer(t, env, b.user)
		h, err := buyer.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{b.seat},
			Journey: journey("dhaka", b.to)}))
		require.NoError(t, err)
		o, err := buyer.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: h.Msg.GetHold().GetHoldId(),
			Contact: &commonv1.Contact{Phone: "01811-000000"}}))
		require.NoError(t, err)
		require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_CONFIRMED, o.Msg.GetOrder().GetStatus(), "a free journey")
		orders = append(orders, o.Msg.GetOrder().GetOrderId())
	}
	clk.Advance(2*time.Hour + 5*time.Minute) // gone from Dhaka, not yet from Cumilla
	supervisor := manifestAs(t, env, "supervisor", auth.RoleAdmin)
	for i, order := range orders {
		id, err := ticket.ID(order, 1)
		require.NoError(t, err)
		e, err := supervisor.MarkNoShow(ctx, connect.NewRequest(&ticketsv1.MarkNoShowRequest{ShowId: show, TicketId: id}))
		require.NoError(t, err)
		require.EqualValues(t, i+1, e.Msg.GetEntry().GetReleasedLegs())
		require.Equal(t, time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC), e.Msg.GetEntry().GetCounterFirstUntil().AsTime(),
			"the counters' first until the coach leaves Cumilla")
	}

	onlineMap := func(c clients, from, to, shift string) map[string]int {
		t.Helper()
		m, err := c.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: show, FromStopId: from, ToStopId: to,
			CounterShiftId: shift}))
		require.NoError(t, err)
		return seatStates(m.Msg)
	}
	walkIn := newBuyer(t, env, "walk-in")
	hold := func(seat, from, to string) error {
		_, err := walkIn.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{seat},
			Journey: journey(from, to)}))
		return err
	}
	require.Equal(t, 1, onlineMap(walkIn.clients, "cumilla", "feni", "")["B1"], "held, to the public")
	require.Equal(t, "SEATS_UNAVAILABLE", answerOf(t, hold("B1", "cumilla", "feni")).reason)
	require.Equal(t, "SEATS_UNAVAILABLE", answerOf(t, hold("B2", "feni", "chattogram")).reason)

	clerk := as(t, env, "cumilla-clerk", auth.RoleOperator)
	shift := openShift(t, clerk, "sohag", "cumilla", 0)
	counterMap := onlineMap(clerk, "cumilla", "feni", shift.GetShiftId())
	require.Equal(t, 0, counterMap["B1"], "free, to the counter")
	require.Equal(t, 0, counterMap["A1"], "free to all")
	_, err := clerk.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: show, CounterShiftId: "shf_nope"}))
	requireReason(t, err, connect.CodeFailedPrecondition, "COUNTER_SHIFT_CLOSED")
	other := as(t, env, "hanif-clerk", auth.RoleOperator)
	otherShift := openShift(t, other, "hanif", "gabtoli", 0)
	_, err = other.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: show, CounterShiftId: otherShift.GetShiftId()}))
	requireReason(t, err, connect.CodePermissionDenied, "COUNTER_FORBIDDEN")

	sold, err := clerk.counter.SellTickets(ctx, connect.NewRequest(&counterv1.SellTicketsRequest{ShiftId: shift.GetShiftId(), ShowId: show,
		Seats: []string{"B1"}, Journey: journey("cumilla", "feni"), Passengers: []*commonv1.Passenger{{Seat: "B1", Name: "Walk-in", Phone: "01711-333333"}},
		Contact: &commonv1.Contact{Phone: "01711-333333", Language: "bn"}}))
	require.NoError(t, err, "the counter sells the no-show's leg")
	require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_CONFIRMED, sold.Msg.GetOrder().GetStatus())
	require.Equal(t, 2, onlineMap(walkIn.clients, "cumilla", "feni", "")["B1"], "sold")

	clk.Advance(time.Hour) // gone from Cumilla: B2's leg from Feni is on general sale
	require.Equal(t, 0, onlineMap(walkIn.clients, "feni", "chattogram", "")["B2"])
	require.NoError(t, hold("B2", "feni", "chattogram"), "online, once the counters' time is over")
}

// departingCoach is a platform on a fake clock and a free coach through
// Dhaka, Cumilla, Feni and Chattogram of two rows, on sale, that leaves
// Dhaka two hours after the clock's start (Cumilla at 3 h, Feni at 4 h).
func departingCoach(t *testing.T, title string) (*apptest.Env, *clock.Fake, *catalogv1.CreateShowRequest) {
	t.Helper()
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewFake(start)
	env := apptest.New(t, apptest.Options{Shards: 1, Clock: clk})
	req := tripShow(title, 2, 0, "Dhaka", "Cumilla", "Feni", "Chattogram")
	req.OnSaleAt = timestamppb.New(start.Add(-time.Hour))
	req.StartsAt = timestamppb.New(start.Add(2 * time.Hour))
	return env, clk, req
}

// manifestAs returns a ManifestService client that authenticates as sub.
func manifestAs(tb testing.TB, env *apptest.Env, sub string, role auth.Role) ticketsv1connect.ManifestServiceClient {
	token := env.Token(tb, sub, role)
	return ticketsv1connect.NewManifestServiceClient(env.HTTP, env.URL, connect.WithInterceptors(connect.UnaryInterceptorFunc(
		func(next connect.UnaryFunc) connect.UnaryFunc {
			return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
				req.Header().Set("Authorization", "Bearer "+token)
				return next(ctx, req)
			}
		})))
}
