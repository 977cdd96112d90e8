package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	paymentv1 "github.com/seatghor/seatghor/gen/seatghor/payment/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/gateway"
	"github.com/seatghor/seatghor/server/ledger"
)

// buyer is one caller who holds, orders and pays.
type buyer struct {
	clients
	t *testing.T
}

func newBuyer(t *testing.T, env *apptest.Env, sub string) buyer {
	return buyer{clients: as(t, env, sub, auth.RoleUser), t: t}
}

// order holds seats of a show and orders them.
func (b buyer) order(showID int64, seats ...string) *bookingv1.Order {
	b.t.Helper()
	return b.orderWith(showID, nil, seats...)
}

// orderWith is order with the buyer's contact given at checkout.
func (b buyer) orderWith(showID int64, c *commonv1.Contact, seats ...string) *bookingv1.Order {
	b.t.Helper()
	ctx := context.Background()
	h, err := b.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: showID, Seats: seats}))
	require.NoError(b.t, err)
	o, err := b.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: h.Msg.GetHold().GetHoldId(), Contact: c}))
	require.NoError(b.t, err)
	return o.Msg.GetOrder()
}

// pay starts a sandbox payment of an order with a test token ("" for the
// redirect flow).
func (b buyer) pay(orderID, token string) (*paymentv1.Payment, error) {
	req := &paymentv1.StartPaymentRequest{OrderId: orderID, Sandbox: &paymentv1.SandboxPayment{Token: token}}
	resp, err := b.clients.pay.StartPayment(context.Background(), connect.NewRequest(req))
	if err != nil {
		return nil, err
	}
	return resp.Msg.GetPayment(), nil
}

func (b buyer) getOrder(id string) *bookingv1.Order {
	b.t.Helper()
	o, err := b.orders.GetOrder(context.Background(), connect.NewRequest(&bookingv1.GetOrderRequest{OrderId: id}))
	require.NoError(b.t, err)
	return o.Msg.GetOrder()
}

func (b buyer) getPayment(id string) *paymentv1.Payment {
	b.t.Helper()
	p, err := b.clients.pay.GetPayment(context.Background(), connect.NewRequest(&paymentv1.GetPaymentRequest{PaymentId: id}))
	require.NoError(b.t, err)
	return p.Msg.GetPayment()
}

// settle waits until the sandbox has delivered every webhook and the
// platform has processed every stored event.
func settle(t *testing.T, env *apptest.Env) {
	t.Helper()
	require.Eventually(t, func() bool {
		_, err := env.App.Payments.ProcessEvents(context.Background())
		require.NoError(t, err)
		return env.Gateway.Pending() == 0
	}, 10*time.Second, 20*time.Millisecond)
	_, err := env.App.Payments.ProcessEvents(context.Background())
	require.NoError(t, err)
}

// trialBalance returns the balance of every account, and checks that the
// ledger sums to zero with no unbalanced journal.
func trialBalance(t *testing.T, env *apptest.Env) map[string]int64 {
	t.Helper()
	tb, err := env.App.Ledger.TrialBalance(context.Background(), nil, time.Time{})
	require.NoError(t, err)
	require.Zero(t, tb.SumMinor, "the trial balance sums to zero")
	require.Zero(t, tb.UnbalancedJournals)
	out := map[string]int64{}
	for _, a := range tb.Accounts {
		out[a.Account] = a.BalanceMinor
	}
	return out
}

// journals counts the ledger transactions of a kind about a reference.
func journals(t *testing.T, env *apptest.Env, kind ledger.Kind, ref string) int {
	t.Helper()
	posted, _, err := env.App.Ledger.ListJournal(context.Background(), ledger.Filter{Kind: kind, Reference: ref, PageSize: 100})
	require.NoError(t, err)
	return len(posted)
}

const fee = 175 // the sandbox's default fee in basis points

