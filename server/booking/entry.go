package booking

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/pg"
)

// Entry is what the gate needs to know of an order to admit one of its
// tickets: whose it is, where it stands, and its seats or GA places.
type Entry struct {
	OrderID    string
	ShowID     int64
	UserID     string
	Status     OrderStatus
	TotalMinor int64
	Currency   string
	// Seats in layout order, or, for general admission, GAArea and
	// Quantity.
	Seats    []string
	GAArea   string
	Quantity int
	// Passengers are who travel on its seats (bus trips), for the staff
	// of the show who scan them (decision 0381).
	Passengers []Passenger
	// Journey is the stretch of the trip its seats are for (0 → 1 on a
	// show without stops, decision 0350).
	Journey Journey
}

// LockForEntry reads order orderID of show showID in tx for a check-in at
// the gate and locks its row FOR SHARE until tx ends (decision 0065): a
// cancellation locks the same row FOR UPDATE (CancelConfirmed), so the two
// take turns. A check-in that waited for a cancellation reads the order as
// cancelled; a cancellation that waited for a check-in sees its admission.
// An order of another show is not found.
func LockForEntry(ctx context.Context, tx pgx.Tx, orderID string, showID int64) (Entry, error) {
	e := Entry{OrderID: orderID, ShowID: showID}
	err := tx.QueryRow(ctx, `
		SELECT o.status, o.user_id, o.amount_minor, o.currency, h.seats, h.ga_area, h.quantity,
		       o.from_stop, o.to_stop, o.boarding_counter, o.dropping_counter
		FROM orders o JOIN holds h ON h.hold_id = o.hold_id
		WHERE o.order_id = $1 AND o.show_id = $2
		FOR SHARE OF o`, orderID, showID).
		Scan(&e.Status, &e.UserID, &e.TotalMinor, &e.Currency, &e.Seats, &e.GAArea, &e.Quantity,
			&e.Journey.From, &e.Journey.To, &e.Journey.Boarding, &e.Journey.Dropping)
	found, err := pg.Found(err)
	if err != nil {
		return e, fmt.Errorf("read order %s for entry: %w", orderID, err)
	}
	if !found {
		return e, notFound("order", orderID)
	}
	ps, err := readPassengers(ctx, tx, []string{orderID})
	if err != nil {
		return e, err
	}
	e.Passengers = ps[orderID]
	return e, nil
}

// AdmittedFunc tells, in tx, whether any ticket of order orderID has been
// admitted at the gate. Package ticket owns the check-ins and provides it
// (ticket.OrderAdmitted); booking asks rather than reads their table.
type AdmittedFunc func(ctx context.Context, tx pgx.Tx, orderID string) (bool, error)

// Querier runs a query: a pool or a transaction.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// ListEntries returns, in order id order, up to limit orders of show showID
// after order id after ("" from the first) that have or had tickets: the
// confirmed, the cancelled and the refunded ones. It is the gate's
// admission list (ticket.Service.AdmissionList); a cancelled order that was
// never paid is listed too, and its tickets read as cancelled, which a gate
// refuses either way. An index on (show_id, order_id) answers it (shard
// migration 00186).
func ListEntries(ctx context.Context, q Querier, showID int64, after string, limit int) ([]Entry, error) {
	rows, err := q.Query(ctx, `
		SELECT o.order_id, o.status, o.user_id, o.amount_minor, o.currency, h.seats, h.ga_area, h.quantity, o.from_stop
		FROM orders o JOIN holds h ON h.hold_id = o.hold_id
		WHERE o.show_id = $1 AND o.order_id > $2 AND o.status IN ('confirmed', 'cancelled', 'refunded')
		ORDER BY o.order_id
		LIMIT $3`, showID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("list orders of show %d for the gate: %w", showID, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Entry, error) {
		e := Entry{ShowID: showID}
		err := r.Scan(&e.OrderID, &e.Status, &e.UserID, &e.TotalMinor, &e.Currency, &e.Seats, &e.GAArea, &e.Quantity, &e.Journey.From)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("list orders of show %d for the gate: %w", showID, err)
	}
	return out, nil
}

// StopIDs are the ids of show showID's stops in route order, none on a
// show without stops: what a gate's admission list names a ticket's
// boarding stop by (Entry.Journey.From is its place in them).
func StopIDs(ctx context.Context, q catalog.Querier, showID int64) ([]string, error) {
	t, err := readTrip(ctx, q, showID)
	if err != nil {
		return nil, err
	}
	return t.StopIDs(), nil
}

// EntryJourney is the journey of e as people read it, from the trip's stops
// in tx (the check-in's transaction on the show's shard): nil on a show
// without stops. The gate asks it only when it says which stop it stands at
// (decision 0384), so a scan elsewhere reads nothing more.
func EntryJourney(ctx context.Context, tx pgx.Tx, e Entry) (*commonv1.Journey, error) {
	t, err := readTrip(ctx, tx, e.ShowID)
	if err != nil {
		return nil, err
	}
	return view(t, e.Journey), nil
}
