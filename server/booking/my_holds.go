package booking

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/pg"
)

// liveHoldsSQL reads an account's live holds: active, or ordered and
// awaiting payment, and not past their expiry (R-3.3: an expired one is
// free again before the sweeper marks it). A show's copy on a shard that
// is not (or no longer) its home is left out, so a show being moved
// (decision 0242) is not listed twice.
const liveHoldsSQL = `
	SELECT ` + holdColumns + ` FROM holds h LEFT JOIN orders o ON o.hold_id = h.hold_id
	WHERE h.user_id = $1 AND ($2::bigint IS NULL OR h.show_id = $2)
	  AND h.status IN ('active', 'ordered') AND h.expires_at >= $3
	  AND NOT EXISTS (SELECT FROM shows s WHERE s.show_id = h.show_id AND s.placement IN ('incoming', 'moved'))
	ORDER BY h.expires_at, h.hold_id`

// ListMyHolds returns the caller's live holds, of one show (showID > 0) or
// of every show, soonest expiry first (decision 0300). A page reloaded
// during a hold finds its hold here; an ordered one names its order. The
// per-account cap bounds the list per show.
func (s *Service) ListMyHolds(ctx context.Context, userID string, showID int64) ([]Hold, error) {
	pools := s.router.Shards()
	var show *int64
	if showID > 0 {
		pool, err := s.shardOf(ctx, showID)
		if err != nil {
			return nil, err
		}
		pools, show = []*pg.Pool{pool}, &showID
	}
	now := s.now()
	var all []Hold
	for _, pool := range pools {
		rows, err := pool.Query(ctx, liveHoldsSQL, userID, show, now)
		if err != nil {
			return nil, fmt.Errorf("list holds on %s: %w", pool.Name, err)
		}
		holds, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Hold, error) { return scanHold(r) })
		if err != nil {
			return nil, fmt.Errorf("list holds on %s: %w", pool.Name, err)
		}
		all = append(all, holds...)
	}
	slices.SortFunc(all, func(a, b Hold) int {
		if c := a.ExpiresAt.Compare(b.ExpiresAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	for i := range all {
		if err := s.describeHold(ctx, &all[i]); err != nil {
			return nil, err
		}
	}
	return all, nil
}
