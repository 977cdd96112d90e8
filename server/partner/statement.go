package partner

import (
	"context"
	"time"

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
	totals, err := s.sales.PartnerTotals(ctx, partnerID, from, to)
	if err != nil {
		return Statement{}, err
	}
	for _, t := range totals {
		st.Lines = append(st.Lines, StatementLine(t))
	}
	return st, nil
}
