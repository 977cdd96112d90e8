package booking

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/types/known/timestamppb"

	eventsv1 "github.com/seatghor/seatghor/gen/seatghor/events/v1"
	"github.com/seatghor/seatghor/server/audit"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/idempotency"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/shard"
)

// AllocationStatus is where an allocation is in its life.
type AllocationStatus string

// The allocation statuses, as stored.
const (
	AllocationActive   AllocationStatus = "active"
	AllocationReleased AllocationStatus = "released"
	AllocationReturned AllocationStatus = "returned"
)

// Allocation is seats, or a quota of a general-admission area, of one show
// ring-fenced for a partner's channel until ReturnAt (decision 0185).
type Allocation struct {
	ID        string `json:"id"`
	ShowID    int64  `json:"show_id"`
	PartnerID int64  `json:"partner_id"`
	// Seats still allocated (held or sold ones included), in layout order.
	Seats  []string `json:"seats,omitempty"`
	GAArea string   `json:"ga_area,omitempty"`
	// Quantity is the places still allocated; Available those of them no
	// one holds or bought.
	Quantity    int              `json:"quantity"`
	Available   int              `json:"available"`
	GeneralSale bool             `json:"general_sale"`
	ReturnAt    time.Time        `json:"return_at"`
	Status      AllocationStatus `json:"status"`
	CreatedAt   time.Time        `json:"created_at"`
}

// AllocationRequest ring-fences Seats, or Quantity places of GAArea, of a
// show for a partner until ReturnAt.
type AllocationRequest struct {
	ShowID    int64
	PartnerID int64
	Seats     []string
	GAArea    string
	Quantity  int
	ReturnAt  time.Time
	// GeneralSale lets the partner hold from general sale of the show too.
	GeneralSale bool
}

// Partners tells whether a partner exists (issue 12's partner records).
type Partners interface {
	PartnerExists(ctx context.Context, partnerID int64) (bool, error)
}

// AllocateSeats ring-fences the request's seats (all or none) or GA places
// for its partner: the show's organisation's managers and admins only.
func (s *Service) AllocateSeats(ctx context.Context, c Caller, req AllocationRequest) (Allocation, error) {
	pool, err := s.shardOf(ctx, req.ShowID)
	if err != nil {
		return Allocation{}, err
	}
	now := s.now()
	return idempotencyDo(ctx, s, pool, idempotency.Show(req.ShowID), now, func(tx pgx.Tx) (Allocation, error) {
		show, err := loadShow(ctx, tx, req.ShowID)
		if err != nil {
			return Allocation{}, err
		}
		if err := s.mayAllocate(ctx, c, show); err != nil {
			return Allocation{}, err
		}
		if err := s.checkPartner(ctx, req.PartnerID); err != nil {
			return Allocation{}, err
		}
		if err := checkReturnAt(req.ReturnAt, show, now); err != nil {
			return Allocation{}, err
		}
		a := Allocation{
			ID: shard.NewID("alc", show.ID), ShowID: show.ID, PartnerID: req.PartnerID, GeneralSale: req.GeneralSale,
			ReturnAt: req.ReturnAt.UTC().Truncate(time.Microsecond), Status: AllocationActive, CreatedAt: now,
		}
		if _, err := tx.Exec(ctx, `
			INSERT INTO allocations (allocation_id, show_id, partner_id, ga_area, general_sale, return_at, status,
			                         created_by, created_at, updated_at)
			VALUES ($1, $2, $3, '', $4, $5, 'active', $6, $7, $7)`,
			a.ID, a.ShowID, a.PartnerID, a.GeneralSale, a.ReturnAt, c.UserID, now); err != nil {
			return Allocation{}, fmt.Errorf("insert allocation: %w", err)
		}
		if len(req.Seats) > 0 {
			err = allocateSeats(ctx, tx, &a, req.Seats, now)
		} else {
			err = allocateGA(ctx, tx, &a, req.GAArea, req.Quantity, now)
		}
		if err != nil {
			return Allocation{}, err
		}
		if err := auditAllocation(ctx, tx, c, "allocation.create", a, now, map[string]any{"after": map[string]any{
			"partner_id": a.PartnerID, "seats": a.Seats, "ga_area": a.GAArea, "quantity": a.Quantity,
			"return_at": a.ReturnAt, "general_sale": a.GeneralSale}}); err != nil {
			return Allocation{}, err
		}
		return a, appendEvent(ctx, tx, now, &eventsv1.SeatsAllocated{
			ShowId: a.ShowID, AllocationId: a.ID, PartnerId: a.PartnerID, Seats: a.Seats, GaArea: a.GAArea,
			Quantity: int32(a.Quantity), GeneralSale: a.GeneralSale, ReturnAt: timestamppb.New(a.ReturnAt),
			AllocatedBy: c.UserID, OccurredAt: timestamppb.New(now),
		})
	})
}

