package booking

import (
	"context"
	"errors"
	"fmt"

	"github.com/seatghor/seatghor/server/shard"
)

// OrderPartners returns the partner (sales channel, shard migration 00055)
// of each of a show's orders that came through one; orders of Seatghor's
// own channel, and unknown ids, are left out. Outgoing webhooks read it to
// decide which partner an order's event concerns.
func (s *Service) OrderPartners(ctx context.Context, showID int64, orderIDs []string) (map[string]int64, error) {
	out := map[string]int64{}
	if len(orderIDs) == 0 {
		return out, nil
	}
	pool, err := s.router.ForShow(ctx, showID)
	if errors.Is(err, shard.ErrUnknownShow) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	rows, err := pool.Query(ctx, `
		SELECT order_id, partner_id FROM orders
		WHERE order_id = ANY($1) AND partner_id IS NOT NULL`, orderIDs)
	if err != nil {
		return nil, fmt.Errorf("partners of orders of show %d: %w", showID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var partner int64
		if err := rows.Scan(&id, &partner); err != nil {
			return nil, fmt.Errorf("partners of orders of show %d: %w", showID, err)
		}
		out[id] = partner
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("partners of orders of show %d: %w", showID, err)
	}
	return out, nil
}
