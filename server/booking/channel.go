package booking

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

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
// it at most once per statement, and not at all for the public.
func inChannel(alias, show, partner string) string {
	return `(` + alias + `.allocated_partner_id = ` + partner + ` OR (` + alias + `.allocated_partner_id IS NULL AND (` +
		partner + ` = 0 OR NOT EXISTS (
			SELECT FROM allocations
			WHERE show_id = ` + show + ` AND partner_id = ` + partner + ` AND status = 'active' AND NOT general_sale))))`
}

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
