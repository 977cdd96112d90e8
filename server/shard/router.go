// Package shard maps a show to the PostgreSQL database that holds all of it
// and every id Seatghor hands out back to that show, so no
// lookup ever scans all shards.
package shard

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/pg"
)

// ErrUnknownShow means the show is not in the directory.
var ErrUnknownShow = fault.Sentinel(fault.ShowNotFound, "unknown show")

// ErrNoSuchShard means a requested shard index is out of range.
var ErrNoSuchShard = errors.New("no such shard")

// Router finds the shard of a show through the catalog's directory. Answers
// are cached until the directory says the show moved (Watch, decision 0205);
// a write that reaches the old shard in between fails with ErrShowMoving
// there, never lands, and is retried.
type Router struct {
	catalog *pg.Pool
	shards  []*pg.Pool

	mu    sync.RWMutex
	cache map[int64]int
}

// NewRouter returns a router over the catalog database and the shards, in
// shard-index order.
func NewRouter(catalog *pg.Pool, shards []*pg.Pool) *Router {
	return &Router{catalog: catalog, shards: shards, cache: make(map[int64]int)}
}

// Catalog returns the catalog database.
func (r *Router) Catalog() *pg.Pool { return r.catalog }

// Shards returns every shard, in index order.
func (r *Router) Shards() []*pg.Pool { return r.shards }

// Shard returns shard i.
func (r *Router) Shard(i int) (*pg.Pool, error) {
	if i < 0 || i >= len(r.shards) {
		return nil, fmt.Errorf("shard %d of %d: %w", i, len(r.shards), ErrNoSuchShard)
	}
	return r.shards[i], nil
}

// Place chooses the shard of a new show: the requested one when given
// a big show on a shard of its own), else the shard holding the
// fewest shows in the directory (ties: the lowest index), so shards added
// by configuration fill up first (decision 0206). Concurrent placements may
// pick the same shard; the next ones even it out. q reads the directory:
// the caller's catalog transaction, so a placement never waits for a second
// connection of the pool while it holds one (with as many concurrent
// CreateShow as the pool has connections, that wait never ended).
func (r *Router) Place(ctx context.Context, q Querier, requested *int32) (int, error) {
	if requested != nil {
		if _, err := r.Shard(int(*requested)); err != nil {
			return 0, err
		}
		return int(*requested), nil
	}
	rows, err := q.Query(ctx, `SELECT shard, count(*) FROM shows GROUP BY shard`)
	if err != nil {
		return 0, fmt.Errorf("count shows per shard: %w", err)
	}
	counts := make([]int64, len(r.shards))
	var shardIndex int
	var n int64
	_, err = pgx.ForEachRow(rows, []any{&shardIndex, &n}, func() error {
		if shardIndex < len(counts) {
			counts[shardIndex] = n
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("count shows per shard: %w", err)
	}
	best := 0
	for i, c := range counts {
		if c < counts[best] {
			best = i
		}
	}
	return best, nil
}

// Querier runs a query: the catalog's pool or a transaction of it.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// remember caches where a show lives until Forget.
func (r *Router) remember(showID int64, shardIndex int) {
	r.mu.Lock()
	r.cache[showID] = shardIndex
	r.mu.Unlock()
}

// Forget drops what the router knows of a show: its next request reads the
// directory again.
func (r *Router) Forget(showID int64) {
	r.mu.Lock()
	delete(r.cache, showID)
	r.mu.Unlock()
}

// forgetAll drops the whole cache, after notifications may have been missed.
func (r *Router) forgetAll() {
	r.mu.Lock()
	clear(r.cache)
	r.mu.Unlock()
}

// ForShow returns the shard that holds the show.
func (r *Router) ForShow(ctx context.Context, showID int64) (*pg.Pool, error) {
	r.mu.RLock()
	i, ok := r.cache[showID]
	r.mu.RUnlock()
	if ok {
		return r.shards[i], nil
	}
	err := r.catalog.QueryRow(ctx, `SELECT shard FROM shows WHERE show_id = $1`, showID).Scan(&i)
	found, err := pg.Found(err)
	if err != nil {
		return nil, fmt.Errorf("look up shard of show %d: %w", showID, err)
	}
	if !found {
		return nil, fmt.Errorf("show %d: %w", showID, ErrUnknownShow)
	}
	pool, err := r.Shard(i)
	if err != nil {
		return nil, fmt.Errorf("show %d: %w", showID, err)
	}
	r.remember(showID, i)
	return pool, nil
}

// Group sorts shows by their shard, so a read of many shows asks each
// shard once.
func (r *Router) Group(ctx context.Context, showIDs []int64) (map[*pg.Pool][]int64, error) {
	out := map[*pg.Pool][]int64{}
	for _, id := range showIDs {
		pool, err := r.ForShow(ctx, id)
		if err != nil {
			return nil, err
		}
		out[pool] = append(out[pool], id)
	}
	return out, nil
}

// ForID returns the shard of whatever an id names (hold, order, …).
func (r *Router) ForID(ctx context.Context, id string) (*pg.Pool, int64, error) {
	showID, err := ShowOf(id)
	if err != nil {
		return nil, 0, err
	}
	pool, err := r.ForShow(ctx, showID)
	return pool, showID, err
}

// DirectoryChannel is the catalog's NOTIFY channel on which a show move
// announces the show id whose directory entry changed.
const DirectoryChannel = "seatghor_directory"

// Watch forgets a show's cached shard as soon as the catalog announces that
// it moved, until ctx ends. Whenever the listening connection is lost, the
// whole cache is dropped, since announcements may have been missed.
func (r *Router) Watch(ctx context.Context) {
	for ctx.Err() == nil {
		// listen returns only when its connection failed (a lost catalog
		// shows in /readyz); the loop listens again.
		_ = r.listen(ctx)
		r.forgetAll()
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func (r *Router) listen(ctx context.Context) error {
	// A connection of its own, outside the pool: it is never handed back
	// and takes no request's place.
	cfg := r.catalog.Config().ConnConfig.Copy()
	cfg.Tracer = nil // not a request's statement: counted and traced nowhere
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+DirectoryChannel); err != nil {
		return err
	}
	// Anything cached before LISTEN took effect may already be stale.
	r.forgetAll()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		if id, err := strconv.ParseInt(n.Payload, 10, 64); err == nil {
			r.Forget(id)
		} else {
			r.forgetAll()
		}
	}
}

// ErrShowMoving means the show's writes are frozen on this shard because it
// is moving to another, or has moved: the request is retried (decision 0205).
var ErrShowMoving = fault.Sentinel(fault.ShowMoving, "the show is moving to another shard; retry")

// movingCode is the SQLSTATE the shard's show_writable trigger raises.
const movingCode = "SG001"

// Classify returns err wrapped in ErrShowMoving when a shard refused the
// write because the show is moving, in DATABASE_UNAVAILABLE when a
// database did not answer (pg.Unreachable: down, restarting, a connection
// broken; decision 0414), and err otherwise. The second's message names
// no server: the log keeps err.
func Classify(err error) error {
	switch {
	case pg.SQLState(err) == movingCode:
		return fmt.Errorf("%w: %w", ErrShowMoving, err)
	case pg.Unreachable(err):
		return fmt.Errorf("%w: %w", fault.New(fault.DatabaseUnavailable, "a database did not answer; retry with the same Idempotency-Key"), err)
	}
	return err
}
