// Package ledger owns Seatghor's double-entry ledger: journals of
// integer minor-unit lines that sum to zero, posted append-only into the
// shard of the show they concern, the commission rounding rule, and the
// trial balance and journal reads over all shards.
//
// The database enforces the rules, not only this code (migration
// shard/00002_ledger.sql): a deferred constraint trigger rejects at COMMIT
// any transaction with fewer than two lines or lines not summing to zero,
// a trigger refuses UPDATE, DELETE and TRUNCATE for everyone, and the
// application's role may only SELECT and INSERT ledger rows. Post
// checks the same rules first, so a bad journal is a typed error
// (ErrUnbalanced) rather than a failed commit.
//
// Balances are never stored: they are sums of lines, so a hot
// account such as platform_revenue is never a hot row.
package ledger

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5"
)

// Kind says what business event a journal records; the values match the
// API's TransactionKind.
type Kind string

// The kinds of journal.
const (
	KindBooking         Kind = "booking"
	KindGatewayFee      Kind = "gateway_fee"
	KindRefund          Kind = "refund"
	KindCancellationFee Kind = "cancellation_fee"
	KindPayout          Kind = "payout"
	KindReversal        Kind = "reversal"
	KindSettlement      Kind = "settlement"
)

// Kinds lists every kind, in the API's order.
var Kinds = []Kind{KindBooking, KindGatewayFee, KindRefund, KindCancellationFee, KindPayout, KindReversal, KindSettlement}

func (k Kind) valid() bool {
	for _, v := range Kinds {
		if k == v {
			return true
		}
	}
	return false
}

// The accounts. Debit is +, credit is −.
const (
	// AccountGatewayClearing is money the gateway captured for us and has
	// not settled yet (an asset: debit on capture, credit on settlement,
	// refund and the gateway's fee).
	AccountGatewayClearing = "gateway_clearing"
	// AccountOperatorPayable is what Seatghor owes operators (a liability:
	// credited on booking, debited on refund and payout).
	AccountOperatorPayable = "operator_payable"
	// AccountPlatformRevenue is Seatghor's commission (credited on booking,
	// debited when a refund gives it back).
	AccountPlatformRevenue = "platform_revenue"
	// AccountGatewayFees is the gateway's fees (an expense, debited).
	AccountGatewayFees = "gateway_fees"
	// AccountBank is Seatghor's bank account (settlements in, payouts out).
	AccountBank = "bank"
	// AccountRefundsPayable is refunds owed to buyers but not yet paid out
	// by the gateway.
	AccountRefundsPayable = "refunds_payable"
)

// Line is one side of a journal: a signed amount on one account.
type Line struct {
	Account     string
	AmountMinor int64
}

// Journal is one double-entry transaction: at least two lines summing to
// zero, in one currency. TxnID is its unique, deterministic id (e.g.
// "booking:<order_id>"): posting the same id again is a no-op.
type Journal struct {
	TxnID     string
	Kind      Kind
	Reference string
	// ShowID is the show whose shard holds the journal; 0 for platform-wide
	// entries.
	ShowID        int64
	Currency      string
	Description   string
	ReversesTxnID string
	Lines         []Line
}

// Errors lists the sentinel errors of ledger that the API answers by their
// reason (docs/errors.md). A journal that breaks R-7.1 (ErrUnbalanced,
// ErrInvalidJournal, an *UnbalancedError) is a bug of ours, never the
// caller's: the API answers it internal.
var Errors = []error{ErrOverdrawn}

// ErrUnbalanced is matched (errors.Is) by every *UnbalancedError.
var ErrUnbalanced = errors.New("unbalanced journal")

// ErrInvalidJournal means a journal is malformed in a way other than its
// balance: no id, an unknown kind, a bad currency or account name.
var ErrInvalidJournal = errors.New("invalid journal")

// UnbalancedError is a journal that breaks: fewer than two lines, a
// zero line, or lines that do not sum to zero. Nothing of it is written.
type UnbalancedError struct {
	TxnID string
	// SumMinor is the sum of the lines (0 when the reason is another).
	SumMinor int64
	Lines    int
	Reason   string
}

func (e *UnbalancedError) Error() string {
	return fmt.Sprintf("ledger transaction %s rejected: %s", e.TxnID, e.Reason)
}

// Is makes errors.Is(err, ErrUnbalanced) true.
func (e *UnbalancedError) Is(target error) bool { return target == ErrUnbalanced }

var currencyCode = regexp.MustCompile(`^[A-Z]{3}$`)

