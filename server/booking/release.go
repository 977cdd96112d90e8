package booking

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	"github.com/seatghor/seatghor/server/pg"
)

// endHold moves a live hold to released or expired and gives back its seats
// (only its own legs: its rows are found by its id, decision 0350) and GA
// places. The move is one conditional update, so it happens exactly
// once however many sweepers, cancellations and reclaiming holds race for
// it; ended says whether this call did it. An expiry only ends a hold that
// has really run out.
func endHold(ctx context.Context, tx pgx.Tx, h Hold, to HoldStatus, now time.Time) (ended bool, err error) {
	if h.GAArea != "" {
		// Buckets are locked before hold rows on every path (no deadlocks).
		if _, err := lockBuckets(ctx, tx, h.ShowID, h.GAArea); err != nil {
			return false, err
		}
	}
	tag, err := tx.Exec(ctx, `
		UPDATE holds SET status = $2, updated_at = $3
		WHERE hold_id = $1 AND status IN ('active', 'ordered')
		  AND ($2 <> 'expired' OR expires_at < $3)`, h.ID, to, now)
	if err != nil {
		return false, fmt.Errorf("end hold %s: %w", h.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return false, nil
	}
	// Only seats still held for this hold go back: a seat that an expired
	// hold lost to a newer hold is not touched.
	if _, err := tx.Exec(ctx, `
		UPDATE seats SET status = 'available', hold_id = NULL, held_until = NULL, version = version + 1
		WHERE show_id = $1 AND hold_id = $2 AND status = 'held'`, h.ShowID, h.ID); err != nil {
		return false, fmt.Errorf("free seats of hold %s: %w", h.ID, err)
	}
	if _, err := tx.Exec(ctx, `
		UPDATE ga_buckets b SET remaining = b.remaining + t.quantity, version = b.version + 1
		FROM hold_ga_takes t
		WHERE t.hold_id = $1 AND b.show_id = t.show_id AND b.area = t.area AND b.bucket = t.bucket`,
		h.ID); err != nil {
		return false, fmt.Errorf("give back GA places of hold %s: %w", h.ID, err)
	}
	var journey *commonv1.Journey
	if h.GAArea == "" {
		trip, err := readTrip(ctx, tx, h.ShowID)
		if err != nil {
			return false, err
		}
		journey = view(trip, h.Journey)
	}
	if err := appendEvent(ctx, tx, now, holdEnded(h, to, now, journey)); err != nil {
		return false, err
	}
	if to != HoldExpired {
		return true, nil
	}
	var o Order
	err = tx.QueryRow(ctx, `
		UPDATE orders SET status = 'expired', updated_at = $2
		WHERE hold_id = $1 AND status = 'pending_payment'
		RETURNING `+orderColumns, h.ID, now).Scan(orderDest(&o)...)
	found, err := pg.Found(err)
	switch {
	case err != nil:
		return false, fmt.Errorf("expire order of hold %s: %w", h.ID, err)
	case !found:
		return true, nil // no order waits for payment
	}
	o.View = journey
	return true, appendEvent(ctx, tx, now, orderEvent(o, OrderExpired, now))
}