// checkReturnAt: the places come back to general sale after now and
// before the show starts, or the allocation means nothing.
func checkReturnAt(at time.Time, show showSettings, now time.Time) error {
	var e *fault.Error
	switch {
	case !at.After(now):
		e = fault.New(fault.BookingInvalid, "return_at %s is not in the future", at.UTC().Format(time.RFC3339))
	case !at.Before(show.StartsAt):
		e = fault.New(fault.BookingInvalid, "return_at %s is not before show %d starts at %s",
			at.UTC().Format(time.RFC3339), show.ID, show.StartsAt.UTC().Format(time.RFC3339))
	default:
		return nil
	}
	e.Field = "return_at"
	return e
}

// mayAllocate: the show's operator (its organisation's managers) and admins
// allocate and release.
func (s *Service) mayAllocate(ctx context.Context, c Caller, show showSettings) error {
	if c.Admin {
		return nil
	}
	if c.Operator && show.OrganizationID != "" {
		ok, err := s.members.HasRole(ctx, show.OrganizationID, c.UserID, catalog.RoleManager)
		if err != nil || ok {
			return err
		}
	}
	return fault.New(fault.AllocationForbidden, "only the operator of show %d or an admin allocates its seats", show.ID)
}

func (s *Service) checkPartner(ctx context.Context, partnerID int64) error {
	ok, err := s.cfg.Partners.PartnerExists(ctx, partnerID)
	if err != nil {
		return fmt.Errorf("look up partner %d: %w", partnerID, err)
	}
	if !ok {
		return fault.New(fault.PartnerNotFound, "partner %d not found", partnerID)
	}
	return nil
}

// allocateSeats ring-fences every asked-for seat or none, in one
// conditional write that locks them in (seat, leg) order as holds do: a
// seat is allocatable when it is free (a lapsed hold's seat is, R-3.3) and
// in no allocation, on every leg of a trip with stops. An allocated seat
// is the partner's on every leg (decision 0355): allocations are of seats,
// not of journeys.
func allocateSeats(ctx context.Context, tx pgx.Tx, a *Allocation, seats []string, now time.Time) error {
	type seatRow struct {
		seat string
		pos  int
		leg  int
	}
	var got []seatRow
	err := pg.InTx(ctx, tx, func(sp pgx.Tx) error {
		rows, err := sp.Query(ctx, `
			WITH free AS (
				SELECT show_id, seat, leg FROM seats
				WHERE show_id = $1 AND seat = ANY($2) AND allocation_id IS NULL
				  AND (status = 'available' OR (status = 'held' AND held_until < $3))
				ORDER BY seat, leg
				FOR UPDATE
			)
			UPDATE seats s
			SET allocation_id = $4, allocated_partner_id = $5, version = s.version + 1
			FROM free
			WHERE s.show_id = free.show_id AND s.seat = free.seat AND s.leg = free.leg AND s.allocation_id IS NULL
			  AND (s.status = 'available' OR (s.status = 'held' AND s.held_until < $3))
			  AND (SELECT count(*) FROM free) = (SELECT count(*) FROM seats WHERE show_id = $1 AND seat = ANY($2))
			RETURNING s.seat, s.position, s.leg`,
			a.ShowID, seats, now, a.ID, a.PartnerID)
		if err != nil {
			return fmt.Errorf("allocate seats: %w", err)
		}
		got, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (seatRow, error) {
			var g seatRow
			return g, r.Scan(&g.seat, &g.pos, &g.leg)
		})
		if err != nil {
			return fmt.Errorf("allocate seats: %w", err)
		}
		got = slices.DeleteFunc(got, func(g seatRow) bool { return g.leg != 0 })
		if len(got) != len(seats) {
			return errAllOrNothing
		}
		return nil
	})
	slices.SortFunc(got, func(x, y seatRow) int { return x.pos - y.pos })
	var taken []string
	for _, g := range got {
		taken = append(taken, g.seat)
	}
	if errors.Is(err, errAllOrNothing) {
		return notAllocatable(ctx, tx, a.ShowID, seats, freeEveryLeg(ctx, tx, a.ShowID, seats, now))
	}
	if err != nil {
		return err
	}
	a.Seats, a.Quantity, a.Available = taken, len(taken), len(taken)
	return nil
}

