package ledger

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/pg"
)

// ErrOverdrawn means a payout is more than is payable: what the operator
// is owed less what refunds will take back.
var ErrOverdrawn = fault.Sentinel(fault.PayoutExceedsBalance, "payout exceeds what is payable to the operator")

// PayoutJournal records money paid from the bank to a show's operator.
func PayoutJournal(txnID, ref string, showID int64, currency string, amountMinor int64) Journal {
	return Journal{
		TxnID: txnID, Kind: KindPayout, Reference: ref, ShowID: showID, Currency: currency,
		Description: fmt.Sprintf("payout %s", ref),
		Lines: lines(
			Line{AccountOperatorPayable, amountMinor},
			Line{AccountBank, -amountMinor},
		),
	}
}

// Held is what payouts keep back of a show's operator payable in a
// currency, and the refunds that keep it back.
type Held struct {
	// Minor is the operator's share of those refunds.
	Minor int64
	// Pending are the refunds on their way (decision 0062).
	Pending []string
	// Failed are the refunds the gateway failed that no admin settled yet:
	// still owed to their buyers (decision 0293).
	Failed []string
}

// Reason says in words why Minor is kept back; empty when nothing is.
func (h Held) Reason() string {
	if h.Minor == 0 {
		return ""
	}
	var why []string
	if n := len(h.Failed); n > 0 {
		why = append(why, fmt.Sprintf("%d failed refund(s) not settled yet (SettleFailedRefund)", n))
	}
	if n := len(h.Pending); n > 0 {
		why = append(why, fmt.Sprintf("%d refund(s) on their way", n))
	}
	return fmt.Sprintf("%d kept back: %s", h.Minor, strings.Join(why, ", "))
}

// Holdback says how much of a show's operator payable in a currency the
// refunds recorded but not made yet and the failed ones not settled yet
// will take back (decisions 0062, 0293); it reads inside the payout's
// transaction, after the payout lock is taken. The payment service, which
// owns refunds, provides it.
type Holdback func(ctx context.Context, tx pgx.Tx, showID int64, currency string) (Held, error)

// Option is an optional knob of NewService.
type Option func(*Service)

// WithHoldback makes payouts keep back what refunds still on their way
// will take from the operator (decision 0062).
func WithHoldback(h Holdback) Option { return func(s *Service) { s.holdback = h } }

// LockPayoutsShared is taken (shared) by a transaction that records a
// refund of a show's booking; RecordPayout takes the same lock exclusively,
// so it sees every such refund that will commit, or none that will not.
func LockPayoutsShared(ctx context.Context, tx pgx.Tx, showID int64) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock_shared(hashtextextended('payout', $1))`, showID); err != nil {
		return fmt.Errorf("lock payouts of show %d: %w", showID, err)
	}
	return nil
}

// OperatorShareOfRefund is what a refund of refundMinor, out of totalMinor
// still captured, takes back from the operator: the operator line of
// RefundJournal (decision 0008).
func OperatorShareOfRefund(totalMinor, refundMinor, commissionBps int64) int64 {
	return operatorShare(totalMinor, commissionBps) - operatorShare(totalMinor-refundMinor, commissionBps)
}

// Payout is a recorded payout and what was kept back when it was asked.
type Payout struct {
	Posted
	// Duplicate is true when the payout id was recorded before.
	Duplicate bool
	// Held is what was kept back of the operator's balance, as of the call.
	Held Held
}

// RecordPayout posts a payout of a show's takings to its operator, on the
// show's shard. The payout id names the journal ("payout:<id>"), so a
// repeated call posts nothing (Duplicate). Payouts of one show are
// serialized, so two at once cannot pay out more than is owed, and what
// refunds still on their way or failed and not settled will take back is
// not paid out (decisions 0062, 0293).
func (s *Service) RecordPayout(ctx context.Context, showID int64, payoutID, currency string, amountMinor int64) (Payout, error) {
	if amountMinor <= 0 {
		return Payout{}, &fault.Error{Reason: fault.LedgerQueryInvalid, Field: "amount", Message: "a payout is a positive amount"}
	}
	pool, err := s.router.ForShow(ctx, showID)
	if err != nil {
		return Payout{}, err
	}
	now := s.clk.Now().UTC()
	j := PayoutJournal("payout:"+payoutID, payoutID, showID, currency, amountMinor)
	var posted bool
	var held Held
	err = pg.InTx(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('payout', $1))`, showID); err != nil {
			return fmt.Errorf("lock payouts of show %d: %w", showID, err)
		}
		var owed int64
		if err := tx.QueryRow(ctx, `
			SELECT coalesce(-sum(l.amount_minor), 0) FROM ledger_lines l JOIN ledger_transactions t USING (txn_id)
			WHERE t.show_id = $1 AND t.currency = $2 AND l.account = $3`,
			showID, currency, AccountOperatorPayable).Scan(&owed); err != nil {
			return fmt.Errorf("what show %d's operator is owed: %w", showID, err)
		}
		if s.holdback != nil {
			if held, err = s.holdback(ctx, tx, showID, currency); err != nil {
				return fmt.Errorf("refunds held back for show %d: %w", showID, err)
			}
		}
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM ledger_transactions WHERE txn_id = $1)`, j.TxnID).Scan(&exists); err != nil {
			return fmt.Errorf("look up payout %s: %w", payoutID, err)
		}
		if payable := owed - held.Minor; !exists && amountMinor > payable {
			msg := fmt.Sprintf("%d asked, %d payable for show %d (%d owed)", amountMinor, max(payable, 0), showID, owed)
			if why := held.Reason(); why != "" {
				msg += "; " + why
			}
			return fmt.Errorf("%w: %s", ErrOverdrawn, msg)
		}
		posted, err = Post(ctx, tx, j, now)
		return err
	})
	if err != nil {
		return Payout{}, err
	}
	// What is stored, which for a repeated payout id is the first one.
	stored, _, err := s.ListJournal(ctx, Filter{ShowID: showID, Kind: KindPayout, Reference: payoutID, PageSize: 1})
	if err != nil || len(stored) == 0 {
		return Payout{}, errors.Join(err, fmt.Errorf("payout %s not found after posting", payoutID))
	}
	return Payout{Posted: stored[0], Duplicate: !posted, Held: held}, nil
}
