package waitingroom

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/internal/testkit/redistest"
	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/keyset"
)

// The controller on made-up signals, tick by tick: it climbs to the
// room's maximum while the database is healthy, halves A when the p99 or
// the error rate crosses the line, never below the minimum nor more than
// once per window, and climbs back when the database recovers.
func TestControllerLowersAndRaisesA(t *testing.T) {
	c := ControllerConfig{TargetP99: 250 * time.Millisecond, MaxErrorRate: 0.01, MinSamples: 20,
		Window: 5 * time.Second, Increase: 0.05, Decrease: 0.5}
	const lo, hi = 10, 400
	healthy := Signal{Samples: 500, P99: 50 * time.Millisecond}
	slow := Signal{Samples: 500, P99: 800 * time.Millisecond}
	failing := Signal{Samples: 500, P99: 20 * time.Millisecond, ErrorRate: 0.05}
	thin := Signal{Samples: 3, P99: 2 * time.Second} // too few for a p99

	a, cut := c.Next(0, lo, hi, Signal{}, 0, true)
	require.Equal(t, float64(lo), a, "a new sale starts at its floor")
	require.False(t, cut)
	for range 30 { // 30 healthy seconds: +20/s up to the ceiling
		a, _ = c.Next(a, lo, hi, healthy, time.Second, true)
	}
	require.Equal(t, float64(hi), a)

	a, cut = c.Next(a, lo, hi, slow, time.Second, true)
	require.True(t, cut)
	require.Equal(t, 200.0, a, "the database slowed down: A halves")
	same, cut := c.Next(a, lo, hi, slow, time.Second, false)
	require.False(t, cut)
	require.Equal(t, a, same, "within the window of the last cut A holds still")
	for range 10 {
		a, _ = c.Next(a, lo, hi, slow, time.Second, true)
	}
	require.Equal(t, float64(lo), a, "never below the configured minimum")

	b, cut := c.Next(200, lo, hi, failing, time.Second, true)
	require.True(t, cut, "errors cut A too")
	require.Equal(t, 100.0, b)
	b, cut = c.Next(200, lo, hi, Signal{Samples: 4, ErrorRate: 0.5}, time.Second, true)
	require.True(t, cut, "errors count even in a thin window")
	require.Equal(t, 100.0, b)

	up, cut := c.Next(a, lo, hi, thin, time.Second, true)
	require.False(t, cut, "three slow calls are no p99")
	require.Greater(t, up, a)

	prev := a
	a, _ = c.Next(a, lo, hi, healthy, time.Second, true)
	require.Equal(t, prev+20, a, "healthy again: A climbs back, additively")
	for range 30 {
		a, _ = c.Next(a, lo, hi, healthy, 2*time.Second, true)
	}
	require.Equal(t, float64(hi), a)
}

// Several worker processes run the admitter; one holds the lease and ticks,
// the others wait until it lapses (R-9.4: one X for everyone).
func TestOneAdmitterLeads(t *testing.T) {
	r := redistest.New(t)
	clk := clock.NewFake(time.Now())
	cfg := Config{Tick: 100 * time.Millisecond}
	a := NewService(r.Client, r.Prefix, nil, nil, nil, nil, keyset.FromSecret("s", keyset.QueueTokens), clk, nil, cfg)
	b := NewService(r.Client, r.Prefix, nil, nil, nil, nil, keyset.FromSecret("s", keyset.QueueTokens), clk, nil, cfg)
	ctx := context.Background()
	ok, err := a.lead(ctx)
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = b.lead(ctx)
	require.NoError(t, err)
	require.False(t, ok, "the lease is taken")
	ok, err = a.lead(ctx)
	require.NoError(t, err)
	require.True(t, ok, "the leader renews its lease")
	require.NoError(t, r.Client.Del(ctx, r.Prefix+"wr:admitter").Err()) // the leader died; its lease lapsed
	ok, err = b.lead(ctx)
	require.NoError(t, err)
	require.True(t, ok, "another takes over")
}

// Tokens are verified by their HMAC alone: an altered payload, a foreign key
// or the other kind of token is refused.
func TestTokens(t *testing.T) {
	now := time.Now()
	s := newSigner(keyset.FromSecret("secret", keyset.QueueTokens))
	tok := s.mint(admittedPrefix, ticket{SaleID: 7, Subject: "rumana", IssuedAt: now.UnixMilli(), ExpiresAt: now.Add(time.Minute).UnixMilli()})
	got, err := s.open(admittedPrefix, tok, now)
	require.NoError(t, err)
	require.Equal(t, "rumana", got.Subject)

	_, err = newSigner(keyset.FromSecret("other", keyset.QueueTokens)).open(admittedPrefix, tok, now)
	require.ErrorIs(t, err, errForged, "another server's token")
	altered := s.mint(admittedPrefix, ticket{SaleID: 8, Subject: "rumana", ExpiresAt: now.Add(time.Minute).UnixMilli()})
	payload := altered[len(admittedPrefix) : len(altered)-44] // the other sale's payload with rumana's signature
	_, err = s.open(admittedPrefix, admittedPrefix+payload+tok[len(tok)-44:], now)
	require.ErrorIs(t, err, errForged, "an altered payload")
	_, err = s.open(queuePrefix, tok, now)
	require.ErrorIs(t, err, errMalformed, "an admitted token is no queue token")
	_, err = s.open(queuePrefix, queuePrefix+tok[len(admittedPrefix):], now)
	require.ErrorIs(t, err, errForged, "the prefix is signed too")
	_, err = s.open(admittedPrefix, tok, now.Add(time.Minute))
	require.ErrorIs(t, err, errExpired)
}
