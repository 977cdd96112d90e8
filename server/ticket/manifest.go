package ticket

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/types/known/timestamppb"

	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	eventsv1 "github.com/seatghor/seatghor/gen/seatghor/events/v1"
	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/outbox"
	"github.com/seatghor/seatghor/server/pg"
)

// Boarding is where a passenger of the manifest stands (decision 0442).
type Boarding string

// The boarding states: a check-in (scan or typed id) is boarded, whatever
// was marked before; a no-show mark stands otherwise.
const (
	Expected Boarding = "expected"
	Boarded  Boarding = "boarded"
	NoShow   Boarding = "no_show"
)

// Channel is where a ticket was sold.
type Channel string

// The channels.
const (
	ChannelWeb     Channel = "web"
	ChannelPartner Channel = "partner"
	// ChannelCounter: sold for cash at an operator's counter (decision 0443).
	ChannelCounter Channel = "counter"
)

// ManifestEntry is one ticket of a trip's manifest.
type ManifestEntry struct {
	TicketID, OrderID string
	Seat, GAArea      string
	// Passenger is who travels on the seat; Phone theirs, else the buyer's.
	Passenger string
	Phone     string
	Woman     bool
	Journey   *commonv1.Journey
	Channel   Channel
	PartnerID int64
	Status    Boarding
	BoardedAt time.Time
	Gate      string
	NoShowAt  time.Time
	// ReleasedLegs is how many legs of the seat went back on sale with
	// the no-show.
	ReleasedLegs int
	// CounterFirstUntil is until when those legs are the counters' first
	// (decision 0482); zero: on general sale from the mark.
	CounterFirstUntil time.Time
	// position is the seat's place in the layout (what the manifest is
	// sorted by); -1 for general admission, listed last.
	position int
}

// Manifest is a trip's passengers by seat.
type Manifest struct {
	ShowID                    int64
	Entries                   []ManifestEntry
	Expected, Boarded, NoShow int
	ServerTime                time.Time
	// TimeZone is the show's, in which its times are read.
	TimeZone string
}

// Manifest reads show showID's manifest: every ticket of its paid orders,
// in the layout's seat order; stopID keeps those boarding at that stop ("":
// all). Its callers are CheckIn's: the supervisor is the show's gate staff
// (decision 0442).
func (s *Service) Manifest(ctx context.Context, c Caller, showID int64, stopID string) (Manifest, error) {
	pool, err := s.gatePool(ctx, c, showID)
	if err != nil {
		return Manifest{}, err
	}
	return s.manifest(ctx, pool, showID, stopID, "")
}

// manifest reads the manifest on pool, the show's shard; orderID keeps
// that order's tickets ("": all).
func (s *Service) manifest(ctx context.Context, pool *pg.Pool, showID int64, stopID, orderID string) (Manifest, error) {
	m := Manifest{ShowID: showID, ServerTime: s.clock.Now().UTC()}
	err := pg.InTx(ctx, pool, func(tx pgx.Tx) error {
		// One snapshot: orders, check-ins and no-shows agree.
		if _, err := tx.Exec(ctx, `SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`); err != nil {
			return fmt.Errorf("read the manifest of show %d: %w", showID, err)
		}
		terms, err := catalog.ReadTerms(ctx, tx, showID)
		if err != nil {
			return err
		}
		m.TimeZone = terms.TimeZone
		orders, err := booking.ListManifest(ctx, tx, showID, orderID)
		if err != nil {
			return err
		}
		boarded, noShows, err := boardings(ctx, tx, showID, orderID)
		if err != nil {
			return err
		}
		for _, o := range orders {
			if stopID != "" && o.View != nil && o.View.GetFromStopId() != stopID {
				continue
			}
			for i := range max(len(o.Seats), o.Quantity) {
				e, err := manifestEntry(o, i, boarded, noShows)
				if err != nil {
					return err
				}
				m.Entries = append(m.Entries, e)
			}
		}
		return nil
	})
	if err != nil {
		return Manifest{}, err
	}
	slices.SortStableFunc(m.Entries, func(a, b ManifestEntry) int {
		if (a.position < 0) != (b.position < 0) {
			return b.position - a.position // a seat before a general-admission place
		}
		return a.position - b.position
	})
	for _, e := range m.Entries {
		switch e.Status {
		case Boarded:
			m.Boarded++
		case NoShow:
			m.NoShow++
		default:
			m.Expected++
		}
	}
	return m, nil
}

