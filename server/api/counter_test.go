package api_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	counterv1 "github.com/seatghor/seatghor/gen/seatghor/counter/v1"
	ticketsv1 "github.com/seatghor/seatghor/gen/seatghor/tickets/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/ledger"
	"github.com/seatghor/seatghor/server/ticket"
)

// openShift opens a shift for c at counter of org with floatMinor.
func openShift(t *testing.T, c clients, org, counter string, floatMinor int64) *counterv1.Shift {
	t.Helper()
	resp, err := c.counter.OpenShift(context.Background(), connect.NewRequest(&counterv1.OpenShiftRequest{OrganizationId: org,
		CounterId: counter, OpeningFloat: &commonv1.Money{AmountMinor: floatMinor, Currency: "BDT"}}))
	require.NoError(t, err)
	return resp.Msg.GetShift()
}

// sell sells seats of show for cash in shift, to a buyer with phone.
func sell(c clients, shift string, show int64, phone string, seats ...string) (*counterv1.SellTicketsResponse, error) {
	resp, err := c.counter.SellTickets(context.Background(), connect.NewRequest(&counterv1.SellTicketsRequest{ShiftId: shift,
		ShowId: show, Seats: seats, Contact: &commonv1.Contact{Phone: phone, Language: "bn"}}))
	if err != nil {
		return nil, err
	}
	return resp.Msg, nil
}

