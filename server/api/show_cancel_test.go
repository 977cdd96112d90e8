package api_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	counterv1 "github.com/seatghor/seatghor/gen/seatghor/counter/v1"
	eventsv1 "github.com/seatghor/seatghor/gen/seatghor/events/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/internal/testkit/mailpittest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/ledger"
	"github.com/seatghor/seatghor/server/notify"
	"github.com/seatghor/seatghor/server/payment"
)

// cancelledShowWorld is a 40-seat coach with 30 paid bookings mixed across
// the web, a partner and a counter (every third one each), 4 orders
// awaiting payment and 2 live holds: what an operator cancels in
// TestCancelShow.
type cancelledShowWorld struct {
	env                 *apptest.Env
	clk                 *clock.Fake
	show                int64
	paid, unpaid, holds []string
	// cash are the paid orders sold for cash at the counter, in shift;
	// paidTotal is what the others paid through the gateway, cashTotal
	// what the counter took.
	cash                 []string
	shift                string
	paidTotal, cashTotal int64
}

// isCash tells whether passenger i bought at the counter.
func isCash(i int) bool { return i%3 == 2 }

// phone is passenger i's mobile number, as the checkout form takes it.
func phone(i int) string { return fmt.Sprintf("01711-%06d", i) }

// contact is what passenger i gives at checkout: a phone, an e-mail for
// every other one, Bengali for every third.
func contact(i int) *commonv1.Contact {
	c := &commonv1.Contact{Phone: phone(i), Language: "en"}
	if i%2 == 0 {
		c.Email = fmt.Sprintf("passenger-%d@example.com", i)
	}
	if i%3 == 1 {
		c.Language = "bn"
	}
	return c
}

func newCancelledShowWorld(t *testing.T, opts apptest.Options) *cancelledShowWorld {
	start := time.Now().UTC().Truncate(time.Second)
	if opts.Clock == nil {
		start = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
		opts.Clock = clock.NewFake(start)
	}
	clk, _ := opts.Clock.(*clock.Fake)
	opts.Shards = 2
	env := apptest.New(t, opts)
	req := seatedShow("Dhaka → Rajshahi 22:00", 10, 4)
	req.OnSaleAt = timestamppb.New(start.Add(-time.Hour))
	req.StartsAt = timestamppb.New(start.Add(48 * time.Hour))
	req.CancellationFeeBps = new(int32(1000)) // the buyer's own cancellation keeps 10 %; the operator's none
	req.OrganizationId = "dhaka-express"
	env.Member(t, "dhaka-express", "clerk", catalog.RoleCounter)
	show := createShow(t, env, req)
	w := &cancelledShowWorld{env: env, clk: clk, show: show.GetShowId()}
	partner := newPartner(t, env, "Shohoz Travels", 500)
	seats := rowsAZ(10)
	seat := func(i int) string { return fmt.Sprintf("%s%d", seats[i/4], i%4+1) }
	clerk := as(t, env, "clerk", auth.RoleOperator)
	w.shift = openShift(t, clerk, "dhaka-express", "gabtoli", 0).GetShiftId()
	for i := range 30 {
		if isCash(i) {
			s, err := clerk.counter.SellTickets(context.Background(), connect.NewRequest(&counterv1.SellTicketsRequest{
				ShiftId: w.shift, ShowId: w.show, Seats: []string{seat(i)}, Contact: contact(i)}))
			require.NoError(t, err)
			w.paid = append(w.paid, s.Msg.GetOrder().GetOrderId())
			w.cash = append(w.cash, s.Msg.GetOrder().GetOrderId())
			w.cashTotal += s.Msg.GetEntry().GetAmount().GetAmountMinor()
			continue
		}
		b := newBuyer(t, env, fmt.Sprintf("passenger-%d", i))
		o := b.orderWith(w.show, contact(i), seat(i))
		if i%3 == 0 {
			setPartner(t, env, o.GetOrderId(), partner.GetPartnerId())
		}
		p, err := b.pay(o.GetOrderId(), "tok_success")
		require.NoError(t, err)
		w.paid = append(w.paid, o.GetOrderId())
		w.paidTotal += p.GetAmount().GetAmountMinor()
	}
	for i := 30; i < 34; i++ {
		b := newBuyer(t, env, fmt.Sprintf("passenger-%d", i))
		w.unpaid = append(w.unpaid, b.order(w.show, seat(i)).GetOrderId())
	}
	for i := 34; i < 36; i++ {
		b := newBuyer(t, env, fmt.Sprintf("passenger-%d", i))
		h, err := b.holds.CreateHold(context.Background(), connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: w.show, Seats: []string{seat(i)}}))
		require.NoError(t, err)
		w.holds = append(w.holds, h.Msg.GetHold().GetHoldId())
	}
	settle(t, env)
	return w
}

