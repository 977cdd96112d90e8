package booking

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/page"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/shard"
)

const orderColumns = `order_id, hold_id, show_id, user_id, status, lines, amount_minor, currency,
	created_at, updated_at, (SELECT expires_at FROM holds WHERE holds.hold_id = orders.hold_id),
	coalesce(payment_id, ''), refunded_minor, cancellation_fee_minor, coalesce(partner_id, 0),
	from_stop, to_stop, boarding_counter, dropping_counter,
	coalesce(contact_phone, ''), coalesce(contact_email, ''), coalesce(contact_lang, ''), coalesce(counter_shift_id, ''),
	moved_at`

func orderDest(o *Order) []any {
	return []any{&o.ID, &o.HoldID, &o.ShowID, &o.UserID, &o.Status, &o.Lines, &o.TotalMinor, &o.Currency,
		&o.CreatedAt, &o.UpdatedAt, &o.PayBy, &o.PaymentID, &o.RefundedMinor, &o.CancellationFeeMinor, &o.PartnerID,
		&o.Journey.From, &o.Journey.To, &o.Journey.Boarding, &o.Journey.Dropping,
		&o.Contact.Phone, &o.Contact.Email, &o.Contact.Language, &o.CounterShiftID, &o.MovedAt}
}

func scanOrder(row pgx.Row) (Order, error) {
	var o Order
	err := row.Scan(orderDest(&o)...)
	o.CreatedAt, o.UpdatedAt, o.PayBy = o.CreatedAt.UTC(), o.UpdatedAt.UTC(), o.PayBy.UTC()
	return o, err
}

// CreateOrder makes an order from one of the caller's live holds. Only the
// owner's unexpired, unordered hold qualifies, and the check is the
// condition of the update itself. An order whose total is zero is
// confirmed at once (decision 0070). passengers name who travels on each
// seat (bus trips): all seats or none, required on a trip with stops
// (decision 0380); stored with the order in its transaction.
// Passengers, when given, must match the
// hold's declaration: each seat for women travelled by a passenger
// declared a woman (decision 0371).
func (s *Service) CreateOrder(ctx context.Context, userID, holdID string, passengers ...Passenger) (Order, error) {
	return s.Checkout(ctx, userID, holdID, Checkout{Passengers: passengers})
}

// Checkout is what a buyer gives with an order beyond the hold.
type Checkout struct {
	// Passengers: see CreateOrder.
	Passengers []Passenger
	// Contact is where the buyer hears about the order (optional; decision
	// 0430): checked and stored with it, carried in its events.
	Contact Contact
	// Guest: the buyer has no account (decision 0437), so the tickets are
	// found by the contact phone, which is then required.
	Guest bool
}

// Checkout is CreateOrder with everything the buyer gives at checkout.
func (s *Service) Checkout(ctx context.Context, userID, holdID string, co Checkout) (Order, error) {
	pool, err := s.shardOfID(ctx, "hold", holdID)
	if err != nil {
		return Order{}, err
	}
	cleaned, err := cleanPassengers(co.Passengers)
	if err != nil {
		return Order{}, err
	}
	contact, err := cleanContact(co.Contact)
	if err != nil {
		return Order{}, err
	}
	if co.Guest && contact.Phone == "" {
		return Order{}, fault.OnField(fault.BookingInvalid, "contact.phone",
			"a guest's tickets are sent to and found by a mobile number: give one")
	}
	now := s.now()
	o, err := idempotencyDo(ctx, s, pool, holdID, now, func(tx pgx.Tx) (Order, error) {
		tag, err := tx.Exec(ctx, `
			UPDATE holds SET status = 'ordered', updated_at = $3
			WHERE hold_id = $1 AND user_id = $2 AND status = 'active' AND expires_at >= $3
			  -- Not on a show its operator cancelled (decision 0440).
			  AND NOT EXISTS (SELECT FROM shows s WHERE s.show_id = holds.show_id AND s.cancelled_at IS NOT NULL)`,
			holdID, userID, now)
		if err != nil {
			return Order{}, fmt.Errorf("order hold %s: %w", holdID, err)
		}
		h, err := getHold(ctx, tx, holdID)
		if err != nil {
			return Order{}, err
		}
		if tag.RowsAffected() == 0 {
			return Order{}, whyNotOrderable(ctx, tx, h, userID, now)
		}
		required, err := passengersRequired(ctx, tx, h.ShowID)
		if err != nil {
			return Order{}, err
		}
		if err := checkWomenPassengers(ctx, tx, h, cleaned); err != nil {
			return Order{}, err
		}
		ps, err := matchPassengers(h, cleaned, required)
		if err != nil {
			return Order{}, err
		}
		lines, err := orderLines(ctx, tx, h)
		if err != nil {
			return Order{}, err
		}
		o := Order{
			ID: shard.NewID("ord", h.ShowID), HoldID: h.ID, ShowID: h.ShowID, UserID: userID,
			Status: OrderPendingPayment, Lines: lines, TotalMinor: h.AmountMinor, Currency: h.Currency,
			PayBy: h.ExpiresAt, CreatedAt: now, UpdatedAt: now, PartnerID: h.PartnerID, Journey: h.Journey,
			Contact: contact,
		}
		if h.GAArea == "" {
			trip, err := readTrip(ctx, tx, h.ShowID)
			if err != nil {
				return Order{}, err
			}
			o.View = view(trip, o.Journey)
		}
		linesJSON, err := json.Marshal(o.Lines)
		if err != nil {
			return Order{}, fmt.Errorf("encode order lines: %w", err)
		}
		if _, err := tx.Exec(ctx, `
			INSERT INTO orders (order_id, hold_id, show_id, user_id, status, lines, amount_minor, currency,
			                    created_at, updated_at, partner_id, from_stop, to_stop, boarding_counter, dropping_counter,
			                    contact_phone, contact_email, contact_lang)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9, nullif($10, 0), $11, $12, $13, $14,
			        nullif($15, ''), nullif($16, ''), nullif($17, ''))`,
			o.ID, o.HoldID, o.ShowID, o.UserID, o.Status, linesJSON, o.TotalMinor, o.Currency, now, o.PartnerID,
			o.Journey.From, o.Journey.To, o.Journey.Boarding, o.Journey.Dropping,
			contact.Phone, contact.Email, contact.Language); err != nil {
			return Order{}, fmt.Errorf("insert order: %w", err)
		}
		if err := insertPassengers(ctx, tx, o, ps); err != nil {
			return Order{}, err
		}
		o.Passengers = ps
		if err := appendEvent(ctx, tx, now, orderEvent(o, OrderPendingPayment, now)); err != nil {
			return Order{}, err
		}
		if o.TotalMinor > 0 {
			return o, nil
		}
		// Decision 0070: an order with nothing to pay (a free show, or free
		// seats of a mixed one) is confirmed here, in this transaction: seats
		// booked, order confirmed and BookingConfirmed in the outbox, so its
		// tickets are issued like any other. No gateway is asked and
		// no journal is posted: no money moves, and the ledger refuses zero
		// lines.
		confirmed, err := ConfirmOrder(ctx, tx, o.ID, "", "", now)
		confirmed.Passengers = ps
		return confirmed, err
	})
	if err != nil {
		return Order{}, err
	}
	return o, s.describeOrder(ctx, &o)
}

