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

// CheckSeats counts, on every shard, the seat-legs of a show that two
// confirmed bookings hold (R-3.1 makes it impossible; R-11 watches that it stays so),
// and keeps the answer for the metrics. General admission is not counted:
// its buckets' CHECK constraints keep it from going below zero.
func (s *Service) CheckSeats(ctx context.Context) (int64, error) {
	var twice int64
	for _, pool := range s.router.Shards() {
		var n int64
		// Per leg (decision 0350): one seat may be sold for two journeys
		// that share no leg.
		if err := pool.QueryRow(ctx, `
			SELECT count(*) FROM (
				SELECT h.show_id, seat, leg FROM holds h CROSS JOIN LATERAL unnest(h.seats) AS seat
				     CROSS JOIN LATERAL generate_series(h.from_stop, h.to_stop - 1) AS leg
				WHERE h.status = 'confirmed' GROUP BY h.show_id, seat, leg HAVING count(*) > 1) d`).Scan(&n); err != nil {
			return 0, fmt.Errorf("seat check %s: %w", pool.Name, err)
		}
		twice += n
	}
	s.check.mu.Lock()
	s.check.done, s.check.twice, s.check.at = true, twice, s.clock.Now()
	s.check.mu.Unlock()
	return twice, nil
}

// HoldCheck is what CheckHolds found on every shard: besides Holds, every
// count must be 0.
type HoldCheck struct {
	// Holds is how many live holds were looked at: active or ordered and
	// not run out at the check's time, or confirmed.
	Holds int64
	// SeatsTwice are seats that two live holds list at once.
	SeatsTwice int64
	// Partial are live seated holds that do not own every seat they list,
	// held or booked under their id.
	Partial int64
	// GAOver are general-admission areas whose live holds count more
	// places than the area has.
	GAOver int64
	// GABuckets are buckets whose places left and the places live holds
	// took from them do not add up to their capacity.
	GABuckets int64
}

// CheckHolds looks at every live hold of every shard at now for what the
// hold's conditional writes make impossible (`seatghor verify`, `seatghor
// chaos`): a seat in two live holds or orders, a hold that owns part of
// its seats, a general-admission area sold past its capacity or a bucket
// whose count disagrees with its holds. It reads every live hold, so it is
// an operator's tool, not a request's.
func (s *Service) CheckHolds(ctx context.Context, now time.Time) (HoldCheck, error) {
	var out HoldCheck
	for _, pool := range s.router.Shards() {
		var c HoldCheck
		if err := pool.QueryRow(ctx, `
			WITH live AS MATERIALIZED (
				SELECT hold_id, show_id, status, seats, ga_area, quantity FROM holds
				WHERE status = 'confirmed' OR (status IN ('active', 'ordered') AND expires_at >= $1)
			)
			SELECT
				(SELECT count(*) FROM live),
				(SELECT count(*) FROM (
					SELECT l.show_id, seat FROM live l CROSS JOIN LATERAL unnest(l.seats) AS seat
					GROUP BY l.show_id, seat HAVING count(*) > 1) twice),
				(SELECT count(*) FROM live l
				 WHERE l.ga_area = '' AND cardinality(l.seats) <> (
					SELECT count(*) FROM seats s
					WHERE s.show_id = l.show_id AND s.seat = ANY(l.seats) AND s.hold_id = l.hold_id
					  AND s.status = CASE WHEN l.status = 'confirmed' THEN 'booked' ELSE 'held' END)),
				(SELECT count(*) FROM (
					SELECT b.show_id, b.area FROM ga_buckets b
					GROUP BY b.show_id, b.area
					HAVING sum(b.capacity) < coalesce((
						SELECT sum(l.quantity) FROM live l WHERE l.show_id = b.show_id AND l.ga_area = b.area), 0)) over),
				(SELECT count(*) FROM ga_buckets b
				 WHERE b.remaining + coalesce((
					SELECT sum(t.quantity) FROM hold_ga_takes t JOIN holds h ON h.hold_id = t.hold_id
					WHERE t.show_id = b.show_id AND t.area = b.area AND t.bucket = b.bucket
					  AND h.status IN ('active', 'ordered', 'confirmed')), 0) <> b.capacity)`, now).Scan(
			&c.Holds, &c.SeatsTwice, &c.Partial, &c.GAOver, &c.GABuckets); err != nil {
			return out, fmt.Errorf("hold check %s: %w", pool.Name, err)
		}
		out.Holds += c.Holds
		out.SeatsTwice += c.SeatsTwice
		out.Partial += c.Partial
		out.GAOver += c.GAOver
		out.GABuckets += c.GABuckets
	}
	return out, nil
}

// CountHoldsOf counts the holds of any status the users ever had, on every
// shard (an order has its hold): `seatghor chaos` checks that a refused
// request wrote nothing.
func (s *Service) CountHoldsOf(ctx context.Context, users []string) (int64, error) {
	var total int64
	for _, pool := range s.router.Shards() {
		var n int64
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM holds WHERE user_id = ANY($1)`, users).Scan(&n); err != nil {
			return 0, fmt.Errorf("holds of %d users on %s: %w", len(users), pool.Name, err)
		}
		total += n
	}
	return total, nil
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
