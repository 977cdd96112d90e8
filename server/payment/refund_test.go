package payment_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	eventsv1 "github.com/seatghor/seatghor/gen/seatghor/events/v1"
	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/gateway/sandbox"
	"github.com/seatghor/seatghor/server/ledger"
	"github.com/seatghor/seatghor/server/payment"
	"github.com/seatghor/seatghor/server/pg"
)

// prior is a manual refund given before the buyer cancels.
type prior struct {
	amount int64
	// awaiting: it waits for a second admin's approval when the buyer
	// cancels, and is approved afterwards; failed: the gateway fails it.
	awaiting, failed bool
}

// TestCancellationRefundsTheTotalLessTheFee (R-6.9, decisions 0070, 0292):
// a cancelled booking is refunded its total less the show's fee (rounded
// down, never against the buyer), less what refunds of the charge already
// gave back or are giving back; so what the buyer gets back in all is
// max(total − fee, refunds before), and never more than was captured. The
// booking's shares go back as differences (decision 0008).
func TestCancellationRefundsTheTotalLessTheFee(t *testing.T) {
	t.Parallel()
	p := newPlatform(t, payment.Config{})
	// A second admin's approval from the first paisa, for refunds asked to
	// wait; the platform's own service sends every refund at once.
	strict := p.service(payment.Config{RefundApprovalMinor: 1})

	for _, tc := range []struct {
		name   string
		seats  int
		price  int64
		feeBps int
		priors []prior
		// cancel is the cancellation's refund (0: none); back what the
		// buyer has back in all, through the gateway, once every refund
		// asked for is made.
		fee, cancel, back int64
	}{
		{name: "the total less the fee", seats: 2, price: 85000, feeBps: 1000, fee: 17000, cancel: 153000, back: 153000},
		{name: "no fee", seats: 2, price: 85000, feeBps: 0, cancel: 170000, back: 170000},
		{name: "the whole total as fee", seats: 2, price: 85000, feeBps: 10000, fee: 170000},
		{name: "the fee rounds down", seats: 1, price: 85001, feeBps: 1000, fee: 8500, cancel: 76501, back: 76501},
		{name: "an odd fee rounds down", seats: 1, price: 99999, feeBps: 333, fee: 3329, cancel: 96670, back: 96670},
		{name: "after a goodwill refund, the rest of the total less the fee", seats: 2, price: 85000, feeBps: 1000,
			priors: []prior{{amount: 10000}}, fee: 17000, cancel: 143000, back: 153000},
		{name: "after two goodwill refunds", seats: 2, price: 85000, feeBps: 1000,
			priors: []prior{{amount: 50000}, {amount: 50000}}, fee: 17000, cancel: 53000, back: 153000},
		{name: "after a refund of exactly the total less the fee, nothing", seats: 2, price: 85000, feeBps: 1000,
			priors: []prior{{amount: 153000}}, fee: 17000, back: 153000},
		{name: "after a refund of more than the total less the fee, nothing", seats: 2, price: 85000, feeBps: 1000,
			priors: []prior{{amount: 160000}}, fee: 17000, back: 160000},
		{name: "after a full refund, nothing", seats: 2, price: 85000, feeBps: 1000,
			priors: []prior{{amount: 170000}}, fee: 17000, back: 170000},
		{name: "odd amounts: the shares still add up to the paisa", seats: 1, price: 99999, feeBps: 333,
			priors: []prior{{amount: 12345}, {amount: 33333}}, fee: 3329, cancel: 50992, back: 96670},
		{name: "a refund awaiting approval counts as given", seats: 2, price: 85000, feeBps: 1000,
			priors: []prior{{amount: 10000, awaiting: true}}, fee: 17000, cancel: 143000, back: 153000},
		{name: "a failed refund counts as given: it is owed and settled by hand", seats: 2, price: 85000, feeBps: 1000,
			priors: []prior{{amount: 10000, failed: true}}, fee: 17000, cancel: 143000, back: 143000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			show := p.show(t, tc.seats, tc.price, tc.feeBps)
			var seats []string
			for i := range tc.seats {
				seats = append(seats, fmt.Sprintf("A%d", i+1))
			}
			o := p.order(t, show.ID, "rumana", seats...)
			pay := p.start(t, o, sandbox.TokenSuccess)
			require.Equal(t, payment.StatusSucceeded, pay.Status)
			total := int64(tc.seats) * tc.price

			var awaiting []string
			for _, pr := range tc.priors {
				svc := p.pay
				if pr.awaiting {
					svc = strict
				}
				if pr.failed {
					p.gw.SetFaults(sandbox.Faults{RefundFailRate: 1})
				}
				// An admin of this case's own: admins' days are counted.
				r, err := svc.RefundPayment(ctx, "admin-of-"+tc.name, pay.ID, pr.amount, "goodwill")
				p.gw.SetFaults(sandbox.Faults{})
				require.NoError(t, err)
				switch {
				case pr.awaiting:
					require.Equal(t, "awaiting_approval", r.Status)
					awaiting = append(awaiting, r.ID)
				case pr.failed:
					require.Equal(t, "failed", r.Status)
				default:
					require.Equal(t, "succeeded", r.Status)
				}
			}

			cancelled, err := p.pay.CancelOrder(ctx, "rumana", o.ID)
			require.NoError(t, err)
			require.Equal(t, booking.OrderCancelled, cancelled.Status)
			require.Equal(t, tc.fee, cancelled.CancellationFeeMinor)
			for _, id := range awaiting {
				r, err := p.pay.ApproveRefund(ctx, "second-admin", id)
				require.NoError(t, err)
				require.Equal(t, "succeeded", r.Status)
			}

			var cancels []refundRow
			var recorded, made int64
			for _, r := range p.refunds(t, pay.ID) {
				recorded += r.Amount
				if r.Status == "succeeded" {
					made += r.Amount
				}
				if r.Reason == "cancellation" {
					cancels = append(cancels, r)
				}
			}
			if tc.cancel == 0 {
				require.Empty(t, cancels, "nothing left to give back")
			} else {
				require.Equal(t, []refundRow{{"cancellation", tc.cancel, "succeeded"}}, cancels)
			}
			require.Equal(t, tc.back, made, "given back through the gateway")
			require.LessOrEqual(t, recorded, total, "never more than was captured")
			require.Equal(t, made, p.payment(t, pay.ID).RefundedMinor)
			order := p.getOrder(t, o.ID)
			require.Equal(t, made, order.RefundedMinor)
			require.Equal(t, booking.OrderCancelled, order.Status)

			// The RefundIssued of the cancellation says what fee was kept.
			for _, e := range showEvents(t, p, show.ID, func() *eventsv1.RefundIssued { return &eventsv1.RefundIssued{} }) {
				if e.GetReason() == eventsv1.RefundReason_REFUND_REASON_CANCELLATION {
					require.Equal(t, tc.fee, e.GetFee().GetAmountMinor())
					require.Equal(t, tc.cancel, e.GetAmount().GetAmountMinor())
				}
			}

			// The books: the operator and the platform keep their shares
			// of what is still captured, exactly (decision 0008).
			kept := total - made
			b := p.balances(t, show.ID)
			require.Equal(t, -(kept - ledger.Commission(kept, 1000)), b[ledger.AccountOperatorPayable], "the operator's share")
			require.Equal(t, -ledger.Commission(kept, 1000), b[ledger.AccountPlatformRevenue], "the platform's share")
			p.chargedOnce(t)
		})
	}
}

