package payment

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/gateway"
	"github.com/seatghor/seatghor/server/ledger"
	"github.com/seatghor/seatghor/server/pg"
)

// Apply applies the gateway's verified view of a charge to its attempt: the
// one place every source of truth goes through (the charge answer, webhook
// events, the recovery job, reconciliation). Every change is conditional, so
// applying the same view twice, or an older view after a newer one, changes
// nothing.
func (s *Service) Apply(ctx context.Context, charge gateway.Charge) error {
	pool, err := s.shardOfID(ctx, "payment", charge.Reference)
	if err != nil {
		return err
	}
	switch charge.Status {
	case gateway.StatusPending:
		return s.pending(ctx, pool, charge)
	case gateway.StatusFailed:
		return s.fail(ctx, pool, charge.Reference, charge.IdempotencyKey, failureReason(charge.FailureCode), failureMessage(charge.FailureCode))
	case gateway.StatusSucceeded:
		refundID, err := s.captured(ctx, pool, charge)
		if err != nil || refundID == "" {
			return err
		}
		// The refund is recorded; sending it now saves a worker round. If
		// this fails, the refund worker sends it later with the same key.
		if err := s.sendRefund(ctx, pool, refundID); err != nil {
			s.log.WarnContext(ctx, "refund not sent yet; the refund worker retries", "refund", refundID, "err", err)
		}
		return nil
	default:
		return fmt.Errorf("charge %s: unknown status %q", charge.ID, charge.Status)
	}
}

// pending records the gateway's id (and hosted page) of a charge waiting for
// the buyer.
func (s *Service) pending(ctx context.Context, pool *pg.Pool, charge gateway.Charge) error {
	return pg.InTx(ctx, pool, func(tx pgx.Tx) error {
		p, err := getPayment(ctx, tx, charge.Reference, true)
		if err != nil || charge.IdempotencyKey != p.GatewayKey {
			return err
		}
		now := s.now()
		tag, err := tx.Exec(ctx, `
			UPDATE payments SET status = 'pending', gateway_charge_id = $2, redirect_url = $3, updated_at = $4
			WHERE payment_id = $1 AND status IN ('pending', 'unknown') AND gateway_charge_id = ''`,
			p.ID, charge.ID, charge.RedirectURL, now)
		if err != nil {
			return fmt.Errorf("record pending charge of %s: %w", p.ID, err)
		}
		if tag.RowsAffected() == 0 || p.Status == StatusPending {
			return nil
		}
		p.Status = StatusPending
		return appendStateChanged(ctx, tx, p, StatusUnknown, now)
	})
}

// fail closes an open attempt as FAILED; the buyer may try again while the
// hold lasts. key is the idempotency key of the charge that failed: only a
// charge sent with the attempt's own key decides it (as in pending and
// captured), so a failure of some other charge naming the attempt as its
// reference never closes an attempt whose own charge may still capture.
func (s *Service) fail(ctx context.Context, pool *pg.Pool, paymentID, key, reason, message string) error {
	return pg.InTx(ctx, pool, func(tx pgx.Tx) error {
		p, err := getPayment(ctx, tx, paymentID, true)
		if err != nil || key != p.GatewayKey {
			return err
		}
		now := s.now()
		tag, err := tx.Exec(ctx, `
			UPDATE payments SET status = 'failed', failure_reason = $2, failure_message = $3, updated_at = $4
			WHERE payment_id = $1 AND status IN ('pending', 'unknown')`, paymentID, reason, message, now)
		if err != nil {
			return fmt.Errorf("fail payment %s: %w", paymentID, err)
		}
		if tag.RowsAffected() == 0 {
			return nil
		}
		from := p.Status
		p.Status, p.FailureReason = StatusFailed, reason
		return appendStateChanged(ctx, tx, p, from, now)
	})
}

// markUnknown records that a charge request got no answer.
func (s *Service) markUnknown(ctx context.Context, pool *pg.Pool, paymentID string) error {
	return pg.InTx(ctx, pool, func(tx pgx.Tx) error {
		now := s.now()
		p, err := scanPayment(tx.QueryRow(ctx, `
			UPDATE payments SET status = 'unknown', updated_at = $2
			WHERE payment_id = $1 AND status = 'pending' AND gateway_charge_id = ''
			RETURNING `+paymentColumns, paymentID, now))
		found, err := pg.Found(err)
		if err != nil {
			return fmt.Errorf("mark payment %s unknown: %w", paymentID, err)
		}
		if !found {
			return nil
		}
		return appendStateChanged(ctx, tx, p, StatusPending, now)
	})
}