// cancelEvents counts the outbox's OrderCancelled events of each order of
// the show with the reason "show_cancelled": what the buyers' messages and
// the partners' webhooks are made from.
func (w *cancelledShowWorld) cancelEvents(t *testing.T) map[string]int {
	t.Helper()
	pool, err := w.env.App.Router.ForShow(context.Background(), w.show)
	require.NoError(t, err)
	rows, err := pool.Query(context.Background(), `
		SELECT payload FROM outbox WHERE show_id = $1 AND event_type = 'seatghor.events.v1.OrderCancelled'`, w.show)
	require.NoError(t, err)
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var raw []byte
		require.NoError(t, rows.Scan(&raw))
		var e eventsv1.OrderCancelled
		require.NoError(t, proto.Unmarshal(raw, &e))
		if e.GetReason() == "show_cancelled" {
			require.Equal(t, "ops-admin", e.GetCancelledBy())
			out[e.GetOrderId()]++
		}
	}
	require.NoError(t, rows.Err())
	return out
}

// check says the cancellation is through: every order cancelled once,
// every one paid online refunded in full exactly once at the gateway,
// every cash one owed in full once at the counter, nothing held, the
// ledger balanced.
func (w *cancelledShowWorld) check(t *testing.T, admin clients) *catalogv1.ShowCancellation {
	t.Helper()
	ctx := context.Background()
	refunds := map[string]int64{}
	var sum int64
	for _, r := range w.env.Gateway.Refunds() {
		refunds[r.ChargeID] += r.AmountMinor
		sum += r.AmountMinor
	}
	require.Len(t, refunds, 20, "one refund per booking paid online")
	require.Len(t, w.env.Gateway.Refunds(), 20, "never two")
	require.Equal(t, w.paidTotal, sum, "each refunded in full: no fee when the operator cancels")
	events := w.cancelEvents(t)
	require.Len(t, events, 34, "every order, paid or not, is cancelled")
	for id, n := range events {
		require.Equal(t, 1, n, "order %s cancelled once", id)
	}
	for _, id := range w.paid {
		require.Equal(t, 1, journals(t, w.env, ledger.KindRefund, id), "one refund journal for %s", id)
	}
	balances := trialBalance(t, w.env)
	require.Equal(t, -w.cashTotal, balances[ledger.CounterOwed("dhaka-express", "gabtoli")], "the cash tickets are owed in full at the counter")
	require.Equal(t, w.cashTotal, balances[ledger.CounterCash("dhaka-express", "gabtoli")], "none paid out yet")
	got, err := admin.catalog.GetShowCancellation(ctx, connect.NewRequest(&catalogv1.GetShowCancellationRequest{ShowId: w.show}))
	require.NoError(t, err)
	c := got.Msg.GetCancellation()
	require.Zero(t, c.GetOrdersLeft())
	require.EqualValues(t, 34, c.GetOrdersCancelled())
	require.EqualValues(t, 20, c.GetRefundsSucceeded(), "the cash ones are owed at the counter, not refunded online")
	require.Zero(t, c.GetRefundsPending())
	require.Zero(t, c.GetRefundsFailed())
	require.Equal(t, w.paidTotal, c.GetRefunded().GetAmountMinor())
	return c
}