// freeEveryLeg returns those of seats that are allocatable on every leg:
// what notAllocatable does not name (an error reads as none).
func freeEveryLeg(ctx context.Context, tx pgx.Tx, showID int64, seats []string, now time.Time) []string {
	rows, err := tx.Query(ctx, `
		SELECT seat FROM seats WHERE show_id = $1 AND seat = ANY($2)
		GROUP BY seat
		HAVING bool_and(allocation_id IS NULL AND (status = 'available' OR (status = 'held' AND held_until < $3)))`,
		showID, seats, now)
	if err != nil {
		return nil
	}
	free, _ := pgx.CollectRows(rows, pgx.RowTo[string])
	return free
}

// notAllocatable explains a refused seat allocation: unknown seats are
// invalid input; the others are held, sold or allocated already.
func notAllocatable(ctx context.Context, tx pgx.Tx, showID int64, asked, free []string) error {
	err := seatsProblem(ctx, tx, showID, asked, free)
	if e, ok := fault.As(err); ok && e.Reason == fault.SeatsUnavailable {
		e.Reason = fault.SeatsNotAllocatable
		e.Message = fmt.Sprintf("seats not allocatable (held, sold or allocated already): %s", joinSeats(e.Seats))
	}
	return err
}

// allocateGA moves quantity places of an area from its general-sale
// buckets, capacity and all, into a bucket of the allocation's own, under
// the locks every GA path takes in bucket order (holdGASlow's).
func allocateGA(ctx context.Context, tx pgx.Tx, a *Allocation, area string, quantity int, now time.Time) error {
	area, price, err := resolveArea(ctx, tx, a.ShowID, area)
	if err != nil {
		return err
	}
	a.GAArea = area
	if _, err := lockBuckets(ctx, tx, a.ShowID, area); err != nil {
		return err
	}
	if err := reclaimExpiredGA(ctx, tx, a.ShowID, area, now); err != nil {
		return err
	}
	buckets, err := lockBuckets(ctx, tx, a.ShowID, area)
	if err != nil {
		return err
	}
	free := 0
	for _, b := range buckets {
		if b.partner == 0 {
			free += b.remaining
		}
	}
	if free < quantity {
		return &fault.Error{Reason: fault.SeatsNotAllocatable, GAArea: area, Remaining: free,
			Message: fmt.Sprintf("%s has %d places on general sale; %d asked for", area, free, quantity)}
	}
	need := quantity
	for _, b := range buckets {
		n := min(need, b.remaining)
		if b.partner != 0 || n == 0 {
			continue
		}
		if _, err := tx.Exec(ctx, `
			UPDATE ga_buckets SET capacity = capacity - $4, remaining = remaining - $4, version = version + 1
			WHERE show_id = $1 AND area = $2 AND bucket = $3`, a.ShowID, area, b.bucket, n); err != nil {
			return fmt.Errorf("take GA places for allocation: %w", err)
		}
		if need -= n; need == 0 {
			break
		}
	}
	if _, err := tx.Exec(ctx, `
		INSERT INTO ga_buckets (show_id, area, bucket, position, capacity, remaining, price_minor,
		                        allocation_id, allocated_partner_id)
		SELECT $1, $2, max(bucket) + 1, min(position), $3, $3, $4, $5, $6
		FROM ga_buckets WHERE show_id = $1 AND area = $2`,
		a.ShowID, area, quantity, price, a.ID, a.PartnerID); err != nil {
		return fmt.Errorf("add the allocation's GA bucket: %w", err)
	}
	_, err = tx.Exec(ctx, `UPDATE allocations SET ga_area = $2 WHERE allocation_id = $1`, a.ID, area)
	if err != nil {
		return fmt.Errorf("record the allocation's area: %w", err)
	}
	a.Quantity, a.Available = quantity, quantity
	return nil
}