// captured applies a capture. The first capture of an open attempt confirms
// the order in the same transaction as the state change, the ledger
// journals and the outbox event; when the order can no longer be
// confirmed (the hold ran out, R-3.7), or the money was captured on an
// attempt already closed or a second time, a refund with its own key
// is recorded instead. It returns the id of the refund recorded, if any.
func (s *Service) captured(ctx context.Context, pool *pg.Pool, charge gateway.Charge) (refundID string, err error) {
	err = pg.InTx(ctx, pool, func(tx pgx.Tx) error {
		refundID = ""
		p, err := getPayment(ctx, tx, charge.Reference, true)
		if err != nil {
			return err
		}
		now := s.now()
		terms, err := catalog.ReadTerms(ctx, tx, p.ShowID)
		if err != nil {
			return err
		}
		commissionBps := terms.CommissionBps
		ours := charge.IdempotencyKey == p.GatewayKey
		if ours && p.open() && (charge.AmountMinor != p.AmountMinor || charge.Currency != p.Currency) {
			// The gateway captured another amount than we asked: nothing is
			// booked on a wrong amount, and a person looks at the gateway
			// . The attempt is closed, so the buyer may pay again;
			// the capture is given back whole at once below (decision 0061),
			// never left waiting for that person.
			s.metrics.mismatch("amount_differs")
			if _, err := tx.Exec(ctx, `
				UPDATE payments SET status = 'reconciliation_required', gateway_charge_id = $2, updated_at = $3
				WHERE payment_id = $1 AND status IN ('pending', 'unknown')`, p.ID, charge.ID, now); err != nil {
				return fmt.Errorf("record capture of another amount on %s: %w", p.ID, err)
			}
			from := p.Status
			p.Status, p.GatewayChargeID = StatusReconciliationRequired, charge.ID
			if err := appendStateChanged(ctx, tx, p, from, now); err != nil {
				return err
			}
		}
		if ours && p.open() {
			return s.firstCapture(ctx, tx, p, charge, commissionBps, now, &refundID)
		}
		if ours && p.GatewayChargeID == charge.ID && p.Status == StatusSucceeded {
			return nil // a duplicate of what is applied already
		}
		// Money we did not expect: a capture on an attempt already closed
		// (FAILED, or waiting for a person, as after a capture of another
		// amount), or a second capture. Refunding it is recorded once per
		// charge, so a redelivered capture changes nothing.
		reason := "failed_attempt_capture"
		if p.Status == StatusSucceeded || !ours {
			reason = "duplicate_capture"
		}
		id, created, err := recordRefund(ctx, tx, p, charge, charge.AmountMinor, reason, now)
		if err != nil || !created {
			return err
		}
		refundID = id
		s.metrics.mismatch(reason)
		return postCapture(ctx, tx, p, charge, "capture:"+charge.ID, "capture without a booking: owed back to the buyer", now)
	})
	return refundID, err
}

func (s *Service) firstCapture(ctx context.Context, tx pgx.Tx, p Payment, charge gateway.Charge, commissionBps int64, now time.Time, refundID *string) error {
	if _, err := tx.Exec(ctx, `
		UPDATE payments SET status = 'succeeded', gateway_charge_id = $2, fee_minor = $3, captured_at = $4,
		       updated_at = $5, redirect_url = ''
		WHERE payment_id = $1 AND status IN ('pending', 'unknown')`,
		p.ID, charge.ID, charge.FeeMinor, charge.CapturedAt, now); err != nil {
		return fmt.Errorf("record capture of %s: %w", p.ID, err)
	}
	from := p.Status
	p.Status, p.GatewayChargeID = StatusSucceeded, charge.ID
	if err := appendStateChanged(ctx, tx, p, from, now); err != nil {
		return err
	}
	if charge.FeeMinor > 0 {
		if _, err := ledger.Post(ctx, tx, ledger.FeeJournal("fee:"+charge.ID, p.ID, p.ShowID, p.Currency, charge.FeeMinor), now); err != nil {
			return err
		}
	}
	bookingTxn := "booking:" + p.OrderID
	_, err := booking.ConfirmOrder(ctx, tx, p.OrderID, p.ID, bookingTxn, now)
	switch {
	case err == nil:
		if _, err := tx.Exec(ctx, `UPDATE payments SET outcome = 'booked' WHERE payment_id = $1`, p.ID); err != nil {
			return fmt.Errorf("record outcome of %s: %w", p.ID, err)
		}
		_, err := ledger.Post(ctx, tx, ledger.BookingJournal(bookingTxn, p.OrderID, p.ShowID, p.Currency, p.AmountMinor, commissionBps), now)
		return err
	case errors.Is(err, booking.ErrNotConfirmable):
		// the hold is gone (or another attempt paid); the
		// seats stay where they are and the money goes back.
		id, _, err := recordRefund(ctx, tx, p, charge, charge.AmountMinor, "late_payment", now)
		if err != nil {
			return err
		}
		*refundID = id
		if _, err := tx.Exec(ctx, `UPDATE payments SET outcome = 'refund' WHERE payment_id = $1`, p.ID); err != nil {
			return fmt.Errorf("record outcome of %s: %w", p.ID, err)
		}
		return postCapture(ctx, tx, p, charge, "capture:"+charge.ID, "payment after the hold ran out: owed back to the buyer", now)
	default:
		return err
	}
}

// postCapture records money captured that no booking earned: it is owed
// back to the buyer until the refund goes out.
func postCapture(ctx context.Context, tx pgx.Tx, p Payment, charge gateway.Charge, txnID, why string, now time.Time) error {
	_, err := ledger.Post(ctx, tx, ledger.Journal{
		TxnID: txnID, Kind: ledger.KindBooking, Reference: p.ID, ShowID: p.ShowID, Currency: charge.Currency,
		Description: why,
		Lines: []ledger.Line{
			{Account: ledger.AccountGatewayClearing, AmountMinor: charge.AmountMinor},
			{Account: ledger.AccountRefundsPayable, AmountMinor: -charge.AmountMinor},
		},
	}, now)
	return err
}

func failureReason(code string) string {
	switch code {
	case "declined", "insufficient_funds", "cancelled_by_buyer", "risk_rejected":
		return code
	case "expired":
		return "timed_out"
	default:
		return "gateway_error"
	}
}

func failureMessage(code string) string {
	switch code {
	case "declined":
		return "The payment was declined. Try another card or account."
	case "insufficient_funds":
		return "Not enough balance. Try another card or account."
	case "cancelled_by_buyer":
		return "The payment was cancelled."
	case "expired":
		return "The payment was not finished in time."
	default:
		return "The payment gateway could not take the payment."
	}
}
