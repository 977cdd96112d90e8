package webhook

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seatghor/seatghor/server/pg"
)

// metrics are the delivery workers' health.
type metrics struct {
	attempts *prometheus.CounterVec
	disabled prometheus.Counter
	// refused counts attempts the egress guard stopped (decision 0281):
	// an endpoint pointed inside a network, worth an operator's look.
	refused prometheus.Counter
	dropped *prometheus.CounterVec
}

// droppedCounter is the count of deliveries dropped unsent (decision
// 0277), registered with reg (nil: not registered); a service and workers
// on one registry share it.
func droppedCounter(reg prometheus.Registerer) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "seatghor_webhook_deliveries_dropped_total",
		Help: "Webhook deliveries dropped unsent, by reason: disabled (their endpoint was disabled by its partner, an admin or a key's revocation) or retention (kept longer than three days while their endpoint was disabled after failures).",
	}, []string{"reason"})
	if reg == nil {
		return c
	}
	// The only other failure is a clash of descriptors, a programming
	// error the metrics tests catch; the counter still counts.
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(*prometheus.CounterVec); ok {
				return existing
			}
		}
	}
	return c
}

func newMetrics(reg prometheus.Registerer, db *pg.Pool) (*metrics, error) {
	m := &metrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seatghor_webhook_deliveries_total",
			Help: "Webhook delivery attempts by outcome: succeeded, retry (failed, sent again later) or failed (given up after three days).",
		}, []string{"outcome"}),
		disabled: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "seatghor_webhook_endpoints_disabled_total",
			Help: "Webhook endpoints disabled after sustained failure.",
		}),
		refused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "seatghor_webhook_destinations_refused_total",
			Help: "Webhook attempts not sent because the endpoint's address is in a refused (special-purpose) range.",
		}),
		dropped: droppedCounter(reg),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.attempts, m.disabled, m.refused, queue{db}} {
		if err := reg.Register(c); err != nil {
			// A second worker on one registry shares the first's metrics.
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return nil, err
			}
			switch existing := are.ExistingCollector.(type) {
			case *prometheus.CounterVec:
				m.attempts = existing
			case prometheus.Counter:
				switch c {
				case m.disabled:
					m.disabled = existing
				case m.refused:
					m.refused = existing
				}
			}
		}
	}
	return m, nil
}

var (
	queueDepth = prometheus.NewDesc("seatghor_webhook_queue_depth",
		"Pending webhook deliveries (due now or waiting for a retry), of active and of disabled endpoints.", []string{"endpoint_status"}, nil)
	queueAge = prometheus.NewDesc("seatghor_webhook_queue_oldest_due_seconds",
		"How long the oldest due delivery of an active endpoint has waited; 0 when none is due.", nil, nil)
)

// queue reads the queue's depth from the database at each scrape.
type queue struct{ db *pg.Pool }

func (queue) Describe(ch chan<- *prometheus.Desc) {
	ch <- queueDepth
	ch <- queueAge
}

func (q queue) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var active, disabled int64
	var age float64
	err := q.db.QueryRow(ctx, `
		SELECT count(*) FILTER (WHERE e.status = 'active'), count(*) FILTER (WHERE e.status = 'disabled'),
		       coalesce(extract(epoch FROM now() - min(d.next_attempt_at) FILTER (WHERE e.status = 'active' AND d.next_attempt_at <= now())), 0)
		FROM webhook_deliveries d JOIN webhook_endpoints e USING (endpoint_id)
		WHERE d.status = 'pending'`).Scan(&active, &disabled, &age)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(queueDepth, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(queueDepth, prometheus.GaugeValue, float64(active), "active")
	ch <- prometheus.MustNewConstMetric(queueDepth, prometheus.GaugeValue, float64(disabled), "disabled")
	ch <- prometheus.MustNewConstMetric(queueAge, prometheus.GaugeValue, max(age, 0))
}
