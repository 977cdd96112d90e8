package payment_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/gateway"
	"github.com/seatghor/seatghor/server/payment"
	"github.com/seatghor/seatghor/server/shard"
)

// TestEventsInAnyOrder: stored webhook events are applied
// whatever order they arrive in, and however often. A success is applied
// as it is; a failure may be stale, so the gateway's current status is
// applied instead.
func TestEventsInAnyOrder(t *testing.T) {
	t.Parallel()
	p := newPlatform(t, payment.Config{})

	// The events of one attempt: the sandbox's own for the buyer's answer
	// on the hosted page, and stale or duplicated ones made from them.
	type evs struct {
		succeeded, failedStale, pending, succeededAgain gateway.Event
	}
	n := 0
	event := func(typ gateway.EventType, c gateway.Charge) gateway.Event {
		n++
		return gateway.Event{ID: fmt.Sprintf("evt_test_%d", n), Type: typ, CreatedAt: p.clock.Now(), Charge: &c}
	}
	sandboxEvent := func(t *testing.T, chargeID string, typ gateway.EventType) gateway.Event {
		for _, e := range p.gw.Events() {
			if e.Charge != nil && e.Charge.ID == chargeID && e.Type == typ {
				return e
			}
		}
		t.Fatalf("the sandbox sent no %s for %s", typ, chargeID)
		return gateway.Event{}
	}

	for _, tc := range []struct {
		name string
		// approve: the buyer approves on the hosted page (else declines,
		// or, with neither, does nothing yet).
		approve, decline bool
		order            func(e evs) []gateway.Event
		want             payment.Status
		wantReason       string
		wantStored       int // distinct events stored
	}{
		{name: "success", approve: true, order: func(e evs) []gateway.Event { return []gateway.Event{e.succeeded} },
			want: payment.StatusSucceeded, wantStored: 1},
		{name: "success delivered three times", approve: true,
			order: func(e evs) []gateway.Event { return []gateway.Event{e.succeeded, e.succeeded, e.succeeded} },
			want:  payment.StatusSucceeded, wantStored: 1},
		{name: "success sent twice as two events", approve: true,
			order: func(e evs) []gateway.Event { return []gateway.Event{e.succeeded, e.succeededAgain} },
			want:  payment.StatusSucceeded, wantStored: 2},
		{name: "a stale failure before the success", approve: true,
			order: func(e evs) []gateway.Event { return []gateway.Event{e.failedStale, e.succeeded} },
			want:  payment.StatusSucceeded, wantStored: 2},
		{name: "a stale failure after the success", approve: true,
			order: func(e evs) []gateway.Event { return []gateway.Event{e.succeeded, e.failedStale} },
			want:  payment.StatusSucceeded, wantStored: 2},
		{name: "pending after the success", approve: true,
			order: func(e evs) []gateway.Event { return []gateway.Event{e.succeeded, e.pending} },
			want:  payment.StatusSucceeded, wantStored: 2},
		{name: "only a stale failure: the gateway says it is captured", approve: true,
			order: func(e evs) []gateway.Event { return []gateway.Event{e.failedStale} },
			want:  payment.StatusSucceeded, wantStored: 1},
		{name: "a failure while the gateway still waits for the buyer",
			order: func(e evs) []gateway.Event { return []gateway.Event{e.failedStale, e.pending} },
			want:  payment.StatusPending, wantStored: 2},
		{name: "the buyer declines", decline: true,
			order: func(e evs) []gateway.Event { return []gateway.Event{e.failedStale, e.failedStale} },
			want:  payment.StatusFailed, wantReason: "cancelled_by_buyer", wantStored: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			show := p.show(t, 1, 85000, 1000)
			o := p.order(t, show.ID, "rumana", "A1")
			pay := p.start(t, o, "")
			pending := p.view(t, pay.GatewayKey)
			var e evs
			e.pending = event(gateway.EventChargePending, pending)
			failed := pending
			failed.Status, failed.FailureCode = gateway.StatusFailed, "declined"
			e.failedStale = event(gateway.EventChargeFailed, failed)
			switch {
			case tc.approve:
				_, err := p.gw.Approve(pay.GatewayChargeID)
				require.NoError(t, err)
				e.succeeded = sandboxEvent(t, pay.GatewayChargeID, gateway.EventChargeSucceeded)
				e.succeededAgain = event(gateway.EventChargeSucceeded, *e.succeeded.Charge)
			case tc.decline:
				_, err := p.gw.Decline(pay.GatewayChargeID)
				require.NoError(t, err)
				e.failedStale = sandboxEvent(t, pay.GatewayChargeID, gateway.EventChargeFailed)
			}

			stored := map[string]bool{}
			for _, ev := range tc.order(e) {
				raw, err := json.Marshal(ev)
				require.NoError(t, err)
				p.clock.Advance(time.Millisecond)
				result, err := p.pay.StoreEvent(t.Context(), ev, raw, p.clock.Now())
				require.NoError(t, err)
				require.Equal(t, map[bool]string{false: "stored", true: "duplicate"}[stored[ev.ID]], result, "event %s", ev.ID)
				stored[ev.ID] = true
				_, err = p.pay.ProcessEvents(t.Context())
				require.NoError(t, err)
			}
			require.Len(t, stored, tc.wantStored)

			got := p.payment(t, pay.ID)
			require.Equal(t, tc.want, got.Status)
			require.Equal(t, tc.wantReason, got.FailureReason)
			require.Empty(t, p.refunds(t, pay.ID), "nothing to give back")
			transitions := []string{"→pending"}
			journals := []string{}
			if tc.want != payment.StatusPending {
				transitions = append(transitions, "pending→"+string(tc.want))
			}
			if tc.want == payment.StatusSucceeded {
				journals = []string{"booking", "fee"}
				require.Equal(t, "booked", got.Outcome)
			}
			require.Equal(t, transitions, p.transitions(t, show.ID, pay.ID), "each change announced once")
			require.Equal(t, journals, p.journals(t, show.ID), "booked once")

			var open int
			require.NoError(t, p.shard(t).QueryRow(t.Context(), `
				SELECT count(*) FROM payment_events WHERE reference = $1 AND processed_at IS NULL`, pay.ID).Scan(&open))
			require.Zero(t, open, "every event is processed")
		})
	}

	// An event about nothing of ours is not stored.
	stray := event(gateway.EventChargeSucceeded, gateway.Charge{ID: "ch_stray", Reference: "order-42", Status: gateway.StatusSucceeded})
	_, err := p.pay.StoreEvent(t.Context(), stray, []byte(`{}`), p.clock.Now())
	require.ErrorIs(t, err, payment.ErrUnroutable)
	stray = event(gateway.EventChargeSucceeded, gateway.Charge{ID: "ch_stray", Reference: shard.NewID("pay", 424242), Status: gateway.StatusSucceeded})
	_, err = p.pay.StoreEvent(t.Context(), stray, []byte(`{}`), p.clock.Now())
	require.ErrorIs(t, err, payment.ErrUnroutable, "a show we do not have")
}
