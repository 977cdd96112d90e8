package api_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	ledgerv1 "github.com/seatghor/seatghor/gen/seatghor/ledger/v1"
	paymentv1 "github.com/seatghor/seatghor/gen/seatghor/payment/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/gateway"
	"github.com/seatghor/seatghor/server/gateway/sandbox"
	"github.com/seatghor/seatghor/server/ledger"
	"github.com/seatghor/seatghor/server/payment"
)

// manualRefund asks for a manual refund of amount of a payment as c.
func manualRefund(c clients, paymentID string, amount int64) (*paymentv1.Refund, error) {
	resp, err := c.pay.RefundPayment(context.Background(), connect.NewRequest(&paymentv1.RefundPaymentRequest{
		PaymentId: paymentID, AmountMinor: amount, Note: "goodwill"}))
	if err != nil {
		return nil, err
	}
	return resp.Msg.GetRefund(), nil
}

// paidOrder books seats of a show for a new buyer and returns the payment.
func paidOrder(t *testing.T, env *apptest.Env, showID int64, buyerID string, seats ...string) *paymentv1.Payment {
	t.Helper()
	b := newBuyer(t, env, buyerID)
	p, err := b.pay(b.order(showID, seats...).GetOrderId(), "tok_success")
	require.NoError(t, err)
	require.Equal(t, paymentv1.PaymentState_PAYMENT_STATE_SUCCEEDED, p.GetStatus())
	return p
}

// showOnShard is a seated show placed on a given shard.
func showOnShard(t *testing.T, env *apptest.Env, title string, shardIndex int32) int64 {
	req := seatedShow(title, 1, 10)
	req.Shard = proto.Int32(shardIndex)
	return createShow(t, env, req).GetShowId()
}

// TestManualRefundsCountTheChargesTotal (R-10, decision 0060): a manual
// refund needs a second admin when it brings what the charge has given back
// or is giving back (pending refunds included) to the threshold, whoever
// asks and however small it is.
func TestManualRefundsCountTheChargesTotal(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 1, Payments: payment.Config{RefundApprovalMinor: 100000}})
	show := showOnShard(t, env, "Splitting", 0)
	p := paidOrder(t, env, show, "buyer", "A1", "A2") // 1,700 Tk
	ana, bob := as(t, env, "ana", auth.RoleAdmin), as(t, env, "bob", auth.RoleAdmin)

	r, err := manualRefund(ana, p.GetPaymentId(), 60000)
	require.NoError(t, err)
	require.Equal(t, paymentv1.RefundStatus_REFUND_STATUS_SUCCEEDED, r.GetStatus(), "under the threshold: at once")
	r, err = manualRefund(bob, p.GetPaymentId(), 40000)
	require.NoError(t, err)
	require.Equal(t, paymentv1.RefundStatus_REFUND_STATUS_AWAITING_APPROVAL, r.GetStatus(),
		"60,000 + 40,000 reaches the threshold on this charge, though bob asked for nothing else")
	r, err = manualRefund(ana, p.GetPaymentId(), 100)
	require.NoError(t, err)
	require.Equal(t, paymentv1.RefundStatus_REFUND_STATUS_AWAITING_APPROVAL, r.GetStatus(),
		"the refund still awaiting approval counts too")
	require.Len(t, env.Gateway.Refunds(), 1)
}

