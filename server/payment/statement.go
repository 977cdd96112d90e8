package payment

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// PartnerTotal sums a partner's sales and refunds in one currency: a line
// of its statement (partner.Statement).
type PartnerTotal struct {
	Currency     string
	SalesCount   int64
	SalesMinor   int64
	RefundsCount int64
	RefundsMinor int64
}

// A sale is an order of the partner whose booking journal was posted in the
// period (apply posts "booking:<order>" when the order is confirmed), so
// the statement and the ledger agree on what was sold when. The partner's
// orders are read by orders_by_partner (partner_id, created_at), up to the
// period's end: none made later can count. The orders and the journals are
// booking's and the ledger's tables, joined here in one statement per shard
// (docs/table-owners.txt): the journals' ids are this package's.
const partnerSalesSQL = `
	SELECT o.currency, count(*), coalesce(sum(o.amount_minor), 0)::bigint
	FROM orders o JOIN ledger_transactions t ON t.txn_id = 'booking:' || o.order_id
	WHERE o.partner_id = $1 AND o.created_at < $3 AND t.created_at >= $2 AND t.created_at < $3
	GROUP BY o.currency`

// A refund is money given back for a sale: a cancellation or an admin's
// refund of a partner's order, counted when its refund journal was posted
// (when the gateway confirmed it). Refunds of captures that never became a
// sale (late or duplicate payments) are not the partner's.
const partnerRefundsSQL = `
	SELECT r.currency, count(*), coalesce(sum(r.amount_minor), 0)::bigint
	FROM orders o JOIN refunds r ON r.order_id = o.order_id
	     JOIN ledger_transactions t ON t.txn_id = 'refund:' || r.refund_id
	WHERE o.partner_id = $1 AND o.created_at < $3 AND r.reason IN ` + bookedReasonsSQL + `
	  AND t.created_at >= $2 AND t.created_at < $3
	GROUP BY r.currency`

// PartnerTotals sums a partner's sales and refunds over [from, to) on every
// shard, one total per currency, by currency.
func (s *Service) PartnerTotals(ctx context.Context, partnerID int64, from, to time.Time) ([]PartnerTotal, error) {
	byCurrency := map[string]*PartnerTotal{}
	total := func(currency string) *PartnerTotal {
		t, ok := byCurrency[currency]
		if !ok {
			t = &PartnerTotal{Currency: currency}
			byCurrency[currency] = t
		}
		return t
	}
	for _, pool := range s.router.Shards() {
		var (
			currency     string
			count, minor int64
		)
		rows, err := pool.Query(ctx, partnerSalesSQL, partnerID, from, to)
		if err != nil {
			return nil, fmt.Errorf("sales of partner %d on %s: %w", partnerID, pool.Name, err)
		}
		if _, err := pgx.ForEachRow(rows, []any{&currency, &count, &minor}, func() error {
			t := total(currency)
			t.SalesCount += count
			t.SalesMinor += minor
			return nil
		}); err != nil {
			return nil, fmt.Errorf("sales of partner %d on %s: %w", partnerID, pool.Name, err)
		}
		rows, err = pool.Query(ctx, partnerRefundsSQL, partnerID, from, to)
		if err != nil {
			return nil, fmt.Errorf("refunds of partner %d on %s: %w", partnerID, pool.Name, err)
		}
		if _, err := pgx.ForEachRow(rows, []any{&currency, &count, &minor}, func() error {
			t := total(currency)
			t.RefundsCount += count
			t.RefundsMinor += minor
			return nil
		}); err != nil {
			return nil, fmt.Errorf("refunds of partner %d on %s: %w", partnerID, pool.Name, err)
		}
	}
	out := make([]PartnerTotal, 0, len(byCurrency))
	for _, t := range byCurrency {
		out = append(out, *t)
	}
	slices.SortFunc(out, func(a, b PartnerTotal) int { return strings.Compare(a.Currency, b.Currency) })
	return out, nil
}
