package payment_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/gateway"
	"github.com/seatghor/seatghor/server/gateway/sandbox"
	"github.com/seatghor/seatghor/server/payment"
)

// TestSettledAndKeptMoney: the checks `seatghor verify` and `seatghor
// chaos` make of the money (R-6.10 after reconciliation): a confirmed order
// keeps one charge, a cancelled one its fee, an order not booked nothing;
// a second capture is money kept wrongly until reconciliation gives it
// back; a refund the gateway refused is owed, counted apart; an open
// attempt is outstanding; a redelivered event is stored once, and a
// forged one's id is never stored.
func TestSettledAndKeptMoney(t *testing.T) {
	t.Parallel()
	p := newPlatform(t, payment.Config{ChargeTries: 1})
	ctx := t.Context()
	show := p.show(t, 10, 85000, 1000)
	window := func() (time.Time, time.Time) { return t0.Add(-time.Hour), p.clock.Now().Add(time.Hour) }
	kept := func() payment.KeptCheck {
		t.Helper()
		from, to := window()
		k, err := p.pay.CheckKept(ctx, from, to)
		require.NoError(t, err)
		return k
	}

	paid := p.start(t, p.order(t, show.ID, "u1", "A1"), sandbox.TokenSuccess)
	cancelled := p.start(t, p.order(t, show.ID, "u2", "A2"), sandbox.TokenSuccess)
	_, err := p.pay.CancelOrder(ctx, "u2", cancelled.OrderID)
	require.NoError(t, err)
	declined := p.start(t, p.order(t, show.ID, "u3", "A3"), sandbox.TokenDecline)
	require.Equal(t, payment.StatusFailed, declined.Status)
	waiting := p.start(t, p.order(t, show.ID, "u4", "A4"), "") // the buyer has not decided
	require.Equal(t, payment.StatusPending, waiting.Status)

	k := kept()
	require.Equal(t, 4, k.Orders)
	require.Equal(t, 2, k.Charged)
	require.Empty(t, k.Problems, "%+v", k.Problems)
	require.Zero(t, k.Owed)
	out, err := p.pay.CheckSettled(ctx)
	require.NoError(t, err)
	require.Equal(t, payment.Outstanding{Open: 1, Events: 0}, out, "the hosted page is still open")

	// A second capture is kept wrongly until reconciliation refunds it.
	dup := p.start(t, p.order(t, show.ID, "u5", "A5"), sandbox.TokenDuplicateCapture)
	k = kept()
	require.Len(t, k.Problems, 1)
	require.Equal(t, payment.KeptProblem{OrderID: dup.OrderID, Status: "confirmed", Expected: 85000, Kept: 170000,
		Captures: 2, Keeping: 2}, k.Problems[0])
	from, to := window()
	_, err = p.pay.Reconcile(ctx, payment.ReconcileRequest{From: from, To: to})
	require.NoError(t, err)
	require.Empty(t, kept().Problems)

	// A refund the gateway refuses is owed, not kept: counted apart.
	p.gw.SetFaults(sandbox.Faults{RefundFailRate: 1})
	owed := p.start(t, p.order(t, show.ID, "u6", "A6"), sandbox.TokenSuccess)
	_, err = p.pay.CancelOrder(ctx, "u6", owed.OrderID)
	require.NoError(t, err)
	p.gw.SetFaults(sandbox.Faults{})
	k = kept()
	require.Empty(t, k.Problems)
	require.Equal(t, 1, k.Owed)
	out, err = p.pay.CheckSettled(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 1, out.FailedRefunds)
	require.Empty(t, k.Strays)

	// Events: a redelivery is stored once; only what was stored is found.
	charge := p.view(t, paid.GatewayKey)
	ev := gateway.Event{ID: "evt_verify_1", Type: gateway.EventChargeSucceeded, CreatedAt: p.clock.Now(), Charge: &charge}
	raw, err := json.Marshal(ev)
	require.NoError(t, err)
	for range 3 {
		_, err := p.pay.StoreEvent(ctx, ev, raw, p.clock.Now())
		require.NoError(t, err)
	}
	out, err = p.pay.CheckSettled(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 1, out.Events)
	require.Zero(t, out.EventsTwice)
	require.EqualValues(t, 1, out.Unprocessed)
	n, err := p.pay.EventsStored(ctx, []string{"evt_verify_1", "evt_forged"})
	require.NoError(t, err)
	require.EqualValues(t, 1, n)

	// Stored twice under another key (what the chaos run's broken build
	// does) is counted.
	_, err = p.shard(t).Exec(ctx, `
		INSERT INTO payment_events (event_id, provider, event_type, reference, raw, event, occurred_at, received_at)
		SELECT event_id || '#again', provider, event_type, reference, raw, event, occurred_at, received_at
		FROM payment_events WHERE event_id = 'evt_verify_1'`)
	require.NoError(t, err)
	out, err = p.pay.CheckSettled(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 1, out.EventsTwice)
}