// TestCancelShow (issue 25 §5, decision 0440): an operator cancels a coach
// with 30 paid bookings (web and a partner's), 4 unpaid orders and 2 live
// holds. The job, run by two workers at once, cancels every order once and
// refunds every paid one in full through the gateway, releases the holds;
// the trial balance is 0; the show leaves sale at once (a hold, an order
// and a buyer's own cancellation are refused); cancelling again changes
// nothing; the job is done only after its grace.
func TestCancelShow(t *testing.T) {
	w := newCancelledShowWorld(t, apptest.Options{})
	ctx := context.Background()
	admin := as(t, w.env, "ops-admin", auth.RoleAdmin)
	late := newBuyer(t, w.env, "late-buyer")

	resp, err := admin.catalog.CancelShow(ctx, connect.NewRequest(&catalogv1.CancelShowRequest{
		ShowId: w.show, Reason: "Road closed by floods at Sirajganj"}))
	require.NoError(t, err)
	c := resp.Msg.GetCancellation()
	require.EqualValues(t, 34, c.GetOrdersLeft(), "nothing ended before the job runs")
	require.Nil(t, c.GetDoneAt())

	// Sales stop with the cancellation's commit, before the job runs.
	_, err = late.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: w.show, Seats: []string{"J4"}}))
	requireReason(t, err, connect.CodeFailedPrecondition, "SHOW_CANCELLED")
	first := newBuyer(t, w.env, "passenger-34")
	_, err = first.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: w.holds[0]}))
	requireReason(t, err, connect.CodeFailedPrecondition, "SHOW_CANCELLED")
	owner := newBuyer(t, w.env, "passenger-0")
	_, err = owner.orders.CancelOrder(ctx, connect.NewRequest(&bookingv1.CancelOrderRequest{OrderId: w.paid[0]}))
	requireReason(t, err, connect.CodeFailedPrecondition, "SHOW_CANCELLED")
	show, err := admin.catalog.GetShow(ctx, connect.NewRequest(&catalogv1.GetShowRequest{ShowId: w.show}))
	require.NoError(t, err)
	require.NotNil(t, show.Msg.GetShow().GetCancelledAt())
	require.Equal(t, "Road closed by floods at Sirajganj", show.Msg.GetShow().GetCancelReason())

	// Two workers run the job at once: each order is ended by one.
	var wg sync.WaitGroup
	ended := make([]int, 2)
	for i := range ended {
		wg.Go(func() {
			n, err := w.env.App.Payments.RunCancellations(ctx)
			require.NoError(t, err)
			ended[i] = n
		})
	}
	wg.Wait()
	require.Equal(t, 36, ended[0]+ended[1], "34 orders and 2 holds, each ended by one worker")
	settle(t, w.env)
	c = w.check(t, admin)
	require.Nil(t, c.GetDoneAt(), "the job keeps looking during its grace")
	for _, id := range append(append([]string{}, w.paid...), w.unpaid...) {
		o, err := admin.orders.GetOrder(ctx, connect.NewRequest(&bookingv1.GetOrderRequest{OrderId: id}))
		require.NoError(t, err)
		require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_CANCELLED, o.Msg.GetOrder().GetStatus(), id)
	}

	// Again, by API and by job: nothing changes.
	again, err := admin.catalog.CancelShow(ctx, connect.NewRequest(&catalogv1.CancelShowRequest{
		ShowId: w.show, Reason: "a second try"}))
	require.NoError(t, err)
	require.Equal(t, "Road closed by floods at Sirajganj", again.Msg.GetCancellation().GetReason(), "the first cancellation stands")
	n, err := w.env.App.Payments.RunCancellations(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
	w.clk.Advance(2 * time.Minute)
	_, err = w.env.App.Payments.RunCancellations(ctx)
	require.NoError(t, err)
	settle(t, w.env)
	c = w.check(t, admin)
	require.NotNil(t, c.GetDoneAt(), "done after the grace")

	// The cash is paid out at the counter, once, and the shift's report
	// and the ledger say so.
	clerk := as(t, w.env, "clerk", auth.RoleOperator)
	out, err := clerk.counter.PayOwed(ctx, connect.NewRequest(&counterv1.PayOwedRequest{ShiftId: w.shift, OrderId: w.cash[0]}))
	require.NoError(t, err)
	require.Equal(t, counterv1.CashEntryKind_CASH_ENTRY_KIND_PAYOUT, out.Msg.GetEntry().GetKind())
	twice, err := clerk.counter.PayOwed(ctx, connect.NewRequest(&counterv1.PayOwedRequest{ShiftId: w.shift, OrderId: w.cash[0]}))
	require.NoError(t, err)
	require.Equal(t, out.Msg.GetEntry().GetLedgerTxnId(), twice.Msg.GetEntry().GetLedgerTxnId(), "paid once")
	require.Equal(t, []string{"counter.pay_owed by clerk"}, shardAudit(t, w.env, w.show, "order:"+w.cash[0]),
		"paid out once, in the shard's audit log (decision 0452)")
	_, err = clerk.counter.PayOwed(ctx, connect.NewRequest(&counterv1.PayOwedRequest{ShiftId: w.shift, OrderId: w.paid[0]}))
	requireReason(t, err, connect.CodeFailedPrecondition, "COUNTER_REFUND_REFUSED")
	report, err := clerk.counter.GetShift(ctx, connect.NewRequest(&counterv1.GetShiftRequest{ShiftId: w.shift}))
	require.NoError(t, err)
	r := report.Msg.GetReport()
	require.EqualValues(t, 10, r.GetSales())
	require.EqualValues(t, 1, r.GetPayouts())
	paidOut := -out.Msg.GetEntry().GetAmount().GetAmountMinor()
	require.Equal(t, w.cashTotal-paidOut, r.GetLedgerNet().GetAmountMinor())
	require.Equal(t, w.cashTotal-paidOut, r.GetExpectedCash().GetAmountMinor())
	balances := trialBalance(t, w.env)
	require.Equal(t, paidOut-w.cashTotal, balances[ledger.CounterOwed("dhaka-express", "gabtoli")])
}