// TestCounterShift (issue 25 §3, decision 0443): a clerk opens a shift
// with a float, sells for cash on two shows on two shards, takes one sale
// back (less the show's fee), and closes the shift one taka short. The
// report counts the sales and the refund, and its ledger figure, summed
// over both shards, equals the cash taken less the cash given back to the
// paisa; the drawer should hold the float plus that; the trial balance is
// 0. The audit log has the shift's opening and closing. A second shift of
// the same clerk, a sale after the close, a cash
// ticket cancelled online, a web ticket refunded in cash and another
// organisation's clerk are all refused, and nothing is written for them.
func TestCounterShift(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 2})
	ctx := context.Background()
	env.Member(t, "green-line", "clerk", catalog.RoleCounter)
	env.Member(t, "green-line", "boss", catalog.RoleManager)
	env.Member(t, "other-line", "other-clerk", catalog.RoleCounter)
	var shows [2]int64
	for i := range shows {
		req := seatedShow(fmt.Sprintf("Dhaka → Sylhet %d", i), 2, 4)
		req.OrganizationId, req.Shard = "green-line", new(int32(i))
		shows[i] = createShow(t, env, req).GetShowId()
	}
	clerk := as(t, env, "clerk", auth.RoleOperator)
	shift := openShift(t, clerk, "green-line", "kalabagan", 50000)
	require.Equal(t, counterv1.ShiftStatus_SHIFT_STATUS_OPEN, shift.GetStatus())
	_, err := clerk.counter.OpenShift(ctx, connect.NewRequest(&counterv1.OpenShiftRequest{OrganizationId: "green-line", CounterId: "sayedabad"}))
	requireReason(t, err, connect.CodeFailedPrecondition, "COUNTER_SHIFT_OPEN")
	other := as(t, env, "other-clerk", auth.RoleOperator)
	_, err = other.counter.OpenShift(ctx, connect.NewRequest(&counterv1.OpenShiftRequest{OrganizationId: "green-line", CounterId: "gabtoli"}))
	requireReason(t, err, connect.CodePermissionDenied, "COUNTER_FORBIDDEN")

	first, err := sell(clerk, shift.GetShiftId(), shows[0], "01711-000001", "A1", "A2")
	require.NoError(t, err)
	require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_CONFIRMED, first.GetOrder().GetStatus())
	require.EqualValues(t, 170000, first.GetEntry().GetAmount().GetAmountMinor())
	require.Equal(t, "booking:"+first.GetOrder().GetOrderId(), first.GetEntry().GetLedgerTxnId())
	// The tickets print on the counter's 80 mm printer, for its staff.
	pdf, err := clerk.counter.GetCounterTicket(ctx, connect.NewRequest(&counterv1.GetCounterTicketRequest{
		OrderId: first.GetOrder().GetOrderId(), Language: "bn"}))
	require.NoError(t, err)
	require.Equal(t, "application/pdf", pdf.Msg.GetContentType())
	require.True(t, strings.HasPrefix(string(pdf.Msg.GetData()), "%PDF-"))
	require.True(t, strings.Contains(string(pdf.Msg.GetData()), "/MediaBox[0 0 226.77"), "80 mm wide")
	_, err = other.counter.GetCounterTicket(ctx, connect.NewRequest(&counterv1.GetCounterTicketRequest{OrderId: first.GetOrder().GetOrderId()}))
	requireReason(t, err, connect.CodePermissionDenied, "COUNTER_FORBIDDEN")
	second, err := sell(clerk, shift.GetShiftId(), shows[1], "01711-000002", "B4")
	require.NoError(t, err)
	_, err = sell(clerk, shift.GetShiftId(), shows[1], "01711-000003", "B4")
	require.Equal(t, connect.CodeAborted, connect.CodeOf(err), "the seat is sold: %v", err)

	// A cash ticket goes back at the counter, not online; a web ticket
	// goes back online, not in cash.
	buyer := newBuyer(t, env, second.GetOrder().GetUserId())
	_, err = buyer.orders.CancelOrder(ctx, connect.NewRequest(&bookingv1.CancelOrderRequest{OrderId: second.GetOrder().GetOrderId()}))
	requireReason(t, err, connect.CodeFailedPrecondition, "PAID_AT_COUNTER")
	web := paid(t, newBuyer(t, env, "web-buyer"), shows[1], "A1")
	_, err = clerk.counter.RefundTickets(ctx, connect.NewRequest(&counterv1.RefundTicketsRequest{ShiftId: shift.GetShiftId(), OrderId: web.GetOrderId()}))
	requireReason(t, err, connect.CodeFailedPrecondition, "COUNTER_REFUND_REFUSED")
	back, err := clerk.counter.RefundTickets(ctx, connect.NewRequest(&counterv1.RefundTicketsRequest{ShiftId: shift.GetShiftId(),
		OrderId: second.GetOrder().GetOrderId()}))
	require.NoError(t, err)
	require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_CANCELLED, back.Msg.GetOrder().GetStatus())
	require.EqualValues(t, -76500, back.Msg.GetEntry().GetAmount().GetAmountMinor(), "85,000 less the 10 % fee")
	require.Equal(t, []string{"counter.refund by clerk"}, shardAudit(t, env, shows[1], "order:"+second.GetOrder().GetOrderId()),
		"the cash refund is in the shard's audit log (decision 0452)")
	_, err = clerk.counter.RefundTickets(ctx, connect.NewRequest(&counterv1.RefundTicketsRequest{ShiftId: shift.GetShiftId(),
		OrderId: second.GetOrder().GetOrderId()}))
	requireReason(t, err, connect.CodeFailedPrecondition, "BOOKING_NOT_ALLOWED")
	_, err = sell(clerk, shift.GetShiftId(), shows[1], "01711-000004", "B4")
	require.NoError(t, err, "the seat taken back sells again")
	report := func(r *counterv1.ShiftReport) {
		t.Helper()
		require.EqualValues(t, 3, r.GetSales())
		require.EqualValues(t, 170000+85000+85000, r.GetSalesTotal().GetAmountMinor())
		require.EqualValues(t, 1, r.GetRefunds())
		require.EqualValues(t, 76500, r.GetRefundsTotal().GetAmountMinor())
		require.EqualValues(t, 340000-76500, r.GetLedgerNet().GetAmountMinor(), "the ledger, summed over both shards")
		require.EqualValues(t, 50000+340000-76500, r.GetExpectedCash().GetAmountMinor())
		require.Len(t, r.GetEntries(), 4)
	}
	got, err := clerk.counter.GetShift(ctx, connect.NewRequest(&counterv1.GetShiftRequest{ShiftId: shift.GetShiftId()}))
	require.NoError(t, err)
	report(got.Msg.GetReport())
	// `seatghor verify`'s charge check: the cash orders were never the
	// gateway's to charge; the one web order was, once.
	n, problems, err := env.App.Payments.CheckChargedOnce(ctx, 10)
	require.NoError(t, err)
	require.Empty(t, problems, "cash orders are no charge problem")
	require.EqualValues(t, 1, n, "only the web order is the gateway's")

	closed, err := clerk.counter.CloseShift(ctx, connect.NewRequest(&counterv1.CloseShiftRequest{ShiftId: shift.GetShiftId(),
		CountedCash: &commonv1.Money{AmountMinor: 50000 + 340000 - 76500 - 100, Currency: "BDT"}}))
	require.NoError(t, err)
	r := closed.Msg.GetReport()
	report(r)
	require.Equal(t, counterv1.ShiftStatus_SHIFT_STATUS_CLOSED, r.GetShift().GetStatus())
	require.EqualValues(t, -100, r.GetDifference().GetAmountMinor(), "one taka short")
	again, err := clerk.counter.CloseShift(ctx, connect.NewRequest(&counterv1.CloseShiftRequest{ShiftId: shift.GetShiftId(),
		CountedCash: &commonv1.Money{AmountMinor: 0, Currency: "BDT"}}))
	require.NoError(t, err)
	require.EqualValues(t, -100, again.Msg.GetReport().GetDifference().GetAmountMinor(), "the first close stands")
	_, err = sell(clerk, shift.GetShiftId(), shows[0], "01711-000005", "B1")
	requireReason(t, err, connect.CodeFailedPrecondition, "COUNTER_SHIFT_CLOSED")

	boss := as(t, env, "boss", auth.RoleOperator)
	_, err = boss.counter.GetShift(ctx, connect.NewRequest(&counterv1.GetShiftRequest{ShiftId: shift.GetShiftId()}))
	require.NoError(t, err, "the organisation's manager reads the report")
	_, err = other.counter.GetShift(ctx, connect.NewRequest(&counterv1.GetShiftRequest{ShiftId: shift.GetShiftId()}))
	requireReason(t, err, connect.CodePermissionDenied, "COUNTER_FORBIDDEN")

	// The shift's opening and closing are in the organisation's audit log,
	// the close once (the second changed nothing).
	log, err := boss.catalog.ListAuditEntries(ctx, connect.NewRequest(&catalogv1.ListAuditEntriesRequest{OrganizationId: "green-line",
		Target: "counter_shift:" + shift.GetShiftId()}))
	require.NoError(t, err)
	var actions []string
	for _, e := range log.Msg.GetEntries() {
		actions = append(actions, e.GetAction()+" by "+e.GetActorId())
	}
	require.Equal(t, []string{"counter_shift.close by clerk", "counter_shift.open by clerk"}, actions)

	balances := trialBalance(t, env)
	require.EqualValues(t, 340000-76500, balances[ledger.CounterCash("green-line", "kalabagan")])
	require.Equal(t, 1, journals(t, env, ledger.KindRefund, second.GetOrder().GetOrderId()))
	// The manifest of the coach says where the cash tickets were sold.
	m, err := manifestAs(t, env, "boss", auth.RoleOperator).GetManifest(ctx, connect.NewRequest(&ticketsv1.GetManifestRequest{ShowId: shows[0]}))
	require.NoError(t, err)
	require.Len(t, m.Msg.GetEntries(), 2)
	require.Equal(t, ticketsv1.SalesChannel_SALES_CHANNEL_COUNTER, m.Msg.GetEntries()[0].GetChannel())
}

