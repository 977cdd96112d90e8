package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	eventsv1 "github.com/seatghor/seatghor/gen/seatghor/events/v1"
	ledgerv1 "github.com/seatghor/seatghor/gen/seatghor/ledger/v1"
	paymentv1 "github.com/seatghor/seatghor/gen/seatghor/payment/v1"
	seatmapv1 "github.com/seatghor/seatghor/gen/seatghor/seatmap/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/gateway/sandbox"
	"github.com/seatghor/seatghor/server/ledger"
	"github.com/seatghor/seatghor/server/payment"
)

// TestEveryTokenEndsRight: whatever the sandbox does, with the payment
// jobs running as in dev mode, the order ends CONFIRMED exactly when the
// gateway holds exactly one charge for it, and quickly.
func TestEveryTokenEndsRight(t *testing.T) {
	env := apptest.New(t, apptest.Options{
		Shards: 2, GatewayTimeout: 300 * time.Millisecond,
		Payments:       payment.Config{ChargeTries: 1, RecoverAfter: 200 * time.Millisecond, NotFoundGrace: time.Second},
		PaymentWorkers: &payment.WorkerConfig{Poll: 50 * time.Millisecond, RecoverEvery: 200 * time.Millisecond, ReconcileEvery: -1},
	})
	show := createShow(t, env, seatedShow("Tokens", 2, 10))
	const (
		succeeded = paymentv1.PaymentState_PAYMENT_STATE_SUCCEEDED
		failed    = paymentv1.PaymentState_PAYMENT_STATE_FAILED
		unknown   = paymentv1.PaymentState_PAYMENT_STATE_UNKNOWN
		pending   = paymentv1.PaymentState_PAYMENT_STATE_PENDING
	)
	for i, c := range []struct {
		token     string
		answers   []paymentv1.PaymentState // what StartPayment may say at once
		confirmed bool
	}{
		{"tok_success", []paymentv1.PaymentState{succeeded}, true},
		{"tok_decline", []paymentv1.PaymentState{failed}, false},
		{"tok_insufficient_funds", []paymentv1.PaymentState{failed}, false},
		// a timeout is UNKNOWN, never FAILED; the gateway's webhook
		// may beat the answer, and then it says SUCCEEDED already.
		{"tok_timeout_applied", []paymentv1.PaymentState{unknown, succeeded}, true},
		{"tok_timeout_not_applied", []paymentv1.PaymentState{unknown}, false},
		{"tok_webhook_only", []paymentv1.PaymentState{pending}, true},
		{"tok_duplicate_capture", []paymentv1.PaymentState{succeeded}, true},
	} {
		t.Run(c.token, func(t *testing.T) {
			b := newBuyer(t, env, "buyer-"+c.token)
			o := b.order(show.GetShowId(), []string{"A", "B"}[i/10]+string(rune('1'+i%10)))
			p, err := b.pay(o.GetOrderId(), c.token)
			require.NoError(t, err)
			require.Contains(t, c.answers, p.GetStatus())
			want := bookingv1.OrderStatus_ORDER_STATUS_PENDING_PAYMENT
			if c.confirmed {
				want = bookingv1.OrderStatus_ORDER_STATUS_CONFIRMED
			}
			require.Eventually(t, func() bool {
				st := b.getPayment(p.GetPaymentId()).GetStatus()
				return b.getOrder(o.GetOrderId()).GetStatus() == want &&
					st != paymentv1.PaymentState_PAYMENT_STATE_PENDING && st != paymentv1.PaymentState_PAYMENT_STATE_UNKNOWN
			}, 10*time.Second, 50*time.Millisecond)
			var kept int
			for _, ch := range env.Gateway.ChargesFor(p.GetPaymentId()) {
				if ch.Status == "succeeded" && ch.RefundedMinor < ch.AmountMinor {
					kept++
				}
			}
			if c.confirmed && c.token != "tok_duplicate_capture" {
				require.Equal(t, 1, kept, "exactly one charge kept")
			}
			if !c.confirmed {
				require.Zero(t, kept)
			}
		})
	}
}