// TestCancelShowInterrupted: a job stopped after some orders (its context
// ends mid-way, as a killed worker's transactions do) leaves every order
// either ended and refunded or untouched; the next run finishes it, and
// the result is the one of a run never stopped.
func TestCancelShowInterrupted(t *testing.T) {
	w := newCancelledShowWorld(t, apptest.Options{})
	admin := as(t, w.env, "ops-admin", auth.RoleAdmin)
	_, err := admin.catalog.CancelShow(context.Background(), connect.NewRequest(&catalogv1.CancelShowRequest{
		ShowId: w.show, Reason: "Coach broke down"}))
	require.NoError(t, err)

	ctx, stop := context.WithCancel(context.Background())
	go func() {
		// Stop once a few refunds reached the gateway.
		for len(w.env.Gateway.Refunds()) < 5 {
			time.Sleep(time.Millisecond)
		}
		stop()
	}()
	_, err = w.env.App.Payments.RunCancellations(ctx)
	require.Error(t, err, "the run was stopped mid-way")
	stop()
	part := len(w.env.Gateway.Refunds())
	require.Less(t, part, 30, "stopped before the end")

	n, err := w.env.App.Payments.RunCancellations(context.Background())
	require.NoError(t, err)
	require.Positive(t, n)
	// A refund recorded but not sent when the run stopped goes out with
	// the recovery job, as any unanswered refund does, once it is old
	// enough to ask about.
	w.clk.Advance(2 * time.Minute)
	require.NoError(t, w.env.App.Payments.Recover(context.Background()))
	settle(t, w.env)
	w.check(t, admin)
}