// ReleaseAllocation gives seats (or quantity GA places, or, with neither,
// everything left) of an allocation back to general sale now: the show's
// organisation's managers and admins only. Places the partner's buyers hold
// or bought stay theirs.
func (s *Service) ReleaseAllocation(ctx context.Context, c Caller, allocationID string, seats []string, quantity int) (Allocation, error) {
	pool, err := s.shardOfID(ctx, "allocation", allocationID)
	if err != nil {
		return Allocation{}, err
	}
	now := s.now()
	return idempotencyDo(ctx, s, pool, allocationID, now, func(tx pgx.Tx) (Allocation, error) {
		a, err := lockAllocation(ctx, tx, allocationID)
		if err != nil {
			return Allocation{}, err
		}
		show, err := loadShow(ctx, tx, a.ShowID)
		if err != nil {
			return Allocation{}, err
		}
		if err := s.mayAllocate(ctx, c, show); err != nil {
			return Allocation{}, err
		}
		if a.Status != AllocationActive {
			return Allocation{}, fault.New(fault.BookingNotAllowed, "allocation %s is already %s", a.ID, a.Status)
		}
		ev := &eventsv1.AllocationReleased{ShowId: a.ShowID, AllocationId: a.ID, PartnerId: a.PartnerID,
			GaArea: a.GAArea, ReleasedBy: c.UserID, OccurredAt: timestamppb.New(now)}
		switch {
		case len(seats) > 0:
			if a.GAArea != "" {
				return Allocation{}, &fault.Error{Reason: fault.BookingInvalid, Field: "seats",
					Message: fmt.Sprintf("allocation %s is a quota of %s: release a quantity", a.ID, a.GAArea)}
			}
			err = releaseSeats(ctx, tx, a, seats, ev)
		case quantity > 0:
			if a.GAArea == "" {
				return Allocation{}, &fault.Error{Reason: fault.BookingInvalid, Field: "quantity",
					Message: fmt.Sprintf("allocation %s is of seats: release seats", a.ID)}
			}
			err = releaseGAPlaces(ctx, tx, a, quantity, ev)
		default:
			err = liftAllocation(ctx, tx, a, func(seats []string, places int) {
				ev.Seats, ev.Quantity = seats, int32(places)
			})
		}
		if err != nil {
			return Allocation{}, err
		}
		if a, err = readAllocation(ctx, tx, allocationID, now); err != nil {
			return Allocation{}, err
		}
		if a.Quantity == 0 {
			if err := endAllocation(ctx, tx, a.ID, AllocationReleased, now); err != nil {
				return Allocation{}, err
			}
			a.Status = AllocationReleased
		}
		ev.Whole = a.Status != AllocationActive
		if err := auditAllocation(ctx, tx, c, "allocation.release", a, now, map[string]any{
			"before": map[string]any{"status": string(AllocationActive)},
			"after":  map[string]any{"status": string(a.Status), "seats": ev.Seats, "quantity": ev.Quantity}}); err != nil {
			return Allocation{}, err
		}
		return a, appendEvent(ctx, tx, now, ev)
	})
}

// releaseSeats lifts the ring-fence of some seats of a seated allocation,
// all of them or none, locking them in seat order as holds do.
func releaseSeats(ctx context.Context, tx pgx.Tx, a Allocation, seats []string, ev *eventsv1.AllocationReleased) error {
	return pg.InTx(ctx, tx, func(sp pgx.Tx) error {
		rows, err := sp.Query(ctx, `
			WITH mine AS (
				SELECT show_id, seat, leg FROM seats
				WHERE show_id = $1 AND allocation_id = $2 AND seat = ANY($3)
				ORDER BY seat, leg
				FOR UPDATE
			)
			UPDATE seats s SET allocation_id = NULL, allocated_partner_id = NULL, version = s.version + 1
			FROM mine WHERE s.show_id = mine.show_id AND s.seat = mine.seat AND s.leg = mine.leg
			RETURNING s.seat`, a.ShowID, a.ID, seats)
		if err != nil {
			return fmt.Errorf("release seats of allocation %s: %w", a.ID, err)
		}
		got, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return fmt.Errorf("release seats of allocation %s: %w", a.ID, err)
		}
		got = distinct(got) // a row per leg (decision 0350)
		if len(got) != len(seats) {
			var missing []string
			for _, seat := range seats {
				if !slices.Contains(got, seat) {
					missing = append(missing, seat)
				}
			}
			return &fault.Error{Reason: fault.BookingInvalid, Field: "seats", Seats: missing,
				Message: fmt.Sprintf("seats %s are not in allocation %s", joinSeats(missing), a.ID)}
		}
		ev.Seats, ev.Quantity = got, int32(len(got))
		return nil
	})
}

