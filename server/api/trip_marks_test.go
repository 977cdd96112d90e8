package api_test

import (
	"context"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/timestamppb"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	ticketsv1 "github.com/seatghor/seatghor/gen/seatghor/tickets/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/ticket"
)

// TestTripMarksEndSalesAndSayWhereItIs (decision 0468): a coach through
// Dhaka, Cumilla and Chattogram. Its supervisor (gate staff of the
// operator) cannot mark it gone before it boards; ten minutes before its
// time she marks it gone from Dhaka: it is departed, no journey from Dhaka
// sells (the timetable would still have sold it), one from Cumilla does,
// and a Dhaka passenger who did not come is a no-show at once. Gone from
// Cumilla later, nothing from there sells; arrived, it is arrived. Marking
// again records nothing. A coach marked gone from a later stop first has
// left its first too. Another operator's supervisor and a buyer are
// refused, a bad stop is refused on its field, and a concert neither
// departs nor arrives.
func TestTripMarksEndSalesAndSayWhereItIs(t *testing.T) {
	start := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	clk := clock.NewFake(start)
	env := apptest.New(t, apptest.Options{Shards: 1, Clock: clk})
	ctx := context.Background()
	env.Member(t, "green-line", "supervisor", catalog.RoleGate)
	env.Member(t, "other-line", "rival", catalog.RoleGate)
	req := tripShow("Dhaka to Chattogram 08:00", 2, 0, "Dhaka", "Cumilla", "Chattogram")
	req.OrganizationId = "green-line"
	req.OnSaleAt = timestamppb.New(start.Add(-time.Hour))
	req.StartsAt = timestamppb.New(start.Add(2 * time.Hour))
	show := createShow(t, env, req).GetShowId()
	hold := func(user, seat string, j *commonv1.Journey) (string, error) {
		b := newBuyer(t, env, user)
		h, err := b.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{seat}, Journey: j}))
		if err != nil {
			return "", err
		}
		o, err := b.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: h.Msg.GetHold().GetHoldId(),
			Contact: &commonv1.Contact{Phone: "01811-000000"}}))
		require.NoError(t, err)
		return o.Msg.GetOrder().GetOrderId(), nil
	}
	absent, err := hold("absent", "A1", journey("dhaka", "chattogram"))
	require.NoError(t, err)

	supervisor := as(t, env, "supervisor", auth.RoleOperator)
	mark := func(c clients, m catalogv1.TripMark, stop string) (*catalogv1.Show, error) {
		r, err := c.catalog.MarkTrip(ctx, connect.NewRequest(&catalogv1.MarkTripRequest{ShowId: show, Mark: m, StopId: stop}))
		if err != nil {
			return nil, err
		}
		return r.Msg.GetShow(), nil
	}
	_, err = mark(supervisor, catalogv1.TripMark_TRIP_MARK_DEPARTED, "")
	requireReason(t, err, connect.CodeFailedPrecondition, "TRIP_NOT_BOARDING")
	_, err = mark(supervisor, catalogv1.TripMark_TRIP_MARK_ARRIVED, "")
	requireReason(t, err, connect.CodeFailedPrecondition, "TRIP_NOT_BOARDING")

	clk.Set(start.Add(110 * time.Minute)) // boarding in Dhaka, ten minutes to go
	for name, c := range map[string]clients{"another operator's supervisor": as(t, env, "rival", auth.RoleOperator),
		"a buyer": as(t, env, "absent", auth.RoleUser)} {
		_, err := mark(c, catalogv1.TripMark_TRIP_MARK_DEPARTED, "")
		require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err), "%s: %v", name, err)
	}
	for stop, field := range map[string]string{"nowhere": "stop_id", "chattogram": "stop_id"} {
		_, err := mark(supervisor, catalogv1.TripMark_TRIP_MARK_DEPARTED, stop)
		requireReason(t, err, connect.CodeInvalidArgument, "SHOW_INVALID")
		require.Equal(t, []string{field}, answerOf(t, err).fields, stop)
	}
	_, err = hold("early", "B1", journey("dhaka", "cumilla"))
	require.NoError(t, err, "the timetable still sells from Dhaka")

	gone, err := mark(supervisor, catalogv1.TripMark_TRIP_MARK_DEPARTED, "")
	require.NoError(t, err)
	require.Equal(t, catalogv1.ShowStatus_SHOW_STATUS_DEPARTED, gone.GetStatus())
	require.Equal(t, clk.Now(), gone.GetDepartedAt().AsTime())
	_, err = hold("late", "B2", journey("dhaka", "cumilla"))
	requireReason(t, err, connect.CodeFailedPrecondition, "BOOKING_NOT_ALLOWED")
	_, err = hold("cumilla", "B2", journey("cumilla", "chattogram"))
	require.NoError(t, err, "Cumilla still boards")
	ticketID, err := ticket.ID(absent, 1)
	require.NoError(t, err)
	noShow, err := manifestAs(t, env, "supervisor", auth.RoleOperator).MarkNoShow(ctx, connect.NewRequest(&ticketsv1.MarkNoShowRequest{
		ShowId: show, TicketId: ticketID}))
	require.NoError(t, err, "the coach has left Dhaka: its passenger who did not come is a no-show, before the timetable says")
	require.NotNil(t, noShow.Msg.GetEntry().GetNoShowAt())

	clk.Set(start.Add(2*time.Hour + 40*time.Minute)) // boarding in Cumilla
	_, err = mark(supervisor, catalogv1.TripMark_TRIP_MARK_DEPARTED, "cumilla")
	require.NoError(t, err)
	_, err = hold("later", "A2", journey("cumilla", "chattogram"))
	requireReason(t, err, connect.CodeFailedPrecondition, "BOOKING_NOT_ALLOWED")
	arrived, err := mark(supervisor, catalogv1.TripMark_TRIP_MARK_ARRIVED, "")
	require.NoError(t, err)
	require.Equal(t, catalogv1.ShowStatus_SHOW_STATUS_ARRIVED, arrived.GetStatus())
	require.Equal(t, gone.GetDepartedAt().AsTime(), arrived.GetDepartedAt().AsTime(), "the first departure stands")
	for range 2 {
		_, err = mark(supervisor, catalogv1.TripMark_TRIP_MARK_DEPARTED, "")
		require.NoError(t, err, "marking again changes nothing")
		_, err = mark(supervisor, catalogv1.TripMark_TRIP_MARK_ARRIVED, "")
		require.NoError(t, err)
	}
	entries, err := as(t, env, "ops", auth.RoleAdmin).catalog.ListAuditEntries(ctx, connect.NewRequest(&catalogv1.ListAuditEntriesRequest{
		OrganizationId: "green-line", Action: "trip."}))
	require.NoError(t, err)
	var actions []string
	for _, e := range entries.Msg.GetEntries() {
		actions = append(actions, e.GetAction()+" by "+e.GetActorId())
	}
	require.Equal(t, []string{"trip.arrive by supervisor", "trip.depart by supervisor", "trip.depart by supervisor"}, actions)

	// Gone from Cumilla unmarked at Dhaka: it has left Dhaka too.
	req = tripShow("Dhaka to Chattogram 10:00", 1, 0, "Dhaka", "Cumilla", "Chattogram")
	req.OrganizationId = "green-line"
	req.OnSaleAt = timestamppb.New(start.Add(-time.Hour))
	req.StartsAt = timestamppb.New(clk.Now().Add(10 * time.Minute))
	skipped := createShow(t, env, req).GetShowId()
	clk.Set(clk.Now().Add(50 * time.Minute)) // boarding in Cumilla
	r, err := supervisor.catalog.MarkTrip(ctx, connect.NewRequest(&catalogv1.MarkTripRequest{ShowId: skipped,
		Mark: catalogv1.TripMark_TRIP_MARK_DEPARTED, StopId: "cumilla"}))
	require.NoError(t, err)
	require.Equal(t, clk.Now(), r.Msg.GetShow().GetDepartedAt().AsTime(), "gone from a later stop, it left its first")

	concert := seatedShow("Not a coach", 1, 2)
	concert.OrganizationId = "green-line"
	c := createShow(t, env, concert)
	_, err = supervisor.catalog.MarkTrip(ctx, connect.NewRequest(&catalogv1.MarkTripRequest{ShowId: c.GetShowId(),
		Mark: catalogv1.TripMark_TRIP_MARK_DEPARTED}))
	requireReason(t, err, connect.CodeInvalidArgument, "SHOW_INVALID")
}