// TestCancelConfirmedOrder: a confirmed order is cancelled under the show's
// fee policy, refunded through the gateway, and its seats go back on sale
// the ledger keeps both sides.
func TestCancelConfirmedOrder(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	clk := clock.NewFake(start)
	env := apptest.New(t, apptest.Options{Clock: clk, Shards: 1})
	req := seatedShow("Cancel me", 1, 4)
	req.OnSaleAt = timestamppb.New(start.Add(-time.Hour))
	req.StartsAt = timestamppb.New(start.Add(48 * time.Hour))
	req.CancellationFeeBps = new(int32(1000))
	show := createShow(t, env, req)
	b := newBuyer(t, env, "buyer")
	o := b.order(show.GetShowId(), "A1", "A2")
	_, err := b.pay(o.GetOrderId(), "tok_success")
	require.NoError(t, err)

	_, err = newBuyer(t, env, "karim").orders.CancelOrder(ctx, connect.NewRequest(&bookingv1.CancelOrderRequest{OrderId: o.GetOrderId()}))
	require.Equal(t, connect.CodeNotFound, connect.CodeOf(err), "only the owner cancels")

	got, err := b.orders.CancelOrder(ctx, connect.NewRequest(&bookingv1.CancelOrderRequest{OrderId: o.GetOrderId()}))
	require.NoError(t, err)
	require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_CANCELLED, got.Msg.GetOrder().GetStatus())
	require.EqualValues(t, 17000, got.Msg.GetOrder().GetCancellationFee().GetAmountMinor(), "10 % of 1,700 Tk")
	settle(t, env)
	refunds := env.Gateway.Refunds()
	require.Len(t, refunds, 1)
	require.EqualValues(t, 153000, refunds[0].AmountMinor)
	require.EqualValues(t, 153000, b.getOrder(o.GetOrderId()).GetRefunded().GetAmountMinor())
	m, err := b.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: show.GetShowId()}))
	require.NoError(t, err)
	require.Equal(t, []string{"A1", "A2", "A3", "A4"}, freeSeats(m.Msg), "the seats are on sale again")

	bal := trialBalance(t, env)
	require.EqualValues(t, -15300, bal[ledger.AccountOperatorPayable], "the operator keeps its share of the fee")
	require.EqualValues(t, -1700, bal[ledger.AccountPlatformRevenue], "the platform its commission on the fee")
	require.Equal(t, 1, journals(t, env, ledger.KindRefund, o.GetOrderId()))

	// Cancelling again changes nothing; after the show starts nobody cancels.
	_, err = b.orders.CancelOrder(ctx, connect.NewRequest(&bookingv1.CancelOrderRequest{OrderId: o.GetOrderId()}))
	require.Equal(t, connect.CodeFailedPrecondition, connect.CodeOf(err))
	o2 := b.order(show.GetShowId(), "A3")
	_, err = b.pay(o2.GetOrderId(), "tok_success")
	require.NoError(t, err)
	clk.Set(start.Add(49 * time.Hour))
	b = newBuyer(t, env, "buyer") // a token of the new day
	_, err = b.orders.CancelOrder(ctx, connect.NewRequest(&bookingv1.CancelOrderRequest{OrderId: o2.GetOrderId()}))
	require.Equal(t, connect.CodeFailedPrecondition, connect.CodeOf(err))
	require.Len(t, env.Gateway.Refunds(), 1)
}

// TestReconcileDuplicateCapture: the gateway captures one payment twice;
// reconciliation (through the API, admins only) finds it and refunds the
// extra capture, once.
func TestReconcileDuplicateCapture(t *testing.T) {
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Shards: 2})
	show := createShow(t, env, seatedShow("Twice", 1, 4))
	b := newBuyer(t, env, "buyer")
	o := b.order(show.GetShowId(), "A1")
	p, err := b.pay(o.GetOrderId(), "tok_duplicate_capture")
	require.NoError(t, err)
	require.Equal(t, paymentv1.PaymentState_PAYMENT_STATE_SUCCEEDED, p.GetStatus())
	require.Len(t, env.Gateway.ChargesFor(p.GetPaymentId()), 2)

	period := &ledgerv1.RunReconciliationRequest{
		PeriodStart: timestamppb.New(time.Now().Add(-time.Hour)), PeriodEnd: timestamppb.New(time.Now().Add(time.Hour)),
	}
	_, err = b.ledger.RunReconciliation(ctx, connect.NewRequest(period))
	require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err))

	admin := as(t, env, "finance", auth.RoleAdmin)
	dry := proto.CloneOf(period)
	dry.DryRun = true
	res, err := admin.ledger.RunReconciliation(ctx, connect.NewRequest(dry))
	require.NoError(t, err)
	require.Len(t, res.Msg.GetMismatches(), 1)
	require.Equal(t, ledgerv1.MismatchAction_MISMATCH_ACTION_DRY_RUN, res.Msg.GetMismatches()[0].GetAction())
	require.Empty(t, env.Gateway.Refunds(), "a dry run changes nothing")

	res, err = admin.ledger.RunReconciliation(ctx, connect.NewRequest(period))
	require.NoError(t, err)
	require.Len(t, res.Msg.GetMismatches(), 1)
	mm := res.Msg.GetMismatches()[0]
	require.Equal(t, ledgerv1.MismatchKind_MISMATCH_KIND_DUPLICATE_CAPTURE, mm.GetKind())
	require.Equal(t, ledgerv1.MismatchAction_MISMATCH_ACTION_REFUND_STARTED, mm.GetAction())
	require.EqualValues(t, 1, res.Msg.GetRefundsStarted())
	require.EqualValues(t, 1, res.Msg.GetMatched(), "the capture we booked matches")
	refunds := env.Gateway.Refunds()
	require.Len(t, refunds, 1)
	require.NotEqual(t, p.GetGatewayReference(), refunds[0].ChargeID, "the extra capture is the one refunded")
	require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_CONFIRMED, b.getOrder(o.GetOrderId()).GetStatus())

	res, err = admin.ledger.RunReconciliation(ctx, connect.NewRequest(period))
	require.NoError(t, err)
	require.Empty(t, res.Msg.GetMismatches(), "a second run finds nothing")
	require.Len(t, env.Gateway.Refunds(), 1)
	bal := trialBalance(t, env)
	require.Zero(t, bal[ledger.AccountRefundsPayable])
}