// TestCancelWithoutRefund: an order not paid yet, or free, is cancelled
// with no refund and no journal.
func TestCancelWithoutRefund(t *testing.T) {
	t.Parallel()
	p := newPlatform(t, payment.Config{})
	ctx := t.Context()

	show := p.show(t, 2, 85000, 1000)
	o := p.order(t, show.ID, "rumana", "A1")
	pay := p.start(t, o, sandbox.TokenDecline)
	got, err := p.pay.CancelOrder(ctx, "rumana", o.ID)
	require.NoError(t, err)
	require.Equal(t, booking.OrderCancelled, got.Status)
	require.Empty(t, p.refunds(t, pay.ID))

	free := p.show(t, 2, 0, 1000)
	o = p.order(t, free.ID, "rumana", "A1", "A2")
	require.Equal(t, booking.OrderConfirmed, o.Status, "decision 0070: a free order is confirmed when it is made")
	got, err = p.pay.CancelOrder(ctx, "rumana", o.ID)
	require.NoError(t, err)
	require.Equal(t, booking.OrderCancelled, got.Status)
	require.Empty(t, p.journals(t, free.ID))
	require.Empty(t, p.journals(t, show.ID))

	// Someone else's order is not found; a cancelled one is not cancelled
	// twice.
	o = p.order(t, show.ID, "rumana", "A2")
	p.start(t, o, sandbox.TokenSuccess)
	bookingKind := func(err error) fault.Reason {
		t.Helper()
		be, ok := fault.As(err)
		require.True(t, ok, "want a booking error, got %v", err)
		return be.Reason
	}
	_, err = p.pay.CancelOrder(ctx, "imran", o.ID)
	require.Equal(t, fault.BookingNotFound, bookingKind(err))
	require.Equal(t, booking.OrderConfirmed, p.getOrder(t, o.ID).Status)
	_, err = p.pay.CancelOrder(ctx, "rumana", o.ID)
	require.NoError(t, err)
	_, err = p.pay.CancelOrder(ctx, "rumana", o.ID)
	require.Equal(t, fault.BookingNotAllowed, bookingKind(err))
	require.Len(t, p.refunds(t, p.getOrder(t, o.ID).PaymentID), 1, "refunded once")
}

