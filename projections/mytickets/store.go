// Package mytickets is the "my tickets" read model: every ticket of
// a user, with its show, status, check-in and e-ticket, in the read
// database, keyed and hash-partitioned by user_id. It is built only from
// outbox events (BookingConfirmed, OrderCancelled, RefundIssued,
// TicketCheckedIn, ShowPublished) by Projector, so it can be dropped and
// replayed at any time (`seatghor rebuild mytickets`).
//
// The sink is idempotent and order-free: ticket rows are written once
// (ON CONFLICT DO NOTHING), an order's status only grows (valid < cancelled
// < refunded, set with GREATEST), a check-in is kept once, and a show's
// details follow the newest publication. Duplicates change nothing, and any
// arrival order of one order's events ends in the same rows (decision 0040).
package mytickets

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	"github.com/seatghor/seatghor/server/page"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/ratelimit"
	"github.com/seatghor/seatghor/server/ticket"
)

// Store is the read model in the read database.
type Store struct {
	db *pgxpool.Pool
}

// NewStore returns the store on the read database.
func NewStore(db *pgxpool.Pool) *Store { return &Store{db: db} }

const selectTickets = `
	SELECT t.ticket_id, t.order_id, t.show_id, t.user_id, t.seat, t.ga_area, t.price_minor, t.currency, t.code,
	       t.issued_at, o.status, c.checked_in_at, coalesce(c.gate, ''), coalesce(p.object_key, ''),
	       coalesce(s.kind, 0), coalesce(s.title, ''), coalesce(s.origin, ''), coalesce(s.destination, ''),
	       coalesce(s.venue, ''), s.starts_at, coalesce(s.operator, ''), coalesce(s.time_zone, ''),
	       t.passenger_name, t.passenger_phone, t.passenger_woman, t.journey,
	       coalesce(s.title_bn, ''), coalesce(s.venue_bn, ''), coalesce(s.operator_bn, '')
	FROM my_tickets t
	JOIN my_ticket_orders o ON o.user_id = t.user_id AND o.order_id = t.order_id
	LEFT JOIN my_ticket_checkins c ON c.user_id = t.user_id AND c.ticket_id = t.ticket_id
	LEFT JOIN my_ticket_pdfs p ON p.user_id = t.user_id AND p.order_id = t.order_id
	LEFT JOIN ticket_shows s ON s.show_id = t.show_id`

// statuses maps the stored order status (a TicketStatus number) to the
// ticket's.
var statuses = map[int16]ticket.Status{
	statusValid: ticket.StatusValid, statusCancelled: ticket.StatusCancelled, statusRefunded: ticket.StatusRefunded,
}

func scanTicket(row pgx.Row) (ticket.View, error) {
	var (
		t         ticket.View
		status    int16
		kind      int16
		checkedIn *time.Time
		startsAt  *time.Time
		journey   []byte
	)
	err := row.Scan(&t.ID, &t.OrderID, &t.ShowID, &t.UserID, &t.Seat, &t.GAArea, &t.PriceMinor, &t.Currency, &t.Code,
		&t.IssuedAt, &status, &checkedIn, &t.CheckedInGate, &t.PDFKey, &kind, &t.Title, &t.Origin, &t.Destination,
		&t.Venue, &startsAt, &t.Operator, &t.TimeZone, &t.Passenger.Name, &t.Passenger.Phone, &t.Passenger.Woman, &journey,
		&t.TitleBn, &t.VenueBn, &t.OperatorBn)
	if err != nil {
		return t, err
	}
	if journey != nil {
		t.Journey = &commonv1.Journey{}
		if err := proto.Unmarshal(journey, t.Journey); err != nil {
			return t, fmt.Errorf("decode the journey of ticket %s: %w", t.ID, err)
		}
	}
	t.IssuedAt = t.IssuedAt.UTC()
	t.Status, t.Kind = statuses[status], catalogv1.ShowKind(kind)
	if checkedIn != nil {
		t.CheckedInAt = checkedIn.UTC()
		if t.Status == ticket.StatusValid {
			t.Status = ticket.StatusCheckedIn
		}
	}
	if startsAt != nil {
		t.StartsAt = startsAt.UTC()
	}
	return t, nil
}

// ListTickets returns a page of the user's tickets, newest first (by issue time;
// an order's tickets in seat order), and the next page's token.
func (s *Store) ListTickets(ctx context.Context, h ticket.Holder, f ticket.ListFilter) ([]ticket.View, string, error) {
	if f.PageSize <= 0 {
		f.PageSize = 50
	}
	cur, after, err := page.Decode(f.PageToken)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w", ticket.ErrBadPageToken, err)
	}
	rows, err := s.db.Query(ctx, selectTickets+`
		WHERE `+held(1, 9)+`
		  AND ($2::bigint = 0 OR t.show_id = $2)
		  AND (NOT $3 OR s.starts_at > $4)
		  AND (NOT $5 OR t.issued_at < $6 OR (t.issued_at = $6 AND t.ticket_id > $7))
		ORDER BY t.issued_at DESC, t.ticket_id
		LIMIT $8`,
		h.UserID, f.ShowID, f.UpcomingOnly, f.Now, after, cur.At, cur.ID, f.PageSize+1, h.Phone)
	if err != nil {
		return nil, "", fmt.Errorf("list tickets of %s: %w", h.UserID, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ticket.View, error) { return scanTicket(r) })
	if err != nil {
		return nil, "", fmt.Errorf("list tickets of %s: %w", h.UserID, err)
	}
	next := ""
	if len(out) > f.PageSize {
		out = out[:f.PageSize]
		last := out[len(out)-1]
		next = page.Encode(page.Cursor{At: last.IssuedAt, ID: last.ID})
	}
	return out, next, nil
}

