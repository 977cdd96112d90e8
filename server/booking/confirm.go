package booking

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/types/known/timestamppb"

	eventsv1 "github.com/seatghor/seatghor/gen/seatghor/events/v1"
	"github.com/seatghor/seatghor/server/amount"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/pg"
)

// ErrNotConfirmable means the order can no longer be confirmed: its hold ran
// out or was released, or it is not waiting for payment any more. A payment
// that succeeded for it is refunded.
var ErrNotConfirmable = fault.Sentinel(fault.OrderNotConfirmable, "order can no longer be confirmed")

// ReadOrder reads an order in tx. Writers that follow take the hold row
// before the order row, the lock order the sweeper keeps too.
func ReadOrder(ctx context.Context, tx pgx.Tx, orderID string) (Order, error) {
	return readOrder(ctx, tx, orderID, false)
}

// LockOrder reads an order in tx under its row lock, for a writer of a
// confirmed order's money (a counter's payout): such an order's hold is no
// sweeper's business, so it is locked first, as CancelConfirmed does.
func LockOrder(ctx context.Context, tx pgx.Tx, orderID string) (Order, error) {
	return readOrder(ctx, tx, orderID, true)
}

func readOrder(ctx context.Context, tx pgx.Tx, orderID string, lock bool) (Order, error) {
	sql := `SELECT ` + orderColumns + ` FROM orders WHERE order_id = $1`
	if lock {
		sql += ` FOR UPDATE`
	}
	o, err := scanOrder(tx.QueryRow(ctx, sql, orderID))
	found, err := pg.Found(err)
	if err != nil {
		return o, fmt.Errorf("read order %s: %w", orderID, err)
	}
	if !found {
		return o, notFound("order", orderID)
	}
	return o, nil
}