// TestCounterAndOnlineRace (issue 25 §3, decision 0444): on a 40-seat coach
// keeping 4 seats for walk-ins, 16 online buyers and 4 counter clerks go
// for the same seats at once, in random order. No seat is sold twice;
// online holds stop with WALK_IN_RESERVE when 4 seats are left, never
// fewer, while the clerks sell to the last seat. Within the last hour
// before departure, online holds are refused whatever is free, and the
// counter still sells.
func TestCounterAndOnlineRace(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 1})
	ctx := context.Background()
	for i := range 4 {
		env.Member(t, "green-line", fmt.Sprintf("clerk-%d", i), catalog.RoleCounter)
	}
	req := tripShow("Dhaka → Chattogram 21:00", 10, 60000, "Dhaka", "Chattogram")
	req.OrganizationId, req.WalkInReserveSeats, req.MaxSeatsPerAccount = "green-line", 4, 40
	show := createShow(t, env, req).GetShowId()
	seats := make([]string, 0, 40)
	for _, row := range rowsAZ(10) {
		for n := 1; n <= 4; n++ {
			seats = append(seats, fmt.Sprintf("%s%d", row, n))
		}
	}
	var online, counter, reserveRefusals atomic.Int64
	unexpected := make(chan error, 20) // anything but a lost race
	var wg sync.WaitGroup
	for i := range 16 {
		b := newBuyer(t, env, fmt.Sprintf("online-%d", i))
		wg.Go(func() {
			for _, k := range rand.Perm(len(seats)) {
				_, err := b.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{seats[k]}}))
				switch {
				case err == nil:
					online.Add(1)
				case reasonIn(err) == "WALK_IN_RESERVE":
					reserveRefusals.Add(1)
					return
				case connect.CodeOf(err) != connect.CodeAborted:
					unexpected <- err
					return
				}
			}
		})
	}
	for i := range 4 {
		clerk := as(t, env, fmt.Sprintf("clerk-%d", i), auth.RoleOperator)
		shift := openShift(t, clerk, "green-line", fmt.Sprintf("counter-%d", i), 0).GetShiftId()
		wg.Go(func() {
			for _, k := range rand.Perm(len(seats)) {
				_, err := sell(clerk, shift, show, "01811-000000", seats[k])
				switch {
				case err == nil:
					counter.Add(1)
				case connect.CodeOf(err) != connect.CodeAborted:
					unexpected <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(unexpected)
	for err := range unexpected {
		require.NoError(t, err, "only lost races")
	}
	require.Positive(t, reserveRefusals.Load(), "online buyers met the reserve")
	require.EqualValues(t, 40, online.Load()+counter.Load(), "every seat went, once")
	require.LessOrEqual(t, online.Load(), int64(36), "online sales leave the 4 seats of the reserve")
	require.GreaterOrEqual(t, counter.Load(), int64(4), "the counters sold at least the reserve")
	pool, err := env.App.Router.ForShow(ctx, show)
	require.NoError(t, err)
	var twice int
	require.NoError(t, pool.QueryRow(ctx, `
		SELECT count(*) FROM (SELECT seat FROM holds, unnest(seats) seat
		                      WHERE show_id = $1 AND status IN ('active', 'ordered', 'confirmed')
		                      GROUP BY seat HAVING count(*) > 1) d`, show).Scan(&twice))
	require.Zero(t, twice, "no seat in two live holds or orders")
	var free int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM seats WHERE show_id = $1 AND status = 'available'`, show).Scan(&free))
	require.Zero(t, free, "the counters sold to the last seat")

	// The last hour before departure belongs to the counter.
	late := tripShow("Dhaka → Chattogram 22:00", 10, 60000, "Dhaka", "Chattogram")
	late.OrganizationId, late.WalkInReserve = "green-line", durationpb.New(time.Hour)
	late.StartsAt = timestamppb.New(time.Now().Add(30 * time.Minute).Truncate(time.Minute))
	late.OnSaleAt = timestamppb.New(time.Now().Add(-time.Hour))
	lateShow := createShow(t, env, late).GetShowId()
	_, err = newBuyer(t, env, "online-late").holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: lateShow, Seats: []string{"A1"}}))
	requireReason(t, err, connect.CodeFailedPrecondition, "WALK_IN_RESERVE")
	clerk := as(t, env, "clerk-0", auth.RoleOperator)
	got, err := clerk.counter.GetShift(ctx, connect.NewRequest(&counterv1.GetShiftRequest{ShiftId: openShiftOf(t, env, "clerk-0")}))
	require.NoError(t, err)
	_, err = sell(clerk, got.Msg.GetReport().GetShift().GetShiftId(), lateShow, "01811-000000", "A1")
	require.NoError(t, err, "the counter sells until the departure")
}

// openShiftOf is the id of user's open shift.
func openShiftOf(t *testing.T, env *apptest.Env, user string) string {
	t.Helper()
	var id string
	require.NoError(t, env.App.Router.Catalog().QueryRow(context.Background(),
		`SELECT shift_id FROM counter_shifts WHERE user_id = $1 AND closed_at IS NULL`, user).Scan(&id))
	return id
}

// reasonIn is the reason of an API error, "" for none: for goroutines,
// which must not stop the test.
func reasonIn(err error) string {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return ""
	}
	for _, d := range ce.Details() {
		if v, derr := d.Value(); derr == nil {
			if info, ok := v.(*errdetails.ErrorInfo); ok {
				return info.GetReason()
			}
		}
	}
	return ""
}

// TestCashTicketTakenBackIsToldBySMS (issue 25): a ticket sold for cash
// and taken back at a counter is void, and its buyer is told so by SMS in
// the language of the sale, with the cash given back (the show's 10 % fee
// kept), once, whoever brought it to the counter. The clerk types the
// ticket number the ticket prints (decision 0476); one no order has is
// refused, nothing taken back.
func TestCashTicketTakenBackIsToldBySMS(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 1, Clock: clock.Real{}, Tickets: true, Projectors: true})
	ctx := context.Background()
	env.Member(t, "green-line", "clerk", catalog.RoleCounter)
	req := seatedShow("Dhaka → Sylhet", 2, 4)
	req.OrganizationId = "green-line"
	show := createShow(t, env, req).GetShowId()
	clerk := as(t, env, "clerk", auth.RoleOperator)
	shift := openShift(t, clerk, "green-line", "sayedabad", 0)
	sold, err := sell(clerk, shift.GetShiftId(), show, "01711-000009", "A1")
	require.NoError(t, err)
	order := sold.GetOrder().GetOrderId()
	env.WaitProjected(t, "mytickets")
	_, err = clerk.counter.RefundTickets(ctx, connect.NewRequest(&counterv1.RefundTicketsRequest{ShiftId: shift.GetShiftId(), OrderId: "ZZZZZZZZZZ"}))
	requireReason(t, err, connect.CodeNotFound, "BOOKING_NOT_FOUND")
	typed := strings.ToLower(ticket.Number(order)) // as a clerk types it
	back, err := clerk.counter.RefundTickets(ctx, connect.NewRequest(&counterv1.RefundTicketsRequest{ShiftId: shift.GetShiftId(), OrderId: typed}))
	require.NoError(t, err)
	require.Equal(t, order, back.Msg.GetOrder().GetOrderId(), "the number's order")
	settle(t, env)
	void := func() []string {
		all, err := env.SMS.List(ctx, "+8801711000009", 100)
		require.NoError(t, err)
		var out []string
		for _, m := range all {
			if strings.Contains(m.Text, "কাউন্টারে বাতিল") {
				out = append(out, m.Text)
			}
		}
		return out
	}
	require.Eventually(t, func() bool { return len(void()) == 1 }, 15*time.Second, 50*time.Millisecond)
	settle(t, env)
	texts := void()
	require.Len(t, texts, 1, "told once")
	require.Contains(t, texts[0], ticket.Number(order), "named by its ticket number")
	require.Contains(t, texts[0], "৳৭৬৫", "85,000 paisa less the 10 % fee, in Bengali digits")
	require.Contains(t, texts[0], "বাতিল ফি ৳৮৫")
}
