package partner

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/fault"
)

// MaxStatementPeriod bounds a statement's period: a year and a day.
const MaxStatementPeriod = 366 * 24 * time.Hour

// Statement is a partner's account of [From, To).
type Statement struct {
	PartnerID     int64
	From, To      time.Time
	CommissionBps int32
	// Lines has one line per currency, by currency.
	Lines []StatementLine
}

// StatementLine sums one currency.
type StatementLine struct {
	Currency     string
	SalesCount   int64
	SalesMinor   int64
	RefundsCount int64
	RefundsMinor int64
}

// NetMinor is sales less refunds.
func (l StatementLine) NetMinor() int64 { return l.SalesMinor - l.RefundsMinor }

// CommissionMinor is the partner's commission on the net at bps, rounded
// toward zero once per line (not per order, so many small orders lose no
// fractions).
func (l StatementLine) CommissionMinor(bps int32) int64 {
	// Totals are bounded (decision 0071): net × 10000 fits in an int64.
	return l.NetMinor() * int64(bps) / 10000
}

// A sale is an order of the partner whose booking journal was posted in the
// period (payment.apply posts "booking:<order>" when the order is
// confirmed), so the statement and the ledger agree on what was sold when.
// The partner's orders are read by orders_by_partner (partner_id,
// created_at), up to the period's end: none made later can count.
const salesSQL = `
	SELECT o.currency, count(*), coalesce(sum(o.amount_minor), 0)::bigint
	FROM orders o JOIN ledger_transactions t ON t.txn_id = 'booking:' || o.order_id
	WHERE o.partner_id = $1 AND o.created_at < $3 AND t.created_at >= $2 AND t.created_at < $3
	GROUP BY o.currency`

// A refund is money given back for a sale: a cancellation or an admin's
// refund of a partner's order, counted when its refund journal was posted
// (when the gateway confirmed it). Refunds of captures that never became a
// sale (late or duplicate payments) are not the partner's.
const refundsSQL = `
	SELECT r.currency, count(*), coalesce(sum(r.amount_minor), 0)::bigint
	FROM orders o JOIN refunds r ON r.order_id = o.order_id
	     JOIN ledger_transactions t ON t.txn_id = 'refund:' || r.refund_id
	WHERE o.partner_id = $1 AND o.created_at < $3 AND r.reason IN ('cancellation', 'manual')
	  AND t.created_at >= $2 AND t.created_at < $3
	GROUP BY r.currency`

// Statement sums a partner's sales and refunds over [from, to) on every
// shard, with its current commission rate.
func (s *Service) Statement(ctx context.Context, partnerID int64, from, to time.Time) (Statement, error) {
	switch {
	case !from.Before(to):
		return Statement{}, &fault.Error{Reason: fault.PartnerInvalid, Field: "period_end", Message: "the period must end after it starts"}
	case to.Sub(from) > MaxStatementPeriod:
		return Statement{}, &fault.Error{Reason: fault.PartnerInvalid, Field: "period_end", Message: "a statement covers at most 366 days"}
	}
	p, err := s.GetPartner(ctx, partnerID)
	if err != nil {
		return Statement{}, err
	}
	st := Statement{PartnerID: partnerID, From: from.UTC(), To: to.UTC(), CommissionBps: p.CommissionBps}
	byCurrency := map[string]*StatementLine{}
	line := func(currency string) *StatementLine {
		l, ok := byCurrency[currency]
		if !ok {
			l = &StatementLine{Currency: currency}
			byCurrency[currency] = l
		}
		return l
	}
	for _, pool := range s.router.Shards() {
		var (
			currency     string
			count, minor int64
		)
		rows, err := pool.Query(ctx, salesSQL, partnerID, from, to)
		if err != nil {
			return Statement{}, fmt.Errorf("sales of partner %d on %s: %w", partnerID, pool.Name, err)
		}
		if _, err := pgx.ForEachRow(rows, []any{&currency, &count, &minor}, func() error {
			l := line(currency)
			l.SalesCount += count
			l.SalesMinor += minor
			return nil
		}); err != nil {
			return Statement{}, fmt.Errorf("sales of partner %d on %s: %w", partnerID, pool.Name, err)
		}
		rows, err = pool.Query(ctx, refundsSQL, partnerID, from, to)
		if err != nil {
			return Statement{}, fmt.Errorf("refunds of partner %d on %s: %w", partnerID, pool.Name, err)
		}
		if _, err := pgx.ForEachRow(rows, []any{&currency, &count, &minor}, func() error {
			l := line(currency)
			l.RefundsCount += count
			l.RefundsMinor += minor
			return nil
		}); err != nil {
			return Statement{}, fmt.Errorf("refunds of partner %d on %s: %w", partnerID, pool.Name, err)
		}
	}
	for _, l := range byCurrency {
		st.Lines = append(st.Lines, *l)
	}
	slices.SortFunc(st.Lines, func(a, b StatementLine) int { return strings.Compare(a.Currency, b.Currency) })
	return st, nil
}
