package waitingroom

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the admitter's view of every open room, for /metrics (R-11:
// the seat database's p99 and what the door lets through).
type metrics struct {
	rate, number, joined, available, soldOut, p99 *prometheus.GaugeVec
}

func newMetrics() metrics {
	g := func(name, help string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "seatghor_waitingroom_" + name, Help: help}, []string{"sale"})
	}
	return metrics{
		rate:      g("admission_rate", "Admission rate A now in force (users/s, R-9.4)."),
		number:    g("admission_number", "Admission number X: places at or below it are admitted."),
		joined:    g("joined", "Places given out (or lottery tickets before the opening)."),
		available: g("available", "Seats and GA places that can be held now."),
		soldOut:   g("sold_out", "1 while admission is stopped because nothing can be held (R-9.5)."),
		p99:       g("hold_p99_seconds", "CreateHold p99 latency the controller saw last."),
	}
}

// Collectors are the waiting rooms' metrics; the process that holds the
// admitter's lease keeps them current.
func (s *Service) Collectors() []prometheus.Collector {
	m := s.metrics
	return []prometheus.Collector{m.rate, m.number, m.joined, m.available, m.soldOut, m.p99}
}

func (m metrics) set(sale int64, rate, x float64, joined, available int64, soldOut bool, sig Signal) {
	l := strconv.FormatInt(sale, 10)
	m.rate.WithLabelValues(l).Set(rate)
	m.number.WithLabelValues(l).Set(x)
	m.joined.WithLabelValues(l).Set(float64(joined))
	m.available.WithLabelValues(l).Set(float64(available))
	m.soldOut.WithLabelValues(l).Set(float64(b2i(soldOut)))
	m.p99.WithLabelValues(l).Set(sig.P99.Seconds())
}
