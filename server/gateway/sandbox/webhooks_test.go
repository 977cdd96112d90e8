package sandbox_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/gateway"
	"github.com/seatghor/seatghor/server/gateway/sandbox"
)

func TestWebhooksSignedAndVerifiable(t *testing.T) {
	t.Parallel()
	// The sandbox signs with the old and the new secret while rotating;
	// the receiver holds only the new one.
	e := newEnv(t, envOpts{cfg: sandbox.Config{WebhookSecrets: []string{"whsec_old", secret}}})

	ok, err := e.client.Charge(ctx(t), chargeReq("key-ok", "pay-ok", 10000, sandbox.TokenSuccess))
	require.NoError(t, err)
	no, err := e.client.Charge(ctx(t), chargeReq("key-no", "pay-no", 10000, sandbox.TokenDecline))
	require.NoError(t, err)
	rf, err := e.client.Refund(ctx(t), refundReq("rk", ok.ID, 2500))
	require.NoError(t, err)
	e.settle(t)

	require.Empty(t, e.hook.rejected)
	got := e.hook.events()
	require.Len(t, got, 3)
	byType := map[gateway.EventType]gateway.Event{}
	for _, ev := range got {
		byType[ev.Type] = ev
		require.NotEmpty(t, ev.ID)
		require.WithinDuration(t, time.Now(), ev.CreatedAt, time.Minute)
	}
	require.Equal(t, ok.ID, byType[gateway.EventChargeSucceeded].Charge.ID)
	require.Equal(t, gateway.StatusSucceeded, byType[gateway.EventChargeSucceeded].Charge.Status)
	require.Equal(t, int64(175), byType[gateway.EventChargeSucceeded].Charge.FeeMinor)
	require.Nil(t, byType[gateway.EventChargeSucceeded].Refund)
	require.Equal(t, no.ID, byType[gateway.EventChargeFailed].Charge.ID)
	require.Equal(t, "declined", byType[gateway.EventChargeFailed].Charge.FailureCode)
	require.Equal(t, rf.ID, byType[gateway.EventRefundSucceeded].Refund.ID)

	// What arrived is what the sandbox says it sent.
	require.ElementsMatch(t, e.gw.Events(), got)
	st := e.gw.WebhookStats()
	require.Equal(t, sandbox.WebhookStats{Events: 3, Attempts: 3, Delivered: 3}, st)
}

func TestWebhookRetriedAfterReceiverError(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	e.hook.setFailFirst(2)

	_, err := e.client.Charge(ctx(t), chargeReq("key", "pay", 10000, sandbox.TokenSuccess))
	require.NoError(t, err)
	e.settle(t)

	require.Len(t, e.hook.events(), 1)
	require.Equal(t, sandbox.WebhookStats{Events: 1, Attempts: 3, Delivered: 1}, e.gw.WebhookStats())
}

func TestWebhookGivenUp(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{cfg: sandbox.Config{WebhookRetries: 2}})
	e.hook.setFailFirst(1000)

	_, err := e.client.Charge(ctx(t), chargeReq("key", "pay", 10000, sandbox.TokenSuccess))
	require.NoError(t, err)
	e.settle(t)

	require.Empty(t, e.hook.events())
	require.Equal(t, sandbox.WebhookStats{Events: 1, Attempts: 3, GivenUp: 1}, e.gw.WebhookStats())
	// The event is lost to the receiver; a status query still tells.
	c, err := e.client.GetCharge(ctx(t), "key")
	require.NoError(t, err)
	require.Equal(t, gateway.StatusSucceeded, c.Status)
}

func TestCloseStopsDelivery(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{cfg: sandbox.Config{WebhookBackoff: time.Hour}})
	e.hook.setFailFirst(1000)

	_, err := e.client.Charge(ctx(t), chargeReq("key", "pay", 10000, sandbox.TokenSuccess))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return e.gw.WebhookStats().Attempts == 1 }, 5*time.Second, time.Millisecond)
	require.Equal(t, 1, e.gw.Pending(), "waiting an hour to retry")

	// Close gives up the retry that waits an hour; it does not wait for it.
	closed := make(chan struct{})
	go func() { e.gw.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(time.Minute):
		t.Fatal("Close waited for the hour-long retry backoff")
	}
	require.Equal(t, 0, e.gw.Pending())
	require.Equal(t, 1, e.gw.WebhookStats().GivenUp)
}

type webhookRun struct {
	stats      sandbox.WebhookStats
	deliveries int
	delivered  []string // distinct event ids that arrived, sorted
	perEvent   map[string]int
	reordered  bool
}

