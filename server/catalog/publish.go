package catalog

import (
	"context"
	"errors"
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

// PublishShow puts a draft on sale (decision 0455): with its catalog row
// locked, its terms, seats and GA buckets are written to its shard (unless
// an earlier try that crashed before the catalog committed wrote them
// already), then the row says when it was published, with an audit entry
// and a ShowPublished for the read side, in one transaction. A published
// show is answered as it is.
func (s *Service) PublishShow(ctx context.Context, showID int64, by audit.Actor) (Show, error) {
	now := s.clock.Now().UTC().Truncate(time.Microsecond)
	var show Show
	err := pg.InTx(ctx, s.router.Catalog(), func(tx pgx.Tx) error {
		var err error
		if show, err = lockShow(ctx, tx, showID); err != nil {
			return err
		}
		switch {
		case show.PublishedAt != nil:
			return nil // published already: a retry
		case show.CancelledAt != nil:
			return fault.New(fault.ShowCancelled, "show %d was cancelled as a draft: it is never published", showID)
		case !show.StartsAt.After(now):
			return fault.New(fault.ShowAlreadyStarted, "show %d was to start at %s: move it before publishing",
				showID, show.StartsAt.Format(time.RFC3339))
		}
		if show.Layout, err = readPlaces(ctx, tx, showID); err != nil {
			return err
		}
		if show, err = s.withWaitingRoom(ctx, show); err != nil {
			return err
		}
		show.PublishedAt = &now
		if _, err := tx.Exec(ctx, `UPDATE shows SET published_at = $2 WHERE show_id = $1`, showID, now); err != nil {
			return fmt.Errorf("publish show %d: %w", showID, err)
		}
		if err := audit.Record(ctx, tx, audit.Entry{At: now, Actor: by, Action: "show.publish",
			Target: fmt.Sprintf("show:%d", showID), OrganizationID: show.OrganizationID,
			Detail: map[string]any{"before": map[string]any{"draft": true},
				"after": map[string]any{"draft": false, "on_sale_at": show.OnSaleAt, "seats": show.SeatCount}}}); err != nil {
			return err
		}
		return s.putOnSale(ctx, tx, show, now)
	})
	if err != nil {
		return Show{}, err
	}
	return show, nil
}

// putOnSale writes a show's terms and places to its shard, when it has
// not got them, and tells the read side in tx, the catalog transaction
// that publishes it.
func (s *Service) putOnSale(ctx context.Context, tx pgx.Tx, show Show, now time.Time) error {
	pool, err := s.router.Shard(show.Shard)
	if err != nil {
		return err
	}
	if err := pg.InTx(ctx, pool, func(stx pgx.Tx) error {
		_, err := ReadTerms(ctx, stx, show.ID)
		if !errors.Is(err, ErrNotFound) {
			return err // there already, or unreadable
		}
		return provision(ctx, stx, s.inventory, show)
	}); err != nil {
		return fmt.Errorf("write show %d into %s: %w", show.ID, pool.Name, err)
	}
	return announce(ctx, tx, show, now)
}

// announce records in tx, a catalog transaction, the show as it now is
// for the read side (search, the seat map, partners' feeds): every write
// that changes what a buyer reads of a published show ends with it.
func announce(ctx context.Context, tx pgx.Tx, show Show, now time.Time) error {
	return outbox.Append(ctx, tx, show.ID, now, &eventsv1.ShowPublished{
		ShowId: show.ID, Show: show.Proto(), OccurredAt: timestamppb.New(now),
	})
}

// DeleteDraft deletes a draft that will never run (decision 0462): its
// catalog row and its waiting room go, with an audit entry keeping what
// it was, in one transaction. A draft sells nothing, so its shard has
// nothing but what a publish that crashed before the catalog committed
// wrote there; that goes first, in the shard's own transaction, as a
// withdrawal's does (a crash after it leaves a draft that publishing
// writes again). A published show, or a draft whose waiting room other
// shows sell through, is kept (fault.ShowKept).
func (s *Service) DeleteDraft(ctx context.Context, showID int64, by audit.Actor, reason string) error {
	now := s.clock.Now().UTC().Truncate(time.Microsecond)
	return pg.InTx(ctx, s.router.Catalog(), func(tx pgx.Tx) error {
		show, err := lockShow(ctx, tx, showID)
		if err != nil {
			return err
		}
		if show.PublishedAt != nil {
			return fault.New(fault.ShowKept, "show %d is published: cancel it, a published show is never deleted", showID)
		}
		var shared bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT FROM sale_shows WHERE sale_id = $1 AND show_id <> $1)`, showID).
			Scan(&shared); err != nil {
			return fmt.Errorf("read the sale of show %d: %w", showID, err)
		}
		if shared {
			return fault.New(fault.ShowKept, "other shows sell through the waiting room of draft %d: delete or move them first", showID)
		}
		if sales, err := s.retire(ctx, show.Shard, showID); errors.Is(err, errKept) {
			return fmt.Errorf("draft %d has sales on its shard: %+v", showID, sales)
		} else if err != nil {
			return fmt.Errorf("delete draft %d: %w", showID, err)
		}
		for _, q := range []string{
			`DELETE FROM sale_shows WHERE show_id = $1`,
			`DELETE FROM waiting_rooms WHERE show_id = $1`,
			`DELETE FROM shows WHERE show_id = $1`,
		} {
			if _, err := tx.Exec(ctx, q, showID); err != nil {
				return fmt.Errorf("delete draft %d: %w", showID, err)
			}
		}
		return audit.Record(ctx, tx, audit.Entry{At: now, Actor: by, Action: "show.delete",
			Target: fmt.Sprintf("show:%d", showID), OrganizationID: show.OrganizationID,
			Detail: map[string]any{"reason": reason, "before": map[string]any{"draft": true, "title": show.Title,
				"title_bn": show.TitleBn, "venue": show.Venue, "starts_at": show.StartsAt, "seats": show.SeatCount}}})
	})
}
