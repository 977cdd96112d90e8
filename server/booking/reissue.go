package booking

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/types/known/timestamppb"

	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	eventsv1 "github.com/seatghor/seatghor/gen/seatghor/events/v1"
	"github.com/seatghor/seatghor/server/pg"
)

// What a ticket printed again reads of its booking: a counter's second
// copy (decision 0443), and every e-ticket of a show whose time moved
// (decision 0465), which must say the new time.

// ConfirmedEvent is what BookingConfirmed said of confirmed order o, from
// its manifest line m: the seats in the hold's order with their prices, the
// passengers, and the journey as the trip runs now (m's view, read from the
// shard's copy of the trip), as ticket.FromBooking reads them.
func ConfirmedEvent(o Order, m ManifestOrder) *eventsv1.BookingConfirmed {
	price := map[string]int64{}
	for _, l := range o.Lines {
		price[l.Seat] = l.AmountMinor
	}
	ev := &eventsv1.BookingConfirmed{ShowId: o.ShowID, OrderId: o.ID, UserId: o.UserID, Seats: m.Seats, GaArea: m.GAArea,
		Quantity: int32(m.Quantity), Total: &commonv1.Money{AmountMinor: o.TotalMinor, Currency: o.Currency},
		OccurredAt: timestamppb.New(o.UpdatedAt), Journey: m.View}
	for _, seat := range m.Seats {
		ev.SeatPricesMinor = append(ev.SeatPricesMinor, price[seat])
	}
	for _, p := range m.Passengers {
		ev.Passengers = append(ev.Passengers, &commonv1.Passenger{Seat: p.Seat, Name: p.Name, Phone: p.Phone, Woman: p.Woman})
	}
	return ev
}

// ConfirmedBookings is ConfirmedEvent of every confirmed order of show
// showID, in order id order, read in one transaction of its shard: the
// manifest's lines and their orders.
func (s *Service) ConfirmedBookings(ctx context.Context, showID int64) ([]*eventsv1.BookingConfirmed, error) {
	pool, err := s.shardOf(ctx, showID)
	if err != nil {
		return nil, err
	}
	var out []*eventsv1.BookingConfirmed
	err = pg.InTx(ctx, pool, func(tx pgx.Tx) error {
		lines, err := ListManifest(ctx, tx, showID, "")
		if err != nil || len(lines) == 0 {
			return err
		}
		ids := make([]string, len(lines))
		for i, m := range lines {
			ids[i] = m.OrderID
		}
		rows, err := tx.Query(ctx, `SELECT `+orderColumns+` FROM orders WHERE order_id = ANY($1)`, ids)
		if err != nil {
			return fmt.Errorf("read the orders of show %d: %w", showID, err)
		}
		orders, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Order, error) { return scanOrder(r) })
		if err != nil {
			return fmt.Errorf("read the orders of show %d: %w", showID, err)
		}
		byID := make(map[string]Order, len(orders))
		for _, o := range orders {
			byID[o.ID] = o
		}
		for _, m := range lines {
			out = append(out, ConfirmedEvent(byID[m.OrderID], m))
		}
		return nil
	})
	return out, err
}
