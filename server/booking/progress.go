package booking

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/catalog"
)

// A coach's progress as its supervisor marks it (decision 0468): the stops
// it has left, and its last once it has arrived there, in trip_marks. The
// hold rules read them (journeySQL's departed), and the manifest's no-shows.

// MarkStop records in tx, the show's shard transaction, that the coach of
// show showID has left stop (or, the last, reached it) at at, marked by
// by; false when it was marked before (the first mark stands).
func (Inventory) MarkStop(ctx context.Context, tx pgx.Tx, showID int64, stop int, at time.Time, by string) (bool, error) {
	tag, err := tx.Exec(ctx, `
		INSERT INTO trip_marks (show_id, stop, marked_at, marked_by) VALUES ($1, $2, $3, $4)
		ON CONFLICT (show_id, stop) DO NOTHING`, showID, stop, at, by)
	if err != nil {
		return false, fmt.Errorf("mark stop %d of show %d: %w", stop, showID, err)
	}
	return tag.RowsAffected() == 1, nil
}

// Departed tells whether the coach of show showID was marked gone from stop
// or a later one, on q, its shard.
func Departed(ctx context.Context, q catalog.Querier, showID int64, stop int) (bool, error) {
	var gone bool
	if err := q.QueryRow(ctx, `SELECT EXISTS (SELECT FROM trip_marks WHERE show_id = $1 AND stop >= $2)`, showID, stop).
		Scan(&gone); err != nil {
		return false, fmt.Errorf("read the marks of show %d: %w", showID, err)
	}
	return gone, nil
}
