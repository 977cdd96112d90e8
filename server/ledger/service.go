package ledger

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/page"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/shard"
)

// Service reads the ledger of every shard: the trial balance, the journal,
// and the periodic check that watches both. Posting is not
// here: Post runs inside the caller's own transaction.
type Service struct {
	router *shard.Router
	clk    clock.Clock
	check  checkState
	// holdback is what payouts keep back for refunds on their way.
	holdback Holdback
}

// NewService returns a ledger reader over the router's shards.
func NewService(router *shard.Router, clk clock.Clock, opts ...Option) *Service {
	s := &Service{router: router, clk: clk}
	for _, o := range opts {
		o(s)
	}
	return s
}

// AccountBalance is the sum of one account's lines in one currency.
type AccountBalance struct {
	Account  string
	Currency string
	// BalanceMinor is the sum of the lines: positive a net debit, negative
	// a net credit.
	BalanceMinor int64
	// DebitMinor sums the positive lines, CreditMinor the negative ones.
	DebitMinor  int64
	CreditMinor int64
	LineCount   int64
}

// CurrencyTotal is the sum of every line in one currency; zero when the
// books balance.
type CurrencyTotal struct {
	Currency string
	SumMinor int64
}

// TrialBalance is every account's balance over the shards read, as of a
// time.
type TrialBalance struct {
	AsOf   time.Time
	Shards []int
	// Accounts are ordered by account, then currency.
	Accounts []AccountBalance
	// Totals has one entry per currency, ordered by currency.
	Totals []CurrencyTotal
	// SumMinor is the sum of all lines; zero when balanced.
	SumMinor int64
	// UnbalancedJournals counts transactions whose lines do not sum to zero
	// or are fewer than two: the check. It must be 0.
	UnbalancedJournals int64
	// UnbalancedTxnIDs names some of them (up to 100 per shard), for the
	// alert.
	UnbalancedTxnIDs []string
}

// Balanced tells whether every currency sums to zero and no transaction is
// unbalanced.
func (tb TrialBalance) Balanced() bool {
	for _, t := range tb.Totals {
		if t.SumMinor != 0 {
			return false
		}
	}
	return tb.SumMinor == 0 && tb.UnbalancedJournals == 0
}

const balanceSQL = `
	SELECT l.account, t.currency, sum(l.amount_minor)::bigint,
	       coalesce(sum(l.amount_minor) FILTER (WHERE l.amount_minor > 0), 0)::bigint,
	       coalesce(sum(l.amount_minor) FILTER (WHERE l.amount_minor < 0), 0)::bigint,
	       count(*)
	FROM ledger_lines l JOIN ledger_transactions t USING (txn_id)
	WHERE l.created_at <= $1
	GROUP BY l.account, t.currency`

// checkSQL is R-7.6's nightly check: transactions that do not sum to zero
// (something bypassed Post and the database's trigger), and, as also
// demands, those with fewer than two lines.
const checkSQL = `
	SELECT txn_id, count(*) OVER () FROM (
		SELECT t.txn_id FROM ledger_transactions t LEFT JOIN ledger_lines l USING (txn_id)
		WHERE t.created_at <= $1
		GROUP BY t.txn_id
		HAVING coalesce(sum(l.amount_minor), 0) <> 0 OR count(l.line) < 2) u
	ORDER BY txn_id LIMIT 100`