// TestPaymentREST: the contract's REST routes, verbatim.
func TestPaymentREST(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 1})
	show := createShow(t, env, seatedShow("REST", 1, 4))
	token := env.Token(t, "rumana", auth.RoleUser)
	do := func(method, path, body string) map[string]any {
		t.Helper()
		req, err := http.NewRequest(method, env.URL+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		if method == http.MethodPost {
			req.Header.Set("Idempotency-Key", newKey())
		}
		resp, err := env.HTTP.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, string(raw))
		var m map[string]any
		require.NoError(t, json.Unmarshal(raw, &m), string(raw))
		return m
	}
	hold := do(http.MethodPost, "/v1/holds", `{"show_id": "`+strconv.FormatInt(show.GetShowId(), 10)+`", "seats": ["A1"]}`)
	order := do(http.MethodPost, "/v1/orders", `{"hold_id": "`+hold["hold_id"].(string)+`"}`)
	orderID := order["order_id"].(string)
	require.Equal(t, orderID, do(http.MethodGet, "/v1/orders/"+orderID, "")["order_id"])
	pay := do(http.MethodPost, "/v1/payments", `{"order_id": "`+orderID+`", "sandbox": {"token": "tok_success"}}`)
	require.Equal(t, "PAYMENT_STATE_SUCCEEDED", pay["status"])
	got := do(http.MethodGet, "/v1/payments/"+pay["payment_id"].(string), "")
	require.Equal(t, "PAYMENT_STATE_SUCCEEDED", got["status"])
	require.Equal(t, "ORDER_STATUS_CONFIRMED", do(http.MethodGet, "/v1/orders/"+orderID, "")["status"])

	// The money metrics of R-11 are at /metrics, on the admin listener.
	resp, err := env.HTTP.Get(env.AdminURL + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	for _, name := range []string{"seatghor_payments_unknown ", "seatghor_payments_open_oldest_seconds",
		"seatghor_payment_events_pending ", "seatghor_webhook_delay_seconds", "seatghor_gateway_request_seconds",
		"seatghor_refunds_open "} {
		require.Contains(t, string(raw), name)
	}
}

// TestPayout: admins pay a show's operator what it is owed, once per payout
// id, never more.
func TestPayout(t *testing.T) {
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Shards: 2})
	show := createShow(t, env, seatedShow("Payout", 1, 4))
	b := newBuyer(t, env, "buyer")
	_, err := b.pay(b.order(show.GetShowId(), "A1", "A2").GetOrderId(), "tok_success")
	require.NoError(t, err)
	admin := as(t, env, "finance", auth.RoleAdmin)
	payout := func(id string, amount int64) (*ledgerv1.RecordPayoutResponse, error) {
		resp, err := admin.ledger.RecordPayout(ctx, connect.NewRequest(&ledgerv1.RecordPayoutRequest{
			ShowId: show.GetShowId(), PayoutId: id, Amount: &commonv1.Money{AmountMinor: amount, Currency: "BDT"}}))
		if err != nil {
			return nil, err
		}
		return resp.Msg, nil
	}
	_, err = b.ledger.RecordPayout(ctx, connect.NewRequest(&ledgerv1.RecordPayoutRequest{
		ShowId: show.GetShowId(), PayoutId: "trf-1", Amount: &commonv1.Money{AmountMinor: 100, Currency: "BDT"}}))
	require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err))
	_, err = payout("trf-0", 153001)
	require.Equal(t, connect.CodeFailedPrecondition, connect.CodeOf(err), "more than the operator is owed")

	res, err := payout("trf-1", 100000)
	require.NoError(t, err)
	require.False(t, res.GetDuplicate())
	require.Len(t, res.GetTransaction().GetLines(), 2)
	again, err := payout("trf-1", 100000)
	require.NoError(t, err)
	require.True(t, again.GetDuplicate(), "the same payout id posts once (R-7.4)")
	_, err = payout("trf-2", 53001)
	require.Equal(t, connect.CodeFailedPrecondition, connect.CodeOf(err))
	_, err = payout("trf-2", 53000)
	require.NoError(t, err)
	bal := trialBalance(t, env)
	require.Zero(t, bal[ledger.AccountOperatorPayable])
	require.EqualValues(t, -153000, bal[ledger.AccountBank])
}

