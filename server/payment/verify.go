package payment

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/seatghor/seatghor/server/gateway"
)

// ChargeProblem is an order whose charges break: a confirmed order
// (not free, not paid in cash at a counter) without exactly one booking
// charge, any order with two, or an unpaid order with one.
type ChargeProblem struct {
	OrderID string
	Status  string
	Booked  int
}

// CheckChargedOnce looks at every order of every shard for charge problems
// (`seatghor verify`, after a restore): at most limit of them are returned.
// It reads every order, so it is an operator's tool, not a request's.
func (s *Service) CheckChargedOnce(ctx context.Context, limit int) (orders int64, problems []ChargeProblem, err error) {
	for _, pool := range s.router.Shards() {
		var n int64
		// A counter's cash order (decision 0443) is never charged through
		// the gateway: its money is its shift's, in the counter's ledger.
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM orders WHERE counter_shift_id IS NULL`).Scan(&n); err != nil {
			return 0, nil, fmt.Errorf("charged once %s: %w", pool.Name, err)
		}
		orders += n
		rows, err := pool.Query(ctx, `
			SELECT o.order_id, o.status, count(p.payment_id)
			FROM orders o LEFT JOIN payments p ON p.order_id = o.order_id AND p.outcome = 'booked'
			WHERE o.counter_shift_id IS NULL
			GROUP BY o.order_id, o.status, o.amount_minor
			HAVING count(p.payment_id) > 1
			    OR (o.status = 'confirmed' AND o.amount_minor > 0 AND count(p.payment_id) <> 1)
			    OR (o.status IN ('pending_payment', 'expired') AND count(p.payment_id) > 0)
			ORDER BY o.order_id
			LIMIT $1`, limit)
		if err != nil {
			return 0, nil, fmt.Errorf("charged once %s: %w", pool.Name, err)
		}
		for rows.Next() {
			var p ChargeProblem
			if err := rows.Scan(&p.OrderID, &p.Status, &p.Booked); err != nil {
				rows.Close()
				return 0, nil, fmt.Errorf("charged once %s: %w", pool.Name, err)
			}
			problems = append(problems, p)
		}
		if err := rows.Err(); err != nil {
			return 0, nil, fmt.Errorf("charged once %s: %w", pool.Name, err)
		}
	}
	if len(problems) > limit {
		problems = problems[:limit]
	}
	return orders, problems, nil
}

// Outstanding is what CheckSettled counts on every shard: once the gateway
// has nothing more to say, Open, Unknown, OpenRefunds, Unprocessed and
// EventsTwice are 0; FailedRefunds are money owed
// back that the gateway refused, alerted and kept apart (decision 0062),
// never lost.
type Outstanding struct {
	// Open is how many attempts are pending or unknown; Unknown is those
	// unknown.
	Open, Unknown int64
	// OpenRefunds are refunds the gateway has not answered for yet.
	OpenRefunds int64
	// FailedRefunds are refunds the gateway refused, owed to the buyer.
	FailedRefunds int64
	// Events is how many webhook events are stored; EventsTwice how many
	// gateway event ids are stored more than once (R-6.4: a redelivery is
	// a no-op); Unprocessed how many are not applied yet.
	Events, EventsTwice, Unprocessed int64
}

// CheckSettled counts the open attempts, refunds and events of every shard
// (`seatghor verify`, `seatghor chaos`).
func (s *Service) CheckSettled(ctx context.Context) (Outstanding, error) {
	var out Outstanding
	for _, pool := range s.router.Shards() {
		var st Outstanding
		if err := pool.QueryRow(ctx, `
			SELECT (SELECT count(*) FROM payments WHERE status IN ('pending', 'unknown')),
			       (SELECT count(*) FROM payments WHERE status = 'unknown'),
			       (SELECT count(*) FROM refunds WHERE status IN ('pending', 'unknown')),
			       (SELECT count(*) FROM refunds WHERE status = 'failed'),
			       (SELECT count(*) FROM payment_events),
			       (SELECT count(*) FROM (SELECT event->>'ID' FROM payment_events GROUP BY 1 HAVING count(*) > 1) twice),
			       (SELECT count(*) FROM payment_events WHERE processed_at IS NULL)`).Scan(
			&st.Open, &st.Unknown, &st.OpenRefunds, &st.FailedRefunds, &st.Events, &st.EventsTwice, &st.Unprocessed); err != nil {
			return out, fmt.Errorf("settlement of %s: %w", pool.Name, err)
		}
		out.Open += st.Open
		out.Unknown += st.Unknown
		out.OpenRefunds += st.OpenRefunds
		out.FailedRefunds += st.FailedRefunds
		out.Events += st.Events
		out.EventsTwice += st.EventsTwice
		out.Unprocessed += st.Unprocessed
	}
	return out, nil
}

// EventsStored counts the stored webhook events whose gateway event id is
// one of ids: a forged or stale event must never be.
func (s *Service) EventsStored(ctx context.Context, ids []string) (int64, error) {
	var total int64
	for _, pool := range s.router.Shards() {
		var n int64
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM payment_events WHERE event->>'ID' = ANY($1)`, ids).Scan(&n); err != nil {
			return 0, fmt.Errorf("events stored on %s: %w", pool.Name, err)
		}
		total += n
	}
	return total, nil
}

