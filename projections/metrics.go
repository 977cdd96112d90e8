package projections

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the read side's health (R-11: outbox backlog and projector
// lag per projector and source).
type metrics struct {
	backlog *prometheus.GaugeVec
	lag     *prometheus.GaugeVec
	delay   *prometheus.HistogramVec
	read    *prometheus.HistogramVec
	step    *prometheus.HistogramVec
	size    *prometheus.HistogramVec
	events  *prometheus.CounterVec
	errors  *prometheus.CounterVec
	byType  *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	labels := []string{"projector", "source"}
	m := &metrics{
		backlog: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "seatghor_projector_backlog_events",
			Help: "Committed outbox rows after the projector's checkpoint, including those still waiting behind a running transaction.",
		}, labels),
		lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "seatghor_projector_lag_seconds",
			Help: "Age of the oldest outbox row the projector has not applied yet, from its write (0 when caught up).",
		}, labels),
		delay: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "seatghor_projector_event_delay_seconds",
			Help: "Time from an event's outbox write (about its commit, decision 0245) to its application in the read model.",
			// Fine around 100 ms, the on-sale target (issue 10), so a p99
			// near it is told on which side it lies.
			Buckets: []float64{.005, .01, .025, .05, .075, .1, .15, .2, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, labels),
		// The part of the delay before the consumer read the event: its
		// wait behind the database's running transactions (the horizon)
		// and for the next read (decisions 0212, 0247).
		read: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "seatghor_projector_read_delay_seconds",
			Help:    "Time from an event's outbox write to the consumer's read that returned it.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, labels),
		// Where a look's time goes (issue 10, goal 2): the in-order read,
		// Apply, the checkpoint, the backlog query, the preview's read and
		// its Preview, and the pause before the next look.
		step: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "seatghor_projector_step_seconds",
			Help:    "Duration of each step of a consumer's look at its outbox (read, apply, checkpoint, stats, preview_read, preview, pause).",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"projector", "source", "step"}),
		size: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "seatghor_projector_batch_events",
			Help:    "Events a consumer read in one look, in order (deliver) or ahead of their turn (preview).",
			Buckets: []float64{1, 2, 5, 10, 20, 50, 100, 200, 500},
		}, []string{"projector", "source", "kind"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seatghor_projector_events_total",
			Help: "Outbox events applied by the projector.",
		}, labels),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seatghor_projector_errors_total",
			Help: "Batches the projector failed (and retried).",
		}, labels),
		// the share of holds that expire is HoldExpired over SeatsHeld.
		byType: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seatghor_projector_events_by_type_total",
			Help: "Outbox events applied by the projector, by event type (every projector sees each event of its sources once, rebuilds again).",
		}, []string{"projector", "type"}),
	}
	if reg == nil {
		return m, nil
	}
	var err error
	if m.backlog, err = register(reg, m.backlog); err != nil {
		return nil, err
	}
	if m.lag, err = register(reg, m.lag); err != nil {
		return nil, err
	}
	if m.delay, err = register(reg, m.delay); err != nil {
		return nil, err
	}
	if m.read, err = register(reg, m.read); err != nil {
		return nil, err
	}
	if m.step, err = register(reg, m.step); err != nil {
		return nil, err
	}
	if m.size, err = register(reg, m.size); err != nil {
		return nil, err
	}
	if m.events, err = register(reg, m.events); err != nil {
		return nil, err
	}
	if m.errors, err = register(reg, m.errors); err != nil {
		return nil, err
	}
	if m.byType, err = register(reg, m.byType); err != nil {
		return nil, err
	}
	return m, nil
}

// register registers c, or returns the collector registered before it
// (a second consumer on one registry shares the metrics).
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing, nil
			}
		}
		return c, err
	}
	return c, nil
}

// observe counts a batch applied; the delay of an event shown by a preview
// was counted then (its first application).
func (m *metrics) observe(labels prometheus.Labels, batch []Event, previewed map[int64]offer) {
	now := time.Now()
	h := m.delay.With(labels)
	for _, e := range batch {
		if !previewed[e.ID].shown {
			h.Observe(max(now.Sub(e.RecordedAt).Seconds(), 0))
		}
		m.byType.WithLabelValues(labels["projector"], e.Type).Inc()
	}
	m.events.With(labels).Add(float64(len(batch)))
}

// observePreview counts the delay of events previewed (decision 0248).
func (m *metrics) observePreview(labels prometheus.Labels, events []Event) {
	now := time.Now()
	h := m.delay.With(labels)
	for _, e := range events {
		h.Observe(max(now.Sub(e.RecordedAt).Seconds(), 0))
	}
}

func (m *metrics) observeRead(labels prometheus.Labels, batch []Event, at time.Time) {
	if len(batch) == 0 {
		return
	}
	h := m.read.With(labels)
	for _, e := range batch {
		h.Observe(max(at.Sub(e.RecordedAt).Seconds(), 0))
	}
}

// observeStep counts how long a step of a look took since start, and
// returns now (the next step's start).
func (m *metrics) observeStep(labels prometheus.Labels, step string, start time.Time) time.Time {
	now := time.Now()
	m.step.WithLabelValues(labels["projector"], labels["source"], step).Observe(now.Sub(start).Seconds())
	return now
}

// observeSize counts the events of one read (kind deliver or preview).
func (m *metrics) observeSize(labels prometheus.Labels, kind string, n int) {
	if n > 0 {
		m.size.WithLabelValues(labels["projector"], labels["source"], kind).Observe(float64(n))
	}
}