// releaseGAPlaces moves quantity unsold places of a GA allocation's bucket
// back to the area's first general-sale bucket, capacity and all.
func releaseGAPlaces(ctx context.Context, tx pgx.Tx, a Allocation, quantity int, ev *eventsv1.AllocationReleased) error {
	buckets, err := lockBuckets(ctx, tx, a.ShowID, a.GAArea)
	if err != nil {
		return err
	}
	public := -1
	for _, b := range buckets {
		if b.partner == 0 {
			public = b.bucket
			break
		}
	}
	tag, err := tx.Exec(ctx, `
		UPDATE ga_buckets SET capacity = capacity - $3, remaining = remaining - $3, version = version + 1
		WHERE show_id = $1 AND allocation_id = $2 AND remaining >= $3`, a.ShowID, a.ID, quantity)
	if err != nil {
		return fmt.Errorf("release GA places of allocation %s: %w", a.ID, err)
	}
	if tag.RowsAffected() == 0 || public < 0 {
		return fault.New(fault.BookingNotAllowed, "allocation %s has fewer than %d unsold places", a.ID, quantity)
	}
	if _, err := tx.Exec(ctx, `
		UPDATE ga_buckets SET capacity = capacity + $4, remaining = remaining + $4, version = version + 1
		WHERE show_id = $1 AND area = $2 AND bucket = $3`, a.ShowID, a.GAArea, public, quantity); err != nil {
		return fmt.Errorf("give back GA places of allocation %s: %w", a.ID, err)
	}
	ev.Quantity = int32(quantity)
	return nil
}

// liftAllocation ends the ring-fence of everything left of an allocation:
// its seats become general sale (those a partner's buyer holds or bought
// stay theirs, and come back to general sale if they are given up), and its
// GA bucket becomes one of the area's public buckets, so places its holds
// give back later land in general sale too. done gets what went back.
func liftAllocation(ctx context.Context, tx pgx.Tx, a Allocation, done func(seats []string, places int)) error {
	if a.GAArea != "" {
		if _, err := lockBuckets(ctx, tx, a.ShowID, a.GAArea); err != nil {
			return err
		}
		var places int
		err := tx.QueryRow(ctx, `
			UPDATE ga_buckets SET allocation_id = NULL, allocated_partner_id = NULL, version = version + 1
			WHERE show_id = $1 AND allocation_id = $2
			RETURNING remaining`, a.ShowID, a.ID).Scan(&places)
		if _, err := pg.Found(err); err != nil { // no bucket: nothing to give back
			return fmt.Errorf("return GA places of allocation %s: %w", a.ID, err)
		}
		done(nil, places)
		return nil
	}
	rows, err := tx.Query(ctx, `
		WITH mine AS (
			SELECT show_id, seat, leg FROM seats
			WHERE show_id = $1 AND allocation_id = $2
			ORDER BY seat, leg
			FOR UPDATE
		)
		UPDATE seats s SET allocation_id = NULL, allocated_partner_id = NULL, version = s.version + 1
		FROM mine WHERE s.show_id = mine.show_id AND s.seat = mine.seat AND s.leg = mine.leg
		RETURNING s.seat`, a.ShowID, a.ID)
	if err != nil {
		return fmt.Errorf("return seats of allocation %s: %w", a.ID, err)
	}
	seats, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("return seats of allocation %s: %w", a.ID, err)
	}
	slices.Sort(seats)
	seats = slices.Compact(seats) // a row per leg (decision 0350)
	done(seats, len(seats))
	return nil
}

