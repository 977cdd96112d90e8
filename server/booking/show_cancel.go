package booking

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/pg"
)

// What the cancellation job (package payment, decision 0440) asks of a
// show its operator cancelled: its orders still to cancel, and its live
// holds, released here.

// LiveOrders lists up to limit orders of the show on q, its shard, that a
// cancellation still has to end: paid ones and ones awaiting payment. An
// expired order is not live: its places are back already, and a payment
// that comes for it late is refunded as any late payment is.
func LiveOrders(ctx context.Context, q *pg.Pool, showID int64, limit int) ([]string, error) {
	rows, err := q.Query(ctx, `
		SELECT order_id FROM orders WHERE show_id = $1 AND status IN ('pending_payment', 'confirmed')
		ORDER BY order_id LIMIT $2`, showID, limit)
	if err != nil {
		return nil, fmt.Errorf("list live orders of show %d: %w", showID, err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("list live orders of show %d: %w", showID, err)
	}
	return ids, nil
}

// ReleaseShowHolds releases the show's live holds that no order took (an
// ordered hold ends with its order), one transaction each as the sweeper
// does, and returns how many it released. A hold taken by a statement
// that began before the cancellation committed is found by a later pass.
func ReleaseShowHolds(ctx context.Context, pool *pg.Pool, showID int64, now time.Time) (int, error) {
	rows, err := pool.Query(ctx, `SELECT `+holdColumns+` FROM holds h LEFT JOIN orders o ON o.hold_id = h.hold_id
		WHERE h.show_id = $1 AND h.status = 'active'`, showID)
	if err != nil {
		return 0, fmt.Errorf("list live holds of show %d: %w", showID, err)
	}
	live, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Hold, error) { return scanHold(r) })
	if err != nil {
		return 0, fmt.Errorf("list live holds of show %d: %w", showID, err)
	}
	n := 0
	for _, h := range live {
		err := pg.InTx(ctx, pool, func(tx pgx.Tx) error {
			ended, err := endHold(ctx, tx, h, HoldReleased, now)
			if ended {
				n++
			}
			return err
		})
		if err != nil {
			return n, fmt.Errorf("release hold %s of cancelled show %d: %w", h.ID, showID, err)
		}
	}
	return n, nil
}

// CountOrders counts the show's live orders (LiveOrders) and those
// cancelled since, on pool, its shard.
func CountOrders(ctx context.Context, pool *pg.Pool, showID int64, since time.Time) (live, cancelled int, err error) {
	err = pool.QueryRow(ctx, `
		SELECT count(*) FILTER (WHERE status IN ('pending_payment', 'confirmed')),
		       count(*) FILTER (WHERE status = 'cancelled' AND updated_at >= $2)
		FROM orders WHERE show_id = $1`, showID, since).Scan(&live, &cancelled)
	if err != nil {
		return 0, 0, fmt.Errorf("count the orders of show %d: %w", showID, err)
	}
	return live, cancelled, nil
}
