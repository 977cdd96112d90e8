package booking

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	"github.com/seatghor/seatghor/server/catalog"
)

// What a trip's manifest (issue 25 §4, decision 0442) asks of booking: the
// paid orders with who travels and their journeys, and, for a passenger
// who did not board, the seat's later legs back on sale.

// ManifestOrder is a paid order as the trip's manifest lists it.
type ManifestOrder struct {
	Entry
	// PartnerID is the partner that sold it; 0: the platform's own site.
	PartnerID int64
	// CounterShiftID is the counter shift that sold it for cash (decision
	// 0443); empty for the other channels.
	CounterShiftID string
	// ContactPhone is the buyer's checkout phone, for a seat without a
	// passenger's own.
	ContactPhone string
	// View is the journey as people read it (nil without stops).
	View *commonv1.Journey
	// Positions are the Seats' places in the layout (the seats' position),
	// in the same order: what a manifest sorts by.
	Positions []int
}

// ListManifest lists the confirmed orders of show showID on q, its shard,
// with their passengers and journeys, in order id order; orderID keeps
// that one order ("": all).
func ListManifest(ctx context.Context, q catalog.Querier, showID int64, orderID string) ([]ManifestOrder, error) {
	rows, err := q.Query(ctx, `
		SELECT o.order_id, o.user_id, o.amount_minor, o.currency, h.seats, h.ga_area, h.quantity,
		       o.from_stop, o.to_stop, o.boarding_counter, o.dropping_counter, coalesce(o.partner_id, 0),
		       coalesce(o.contact_phone, ''), coalesce(o.counter_shift_id, ''),
		       ARRAY(SELECT s.position FROM unnest(h.seats) WITH ORDINALITY u(seat, n)
		             JOIN seats s ON s.show_id = o.show_id AND s.seat = u.seat AND s.leg = 0 ORDER BY u.n)
		FROM orders o JOIN holds h ON h.hold_id = o.hold_id
		WHERE o.show_id = $1 AND o.status = 'confirmed' AND ($2 = '' OR o.order_id = $2)
		ORDER BY o.order_id`, showID, orderID)
	if err != nil {
		return nil, fmt.Errorf("list the manifest of show %d: %w", showID, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ManifestOrder, error) {
		m := ManifestOrder{Entry: Entry{ShowID: showID, Status: OrderConfirmed}}
		err := r.Scan(&m.OrderID, &m.UserID, &m.TotalMinor, &m.Currency, &m.Seats, &m.GAArea, &m.Quantity,
			&m.Journey.From, &m.Journey.To, &m.Journey.Boarding, &m.Journey.Dropping, &m.PartnerID, &m.ContactPhone, &m.CounterShiftID,
			&m.Positions)
		return m, err
	})
	if err != nil {
		return nil, fmt.Errorf("list the manifest of show %d: %w", showID, err)
	}
	ids := make([]string, len(out))
	for i, m := range out {
		ids[i] = m.OrderID
	}
	ps, err := readPassengers(ctx, q, ids)
	if err != nil {
		return nil, err
	}
	trip, err := readTrip(ctx, q, showID)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Passengers = ps[out[i].OrderID]
		out[i].View = view(trip, out[i].Journey)
	}
	return out, nil
}

// CounterHoldPrefix begins the hold id under which a no-show's resold
// legs are kept for the operator's counters (decision 0482). No hold has
// such an id (holds are "hld_…"), so no order or release ever finds them;
// a counter's hold may take them (holdSeats), anyone's once they lapse.
const CounterHoldPrefix = "counter-first:"

// ReleaseLegs puts back on sale, in tx, the legs from leg on of seat that
// order orderID booked: a no-show's seat for the rest of the trip
// (decision 0442). Until counterUntil (when the coach leaves the next
// stop) they are the counters' first (decision 0482): held under
// CounterHoldPrefix+ticketID, so every other channel sees them held and
// the counter sees them free; a counterUntil not after now puts them on
// general sale at once. It returns how many legs went back; none when the
// order holds no such leg any more.
func ReleaseLegs(ctx context.Context, tx pgx.Tx, showID int64, orderID, ticketID, seat string, leg int, counterUntil, now time.Time) (int, error) {
	status, holdID, until := "available", (*string)(nil), (*time.Time)(nil)
	if counterUntil.After(now) {
		id := CounterHoldPrefix + ticketID
		status, holdID, until = "held", &id, &counterUntil
	}
	tag, err := tx.Exec(ctx, `
		UPDATE seats SET status = $5, hold_id = $6, held_until = $7, version = version + 1
		WHERE show_id = $1 AND seat = $2 AND leg >= $3 AND status = 'booked'
		  AND hold_id = (SELECT hold_id FROM orders WHERE order_id = $4 AND show_id = $1)`,
		showID, seat, leg, orderID, status, holdID, until)
	if err != nil {
		return 0, fmt.Errorf("release seat %s of order %s from leg %d: %w", seat, orderID, leg, err)
	}
	return int(tag.RowsAffected()), nil
}

// NextDeparture is when the coach leaves the stop after stop (its
// timetable's time), and false when stop is the last but one or the
// trip has no such stop, or the coach was marked gone from it already.
func NextDeparture(ctx context.Context, tx pgx.Tx, showID int64, stop int) (time.Time, bool, error) {
	t, err := readTrip(ctx, tx, showID)
	if err != nil {
		return time.Time{}, false, err
	}
	next := stop + 1
	if next >= len(t.Stops)-1 {
		return time.Time{}, false, nil
	}
	gone, err := Departed(ctx, tx, showID, next)
	if err != nil || gone {
		return time.Time{}, false, err
	}
	return t.StartsAt.Add(time.Duration(t.Stops[next].Minutes) * time.Minute), true, nil
}
