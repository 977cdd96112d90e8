package payment

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/audit"
	"github.com/seatghor/seatghor/server/fault"
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
// It waits for a second admin's approval when it would bring the charge's
// refunds (pending ones included) or the admin's own unapproved refunds of
// the last 24 hours to RefundApprovalMinor or more (decision 0060), so one
// person cannot give back a large sum in small pieces; otherwise it is
// sent at once with its own key. A charge is never refunded beyond
// its capture.
func (s *Service) RefundPayment(ctx context.Context, adminID, paymentID string, amount int64, note string) (Refund, error) {
	pool, err := s.shardOfID(ctx, "payment", paymentID)
	if err != nil {
		return Refund{}, err
	}
	now := s.now()
	var r Refund
	// The admin's requests take turns (decision 0060): two at once cannot
	// both see the other's amount missing from the day's total.
	err = s.asRequester(ctx, adminID, func() error {
		var err error
		r, err = idempotency.Do(ctx, pool, codec, idempotency.Options{Now: now, Wait: s.cfg.IdempotencyWait, Target: paymentID},
			func(tx pgx.Tx) (Refund, error) {
				p, err := getPayment(ctx, tx, paymentID, true)
				if err != nil {
					return Refund{}, err
				}
				if p.Status != StatusSucceeded || p.Outcome != "booked" {
					return Refund{}, fault.New(fault.PaymentNotAllowed, "payment %s is not a booked capture", paymentID)
				}
				left, err := refundable(ctx, tx, p)
				if err != nil {
					return Refund{}, err
				}
				if amount > left {
					return Refund{}, &fault.Error{Reason: fault.PaymentInvalid, Field: "amount_minor",
						Message: fmt.Sprintf("at most %d of payment %s is left to refund", left, paymentID)}
				}
				// Both totals are read under locks: the charge's under its
				// payment's row lock, the admin's under asRequester's.
				day, err := s.unapprovedSince(ctx, adminID, now.Add(-24*time.Hour))
				if err != nil {
					return Refund{}, err
				}
				status := "pending"
				if charge := p.AmountMinor - left; charge+amount >= s.cfg.RefundApprovalMinor ||
					day+amount >= s.cfg.RefundApprovalMinor {
					status = "awaiting_approval" // a second person decides
				}
				id, err := recordBookedRefund(ctx, tx, p, amount, "manual", status, adminID, note, now)
				if err != nil {
					return Refund{}, err
				}
				if err := audit.RecordOnShard(ctx, tx, p.ShowID, audit.Entry{At: now,
					Actor: audit.Actor{Kind: audit.ActorAdmin, ID: adminID}, Action: "refund.request", Target: "refund:" + id,
					Detail: map[string]any{"reason": note, "order_id": p.OrderID, "payment_id": paymentID,
						"after": map[string]any{"amount_minor": amount, "status": status}}}); err != nil {
					return Refund{}, err
				}
				r, err := getRefund(ctx, tx, id, false)
				return r.view(), err
			})
		return err
	})
	if err != nil {
		return Refund{}, err
	}
	return s.sendAndRead(ctx, pool, r)
}

// asRequester runs fn holding a lock of its own for requester, in the
// catalog database (the one every shard's work can meet in), until fn's
// shard transaction has committed.
func (s *Service) asRequester(ctx context.Context, requester string, fn func() error) error {
	db := s.router.Catalog()
	if db == nil {
		db = s.router.Shards()[0]
	}
	return pg.InTx(ctx, db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('manual-refunds:' || $1, 0))`,
			requester); err != nil {
			return fmt.Errorf("lock manual refunds of %s: %w", requester, err)
		}
		return fn()
	})
}

// unapprovedSince sums the manual refunds requester asked for since a time
// that went out on their word alone (no second person approved them), over
// every shard; refunds that failed gave nothing back and do not count.
func (s *Service) unapprovedSince(ctx context.Context, requester string, since time.Time) (int64, error) {
	var total int64
	for _, pool := range s.router.Shards() {
		var n int64
		if err := pool.QueryRow(ctx, `
			SELECT coalesce(sum(amount_minor), 0) FROM refunds
			WHERE reason = 'manual' AND requested_by = $1 AND created_at > $2 AND approved_by = ''
			  AND status IN ('pending', 'unknown', 'succeeded')`, requester, since).Scan(&n); err != nil {
			return 0, fmt.Errorf("manual refunds of %s on %s: %w", requester, pool.Name, err)
		}
		total += n
	}
	return total, nil
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
				return Refund{}, fault.New(fault.PaymentNotAllowed, "refund %s is %s, not awaiting approval", refundID, r.Status)
			case r.RequestedBy == adminID:
				return Refund{}, fault.New(fault.PaymentForbidden, "refund %s needs a second person: you asked for it", refundID)
			}
			if _, err := tx.Exec(ctx, `
				UPDATE refunds SET status = 'pending', approved_by = $2, updated_at = $3
				WHERE refund_id = $1 AND status = 'awaiting_approval'`, refundID, adminID, now); err != nil {
				return Refund{}, fmt.Errorf("approve refund %s: %w", refundID, err)
			}
			if err := audit.RecordOnShard(ctx, tx, r.ShowID, audit.Entry{At: now,
				Actor: audit.Actor{Kind: audit.ActorAdmin, ID: adminID}, Action: "refund.approve", Target: "refund:" + refundID,
				Detail: map[string]any{"reason": r.Note, "order_id": r.OrderID, "requested_by": r.RequestedBy,
					"before": map[string]any{"status": "awaiting_approval"},
					"after":  map[string]any{"status": "pending", "amount_minor": r.AmountMinor}}}); err != nil {
				return Refund{}, err
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
			if _, answered := fault.As(err); answered {
				return Refund{}, err
			}
			s.log.WarnContext(ctx, "refund not sent yet; the refund worker retries", "refund", r.ID, "err", err)
		}
	}
	got, err := getRefund(ctx, pool, r.ID, false)
	return got.view(), err
}