// TestCancelShowTellsEveryPassengerOnce (issue 25 §1, §5): with the
// projectors and the payment workers running as in production, the
// cancellation of the coach sends each of the 30 paying passengers one
// "trip cancelled" SMS, in the language of the checkout, and one e-mail
// to those who gave an address (to a real mailpit); the 4 who never paid
// and the 2 who only held are told nothing, and nobody hears of it twice.
func TestCancelShowTellsEveryPassengerOnce(t *testing.T) {
	mail := mailpittest.Start(t)
	smtp, err := notify.NewSMTP(notify.SMTPConfig{Host: mail.SMTPHost, Port: mail.SMTPPort, From: "Seatghor <tickets@seatghor.test>"})
	require.NoError(t, err)
	w := newCancelledShowWorld(t, apptest.Options{Clock: clock.Real{}, Tickets: true, Projectors: true, Mail: smtp,
		PaymentWorkers: &payment.WorkerConfig{Poll: 50 * time.Millisecond, CancelEvery: 100 * time.Millisecond}})
	ctx := context.Background()
	admin := as(t, w.env, "ops-admin", auth.RoleAdmin)
	_, err = admin.catalog.CancelShow(ctx, connect.NewRequest(&catalogv1.CancelShowRequest{
		ShowId: w.show, Reason: "Road closed by floods at Sirajganj"}))
	require.NoError(t, err)

	cancelledSMS := func() map[string][]string {
		all, err := w.env.SMS.List(ctx, "", 1000)
		require.NoError(t, err)
		out := map[string][]string{}
		for _, m := range all {
			if strings.Contains(m.Text, "cancelled by the operator") || strings.Contains(m.Text, "বাতিল হয়েছে") {
				out[m.To] = append(out[m.To], m.Text)
			}
		}
		return out
	}
	cancelledMail := func() map[string]int {
		all, err := mail.Messages(ctx)
		require.NoError(t, err)
		out := map[string]int{}
		for _, m := range all {
			if strings.HasPrefix(m.Subject, "Trip cancelled") || strings.HasPrefix(m.Subject, "যাত্রা বাতিল") {
				for _, to := range m.To {
					out[to.Address]++
				}
			}
		}
		return out
	}
	require.Eventually(t, func() bool { return len(cancelledSMS()) == 30 && len(cancelledMail()) == 15 },
		60*time.Second, 200*time.Millisecond, "every paying passenger told by SMS, and by e-mail when they gave one")
	settle(t, w.env)
	time.Sleep(2 * time.Second) // anything sent twice would have come by now
	sms, mails := cancelledSMS(), cancelledMail()
	for i := range 30 {
		texts := sms["+88"+strings.ReplaceAll(phone(i), "-", "")]
		require.Len(t, texts, 1, "passenger %d told once by SMS", i)
		switch {
		case contact(i).GetLanguage() == "bn" && isCash(i):
			require.Contains(t, texts[0], "কাউন্টার থেকে নগদ ফেরত নিন", "in Bengali as chosen at checkout; cash at the counter")
		case contact(i).GetLanguage() == "bn":
			require.Contains(t, texts[0], "বাতিল হয়েছে", "in Bengali as chosen at checkout")
		case isCash(i):
			require.Contains(t, texts[0], "refunded in full in cash at the counter")
		default:
			require.Contains(t, texts[0], "refunded in full.")
		}
		if contact(i).GetEmail() != "" {
			require.Equal(t, 1, mails[contact(i).GetEmail()], "passenger %d told once by e-mail", i)
		}
	}
	require.Len(t, sms, 30, "those who never paid are not told of a refund")
	w.check(t, admin)
}