type checkinRow struct {
	at   time.Time
	gate string
}

type noShowRow struct {
	at, counterUntil time.Time
	legs             int
}

// boardings reads the show's check-ins and no-shows, by ticket id; orderID
// keeps that order's ("": all).
func boardings(ctx context.Context, tx pgx.Tx, showID int64, orderID string) (map[string]checkinRow, map[string]noShowRow, error) {
	boarded, noShows := map[string]checkinRow{}, map[string]noShowRow{}
	rows, err := tx.Query(ctx, `
		SELECT ticket_id, checked_in_at, gate FROM ticket_checkins WHERE show_id = $1 AND ($2 = '' OR order_id = $2)`, showID, orderID)
	if err != nil {
		return nil, nil, fmt.Errorf("read check-ins of show %d: %w", showID, err)
	}
	var id string
	var ci checkinRow
	if _, err := pgx.ForEachRow(rows, []any{&id, &ci.at, &ci.gate}, func() error {
		boarded[id] = checkinRow{at: ci.at.UTC(), gate: ci.gate}
		return nil
	}); err != nil {
		return nil, nil, fmt.Errorf("read check-ins of show %d: %w", showID, err)
	}
	rows, err = tx.Query(ctx, `
		SELECT ticket_id, marked_at, released_legs, coalesce(counter_until, 'epoch') FROM ticket_no_shows
		WHERE show_id = $1 AND ($2 = '' OR order_id = $2)`, showID, orderID)
	if err != nil {
		return nil, nil, fmt.Errorf("read no-shows of show %d: %w", showID, err)
	}
	var ns noShowRow
	if _, err := pgx.ForEachRow(rows, []any{&id, &ns.at, &ns.legs, &ns.counterUntil}, func() error {
		row := noShowRow{at: ns.at.UTC(), legs: ns.legs}
		if ns.counterUntil.After(time.Unix(0, 0)) {
			row.counterUntil = ns.counterUntil.UTC()
		}
		noShows[id] = row
		return nil
	}); err != nil {
		return nil, nil, fmt.Errorf("read no-shows of show %d: %w", showID, err)
	}
	return boarded, noShows, nil
}

// manifestEntry is ticket i (from 0) of order o.
func manifestEntry(o booking.ManifestOrder, i int, boarded map[string]checkinRow, noShows map[string]noShowRow) (ManifestEntry, error) {
	id, err := ID(o.OrderID, i+1)
	if err != nil {
		return ManifestEntry{}, err
	}
	e := ManifestEntry{TicketID: id, OrderID: o.OrderID, Journey: o.View, Channel: ChannelWeb, PartnerID: o.PartnerID,
		Phone: o.ContactPhone, Status: Expected, position: -1}
	if o.PartnerID != 0 {
		e.Channel = ChannelPartner
	}
	if o.CounterShiftID != "" {
		e.Channel = ChannelCounter
	}
	if i < len(o.Seats) {
		e.Seat = o.Seats[i]
		if i < len(o.Positions) {
			e.position = o.Positions[i]
		}
		for _, p := range o.Passengers {
			if p.Seat == e.Seat {
				e.Passenger, e.Phone, e.Woman = p.Name, p.Phone, p.Woman
			}
		}
	} else {
		e.GAArea = o.GAArea
	}
	if ns, ok := noShows[id]; ok {
		e.Status, e.NoShowAt, e.ReleasedLegs, e.CounterFirstUntil = NoShow, ns.at, ns.legs, ns.counterUntil
	}
	if ci, ok := boarded[id]; ok {
		e.Status, e.BoardedAt, e.Gate = Boarded, ci.at, ci.gate
	}
	return e, nil
}

