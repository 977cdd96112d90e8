package catalog

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/types/known/timestamppb"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	eventsv1 "github.com/seatghor/seatghor/gen/seatghor/events/v1"
	"github.com/seatghor/seatghor/server/audit"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/outbox"
	"github.com/seatghor/seatghor/server/pg"
)

// RescheduleGrace is how long after its time a show may still be moved: a
// coach that has not left at 07:30 can be announced at 08:00 as leaving at
// 09:00; three hours past, the trip has run or been cancelled (decision
// 0441).
const RescheduleGrace = 3 * time.Hour

// BoardingWindow is how long before it leaves a trip reads "boarding".
const BoardingWindow = 30 * time.Minute

// Reschedule is a show's move to a later time, as its shard's transaction
// tells the show's paid orders of it.
type Reschedule struct {
	ShowID   int64
	Previous time.Time
	StartsAt time.Time
	Reason   string
	At       time.Time
}

// OrdersTold writes, in tx (the show's shard, in the transaction that moves
// the show there), what the show's paid orders must hear of r: package
// booking's AnnounceReschedule.
type OrdersTold func(ctx context.Context, tx pgx.Tx, r Reschedule) error

// RescheduleShow moves a show to a later time (decision 0441). Its shard is
// written first, as CancelShow's: the shard's starts_at is what sales stop
// at and what the tickets' journeys are read from, and tell writes there,
// in the same transaction, one OrderRescheduled per paid order. Then the
// catalog row, an audit entry, a ShowPublished (the read side follows) and
// a ShowRescheduled (partners' webhooks), in one transaction. A crash
// between the two leaves the shard moved and the catalog not; the same
// request again finds the shard at the new time, tells nobody twice and
// completes the catalog. The time the show has already changes nothing.
func (s *Service) RescheduleShow(ctx context.Context, showID int64, at time.Time, by audit.Actor, reason string, tell OrdersTold) (Show, error) {
	now := s.clock.Now().UTC().Truncate(time.Microsecond)
	at = at.UTC().Truncate(time.Microsecond)
	var show Show
	err := pg.InTx(ctx, s.router.Catalog(), func(tx pgx.Tx) error {
		var err error
		if show, err = lockShow(ctx, tx, showID); err != nil {
			return err
		}
		if show.StartsAt.Equal(at) {
			return nil // moved there already: a retry
		}
		switch {
		case show.CancelledAt != nil:
			return fault.New(fault.ShowCancelled, "show %d was cancelled: it runs at no time", showID)
		case show.PublishedAt == nil:
			return fault.New(fault.ShowDraft, "show %d is a draft: it has nobody to tell of a new time; publish it first", showID)
		case !at.After(show.StartsAt):
			return fault.OnField(fault.ShowInvalid, "starts_at", "show %d starts at %s: a show moves only to a later time (cancel it otherwise)",
				showID, show.StartsAt.Format(time.RFC3339))
		case !now.Before(show.StartsAt.Add(RescheduleGrace)):
			return fault.New(fault.ShowAlreadyStarted, "show %d started at %s, more than %s ago", showID,
				show.StartsAt.Format(time.RFC3339), RescheduleGrace)
		}
		pool, err := s.router.Shard(show.Shard)
		if err != nil {
			return err
		}
		r := Reschedule{ShowID: showID, StartsAt: at, Reason: reason, At: now}
		if err := pg.InTx(ctx, pool, func(stx pgx.Tx) error {
			// Only a shard not moved yet tells the orders: a retry after a
			// crash finds it moved and tells nobody twice.
			err := stx.QueryRow(ctx, `
				UPDATE shows SET starts_at = $2 FROM (SELECT starts_at FROM shows WHERE show_id = $1 FOR UPDATE) prev
				WHERE show_id = $1 AND shows.starts_at <> $2 RETURNING prev.starts_at`, showID, at).Scan(&r.Previous)
			moved, err := pg.Found(err)
			if err != nil {
				return fmt.Errorf("move show %d on its shard: %w", showID, err)
			}
			if !moved {
				return nil
			}
			r.Previous = r.Previous.UTC()
			return tell(ctx, stx, r)
		}); err != nil {
			return err
		}
		previous := show.StartsAt
		scheduled := previous
		if show.ScheduledStartsAt != nil {
			scheduled = *show.ScheduledStartsAt
		}
		show.StartsAt, show.ScheduledStartsAt, show.RescheduleReason = at, &scheduled, reason
		if _, err := tx.Exec(ctx, `
			UPDATE shows SET starts_at = $2, scheduled_starts_at = $3, reschedule_reason = $4 WHERE show_id = $1`,
			showID, at, scheduled, reason); err != nil {
			return fmt.Errorf("move show %d: %w", showID, err)
		}
		if err := audit.Record(ctx, tx, audit.Entry{At: now, Actor: by, Action: "show.reschedule",
			Target: fmt.Sprintf("show:%d", showID), OrganizationID: show.OrganizationID, Detail: map[string]any{"reason": reason,
				"before": map[string]any{"starts_at": previous}, "after": map[string]any{"starts_at": at}}}); err != nil {
			return err
		}
		if show, err = s.withWaitingRoom(ctx, show); err != nil {
			return err
		}
		if err := announce(ctx, tx, show, now); err != nil {
			return err
		}
		return outbox.Append(ctx, tx, showID, now, &eventsv1.ShowRescheduled{ShowId: showID,
			PreviousStartsAt: timestamppb.New(previous), StartsAt: timestamppb.New(at),
			ScheduledStartsAt: timestamppb.New(scheduled), Reason: reason, RescheduledBy: by.ID,
			OccurredAt: timestamppb.New(now)})
	})
	return show, err
}

// Status is where the show stands at now (decision 0441): a trip boards
// from BoardingWindow before it leaves and has arrived once its last stop's
// time has passed, or as its supervisor marked it gone and arrived sooner
// (decision 0468); a venue's show is "departed" once it has started.
func (s Show) Status(now time.Time) catalogv1.ShowStatus {
	switch {
	case s.CancelledAt != nil:
		return catalogv1.ShowStatus_SHOW_STATUS_CANCELLED
	case s.PublishedAt == nil:
		return catalogv1.ShowStatus_SHOW_STATUS_DRAFT
	case s.ArrivedAt != nil,
		len(s.Stops) > 1 && !now.Before(s.StartsAt.Add(time.Duration(s.Stops[len(s.Stops)-1].Minutes)*time.Minute)):
		return catalogv1.ShowStatus_SHOW_STATUS_ARRIVED
	case s.DepartedAt != nil, !now.Before(s.StartsAt):
		return catalogv1.ShowStatus_SHOW_STATUS_DEPARTED
	case s.Kind == catalogv1.ShowKind_SHOW_KIND_BUS_TRIP && !now.Before(s.StartsAt.Add(-BoardingWindow)):
		return catalogv1.ShowStatus_SHOW_STATUS_BOARDING
	case s.ScheduledStartsAt != nil:
		return catalogv1.ShowStatus_SHOW_STATUS_DELAYED
	}
	return catalogv1.ShowStatus_SHOW_STATUS_SCHEDULED
}
