package catalog

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/types/known/timestamppb"

	eventsv1 "github.com/seatghor/seatghor/gen/seatghor/events/v1"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/outbox"
	"github.com/seatghor/seatghor/server/pg"
)

// OpeningFreeze is how close to its opening a sale's opening time stops
// moving. The lottery is drawn at the opening by whichever poll or tick
// comes first, and the admitter copies the opening into Redis once a
// second; two seconds keep a move from racing the draw (decision 0035).
const OpeningFreeze = 2 * time.Second

// ErrOpeningFrozen refuses to move the opening of a sale that has opened or
// opens within OpeningFreeze.
var ErrOpeningFrozen = fault.Sentinel(fault.SaleOpeningFrozen, "the sale has opened (or opens within 2 s): its opening can no longer move")

// MoveOpening moves when a sale (a waiting room and every show that sells
// through it) goes on sale: postponed, or brought forward; a time not after
// now opens it now. Whether the window still ends after it is the waiting
// room's check (an UpdateSale may move both). The shards' copies of
// on_sale_at (which CreateHold checks) are written before the catalog
// commits, as CreateShow does: a crash in between leaves the shards with the
// new time while the room opens at the old one, and since holds need both an
// admission and the shard's on_sale_at, nothing sells before the later of the
// two; a retry finishes the move. Every show is republished (ShowPublished),
// so the read side (the trip index) follows, and a SaleOpeningMoved
// tells partners (their webhooks).
func (s *Service) MoveOpening(ctx context.Context, saleID int64, at time.Time, by string) error {
	now := s.clock.Now().UTC().Truncate(time.Microsecond)
	if at = at.UTC().Truncate(time.Microsecond); at.Before(now) {
		at = now
	}
	return pg.InTx(ctx, s.router.Catalog(), func(tx pgx.Tx) error {
		var opens time.Time
		err := tx.QueryRow(ctx, `SELECT opens_at FROM waiting_rooms WHERE show_id = $1 FOR UPDATE`, saleID).Scan(&opens)
		found, err := pg.Found(err)
		if err != nil {
			return fmt.Errorf("read sale %d: %w", saleID, err)
		}
		if !found {
			return fmt.Errorf("sale %d: %w", saleID, ErrNotFound)
		}
		if !opens.After(now.Add(OpeningFreeze)) {
			return ErrOpeningFrozen
		}
		rows, err := tx.Query(ctx, `
			UPDATE shows SET on_sale_at = $2
			WHERE show_id IN (SELECT show_id FROM sale_shows WHERE sale_id = $1)
			RETURNING `+showColumns, saleID, at)
		if err != nil {
			return fmt.Errorf("move on_sale_at of sale %d: %w", saleID, err)
		}
		shows, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Show, error) { return scanShow(r) })
		if err != nil {
			return fmt.Errorf("move on_sale_at of sale %d: %w", saleID, err)
		}
		for _, sh := range shows {
			if !at.Before(sh.StartsAt) {
				return &fault.Error{Reason: fault.ShowInvalid, Field: "opens_at", Message: fmt.Sprintf("show %d starts at %s: the sale must open before",
					sh.ID, sh.StartsAt.Format(time.RFC3339))}
			}
		}
		if _, err := tx.Exec(ctx, `UPDATE waiting_rooms SET opens_at = $2, updated_at = $3, updated_by = $4 WHERE show_id = $1`,
			saleID, at, now, by); err != nil {
			return fmt.Errorf("move opening of sale %d: %w", saleID, err)
		}
		if err := s.attachWaitingRooms(ctx, shows); err != nil {
			return err
		}
		for _, sh := range shows {
			pool, err := s.router.Shard(sh.Shard)
			if err != nil {
				return err
			}
			if _, err := pool.Exec(ctx, `UPDATE shows SET on_sale_at = $2 WHERE show_id = $1`, sh.ID, at); err != nil {
				return fmt.Errorf("move on_sale_at of show %d in %s: %w", sh.ID, pool.Name, err)
			}
			if err := announce(ctx, tx, sh, now); err != nil {
				return err
			}
			// Partners' webhooks (sale.opening_moved, decision 0190).
			if err := outbox.Append(ctx, tx, sh.ID, now, &eventsv1.SaleOpeningMoved{
				ShowId: sh.ID, SaleId: saleID, PreviousOpensAt: timestamppb.New(opens), OpensAt: timestamppb.New(at),
				MovedBy: by, OccurredAt: timestamppb.New(now),
			}); err != nil {
				return err
			}
		}
		return nil
	})
}
