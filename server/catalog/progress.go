package catalog

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/server/audit"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/pg"
)

// TripMark is what a coach's supervisor saw (decision 0468): the coach
// gone from a stop (StopID, "" for its first), or Arrived at its last.
type TripMark struct {
	Arrived bool
	StopID  string
}

// MarkTrip records a coach's progress as its supervisor sees it (decision
// 0468). With the catalog row locked, the stop's mark is written on the
// trip's shard first (its sales of journeys boarding there or before end
// with that commit, whatever the timetable says), then the catalog row
// says when the coach left its first stop or reached its last, with an
// audit entry and a ShowPublished for the read side (the status), in one
// transaction. A mark is taken from when the coach boards at the stop
// (BoardingWindow before its time); an arrival once the coach has left its
// first stop, by mark or by time. A mark made before changes nothing.
func (s *Service) MarkTrip(ctx context.Context, showID int64, m TripMark, by audit.Actor) (Show, error) {
	now := s.clock.Now().UTC().Truncate(time.Microsecond)
	var show Show
	err := pg.InTx(ctx, s.router.Catalog(), func(tx pgx.Tx) error {
		var err error
		if show, err = lockShow(ctx, tx, showID); err != nil {
			return err
		}
		switch {
		case show.Kind != catalogv1.ShowKind_SHOW_KIND_BUS_TRIP:
			return fault.OnField(fault.ShowInvalid, "show_id", "show %d is not a bus trip: it neither departs nor arrives", showID)
		case show.PublishedAt == nil:
			return fault.New(fault.ShowDraft, "show %d is a draft", showID)
		case show.CancelledAt != nil:
			return fault.New(fault.ShowCancelled, "show %d was cancelled by its operator", showID)
		}
		stop, leaves, err := markedStop(show, m)
		if err != nil {
			return err
		}
		switch {
		case m.Arrived && show.DepartedAt == nil && now.Before(show.StartsAt):
			return fault.New(fault.TripNotBoarding, "the coach of show %d has not left its first stop: it arrives after", showID)
		case !m.Arrived && now.Before(leaves.Add(-BoardingWindow)):
			return fault.New(fault.TripNotBoarding, "the coach of show %d boards at %s from %s", showID, m.StopID,
				leaves.Add(-BoardingWindow).Format(time.RFC3339))
		}
		pool, err := s.router.Shard(show.Shard)
		if err != nil {
			return err
		}
		var marked bool
		if err := pg.InTx(ctx, pool, func(stx pgx.Tx) error {
			marked, err = s.inventory.MarkStop(ctx, stx, showID, stop, now, by.ID)
			return err
		}); err != nil {
			return fmt.Errorf("mark show %d on %s: %w", showID, pool.Name, err)
		}
		switch {
		case !m.Arrived && show.DepartedAt == nil:
			show.DepartedAt = &now // gone from any stop, it has left its first
		case m.Arrived && show.ArrivedAt == nil:
			show.ArrivedAt = &now
			if show.DepartedAt == nil {
				show.DepartedAt = &now
			}
		case !marked:
			return nil // marked before: the first mark stands
		}
		if _, err := tx.Exec(ctx, `UPDATE shows SET departed_at = $2, arrived_at = $3 WHERE show_id = $1`,
			showID, show.DepartedAt, show.ArrivedAt); err != nil {
			return fmt.Errorf("mark show %d: %w", showID, err)
		}
		action, detail := "trip.depart", map[string]any{"stop_id": m.StopID, "stop": stop}
		if m.Arrived {
			action = "trip.arrive"
		}
		if err := audit.Record(ctx, tx, audit.Entry{At: now, Actor: by, Action: action,
			Target: fmt.Sprintf("show:%d", showID), OrganizationID: show.OrganizationID, Detail: detail}); err != nil {
			return err
		}
		if show, err = s.withWaitingRoom(ctx, show); err != nil {
			return err
		}
		return announce(ctx, tx, show, now)
	})
	return show, err
}

// markedStop is the stop m marks as trip_marks numbers it (a trip without
// stops: 0 its departure, 1 its arrival) and when the coach leaves it by
// the timetable.
func markedStop(show Show, m TripMark) (int, time.Time, error) {
	stops := len(show.Stops)
	switch {
	case m.Arrived && m.StopID != "":
		return 0, time.Time{}, fault.OnField(fault.ShowInvalid, "stop_id", "a coach arrives at its last stop: name none")
	case m.Arrived:
		return max(1, stops-1), time.Time{}, nil
	case m.StopID == "":
		return 0, show.StartsAt, nil
	}
	i, ok := show.Trip().StopIndex(m.StopID)
	if !ok {
		return 0, time.Time{}, fault.OnField(fault.ShowInvalid, "stop_id", "show %d has no stop %q", show.ID, m.StopID)
	}
	if i == stops-1 {
		return 0, time.Time{}, fault.OnField(fault.ShowInvalid, "stop_id", "%q is the last stop: the coach arrives there", m.StopID)
	}
	return i, show.StartsAt.Add(time.Duration(show.Stops[i].Minutes) * time.Minute), nil
}
