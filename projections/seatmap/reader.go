package seatmap

import (
	"context"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"

	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/fault"
)

// Loader reads a show's seat map from its shard (booking.Service does).
type Loader interface {
	SeatMap(ctx context.Context, showID int64) (booking.SeatMap, error)
}

// Reader answers GetSeatMap from Redis (R-8.2, R-1.1: the browse world
// never touches the write path while the cache answers).
type Reader struct {
	store  *Store
	loader Loader
	now    func() time.Time
	log    *slog.Logger
	flight singleflight.Group
	// loadTimeout bounds one coalesced load; it does not follow any one
	// caller's context, since every waiting caller shares it.
	loadTimeout time.Duration
	// skipUntil (unix nanoseconds) is when Redis is tried again after it
	// failed: while it is down, requests go straight to the shard instead
	// of each waiting for a dial to fail.
	skipUntil atomic.Int64

	reads *prometheus.CounterVec
	loads prometheus.Counter
	// cacheReads is reads{source="cache"}, looked up once.
	cacheReads prometheus.Counter
}

// NewReader returns a reader over store that loads misses through loader.
// now must be the clock booking judges hold expiry with. reg may be nil.
func NewReader(store *Store, loader Loader, now func() time.Time, log *slog.Logger, reg prometheus.Registerer) (*Reader, error) {
	r := &Reader{store: store, loader: loader, now: now, log: log, loadTimeout: 10 * time.Second,
		reads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seatghor_seatmap_reads_total",
			Help: "GetSeatMap answers by where they came from: cache (Redis), fill (a miss loaded from the shard), degraded (Redis failed; answered from the shard).",
		}, []string{"source"}),
		loads: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "seatghor_seatmap_shard_loads_total",
			Help: "Seat maps loaded from a shard by the reader (concurrent misses of one show share one load).",
		}),
	}
	r.cacheReads = r.reads.WithLabelValues("cache")
	if reg != nil {
		for _, c := range []prometheus.Collector{r.reads, r.loads} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return r, nil
}

// SeatMap returns the show's seat map: from Redis when it is there and
// current; else one load from the shard per show at a time (request
// coalescing, R-8.2), which also fills Redis. When Redis fails the shard
// answers (degraded) and the write path is untouched.
func (r *Reader) SeatMap(ctx context.Context, showID int64) (booking.SeatMap, error) {
	redisDown := time.Now().UnixNano() < r.skipUntil.Load()
	if !redisDown {
		m, ok, err := r.store.Get(ctx, showID, r.now())
		if err == nil && ok {
			r.reads.WithLabelValues("cache").Inc()
			return m, nil
		}
		if err != nil && ctx.Err() == nil {
			redisDown = true
			r.markDown()
			r.log.WarnContext(ctx, "seat map cache unavailable; reading the shard", "show_id", showID, "err", err)
		}
	}
	ch := r.flight.DoChan(strconv.FormatInt(showID, 10), func() (any, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.loadTimeout)
		defer cancel()
		return r.load(ctx, showID, redisDown)
	})
	select {
	case <-ctx.Done():
		return booking.SeatMap{}, ctx.Err()
	case res := <-ch:
		if res.Err != nil {
			return booking.SeatMap{}, res.Err
		}
		l := res.Val.(loaded)
		switch {
		case l.degraded:
			r.reads.WithLabelValues("degraded").Inc()
		case l.cached:
			r.reads.WithLabelValues("cache").Inc()
		default:
			r.reads.WithLabelValues("fill").Inc()
		}
		return l.m, nil
	}
}

type loaded struct {
	m        booking.SeatMap
	cached   bool
	degraded bool
}

// load runs once per show at a time. It looks in Redis again first: a
// caller that missed just before the previous load filled the cache joins
// no flight and would otherwise load the shard a second time.
func (r *Reader) load(ctx context.Context, showID int64, redisDown bool) (loaded, error) {
	if !redisDown {
		m, ok, err := r.store.Get(ctx, showID, r.now())
		switch {
		case err != nil:
			redisDown = true
			r.markDown()
		case ok:
			return loaded{m: m, cached: true}, nil
		}
	}
	r.loads.Inc()
	m, err := r.loader.SeatMap(ctx, showID)
	if err != nil {
		return loaded{}, err
	}
	if !redisDown {
		if err := r.store.Put(ctx, m); err != nil {
			r.log.WarnContext(ctx, "seat map cache fill failed", "show_id", showID, "err", err)
			redisDown = true
			r.markDown()
		}
	}
	return loaded{m: m, degraded: redisDown}, nil
}

// markDown skips Redis for a second.
func (r *Reader) markDown() { r.skipUntil.Store(time.Now().Add(time.Second).UnixNano()) }

// isNotFound tells whether err is booking's "no such show".
func isNotFound(err error) bool {
	return fault.ReasonOf(err) == fault.ShowNotFound
}

// Availability returns the show's availability with its layout's etag and
// section places, without the layout (R-8.2: what a caller that has the
// layout needs). From Redis when it is there and current; else as
// SeatMap: one load per show at a time, or the shard when Redis is down.
func (r *Reader) Availability(ctx context.Context, showID int64) (booking.MapAvailability, error) {
	if time.Now().UnixNano() >= r.skipUntil.Load() {
		a, ok, err := r.store.GetAvailability(ctx, showID, r.now())
		if err == nil && ok {
			r.reads.WithLabelValues("cache").Inc()
			return a, nil
		}
		if err != nil && ctx.Err() == nil {
			r.markDown()
			r.log.WarnContext(ctx, "seat map cache unavailable; reading the shard", "show_id", showID, "err", err)
		}
	}
	m, err := r.SeatMap(ctx, showID)
	if err != nil {
		return booking.MapAvailability{}, err
	}
	return m.Availability(), nil
}

// CachedAvailability is Availability from Redis alone, for the API's fast
// path (decision 0230): ok is false when the map is not there or not
// current, or Redis failed or is being skipped; the caller then takes the
// ordinary path (Availability), which loads the show and fills Redis.
// A hit counts as a cache read.
func (r *Reader) CachedAvailability(ctx context.Context, showID int64) (booking.MapAvailability, bool) {
	if time.Now().UnixNano() < r.skipUntil.Load() {
		return booking.MapAvailability{}, false
	}
	a, ok, err := r.store.GetAvailability(ctx, showID, r.now())
	if err != nil {
		if ctx.Err() == nil {
			r.markDown()
			r.log.WarnContext(ctx, "seat map cache unavailable; reading the shard", "show_id", showID, "err", err)
		}
		return booking.MapAvailability{}, false
	}
	if ok {
		r.cacheReads.Inc()
	}
	return a, ok
}