// endAllocation moves a live allocation to to.
func endAllocation(ctx context.Context, tx pgx.Tx, id string, to AllocationStatus, now time.Time) error {
	if _, err := tx.Exec(ctx, `
		UPDATE allocations SET status = $2, updated_at = $3 WHERE allocation_id = $1 AND status = 'active'`,
		id, to, now); err != nil {
		return fmt.Errorf("end allocation %s: %w", id, err)
	}
	return nil
}

// ListAllocations lists a show's allocations, newest first: all of them for
// its operator and admins, a partner's own for the partner.
func (s *Service) ListAllocations(ctx context.Context, c Caller, showID int64) ([]Allocation, error) {
	pool, err := s.shardOf(ctx, showID)
	if err != nil {
		return nil, err
	}
	var out []Allocation
	err = pg.InTx(ctx, pool, func(tx pgx.Tx) error {
		show, err := loadShow(ctx, tx, showID)
		if err != nil {
			return err
		}
		partner := int64(0)
		if err := s.mayAllocate(ctx, c, show); err != nil {
			if c.PartnerID == 0 {
				return err
			}
			partner = c.PartnerID
		}
		rows, err := tx.Query(ctx, `
			SELECT allocation_id FROM allocations
			WHERE show_id = $1 AND ($2 = 0 OR partner_id = $2)
			ORDER BY created_at DESC, allocation_id DESC`, showID, partner)
		if err != nil {
			return fmt.Errorf("list allocations of show %d: %w", showID, err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return fmt.Errorf("list allocations of show %d: %w", showID, err)
		}
		for _, id := range ids {
			a, err := readAllocation(ctx, tx, id, s.now())
			if err != nil {
				return err
			}
			out = append(out, a)
		}
		return nil
	})
	return out, err
}

// allocationSQL reads an allocation with what is left of it: its seats and
// how many of them are free on every leg ($2 is now: a lapsed hold's seat
// is free), or its GA bucket's places.
const allocationSQL = `
	SELECT a.allocation_id, a.show_id, a.partner_id, a.ga_area, a.general_sale, a.return_at, a.status, a.created_at,
	       coalesce((SELECT array_agg(seat ORDER BY position) FROM seats
	                 WHERE show_id = a.show_id AND allocation_id = a.allocation_id AND leg = 0), '{}'),
	       (SELECT count(*) FROM (
	          SELECT seat FROM seats WHERE show_id = a.show_id AND allocation_id = a.allocation_id
	          GROUP BY seat HAVING bool_and(status = 'available' OR (status = 'held' AND held_until < $2))) free),
	       coalesce((SELECT sum(capacity) FROM ga_buckets WHERE show_id = a.show_id AND allocation_id = a.allocation_id), 0),
	       coalesce((SELECT sum(remaining) FROM ga_buckets WHERE show_id = a.show_id AND allocation_id = a.allocation_id), 0)
	FROM allocations a WHERE a.allocation_id = $1`

func readAllocation(ctx context.Context, tx pgx.Tx, id string, now time.Time) (Allocation, error) {
	var (
		a                       Allocation
		freeSeats, places, left int
	)
	err := tx.QueryRow(ctx, allocationSQL, id, now).Scan(&a.ID, &a.ShowID, &a.PartnerID, &a.GAArea, &a.GeneralSale,
		&a.ReturnAt, &a.Status, &a.CreatedAt, &a.Seats, &freeSeats, &places, &left)
	found, err := pg.Found(err)
	if err != nil {
		return a, fmt.Errorf("read allocation %s: %w", id, err)
	}
	if !found {
		return a, notFound("allocation", id)
	}
	a.ReturnAt, a.CreatedAt = a.ReturnAt.UTC(), a.CreatedAt.UTC()
	if a.GAArea != "" {
		a.Quantity, a.Available = places, left
	} else {
		a.Quantity, a.Available = len(a.Seats), freeSeats
	}
	return a, nil
}

// lockAllocation locks an allocation's row, first on every path that
// changes it (then buckets, then seats, then holds), and reads it.
func lockAllocation(ctx context.Context, tx pgx.Tx, id string) (Allocation, error) {
	var a Allocation
	err := tx.QueryRow(ctx, `
		SELECT allocation_id, show_id, partner_id, ga_area, return_at, status FROM allocations
		WHERE allocation_id = $1 FOR UPDATE`, id).Scan(&a.ID, &a.ShowID, &a.PartnerID, &a.GAArea, &a.ReturnAt, &a.Status)
	found, err := pg.Found(err)
	if err != nil {
		return a, fmt.Errorf("lock allocation %s: %w", id, err)
	}
	if !found {
		return a, notFound("allocation", id)
	}
	a.ReturnAt = a.ReturnAt.UTC()
	return a, nil
}

// ReturnDue returns every allocation whose return time has come, at most
// batch per shard, each in a transaction of its own, and reports how many
// it returned. The move is a conditional write on the allocation's row, so
// two workers that race for one return it once.
func (s *Service) ReturnDue(ctx context.Context, batch int) (int, error) {
	now := s.now()
	total := 0
	for _, pool := range s.router.Shards() {
		rows, err := pool.Query(ctx, `
			SELECT allocation_id FROM allocations WHERE status = 'active' AND return_at <= $1
			ORDER BY return_at LIMIT $2`, now, batch)
		if err != nil {
			return total, fmt.Errorf("find due allocations on %s: %w", pool.Name, err)
		}
		due, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return total, fmt.Errorf("find due allocations on %s: %w", pool.Name, err)
		}
		for _, id := range due {
			var returned bool
			err := pg.InTx(ctx, pool, func(tx pgx.Tx) error {
				var err error
				returned, err = returnAllocation(ctx, tx, id, now)
				return err
			})
			if err != nil {
				return total, err
			}
			if returned {
				total++
			}
		}
	}
	return total, nil
}

