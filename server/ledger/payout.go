package ledger

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/pg"
)

// ErrOverdrawn means a payout is more than the operator is owed.
var ErrOverdrawn = errors.New("payout exceeds what the operator is owed")

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

// RecordPayout posts a payout of a show's takings to its operator, on the
// show's shard. The payout id names the journal ("payout:<id>"), so a
// repeated call posts nothing (posted=false). Payouts of one show are
// serialized, so two at once cannot pay out more than is owed.
func (s *Service) RecordPayout(ctx context.Context, showID int64, payoutID, currency string, amountMinor int64) (Posted, bool, error) {
	if amountMinor <= 0 {
		return Posted{}, false, &InvalidError{Field: "amount", Message: "a payout is a positive amount"}
	}
	pool, err := s.router.ForShow(ctx, showID)
	if err != nil {
		return Posted{}, false, err
	}
	now := s.clk.Now().UTC()
	j := PayoutJournal("payout:"+payoutID, payoutID, showID, currency, amountMinor)
	var posted bool
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
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM ledger_transactions WHERE txn_id = $1)`, j.TxnID).Scan(&exists); err != nil {
			return fmt.Errorf("look up payout %s: %w", payoutID, err)
		}
		if !exists && amountMinor > owed {
			return fmt.Errorf("%w: %d asked, %d owed for show %d", ErrOverdrawn, amountMinor, owed, showID)
		}
		posted, err = Post(ctx, tx, j, now)
		return err
	})
	if err != nil {
		return Posted{}, false, err
	}
	// What is stored, which for a repeated payout id is the first one.
	stored, _, err := s.ListJournal(ctx, Filter{ShowID: showID, Kind: KindPayout, Reference: payoutID, PageSize: 1})
	if err != nil || len(stored) == 0 {
		return Posted{}, false, errors.Join(err, fmt.Errorf("payout %s not found after posting", payoutID))
	}
	return stored[0], !posted, nil
}
