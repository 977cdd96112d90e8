package booking

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ExportedOrder is an order as the console's sales export lists it
// (decision 0449): who bought what, through which channel, and what is
// left of the money.
type ExportedOrder struct {
	ID        string
	CreatedAt time.Time
	Status    string
	// Channel is "web", "partner" or "counter", as ShowSales names them.
	Channel   string
	PartnerID int64
	UserID    string
	// The buyer's contact, if given at checkout.
	Phone, Email string
	// From and To are a trip's stops (their places); empty for a show.
	From, To string
	// Seats, or a general-admission area's places as "area ×n".
	Lines         []Line
	Passengers    []string
	AmountMinor   int64
	RefundedMinor int64
	Currency      string
	PaymentID     string
	CancelReason  string
}

const exportSQL = `
	SELECT o.order_id, o.created_at, o.status,
	       CASE WHEN o.partner_id IS NOT NULL THEN 'partner'
	            WHEN o.counter_shift_id IS NOT NULL THEN 'counter' ELSE 'web' END,
	       coalesce(o.partner_id, 0), o.user_id, coalesce(o.contact_phone, ''), coalesce(o.contact_email, ''),
	       coalesce(f.place, ''), coalesce(t.place, ''), o.lines, o.amount_minor, o.refunded_minor, o.currency,
	       coalesce(o.payment_id, ''), o.cancel_reason,
	       coalesce((SELECT array_agg(p.name ORDER BY p.seat) FROM order_passengers p WHERE p.order_id = o.order_id), '{}')
	FROM orders o
	LEFT JOIN trip_stops f ON f.show_id = o.show_id AND f.stop = o.from_stop
	LEFT JOIN trip_stops t ON t.show_id = o.show_id AND t.stop = o.to_stop
	WHERE o.show_id = $1 AND o.order_id COLLATE "C" > $2
	ORDER BY o.order_id COLLATE "C"
	LIMIT $3`

// EachOrderPage reads a show's orders (every status) by order id,
// pageSize at a time, and hands each page to fn before it reads the next:
// a stadium's orders are streamed, never held whole, and no connection is
// held for longer than a page. The caller checks who may ask.
func (s *Service) EachOrderPage(ctx context.Context, showID int64, pageSize int, fn func([]ExportedOrder) error) error {
	pool, err := s.shardOf(ctx, showID)
	if err != nil {
		return err
	}
	after := ""
	for {
		rows, err := pool.Query(ctx, exportSQL, showID, after, pageSize)
		if err != nil {
			return fmt.Errorf("export orders of show %d: %w", showID, err)
		}
		page, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ExportedOrder, error) {
			var o ExportedOrder
			err := r.Scan(&o.ID, &o.CreatedAt, &o.Status, &o.Channel, &o.PartnerID, &o.UserID, &o.Phone, &o.Email,
				&o.From, &o.To, &o.Lines, &o.AmountMinor, &o.RefundedMinor, &o.Currency, &o.PaymentID, &o.CancelReason,
				&o.Passengers)
			o.CreatedAt = o.CreatedAt.UTC()
			return o, err
		})
		if err != nil {
			return fmt.Errorf("export orders of show %d: %w", showID, err)
		}
		if len(page) == 0 {
			return nil
		}
		if err := fn(page); err != nil {
			return err
		}
		if len(page) < pageSize {
			return nil
		}
		after = page[len(page)-1].ID
	}
}
