package api_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	seatmapv1 "github.com/seatghor/seatghor/gen/seatghor/seatmap/v1"
	ticketsv1 "github.com/seatghor/seatghor/gen/seatghor/tickets/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/ticket"
)

// checkInByID scans a ticket id typed in by hand at gate.
func checkInByID(ctx context.Context, env *apptest.Env, t *testing.T, showID int64, id, gate string) (*ticketsv1.CheckInTicketResponse, error) {
	r, err := ticketsAs(t, env, "admin", auth.RoleAdmin).CheckInTicket(ctx, connect.NewRequest(&ticketsv1.CheckInTicketRequest{
		ShowId: showID, Ticket: &ticketsv1.CheckInTicketRequest_TicketId{TicketId: id}, Gate: gate}))
	if err != nil {
		return nil, err
	}
	return r.Msg, nil
}

// TestCheckedInOrderIsNotCancellable: once a ticket of an order is admitted
// at the gate (a passenger scanned at boarding), the order cannot be
// cancelled: nothing is refunded and its seats are not sold again
// (decision 0065). Its other tickets still admit.
func TestCheckedInOrderIsNotCancellable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Shards: 1})
	show := createShow(t, env, seatedShow("Night coach", 1, 4))
	b := newBuyer(t, env, "rumana")
	o := paid(t, b, show.GetShowId(), "A1", "A2")
	first, err := ticket.ID(o.GetOrderId(), 1)
	require.NoError(t, err)
	in, err := checkInByID(ctx, env, t, show.GetShowId(), first, "door")
	require.NoError(t, err)
	require.True(t, in.GetAdmitted())

	_, err = b.orders.CancelOrder(ctx, connect.NewRequest(&bookingv1.CancelOrderRequest{OrderId: o.GetOrderId()}))
	require.Equal(t, answer{code: connect.CodeFailedPrecondition, reason: "ORDER_CHECKED_IN"}, answerOf(t, err), "%v", err)

	settle(t, env)
	require.Empty(t, env.Gateway.Refunds(), "nothing refunded")
	got := b.getOrder(o.GetOrderId())
	require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_CONFIRMED, got.GetStatus())
	require.Zero(t, got.GetRefunded().GetAmountMinor())
	m, err := b.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: show.GetShowId()}))
	require.NoError(t, err)
	require.Equal(t, []string{"A3", "A4"}, freeSeats(m.Msg), "A1 and A2 stay booked")
	_, err = newBuyer(t, env, "karim").holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{
		ShowId: show.GetShowId(), Seats: []string{"A1"}}))
	require.Equal(t, connect.CodeAborted, connect.CodeOf(err), "A1 is not for sale again: %v", err)

	second, err := ticket.ID(o.GetOrderId(), 2)
	require.NoError(t, err)
	in, err = checkInByID(ctx, env, t, show.GetShowId(), second, "door")
	require.NoError(t, err)
	require.True(t, in.GetAdmitted(), "the order stands: its second ticket admits")
}

