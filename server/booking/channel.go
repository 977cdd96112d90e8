package booking

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

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

// inChannel is the condition that the row alias (a seat or a GA bucket)
// is one the caller's channel may hold (decision 0185). show and partner
// are the statement's placeholders of the show id and the caller's
// partner id (0 for Seatghor's own channel: the web, the apps, a user's
// token).
//
// The public holds general sale only: rows no allocation ring-fences. A
// partner holds its own allocation's rows, and general sale unless one of
// its live allocations of the show forbids it. The condition sits inside
// the hold's one conditional write, so it costs no round trip; the
// allocations subquery depends only on the parameters, so PostgreSQL runs
// it at most once per statement, and not at all for the public. It is a
// scalar subquery, not NOT EXISTS: where show and partner are columns (a
// batch of holds, decision 0270), PostgreSQL may run a correlated EXISTS
// as a hashed subplan that reads every live allocation of the shard.
func inChannel(alias, show, partner string) string {
	return `(` + alias + `.allocated_partner_id = ` + partner + ` OR (` + inPublicChannel(alias) + ` AND (` +
		partner + ` = 0 OR (
			SELECT true FROM allocations
			WHERE show_id = ` + show + ` AND partner_id = ` + partner + ` AND status = 'active' AND NOT general_sale
			LIMIT 1) IS NULL)))`
}

// inPublicChannel is inChannel for Seatghor's own channel (partner 0):
// the rows no allocation ring-fences. The pipelined and batch statements
// serve only it (a partner's hold takes the one-hold path, decision 0286).
func inPublicChannel(alias string) string { return alias + `.allocated_partner_id IS NULL` }

// mayHoldGeneralSale tells whether a partner may hold from general sale of
// a show: the Go form of inChannel's second half, for the GA path that
// chooses its buckets in Go (holdGASlow).
func mayHoldGeneralSale(ctx context.Context, tx pgx.Tx, showID, partnerID int64) (bool, error) {
	if partnerID == 0 {
		return true, nil
	}
	var forbidden bool
	err := tx.QueryRow(ctx, `
		SELECT EXISTS (SELECT FROM allocations
		               WHERE show_id = $1 AND partner_id = $2 AND status = 'active' AND NOT general_sale)`,
		showID, partnerID).Scan(&forbidden)
	if err != nil {
		return false, fmt.Errorf("read allocations of partner %d on show %d: %w", partnerID, showID, err)
	}
	return !forbidden, nil
}
