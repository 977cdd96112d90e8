package waitingroom

import "time"

// ControllerConfig is how the admission rate A follows the seat database
// additive increase while CreateHold is fast and healthy,
// multiplicative decrease when its p99 latency or error rate crosses the
// line, always within the room's limits.
type ControllerConfig struct {
	// TargetP99 is the CreateHold p99 latency above which A is cut; default
	// 250 ms.
	TargetP99 time.Duration
	// MaxErrorRate is the share of CreateHold server errors above which A
	// is cut; default 0.01.
	MaxErrorRate float64
	// MinSamples is how many CreateHold calls a window needs before its
	// latency counts; default 20.
	MinSamples int
	// Window is how far back the signal looks, and the least time between
	// two cuts (a cut's effect must show before the next); default 5 s.
	Window time.Duration
	// Increase is the additive step per second, as a share of the room's
	// maximum rate; default 0.05 (min to max in about 20 s).
	Increase float64
	// Decrease multiplies A at a cut; default 0.5.
	Decrease float64
}

func (c *ControllerConfig) defaults() {
	if c.TargetP99 <= 0 {
		c.TargetP99 = 250 * time.Millisecond
	}
	if c.MaxErrorRate <= 0 {
		c.MaxErrorRate = 0.01
	}
	if c.MinSamples <= 0 {
		c.MinSamples = 20
	}
	if c.Window <= 0 {
		c.Window = 5 * time.Second
	}
	if c.Increase <= 0 {
		c.Increase = 0.05
	}
	if c.Decrease <= 0 || c.Decrease >= 1 {
		c.Decrease = 0.5
	}
}

// Signal is what the controller sees of the seat database in one window.
type Signal struct {
	// Samples is the number of CreateHold calls measured.
	Samples int
	// P99 is their 99th-percentile latency.
	P99 time.Duration
	// ErrorRate is the share that failed with a server error.
	ErrorRate float64
}

// Overloaded tells whether the signal says the database is struggling.
func (c ControllerConfig) Overloaded(sig Signal) bool {
	if sig.Samples == 0 {
		return false
	}
	// Errors count even in a thin window: a few failures out of a few
	// calls is already a bad sign. Latency needs enough samples for a p99.
	return sig.ErrorRate > c.MaxErrorRate || (sig.Samples >= c.MinSamples && sig.P99 > c.TargetP99)
}

// Next is the rate after dt with the signal sig, starting from rate, within
// [lo, hi]. mayCut is false within Window of the last cut. cut reports a
// decrease.
func (c ControllerConfig) Next(rate float64, lo, hi int, sig Signal, dt time.Duration, mayCut bool) (next float64, cut bool) {
	c.defaults()
	switch {
	case rate <= 0:
		// A new sale starts at its floor and climbs (slow start).
		next = float64(lo)
	case c.Overloaded(sig):
		if !mayCut {
			return clamp(rate, lo, hi), false
		}
		next, cut = rate*c.Decrease, true
	default:
		next = rate + c.Increase*float64(hi)*dt.Seconds()
	}
	return clamp(next, lo, hi), cut
}

func clamp(v float64, lo, hi int) float64 {
	return min(max(v, float64(lo)), float64(hi))
}
