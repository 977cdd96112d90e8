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
	"github.com/seatghor/seatghor/server/shard"
)

// refund is money to give back for one captured charge.
type refund struct {
	ID, PaymentID, OrderID, UserID, Reason string
	ShowID                                 int64
	ChargeID, Key, Currency, Status        string
	AmountMinor, CapturedMinor             int64
	RequestedBy, ApprovedBy, Note          string
	CreatedAt                              time.Time
}

// The reasons of refunds of a booking (decision 0008): its buyer cancelled
// it, an admin gave money back, or its operator cancelled the show
// (decision 0440). They give back the booking's shares; the other reasons
// refund a capture no booking earned.
const bookedReasonsSQL = `('cancellation', 'manual', 'show_cancelled')`

// booked says whether a refund of reason is a booking's (bookedReasonsSQL).
func booked(reason string) bool {
	return reason == "cancellation" || reason == "manual" || reason == "show_cancelled"
}

// recordRefund records the refund of a capture that no booking earned (a
// late payment, a second capture), before the gateway is asked.
// Such a charge is refunded at most once, with a key derived from it:
// recording it again (a redelivered event, a second reconciliation run)
// changes nothing.
func recordRefund(ctx context.Context, tx pgx.Tx, p Payment, charge gateway.Charge, amount int64, reason string, now time.Time) (id string, created bool, err error) {
	id = shard.NewID("rfd", p.ShowID)
	tag, err := tx.Exec(ctx, `
		INSERT INTO refunds (refund_id, payment_id, order_id, show_id, user_id, reason, gateway_charge_id, gateway_key,
		                     amount_minor, captured_minor, currency, status, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'pending', $12, $12)
		ON CONFLICT (gateway_charge_id) WHERE reason IN ('late_payment', 'duplicate_capture', 'failed_attempt_capture')
		DO NOTHING`,
		id, p.ID, p.OrderID, p.ShowID, p.UserID, reason, charge.ID, "rfd_"+charge.ID, amount, charge.AmountMinor,
		charge.Currency, now)
	if err != nil {
		return "", false, fmt.Errorf("record refund of charge %s: %w", charge.ID, err)
	}
	return id, tag.RowsAffected() == 1, nil
}

// refundable is what of a booked payment's capture is not given back or
// on its way back yet; the caller holds the payment's row lock, so two
// refunds of one charge take turns here. A failed refund counts: its money
// is still owed to the buyer and is given back by hand, through
// SettleFailedRefund (decision 0293), not by a second refund.
func refundable(ctx context.Context, tx pgx.Tx, p Payment) (int64, error) {
	var out int64
	err := tx.QueryRow(ctx, `
		SELECT $2 - coalesce(sum(amount_minor), 0) FROM refunds
		WHERE gateway_charge_id = $1`, p.GatewayChargeID, p.AmountMinor).Scan(&out)
	if err != nil {
		return 0, fmt.Errorf("refunds of payment %s: %w", p.ID, err)
	}
	return out, nil
}

// recordBookedRefund records a refund of part of a booked capture (a
// cancellation, a manual refund) with a key of its own.
func recordBookedRefund(ctx context.Context, tx pgx.Tx, p Payment, amount int64, reason, status, by, note string, now time.Time) (string, error) {
	// A payout of the show running now is either seen by this refund's
	// commit or sees it (decision 0062).
	if err := ledger.LockPayoutsShared(ctx, tx, p.ShowID); err != nil {
		return "", err
	}
	id := shard.NewID("rfd", p.ShowID)
	if _, err := tx.Exec(ctx, `
		INSERT INTO refunds (refund_id, payment_id, order_id, show_id, user_id, reason, gateway_charge_id, gateway_key,
		                     amount_minor, captured_minor, currency, status, requested_by, note, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $15)`,
		id, p.ID, p.OrderID, p.ShowID, p.UserID, reason, p.GatewayChargeID, "rfd_"+id, amount, p.AmountMinor,
		p.Currency, status, by, note, now); err != nil {
		return "", fmt.Errorf("record refund of %s: %w", p.ID, err)
	}
	return id, nil
}