// TestManualRefunds (R-10, decision 0060): an admin refunds part of a
// booked capture, never more than is left of it; a second admin approves
// when the charge's refunds, or the admin's own unapproved ones of the
// last 24 hours, would reach RefundApprovalMinor.
func TestManualRefunds(t *testing.T) {
	t.Parallel()
	p := newPlatform(t, payment.Config{RefundApprovalMinor: 100000})
	ctx := t.Context()
	show := p.show(t, 5, 85000, 1000)
	a := p.start(t, p.order(t, show.ID, "rumana", "A1", "A2"), sandbox.TokenSuccess)
	b := p.start(t, p.order(t, show.ID, "imran", "A3", "A4"), sandbox.TokenSuccess)
	declined := p.start(t, p.order(t, show.ID, "nadia", "A5"), sandbox.TokenDecline)

	type answer struct {
		kind   fault.Reason
		field  string
		status string
	}
	refund := func(admin, paymentID string, amount int64) answer {
		r, err := p.pay.RefundPayment(ctx, admin, paymentID, amount, "")
		if err != nil {
			kind, field := kindOf(t, err)
			return answer{kind: kind, field: field}
		}
		return answer{status: r.Status}
	}
	for _, step := range []struct {
		name    string
		admin   string
		payment string
		amount  int64
		want    answer
	}{
		{"more than was captured", "a1", a.ID, 170001, answer{kind: fault.PaymentInvalid, field: "amount_minor"}},
		{"an attempt that booked nothing", "a1", declined.ID, 100, answer{kind: fault.PaymentNotAllowed}},
		{"no such payment", "a1", "pay_1_nothing", 100, answer{kind: fault.PaymentNotFound}},
		{"a small refund goes at once", "a1", a.ID, 60000, answer{status: "succeeded"}},
		{"one that brings the charge's refunds to the limit waits", "a2", a.ID, 40000, answer{status: "awaiting_approval"}},
		{"one waiting counts against what is left", "a2", a.ID, 70001, answer{kind: fault.PaymentInvalid, field: "amount_minor"}},
		{"all that is left", "a3", a.ID, 70000, answer{status: "awaiting_approval"}},
		{"nothing is left", "a3", a.ID, 1, answer{kind: fault.PaymentInvalid, field: "amount_minor"}},
		{"an admin's day below the limit", "a1", b.ID, 39999, answer{status: "succeeded"}},
		{"an admin's day reaching the limit waits", "a1", b.ID, 1, answer{status: "awaiting_approval"}},
		{"another admin's day is their own", "a4", b.ID, 1000, answer{status: "succeeded"}},
	} {
		require.Equal(t, step.want, refund(step.admin, step.payment, step.amount), step.name)
	}
	var sum int64
	for _, r := range p.refunds(t, a.ID) {
		sum += r.Amount
	}
	require.Equal(t, int64(170000), sum, "the whole capture, and not a paisa more")

	// The second admin's approval: not the one who asked, and once.
	failed, _, err := p.pay.ListFailedRefunds(ctx, show.ID, 10, "")
	require.NoError(t, err)
	require.Empty(t, failed, "waiting is not failed")
	var id string
	require.NoError(t, p.shard(t).QueryRow(ctx, `
		SELECT refund_id FROM refunds WHERE payment_id = $1 AND status = 'awaiting_approval' AND requested_by = 'a2'`,
		a.ID).Scan(&id))
	_, err = p.pay.ApproveRefund(ctx, "a2", id)
	kind, _ := kindOf(t, err)
	require.Equal(t, fault.PaymentForbidden, kind, "four eyes")
	r, err := p.pay.ApproveRefund(ctx, "a1", id)
	require.NoError(t, err)
	require.Equal(t, []string{"succeeded", "a1", "a2"}, []string{r.Status, r.ApprovedBy, r.RequestedBy})
	_, err = p.pay.ApproveRefund(ctx, "a3", id)
	kind, _ = kindOf(t, err)
	require.Equal(t, fault.PaymentNotAllowed, kind, "approved once")
	require.Equal(t, int64(100000), p.payment(t, a.ID).RefundedMinor)

	// A day later, the admin's earlier refunds no longer count.
	p.clock.Advance(24*time.Hour + time.Second)
	require.Equal(t, answer{status: "succeeded"}, refund("a1", b.ID, 1))
}