// TrialBalance sums every account's lines posted at or before asOf (the
// zero time means now), on one shard or, when shardIndex is nil, on all.
func (s *Service) TrialBalance(ctx context.Context, shardIndex *int32, asOf time.Time) (TrialBalance, error) {
	if asOf.IsZero() {
		asOf = s.clk.Now()
	}
	pools, idx, err := s.pools(shardIndex)
	if err != nil {
		return TrialBalance{}, err
	}
	tb := TrialBalance{AsOf: asOf, Shards: idx}
	type key struct{ account, currency string }
	byKey := map[key]*AccountBalance{}
	totals := map[string]int64{}
	for _, pool := range pools {
		rows, err := pool.Query(ctx, balanceSQL, asOf)
		if err != nil {
			return TrialBalance{}, fmt.Errorf("trial balance of %s: %w", pool.Name, err)
		}
		var b AccountBalance
		_, err = pgx.ForEachRow(rows, []any{&b.Account, &b.Currency, &b.BalanceMinor, &b.DebitMinor, &b.CreditMinor, &b.LineCount},
			func() error {
				k := key{b.Account, b.Currency}
				acc, ok := byKey[k]
				if !ok {
					acc = &AccountBalance{Account: b.Account, Currency: b.Currency}
					byKey[k] = acc
				}
				acc.BalanceMinor += b.BalanceMinor
				acc.DebitMinor += b.DebitMinor
				acc.CreditMinor += b.CreditMinor
				acc.LineCount += b.LineCount
				totals[b.Currency] += b.BalanceMinor
				tb.SumMinor += b.BalanceMinor
				return nil
			})
		if err != nil {
			return TrialBalance{}, fmt.Errorf("trial balance of %s: %w", pool.Name, err)
		}
		rows, err = pool.Query(ctx, checkSQL, asOf)
		if err != nil {
			return TrialBalance{}, fmt.Errorf("unbalanced transactions of %s: %w", pool.Name, err)
		}
		var (
			txnID string
			count int64
		)
		_, err = pgx.ForEachRow(rows, []any{&txnID, &count}, func() error {
			tb.UnbalancedTxnIDs = append(tb.UnbalancedTxnIDs, txnID)
			return nil
		})
		if err != nil {
			return TrialBalance{}, fmt.Errorf("unbalanced transactions of %s: %w", pool.Name, err)
		}
		tb.UnbalancedJournals += count
	}
	for _, b := range byKey {
		tb.Accounts = append(tb.Accounts, *b)
	}
	slices.SortFunc(tb.Accounts, func(a, b AccountBalance) int {
		return cmp.Or(strings.Compare(a.Account, b.Account), strings.Compare(a.Currency, b.Currency))
	})
	for c, sum := range totals {
		tb.Totals = append(tb.Totals, CurrencyTotal{Currency: c, SumMinor: sum})
	}
	slices.SortFunc(tb.Totals, func(a, b CurrencyTotal) int { return strings.Compare(a.Currency, b.Currency) })
	return tb, nil
}

// pools returns the shards to read: one, or all.
func (s *Service) pools(shardIndex *int32) ([]*pg.Pool, []int, error) {
	if shardIndex != nil {
		pool, err := s.router.Shard(int(*shardIndex))
		if err != nil {
			return nil, nil, &fault.Error{Reason: fault.LedgerQueryInvalid, Field: "shard", Message: err.Error()}
		}
		return []*pg.Pool{pool}, []int{int(*shardIndex)}, nil
	}
	idx := make([]int, len(s.router.Shards()))
	for i := range idx {
		idx[i] = i
	}
	return s.router.Shards(), idx, nil
}

// Filter selects journal transactions; zero fields select everything.
type Filter struct {
	Shard  *int32
	ShowID int64
	// ShowIDs: only journals of these shows (an organisation's, decision
	// 0464), when not nil; empty, none.
	ShowIDs   []int64
	Account   string
	Reference string
	Kind      Kind
	// CreatedAfter is inclusive, CreatedBefore exclusive.
	CreatedAfter  time.Time
	CreatedBefore time.Time
	// PageSize defaults to 50.
	PageSize  int
	PageToken string
}

// Posted is a journal as stored: with its shard and posting time.
type Posted struct {
	Journal
	Shard     int
	CreatedAt time.Time
}

const listSQL = `
	SELECT t.txn_id, t.kind, t.reference, t.show_id, t.currency, t.description,
	       coalesce(t.reverses_txn_id, ''), t.created_at,
	       array_agg(l.account ORDER BY l.line), array_agg(l.amount_minor ORDER BY l.line)
	FROM ledger_transactions t JOIN ledger_lines l USING (txn_id)
	WHERE (t.created_at, t.txn_id COLLATE "C") < ($1, $2)
	  AND ($3::bigint = 0 OR t.show_id = $3)
	  AND ($4 = '' OR t.reference = $4)
	  AND ($5 = '' OR t.kind = $5)
	  AND ($6::timestamptz IS NULL OR t.created_at >= $6)
	  AND ($7::timestamptz IS NULL OR t.created_at < $7)
	  AND ($8 = '' OR EXISTS (SELECT 1 FROM ledger_lines a WHERE a.txn_id = t.txn_id AND a.account = $8))
	  AND ($10::bigint[] IS NULL OR t.show_id = ANY($10))
	GROUP BY t.txn_id
	ORDER BY t.created_at DESC, t.txn_id COLLATE "C" DESC
	LIMIT $9`