// MarkNoShow records that ticketID's passenger did not board (decision
// 0442): only a ticket of a paid order, not checked in, once the coach has
// left its boarding stop (the show's start without stops, or sooner as its
// supervisor marked it, decision 0468). In the same
// transaction the seat's legs after that stop go back on sale (the leg
// being driven is gone) and a NoShowMarked event is written; nothing is
// refunded. A second mark answers the first.
func (s *Service) MarkNoShow(ctx context.Context, c Caller, showID int64, ticketID string) (ManifestEntry, error) {
	pool, err := s.gatePool(ctx, c, showID)
	if err != nil {
		return ManifestEntry{}, err
	}
	ticketID = strings.ToLower(strings.TrimSpace(ticketID))
	of, orderID, position, err := Parse(ticketID)
	if err != nil || of != showID {
		return ManifestEntry{}, &fault.Error{Reason: fault.TicketIDInvalid, Field: "ticket_id",
			Message: fmt.Sprintf("ticket_id %q is not a ticket of show %d", ticketID, showID)}
	}
	now := s.clock.Now().UTC().Truncate(time.Microsecond)
	err = pg.InTx(ctx, pool, func(tx pgx.Tx) error {
		e, err := booking.LockForEntry(ctx, tx, orderID, showID)
		if fault.ReasonOf(err) == fault.BookingNotFound || err == nil && position > max(len(e.Seats), e.Quantity) {
			return fault.New(fault.TicketNotFound, "ticket %s not found", ticketID)
		}
		if err != nil {
			return err
		}
		if e.Status != booking.OrderConfirmed {
			return fault.New(fault.NoShowRefused, "ticket %s is not of a paid order (%s)", ticketID, e.Status)
		}
		var boardedAt *time.Time
		if err := tx.QueryRow(ctx, `SELECT (SELECT checked_in_at FROM ticket_checkins WHERE ticket_id = $1)`, ticketID).
			Scan(&boardedAt); err != nil {
			return fmt.Errorf("read check-in of ticket %s: %w", ticketID, err)
		}
		if boardedAt != nil {
			return fault.New(fault.NoShowRefused, "ticket %s boarded at %s", ticketID, boardedAt.UTC().Format(time.RFC3339))
		}
		j, err := booking.EntryJourney(ctx, tx, e)
		if err != nil {
			return err
		}
		leaves, stop := time.Time{}, ""
		if j != nil {
			leaves, stop = j.GetDepartsAt().AsTime(), j.GetFromStopId()
		} else {
			terms, err := catalog.ReadTerms(ctx, tx, showID)
			if err != nil {
				return err
			}
			leaves = terms.StartsAt
		}
		if now.Before(leaves) {
			// Gone sooner, as its supervisor marked it (decision 0468)?
			gone, err := booking.Departed(ctx, tx, showID, e.Journey.From)
			if err != nil {
				return err
			}
			if !gone {
				return fault.New(fault.NoShowRefused, "the coach leaves %s at %s: mark a no-show once it has left", stop, leaves.Format(time.RFC3339))
			}
		}
		seat := ""
		if position <= len(e.Seats) {
			seat = e.Seats[position-1]
		}
		released := 0
		var counterUntil *time.Time
		if seat != "" {
			// The leg the coach is driving is gone; the later ones sell,
			// at the counters first until the coach leaves the next stop
			// (decision 0482).
			next, ok, err := booking.NextDeparture(ctx, tx, showID, e.Journey.From)
			if err != nil {
				return err
			}
			if ok && next.After(now) {
				counterUntil = &next
			}
			if released, err = booking.ReleaseLegs(ctx, tx, showID, orderID, ticketID, seat, e.Journey.From+1, next, now); err != nil {
				return err
			}
			if released == 0 {
				counterUntil = nil
			}
		}
		tag, err := tx.Exec(ctx, `
			INSERT INTO ticket_no_shows (ticket_id, show_id, order_id, seat, stop_id, released_legs, marked_by, marked_at, counter_until)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (ticket_id) DO NOTHING`,
			ticketID, showID, orderID, seat, stop, released, c.UserID, now, counterUntil)
		if err != nil {
			return fmt.Errorf("mark ticket %s a no-show: %w", ticketID, err)
		}
		if tag.RowsAffected() == 0 {
			return nil // marked before; its legs went then
		}
		return outbox.Append(ctx, tx, showID, now, &eventsv1.NoShowMarked{ShowId: showID, TicketId: ticketID,
			OrderId: orderID, Seat: seat, StopId: stop, ReleasedLegs: int32(released), MarkedBy: c.UserID,
			OccurredAt: timestamppb.New(now)})
	})
	if err != nil {
		return ManifestEntry{}, err
	}
	m, err := s.manifest(ctx, pool, showID, "", orderID)
	if err != nil {
		return ManifestEntry{}, err
	}
	for _, e := range m.Entries {
		if e.TicketID == ticketID {
			return e, nil
		}
	}
	return ManifestEntry{}, fault.New(fault.TicketNotFound, "ticket %s not found", ticketID)
}