// TestCancelAndCheckInOfAnOrderTakeTurns: buyers cancel while the gate
// scans their tickets, many orders at once. A cancellation and a check-in of
// one order never both succeed: every order ends either cancelled and
// refunded with no ticket admitted, or admitted and confirmed with nothing
// refunded (decision 0065).
func TestCancelAndCheckInOfAnOrderTakeTurns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Shards: 1})
	const orders = 16
	show := createShow(t, env, seatedShow("Rush hour", 2, orders/2))
	type race struct {
		b         buyer
		order     *bookingv1.Order
		ticketID  string
		cancelErr error
		checkIn   *ticketsv1.CheckInTicketResponse
		checkErr  error
	}
	races := make([]*race, orders)
	seats := rowsAZ(2)
	for i := range races {
		b := newBuyer(t, env, fmt.Sprintf("buyer-%d", i))
		seat := fmt.Sprintf("%s%d", seats[i%2], i/2+1)
		o := paid(t, b, show.GetShowId(), seat)
		id, err := ticket.ID(o.GetOrderId(), 1)
		require.NoError(t, err)
		races[i] = &race{b: b, order: o, ticketID: id}
	}
	gate := ticketsAs(t, env, "admin", auth.RoleAdmin)

	start := make(chan struct{})
	var wg sync.WaitGroup
	for _, r := range races {
		wg.Go(func() {
			<-start
			_, r.cancelErr = r.b.orders.CancelOrder(ctx, connect.NewRequest(&bookingv1.CancelOrderRequest{OrderId: r.order.GetOrderId()}))
		})
		wg.Go(func() {
			<-start
			resp, err := gate.CheckInTicket(ctx, connect.NewRequest(&ticketsv1.CheckInTicketRequest{ShowId: show.GetShowId(),
				Ticket: &ticketsv1.CheckInTicketRequest_TicketId{TicketId: r.ticketID}, Gate: "platform-3"}))
			r.checkErr = err
			if err == nil {
				r.checkIn = resp.Msg
			}
		})
	}
	close(start)
	wg.Wait()
	settle(t, env)

	var cancelled, admitted int
	for i, r := range races {
		got := r.b.getOrder(r.order.GetOrderId())
		again, err := checkInByID(ctx, env, t, show.GetShowId(), r.ticketID, "recheck")
		if r.cancelErr == nil {
			cancelled++
			require.Equal(t, connect.CodeFailedPrecondition, connect.CodeOf(r.checkErr), "order %d: cancelled, yet checked in: %v", i, r.checkErr)
			require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_CANCELLED, got.GetStatus(), "order %d", i)
			require.Equal(t, got.GetTotal().GetAmountMinor()-got.GetCancellationFee().GetAmountMinor(),
				got.GetRefunded().GetAmountMinor(), "order %d: refunded less the fee", i)
			require.Equal(t, connect.CodeFailedPrecondition, connect.CodeOf(err), "order %d: no admission after: %v", i, err)
			continue
		}
		admitted++
		require.Equal(t, connect.CodeFailedPrecondition, connect.CodeOf(r.cancelErr), "order %d: %v", i, r.cancelErr)
		require.NoError(t, r.checkErr, "order %d: neither cancelled nor admitted", i)
		require.True(t, r.checkIn.GetAdmitted(), "order %d", i)
		require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_CONFIRMED, got.GetStatus(), "order %d", i)
		require.Zero(t, got.GetRefunded().GetAmountMinor(), "order %d: admitted, yet refunded", i)
		require.NoError(t, err)
		require.True(t, again.GetAlreadyCheckedIn(), "order %d", i)
	}
	require.Len(t, env.Gateway.Refunds(), cancelled, "one refund per cancelled order, none for admitted ones")
	t.Logf("%d cancelled, %d admitted", cancelled, admitted)
}