// TestManualRefundsCountTheRequestersDay (R-10, decision 0060): what one
// admin gives back without a second person is bounded over 24 hours and
// over every charge and shard, not per charge.
func TestManualRefundsCountTheRequestersDay(t *testing.T) {
	start := time.Now().UTC()
	clk := clock.NewFake(start)
	env := apptest.New(t, apptest.Options{Shards: 2, Clock: clk, Payments: payment.Config{RefundApprovalMinor: 100000}})
	first := paidOrder(t, env, showOnShard(t, env, "Shard 0", 0), "buyer-1", "A1", "A2")
	second := paidOrder(t, env, showOnShard(t, env, "Shard 1", 1), "buyer-2", "A1", "A2")
	third := paidOrder(t, env, showOnShard(t, env, "Shard 1 again", 1), "buyer-3", "A1", "A2")
	ana := as(t, env, "ana", auth.RoleAdmin)

	r, err := manualRefund(ana, first.GetPaymentId(), 60000)
	require.NoError(t, err)
	require.Equal(t, paymentv1.RefundStatus_REFUND_STATUS_SUCCEEDED, r.GetStatus())
	r, err = manualRefund(ana, second.GetPaymentId(), 40000)
	require.NoError(t, err)
	require.Equal(t, paymentv1.RefundStatus_REFUND_STATUS_AWAITING_APPROVAL, r.GetStatus(),
		"ana's 60,000 on another shard today and 40,000 here reach the threshold")
	approved, err := as(t, env, "bob", auth.RoleAdmin).pay.ApproveRefund(context.Background(),
		connect.NewRequest(&paymentv1.ApproveRefundRequest{RefundId: r.GetRefundId()}))
	require.NoError(t, err)
	require.Equal(t, paymentv1.RefundStatus_REFUND_STATUS_SUCCEEDED, approved.Msg.GetRefund().GetStatus())
	r, err = manualRefund(ana, third.GetPaymentId(), 30000)
	require.NoError(t, err)
	require.Equal(t, paymentv1.RefundStatus_REFUND_STATUS_SUCCEEDED, r.GetStatus(),
		"what bob approved is not ana's alone: 60,000 + 30,000 stays under")

	clk.Set(start.Add(25 * time.Hour))
	ana = as(t, env, "ana", auth.RoleAdmin) // a token of the new day
	r, err = manualRefund(ana, third.GetPaymentId(), 60000)
	require.NoError(t, err)
	require.Equal(t, paymentv1.RefundStatus_REFUND_STATUS_SUCCEEDED, r.GetStatus(), "a day later ana's own total starts again")
}

// TestManualRefundDecisionsTakeTurns (decision 0060): many refunds asked at
// once by one admin, over several charges on two shards, never let more
// than the threshold out without a second person.
func TestManualRefundDecisionsTakeTurns(t *testing.T) {
	const threshold, each, perCharge = 100000, 30000, 4
	env := apptest.New(t, apptest.Options{Shards: 2, Payments: payment.Config{RefundApprovalMinor: threshold}})
	var payments []string
	for i, shardIndex := range []int32{0, 0, 1, 1} {
		show := showOnShard(t, env, "Race", shardIndex)
		payments = append(payments, paidOrder(t, env, show, "buyer-"+string(rune('a'+i)), "A1", "A2").GetPaymentId())
	}
	ana := as(t, env, "ana", auth.RoleAdmin)
	var (
		wg               sync.WaitGroup
		mu               sync.Mutex
		sent, waiting    int
		sentMinor, total int64
	)
	for range perCharge {
		for _, id := range payments {
			wg.Go(func() {
				r, err := manualRefund(ana, id, each)
				require.NoError(t, err)
				mu.Lock()
				defer mu.Unlock()
				total += each
				if r.GetStatus() == paymentv1.RefundStatus_REFUND_STATUS_AWAITING_APPROVAL {
					waiting++
					return
				}
				sent++
				sentMinor += each
			})
		}
	}
	wg.Wait()
	require.Less(t, sentMinor, int64(threshold), "one admin alone gave back less than the threshold")
	require.Equal(t, (threshold-1)/each, sent, "and exactly as much as fits under it")
	require.Equal(t, perCharge*len(payments)-sent, waiting)
	var back int64
	for _, r := range env.Gateway.Refunds() {
		back += r.AmountMinor
	}
	require.Equal(t, sentMinor, back)
	require.EqualValues(t, perCharge*len(payments)*each, total)
}

