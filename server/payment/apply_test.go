package payment_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/gateway"
	"github.com/seatghor/seatghor/server/gateway/sandbox"
	"github.com/seatghor/seatghor/server/payment"
)

// outcome is where a payment attempt ends, with its order, its refunds and
// the journals of its show.
type outcome struct {
	Status      payment.Status
	Outcome     string
	Failure     string
	Order       booking.OrderStatus
	Refunds     []refundRow
	Transitions []string
	Journals    []string
}

// TestApplyStateMachine: every source of truth
// goes through Apply, in any order. A state never goes backwards, a
// duplicate changes nothing, the first capture of an open attempt confirms
// the order, and money captured that no booking earned is given back once.
func TestApplyStateMachine(t *testing.T) {
	t.Parallel()
	// One try per charge, so that a timeout leaves the attempt UNKNOWN.
	p := newPlatform(t, payment.Config{ChargeTries: 1})
	const price = 85000
	total := int64(2 * price)
	booked := outcome{Status: payment.StatusSucceeded, Outcome: "booked", Order: booking.OrderConfirmed,
		Refunds: []refundRow{}, Transitions: []string{"→pending", "pending→succeeded"}, Journals: []string{"booking", "fee"}}

	for _, tc := range []struct {
		name string
		// run pays the order and returns the attempt.
		run  func(t *testing.T, o booking.Order) payment.Payment
		want outcome
	}{{
		name: "a capture confirms the order",
		run:  func(t *testing.T, o booking.Order) payment.Payment { return p.start(t, o, sandbox.TokenSuccess) },
		want: booked,
	}, {
		name: "the same capture applied again changes nothing",
		run: func(t *testing.T, o booking.Order) payment.Payment {
			pay := p.start(t, o, sandbox.TokenSuccess)
			c := p.view(t, pay.GatewayKey)
			require.NoError(t, p.pay.Apply(t.Context(), c))
			require.NoError(t, p.pay.Apply(t.Context(), c))
			return pay
		},
		want: booked,
	}, {
		name: "a decline after the capture changes nothing",
		run: func(t *testing.T, o booking.Order) payment.Payment {
			pay := p.start(t, o, sandbox.TokenSuccess)
			c := p.view(t, pay.GatewayKey)
			c.Status, c.FailureCode = gateway.StatusFailed, "declined"
			require.NoError(t, p.pay.Apply(t.Context(), c))
			return pay
		},
		want: booked,
	}, {
		name: "a pending view after the capture changes nothing",
		run: func(t *testing.T, o booking.Order) payment.Payment {
			pay := p.start(t, o, sandbox.TokenSuccess)
			c := p.view(t, pay.GatewayKey)
			c.Status = gateway.StatusPending
			require.NoError(t, p.pay.Apply(t.Context(), c))
			return pay
		},
		want: booked,
	}, {
		name: "a capture after the buyer approved on the hosted page",
		run: func(t *testing.T, o booking.Order) payment.Payment {
			pay := p.start(t, o, "")
			require.Equal(t, payment.StatusPending, pay.Status)
			require.NotEmpty(t, pay.RedirectURL, "the hosted page is recorded")
			_, err := p.gw.Approve(pay.GatewayChargeID)
			require.NoError(t, err)
			require.NoError(t, p.pay.Apply(t.Context(), p.view(t, pay.GatewayKey)))
			require.Empty(t, p.payment(t, pay.ID).RedirectURL, "no page once paid")
			return pay
		},
		want: booked,
	}, {
		name: "a decline fails the attempt and keeps the order payable",
		run:  func(t *testing.T, o booking.Order) payment.Payment { return p.start(t, o, sandbox.TokenDecline) },
		want: outcome{Status: payment.StatusFailed, Failure: "declined", Order: booking.OrderPendingPayment,
			Refunds: []refundRow{}, Transitions: []string{"→pending", "pending→failed"}, Journals: []string{}},
	}, {
		name: "a capture after the attempt failed is given back",
		run: func(t *testing.T, o booking.Order) payment.Payment {
			pay := p.start(t, o, "")
			c := p.view(t, pay.GatewayKey)
			c.Status, c.FailureCode = gateway.StatusFailed, "declined" // a stale or wrong failure
			require.NoError(t, p.pay.Apply(t.Context(), c))
			_, err := p.gw.Approve(pay.GatewayChargeID)
			require.NoError(t, err)
			require.NoError(t, p.pay.Apply(t.Context(), p.view(t, pay.GatewayKey)))
			require.NoError(t, p.pay.Apply(t.Context(), p.view(t, pay.GatewayKey)), "and again")
			return pay
		},
		want: outcome{Status: payment.StatusFailed, Failure: "declined", Order: booking.OrderPendingPayment,
			Refunds:     []refundRow{{"failed_attempt_capture", total, "succeeded"}},
			Transitions: []string{"→pending", "pending→failed"}, Journals: []string{"capture", "refund"}},
	}, {
		name: "a capture after the hold ran out is given back and the order ends refunded",
		run: func(t *testing.T, o booking.Order) payment.Payment {
			pay := p.start(t, o, "")
			p.clock.Set(pay.PayBy.Add(time.Second))
			_, err := p.gw.Approve(pay.GatewayChargeID)
			require.NoError(t, err)
			require.NoError(t, p.pay.Apply(t.Context(), p.view(t, pay.GatewayKey)))
			return pay
		},
		want: outcome{Status: payment.StatusSucceeded, Outcome: "refund", Order: booking.OrderRefunded,
			Refunds:     []refundRow{{"late_payment", total, "succeeded"}},
			Transitions: []string{"→pending", "pending→succeeded"}, Journals: []string{"capture", "fee", "refund"}},
	}, {
		name: "the failure of another charge naming the attempt leaves it open",
		run: func(t *testing.T, o booking.Order) payment.Payment {
			pay := p.start(t, o, "")
			require.NoError(t, p.pay.Apply(t.Context(), gateway.Charge{ID: "ch_other", IdempotencyKey: "chg_other",
				Reference: pay.ID, Status: gateway.StatusFailed, AmountMinor: total, Currency: "BDT", FailureCode: "declined"}))
			return pay
		},
		want: outcome{Status: payment.StatusPending, Order: booking.OrderPendingPayment, Refunds: []refundRow{},
			Transitions: []string{"→pending"}, Journals: []string{}},
	}, {
		name: "a timeout is UNKNOWN until the recovery job learns of the capture",
		run: func(t *testing.T, o booking.Order) payment.Payment {
			pay := p.start(t, o, sandbox.TokenTimeoutApplied)
			require.Equal(t, payment.StatusUnknown, pay.Status, "R-6.2: never FAILED")
			p.clock.Advance(30 * time.Second)
			require.NoError(t, p.pay.Recover(t.Context()))
			require.Equal(t, payment.StatusUnknown, p.payment(t, pay.ID).Status, "not asked before RecoverAfter")
			p.clock.Advance(time.Minute)
			require.NoError(t, p.pay.Recover(t.Context()))
			return pay
		},
		want: outcome{Status: payment.StatusSucceeded, Outcome: "booked", Order: booking.OrderConfirmed, Refunds: []refundRow{},
			Transitions: []string{"→pending", "pending→unknown", "unknown→succeeded"}, Journals: []string{"booking", "fee"}},
	}, {
		name: "a charge the gateway never got fails only after the grace",
		run: func(t *testing.T, o booking.Order) payment.Payment {
			pay := p.start(t, o, sandbox.TokenTimeoutNotApplied)
			require.Equal(t, payment.StatusUnknown, pay.Status)
			p.clock.Advance(2 * time.Minute)
			require.NoError(t, p.pay.Recover(t.Context()))
			require.Equal(t, payment.StatusUnknown, p.payment(t, pay.ID).Status, "the request may still be on its way")
			p.clock.Advance(9 * time.Minute)
			require.NoError(t, p.pay.Recover(t.Context()))
			return pay
		},
		// Eleven minutes on, the order's hold has run out too.
		want: outcome{Status: payment.StatusFailed, Failure: "gateway_error", Order: booking.OrderExpired,
			Refunds: []refundRow{}, Transitions: []string{"→pending", "pending→unknown", "unknown→failed"}, Journals: []string{}},
	}, {
		name: "a buyer who never finishes the hosted page fails after pay-by and the grace",
		run: func(t *testing.T, o booking.Order) payment.Payment {
			pay := p.start(t, o, "")
			p.clock.Set(pay.PayBy.Add(9 * time.Minute))
			require.NoError(t, p.pay.Recover(t.Context()))
			require.Equal(t, payment.StatusPending, p.payment(t, pay.ID).Status, "within the grace")
			p.clock.Set(pay.PayBy.Add(11 * time.Minute))
			require.NoError(t, p.pay.Recover(t.Context()))
			return pay
		},
		want: outcome{Status: payment.StatusFailed, Failure: "timed_out", Order: booking.OrderExpired,
			Refunds: []refundRow{}, Transitions: []string{"→pending", "pending→failed"}, Journals: []string{}},
	}, {
		name: "a second capture of a booked attempt is given back once",
		run: func(t *testing.T, o booking.Order) payment.Payment {
			pay := p.start(t, o, sandbox.TokenDuplicateCapture)
			require.Equal(t, payment.StatusSucceeded, pay.Status)
			charges := p.gw.ChargesFor(pay.ID)
			require.Len(t, charges, 2)
			dup := charges[1]
			require.NotEqual(t, pay.GatewayChargeID, dup.ID)
			require.NoError(t, p.pay.Apply(t.Context(), dup))
			require.NoError(t, p.pay.Apply(t.Context(), dup), "redelivered")
			return pay
		},
		want: outcome{Status: payment.StatusSucceeded, Outcome: "booked", Order: booking.OrderConfirmed,
			Refunds:     []refundRow{{"duplicate_capture", total, "succeeded"}},
			Transitions: []string{"→pending", "pending→succeeded"}, Journals: []string{"booking", "capture", "fee", "refund"}},
	}, {
		name: "a capture of another amount books nothing and is given back whole",
		run: func(t *testing.T, o booking.Order) payment.Payment {
			pay := p.start(t, o, sandbox.TokenWrongAmount)
			require.NoError(t, p.pay.Apply(t.Context(), p.view(t, pay.GatewayKey)), "redelivered")
			return pay
		},
		want: outcome{Status: payment.StatusReconciliationRequired, Order: booking.OrderPendingPayment,
			Refunds:     []refundRow{{"failed_attempt_capture", total + sandbox.WrongAmountExtraMinor, "succeeded"}},
			Transitions: []string{"→pending", "pending→reconciliation_required"}, Journals: []string{"capture", "refund"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			show := p.show(t, 2, price, 1000)
			o := p.order(t, show.ID, "rumana", "A1", "A2")
			pay := tc.run(t, o)
			got := p.payment(t, pay.ID)
			order := p.getOrder(t, o.ID)
			require.Equal(t, tc.want, outcome{Status: got.Status, Outcome: got.Outcome, Failure: got.FailureReason,
				Order: order.EffectiveStatus(p.clock.Now()), Refunds: p.refunds(t, pay.ID),
				Transitions: p.transitions(t, show.ID, pay.ID), Journals: p.journals(t, show.ID)})
			var given int64
			for _, r := range tc.want.Refunds {
				given += r.Amount
			}
			require.Equal(t, given, got.RefundedMinor, "the payment counts what was given back")
			require.Equal(t, given, order.RefundedMinor, "so does the order")
			if tc.want.Order == booking.OrderConfirmed {
				require.Equal(t, pay.ID, order.PaymentID)
			}
			p.chargedOnce(t)
		})
	}
}

// TestChargeRetriedWithItsKey: a charge request that gets no
// answer is sent again with the same key, so the gateway captures once.
func TestChargeRetriedWithItsKey(t *testing.T) {
	t.Parallel()
	p := newPlatform(t, payment.Config{}) // three tries
	show := p.show(t, 1, 85000, 1000)
	for i, token := range []string{sandbox.TokenTimeoutApplied, sandbox.TokenTimeoutNotApplied} {
		o := p.order(t, show.ID, fmt.Sprintf("buyer-%d", i), "A1")
		pay := p.start(t, o, token)
		require.Equal(t, payment.StatusSucceeded, pay.Status, token)
		require.Len(t, p.gw.ChargesFor(pay.ID), 1, "%s: one charge at the gateway", token)
		// The seat is booked; cancel for the next buyer.
		_, err := p.pay.CancelOrder(t.Context(), o.UserID, o.ID)
		require.NoError(t, err)
	}
	p.chargedOnce(t)
}

// TestFailureReasons: a failed charge's code is stored as the API's
// failure reason, with a message for the buyer.
func TestFailureReasons(t *testing.T) {
	t.Parallel()
	p := newPlatform(t, payment.Config{})
	show := p.show(t, 10, 85000, 1000)
	for i, tc := range []struct{ code, reason string }{
		{"declined", "declined"},
		{"insufficient_funds", "insufficient_funds"},
		{"cancelled_by_buyer", "cancelled_by_buyer"},
		{"risk_rejected", "risk_rejected"},
		{"expired", "timed_out"},
		{"card_on_fire", "gateway_error"},
		{"", "gateway_error"},
	} {
		o := p.order(t, show.ID, fmt.Sprintf("buyer-%d", i), fmt.Sprintf("A%d", i+1))
		pay := p.start(t, o, "")
		c := p.view(t, pay.GatewayKey)
		c.Status, c.FailureCode = gateway.StatusFailed, tc.code
		require.NoError(t, p.pay.Apply(t.Context(), c))
		got := p.payment(t, pay.ID)
		require.Equal(t, payment.StatusFailed, got.Status, tc.code)
		require.Equal(t, tc.reason, got.FailureReason, tc.code)
		require.NotEmpty(t, got.FailureMessage, tc.code)
		_, known := payment.FailureReasons[got.FailureReason]
		require.True(t, known, "%s: a reason the API knows", tc.code)
	}
}
