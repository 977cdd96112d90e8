package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/pg"
)

// ShowMoney is a show's money in its ledger journals, in the minor unit
// (the console's dashboard, decision 0447): Sales less Refunds is what it
// has taken, which splits into Commission and Operator; fees kept on
// cancellations stay in both; payouts are not taken off.
type ShowMoney struct {
	Currency   string
	Sales      int64
	Refunds    int64
	Commission int64
	Operator   int64
}

// SalesBucket is one bar of a show's sales over time: its booking
// journals from Start for the bucket's width.
type SalesBucket struct {
	Start       time.Time
	Orders      int
	AmountMinor int64
}

// showTimelineSQL buckets a show's booking journals by when they were
// posted; a bucket is $2 seconds wide, counted from the epoch.
const showTimelineSQL = `
	SELECT to_timestamp(floor(extract(epoch FROM t.created_at) / $2) * $2) AS start,
	       count(DISTINCT t.txn_id)::int, coalesce(-sum(l.amount_minor), 0)::bigint
	FROM ledger_transactions t JOIN ledger_lines l USING (txn_id)
	WHERE t.show_id = $1 AND t.kind = 'booking' AND l.account IN ($3, $4)
	GROUP BY 1 ORDER BY 1`

// ShowSales reads a show's money and its sales over time in buckets of
// width bucket, in one snapshot of its shard.
func (s *Service) ShowSales(ctx context.Context, showID int64, bucket time.Duration) (ShowMoney, []SalesBucket, error) {
	pool, err := s.router.ForShow(ctx, showID)
	if err != nil {
		return ShowMoney{}, nil, err
	}
	var (
		m  ShowMoney
		tl []SalesBucket
	)
	err = pg.InTx(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`); err != nil {
			return err
		}
		var id int64
		err := tx.QueryRow(ctx, showsMoneySQL, []int64{showID}, AccountPlatformRevenue, AccountOperatorPayable).
			Scan(&id, &m.Currency, &m.Sales, &m.Refunds, &m.Commission, &m.Operator)
		if _, err := pg.Found(err); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, showTimelineSQL, showID, bucket.Seconds(), AccountPlatformRevenue, AccountOperatorPayable)
		if err != nil {
			return err
		}
		tl, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (SalesBucket, error) {
			var b SalesBucket
			err := r.Scan(&b.Start, &b.Orders, &b.AmountMinor)
			b.Start = b.Start.UTC()
			return b, err
		})
		return err
	})
	if err != nil {
		return ShowMoney{}, nil, fmt.Errorf("money of show %d: %w", showID, err)
	}
	return m, tl, nil
}

// showsMoneySQL sums, show by show, the operator's and the platform's
// lines of the shows' journals: booking journals credit them with a sale,
// refund journals debit them with what goes back, the rest (fees,
// cancellation fees, reversals) move between them; payouts are left out.
// A show's journals are in one currency, its own.
const showsMoneySQL = `
	SELECT t.show_id, t.currency,
	       coalesce(-sum(l.amount_minor) FILTER (WHERE t.kind = 'booking'), 0)::bigint,
	       coalesce(sum(l.amount_minor) FILTER (WHERE t.kind = 'refund'), 0)::bigint,
	       coalesce(-sum(l.amount_minor) FILTER (WHERE l.account = $2), 0)::bigint,
	       coalesce(-sum(l.amount_minor) FILTER (WHERE l.account = $3), 0)::bigint
	FROM ledger_transactions t JOIN ledger_lines l USING (txn_id)
	WHERE t.show_id = ANY($1) AND t.kind <> 'payout' AND l.account IN ($2, $3)
	GROUP BY t.show_id, t.currency`

// ShowsMoney reads the money of many shows (an organisation's sales,
// decision 0451), asking each shard once; a show with no journal yet is
// absent.
func (s *Service) ShowsMoney(ctx context.Context, showIDs []int64) (map[int64]ShowMoney, error) {
	byShard, err := s.router.Group(ctx, showIDs)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]ShowMoney, len(showIDs))
	for pool, ids := range byShard {
		rows, err := pool.Query(ctx, showsMoneySQL, ids, AccountPlatformRevenue, AccountOperatorPayable)
		if err != nil {
			return nil, fmt.Errorf("money of %d shows on %s: %w", len(ids), pool.Name, err)
		}
		var id int64
		var m ShowMoney
		if _, err := pgx.ForEachRow(rows, []any{&id, &m.Currency, &m.Sales, &m.Refunds, &m.Commission, &m.Operator}, func() error {
			out[id] = m
			return nil
		}); err != nil {
			return nil, fmt.Errorf("money of %d shows on %s: %w", len(ids), pool.Name, err)
		}
	}
	return out, nil
}