func runWebhookFaults(t *testing.T, f sandbox.Faults) webhookRun {
	t.Helper()
	e := newEnv(t, envOpts{cfg: sandbox.Config{Faults: f}})
	for i := range 40 {
		_, err := e.client.Charge(ctx(t), chargeReq(fmt.Sprintf("key-%d", i), fmt.Sprintf("pay-%d", i), 10000, sandbox.TokenSuccess))
		require.NoError(t, err)
	}
	e.settle(t)

	emitted := map[string]int{}
	for i, ev := range e.gw.Events() {
		emitted[ev.ID] = i
	}
	run := webhookRun{stats: e.gw.WebhookStats(), perEvent: map[string]int{}}
	last := -1
	for _, ev := range e.hook.events() {
		run.deliveries++
		run.perEvent[ev.ID]++
		if !slices.Contains(run.delivered, ev.ID) {
			run.delivered = append(run.delivered, ev.ID)
		}
		if emitted[ev.ID] < last {
			run.reordered = true
		}
		last = emitted[ev.ID]
	}
	slices.Sort(run.delivered)
	return run
}

func TestWebhookFaultsDeterministic(t *testing.T) {
	t.Parallel()
	f := sandbox.Faults{Seed: 42, DuplicateRate: 0.25, DropRate: 0.2, DelayMax: 100 * time.Millisecond}
	a := runWebhookFaults(t, f)
	b := runWebhookFaults(t, f)

	require.Equal(t, a.stats, b.stats, "same seed, same faults")
	require.Equal(t, a.delivered, b.delivered, "the same events were dropped")
	require.Equal(t, a.deliveries, b.deliveries)

	st := a.stats
	require.Equal(t, 40, st.Events)
	require.Positive(t, st.Dropped)
	require.Positive(t, st.Duplicated)
	require.Len(t, a.delivered, st.Events-st.Dropped, "a dropped event never arrives")
	require.Equal(t, st.Events-st.Dropped+st.Duplicated, a.deliveries, "a duplicated one arrives twice")
	require.Equal(t, a.deliveries, st.Delivered)
	require.True(t, a.reordered, "random delays reorder events")
}

// TestWebhooksUpToThreeCopiesAndHeldBack: with DuplicateMax 3 a
// duplicated event arrives twice or three times, both seen, and events
// held back (ReorderRate) arrive after ones emitted later; the same seed
// gives the same faults, and a seed's faults without the new knobs are
// what they always were.
func TestWebhooksUpToThreeCopiesAndHeldBack(t *testing.T) {
	t.Parallel()
	f := sandbox.Faults{Seed: 42, DuplicateRate: 0.5, DuplicateMax: 3, DelayMax: 20 * time.Millisecond,
		ReorderRate: 0.2, ReorderDelay: 300 * time.Millisecond}
	a := runWebhookFaults(t, f)
	b := runWebhookFaults(t, f)
	require.Equal(t, a.stats, b.stats, "same seed, same faults")
	require.Equal(t, a.perEvent, b.perEvent)

	st := a.stats
	require.Equal(t, 40, st.Events)
	require.Positive(t, st.Reordered)
	require.Greater(t, st.ExtraCopies, st.Duplicated, "some went three times")
	require.Equal(t, st.Events+st.ExtraCopies, a.deliveries, "each copy arrives")
	copies := map[int]int{}
	for _, n := range a.perEvent {
		copies[n]++
	}
	require.Positive(t, copies[2], "twice")
	require.Positive(t, copies[3], "three times")
	require.Zero(t, copies[4], "never more than DuplicateMax")
	require.True(t, a.reordered)

	// The old knobs alone draw what they drew before.
	old := sandbox.Faults{Seed: 42, DuplicateRate: 0.5, DelayMax: 20 * time.Millisecond}
	withMax := old
	withMax.DuplicateMax = 2
	require.Equal(t, runWebhookFaults(t, old).perEvent, runWebhookFaults(t, withMax).perEvent)
}