func TestPaymentSucceedsAndConfirms(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 2})
	show := createShow(t, env, seatedShow("Pay day", 2, 4))
	rumana := newBuyer(t, env, "rumana")
	o := rumana.order(show.GetShowId(), "A1", "A2")

	p, err := rumana.pay(o.GetOrderId(), "tok_success")
	require.NoError(t, err)
	require.Equal(t, paymentv1.PaymentState_PAYMENT_STATE_SUCCEEDED, p.GetStatus())
	require.EqualValues(t, 1, p.GetAttempt())
	got := rumana.getOrder(o.GetOrderId())
	require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_CONFIRMED, got.GetStatus())
	require.Equal(t, p.GetPaymentId(), got.GetPaymentId())
	require.Len(t, env.Gateway.ChargesFor(p.GetPaymentId()), 1)

	// one booking journal and one fee journal; 10 % commission.
	settle(t, env)
	require.Equal(t, 1, journals(t, env, ledger.KindBooking, o.GetOrderId()))
	bal := trialBalance(t, env)
	require.EqualValues(t, 170000-170000*fee/10000, bal[ledger.AccountGatewayClearing])
	require.EqualValues(t, -153000, bal[ledger.AccountOperatorPayable])
	require.EqualValues(t, -17000, bal[ledger.AccountPlatformRevenue])

	// Paying a confirmed order again is refused; nothing is charged.
	_, err = rumana.pay(o.GetOrderId(), "tok_success")
	require.Equal(t, connect.CodeFailedPrecondition, connect.CodeOf(err), "%v", err)
	require.Len(t, env.Gateway.Charges(), 1)

	// Owner-only reads: another buyer's payment is not found.
	_, err = newBuyer(t, env, "karim").clients.pay.GetPayment(context.Background(),
		connect.NewRequest(&paymentv1.GetPaymentRequest{PaymentId: p.GetPaymentId()}))
	require.Equal(t, connect.CodeNotFound, connect.CodeOf(err))
}

func TestPaymentDeclinedThenRetried(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 1})
	req := seatedShow("Declines", 1, 4)
	req.HoldTtl, req.PaymentExtension = durationpb.New(30*time.Second), durationpb.New(5*time.Minute)
	show := createShow(t, env, req)
	b := newBuyer(t, env, "buyer")
	o := b.order(show.GetShowId(), "A1")

	p, err := b.pay(o.GetOrderId(), "tok_decline")
	require.NoError(t, err)
	require.Equal(t, paymentv1.PaymentState_PAYMENT_STATE_FAILED, p.GetStatus())
	require.Equal(t, paymentv1.FailureReason_FAILURE_REASON_DECLINED, p.GetFailureReason())
	require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_PENDING_PAYMENT, b.getOrder(o.GetOrderId()).GetStatus())

	// A new attempt while the hold lasts.
	p2, err := b.pay(o.GetOrderId(), "tok_success")
	require.NoError(t, err)
	require.EqualValues(t, 2, p2.GetAttempt())
	// the first attempt extended the 30 s hold to 5 minutes; the
	// second did not extend it again.
	require.Greater(t, p.GetPayBy().AsTime(), o.GetPayBy().AsTime().Add(4*time.Minute))
	require.Equal(t, p.GetPayBy().AsTime(), p2.GetPayBy().AsTime())
	require.Equal(t, paymentv1.PaymentState_PAYMENT_STATE_SUCCEEDED, p2.GetStatus())
	require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_CONFIRMED, b.getOrder(o.GetOrderId()).GetStatus())
}

// TestPaymentTimeline is to the end: Rumana's payment confirms A1, A2;
// Karim's success arrives at 10:15, after his hold ran out, and is refunded;
// A4 goes to Sumi.
func TestPaymentTimeline(t *testing.T) {
	ctx := context.Background()
	tenAM := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	clk := clock.NewFake(tenAM)
	env := apptest.New(t, apptest.Options{Clock: clk, Shards: 1})
	req := seatedShow("Dhaka to Cox's Bazar", 1, 4)
	req.OnSaleAt = timestamppb.New(tenAM.Add(-30 * time.Minute))
	req.StartsAt = timestamppb.New(tenAM.Add(24 * time.Hour))
	req.PaymentExtension = durationpb.New(5 * time.Minute)
	show := createShow(t, env, req)
	id := show.GetShowId()
	rumana, karim, sumi := newBuyer(t, env, "rumana"), newBuyer(t, env, "karim"), newBuyer(t, env, "sumi")

	o1 := rumana.order(id, "A1", "A2") // 10:00
	clk.Set(tenAM.Add(3 * time.Minute))
	o2 := karim.order(id, "A3", "A4") // 10:03, his hold lasts until 10:13
	clk.Set(tenAM.Add(4 * time.Minute))
	kp, err := karim.pay(o2.GetOrderId(), "") // the MFS page: he has not approved yet
	require.NoError(t, err)
	require.Equal(t, paymentv1.PaymentState_PAYMENT_STATE_PENDING, kp.GetStatus())
	require.NotEmpty(t, kp.GetRedirectUrl())
	// extended once, to now + 5 min, but never shortened: still 10:13.
	require.Equal(t, tenAM.Add(13*time.Minute), kp.GetPayBy().AsTime())

	clk.Set(tenAM.Add(8 * time.Minute)) // 10:08 Rumana's payment succeeds.
	rp, err := rumana.pay(o1.GetOrderId(), "tok_success")
	require.NoError(t, err)
	require.Equal(t, paymentv1.PaymentState_PAYMENT_STATE_SUCCEEDED, rp.GetStatus())
	// her hold (until 10:10) was extended once, to 10:13.
	require.Equal(t, tenAM.Add(13*time.Minute), rp.GetPayBy().AsTime())
	require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_CONFIRMED, rumana.getOrder(o1.GetOrderId()).GetStatus())

	clk.Set(tenAM.Add(15 * time.Minute)) // 10:15 Karim approves: too late.
	_, err = env.Gateway.Approve(kp.GetGatewayReference())
	require.NoError(t, err)
	settle(t, env)
	kp = karim.getPayment(kp.GetPaymentId())
	require.Equal(t, paymentv1.PaymentState_PAYMENT_STATE_SUCCEEDED, kp.GetStatus(), "the money was captured")
	require.EqualValues(t, 170000, kp.GetRefunded().GetAmountMinor(), "and all of it went back")
	require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_REFUNDED, karim.getOrder(o2.GetOrderId()).GetStatus())
	refunds := env.Gateway.Refunds()
	require.Len(t, refunds, 1)
	require.Equal(t, kp.GetGatewayReference(), refunds[0].ChargeID)

	clk.Set(tenAM.Add(16 * time.Minute)) // 10:16 Sumi takes A4.
	_, err = sumi.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: id, Seats: []string{"A4"}}))
	require.NoError(t, err)

	// The ledger says the same: one booking (Rumana's), Karim's capture
	// owed back and refunded, both fees paid, everything sums to zero.
	require.Equal(t, 1, journals(t, env, ledger.KindBooking, o1.GetOrderId()))
	require.Zero(t, journals(t, env, ledger.KindBooking, o2.GetOrderId()))
	bal := trialBalance(t, env)
	fees := 2 * (170000 * fee / 10000)
	require.EqualValues(t, 170000-fees, bal[ledger.AccountGatewayClearing])
	require.EqualValues(t, fees, bal[ledger.AccountGatewayFees])
	require.EqualValues(t, -153000, bal[ledger.AccountOperatorPayable])
	require.EqualValues(t, -17000, bal[ledger.AccountPlatformRevenue])
	require.Zero(t, bal[ledger.AccountRefundsPayable])
}

