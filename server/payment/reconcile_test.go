package payment_test

import (
	"cmp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/gateway"
	"github.com/seatghor/seatghor/server/gateway/sandbox"
	"github.com/seatghor/seatghor/server/payment"
	"github.com/seatghor/seatghor/server/shard"
)

// TestReconcile: the gateway's settlement report against our
// payments. Each kind of disagreement is found; a dry run changes nothing;
// a run resolves what has a clear rule (a missed capture is applied, a
// second capture refunded, an open attempt settled) and alerts on the rest;
// a second run finds only what waits for a person.
func TestReconcile(t *testing.T) {
	t.Parallel()
	p := newPlatform(t, payment.Config{ChargeTries: 1})
	ctx := t.Context()
	show := p.show(t, 10, 85000, 1000)
	pay := func(user, seat, token string) payment.Payment {
		return p.start(t, p.order(t, show.ID, user, seat), token)
	}

	matched := pay("u1", "A1", sandbox.TokenSuccess)
	dup := pay("u2", "A2", sandbox.TokenDuplicateCapture)  // its second capture is not applied yet
	missed := pay("u3", "A3", sandbox.TokenTimeoutApplied) // captured, UNKNOWN here
	wrong := pay("u4", "A4", sandbox.TokenWrongAmount)     // given back already
	waiting := pay("u5", "A5", "")                         // the buyer has not decided
	// ghost is booked here on a capture the gateway never reports.
	ghost := pay("u6", "A6", "")
	ghostCharge := gateway.Charge{ID: "ch_ghost", IdempotencyKey: ghost.GatewayKey, Reference: ghost.ID,
		Status: gateway.StatusSucceeded, AmountMinor: 85000, Currency: "BDT", CapturedAt: p.clock.Now()}
	require.NoError(t, p.pay.Apply(ctx, ghostCharge))
	require.Equal(t, payment.StatusUnknown, missed.Status)
	// Captures for payments we have no record of.
	unknownPayment := shard.NewID("pay", show.ID)
	_, err := p.client.Charge(ctx, gateway.ChargeRequest{IdempotencyKey: "chg_x1", Reference: unknownPayment,
		AmountMinor: 5000, Currency: "BDT", Token: sandbox.TokenSuccess})
	require.NoError(t, err)
	_, err = p.client.Charge(ctx, gateway.ChargeRequest{IdempotencyKey: "chg_x2", Reference: "order-42",
		AmountMinor: 7000, Currency: "BDT", Token: sandbox.TokenSuccess})
	require.NoError(t, err)
	dupCharge := p.gw.ChargesFor(dup.ID)[1]

	p.clock.Advance(time.Minute)
	req := payment.ReconcileRequest{From: t0.Add(-time.Hour), To: p.clock.Now().Add(time.Hour)}

	type found struct {
		Kind, Payment, Charge, Action string
	}
	// want sorts mismatches, whose order is the report's and the shard's.
	want := func(fs ...found) []found {
		slices.SortFunc(fs, func(a, b found) int {
			return cmp.Or(strings.Compare(a.Kind, b.Kind), strings.Compare(a.Payment, b.Payment), strings.Compare(a.Charge, b.Charge))
		})
		return fs
	}
	run := func(dry bool) (payment.ReconcileResult, []found) {
		t.Helper()
		r := req
		r.DryRun = dry
		res, err := p.pay.Reconcile(ctx, r)
		require.NoError(t, err)
		var out []found
		for _, m := range res.Mismatches {
			out = append(out, found{m.Kind, m.PaymentID, m.ChargeID, m.Action})
		}
		return res, want(out...)
	}
	x1 := p.gw.ChargesFor(unknownPayment)[0].ID
	x2 := p.gw.ChargesFor("order-42")[0].ID
	missedCharge := p.gw.ChargesFor(missed.ID)[0].ID
	alerts := []found{
		{payment.MismatchMissingLocally, "", x1, payment.ActionAlerted},
		{payment.MismatchMissingLocally, "", x2, payment.ActionAlerted},
		{payment.MismatchMissingAtGateway, ghost.ID, "ch_ghost", payment.ActionAlerted},
	}

	// A dry run lists, and changes nothing.
	res, got := run(true)
	dry := func(f found) found { f.Action = payment.ActionDryRun; return f }
	var dryAlerts []found
	for _, a := range alerts {
		dryAlerts = append(dryAlerts, dry(a))
	}
	require.Equal(t, want(append(dryAlerts,
		found{payment.MismatchDuplicateCapture, dup.ID, dupCharge.ID, payment.ActionDryRun},
		found{payment.MismatchStateDiffers, missed.ID, missedCharge, payment.ActionDryRun},
		// The attempts still open, as seen here.
		found{payment.MismatchStateDiffers, missed.ID, "", payment.ActionDryRun},
		found{payment.MismatchStateDiffers, waiting.ID, waiting.GatewayChargeID, payment.ActionDryRun},
	)...), got)
	require.True(t, res.DryRun)
	require.Zero(t, res.RefundsStarted+res.Resolved)
	require.Equal(t, payment.StatusUnknown, p.payment(t, missed.ID).Status)
	require.Empty(t, p.refunds(t, dup.ID))

	// The run resolves what has a rule.
	res, got = run(false)
	require.Equal(t, want(append(slices.Clone(alerts),
		found{payment.MismatchDuplicateCapture, dup.ID, dupCharge.ID, payment.ActionRefundStarted},
		found{payment.MismatchStateDiffers, missed.ID, missedCharge, payment.ActionStateResolved},
	)...), got)
	require.Equal(t, []int{1, 1}, []int{res.RefundsStarted, res.Resolved})
	require.Equal(t, 3, res.Matched, "the payments' own captures: matched's, dup's and wrong's (given back already)")
	require.Equal(t, payment.StatusSucceeded, p.payment(t, missed.ID).Status, "the missed capture is applied")
	require.Equal(t, booking.OrderConfirmed, p.getOrder(t, missed.OrderID).Status)
	require.Equal(t, []refundRow{{"duplicate_capture", 85000, "succeeded"}}, p.refunds(t, dup.ID))
	require.Equal(t, payment.StatusPending, p.payment(t, waiting.ID).Status, "the buyer may still decide")

	// Once more: only the alerts are left, each capture of ours matched.
	res, got = run(false)
	require.Equal(t, want(slices.Clone(alerts)...), got)
	require.Equal(t, []int{0, 0, 5}, []int{res.RefundsStarted, res.Resolved, res.Matched})
	require.Equal(t, []refundRow{{"duplicate_capture", 85000, "succeeded"}}, p.refunds(t, dup.ID), "refunded once")
	require.Equal(t, []refundRow{{"failed_attempt_capture", 85000 + sandbox.WrongAmountExtraMinor, "succeeded"}},
		p.refunds(t, wrong.ID))
	require.Equal(t, payment.StatusSucceeded, p.payment(t, matched.ID).Status)
	p.chargedOnce(t)
}
