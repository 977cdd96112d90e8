package ledger

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// checkState is the result of the last check, which the collector reports.
type checkState struct {
	mu   sync.Mutex
	last *TrialBalance
	at   time.Time
}

// Check takes the trial balance over all shards now and keeps it for the
// metrics.
func (s *Service) Check(ctx context.Context) (TrialBalance, error) {
	tb, err := s.TrialBalance(ctx, nil, time.Time{})
	if err != nil {
		return TrialBalance{}, err
	}
	s.check.mu.Lock()
	s.check.last, s.check.at = &tb, s.clk.Now()
	s.check.mu.Unlock()
	return tb, nil
}

// RunChecker checks the ledger at once and then every interval until ctx
// ends (R-7.6; the workers role runs it). An unbalanced ledger is logged as
// an error and shows in the metrics, which the alerts watch.
func (s *Service) RunChecker(ctx context.Context, interval time.Duration, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		tb, err := s.Check(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Error("ledger check", "err", err)
		case err == nil && !tb.Balanced():
			log.Error("ledger does not balance (R-7.6)", "sum_minor", tb.SumMinor,
				"unbalanced_transactions", tb.UnbalancedJournals, "txn_ids", tb.UnbalancedTxnIDs)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

var (
	unbalancedDesc = prometheus.NewDesc("seatghor_ledger_unbalanced_transactions",
		"Ledger transactions whose lines do not sum to zero or are fewer than two, at the last check (R-7.6); must be 0.", nil, nil)
	trialBalanceDesc = prometheus.NewDesc("seatghor_ledger_trial_balance_minor",
		"Sum of all ledger lines per currency at the last check, in minor units; must be 0 (R-7.6).", []string{"currency"}, nil)
	accountBalanceDesc = prometheus.NewDesc("seatghor_ledger_account_balance_minor",
		"Balance of each ledger account at the last check, in minor units (debit +, credit -).", []string{"account", "currency"}, nil)
	checkedDesc = prometheus.NewDesc("seatghor_ledger_last_check_timestamp_seconds",
		"When the ledger was last checked; an old value means the checker is not running.", nil, nil)
)

// Collector returns the Prometheus collector of the last check's results;
// it reports nothing before the first check.
func (s *Service) Collector() prometheus.Collector { return collector{s} }

type collector struct{ s *Service }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- unbalancedDesc
	ch <- trialBalanceDesc
	ch <- accountBalanceDesc
	ch <- checkedDesc
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	c.s.check.mu.Lock()
	tb, at := c.s.check.last, c.s.check.at
	c.s.check.mu.Unlock()
	if tb == nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(unbalancedDesc, prometheus.GaugeValue, float64(tb.UnbalancedJournals))
	for _, t := range tb.Totals {
		ch <- prometheus.MustNewConstMetric(trialBalanceDesc, prometheus.GaugeValue, float64(t.SumMinor), t.Currency)
	}
	for _, a := range tb.Accounts {
		ch <- prometheus.MustNewConstMetric(accountBalanceDesc, prometheus.GaugeValue, float64(a.BalanceMinor), a.Account, a.Currency)
	}
	ch <- prometheus.MustNewConstMetric(checkedDesc, prometheus.GaugeValue, float64(at.UnixNano())/1e9)
}