// signedEvent is a webhook as the sandbox sends it, signed at t.
func signedEvent(t *testing.T, id, typ string, at time.Time, charge gateway.Charge, secret string) ([]byte, string) {
	t.Helper()
	body, err := json.Marshal(map[string]any{
		"id": id, "type": typ, "created": at.Unix(),
		"data": map[string]any{
			"id": charge.ID, "idempotency_key": charge.IdempotencyKey, "reference": charge.Reference,
			"status": string(charge.Status), "amount_minor": charge.AmountMinor, "currency": charge.Currency,
			"fee_minor": charge.FeeMinor, "failure_code": charge.FailureCode, "refunded_minor": 0,
			"created_at": charge.CreatedAt, "captured_at": charge.CapturedAt,
		},
	})
	require.NoError(t, err)
	return body, gateway.Sign([]string{secret}, at, body)
}

func postWebhook(t *testing.T, env *apptest.Env, body []byte, sig string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, env.URL+"/webhooks/sandbox", bytes.NewReader(body))
	require.NoError(t, err)
	if sig != "" {
		req.Header.Set("Sandbox-Signature", sig)
	}
	resp, err := env.HTTP.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// TestChargeTwiceWebhookThrice is seed 001's exercise: the same charge is
// requested twice and its webhook arrives three times, out of order with a
// failure event: one charge, one booking, one journal.
func TestChargeTwiceWebhookThrice(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 1})
	show := createShow(t, env, seatedShow("Seed 001", 1, 4))
	b := newBuyer(t, env, "buyer")
	o := b.order(show.GetShowId(), "A1", "A2")

	// The redirect flow, so the outcome arrives only by webhook. The same
	// request twice, with one Idempotency-Key: one attempt, one charge.
	key := newKey()
	req := &paymentv1.StartPaymentRequest{OrderId: o.GetOrderId(), Method: paymentv1.PaymentMethod_PAYMENT_METHOD_MFS,
		Sandbox: &paymentv1.SandboxPayment{}}
	first, err := b.clients.pay.StartPayment(context.Background(), withKey(req, key))
	require.NoError(t, err)
	second, err := b.clients.pay.StartPayment(context.Background(), withKey(req, key))
	require.NoError(t, err)
	pid := first.Msg.GetPayment().GetPaymentId()
	require.Equal(t, pid, second.Msg.GetPayment().GetPaymentId())
	charges := env.Gateway.ChargesFor(pid)
	require.Len(t, charges, 1)

	// The buyer approves; the sandbox's own webhook is one delivery. We
	// deliver the success twice more ourselves, and a failure event for
	// the same charge between them, older, out of order.
	captured, err := env.Gateway.Approve(charges[0].ID)
	require.NoError(t, err)
	now := time.Now()
	failed := captured
	failed.Status, failed.FailureCode, failed.CapturedAt = gateway.StatusFailed, "declined", time.Time{}
	fb, fs := signedEvent(t, "evt_stale_failure", "charge.failed", now.Add(-time.Minute), failed, apptest.WebhookSecret)
	require.Equal(t, http.StatusOK, postWebhook(t, env, fb, fs))
	settle(t, env)
	for range 2 {
		sb, ss := signedEvent(t, "evt_"+captured.ID+"_succeeded_again", "charge.succeeded", now, captured, apptest.WebhookSecret)
		require.Equal(t, http.StatusOK, postWebhook(t, env, sb, ss))
	}
	require.Equal(t, http.StatusOK, postWebhook(t, env, fb, fs), "the failure once more, last")
	settle(t, env)

	p := b.getPayment(pid)
	require.Equal(t, paymentv1.PaymentState_PAYMENT_STATE_SUCCEEDED, p.GetStatus())
	require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_CONFIRMED, b.getOrder(o.GetOrderId()).GetStatus())
	require.Len(t, env.Gateway.Charges(), 1, "one charge")
	require.Equal(t, 1, journals(t, env, ledger.KindBooking, o.GetOrderId()), "one booking journal")
	require.Empty(t, env.Gateway.Refunds())
	var events, processed int
	require.NoError(t, env.App.Router.Shards()[0].QueryRow(context.Background(),
		`SELECT count(*), count(processed_at) FROM payment_events`).Scan(&events, &processed))
	require.Equal(t, 3, events, "three distinct events stored: the sandbox's, the failure and ours")
	require.Equal(t, events, processed)
	trialBalance(t, env)
}

