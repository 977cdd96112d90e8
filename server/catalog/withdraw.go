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
	"github.com/seatghor/seatghor/server/outbox"
	"github.com/seatghor/seatghor/server/pg"
)

// Sales is what a show's shard holds of its sale: why WithdrawUnsold kept
// it. The zero value is a show nobody held, bought or was allocated.
type Sales struct {
	// SeatsHeld and SeatsSold count the seats held now and bought.
	SeatsHeld, SeatsSold int
	// PlacesTaken counts the general-admission places held or bought.
	PlacesTaken int
	// Holds counts every hold ever taken on the show, whatever became of
	// it: a lapsed hold is a sale begun, whose history stays.
	Holds int
	// Allocated counts the seats and places allocated to partners, and
	// the allocations.
	Allocated int
}

// Any says the show has sales of some kind.
func (s Sales) Any() bool {
	return s.SeatsHeld+s.SeatsSold+s.PlacesTaken+s.Holds+s.Allocated > 0
}

// Withdrawal says who withdraws a show and why.
type Withdrawal struct {
	// By is who withdraws it, for the audit log and the event.
	By audit.Actor
	// Reason is why, in English.
	Reason string
	// InTx, when set, runs in the catalog transaction that deletes the
	// show, before its row goes: what it writes commits with the
	// withdrawal (the timetable job lets go of the trip's key there).
	InTx func(ctx context.Context, tx pgx.Tx) error
}

// errKept rolls a withdrawal's transactions back when the shard says the
// show has sales.
var errKept = errors.New("the show has sales")

// WithdrawUnsold takes a show nobody has held, bought or been allocated
// out of sale and out of the catalog, as if it had never been published
// (decision 0363): its seats and GA buckets go from its shard in the
// statement that checks them (Inventory.Retire), so a hold racing the
// withdrawal either lands first, and the show is kept, or finds no seat;
// then its terms, its catalog row, and a ShowWithdrawn event tells the
// read side. A show with sales is kept as it is: the answer says what it
// has, and nothing changes. A show with a waiting room is never withdrawn
// (a sale's shows are an operator's to cancel).
func (s *Service) WithdrawUnsold(ctx context.Context, showID int64, w Withdrawal) (Sales, error) {
	now := s.clock.Now().UTC().Truncate(time.Microsecond)
	var sales Sales
	err := pg.InTx(ctx, s.router.Catalog(), func(tx pgx.Tx) error {
		var (
			shard   int
			routeID string
			orgID   string
			room    bool
		)
		err := tx.QueryRow(ctx, `
			SELECT shard, coalesce(route_id, ''), coalesce(organization_id, ''),
			       EXISTS (SELECT FROM waiting_rooms WHERE show_id = $1) OR EXISTS (SELECT FROM sale_shows WHERE show_id = $1)
			FROM shows WHERE show_id = $1 FOR UPDATE`, showID).Scan(&shard, &routeID, &orgID, &room)
		found, err := pg.Found(err)
		if err != nil {
			return fmt.Errorf("lock show %d: %w", showID, err)
		}
		if !found {
			return fmt.Errorf("withdraw show %d: %w", showID, ErrNotFound)
		}
		if room {
			return fmt.Errorf("withdraw show %d: it sells through a waiting room", showID)
		}
		if sales, err = s.retire(ctx, shard, showID); err != nil {
			return err
		}
		if w.InTx != nil {
			if err := w.InTx(ctx, tx); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `DELETE FROM shows WHERE show_id = $1`, showID); err != nil {
			return fmt.Errorf("delete show %d: %w", showID, err)
		}
		if err := audit.Record(ctx, tx, audit.Entry{At: now, Actor: w.By, Action: "show.withdraw",
			Target: fmt.Sprintf("show:%d", showID), OrganizationID: orgID, Detail: map[string]any{"reason": w.Reason, "route_id": routeID}}); err != nil {
			return err
		}
		return outbox.Append(ctx, tx, showID, now, &eventsv1.ShowWithdrawn{ShowId: showID, RouteId: routeID,
			Reason: w.Reason, WithdrawnBy: w.By.String(), OccurredAt: timestamppb.New(now)})
	})
	if errors.Is(err, errKept) {
		return sales, nil
	}
	if err != nil {
		return Sales{}, err
	}
	return Sales{}, nil
}

// retire takes a show's seats, GA buckets and terms off its shard in one
// transaction of it, unless anything of them was held, sold or allocated:
// then nothing changes, and the answer is errKept with what it has.
func (s *Service) retire(ctx context.Context, shard int, showID int64) (Sales, error) {
	pool, err := s.router.Shard(shard)
	if err != nil {
		return Sales{}, err
	}
	var sales Sales
	err = pg.InTx(ctx, pool, func(stx pgx.Tx) error {
		if sales, err = s.inventory.Retire(ctx, stx, showID); err != nil {
			return err
		}
		if sales.Any() {
			return errKept
		}
		return deleteTerms(ctx, stx, showID)
	})
	if err != nil && !errors.Is(err, errKept) {
		err = fmt.Errorf("retire show %d from %s: %w", showID, pool.Name, err)
	}
	return sales, err
}

// deleteTerms deletes a withdrawn show's terms from its shard. A row
// another table still points at (a later table of the show's) stays, in a
// savepoint: with no catalog entry pointing at it, it is unreachable, as
// the rows of a CreateShow that crashed between its two commits are.
func deleteTerms(ctx context.Context, tx pgx.Tx, showID int64) error {
	err := pg.InTx(ctx, tx, func(sp pgx.Tx) error {
		_, err := sp.Exec(ctx, `DELETE FROM shows WHERE show_id = $1`, showID)
		return err
	})
	if pg.IsForeignKeyViolation(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete terms of show %d: %w", showID, err)
	}
	return nil
}