// TestProcessorsConcurrent: several processors at once over two shards,
// with every webhook delivered up to twice and out of order: each stored
// event is taken by exactly one processor (SKIP LOCKED), and each payment
// confirms its order exactly once.
func TestProcessorsConcurrent(t *testing.T) {
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Shards: 2, Sandbox: sandbox.Config{
		Faults: sandbox.Faults{Seed: 3, DuplicateRate: 0.5, DelayMax: 200 * time.Millisecond},
	}, Payments: payment.Config{EventBatch: 2}}) // small batches: the processors meet
	const orders = 40
	var ids []string
	for i := range orders {
		show := createShow(t, env, seatedShow("Processors", 1, 1))
		b := newBuyer(t, env, "buyer")
		o := b.order(show.GetShowId(), "A1")
		p, err := b.pay(o.GetOrderId(), "") // the redirect flow: the outcome comes by webhook
		require.NoError(t, err)
		_, err = env.Gateway.Approve(p.GetGatewayReference())
		require.NoError(t, err, "order %d", i)
		ids = append(ids, o.GetOrderId())
	}
	require.Eventually(t, func() bool { return env.Gateway.Pending() == 0 }, 10*time.Second, 20*time.Millisecond)
	stats := env.Gateway.WebhookStats()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 20 {
				_, err := env.App.Payments.ProcessEvents(ctx)
				require.NoError(t, err)
			}
		})
	}
	wg.Wait()
	b := newBuyer(t, env, "buyer")
	for _, id := range ids {
		require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_CONFIRMED, b.getOrder(id).GetStatus())
		require.Equal(t, 1, journals(t, env, ledger.KindBooking, id))
	}
	var stored, claimedTwice int
	for _, pool := range env.App.Router.Shards() {
		var n, twice int
		require.NoError(t, pool.QueryRow(ctx, `
			SELECT count(*), count(*) FILTER (WHERE attempts <> 1) FROM payment_events WHERE processed_at IS NOT NULL`).
			Scan(&n, &twice))
		stored, claimedTwice = stored+n, claimedTwice+twice
	}
	require.Equal(t, orders, stored, "one stored event per capture, however often it was delivered")
	require.Zero(t, claimedTwice, "no event was taken by two processors")
	t.Logf("webhook deliveries: %+v", stats)
	trialBalance(t, env)
}