// Validate checks j against R-7.1 (an *UnbalancedError) and its other
// rules (ErrInvalidJournal), as Post does before writing.
func (j Journal) Validate() error {
	invalid := func(format string, args ...any) error {
		return fmt.Errorf("ledger transaction %q: %s: %w", j.TxnID, fmt.Sprintf(format, args...), ErrInvalidJournal)
	}
	switch {
	case j.TxnID == "":
		return invalid("no transaction id")
	case !j.Kind.valid():
		return invalid("unknown kind %q", j.Kind)
	case !currencyCode.MatchString(j.Currency):
		return invalid("currency %q is not an ISO 4217 code", j.Currency)
	case (j.Kind == KindReversal) != (j.ReversesTxnID != ""):
		return invalid("a reversal, and only a reversal, names the transaction it reverses")
	}
	if len(j.Lines) < 2 {
		return &UnbalancedError{TxnID: j.TxnID, Lines: len(j.Lines),
			Reason: fmt.Sprintf("%d line(s); double entry needs at least two", len(j.Lines))}
	}
	var sum int64
	overflow := false
	for i, l := range j.Lines {
		if l.Account == "" {
			return invalid("line %d has no account", i+1)
		}
		if l.AmountMinor == 0 {
			return &UnbalancedError{TxnID: j.TxnID, Lines: len(j.Lines),
				Reason: fmt.Sprintf("line %d (%s) is zero", i+1, l.Account)}
		}
		if (l.AmountMinor > 0 && sum > math.MaxInt64-l.AmountMinor) ||
			(l.AmountMinor < 0 && sum < math.MinInt64-l.AmountMinor) {
			overflow = true
		}
		sum += l.AmountMinor
	}
	if overflow {
		return invalid("the lines overflow 64 bits")
	}
	if sum != 0 {
		return &UnbalancedError{TxnID: j.TxnID, SumMinor: sum, Lines: len(j.Lines),
			Reason: fmt.Sprintf("lines sum to %d minor units, not zero", sum)}
	}
	return nil
}

// postSQL writes the transaction row and, only if it was new, its lines,
// in one statement: a retried txn_id changes nothing, and all rows
// of a journal are written by one (sub)transaction, as the database's
// trigger demands.
const postSQL = `
	WITH t AS (
		INSERT INTO ledger_transactions
			(txn_id, kind, reference, show_id, currency, description, reverses_txn_id, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, NULLIF($7, ''), $8)
		ON CONFLICT (txn_id) DO NOTHING
		RETURNING txn_id)
	INSERT INTO ledger_lines (txn_id, line, account, amount_minor, created_at)
	SELECT t.txn_id, l.line, l.account, l.amount, $8
	FROM t CROSS JOIN unnest($9::text[], $10::bigint[]) WITH ORDINALITY AS l(account, amount, line)`

// Post writes j in tx, the caller's transaction: the payment code posts a
// booking's journal in the same transaction that confirms it. It
// validates first (an *UnbalancedError, matching ErrUnbalanced, or
// ErrInvalidJournal) and writes nothing then. A journal whose TxnID is
// already posted is ignored: posted is false and err nil, whatever
// its lines; txn ids are deterministic per business event, so a retry
// carries the same journal. The database checks the balance again at
// COMMIT.
func Post(ctx context.Context, tx pgx.Tx, j Journal, now time.Time) (posted bool, err error) {
	if err := j.Validate(); err != nil {
		return false, err
	}
	accounts := make([]string, len(j.Lines))
	amounts := make([]int64, len(j.Lines))
	for i, l := range j.Lines {
		accounts[i], amounts[i] = l.Account, l.AmountMinor
	}
	tag, err := tx.Exec(ctx, postSQL, j.TxnID, string(j.Kind), j.Reference, j.ShowID, j.Currency, j.Description,
		j.ReversesTxnID, now, accounts, amounts)
	if err != nil {
		return false, fmt.Errorf("post ledger transaction %s: %w", j.TxnID, err)
	}
	return tag.RowsAffected() > 0, nil
}

// HasJournal tells whether any of the journals txnIDs is posted in q's
// database (a shard's pool or a transaction on it).
func HasJournal(ctx context.Context, q Querier, txnIDs ...string) (bool, error) {
	var posted bool
	err := q.QueryRow(ctx, `SELECT EXISTS (SELECT FROM ledger_transactions WHERE txn_id = ANY($1))`, txnIDs).Scan(&posted)
	if err != nil {
		return false, fmt.Errorf("are journals %v posted: %w", txnIDs, err)
	}
	return posted, nil
}

// Movement is the sum of account's lines in the journals txnIDs posted in
// q's database: what they moved on the account (debit +). A counter shift's
// report adds it up over the shards its journals are on.
func Movement(ctx context.Context, q Querier, account string, txnIDs []string) (int64, error) {
	var sum int64
	err := q.QueryRow(ctx, `
		SELECT coalesce(sum(amount_minor), 0) FROM ledger_lines WHERE account = $1 AND txn_id = ANY($2)`,
		account, txnIDs).Scan(&sum)
	if err != nil {
		return 0, fmt.Errorf("movement of %s: %w", account, err)
	}
	return sum, nil
}

// Querier runs one query: a pool, or a caller's transaction.
type Querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}