// TestTicketIDHasOneSpelling: a ticket id typed at the gate is accepted only
// as printed; "…_0001", "…_+01" and other spellings of an admitted ticket
// are refused as invalid, naming the field, and do not admit it again; the
// printed id (in any letter case, with spaces around it: decision 0298)
// and its signed code answer "already checked in" with the first
// admission's time and gate (decision 0066).
func TestTicketIDHasOneSpelling(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Shards: 1})
	show := createShow(t, env, seatedShow("Spelling bee", 1, 4))
	o := paid(t, newBuyer(t, env, "rumana"), show.GetShowId(), "A1")
	id, err := ticket.ID(o.GetOrderId(), 1)
	require.NoError(t, err)
	first, err := checkInByID(ctx, env, t, show.GetShowId(), id, "north")
	require.NoError(t, err)
	require.True(t, first.GetAdmitted())
	at := first.GetTicket().GetCheckedInAt().AsTime()

	showPart := fmt.Sprint(show.GetShowId())
	base := strings.TrimSuffix(id, "_001")
	for _, spelling := range []string{
		base + "_0001", base + "_+01", base + "_+001", base + "_1", base + "_01", base + "_00001",
		strings.Replace(base, "tkt_"+showPart, "tkt_0"+showPart, 1) + "_001",
		strings.Replace(base, "tkt_"+showPart, "tkt_+"+showPart, 1) + "_001",
		strings.ToUpper(base) + "_0001",
	} {
		t.Run(spelling, func(t *testing.T) {
			_, err := checkInByID(ctx, env, t, show.GetShowId(), spelling, "south")
			require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err), "%v", err)
			require.Equal(t, []string{"ticket_id"}, checkInFieldViolations(err))
		})
	}

	// A signed code carrying another spelling: not a code this platform
	// made (it signs only printed ids), so not found, and not admitted.
	codes := env.App.CheckIn.Codes()
	scanCode := func(code string) (*ticketsv1.CheckInTicketResponse, error) {
		r, err := ticketsAs(t, env, "admin", auth.RoleAdmin).CheckInTicket(ctx, connect.NewRequest(&ticketsv1.CheckInTicketRequest{
			ShowId: show.GetShowId(), Ticket: &ticketsv1.CheckInTicketRequest_Code{Code: code}, Gate: "south"}))
		if err != nil {
			return nil, err
		}
		return r.Msg, nil
	}
	_, err = scanCode(codes.Sign(base+"_0001", "A1"))
	require.Equal(t, connect.CodeNotFound, connect.CodeOf(err), "%v", err)

	// The printed id and its code: already checked in, first time and gate.
	for name, scan := range map[string]func() (*ticketsv1.CheckInTicketResponse, error){
		"typed id": func() (*ticketsv1.CheckInTicketResponse, error) {
			return checkInByID(ctx, env, t, show.GetShowId(), id, "south")
		},
		"signed code": func() (*ticketsv1.CheckInTicketResponse, error) { return scanCode(codes.Sign(id, "A1")) },
		"typed in upper case": func() (*ticketsv1.CheckInTicketResponse, error) {
			return checkInByID(ctx, env, t, show.GetShowId(), strings.ToUpper(id), "south")
		},
		"typed with spaces": func() (*ticketsv1.CheckInTicketResponse, error) {
			return checkInByID(ctx, env, t, show.GetShowId(), " "+id+"  ", "south")
		},
	} {
		again, err := scan()
		require.NoError(t, err, name)
		require.False(t, again.GetAdmitted(), name)
		require.True(t, again.GetAlreadyCheckedIn(), name)
		require.Equal(t, at, again.GetTicket().GetCheckedInAt().AsTime(), name)
		require.Equal(t, "north", again.GetTicket().GetCheckedInGate(), name)
	}
}

// checkInFieldViolations returns the fields a BadRequest detail of err names.
func checkInFieldViolations(err error) []string {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return nil
	}
	var fields []string
	for _, d := range ce.Details() {
		v, derr := d.Value()
		if br, ok := v.(*errdetails.BadRequest); derr == nil && ok {
			for _, f := range br.GetFieldViolations() {
				fields = append(fields, f.GetField())
			}
		}
	}
	return fields
}

// TestGatesShareTheAdmittedCount: every scan's answer carries how many of
// the show's tickets are checked in at every gate, this scan included; a
// second scan of a ticket does not count it again, and another show's
// check-ins are not counted (the gate page's running count, issue 11).
func TestGatesShareTheAdmittedCount(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Shards: 1})
	show := createShow(t, env, seatedShow("Counted", 1, 4))
	other := createShow(t, env, seatedShow("Elsewhere", 1, 4))
	ids := map[string]string{}
	for _, seat := range []string{"A1", "A2", "A3"} {
		o := paid(t, newBuyer(t, env, "buyer-"+seat), show.GetShowId(), seat)
		id, err := ticket.ID(o.GetOrderId(), 1)
		require.NoError(t, err)
		ids[seat] = id
	}
	o := paid(t, newBuyer(t, env, "elsewhere"), other.GetShowId(), "A1")
	elsewhere, err := ticket.ID(o.GetOrderId(), 1)
	require.NoError(t, err)
	in, err := checkInByID(ctx, env, t, other.GetShowId(), elsewhere, "west")
	require.NoError(t, err)
	require.EqualValues(t, 1, in.GetAdmittedCount())

	for _, step := range []struct {
		seat, gate string
		want       int64
	}{
		{"A1", "north", 1},
		{"A2", "south", 2},
		{"A1", "south", 2}, // already in: not counted again
		{"A3", "north", 3},
	} {
		r, err := checkInByID(ctx, env, t, show.GetShowId(), ids[step.seat], step.gate)
		require.NoError(t, err)
		require.Equal(t, step.want, r.GetAdmittedCount(), "%s at %s", step.seat, step.gate)
	}
}
