package api

import (
	"context"
	"errors"
	"time"

	"connectrpc.com/connect"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/shard"
)

// rpcMetrics measures every RPC (latency by procedure and code) and exposes
// the statements sent to each database, so shard skew is visible.
type rpcMetrics struct {
	latency *prometheus.HistogramVec
	// fastSeatMaps counts the seat maps the fast path answered
	// (seatmap_fast.go): the rest of GetSeatMap's answers took the RPC.
	fastSeatMaps prometheus.Counter
}

func newRPCMetrics(reg *prometheus.Registry, router *shard.Router, bookings *booking.Service) *rpcMetrics {
	m := &rpcMetrics{latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "seatghor_rpc_duration_seconds",
		Help:    "Latency of API calls by procedure and result code.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 14),
	}, []string{"procedure", "code"}),
		fastSeatMaps: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "seatghor_seatmap_fast_answers_total",
			Help: "GetSeatMap answers (200 or 304) the fast path gave without the RPC stack (decision 0230).",
		})}
	reg.MustRegister(m.latency, m.fastSeatMaps)
	for _, pool := range append(router.Shards(), router.Catalog()) {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "seatghor_db_statements_total",
			Help:        "Statements sent to a database.",
			ConstLabels: prometheus.Labels{"database": pool.Name},
		}, func() float64 { return float64(pool.Queries()) }))
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "seatghor_db_write_statements_total",
			Help:        "Statements sent to a database that may change rows (INSERT, UPDATE, DELETE, SELECT … FOR UPDATE).",
			ConstLabels: prometheus.Labels{"database": pool.Name},
		}, func() float64 { return float64(pool.Writes()) }))
		if rt := pool.RoundTripSeconds(); rt != nil {
			reg.MustRegister(rt)
		}
	}
	if bookings != nil {
		for _, c := range []struct {
			name, help string
			of         func(booking.HoldBatchStats) int64
		}{
			{"seatghor_hold_batch_held_total", "Seated holds taken in a batch of holds (decision 0270).",
				func(s booking.HoldBatchStats) int64 { return s.Held }},
			{"seatghor_hold_batch_left_total", "Seated holds a batch left to the one-hold path: refusals, contention, failed batches.",
				func(s booking.HoldBatchStats) int64 { return s.Left }},
			{"seatghor_hold_batch_failed_total", "Batches of holds rolled back as a whole.",
				func(s booking.HoldBatchStats) int64 { return s.Failed }},
			{"seatghor_hold_batches_total", "Batches of holds written.",
				func(s booking.HoldBatchStats) int64 { return s.Batches }},
		} {
			reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: c.name, Help: c.help},
				func() float64 { return float64(c.of(bookings.HoldBatchStats())) }))
		}
	}
	return m
}

func (m *rpcMetrics) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		start := time.Now()
		resp, err := next(ctx, req)
		code := "ok"
		if err != nil {
			code = connect.CodeOf(err).String()
			var ce *connect.Error
			if !errors.As(err, &ce) {
				code = connect.CodeUnknown.String()
			}
		}
		m.latency.WithLabelValues(req.Spec().Procedure, code).Observe(time.Since(start).Seconds())
		noteRPC(ctx, req.Spec().Procedure, code)
		return resp, err
	}
}

func (m *rpcMetrics) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (m *rpcMetrics) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}