// HeldBack is what of a show's operator payable in currency payouts keep
// back, and the refunds that keep it back: the operator's share of the
// booked refunds recorded but not made yet (awaiting approval, pending,
// unknown: decision 0062) and of the failed ones no admin has settled yet,
// whose money is still owed to the buyer (decision 0293). It has the shape
// of ledger.Holdback and reads in the payout's transaction.
func (s *Service) HeldBack(ctx context.Context, tx pgx.Tx, showID int64, currency string) (ledger.Held, error) {
	terms, err := catalog.ReadTerms(ctx, tx, showID)
	if err != nil {
		return ledger.Held{}, err
	}
	commissionBps := terms.CommissionBps
	// Per charge: what is still captured after the journalled refunds
	// (made, or failed and settled), and the held ones' total.
	rows, err := tx.Query(ctx, `
		WITH held AS (
			SELECT gateway_charge_id, max(captured_minor) AS captured, sum(amount_minor) AS amount,
			       array_agg(refund_id ORDER BY refund_id) FILTER (WHERE status <> 'failed') AS pending,
			       array_agg(refund_id ORDER BY refund_id) FILTER (WHERE status = 'failed') AS failed
			FROM refunds
			WHERE show_id = $1 AND currency = $2 AND reason IN `+bookedReasonsSQL+`
			  AND (status IN ('awaiting_approval', 'pending', 'unknown') OR (status = 'failed' AND settled_at IS NULL))
			GROUP BY gateway_charge_id)
		SELECT h.captured - coalesce((SELECT sum(r.amount_minor) FROM refunds r
		                              WHERE r.gateway_charge_id = h.gateway_charge_id
		                                AND (r.status = 'succeeded' OR r.settled_at IS NOT NULL)), 0),
		       h.amount, coalesce(h.pending, '{}'), coalesce(h.failed, '{}')
		FROM held h ORDER BY h.gateway_charge_id`, showID, currency)
	if err != nil {
		return ledger.Held{}, fmt.Errorf("refunds held back for show %d: %w", showID, err)
	}
	var held ledger.Held
	var before, amount int64
	var pending, failed []string
	if _, err := pgx.ForEachRow(rows, []any{&before, &amount, &pending, &failed}, func() error {
		// Taken together, as the journals will take them one after another
		// (decision 0008: the shares are differences, so they add up).
		held.Minor += ledger.OperatorShareOfRefund(before, amount, commissionBps)
		held.Pending = append(held.Pending, pending...)
		held.Failed = append(held.Failed, failed...)
		return nil
	}); err != nil {
		return ledger.Held{}, fmt.Errorf("refunds held back for show %d: %w", showID, err)
	}
	return held, nil
}

const refundColumns = `refund_id, payment_id, order_id, user_id, reason, show_id, gateway_charge_id, gateway_key,
	currency, status, amount_minor, captured_minor, requested_by, approved_by, note, created_at`

// scanRefund reads a row of refundColumns, then more columns into more.
func scanRefund(row pgx.Row, more ...any) (refund, error) {
	var r refund
	err := row.Scan(append([]any{&r.ID, &r.PaymentID, &r.OrderID, &r.UserID, &r.Reason, &r.ShowID, &r.ChargeID, &r.Key,
		&r.Currency, &r.Status, &r.AmountMinor, &r.CapturedMinor, &r.RequestedBy, &r.ApprovedBy, &r.Note, &r.CreatedAt},
		more...)...)
	return r, err
}

func getRefund(ctx context.Context, q querier, refundID string, lock bool) (refund, error) {
	sql := `SELECT ` + refundColumns + ` FROM refunds WHERE refund_id = $1`
	if lock {
		sql += ` FOR UPDATE`
	}
	r, err := scanRefund(q.QueryRow(ctx, sql, refundID))
	found, err := pg.Found(err)
	if err != nil {
		return r, fmt.Errorf("read refund %s: %w", refundID, err)
	}
	if !found {
		return r, notFound("refund", refundID)
	}
	return r, nil
}

// sendRefund asks the gateway for a recorded refund, with the refund's own
// key, so sending it again never refunds twice, and applies the
// answer.
func (s *Service) sendRefund(ctx context.Context, pool *pg.Pool, refundID string) error {
	r, err := getRefund(ctx, pool, refundID, false)
	if err != nil {
		return err
	}
	if r.Status != "pending" && r.Status != "unknown" {
		return nil
	}
	res, err := observe(s.metrics, "refund", func() (gateway.Refund, error) {
		return s.gw.Refund(ctx, gateway.RefundRequest{
			IdempotencyKey: r.Key, Reference: r.ID, ChargeID: r.ChargeID, AmountMinor: r.AmountMinor, Currency: r.Currency,
		})
	})
	switch {
	case errors.Is(err, gateway.ErrOutcomeUnknown):
		_, err := pool.Exec(ctx, `
			UPDATE refunds SET status = 'unknown', updated_at = $2 WHERE refund_id = $1 AND status = 'pending'`,
			r.ID, s.now())
		return err
	case errors.Is(err, gateway.ErrRejected):
		// A person must look: the gateway will not give this money back.
		return errors.Join(err, s.refundFailed(ctx, pool, r.ID, "refund_rejected", err.Error()))
	case err != nil:
		return fmt.Errorf("refund %s: %w", r.ID, err)
	}
	return s.applyRefund(ctx, pool, res)
}