// TestWebhookRefusals: forged, stale, malformed, unknown and replayed events
// change nothing.
func TestWebhookRefusals(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 1})
	show := createShow(t, env, seatedShow("Refusals", 1, 4))
	b := newBuyer(t, env, "buyer")
	o := b.order(show.GetShowId(), "A1")
	p, err := b.pay(o.GetOrderId(), "")
	require.NoError(t, err)
	charge := env.Gateway.ChargesFor(p.GetPaymentId())[0]
	captured := charge
	captured.Status, captured.CapturedAt = gateway.StatusSucceeded, time.Now()
	now := time.Now()

	body, sig := signedEvent(t, "evt_forged", "charge.succeeded", now, captured, "not-the-secret")
	stale, staleSig := signedEvent(t, "evt_stale", "charge.succeeded", now.Add(-10*time.Minute), captured, apptest.WebhookSecret)
	unknown, unknownSig := signedEvent(t, "evt_unknown", "charge.teleported", now, captured, apptest.WebhookSecret)
	good, goodSig := signedEvent(t, "evt_good", "charge.succeeded", now, captured, apptest.WebhookSecret)
	for _, c := range []struct {
		name string
		body []byte
		sig  string
		want int
	}{
		{"forged signature", body, sig, http.StatusUnauthorized},
		{"no signature", good, "", http.StatusUnauthorized},
		{"stale timestamp (replay of an old event)", stale, staleSig, http.StatusUnauthorized},
		{"body changed after signing", append(bytes.Clone(good[:len(good)-1]), ' ', '}'), goodSig, http.StatusUnauthorized},
		{"malformed JSON", []byte("{not json"), gateway.Sign([]string{apptest.WebhookSecret}, now, []byte("{not json")), http.StatusBadRequest},
	} {
		require.Equal(t, c.want, postWebhook(t, env, c.body, c.sig), c.name)
	}
	// A genuine event of a type we do not act on is acknowledged (so it is
	// not sent again) and neither stored nor applied.
	require.Equal(t, http.StatusOK, postWebhook(t, env, unknown, unknownSig))
	settle(t, env)
	require.Equal(t, paymentv1.PaymentState_PAYMENT_STATE_PENDING, b.getPayment(p.GetPaymentId()).GetStatus(), "nothing applied")
	require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_PENDING_PAYMENT, b.getOrder(o.GetOrderId()).GetStatus())
	var stored int
	require.NoError(t, env.App.Router.Shards()[0].QueryRow(context.Background(),
		`SELECT count(*) FROM payment_events`).Scan(&stored))
	require.Zero(t, stored)

	// A fresh, signed success is applied once, however often it comes.
	for range 3 {
		require.Equal(t, http.StatusOK, postWebhook(t, env, good, goodSig))
	}
	settle(t, env)
	require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_CONFIRMED, b.getOrder(o.GetOrderId()).GetStatus())
	require.NoError(t, env.App.Router.Shards()[0].QueryRow(context.Background(),
		`SELECT count(*) FROM payment_events`).Scan(&stored))
	require.Equal(t, 1, stored)
}
