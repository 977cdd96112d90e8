package payment

import (
	"context"
	"fmt"
)

// ChargeProblem is an order whose charges break: a confirmed order
// (not free) without exactly one booking charge, any order with two, or an
// unpaid order with one.
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
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM orders`).Scan(&n); err != nil {
			return 0, nil, fmt.Errorf("charged once %s: %w", pool.Name, err)
		}
		orders += n
		rows, err := pool.Query(ctx, `
			SELECT o.order_id, o.status, count(p.payment_id)
			FROM orders o LEFT JOIN payments p ON p.order_id = o.order_id AND p.outcome = 'booked'
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