func whyNotOrderable(ctx context.Context, tx pgx.Tx, h Hold, userID string, now time.Time) error {
	var cancelled bool
	if err := tx.QueryRow(ctx, `SELECT cancelled_at IS NOT NULL FROM shows WHERE show_id = $1`, h.ShowID).
		Scan(&cancelled); err != nil {
		return fmt.Errorf("is show %d cancelled: %w", h.ShowID, err)
	}
	switch {
	case h.UserID != userID:
		return notFound("hold", h.ID)
	case cancelled:
		return fault.New(fault.ShowCancelled, "show %d was cancelled by its operator", h.ShowID)
	case h.OrderID != "":
		return fault.New(fault.BookingNotAllowed, "hold %s already has order %s", h.ID, h.OrderID)
	case h.EffectiveStatus(now) == HoldExpired:
		return fault.New(fault.BookingNotAllowed, "hold %s expired at %s", h.ID, h.ExpiresAt.Format(time.RFC3339))
	default:
		return fault.New(fault.BookingNotAllowed, "hold %s is %s", h.ID, h.EffectiveStatus(now))
	}
}

// orderLines are the priced lines of hold h: one per seat whatever its
// legs, at the price the hold was taken at (seatPriceSQL for its journey:
// a show's fares and sections never change), or one for its GA places.
func orderLines(ctx context.Context, tx pgx.Tx, h Hold) ([]Line, error) {
	if h.GAArea != "" {
		return []Line{{GAArea: h.GAArea, Quantity: h.Quantity, AmountMinor: h.AmountMinor}}, nil
	}
	rows, err := tx.Query(ctx, `
		SELECT s.seat, `+seatPriceSQL("s", "(SELECT count(*) FROM trip_stops WHERE show_id = $1)", "$3::int", "$4::int")+`
		FROM seats s WHERE s.show_id = $1 AND s.seat = ANY($2) AND s.leg = $3 ORDER BY s.position`,
		h.ShowID, h.Seats, h.Journey.From, h.Journey.To)
	if err != nil {
		return nil, fmt.Errorf("price seats of hold %s: %w", h.ID, err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Line, error) {
		l := Line{Quantity: 1}
		return l, r.Scan(&l.Seat, &l.AmountMinor)
	})
}