// KeptProblem is an order whose money at the gateway is not what its state
// says it should keep.
type KeptProblem struct {
	OrderID string
	Status  string
	// Expected is what the order should keep: its total when confirmed,
	// its cancellation fee when cancelled (less what admins gave back by
	// hand), else 0. Kept is what the gateway kept of its charges, less
	// what refunds the gateway refused owe the buyer.
	Expected, Kept int64
	// Captures is how many charges the gateway captured for it, Keeping
	// how many of them it keeps money of: a confirmed order keeps one.
	Captures, Keeping int
}

// KeptCheck is what CheckKept found.
type KeptCheck struct {
	// Orders is how many orders were compared, Charged how many of them
	// the gateway captured money for.
	Orders, Charged int
	// Owed is how many orders have a refund the gateway refused: the
	// money is owed and alerted (counted apart, decision 0062).
	Owed     int
	Problems []KeptProblem
	// Strays are payments of the report that are none of ours.
	Strays []string
}

// CheckKept compares every order of every shard paid through the gateway
// (not a counter's cash order) with the gateway's settlement report of
// [from, to) (R-6.10, after reconciliation): a confirmed order keeps one
// charge, whole, a cancelled one its
// cancellation fee, any other nothing; what a refund the gateway refused
// should have given back is owed, not kept. Run it once the payment jobs
// have settled everything (CheckSettled), over a period that holds every
// charge.
func (s *Service) CheckKept(ctx context.Context, from, to time.Time) (KeptCheck, error) {
	var out KeptCheck
	report, err := s.gw.Report(ctx, from, to)
	if err != nil {
		return out, fmt.Errorf("kept money: settlement report: %w", err)
	}
	byPayment := map[string][]gateway.Charge{}
	for _, c := range report.Charges {
		if c.Status == gateway.StatusSucceeded {
			byPayment[c.Reference] = append(byPayment[c.Reference], c)
		}
	}
	seen := map[string]bool{}
	for _, pool := range s.router.Shards() {
		rows, err := pool.Query(ctx, `
			SELECT o.order_id, o.status, o.amount_minor, o.cancellation_fee_minor,
			       coalesce((SELECT array_agg(p.payment_id) FROM payments p WHERE p.order_id = o.order_id), '{}'),
			       coalesce((SELECT jsonb_object_agg(r.gateway_charge_id, r.amount_minor) FROM refunds r
			                 WHERE r.order_id = o.order_id AND r.status = 'failed'), '{}'),
			       coalesce((SELECT sum(r.amount_minor) FROM refunds r
			                 WHERE r.order_id = o.order_id AND r.reason = 'manual' AND r.status IN ('succeeded', 'failed')), 0)
			FROM orders o
			WHERE o.counter_shift_id IS NULL -- cash at a counter: its shift's ledger, not the gateway's`)
		if err != nil {
			return out, fmt.Errorf("kept money on %s: %w", pool.Name, err)
		}
		for rows.Next() {
			var (
				id, status        string
				total, fee, given int64
				payments          []string
				failed            map[string]int64
			)
			if err := rows.Scan(&id, &status, &total, &fee, &payments, &failed, &given); err != nil {
				rows.Close()
				return out, fmt.Errorf("kept money on %s: %w", pool.Name, err)
			}
			out.Orders++
			p := KeptProblem{OrderID: id, Status: status}
			owed := false
			for _, pay := range payments {
				seen[pay] = true
				for _, c := range byPayment[pay] {
					kept := c.AmountMinor - c.RefundedMinor - failed[c.ID]
					owed = owed || failed[c.ID] > 0
					p.Kept += kept
					p.Captures++
					if kept != 0 {
						p.Keeping++
					}
				}
			}
			switch status {
			case "confirmed":
				p.Expected = total - given
			case "cancelled":
				p.Expected = max(0, min(fee, total-given))
			}
			if p.Captures > 0 {
				out.Charged++
			}
			if owed {
				out.Owed++
			}
			if p.Kept != p.Expected || p.Keeping > 1 || (status == "confirmed" && p.Expected > 0 && p.Keeping != 1) {
				out.Problems = append(out.Problems, p)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return out, fmt.Errorf("kept money on %s: %w", pool.Name, err)
		}
	}
	for ref := range byPayment {
		if !seen[ref] {
			out.Strays = append(out.Strays, ref)
		}
	}
	slices.Sort(out.Strays)
	return out, nil
}
