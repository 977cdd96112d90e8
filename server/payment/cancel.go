package payment

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/amount"
	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/idempotency"
	"github.com/seatghor/seatghor/server/ticket"
)

// CancelOrder cancels one of the caller's orders. An unpaid order just gives
// its seats back. A confirmed one, before its show starts, gives its seats
// back and is refunded through the gateway, less the show's cancellation
// fee: the cancellation, the refund record and the outbox event
// commit together, then the refund is sent with its own key. A free order
// just gives its seats back: no refund, no journal (decision 0070).
func (s *Service) CancelOrder(ctx context.Context, userID, orderID string) (booking.Order, error) {
	pool, err := s.shardOfID(ctx, "order", orderID)
	if err != nil {
		return booking.Order{}, err
	}
	now := s.now()
	type result struct {
		Order    booking.Order `json:"order"`
		RefundID string        `json:"refund_id,omitempty"`
	}
	res, err := idempotency.Do(ctx, pool, codec, idempotency.Options{Now: now, Wait: s.cfg.IdempotencyWait, Target: orderID},
		func(tx pgx.Tx) (result, error) {
			o, err := booking.ReadOrder(ctx, tx, orderID)
			if err != nil {
				return result{}, err
			}
			if o.Status != booking.OrderConfirmed {
				o, err := booking.CancelUnpaid(ctx, tx, userID, orderID, now)
				return result{Order: o}, err
			}
			// Decision 0065: not once a ticket of it was admitted at the
			// gate, which the check-ins' owner answers under the order's lock.
			o, err = booking.CancelConfirmed(ctx, tx, userID, orderID, now, ticket.OrderAdmitted)
			if err != nil {
				return result{}, err
			}
			if o.TotalMinor == 0 {
				// Decision 0070: a free order was confirmed without a payment;
				// its seats are back on sale and there is nothing to refund.
				return result{Order: o}, nil
			}
			p, refund, err := owedBack(ctx, tx, o)
			if err != nil || refund <= 0 {
				return result{Order: o}, err
			}
			id, err := recordBookedRefund(ctx, tx, p, refund, "cancellation", "pending", userID, "", now)
			if err != nil {
				return result{}, err
			}
			return result{Order: o, RefundID: id}, nil
		})
	if err != nil {
		return booking.Order{}, err
	}
	if res.RefundID != "" {
		if err := s.sendRefund(context.WithoutCancel(ctx), pool, res.RefundID); err != nil {
			s.log.WarnContext(ctx, "refund not sent yet; the refund worker retries", "refund", res.RefundID, "err", err)
		}
	}
	return res.Order, nil
}

// owedBack reads the payment of o, a confirmed order just cancelled in tx,
// under its lock, and what is owed back of it: the total less the fee,
// less what refunds of the charge already gave back or are giving back
// (pending or awaiting approval ones too, and failed ones, which are still
// owed and settled by hand: decision 0292), and never more than is left
// captured. A goodwill refund larger than the total less the fee leaves
// nothing more to give.
func owedBack(ctx context.Context, tx pgx.Tx, o booking.Order) (Payment, int64, error) {
	p, err := getPayment(ctx, tx, o.PaymentID, true)
	if err != nil {
		return p, 0, err
	}
	left, err := refundable(ctx, tx, p)
	if err != nil {
		return p, 0, err
	}
	owed, err := amount.Sub(o.TotalMinor, o.CancellationFeeMinor)
	if err != nil {
		return p, 0, fmt.Errorf("refund of order %s: %w", o.ID, err)
	}
	given := p.AmountMinor - left
	return p, min(owed-given, left), nil
}
