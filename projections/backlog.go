package projections

import (
	"context"
	"fmt"
	"time"
)

// Backlog counts the outbox rows that some projector has not applied yet,
// over every source: 0 means every read model has caught up with what was
// written before the call (`seatghor verify --rebuild` waits for it). A
// projector without a checkpoint in a source has applied nothing there.
func (c *Consumer) Backlog(ctx context.Context) (int64, error) {
	var total int64
	for _, s := range c.sources {
		for _, p := range c.projectors {
			var n int64
			if err := s.Pool.QueryRow(ctx, `
				SELECT count(*) FROM outbox o
				WHERE NOT EXISTS (
					SELECT 1 FROM projection_checkpoints c
					WHERE c.projector = $1 AND (o.xid, o.id) <= (c.xid, c.id))`, p.Name()).Scan(&n); err != nil {
				return 0, fmt.Errorf("backlog of %s in %s: %w", p.Name(), s.Name, err)
			}
			total += n
		}
	}
	return total, nil
}

// Names are the projectors' names, in the order they were given.
func (c *Consumer) Names() []string {
	names := make([]string, len(c.projectors))
	for i, p := range c.projectors {
		names[i] = p.Name()
	}
	return names
}

// Behind counts the outbox rows written before t, over every source, that
// the projector name has not applied yet: 0 means its read model has caught
// up with everything written before t, however much was written since
// (`seatghor chaos` times how long a read model takes to catch up after an
// outage while the load goes on).
func (c *Consumer) Behind(ctx context.Context, name string, t time.Time) (int64, error) {
	var total int64
	for _, s := range c.sources {
		var n int64
		if err := s.Pool.QueryRow(ctx, `
			SELECT count(*) FROM outbox o
			WHERE coalesce(o.recorded_at, o.occurred_at) < $2
			  AND NOT EXISTS (
				SELECT 1 FROM projection_checkpoints c
				WHERE c.projector = $1 AND (o.xid, o.id) <= (c.xid, c.id))`, name, t).Scan(&n); err != nil {
			return 0, fmt.Errorf("%s behind in %s: %w", name, s.Name, err)
		}
		total += n
	}
	return total, nil
}