// TestWrongAmountCaptureIsGivenBack (R-6.8, R-6.10, decision 0061): the
// gateway captures another amount than asked; nothing is booked on it, it
// is refunded whole at once, and the buyer pays again. Afterwards the order
// has exactly one booking charge, every other capture is refunded in full,
// the books balance and reconciliation finds nothing to do.
func TestWrongAmountCaptureIsGivenBack(t *testing.T) {
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Shards: 2})
	show := createShow(t, env, seatedShow("Wrong amount", 1, 4))
	b := newBuyer(t, env, "buyer")
	o := b.order(show.GetShowId(), "A1")
	first, err := b.pay(o.GetOrderId(), sandbox.TokenWrongAmount)
	require.NoError(t, err)
	require.Equal(t, paymentv1.PaymentState_PAYMENT_STATE_RECONCILIATION_REQUIRED, first.GetStatus())
	require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_PENDING_PAYMENT, b.getOrder(o.GetOrderId()).GetStatus())
	settle(t, env)

	second, err := b.pay(o.GetOrderId(), "tok_success")
	require.NoError(t, err)
	require.Equal(t, paymentv1.PaymentState_PAYMENT_STATE_SUCCEEDED, second.GetStatus())
	require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_CONFIRMED, b.getOrder(o.GetOrderId()).GetStatus())
	// A redelivered capture and a reconciliation run refund nothing twice.
	for _, c := range env.Gateway.ChargesFor(first.GetPaymentId()) {
		require.NoError(t, env.App.Payments.Apply(ctx, c))
	}
	rec, err := env.App.Payments.Reconcile(ctx, payment.ReconcileRequest{From: time.Now().Add(-time.Hour), To: time.Now().Add(time.Hour)})
	require.NoError(t, err)
	require.Empty(t, rec.Mismatches)
	settle(t, env)

	refunded := map[string]int64{}
	for _, r := range env.Gateway.Refunds() {
		refunded[r.ChargeID] += r.AmountMinor
	}
	var kept []gateway.Charge
	captures := 0
	for _, ref := range []string{first.GetPaymentId(), second.GetPaymentId()} {
		for _, c := range env.Gateway.ChargesFor(ref) {
			if c.Status != gateway.StatusSucceeded {
				continue
			}
			captures++
			if refunded[c.ID] == 0 {
				kept = append(kept, c)
				continue
			}
			require.Equal(t, c.AmountMinor, refunded[c.ID], "a capture that booked nothing is refunded in full")
		}
	}
	require.Equal(t, 2, captures)
	require.Len(t, kept, 1, "one booking charge per order")
	require.Equal(t, second.GetGatewayReference(), kept[0].ID)
	require.EqualValues(t, 85000, kept[0].AmountMinor)
	require.Len(t, env.Gateway.Refunds(), 1)
	require.Equal(t, 1, journals(t, env, ledger.KindBooking, o.GetOrderId()))
	bal := trialBalance(t, env)
	require.Zero(t, bal[ledger.AccountRefundsPayable], "nothing is owed back any more")
}

// TestFailureOfAnotherChargeLeavesTheAttemptOpen: a failed charge
// that names our attempt but was not sent with its key does not close the
// attempt; the attempt's own charge still books the order.
func TestFailureOfAnotherChargeLeavesTheAttemptOpen(t *testing.T) {
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Shards: 1})
	show := createShow(t, env, seatedShow("Not ours", 1, 4))
	b := newBuyer(t, env, "buyer")
	o := b.order(show.GetShowId(), "A1")
	p, err := b.pay(o.GetOrderId(), "") // the redirect flow: pending
	require.NoError(t, err)
	require.Equal(t, paymentv1.PaymentState_PAYMENT_STATE_PENDING, p.GetStatus())

	require.NoError(t, env.App.Payments.Apply(ctx, gateway.Charge{
		ID: "ch_someone_else", IdempotencyKey: "another-key", Reference: p.GetPaymentId(),
		Status: gateway.StatusFailed, FailureCode: "declined", AmountMinor: 85000, Currency: "BDT",
	}))
	require.Equal(t, paymentv1.PaymentState_PAYMENT_STATE_PENDING, b.getPayment(p.GetPaymentId()).GetStatus())

	_, err = env.Gateway.Approve(p.GetGatewayReference())
	require.NoError(t, err)
	settle(t, env)
	require.Equal(t, paymentv1.PaymentState_PAYMENT_STATE_SUCCEEDED, b.getPayment(p.GetPaymentId()).GetStatus())
	require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_CONFIRMED, b.getOrder(o.GetOrderId()).GetStatus())
	require.Empty(t, env.Gateway.Refunds())
}

// metricValue reads a metric from the app's registry (a gauge, a
// counter, or a histogram's sample count) with the given labels.
func metricValue(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue next
				}
			}
			return value(m)
		}
	}
	return 0
}

func value(m *dto.Metric) float64 {
	switch {
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetHistogram() != nil:
		return float64(m.GetHistogram().GetSampleCount())
	}
	return 0
}