// refundFailed closes a refund the gateway will not make as FAILED, a
// terminal state the recovery job leaves alone, and alerts: the
// mismatch counter, the seatghor_refunds_failed gauge and an error log. The
// money is still owed to the buyer: payouts keep it back until an admin
// records it paid another way (SettleFailedRefund, decision 0293).
func (s *Service) refundFailed(ctx context.Context, pool *pg.Pool, refundID, kind, why string) error {
	tag, err := pool.Exec(ctx, `
		UPDATE refunds SET status = 'failed', last_error = $2, updated_at = $3
		WHERE refund_id = $1 AND status IN ('pending', 'unknown')`, refundID, why, s.now())
	if err != nil {
		return fmt.Errorf("fail refund %s: %w", refundID, err)
	}
	if tag.RowsAffected() == 1 {
		s.metrics.mismatch(kind)
		s.log.ErrorContext(ctx, "refund failed at the gateway: a person must give the money back", "refund", refundID,
			"kind", kind, "err", why)
	}
	return nil
}

// applyRefund records a refund the gateway made: the refund row, the
// compensating journal, the payment's and order's refunded
// amounts, and the RefundIssued event, in one transaction. A duplicate
// changes nothing.
func (s *Service) applyRefund(ctx context.Context, pool *pg.Pool, res gateway.Refund) error {
	switch res.Status {
	case gateway.StatusSucceeded:
	case gateway.StatusFailed:
		// The gateway's answer is final: sending the refund again with its
		// key would answer the same failure for ever.
		return s.refundFailed(ctx, pool, res.Reference, "refund_failed", "the gateway reports the refund failed")
	default:
		return nil
	}
	return pg.InTx(ctx, pool, func(tx pgx.Tx) error {
		r, err := getRefund(ctx, tx, res.Reference, true)
		if err != nil {
			return err
		}
		now := s.now()
		tag, err := tx.Exec(ctx, `
			UPDATE refunds SET status = 'succeeded', gateway_refund_id = $2, updated_at = $3
			WHERE refund_id = $1 AND status IN ('pending', 'unknown')`, r.ID, res.ID, now)
		if err != nil {
			return fmt.Errorf("record refund %s: %w", r.ID, err)
		}
		if tag.RowsAffected() == 0 {
			return nil
		}
		txnID := "refund:" + r.ID
		j := ledger.Journal{
			TxnID: txnID, Kind: ledger.KindRefund, Reference: r.ID, ShowID: r.ShowID, Currency: r.Currency,
			Description: "refund of a capture without a booking (" + r.Reason + ")",
			Lines: []ledger.Line{
				{Account: ledger.AccountRefundsPayable, AmountMinor: r.AmountMinor},
				{Account: ledger.AccountGatewayClearing, AmountMinor: -r.AmountMinor},
			},
		}
		if booked(r.Reason) {
			// The booking's shares are given back as differences of what is
			// still captured before and after this refund (decision 0008).
			commissionBps, before, err := sharesBefore(ctx, tx, r)
			if err != nil {
				return err
			}
			j = ledger.RefundJournal(txnID, r.OrderID, r.ShowID, r.Currency, before, r.AmountMinor, commissionBps)
		}
		return givenBack(ctx, tx, r, j, res.ID, now)
	})
}

// sharesBefore reads what the booking's shares of refund r are taken from:
// the show's commission and what the charge still held captured before r
// (the other refunds of the charge given back, by the gateway or settled
// by hand).
func sharesBefore(ctx context.Context, tx pgx.Tx, r refund) (commissionBps, before int64, err error) {
	terms, err := catalog.ReadTerms(ctx, tx, r.ShowID)
	if err != nil {
		return 0, 0, err
	}
	err = tx.QueryRow(ctx, `
		SELECT $2 - coalesce(sum(amount_minor), 0) FROM refunds
		WHERE gateway_charge_id = $1 AND refund_id <> $3
		  AND (status = 'succeeded' OR settled_at IS NOT NULL)`, r.ChargeID, r.CapturedMinor, r.ID).
		Scan(&before)
	if err != nil {
		return 0, 0, fmt.Errorf("read refunds of charge %s: %w", r.ChargeID, err)
	}
	return terms.CommissionBps, before, nil
}

// givenBack records money a refund gave back, through the gateway or
// another way: its journal, the payment's and order's refunded amounts and
// the RefundIssued event.
func givenBack(ctx context.Context, tx pgx.Tx, r refund, j ledger.Journal, reference string, now time.Time) error {
	if _, err := ledger.Post(ctx, tx, j, now); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `
		UPDATE payments SET refunded_minor = refunded_minor + $2, updated_at = $3 WHERE payment_id = $1`,
		r.PaymentID, r.AmountMinor, now); err != nil {
		return fmt.Errorf("record refund on payment %s: %w", r.PaymentID, err)
	}
	if err := booking.MarkRefunded(ctx, tx, r.OrderID, r.AmountMinor, now); err != nil {
		return err
	}
	var fee int64 // the cancellation fee kept, for a cancellation
	if r.Reason == "cancellation" {
		o, err := booking.ReadOrder(ctx, tx, r.OrderID)
		if err != nil {
			return err
		}
		fee = o.CancellationFeeMinor
	}
	return appendRefundIssued(ctx, tx, r, fee, reference, j.TxnID, now)
}