// ListJournal pages through journal transactions with their lines, newest
// first (by posting time, then txn id), over one shard or all of them.
func (s *Service) ListJournal(ctx context.Context, f Filter) ([]Posted, string, error) {
	if f.PageSize <= 0 {
		f.PageSize = 50
	}
	if f.Kind != "" && !f.Kind.valid() {
		return nil, "", &fault.Error{Reason: fault.LedgerQueryInvalid, Field: "kind", Message: fmt.Sprintf("unknown kind %q", f.Kind)}
	}
	after, ok, err := page.Decode(f.PageToken)
	if err != nil {
		return nil, "", &fault.Error{Reason: fault.LedgerQueryInvalid, Field: "page_token", Message: page.ErrBadToken.Message}
	}
	if !ok {
		// Before the first page: later than anything posted.
		after.At = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if f.ShowID != 0 && s.router.Catalog() != nil {
		// Filtering by a show that does not exist is the caller's mistake,
		// answered as such (docs/errors.md), not an empty page. (A router
		// over bare shards, in tests, has no directory to ask.)
		if _, err := s.router.ForShow(ctx, f.ShowID); errors.Is(err, shard.ErrUnknownShow) {
			return nil, "", &fault.Error{Reason: fault.LedgerQueryInvalid, Field: "show_id", Message: fmt.Sprintf("no show %d", f.ShowID)}
		} else if err != nil {
			return nil, "", fmt.Errorf("list journal: %w", err)
		}
	}
	if f.ShowIDs != nil && len(f.ShowIDs) == 0 {
		return nil, "", nil // no show, no journal
	}
	pools, idx, err := s.pools(f.Shard)
	if err != nil {
		return nil, "", err
	}
	var createdAfter, createdBefore *time.Time
	if !f.CreatedAfter.IsZero() {
		createdAfter = &f.CreatedAfter
	}
	if !f.CreatedBefore.IsZero() {
		createdBefore = &f.CreatedBefore
	}
	var all []Posted
	for n, pool := range pools {
		rows, err := pool.Query(ctx, listSQL, after.At, after.ID, f.ShowID, f.Reference, string(f.Kind),
			createdAfter, createdBefore, f.Account, f.PageSize+1, f.ShowIDs)
		if err != nil {
			return nil, "", fmt.Errorf("list journal of %s: %w", pool.Name, err)
		}
		got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Posted, error) {
			var (
				p        = Posted{Shard: idx[n]}
				kind     string
				accounts []string
				amounts  []int64
			)
			err := r.Scan(&p.TxnID, &kind, &p.Reference, &p.ShowID, &p.Currency, &p.Description,
				&p.ReversesTxnID, &p.CreatedAt, &accounts, &amounts)
			p.Kind, p.CreatedAt = Kind(kind), p.CreatedAt.UTC()
			for i := range accounts {
				p.Lines = append(p.Lines, Line{accounts[i], amounts[i]})
			}
			return p, err
		})
		if err != nil {
			return nil, "", fmt.Errorf("list journal of %s: %w", pool.Name, err)
		}
		all = append(all, got...)
	}
	// Each shard's rows are in this order already; merge them. Txn ids
	// compare bytewise here and COLLATE "C" in SQL, so pages never skip.
	slices.SortFunc(all, func(a, b Posted) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), strings.Compare(b.TxnID, a.TxnID))
	})
	if len(all) <= f.PageSize {
		return all, "", nil
	}
	last := all[f.PageSize-1]
	return all[:f.PageSize], page.Encode(page.Cursor{At: last.CreatedAt, ID: last.TxnID}), nil
}