// returnAllocation returns one allocation if it is still live and due;
// returned says whether this call did it.
func returnAllocation(ctx context.Context, tx pgx.Tx, id string, now time.Time) (returned bool, err error) {
	var a Allocation
	err = tx.QueryRow(ctx, `
		UPDATE allocations SET status = 'returned', updated_at = $2
		WHERE allocation_id = $1 AND status = 'active' AND return_at <= $2
		RETURNING allocation_id, show_id, partner_id, ga_area, return_at`, id, now).
		Scan(&a.ID, &a.ShowID, &a.PartnerID, &a.GAArea, &a.ReturnAt)
	found, err := pg.Found(err)
	if err != nil {
		return false, fmt.Errorf("return allocation %s: %w", id, err)
	}
	if !found {
		return false, nil // another worker returned it, or it was released
	}
	ev := &eventsv1.AllocationReturned{ShowId: a.ShowID, AllocationId: a.ID, PartnerId: a.PartnerID, GaArea: a.GAArea,
		ReturnAt: timestamppb.New(a.ReturnAt), OccurredAt: timestamppb.New(now)}
	if err := liftAllocation(ctx, tx, a, func(seats []string, places int) {
		ev.Seats, ev.Quantity = seats, int32(places)
	}); err != nil {
		return false, err
	}
	return true, appendEvent(ctx, tx, now, ev)
}

// RunReturns returns due allocations every interval until ctx ends (the
// workers role, beside the hold sweeper).
func (s *Service) RunReturns(ctx context.Context, interval time.Duration, log *slog.Logger) {
	every(ctx, interval, func(ctx context.Context) (int, error) { return s.ReturnDue(ctx, 500) },
		func(err error) { log.Error("allocation returns", "err", err) },
		func(n int) { log.Info("allocations returned to general sale", "allocations", n) })
}

// AnyPartner takes every positive id for a partner: the lookup of a
// booking service built without one (the platform passes the registered
// partners, server/partner).
type AnyPartner struct{}

// PartnerExists implements Partners.
func (AnyPartner) PartnerExists(_ context.Context, partnerID int64) (bool, error) {
	return partnerID > 0, nil
}

// auditAllocation records a change of allocation a by c in its shard's
// audit log, in tx, the transaction of the change (decision 0457).
func auditAllocation(ctx context.Context, tx pgx.Tx, c Caller, action string, a Allocation, now time.Time, detail map[string]any) error {
	by := audit.Actor{Kind: audit.ActorUser, ID: c.UserID}
	if c.Admin {
		by.Kind = audit.ActorAdmin
	}
	return audit.RecordOnShard(ctx, tx, a.ShowID, audit.Entry{At: now, Actor: by, Action: action,
		Target: "allocation:" + a.ID, Detail: detail})
}
