package booking

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// seatCheck is the last look for seats booked twice (R-11: always 0).
type seatCheck struct {
	mu    sync.Mutex
	done  bool
	twice int64
	at    time.Time
}

// CheckSeats counts, on every shard, the seats of a show that two confirmed
// bookings hold (R-3.1 makes it impossible; R-11 watches that it stays so),
// and keeps the answer for the metrics. General admission is not counted:
// its buckets' CHECK constraints keep it from going below zero.
func (s *Service) CheckSeats(ctx context.Context) (int64, error) {
	var twice int64
	for _, pool := range s.router.Shards() {
		var n int64
		if err := pool.QueryRow(ctx, `
			SELECT count(*) FROM (
				SELECT h.show_id, seat FROM holds h CROSS JOIN LATERAL unnest(h.seats) AS seat
				WHERE h.status = 'confirmed' GROUP BY h.show_id, seat HAVING count(*) > 1) d`).Scan(&n); err != nil {
			return 0, fmt.Errorf("seat check %s: %w", pool.Name, err)
		}
		twice += n
	}
	s.check.mu.Lock()
	s.check.done, s.check.twice, s.check.at = true, twice, s.clock.Now()
	s.check.mu.Unlock()
	return twice, nil
}

// RunSeatCheck checks at once and then every interval until ctx ends (the
// workers role runs it); a seat booked twice is logged as an error.
func (s *Service) RunSeatCheck(ctx context.Context, interval time.Duration, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		twice, err := s.CheckSeats(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Error("seat check", "err", err)
		case err == nil && twice > 0:
			log.Error("seats booked twice (R-11)", "seats", twice)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

var (
	bookedTwiceDesc = prometheus.NewDesc("seatghor_seats_booked_twice",
		"Seats two confirmed bookings of one show hold, at the last check (R-11); must be 0.", nil, nil)
	seatCheckedDesc = prometheus.NewDesc("seatghor_seat_check_timestamp_seconds",
		"When the seats were last checked; an old value means the check is not running.", nil, nil)
)

// Collector returns the Prometheus collector of the last seat check; it
// reports nothing before the first check.
func (s *Service) Collector() prometheus.Collector { return seatCollector{s} }

type seatCollector struct{ s *Service }

func (c seatCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- bookedTwiceDesc
	ch <- seatCheckedDesc
}

func (c seatCollector) Collect(ch chan<- prometheus.Metric) {
	c.s.check.mu.Lock()
	defer c.s.check.mu.Unlock()
	if !c.s.check.done {
		return
	}
	ch <- prometheus.MustNewConstMetric(bookedTwiceDesc, prometheus.GaugeValue, float64(c.s.check.twice))
	ch <- prometheus.MustNewConstMetric(seatCheckedDesc, prometheus.GaugeValue, float64(c.s.check.at.Unix()))
}
