package sandbox

import (
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"
	"strconv"
	"time"
)

// Faults makes the sandbox misbehave the way real gateways do, so the
// payment service's handling of R-6.2 (timeouts are UNKNOWN) and
// (webhooks duplicated, lost, reordered) is exercised. The zero value is a
// perfect gateway.
//
// Every decision is drawn from a PRNG seeded by a hash of Seed and what the
// decision is about (the idempotency key and attempt number of a charge
// request, the id of a webhook event), never from a shared stream, so the
// same seed gives the same faults however goroutines are scheduled.
type Faults struct {
	// Seed makes every decision reproducible.
	Seed uint64
	// TimeoutRate is the share of charge requests that time out: the
	// caller gets no answer at all.
	TimeoutRate float64
	// SlowWindow replaces TimeoutRate for a range of references.
	SlowWindow SlowWindow
	// AppliedIfTimeout is the share of timed-out requests that were applied
	// anyway: the charge exists although nobody heard about it.
	AppliedIfTimeout float64
	// HangFor is how long a timed-out request hangs before the connection
	// is dropped; 0 drops it at once. Either way no response is written.
	HangFor time.Duration

	// RefundFailRate is the share of refunds the gateway answers (and
	// reports by webhook) as failed: no money goes back. Decided per
	// refund key, so a retry gets the same answer.
	RefundFailRate float64

	// DuplicateRate is the share of webhook events delivered more than
	// once: twice, or up to DuplicateMax copies.
	DuplicateRate float64
	// DuplicateMax is the most copies of a duplicated event (2 to 5); 0
	// means 2. Real gateways send an event again after a lost answer, a
	// failover or a replay, so a receiver may see it three times.
	DuplicateMax int
	// DropRate is the share of webhook events never delivered.
	DropRate float64
	// DelayMax delays each delivery by a random 0..DelayMax, which also
	// reorders events.
	DelayMax time.Duration
	// ReorderRate is the share of webhook events held back by
	// ReorderDelay besides their delay, so that the events that follow
	// them (a refund after its charge's success) arrive first.
	ReorderRate float64
	// ReorderDelay is how long a held-back event waits; 0 means 2 s.
	ReorderDelay time.Duration
}

// MaxDuplicates is the most copies DuplicateMax may ask for.
const MaxDuplicates = 5

// defaultReorderDelay is ReorderDelay's default.
const defaultReorderDelay = 2 * time.Second

// SlowWindow is a stretch of references, counted by the order in which the
// sandbox first saw each reference (1-based), where the gateway is slow.
// The zero value is no window.
type SlowWindow struct {
	From, To    int
	TimeoutRate float64
}

func (w SlowWindow) contains(ordinal int) bool {
	return w.From > 0 && ordinal >= w.From && ordinal <= w.To
}

// PaymentSimulationFaults are the gateway conditions of the seed's payment
// simulation: 3 % of requests time out, 50 % for orders 1001–1200,
// and 60 % of timed-out requests were applied anyway.
func PaymentSimulationFaults(seed uint64) Faults {
	return Faults{
		Seed:             seed,
		TimeoutRate:      0.03,
		SlowWindow:       SlowWindow{From: 1001, To: 1200, TimeoutRate: 0.5},
		AppliedIfTimeout: 0.6,
	}
}

// rng returns a PRNG that depends only on the seed and the parts naming the
// decision.
func (f Faults) rng(parts ...string) *rand.Rand {
	h := sha256.New()
	var seed [8]byte
	binary.BigEndian.PutUint64(seed[:], f.Seed)
	h.Write(seed[:])
	for _, p := range parts {
		// Length-prefixed, so ("ab","c") and ("a","bc") differ.
		h.Write([]byte(strconv.Itoa(len(p))))
		h.Write([]byte{':'})
		h.Write([]byte(p))
	}
	sum := h.Sum(nil)
	return rand.New(rand.NewPCG(binary.BigEndian.Uint64(sum[:8]), binary.BigEndian.Uint64(sum[8:16])))
}

// chargeFate is what happens to one charge request.
type chargeFate struct {
	timeout bool // the caller gets no answer
	applied bool // when timeout: the charge is made all the same
}

// chargeFate decides one attempt (1-based) of a charge request for key,
// whose reference was the ordinal-th the sandbox saw.
func (f Faults) chargeFate(key string, attempt, ordinal int) chargeFate {
	r := f.rng("charge", key, strconv.Itoa(attempt))
	rate := f.TimeoutRate
	if f.SlowWindow.contains(ordinal) {
		rate = f.SlowWindow.TimeoutRate
	}
	// Both draws are always taken, so one decision never shifts the other.
	timeoutDraw, appliedDraw := r.Float64(), r.Float64()
	return chargeFate{
		timeout: timeoutDraw < rate,
		applied: appliedDraw < f.AppliedIfTimeout,
	}
}

// refundFails decides whether the refund with key fails.
func (f Faults) refundFails(key string) bool {
	return f.RefundFailRate > 0 && f.rng("refund", key).Float64() < f.RefundFailRate
}

// deliveryFate is what happens to one webhook event.
type deliveryFate struct {
	drop      bool
	copies    int             // 1, or 2..DuplicateMax when duplicated
	delays    []time.Duration // one per copy
	reordered bool            // held back by ReorderDelay
}

func (f Faults) deliveryFate(eventID string) deliveryFate {
	r := f.rng("event", eventID)
	dropDraw, dupDraw := r.Float64(), r.Float64()
	d := deliveryFate{drop: dropDraw < f.DropRate, copies: 1}
	if dupDraw < f.DuplicateRate {
		d.copies = 2
	}
	for range d.copies {
		var delay time.Duration
		if f.DelayMax > 0 {
			delay = time.Duration(r.Int64N(int64(f.DelayMax) + 1))
		}
		d.delays = append(d.delays, delay)
	}
	// The draws below come from a stream of their own, so the faults
	// above stay what they were for a seed without them (older runs
	// replay unchanged).
	more := f.rng("event-more", eventID)
	extraDraw, reorderDraw := more.Float64(), more.Float64()
	if d.copies == 2 && f.DuplicateMax > 2 {
		// 2..DuplicateMax copies, evenly.
		for n := 3; n <= min(f.DuplicateMax, MaxDuplicates); n++ {
			if extraDraw < float64(n-2)/float64(min(f.DuplicateMax, MaxDuplicates)-1) {
				break
			}
			d.copies = n
			var delay time.Duration
			if f.DelayMax > 0 {
				delay = time.Duration(more.Int64N(int64(f.DelayMax) + 1))
			}
			d.delays = append(d.delays, delay)
		}
	}
	if reorderDraw < f.ReorderRate {
		d.reordered = true
		hold := f.ReorderDelay
		if hold <= 0 {
			hold = defaultReorderDelay
		}
		for i := range d.delays {
			d.delays[i] += hold
		}
	}
	return d
}