// held is the condition of a holder's tickets, the user and the phone
// being the query's parameters $user and $phone: the user's own, and the
// orders sent to the phone (decision 0437).
func held(user, phone int) string {
	return fmt.Sprintf(`(t.user_id = $%d OR ($%d <> '' AND o.buyer_phone = $%d))`, user, phone, phone)
}

// GetTicket returns one of the holder's tickets, or ticket.ErrNotFound (also
// for another user's ticket: R-10, owner-only reads).
func (s *Store) GetTicket(ctx context.Context, h ticket.Holder, ticketID string) (ticket.View, error) {
	t, err := scanTicket(s.db.QueryRow(ctx, selectTickets+` WHERE `+held(1, 3)+` AND t.ticket_id = $2`, h.UserID, ticketID, h.Phone))
	found, err := pg.Found(err)
	if err != nil {
		return t, fmt.Errorf("read ticket %s: %w", ticketID, err)
	}
	if !found {
		return t, ticket.ErrNotFound
	}
	return t, nil
}

// LookupMissesPerHour bounds the FindOrder calls of one client address
// that find nothing in an hour (decision 0437): a ticket number and a
// number are not guessed one after the other.
const LookupMissesPerHour = 20

// FindOrder returns the tickets of an order whose tickets were sent to
// phone (E.164), in ticket order, for a caller at client (its address). The
// order is named by ref: its id, or its ticket number as a person types it
// (ticket.ParseNumber; of two orders with one number and one phone, the
// latest). An unknown order and another number are the same
// ticket.ErrNotFound. Each miss counts against the address, under its
// lock: past LookupMissesPerHour in an hour every lookup is refused until
// the oldest miss is an hour old.
func (s *Store) FindOrder(ctx context.Context, ref, phone, client string, now time.Time) ([]ticket.View, error) {
	orderID := ref
	var out []ticket.View
	err := pg.InTx(ctx, s.db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('ticket-lookup:' || $1, 0))`, client); err != nil {
			return fmt.Errorf("lock the lookups of %s: %w", client, err)
		}
		var misses int
		var oldest *time.Time
		if err := tx.QueryRow(ctx, `
			SELECT count(*), min(missed_at) FROM ticket_lookup_misses WHERE client = $1 AND missed_at > $2`,
			client, now.Add(-time.Hour)).Scan(&misses, &oldest); err != nil {
			return fmt.Errorf("count the lookups of %s: %w", client, err)
		}
		if misses >= LookupMissesPerHour {
			return ratelimit.Counted("ticket-lookups", LookupMissesPerHour, time.Hour, oldest.Add(time.Hour).Sub(now))
		}
		if number, ok := ticket.ParseNumber(ref); ok {
			err := tx.QueryRow(ctx, `
				SELECT order_id FROM my_ticket_orders WHERE ticket_number = $1 AND buyer_phone = $2
				ORDER BY status_at DESC LIMIT 1`, number, phone).Scan(&orderID)
			if _, err := pg.Found(err); err != nil {
				return fmt.Errorf("find ticket number %s: %w", number, err)
			}
		}
		rows, err := tx.Query(ctx, selectTickets+` WHERE t.order_id = $1 AND o.buyer_phone = $2 ORDER BY t.ticket_id`, orderID, phone)
		if err != nil {
			return fmt.Errorf("find order %s: %w", orderID, err)
		}
		if out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (ticket.View, error) { return scanTicket(r) }); err != nil {
			return fmt.Errorf("find order %s: %w", orderID, err)
		}
		if len(out) > 0 {
			return nil
		}
		// The address's log keeps a day; older rows go as it grows.
		if _, err := tx.Exec(ctx, `DELETE FROM ticket_lookup_misses WHERE client = $1 AND missed_at < $2`, client, now.Add(-24*time.Hour)); err != nil {
			return fmt.Errorf("prune the lookups of %s: %w", client, err)
		}
		_, err = tx.Exec(ctx, `INSERT INTO ticket_lookup_misses (client, missed_at) VALUES ($1, $2)`, client, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, ticket.ErrNotFound
	}
	return out, nil
}

// OrdersNumbered returns the orders whose ticket number is number (as
// stored: ticket.ParseNumber), at most two: more than one is a number too
// few to tell them apart (decision 0476).
func (s *Store) OrdersNumbered(ctx context.Context, number string) ([]string, error) {
	rows, err := s.db.Query(ctx, `SELECT DISTINCT order_id FROM my_ticket_orders WHERE ticket_number = $1 LIMIT 2`, number)
	if err != nil {
		return nil, fmt.Errorf("orders of ticket number %s: %w", number, err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("orders of ticket number %s: %w", number, err)
	}
	return ids, nil
}

// MarkPDF records that the e-ticket of an order is stored under key (the
// eticket projector's sink; idempotent).
func (s *Store) MarkPDF(ctx context.Context, userID, orderID, key string, at time.Time) error {
	_, err := s.db.Exec(ctx, `
		INSERT INTO my_ticket_pdfs (user_id, order_id, object_key, stored_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (user_id, order_id) DO UPDATE SET object_key = excluded.object_key, stored_at = excluded.stored_at`,
		userID, orderID, key, at)
	if err != nil {
		return fmt.Errorf("mark e-ticket of order %s: %w", orderID, err)
	}
	return nil
}

// ResetPDFs forgets every stored e-ticket (the eticket projector's rebuild).
func (s *Store) ResetPDFs(ctx context.Context) error {
	if _, err := s.db.Exec(ctx, `TRUNCATE my_ticket_pdfs`); err != nil {
		return fmt.Errorf("reset e-tickets: %w", err)
	}
	return nil
}