// ConfirmOrder books the seats of an order and marks it confirmed, inside
// the payment's transaction, so seats, order, ledger journal and outbox event
// commit together. Only the order's own unexpired hold can be booked:
// the hold's expiry is part of the update's condition, so a payment
// that arrives after the hold ran out gets ErrNotConfirmable and its seats,
// perhaps someone else's by now, are not touched. ledgerTxnID names the
// booking journal the caller posts. A free order is confirmed by
// CreateOrder itself, with no payment and no journal: both ids are empty
// then (decision 0070).
func ConfirmOrder(ctx context.Context, tx pgx.Tx, orderID, paymentID, ledgerTxnID string, now time.Time) (Order, error) {
	o, err := ReadOrder(ctx, tx, orderID)
	if err != nil {
		return o, err
	}
	if o.Status != OrderPendingPayment {
		return o, fmt.Errorf("order %s is %s: %w", orderID, o.Status, ErrNotConfirmable)
	}
	h, err := getHold(ctx, tx, o.HoldID)
	if err != nil {
		return o, err
	}
	tag, err := tx.Exec(ctx, `
		UPDATE holds SET status = 'confirmed', updated_at = $2
		WHERE hold_id = $1 AND status = 'ordered' AND expires_at >= $2`, h.ID, now)
	if err != nil {
		return o, fmt.Errorf("confirm hold %s: %w", h.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return o, fmt.Errorf("hold %s is %s: %w", h.ID, h.EffectiveStatus(now), ErrNotConfirmable)
	}
	if len(h.Seats) > 0 {
		tag, err := tx.Exec(ctx, `
			UPDATE seats SET status = 'booked', held_until = NULL, version = version + 1
			WHERE show_id = $1 AND hold_id = $2 AND status = 'held'`, h.ShowID, h.ID)
		if err != nil {
			return o, fmt.Errorf("book seats of hold %s: %w", h.ID, err)
		}
		// An unexpired hold owns its seats, each on every leg of its
		// journey (nobody may take a seat before its held_until); anything
		// else is a bug, and nothing is written.
		if want := int64(len(h.Seats) * h.Journey.Legs()); tag.RowsAffected() != want {
			return o, fmt.Errorf("hold %s owns %d of its %d seat-legs", h.ID, tag.RowsAffected(), want)
		}
	}
	// Whoever changes the order (cancel, expiry) ends the hold first, so
	// owning the hold means the order still waits for payment.
	tag, err = tx.Exec(ctx, `
		UPDATE orders SET status = 'confirmed', payment_id = NULLIF($2, ''), updated_at = $3
		WHERE order_id = $1 AND status = 'pending_payment'`, orderID, paymentID, now)
	if err != nil {
		return o, fmt.Errorf("confirm order %s: %w", orderID, err)
	}
	if tag.RowsAffected() == 0 {
		return o, fmt.Errorf("order %s changed while its hold was confirmed", orderID)
	}
	o.Status, o.PaymentID, o.UpdatedAt = OrderConfirmed, paymentID, now
	price := map[string]int64{}
	for _, l := range o.Lines {
		price[l.Seat] = l.AmountMinor
	}
	var prices []int64
	for _, seat := range h.Seats {
		prices = append(prices, price[seat])
	}
	// The tickets print their passengers (decision 0381) and journey.
	passengers, err := readPassengers(ctx, tx, []string{o.ID})
	if err != nil {
		return o, err
	}
	if err := describeIn(ctx, tx, &o); err != nil {
		return o, err
	}
	return o, appendEvent(ctx, tx, now, &eventsv1.BookingConfirmed{
		ShowId: o.ShowID, OrderId: o.ID, HoldId: o.HoldID, PaymentId: paymentID, UserId: o.UserID,
		Seats: h.Seats, GaArea: h.GAArea, Quantity: int32(h.Quantity), Total: money(o.TotalMinor, o.Currency),
		LedgerTxnId: ledgerTxnID, OccurredAt: timestamppb.New(now), SeatPricesMinor: prices, Journey: o.View,
		Passengers: passengerProtos(passengers[o.ID]), Contact: contactProto(o.Contact),
	})
}

// CancelConfirmed cancels one of the caller's confirmed orders before its
// show starts: the seats (only the legs of its journey: its hold's rows,
// decision 0350) or places go back on sale and the order keeps the
// cancellation fee of the show's policy. The caller refunds the rest
// in the same transaction's records; it returns the order and the fee.
//
// An order with a ticket admitted at the gate is not cancellable (decision
// 0065): admitted asks the check-ins' owner, under the order's lock, which
// a check-in takes too (LockForEntry), so a cancellation and a check-in of
// one order never both succeed.
func CancelConfirmed(ctx context.Context, tx pgx.Tx, userID, orderID string, now time.Time, admitted AdmittedFunc) (Order, error) {
	// A confirmed order's hold is no sweeper's business, so locking the
	// order first deadlocks with nothing; it makes two cancels take turns.
	o, err := readOrder(ctx, tx, orderID, true)
	if err != nil {
		return o, err
	}
	if o.UserID != userID {
		return o, notFound("order", orderID)
	}
	if o.CounterShiftID != "" {
		return o, fault.New(fault.PaidAtCounter, "order %s was paid in cash at a counter; it is refunded there", orderID)
	}
	return cancelConfirmedBy(ctx, tx, o, userID, now, admitted)
}

// CancelAtCounter cancels, for counter staff by, a confirmed order sold
// for cash at a counter (decision 0443), as CancelConfirmed does for its
// buyer: the same fee, before the show starts, never once admitted. The
// caller gives the cash back in the same transaction's records.
func CancelAtCounter(ctx context.Context, tx pgx.Tx, by, orderID string, now time.Time, admitted AdmittedFunc) (Order, error) {
	o, err := readOrder(ctx, tx, orderID, true)
	if err != nil {
		return o, err
	}
	if o.CounterShiftID == "" {
		return o, fault.New(fault.CounterRefundRefused, "order %s was not paid in cash at a counter; it is refunded online", orderID)
	}
	return cancelConfirmedBy(ctx, tx, o, by, now, admitted)
}

// cancelConfirmedBy is CancelConfirmed's work on o, locked in tx, for by.
func cancelConfirmedBy(ctx context.Context, tx pgx.Tx, o Order, by string, now time.Time, admitted AdmittedFunc) (Order, error) {
	orderID := o.ID
	if o.Status != OrderConfirmed {
		return o, fault.New(fault.BookingNotAllowed, "order %s is %s, not confirmed", orderID, o.EffectiveStatus(now))
	}
	terms, err := catalog.ReadTerms(ctx, tx, o.ShowID)
	if err != nil {
		return o, err
	}
	startsAt, feeBps := terms.StartsAt, terms.CancellationFeeBps
	if terms.Cancelled {
		// Its operator's cancellation refunds it in full (decision 0440):
		// the buyer's own would keep a fee.
		return o, fault.New(fault.ShowCancelled, "show %d was cancelled by its operator; order %s is refunded in full", o.ShowID, orderID)
	}
	if !now.Before(startsAt) {
		return o, fault.New(fault.BookingNotAllowed, "show %d has started; order %s can no longer be cancelled", o.ShowID, orderID)
	}
	used, err := admitted(ctx, tx, orderID)
	if err != nil {
		return o, err
	}
	if used {
		return o, fault.New(fault.OrderCheckedIn, "order %s has a ticket checked in at the gate; it can no longer be cancelled", orderID)
	}
	if o.MovedAt != nil {
		feeBps = 0 // bought for a time the operator moved (decision 0477)
	}
	// the fee rounds down, never against the buyer. Totals are
	// bounded (decision 0071); the product is checked all the same.
	fee, err := amount.Mul(o.TotalMinor, feeBps)
	if err != nil {
		return o, fmt.Errorf("cancellation fee of order %s: %w", orderID, err)
	}
	return cancelBooked(ctx, tx, o, fee/10000, cancelled{by: by}, now)
}

// ConfirmAtCounter confirms in tx an order a counter sold for cash in
// shift shiftID (decision 0443), as ConfirmOrder does for a payment: no
// payment, the booking journal ledgerTxnID on the counter's cash account.
// The order is marked as the shift's, so it is refunded at a counter.
func ConfirmAtCounter(ctx context.Context, tx pgx.Tx, orderID, shiftID, ledgerTxnID string, now time.Time) (Order, error) {
	o, err := ConfirmOrder(ctx, tx, orderID, "", ledgerTxnID, now)
	if err != nil {
		return o, err
	}
	if _, err := tx.Exec(ctx, `UPDATE orders SET counter_shift_id = $2 WHERE order_id = $1`, orderID, shiftID); err != nil {
		return o, fmt.Errorf("mark order %s sold by shift %s: %w", orderID, shiftID, err)
	}
	o.CounterShiftID = shiftID
	return o, nil
}

// cancelled says who cancelled an order and why, for its event.
type cancelled struct {
	by, reason string
}

// cancelBooked cancels o, a confirmed order locked in tx, keeping fee: its
// seats (only the legs of its journey: its hold's rows, decision 0350) or
// places go back on sale.
func cancelBooked(ctx context.Context, tx pgx.Tx, o Order, fee int64, c cancelled, now time.Time) (Order, error) {
	h, err := getHold(ctx, tx, o.HoldID)
	if err != nil {
		return o, err
	}
	if h.GAArea != "" {
		// Buckets before hold rows, the lock order of every path.
		if _, err := lockBuckets(ctx, tx, h.ShowID, h.GAArea); err != nil {
			return o, err
		}
	}
	if _, err := tx.Exec(ctx, `
		UPDATE holds SET status = 'released', updated_at = $2 WHERE hold_id = $1 AND status = 'confirmed'`,
		h.ID, now); err != nil {
		return o, fmt.Errorf("release hold %s: %w", h.ID, err)
	}
	if _, err := tx.Exec(ctx, `
		UPDATE seats SET status = 'available', hold_id = NULL, held_until = NULL, version = version + 1
		WHERE show_id = $1 AND hold_id = $2 AND status = 'booked'`, h.ShowID, h.ID); err != nil {
		return o, fmt.Errorf("free seats of order %s: %w", o.ID, err)
	}
	if _, err := tx.Exec(ctx, `
		UPDATE ga_buckets b SET remaining = b.remaining + t.quantity, version = b.version + 1
		FROM hold_ga_takes t
		WHERE t.hold_id = $1 AND b.show_id = t.show_id AND b.area = t.area AND b.bucket = t.bucket`,
		h.ID); err != nil {
		return o, fmt.Errorf("give back GA places of order %s: %w", o.ID, err)
	}
	if _, err := tx.Exec(ctx, `
		UPDATE orders SET status = 'cancelled', cancellation_fee_minor = $2, updated_at = $3 WHERE order_id = $1`,
		o.ID, fee, now); err != nil {
		return o, fmt.Errorf("cancel order %s: %w", o.ID, err)
	}
	o.Status, o.CancellationFeeMinor, o.UpdatedAt = OrderCancelled, fee, now
	if err := describeIn(ctx, tx, &o); err != nil {
		return o, err
	}
	return o, appendEvent(ctx, tx, now, cancelEvent(o, c, true, now))
}

// ShowCancelledReason is the reason of the OrderCancelled events of a show
// its operator cancelled (decision 0440): what the buyers' messages key on.
const ShowCancelledReason = "show_cancelled"

// CancelForShow cancels an order of a show its operator cancelled
// (decision 0440), by the operator by: a paid one with no fee whatever the
// policy, even once the show began or a ticket was admitted (the show will
// not take place), an unpaid one as its buyer would. It says whether the
// order was paid (the caller refunds it in the same transaction). An order
// already ended (cancelled, refunded) or that changed under it is left as
// it is, with done false: the job's next pass looks again.
func CancelForShow(ctx context.Context, tx pgx.Tx, orderID, by string, now time.Time) (o Order, done, paid bool, err error) {
	c := cancelled{by: by, reason: ShowCancelledReason}
	if o, err = ReadOrder(ctx, tx, orderID); err != nil {
		return o, false, false, err
	}
	switch o.Status {
	case OrderConfirmed:
		// A confirmed order's hold is no sweeper's business: the order row
		// is locked first, as CancelConfirmed does.
		if o, err = readOrder(ctx, tx, orderID, true); err != nil || o.Status != OrderConfirmed {
			return o, false, false, err
		}
		o, err = cancelBooked(ctx, tx, o, 0, c, now)
		return o, err == nil, true, err
	case OrderPendingPayment, OrderExpired:
		o, err = cancelUnpaid(ctx, tx, o, c, now)
		if fault.ReasonOf(err) == fault.BookingNotAllowed {
			return o, false, false, nil // paid or ended meanwhile
		}
		return o, err == nil, false, err
	}
	return o, false, false, nil
}

// MarkRefunded records money given back for an order. An order that was
// never booked (its payment came too late) ends refunded.
func MarkRefunded(ctx context.Context, tx pgx.Tx, orderID string, amount int64, now time.Time) error {
	_, err := tx.Exec(ctx, `
		UPDATE orders SET refunded_minor = refunded_minor + $2, updated_at = $3,
		       status = CASE WHEN status = 'expired'
		                       OR (status = 'pending_payment'
		                           AND (SELECT expires_at FROM holds h WHERE h.hold_id = orders.hold_id) < $3)
		                     THEN 'refunded' ELSE status END
		WHERE order_id = $1`, orderID, amount, now)
	if err != nil {
		return fmt.Errorf("record refund of order %s: %w", orderID, err)
	}
	return nil
}

// ExtendForPayment gives an ordered hold its one extension when payment
// starts: it then lasts until now+extension if that is later. A
// second call changes nothing. It returns the hold's expiry, which is the
// order's pay-by time.
func ExtendForPayment(ctx context.Context, tx pgx.Tx, holdID string, extension time.Duration, now time.Time) (time.Time, error) {
	var until time.Time
	err := tx.QueryRow(ctx, `
		UPDATE holds SET expires_at = GREATEST(expires_at, $2::timestamptz + $3 * interval '1 millisecond'),
		       extended = true, updated_at = $2
		WHERE hold_id = $1 AND status = 'ordered' AND expires_at >= $2 AND NOT extended
		RETURNING expires_at`, holdID, now, extension.Milliseconds()).Scan(&until)
	found, err := pg.Found(err)
	if err != nil {
		return until, fmt.Errorf("extend hold %s: %w", holdID, err)
	}
	if !found {
		err = tx.QueryRow(ctx, `SELECT expires_at FROM holds WHERE hold_id = $1`, holdID).Scan(&until)
		if err != nil {
			return until, fmt.Errorf("read hold %s: %w", holdID, err)
		}
		return until.UTC(), nil
	}
	// The seats carry the hold's expiry: it is what CreateHold's condition
	// reads.
	if _, err := tx.Exec(ctx, `
		UPDATE seats SET held_until = $2 WHERE hold_id = $1 AND status = 'held'`, holdID, until); err != nil {
		return until, fmt.Errorf("extend seats of hold %s: %w", holdID, err)
	}
	return until.UTC(), nil
}