// TestRefundTheGatewayFailsIsFinalAndAlerted: a refund the
// gateway reports failed is marked FAILED and alerted, and the recovery
// job does not send it again.
func TestRefundTheGatewayFailsIsFinalAndAlerted(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	clk := clock.NewFake(start)
	env := apptest.New(t, apptest.Options{Clock: clk, Shards: 1,
		Sandbox:  sandbox.Config{Faults: sandbox.Faults{RefundFailRate: 1}},
		Payments: payment.Config{RecoverAfter: time.Minute}})
	req := seatedShow("Refund fails", 1, 4)
	req.OnSaleAt = timestamppb.New(start.Add(-time.Hour))
	req.StartsAt = timestamppb.New(start.Add(48 * time.Hour))
	show := createShow(t, env, req)
	b := newBuyer(t, env, "buyer")
	o := b.order(show.GetShowId(), "A1")
	_, err := b.pay(o.GetOrderId(), "tok_success")
	require.NoError(t, err)
	_, err = b.orders.CancelOrder(ctx, connect.NewRequest(&bookingv1.CancelOrderRequest{OrderId: o.GetOrderId()}))
	require.NoError(t, err)
	settle(t, env)

	pool := env.App.Router.Shards()[0]
	status := func() string {
		var s string
		require.NoError(t, pool.QueryRow(ctx, `SELECT status FROM refunds WHERE order_id = $1`, o.GetOrderId()).Scan(&s))
		return s
	}
	require.Equal(t, "failed", status())
	sends := func() float64 {
		return metricValue(t, env.App.Registry, "seatghor_gateway_request_seconds", map[string]string{"op": "refund"})
	}
	before := sends()
	clk.Set(start.Add(time.Hour)) // long past RecoverAfter
	require.NoError(t, env.App.Payments.Recover(ctx))
	require.NoError(t, env.App.Payments.Recover(ctx))
	require.Equal(t, before, sends(), "a failed refund is not sent again")
	require.Equal(t, "failed", status())
	require.Empty(t, env.Gateway.Refunds(), "no money moved")

	require.EqualValues(t, 1, metricValue(t, env.App.Registry, "seatghor_refunds_failed", nil))
	require.EqualValues(t, 0, metricValue(t, env.App.Registry, "seatghor_refunds_open", nil))
	require.EqualValues(t, 1, metricValue(t, env.App.Registry, "seatghor_payment_mismatches_total",
		map[string]string{"kind": "refund_failed"}))
}

// TestPayoutKeepsBackRefundsOnTheirWay (R-7, decision 0062): what refunds
// recorded but not made yet will take back from the operator is not paid
// out.
func TestPayoutKeepsBackRefundsOnTheirWay(t *testing.T) {
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Shards: 2, Payments: payment.Config{RefundApprovalMinor: 100000}})
	show := createShow(t, env, seatedShow("Payout", 1, 4))
	p := paidOrder(t, env, show.GetShowId(), "buyer", "A1", "A2") // 1,700 Tk: the operator is owed 1,530 Tk
	ana := as(t, env, "ana", auth.RoleAdmin)
	r, err := manualRefund(ana, p.GetPaymentId(), 120000)
	require.NoError(t, err)
	require.Equal(t, paymentv1.RefundStatus_REFUND_STATUS_AWAITING_APPROVAL, r.GetStatus())

	payout := func(id string, amount int64) error {
		_, err := ana.ledger.RecordPayout(ctx, connect.NewRequest(&ledgerv1.RecordPayoutRequest{
			ShowId: show.GetShowId(), PayoutId: id, Amount: &commonv1.Money{AmountMinor: amount, Currency: "BDT"}}))
		return err
	}
	// The refund will take 153,000 − 45,000 (the operator's share of the
	// 50,000 left) = 108,000 back from the operator.
	require.Equal(t, connect.CodeFailedPrecondition, connect.CodeOf(payout("trf-1", 45001)))
	require.NoError(t, payout("trf-1", 45000))

	_, err = as(t, env, "bob", auth.RoleAdmin).pay.ApproveRefund(ctx,
		connect.NewRequest(&paymentv1.ApproveRefundRequest{RefundId: r.GetRefundId()}))
	require.NoError(t, err)
	settle(t, env)
	bal := trialBalance(t, env)
	require.Zero(t, bal[ledger.AccountOperatorPayable], "the operator was paid what stayed its own, no more")
}
