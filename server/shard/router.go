// Package shard maps a show to the PostgreSQL database that holds all of it
// and every id Seatghor hands out back to that show, so no
// lookup ever scans all shards.
package shard

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/pg"
)

// ErrUnknownShow means the show is not in the directory.
var ErrUnknownShow = errors.New("unknown show")

// ErrNoSuchShard means a requested shard index is out of range.
var ErrNoSuchShard = errors.New("no such shard")

// Router finds the shard of a show through the catalog's directory. A show
// never moves once placed, so answers are cached for the process's life.
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
// a big show on a shard of its own), else by show id, which spreads
// shows evenly and needs no coordination.
func (r *Router) Place(showID int64, requested *int32) (int, error) {
	if requested != nil {
		if _, err := r.Shard(int(*requested)); err != nil {
			return 0, err
		}
		return int(*requested), nil
	}
	return int(showID % int64(len(r.shards))), nil
}

// remember caches where a show lives; placement never changes.
func (r *Router) remember(showID int64, shardIndex int) {
	r.mu.Lock()
	r.cache[showID] = shardIndex
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
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("show %d: %w", showID, ErrUnknownShow)
	}
	if err != nil {
		return nil, fmt.Errorf("look up shard of show %d: %w", showID, err)
	}
	pool, err := r.Shard(i)
	if err != nil {
		return nil, fmt.Errorf("show %d: %w", showID, err)
	}
	r.remember(showID, i)
	return pool, nil
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