// TestHeldBackAndSettledRefunds (R-7, decisions 0062, 0293): payouts keep
// back the operator's share of booked refunds not made yet and of failed
// ones no admin has settled; settling a failed refund records the money
// paid another way and stops keeping it back.
func TestHeldBackAndSettledRefunds(t *testing.T) {
	t.Parallel()
	p := newPlatform(t, payment.Config{RefundApprovalMinor: 50000})
	ctx := t.Context()
	show := p.show(t, 2, 85000, 1000)
	o := p.order(t, show.ID, "rumana", "A1", "A2")
	pay := p.start(t, o, sandbox.TokenSuccess)

	heldBack := func() ledger.Held {
		t.Helper()
		var h ledger.Held
		require.NoError(t, pg.InTx(ctx, p.shard(t), func(tx pgx.Tx) (err error) {
			h, err = p.pay.HeldBack(ctx, tx, show.ID, "BDT")
			return err
		}))
		return h
	}
	require.Equal(t, ledger.Held{}, heldBack(), "nothing on its way back")

	big, err := p.pay.RefundPayment(ctx, "a1", pay.ID, 60000, "")
	require.NoError(t, err)
	require.Equal(t, "awaiting_approval", big.Status)
	// Of 170,000 the operator has 153,000; of the 110,000 left, 99,000.
	require.Equal(t, ledger.Held{Minor: 54000, Pending: []string{big.ID}}, heldBack())
	_, err = p.pay.ApproveRefund(ctx, "a2", big.ID)
	require.NoError(t, err)
	require.Equal(t, ledger.Held{}, heldBack(), "made: the journal took the share")

	p.gw.SetFaults(sandbox.Faults{RefundFailRate: 1})
	small, err := p.service(payment.Config{}).RefundPayment(ctx, "a1", pay.ID, 20000, "")
	p.gw.SetFaults(sandbox.Faults{})
	require.NoError(t, err)
	require.Equal(t, "failed", small.Status)
	// Of the 110,000 left the operator has 99,000; of 90,000, 81,000.
	require.Equal(t, ledger.Held{Minor: 18000, Failed: []string{small.ID}}, heldBack())
	failed, next, err := p.pay.ListFailedRefunds(ctx, 0, 10, "")
	require.NoError(t, err)
	require.Empty(t, next)
	require.Len(t, failed, 1)
	require.Equal(t, []any{small.ID, int64(20000), show.ID, (*payment.Settlement)(nil)},
		[]any{failed[0].ID, failed[0].AmountMinor, failed[0].ShowID, failed[0].Settlement})
	require.NotEmpty(t, failed[0].LastError)

	for _, tc := range []struct {
		name, refund, method string
		kind                 fault.Reason
		field                string
	}{
		{"an unknown way", small.ID, "cheque", fault.PaymentInvalid, "method"},
		{"a refund the gateway made", big.ID, payment.SettleCash, fault.PaymentNotAllowed, ""},
		{"no such refund", "rfd_1_nothing", payment.SettleCash, fault.PaymentNotFound, ""},
	} {
		_, err := p.pay.SettleFailedRefund(ctx, "a3", tc.refund, tc.method, "ref", "")
		kind, field := kindOf(t, err)
		require.Equal(t, []any{tc.kind, tc.field}, []any{kind, field}, tc.name)
	}
	require.Len(t, p.journals(t, show.ID), 3, "nothing settled: booking, fee, the refund made")

	settled, err := p.pay.SettleFailedRefund(ctx, "a3", small.ID, payment.SettleBankTransfer, "TRX-1", "paid at the counter")
	require.NoError(t, err)
	require.NotNil(t, settled.Settlement)
	require.Equal(t, []string{payment.SettleBankTransfer, "TRX-1", "a3", "refund-settled:" + small.ID},
		[]string{settled.Settlement.Method, settled.Settlement.Reference, settled.Settlement.By, settled.Settlement.TxnID})
	require.Equal(t, ledger.Held{}, heldBack())
	failed, _, err = p.pay.ListFailedRefunds(ctx, show.ID, 10, "")
	require.NoError(t, err)
	require.Empty(t, failed, "settled: no longer listed")
	_, err = p.pay.SettleFailedRefund(ctx, "a3", small.ID, payment.SettleCash, "again", "")
	kind, _ := kindOf(t, err)
	require.Equal(t, fault.PaymentNotAllowed, kind, "settled once")
	require.Equal(t, []string{"booking", "fee", "refund", "refund-settled"}, p.journals(t, show.ID))
	require.Equal(t, int64(80000), p.payment(t, pay.ID).RefundedMinor, "the settled refund is given back")
	require.Equal(t, int64(80000), p.getOrder(t, o.ID).RefundedMinor)

	// Cancelling now gives back the rest of the total less the fee.
	_, err = p.pay.CancelOrder(ctx, "rumana", o.ID)
	require.NoError(t, err)
	require.Equal(t, int64(153000), p.payment(t, pay.ID).RefundedMinor)
	kept := int64(170000 - 153000)
	b := p.balances(t, show.ID)
	require.Equal(t, -(kept - ledger.Commission(kept, 1000)), b[ledger.AccountOperatorPayable])
	require.Equal(t, -ledger.Commission(kept, 1000), b[ledger.AccountPlatformRevenue])
}
