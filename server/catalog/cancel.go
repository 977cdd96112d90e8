package catalog

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/types/known/timestamppb"

	eventsv1 "github.com/seatghor/seatghor/gen/seatghor/events/v1"
	"github.com/seatghor/seatghor/server/audit"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/outbox"
	"github.com/seatghor/seatghor/server/pg"
)

// Cancellation is a show's cancellation by its operator (decision 0440) as
// its shard keeps it: the cancellation job's to-do mark.
type Cancellation struct {
	ShowID int64
	At     time.Time
	By     string
	Reason string
	// DoneAt is when the job found nothing more to do; nil before.
	DoneAt *time.Time
}

// CancelShow cancels a show for good (decision 0440). The shard's copy of
// the show's rules is marked first: from its commit the hold rules refuse
// the show (holdRulesSQL) and the cancellation job (package payment) finds
// it and works through its orders. Then the catalog row says so, with an
// audit entry and a ShowCancelled event, in one transaction. A crash
// between the two leaves the shard marked and the catalog not: the job
// cancels the orders all the same, and CancelShow again completes the
// catalog. Cancelling a cancelled show changes nothing; the answer is the
// first cancellation.
func (s *Service) CancelShow(ctx context.Context, showID int64, by audit.Actor, reason string) (Cancellation, error) {
	now := s.clock.Now().UTC().Truncate(time.Microsecond)
	var c Cancellation
	err := pg.InTx(ctx, s.router.Catalog(), func(tx pgx.Tx) error {
		var (
			shard       int
			orgID       string
			cancelledAt *time.Time
			draft       bool
		)
		err := tx.QueryRow(ctx, `
			SELECT shard, coalesce(organization_id, ''), cancelled_at, published_at IS NULL FROM shows WHERE show_id = $1 FOR UPDATE`, showID).
			Scan(&shard, &orgID, &cancelledAt, &draft)
		found, err := pg.Found(err)
		if err != nil {
			return fmt.Errorf("lock show %d: %w", showID, err)
		}
		if !found {
			return fmt.Errorf("cancel show %d: %w", showID, ErrNotFound)
		}
		if draft { // nothing was sold, and its shard has no copy to mark
			return fault.New(fault.ShowDraft, "show %d is a draft: it has no sale to cancel", showID)
		}
		pool, err := s.router.Shard(shard)
		if err != nil {
			return err
		}
		// The shard's mark first: it is what stops the sale and what the job
		// reads, and it is kept when it is there already (the first
		// cancellation's time, author and reason stand).
		if err := pg.InTx(ctx, pool, func(stx pgx.Tx) error {
			if _, err := stx.Exec(ctx, `
				UPDATE shows SET cancelled_at = $2, cancelled_by = $3, cancel_reason = $4
				WHERE show_id = $1 AND cancelled_at IS NULL`, showID, now, by.ID, reason); err != nil {
				return fmt.Errorf("mark show %d cancelled on its shard: %w", showID, err)
			}
			c, err = ReadCancellation(ctx, stx, showID)
			return err
		}); err != nil {
			return err
		}
		if cancelledAt != nil {
			return nil // the catalog says so already: nothing to record twice
		}
		if _, err := tx.Exec(ctx, `
			UPDATE shows SET cancelled_at = $2, cancelled_by = $3, cancel_reason = $4 WHERE show_id = $1`,
			showID, c.At, c.By, c.Reason); err != nil {
			return fmt.Errorf("mark show %d cancelled: %w", showID, err)
		}
		if err := audit.Record(ctx, tx, audit.Entry{At: now, Actor: by, Action: "show.cancel",
			Target: fmt.Sprintf("show:%d", showID), OrganizationID: orgID, Detail: map[string]any{"reason": c.Reason}}); err != nil {
			return err
		}
		return outbox.Append(ctx, tx, showID, now, &eventsv1.ShowCancelled{ShowId: showID, Reason: c.Reason,
			CancelledBy: c.By, OccurredAt: timestamppb.New(c.At)})
	})
	return c, err
}

// ReadCancellation reads a show's cancellation from q, its shard; a show
// that runs is ErrNotFound.
func ReadCancellation(ctx context.Context, q Querier, showID int64) (Cancellation, error) {
	c := Cancellation{ShowID: showID}
	var at *time.Time
	err := q.QueryRow(ctx, `
		SELECT cancelled_at, cancelled_by, cancel_reason, cancellation_done_at FROM shows WHERE show_id = $1`, showID).
		Scan(&at, &c.By, &c.Reason, &c.DoneAt)
	found, err := pg.Found(err)
	if err != nil {
		return c, fmt.Errorf("read the cancellation of show %d: %w", showID, err)
	}
	if !found || at == nil {
		return c, fmt.Errorf("cancellation of show %d: %w", showID, ErrNotFound)
	}
	c.At = at.UTC()
	if c.DoneAt != nil {
		d := c.DoneAt.UTC()
		c.DoneAt = &d
	}
	return c, nil
}

// Cancelling lists the shows of q, a shard, whose cancellation job is not
// through: the job's work list.
func Cancelling(ctx context.Context, q Querier) ([]int64, error) {
	rows, err := q.Query(ctx, `
		SELECT show_id FROM shows WHERE cancelled_at IS NOT NULL AND cancellation_done_at IS NULL ORDER BY show_id`)
	if err != nil {
		return nil, fmt.Errorf("list shows being cancelled: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("list shows being cancelled: %w", err)
	}
	return ids, nil
}

// FinishCancellation records that the job found nothing more to do for the
// show on q, its shard, at now.
func FinishCancellation(ctx context.Context, q pg.Execer, showID int64, now time.Time) error {
	if _, err := q.Exec(ctx, `
		UPDATE shows SET cancellation_done_at = $2 WHERE show_id = $1 AND cancellation_done_at IS NULL`,
		showID, now); err != nil {
		return fmt.Errorf("finish the cancellation of show %d: %w", showID, err)
	}
	return nil
}