func TestParseWebhook(t *testing.T) {
	t.Parallel()
	c, err := sandbox.NewClient(sandbox.ClientConfig{BaseURL: "http://sandbox.invalid", WebhookSecrets: []string{secret}})
	require.NoError(t, err)
	now := time.Unix(1_800_000_000, 0)
	signed := func(body string, at time.Time, secrets ...string) http.Header {
		if secrets == nil {
			secrets = []string{secret}
		}
		h := http.Header{}
		h.Set(sandbox.SignatureHeader, gateway.Sign(secrets, at, []byte(body)))
		return h
	}
	const chargeEvent = `{"id":"evt_1","type":"charge.succeeded","created":1800000000,"data":{"id":"ch_1","idempotency_key":"k","reference":"pay-1","status":"succeeded","amount_minor":500,"currency":"BDT","fee_minor":9,"refunded_minor":0,"created_at":"2027-01-15T08:00:00Z","captured_at":"2027-01-15T08:00:01Z"}}`
	const refundEvent = `{"id":"evt_2","type":"refund.succeeded","created":1800000000,"data":{"id":"re_1","idempotency_key":"rk","reference":"rf-1","charge_id":"ch_1","status":"succeeded","amount_minor":500,"currency":"BDT","created_at":"2027-01-15T08:00:00Z"}}`

	ev, err := c.ParseWebhook(signed(chargeEvent, now), []byte(chargeEvent), now)
	require.NoError(t, err)
	require.Equal(t, "evt_1", ev.ID)
	require.Equal(t, gateway.EventChargeSucceeded, ev.Type)
	require.Equal(t, now.UTC(), ev.CreatedAt)
	require.Equal(t, gateway.Charge{
		ID: "ch_1", IdempotencyKey: "k", Reference: "pay-1", Status: gateway.StatusSucceeded,
		AmountMinor: 500, Currency: "BDT", FeeMinor: 9,
		CreatedAt:  time.Date(2027, 1, 15, 8, 0, 0, 0, time.UTC),
		CapturedAt: time.Date(2027, 1, 15, 8, 0, 1, 0, time.UTC),
	}, *ev.Charge)

	ev, err = c.ParseWebhook(signed(refundEvent, now), []byte(refundEvent), now)
	require.NoError(t, err)
	require.Equal(t, "re_1", ev.Refund.ID)
	require.Nil(t, ev.Charge)

	tests := []struct {
		name   string
		header http.Header
		body   string
		want   error
	}{
		{"missing", http.Header{}, chargeEvent, gateway.ErrSignatureMissing},
		{"forged", signed(chargeEvent, now, "attacker"), chargeEvent, gateway.ErrSignatureMismatch},
		{"altered", signed(chargeEvent, now), refundEvent, gateway.ErrSignatureMismatch},
		{"stale", signed(chargeEvent, now.Add(-10*time.Minute)), chargeEvent, gateway.ErrSignatureStale},
		{"future", signed(chargeEvent, now.Add(10*time.Minute)), chargeEvent, gateway.ErrSignatureStale},
		{"malformed signature", http.Header{sandbox.SignatureHeader: {"v1=abc"}}, chargeEvent, gateway.ErrSignatureMalformed},
		{"not JSON", signed(`{"id":`, now), `{"id":`, gateway.ErrEventMalformed},
		{"no id", signed(`{"type":"charge.succeeded","data":{}}`, now), `{"type":"charge.succeeded","data":{}}`, gateway.ErrEventMalformed},
		{"data not a charge", signed(`{"id":"e","type":"charge.failed","data":[1]}`, now), `{"id":"e","type":"charge.failed","data":[1]}`, gateway.ErrEventMalformed},
		{"unknown type", signed(`{"id":"e","type":"payout.paid","created":1,"data":{}}`, now), `{"id":"e","type":"payout.paid","created":1,"data":{}}`, gateway.ErrEventTypeUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ev, err := c.ParseWebhook(tt.header, []byte(tt.body), now)
			require.ErrorIs(t, err, tt.want)
			if tt.want == gateway.ErrEventTypeUnknown {
				// Genuine but not understood: the endpoint may store it.
				require.Equal(t, "e", ev.ID)
				require.Equal(t, gateway.EventType("payout.paid"), ev.Type)
			}
		})
	}
}

// TestEventBodyParsesBack: what EventBody writes is what a receiver reads,
// signature and all.
func TestEventBodyParsesBack(t *testing.T) {
	t.Parallel()
	c, err := sandbox.NewClient(sandbox.ClientConfig{BaseURL: "http://sandbox.invalid", WebhookSecrets: []string{secret}})
	require.NoError(t, err)
	now := time.Unix(1_800_000_000, 0).UTC()
	for _, ev := range []gateway.Event{
		{ID: "evt_c", Type: gateway.EventChargeSucceeded, CreatedAt: now, Charge: &gateway.Charge{ID: "ch_1", IdempotencyKey: "k",
			Reference: "pay_1_x", Status: gateway.StatusSucceeded, AmountMinor: 500, Currency: "BDT", FeeMinor: 9,
			CreatedAt: now, CapturedAt: now}},
		{ID: "evt_r", Type: gateway.EventRefundSucceeded, CreatedAt: now, Refund: &gateway.Refund{ID: "re_1", IdempotencyKey: "rk",
			Reference: "rf_1_x", ChargeID: "ch_1", Status: gateway.StatusSucceeded, AmountMinor: 500, Currency: "BDT", CreatedAt: now}},
	} {
		body, err := sandbox.EventBody(ev)
		require.NoError(t, err)
		h := http.Header{}
		h.Set(sandbox.SignatureHeader, gateway.Sign([]string{secret}, now, body))
		got, err := c.ParseWebhook(h, body, now)
		require.NoError(t, err)
		require.Equal(t, ev, got)
	}
	_, err = sandbox.EventBody(gateway.Event{ID: "evt_x", Type: gateway.EventChargeSucceeded})
	require.Error(t, err)
}
