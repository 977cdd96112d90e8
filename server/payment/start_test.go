package payment_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/gateway/sandbox"
	"github.com/seatghor/seatghor/server/payment"
)

// TestStartPaymentRules: an attempt is for the
// caller's own unpaid order, one open at a time, a bounded number in all;
// the first extends the order's hold once.
func TestStartPaymentRules(t *testing.T) {
	t.Parallel()
	p := newPlatform(t, payment.Config{MaxAttempts: 2})
	ctx := t.Context()
	show := p.show(t, 4, 85000, 1000) // holds last 10 min; paying extends to 5 min from the start

	o := p.order(t, show.ID, "rumana", "A1")
	require.Equal(t, t0.Add(10*time.Minute), o.PayBy)
	attempt := func(user, orderID, token string) (payment.Payment, fault.Reason) {
		t.Helper()
		pay, err := p.pay.StartPayment(ctx, user, payment.StartRequest{OrderID: orderID, Method: "mfs", Token: token})
		if err != nil {
			kind, _ := kindOf(t, err)
			return pay, kind
		}
		return pay, ""
	}

	_, kind := attempt("imran", o.ID, sandbox.TokenSuccess)
	require.Equal(t, fault.PaymentNotFound, kind, "someone else's order")
	_, kind = attempt("rumana", "ord_1_nothing", sandbox.TokenSuccess)
	require.Equal(t, fault.PaymentNotFound, kind)

	p.clock.Set(t0.Add(8 * time.Minute))
	first, kind := attempt("rumana", o.ID, "")
	require.Empty(t, kind)
	require.Equal(t, []any{payment.StatusPending, 1, t0.Add(13 * time.Minute), int64(85000), "mfs", "sandbox"},
		[]any{first.Status, first.Attempt, first.PayBy, first.AmountMinor, first.Method, first.Provider},
		"R-6.3: the hold now lasts until 5 minutes after the payment started")
	require.Equal(t, t0.Add(13*time.Minute), p.getOrder(t, o.ID).PayBy)
	_, kind = attempt("rumana", o.ID, sandbox.TokenSuccess)
	require.Equal(t, fault.PaymentNotAllowed, kind, "R-6.1: not while the first one's outcome is open")

	_, err := p.gw.Decline(first.GatewayChargeID)
	require.NoError(t, err)
	require.NoError(t, p.pay.Apply(ctx, p.view(t, first.GatewayKey)))
	p.clock.Set(t0.Add(12 * time.Minute))
	second, kind := attempt("rumana", o.ID, sandbox.TokenDecline)
	require.Empty(t, kind)
	require.Equal(t, []any{payment.StatusFailed, 2, t0.Add(13 * time.Minute)}, []any{second.Status, second.Attempt, second.PayBy},
		"one extension per order")
	_, kind = attempt("rumana", o.ID, sandbox.TokenSuccess)
	require.Equal(t, fault.PaymentAttemptsExhausted, kind, "at most MaxAttempts")

	// An order whose hold ran out, and one paid already, have nothing to pay.
	late := p.order(t, show.ID, "nadia", "A2")
	p.clock.Set(late.PayBy.Add(time.Second))
	_, kind = attempt("nadia", late.ID, sandbox.TokenSuccess)
	require.Equal(t, fault.PaymentNotAllowed, kind, "expired")
	paid := p.order(t, show.ID, "nadia", "A3")
	first, kind = attempt("nadia", paid.ID, sandbox.TokenSuccess)
	require.Empty(t, kind)
	require.Equal(t, payment.StatusSucceeded, first.Status)
	_, kind = attempt("nadia", paid.ID, sandbox.TokenSuccess)
	require.Equal(t, fault.PaymentNotAllowed, kind, "confirmed")

	// A payment is its payer's (and admins').
	got, err := p.pay.GetPayment(ctx, "nadia", false, first.ID)
	require.NoError(t, err)
	require.Equal(t, first.ID, got.ID)
	_, err = p.pay.GetPayment(ctx, "rumana", false, first.ID)
	kind, _ = kindOf(t, err)
	require.Equal(t, fault.PaymentNotFound, kind)
	_, err = p.pay.GetPayment(ctx, "rumana", true, first.ID)
	require.NoError(t, err)
	_, err = p.pay.GetPayment(ctx, "rumana", true, "pay_oops")
	kind, _ = kindOf(t, err)
	require.Equal(t, fault.PaymentNotFound, kind)
	p.chargedOnce(t)
}
