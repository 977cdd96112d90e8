package mytickets

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/seatghor/seatghor/gen/seatghor/events/v1"
	ticketsv1 "github.com/seatghor/seatghor/gen/seatghor/tickets/v1"
	"github.com/seatghor/seatghor/projections"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/ticket"
)

// Name is the projector's name (`seatghor rebuild mytickets`).
const Name = "mytickets"

// Shows looks a show up in the catalog, for a ticket whose ShowPublished
// has not been applied yet (the catalog's outbox is another source, read
// at its own pace).
type Shows interface {
	GetShow(ctx context.Context, showID int64) (catalog.Show, error)
}

// Projector builds the view from the outbox.
type Projector struct {
	store *Store
	shows Shows
	codes *ticket.Codes
}

// NewProjector returns the projector writing to store.
func NewProjector(store *Store, shows Shows, codes *ticket.Codes) *Projector {
	return &Projector{store: store, shows: shows, codes: codes}
}

// Name implements projections.Projector.
func (p *Projector) Name() string { return Name }

// The statuses of an order as stored: TicketStatus numbers, which only grow.
const (
	statusValid     = int16(ticketsv1.TicketStatus_TICKET_STATUS_VALID)
	statusCancelled = int16(ticketsv1.TicketStatus_TICKET_STATUS_CANCELLED)
	statusRefunded  = int16(ticketsv1.TicketStatus_TICKET_STATUS_REFUNDED)
)

// Apply writes a batch in one transaction of the read database.
func (p *Projector) Apply(ctx context.Context, events []projections.Event) error {
	return pg.InTx(ctx, p.store.db, func(tx pgx.Tx) error {
		for _, e := range events {
			if err := p.apply(ctx, tx, e); err != nil {
				return fmt.Errorf("mytickets: event %s (%s): %w", e.EventID, e.Type, err)
			}
		}
		return nil
	})
}

func (p *Projector) apply(ctx context.Context, tx pgx.Tx, e projections.Event) error {
	switch e.Type {
	case "seatghor.events.v1.BookingConfirmed":
		var ev eventsv1.BookingConfirmed
		if err := proto.Unmarshal(e.Payload, &ev); err != nil {
			return err
		}
		return p.confirmed(ctx, tx, &ev)
	case "seatghor.events.v1.OrderCancelled":
		var ev eventsv1.OrderCancelled
		if err := proto.Unmarshal(e.Payload, &ev); err != nil {
			return err
		}
		// An order cancelled before it was paid has no tickets: its status
		// row stays invisible (the list joins tickets to it).
		return setStatus(ctx, tx, ev.GetUserId(), ev.GetOrderId(), ev.GetShowId(), statusCancelled, ev.GetOccurredAt().AsTime())
	case "seatghor.events.v1.OrderRescheduled":
		var ev eventsv1.OrderRescheduled
		if err := proto.Unmarshal(e.Payload, &ev); err != nil {
			return err
		}
		// The show's time follows its ShowPublished; a journey's stop and
		// counter times are the order's, at the new time (decision 0441).
		if ev.GetJourney() == nil {
			return nil
		}
		journey, err := proto.Marshal(ev.GetJourney())
		if err != nil {
			return fmt.Errorf("encode the journey of order %s: %w", ev.GetOrderId(), err)
		}
		_, err = tx.Exec(ctx, `UPDATE my_tickets SET journey = $3 WHERE user_id = $1 AND order_id = $2`,
			ev.GetUserId(), ev.GetOrderId(), journey)
		return err
	case "seatghor.events.v1.RefundIssued":
		var ev eventsv1.RefundIssued
		if err := proto.Unmarshal(e.Payload, &ev); err != nil {
			return err
		}
		switch ev.GetReason() {
		case eventsv1.RefundReason_REFUND_REASON_CANCELLATION, eventsv1.RefundReason_REFUND_REASON_SHOW_CANCELLED:
			return setStatus(ctx, tx, ev.GetUserId(), ev.GetOrderId(), ev.GetShowId(), statusRefunded, ev.GetOccurredAt().AsTime())
		}
		// A late or duplicate payment given back leaves the tickets as they are.
		return nil
	case "seatghor.events.v1.TicketCheckedIn":
		var ev eventsv1.TicketCheckedIn
		if err := proto.Unmarshal(e.Payload, &ev); err != nil {
			return err
		}
		// A scan made with no network and synced later may settle earlier
		// than the admission announced before (supersedes): the earliest
		// stays, whatever order the events come in (docs/gate-offline.md).
		_, err := tx.Exec(ctx, `
			INSERT INTO my_ticket_checkins (user_id, ticket_id, gate, checked_in_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (user_id, ticket_id) DO UPDATE SET gate = excluded.gate, checked_in_at = excluded.checked_in_at
			WHERE excluded.checked_in_at < my_ticket_checkins.checked_in_at`,
			ev.GetUserId(), ev.GetTicketId(), ev.GetGate(), ev.GetOccurredAt().AsTime())
		return err
	case "seatghor.events.v1.ShowPublished":
		var ev eventsv1.ShowPublished
		if err := proto.Unmarshal(e.Payload, &ev); err != nil {
			return err
		}
		s := ev.GetShow()
		return putShow(ctx, tx, showRow{id: ev.GetShowId(), kind: int16(s.GetKind()), title: s.GetTitle(),
			operator: s.GetOperator(), origin: s.GetOrigin(), destination: s.GetDestination(), venue: s.GetVenue(),
			timeZone: s.GetTimeZone(), titleBn: s.GetTitleBn(), venueBn: s.GetVenueBn(), operatorBn: s.GetOperatorBn(),
			startsAt: s.GetStartsAt().AsTime()}, ev.GetOccurredAt().AsTime(), true)
	}
	return nil
}

