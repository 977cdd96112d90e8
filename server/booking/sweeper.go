package booking

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/idempotency"
	"github.com/seatghor/seatghor/server/pg"
)

// Sweep ends the holds that ran out on every shard, at most batch per shard,
// and purges the expired idempotency keys of every shard and of the catalog. It only tidies up and tells the read
// side (HoldExpired): correctness never depends on it, because
// expiry is part of every seat condition. It returns how many holds it ended.
func (s *Service) Sweep(ctx context.Context, batch int) (int, error) {
	now := s.now()
	total := 0
	for _, pool := range s.router.Shards() {
		n, err := s.sweepShard(ctx, pool, batch, now)
		total += n
		if err != nil {
			return total, err
		}
		if _, err := idempotency.Purge(ctx, pool, now); err != nil {
			return total, err
		}
	}
	// The catalog's records (CreateShow) expire the same way.
	if _, err := idempotency.Purge(ctx, s.router.Catalog(), now); err != nil {
		return total, err
	}
	return total, nil
}

func (s *Service) sweepShard(ctx context.Context, pool *pg.Pool, batch int, now time.Time) (int, error) {
	rows, err := pool.Query(ctx, `
		SELECT `+holdColumns+` FROM holds h LEFT JOIN orders o ON o.hold_id = h.hold_id
		WHERE h.status IN ('active', 'ordered') AND h.expires_at < $1
		  -- Not the holds of a show this shard no longer (or not yet)
		  -- serves: their writes are refused (decision 0242).
		  AND NOT EXISTS (SELECT FROM shows s WHERE s.show_id = h.show_id AND s.placement <> 'active')
		ORDER BY h.expires_at LIMIT $2`, now, batch)
	if err != nil {
		return 0, fmt.Errorf("sweep %s: %w", pool.Name, err)
	}
	expired, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Hold, error) { return scanHold(r) })
	if err != nil {
		return 0, fmt.Errorf("sweep %s: %w", pool.Name, err)
	}
	n := 0
	for _, h := range expired {
		// One transaction per hold keeps locks short on a busy show.
		err := pg.InTx(ctx, pool, func(tx pgx.Tx) error {
			ended, err := endHold(ctx, tx, h, HoldExpired, now)
			if ended {
				n++
			}
			return err
		})
		if err != nil {
			return n, fmt.Errorf("sweep hold %s: %w", h.ID, err)
		}
	}
	return n, nil
}

// RunSweeper sweeps every interval until ctx ends.
func (s *Service) RunSweeper(ctx context.Context, interval time.Duration, log *slog.Logger) {
	every(ctx, interval, func(ctx context.Context) (int, error) { return s.Sweep(ctx, 500) },
		func(err error) { log.Error("hold sweeper", "err", err) },
		func(n int) { log.Info("hold sweeper released expired holds", "holds", n) })
}

// every runs job every interval until ctx ends (the workers' jobs), telling
// failed of its errors and did of how much it did, when it did anything.
func every(ctx context.Context, interval time.Duration, job func(context.Context) (int, error), failed func(error), did func(int)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n, err := job(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			failed(err)
		case n > 0:
			did(n)
		}
	}
}