// GetOrder returns an order the caller may see.
func (s *Service) GetOrder(ctx context.Context, caller Caller, orderID string) (Order, error) {
	pool, err := s.shardOfID(ctx, "order", orderID)
	if err != nil {
		return Order{}, err
	}
	var o Order
	err = pg.InTx(ctx, pool, func(tx pgx.Tx) error {
		o, err = scanOrder(tx.QueryRow(ctx, `SELECT `+orderColumns+` FROM orders WHERE order_id = $1`, orderID))
		found, err := pg.Found(err)
		if err != nil {
			return fmt.Errorf("read order %s: %w", orderID, err)
		}
		if !found {
			return notFound("order", orderID)
		}
		show, err := loadShow(ctx, tx, o.ShowID)
		if err != nil {
			return err
		}
		ok, err := s.mayRead(ctx, caller, o.UserID, show.OrganizationID)
		if err != nil {
			return err
		}
		if !ok {
			return notFound("order", orderID)
		}
		// Whoever may read the order may read its passengers (decision
		// 0381): the buyer, the organisation's managers, admins.
		orders := []Order{o}
		if err := withPassengers(ctx, tx, orders); err != nil {
			return err
		}
		o = orders[0]
		return nil
	})
	if err != nil {
		return Order{}, err
	}
	o.Status = o.EffectiveStatus(s.now())
	return o, s.describeOrder(ctx, &o)
}

// CancelUnpaid cancels one of the caller's unpaid orders in tx and gives
// its seats back. A confirmed order is cancelled with CancelConfirmed and a
// refund (package payment decides which).
func CancelUnpaid(ctx context.Context, tx pgx.Tx, userID, orderID string, now time.Time) (Order, error) {
	o, err := ReadOrder(ctx, tx, orderID)
	if err != nil {
		return Order{}, err
	}
	if o.UserID != userID {
		return Order{}, notFound("order", orderID)
	}
	return cancelUnpaid(ctx, tx, o, cancelled{by: userID}, now)
}

// cancelUnpaid cancels o, an order not paid, and gives its seats back.
func cancelUnpaid(ctx context.Context, tx pgx.Tx, o Order, c cancelled, now time.Time) (Order, error) {
	h, err := getHold(ctx, tx, o.HoldID)
	if err != nil {
		return Order{}, err
	}
	// The hold (buckets first) is ended before the order row is changed:
	// the lock order every path keeps.
	if _, err := endHold(ctx, tx, h, HoldReleased, now); err != nil {
		return Order{}, err
	}
	if err := describeIn(ctx, tx, &o); err != nil {
		return Order{}, err
	}
	tag, err := tx.Exec(ctx, `
		UPDATE orders SET status = 'cancelled', updated_at = $2
		WHERE order_id = $1 AND status IN ('pending_payment', 'expired')`, o.ID, now)
	if err != nil {
		return Order{}, fmt.Errorf("cancel order %s: %w", o.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return Order{}, fault.New(fault.BookingNotAllowed, "order %s is already %s", o.ID, o.Status)
	}
	o.Status, o.UpdatedAt = OrderCancelled, now
	return o, appendEvent(ctx, tx, now, cancelEvent(o, c, false, now))
}

// ListMyOrders pages through the caller's orders, newest first. Orders live
// on the shards of their shows, so this reads every shard and merges; the
// "my tickets" read model is the scalable path for buyers' lists.
func (s *Service) ListMyOrders(ctx context.Context, userID string, pageSize int, pageToken string) ([]Order, string, error) {
	if pageSize <= 0 {
		pageSize = 50
	}
	after, ok, err := page.Decode(pageToken)
	if err != nil {
		return nil, "", &fault.Error{Reason: fault.BookingInvalid, Field: "page_token", Message: page.ErrBadToken.Message}
	}
	if !ok {
		// Past every order: the first page.
		after.At = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	var all []Order
	for _, pool := range s.router.Shards() {
		rows, err := pool.Query(ctx, `
			SELECT `+orderColumns+` FROM orders
			WHERE user_id = $1 AND (created_at, order_id) < ($2, $3)
			ORDER BY created_at DESC, order_id DESC LIMIT $4`,
			userID, after.At, after.ID, pageSize+1)
		if err != nil {
			return nil, "", fmt.Errorf("list orders on %s: %w", pool.Name, err)
		}
		orders, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Order, error) { return scanOrder(r) })
		if err != nil {
			return nil, "", fmt.Errorf("list orders on %s: %w", pool.Name, err)
		}
		// The buyer's own orders: their passengers are theirs (decision 0381).
		if err := withPassengers(ctx, pool, orders); err != nil {
			return nil, "", fmt.Errorf("list orders on %s: %w", pool.Name, err)
		}
		all = append(all, orders...)
	}
	slices.SortFunc(all, func(a, b Order) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	now := s.now()
	for i := range all {
		all[i].Status = all[i].EffectiveStatus(now)
		if err := s.describeOrder(ctx, &all[i]); err != nil {
			return nil, "", err
		}
	}
	if len(all) <= pageSize {
		return all, "", nil
	}
	last := all[pageSize-1]
	return all[:pageSize], page.Encode(page.Cursor{At: last.CreatedAt, ID: last.ID}), nil
}

// describeIn fills in o's journey as buyers read it, reading its show's
// stops in tx (the paths that end or confirm an order, whose events name
// the journey).
func describeIn(ctx context.Context, tx pgx.Tx, o *Order) error {
	t, err := readTrip(ctx, tx, o.ShowID)
	if err != nil {
		return err
	}
	o.View = view(t, o.Journey)
	return nil
}