func (p *Projector) confirmed(ctx context.Context, tx pgx.Tx, ev *eventsv1.BookingConfirmed) error {
	tickets, err := ticket.FromBooking(ev, p.codes)
	if err != nil {
		return err
	}
	// The journey is the order's, so every ticket of it stores the same one
	// (read migration 00006); nil (NULL) on a show without stops.
	var journey []byte
	if j := ev.GetJourney(); j != nil {
		if journey, err = proto.Marshal(j); err != nil {
			return fmt.Errorf("encode the journey of order %s: %w", ev.GetOrderId(), err)
		}
	}
	for _, t := range tickets {
		if _, err := tx.Exec(ctx, `
			INSERT INTO my_tickets (user_id, ticket_id, order_id, show_id, seat, ga_area, price_minor, currency, code, issued_at,
			                        passenger_name, passenger_phone, passenger_woman, journey)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
			ON CONFLICT DO NOTHING`,
			t.UserID, t.ID, t.OrderID, t.ShowID, t.Seat, t.GAArea, t.PriceMinor, t.Currency, t.Code, t.IssuedAt,
			t.Passenger.Name, t.Passenger.Phone, t.Passenger.Woman, journey); err != nil {
			return err
		}
	}
	if err := setStatus(ctx, tx, ev.GetUserId(), ev.GetOrderId(), ev.GetShowId(), statusValid, ev.GetOccurredAt().AsTime()); err != nil {
		return err
	}
	// The number the tickets went to finds them (decision 0437); set apart
	// from the status, which an earlier cancellation may already hold.
	if phone := SentTo(ev); phone != "" {
		if _, err := tx.Exec(ctx, `UPDATE my_ticket_orders SET buyer_phone = $3 WHERE user_id = $1 AND order_id = $2`,
			ev.GetUserId(), ev.GetOrderId(), phone); err != nil {
			return err
		}
	}
	// The show's details normally come from the catalog's ShowPublished;
	// when that has not been applied yet, look the show up once.
	var known bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM ticket_shows WHERE show_id = $1)`, ev.GetShowId()).
		Scan(&known); err != nil || known {
		return err
	}
	s, err := p.shows.GetShow(ctx, ev.GetShowId())
	if errors.Is(err, catalog.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("look up show %d: %w", ev.GetShowId(), err)
	}
	// The lookup's time is older than any later publication, so a
	// ShowPublished that lands after still wins.
	return putShow(ctx, tx, showRow{id: s.ID, kind: int16(s.Kind), title: s.Title, operator: s.Operator,
		origin: s.Origin, destination: s.Destination, venue: s.Venue, timeZone: s.TimeZone,
		titleBn: s.TitleBn, venueBn: s.VenueBn, operatorBn: s.OperatorBn, startsAt: s.StartsAt},
		s.CreatedAt, false)
}

// SentTo is the number a booking's SMS goes to: its contact phone, else its
// first passenger's (E.164; empty: none).
func SentTo(ev *eventsv1.BookingConfirmed) string {
	if p := ev.GetContact().GetPhone(); p != "" {
		return p
	}
	if ps := ev.GetPassengers(); len(ps) > 0 {
		return ps[0].GetPhone()
	}
	return ""
}

// setStatus raises an order's status; it never lowers it.
func setStatus(ctx context.Context, tx pgx.Tx, userID, orderID string, showID int64, status int16, at time.Time) error {
	_, err := tx.Exec(ctx, `
		INSERT INTO my_ticket_orders AS o (user_id, order_id, show_id, status, status_at) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (user_id, order_id) DO UPDATE
		SET status = excluded.status, status_at = excluded.status_at
		WHERE o.status < excluded.status`, userID, orderID, showID, status, at)
	return err
}

// showRow is what a ticket shows about its show.
type showRow struct {
	id                                                    int64
	kind                                                  int16
	title, operator, origin, destination, venue, timeZone string
	// The names in Bengali script (decision 0385).
	titleBn, venueBn, operatorBn string
	startsAt                     time.Time
}

// putShow stores a show's details unless newer ones are there.
func putShow(ctx context.Context, tx pgx.Tx, s showRow, at time.Time, replace bool) error {
	sql := `
		INSERT INTO ticket_shows AS s (show_id, kind, title, operator, origin, destination, venue, time_zone,
		                               starts_at, published_at, title_bn, venue_bn, operator_bn)
		VALUES ($1, $2, $3, $4, $5, $6, $7, coalesce(nullif($8, ''), 'Asia/Dhaka'), $9, $10, $11, $12, $13)`
	if replace {
		sql += `
		ON CONFLICT (show_id) DO UPDATE
		SET kind = excluded.kind, title = excluded.title, operator = excluded.operator, origin = excluded.origin,
		    destination = excluded.destination, venue = excluded.venue, time_zone = excluded.time_zone,
		    starts_at = excluded.starts_at, published_at = excluded.published_at,
		    title_bn = excluded.title_bn, venue_bn = excluded.venue_bn, operator_bn = excluded.operator_bn
		WHERE s.published_at <= excluded.published_at`
	} else {
		sql += ` ON CONFLICT DO NOTHING`
	}
	_, err := tx.Exec(ctx, sql, s.id, s.kind, s.title, s.operator, s.origin, s.destination, s.venue, s.timeZone,
		s.startsAt, at, s.titleBn, s.venueBn, s.operatorBn)
	return err
}

// Reset drops the view (not the e-ticket marks: the eticket projector owns
// those).
func (p *Projector) Reset(ctx context.Context) error {
	if _, err := p.store.db.Exec(ctx, `TRUNCATE my_tickets, my_ticket_orders, my_ticket_checkins, ticket_shows`); err != nil {
		return fmt.Errorf("reset my tickets: %w", err)
	}
	return nil
}