// TestManualRefundsTwoPeople: only admins refund by hand; a small
// refund goes out at once, a large one waits for a second admin, whom the
// database insists is another person; refunds of one charge never add up
// to more than was captured, and a later cancellation refunds only what is
// left.
func TestManualRefundsTwoPeople(t *testing.T) {
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Shards: 1, Payments: payment.Config{RefundApprovalMinor: 100000}})
	show := createShow(t, env, seatedShow("Goodwill", 1, 4))
	b := newBuyer(t, env, "buyer")
	o := b.order(show.GetShowId(), "A1", "A2") // 1,700 Tk
	p, err := b.pay(o.GetOrderId(), "tok_success")
	require.NoError(t, err)
	ana, bob := as(t, env, "ana", auth.RoleAdmin), as(t, env, "bob", auth.RoleAdmin)
	refund := func(c clients, amount int64) (*paymentv1.Refund, error) {
		resp, err := c.pay.RefundPayment(ctx, connect.NewRequest(&paymentv1.RefundPaymentRequest{
			PaymentId: p.GetPaymentId(), AmountMinor: amount, Note: "the bus was late"}))
		if err != nil {
			return nil, err
		}
		return resp.Msg.GetRefund(), nil
	}
	_, err = refund(b.clients, 100)
	require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err), "buyers hold no refund rights")

	small, err := refund(ana, 20000) // under the threshold: sent at once
	require.NoError(t, err)
	require.Equal(t, paymentv1.RefundStatus_REFUND_STATUS_SUCCEEDED, small.GetStatus())

	large, err := refund(ana, 120000) // over it: a second person decides
	require.NoError(t, err)
	require.Equal(t, paymentv1.RefundStatus_REFUND_STATUS_AWAITING_APPROVAL, large.GetStatus())
	require.Len(t, env.Gateway.Refunds(), 1, "nothing sent before the approval")
	queue := func(c clients) ([]*ledgerv1.RefundToApprove, error) {
		resp, err := c.ledger.ListRefundsToApprove(ctx, connect.NewRequest(&ledgerv1.ListRefundsToApproveRequest{ShowId: show.GetShowId()}))
		if err != nil {
			return nil, err
		}
		return resp.Msg.GetRefunds(), nil
	}
	waiting, err := queue(bob)
	require.NoError(t, err)
	require.Len(t, waiting, 1, "the large refund is in the four-eyes queue, the small one is not")
	require.Equal(t, large.GetRefundId(), waiting[0].GetRefund().GetRefundId())
	require.Equal(t, "ana", waiting[0].GetRefund().GetRequestedBy())
	require.Equal(t, "the bus was late", waiting[0].GetRefund().GetNote())
	require.Equal(t, show.GetShowId(), waiting[0].GetShowId())
	_, err = queue(b.clients)
	require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err), "buyers see no queue")
	approve := func(c clients) (*paymentv1.Refund, error) {
		resp, err := c.pay.ApproveRefund(ctx, connect.NewRequest(&paymentv1.ApproveRefundRequest{RefundId: large.GetRefundId()}))
		if err != nil {
			return nil, err
		}
		return resp.Msg.GetRefund(), nil
	}
	_, err = approve(ana)
	require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err), "not by the one who asked")
	_, err = env.App.Router.Shards()[0].Exec(ctx, `UPDATE refunds SET approved_by = requested_by WHERE refund_id = $1`,
		large.GetRefundId())
	require.Error(t, err, "the database refuses it too (four eyes)")
	got, err := approve(bob)
	require.NoError(t, err)
	require.Equal(t, paymentv1.RefundStatus_REFUND_STATUS_SUCCEEDED, got.GetStatus())
	require.Equal(t, "bob", got.GetApprovedBy())
	_, err = approve(bob)
	require.Equal(t, connect.CodeFailedPrecondition, connect.CodeOf(err), "approved once")
	waiting, err = queue(bob)
	require.NoError(t, err)
	require.Empty(t, waiting, "an approved refund leaves the queue")

	_, err = refund(ana, 40000) // 30,000 left of 170,000
	require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err), "never more than was captured")
	require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_CONFIRMED, b.getOrder(o.GetOrderId()).GetStatus(), "the booking stays")

	// A cancellation now owes 170,000 − 17,000 fee less the 140,000 given
	// back: 13,000 (decision 0292: the goodwill refunds do not waive the fee).
	_, err = b.orders.CancelOrder(ctx, connect.NewRequest(&bookingv1.CancelOrderRequest{OrderId: o.GetOrderId()}))
	require.NoError(t, err)
	settle(t, env)
	var back int64
	for _, r := range env.Gateway.Refunds() {
		back += r.AmountMinor
	}
	require.EqualValues(t, 153000, back, "all but the fee, in three refunds")
	rows, err := env.App.Router.Shards()[0].Query(ctx,
		`SELECT payload FROM outbox WHERE event_type = 'seatghor.events.v1.RefundIssued' ORDER BY id`)
	require.NoError(t, err)
	payloads, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	require.NoError(t, err)
	var reasons []eventsv1.RefundReason
	for _, b := range payloads {
		var ev eventsv1.RefundIssued
		require.NoError(t, proto.Unmarshal(b, &ev))
		reasons = append(reasons, ev.GetReason())
	}
	require.Equal(t, []eventsv1.RefundReason{eventsv1.RefundReason_REFUND_REASON_MANUAL,
		eventsv1.RefundReason_REFUND_REASON_MANUAL, eventsv1.RefundReason_REFUND_REASON_CANCELLATION}, reasons)
	require.Equal(t, 3, journals(t, env, ledger.KindRefund, o.GetOrderId()))
	bal := trialBalance(t, env)
	require.EqualValues(t, -15300, bal[ledger.AccountOperatorPayable], "the operator keeps its share of the fee")
	require.EqualValues(t, -1700, bal[ledger.AccountPlatformRevenue], "the platform its commission on the fee")
}
