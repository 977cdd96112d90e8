package payment

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/idempotency"
	"github.com/seatghor/seatghor/server/pg"
)

// Refund is a refund as the API shows it.
type Refund struct {
	ID, PaymentID, OrderID, Reason, Status string
	AmountMinor                            int64
	Currency                               string
	RequestedBy, ApprovedBy, Note          string
	CreatedAt                              time.Time
}

func (r refund) view() Refund {
	return Refund{ID: r.ID, PaymentID: r.PaymentID, OrderID: r.OrderID, Reason: r.Reason, Status: r.Status,
		AmountMinor: r.AmountMinor, Currency: r.Currency, RequestedBy: r.RequestedBy, ApprovedBy: r.ApprovedBy,
		Note: r.Note, CreatedAt: r.CreatedAt.UTC()}
}

// RefundPayment records a manual refund of a booked payment, asked for by
// an admin (R-10: few people hold refund rights; the API checks the role).
// From RefundApprovalMinor up it waits for a second admin's approval;
// below, it is sent at once with its own key. A charge is refunded
// at most once.
func (s *Service) RefundPayment(ctx context.Context, adminID, paymentID string, amount int64, note string) (Refund, error) {
	pool, err := s.shardOfID(ctx, "payment", paymentID)
	if err != nil {
		return Refund{}, err
	}
	now := s.now()
	r, err := idempotency.Do(ctx, pool, codec, idempotency.Options{Now: now, Wait: s.cfg.IdempotencyWait, Target: paymentID},
		func(tx pgx.Tx) (Refund, error) {
			p, err := getPayment(ctx, tx, paymentID, true)
			if err != nil {
				return Refund{}, err
			}
			if p.Status != StatusSucceeded || p.Outcome != "booked" {
				return Refund{}, errorf(KindPrecondition, "payment %s is not a booked capture", paymentID)
			}
			left, err := refundable(ctx, tx, p)
			if err != nil {
				return Refund{}, err
			}
			if amount > left {
				return Refund{}, &Error{Kind: KindInvalid, Field: "amount_minor",
					Message: fmt.Sprintf("at most %d of payment %s is left to refund", left, paymentID)}
			}
			status := "pending"
			if amount >= s.cfg.RefundApprovalMinor {
				status = "awaiting_approval" // a second person decides
			}
			id, err := recordBookedRefund(ctx, tx, p, amount, "manual", status, adminID, note, now)
			if err != nil {
				return Refund{}, err
			}
			r, err := getRefund(ctx, tx, id, false)
			return r.view(), err
		})
	if err != nil {
		return Refund{}, err
	}
	return s.sendAndRead(ctx, pool, r)
}

// ApproveRefund is the second admin's approval of a large manual refund
// then it is sent. The one who asked cannot approve: the database
// refuses it too (refunds_four_eyes).
func (s *Service) ApproveRefund(ctx context.Context, adminID, refundID string) (Refund, error) {
	pool, err := s.shardOfID(ctx, "refund", refundID)
	if err != nil {
		return Refund{}, err
	}
	now := s.now()
	r, err := idempotency.Do(ctx, pool, codec, idempotency.Options{Now: now, Wait: s.cfg.IdempotencyWait, Target: refundID},
		func(tx pgx.Tx) (Refund, error) {
			r, err := getRefund(ctx, tx, refundID, true)
			if err != nil {
				return Refund{}, err
			}
			switch {
			case r.Status != "awaiting_approval":
				return Refund{}, errorf(KindPrecondition, "refund %s is %s, not awaiting approval", refundID, r.Status)
			case r.RequestedBy == adminID:
				return Refund{}, errorf(KindForbidden, "refund %s needs a second person: you asked for it", refundID)
			}
			if _, err := tx.Exec(ctx, `
				UPDATE refunds SET status = 'pending', approved_by = $2, updated_at = $3
				WHERE refund_id = $1 AND status = 'awaiting_approval'`, refundID, adminID, now); err != nil {
				return Refund{}, fmt.Errorf("approve refund %s: %w", refundID, err)
			}
			r.Status, r.ApprovedBy = "pending", adminID
			return r.view(), nil
		})
	if err != nil {
		return Refund{}, err
	}
	return s.sendAndRead(ctx, pool, r)
}

// sendAndRead sends a refund that is ready to go and returns it as it is
// then; an unreachable gateway leaves it to the recovery job.
func (s *Service) sendAndRead(ctx context.Context, pool *pg.Pool, r Refund) (Refund, error) {
	if r.Status == "pending" {
		if err := s.sendRefund(context.WithoutCancel(ctx), pool, r.ID); err != nil {
			var pe *Error
			if errors.As(err, &pe) {
				return Refund{}, err
			}
			s.log.WarnContext(ctx, "refund not sent yet; the refund worker retries", "refund", r.ID, "err", err)
		}
	}
	got, err := getRefund(ctx, pool, r.ID, false)
	return got.view(), err
}
