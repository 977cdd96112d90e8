package payment

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seatghor/seatghor/server/gateway"
	"github.com/seatghor/seatghor/server/shard"
)

// metrics are the money metrics of R-11.
type metrics struct {
	router     *shard.Router
	latency    *prometheus.HistogramVec
	mismatches *prometheus.CounterVec
	webhooks   *prometheus.CounterVec
	delay      prometheus.Histogram
	unknown    *prometheus.Desc
	oldest     *prometheus.Desc
	pending    *prometheus.Desc
	refunds    *prometheus.Desc
	failed     *prometheus.Desc
}

func newMetrics(router *shard.Router) *metrics {
	return &metrics{
		router: router,
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "seatghor_gateway_request_seconds", Help: "Gateway requests by operation and outcome (ok, unknown, rejected, error).",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 12),
		}, []string{"op", "outcome"}),
		mismatches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seatghor_payment_mismatches_total", Help: "Disagreements between our records and the gateway's, by kind (R-6.8).",
		}, []string{"kind"}),
		webhooks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seatghor_webhooks_total", Help: "Webhook deliveries by result (stored, duplicate, rejected, ignored).",
		}, []string{"result"}),
		delay: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "seatghor_webhook_delay_seconds", Help: "From the gateway's event time to our receipt.",
			Buckets: prometheus.ExponentialBuckets(0.05, 2, 14),
		}),
		unknown: prometheus.NewDesc("seatghor_payments_unknown", "Payment attempts in UNKNOWN (R-11).", nil, nil),
		oldest: prometheus.NewDesc("seatghor_payments_open_oldest_seconds",
			"Age of the oldest PENDING or UNKNOWN attempt, by status (R-11).", []string{"status"}, nil),
		pending: prometheus.NewDesc("seatghor_payment_events_pending", "Stored webhook events not processed yet (R-6.5).", nil, nil),
		refunds: prometheus.NewDesc("seatghor_refunds_open", "Refunds recorded but not confirmed by the gateway.", nil, nil),
		failed: prometheus.NewDesc("seatghor_refunds_failed",
			"Refunds the gateway refused or reported failed and no admin settled yet: money owed to buyers that a person must give back (R-11).", nil, nil),
	}
}

func (m *metrics) mismatch(kind string) { m.mismatches.WithLabelValues(kind).Inc() }

func outcomeOf(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, gateway.ErrOutcomeUnknown):
		return "unknown"
	case errors.Is(err, gateway.ErrRejected), errors.Is(err, gateway.ErrNotFound):
		return "rejected"
	default:
		return "error"
	}
}

func observe[T any](m *metrics, op string, fn func() (T, error)) (T, error) {
	start := time.Now()
	v, err := fn()
	m.latency.WithLabelValues(op, outcomeOf(err)).Observe(time.Since(start).Seconds())
	return v, err
}

// Describe implements prometheus.Collector.
func (m *metrics) Describe(ch chan<- *prometheus.Desc) {
	m.latency.Describe(ch)
	m.mismatches.Describe(ch)
	m.webhooks.Describe(ch)
	m.delay.Describe(ch)
	ch <- m.unknown
	ch <- m.oldest
	ch <- m.pending
	ch <- m.refunds
	ch <- m.failed
}

// Collect implements prometheus.Collector; the gauges are read from every
// shard at scrape time (small indexed queries over open rows only).
func (m *metrics) Collect(ch chan<- prometheus.Metric) {
	m.latency.Collect(ch)
	m.mismatches.Collect(ch)
	m.webhooks.Collect(ch)
	m.delay.Collect(ch)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var unknown, events, refunds, failed int64
	oldest := map[string]float64{"pending": 0, "unknown": 0}
	now := time.Now()
	for _, pool := range m.router.Shards() {
		rows, err := pool.Query(ctx, `
			SELECT status, count(*), min(created_at) FROM payments
			WHERE status IN ('pending', 'unknown') GROUP BY status`)
		if err != nil {
			continue
		}
		for rows.Next() {
			var (
				status string
				n      int64
				first  time.Time
			)
			if rows.Scan(&status, &n, &first) == nil {
				if status == "unknown" {
					unknown += n
				}
				oldest[status] = max(oldest[status], now.Sub(first).Seconds())
			}
		}
		rows.Close()
		var e, r, f int64
		if pool.QueryRow(ctx, `
			SELECT (SELECT count(*) FROM payment_events WHERE processed_at IS NULL),
			       (SELECT count(*) FROM refunds WHERE status IN ('pending', 'unknown')),
			       (SELECT count(*) FROM refunds WHERE status = 'failed' AND settled_at IS NULL)`).Scan(&e, &r, &f) == nil {
			events, refunds, failed = events+e, refunds+r, failed+f
		}
	}
	ch <- prometheus.MustNewConstMetric(m.unknown, prometheus.GaugeValue, float64(unknown))
	for status, age := range oldest {
		ch <- prometheus.MustNewConstMetric(m.oldest, prometheus.GaugeValue, age, status)
	}
	ch <- prometheus.MustNewConstMetric(m.pending, prometheus.GaugeValue, float64(events))
	ch <- prometheus.MustNewConstMetric(m.refunds, prometheus.GaugeValue, float64(refunds))
	ch <- prometheus.MustNewConstMetric(m.failed, prometheus.GaugeValue, float64(failed))
}

// Collector returns the payment metrics for registration.
func (s *Service) Collector() prometheus.Collector { return s.metrics }
