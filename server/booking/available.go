package booking

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/pg"
)

// Available counts what of a show can be held now: free seats (a seat whose
// hold ran out is free, R-3.3) and general-admission places, including the
// places of lapsed GA holds the sweeper has not given back yet; general sale
// only, since a partner's allocation is not for the public (decision 0185).
// The waiting room's admission controller reads it to stop admission when nothing is
// left and to reopen when holds come back. It is a count at one
// instant, not a promise: the hold's conditional write still decides.
func (s *Service) Available(ctx context.Context, showID int64) (int64, error) {
	pool, err := s.shardOf(ctx, showID)
	if err != nil {
		return 0, err
	}
	var id, n int64
	err = pool.QueryRow(ctx, availableSQL, []int64{showID}, s.now()).Scan(&id, &n)
	if err != nil {
		return 0, fmt.Errorf("count what is available of show %d: %w", showID, err)
	}
	return n, nil
}

// AvailableMany is Available for many shows at once: one query per shard,
// however many shows a trip-index batch names (3,000 buses on sale;
// decision 0246). Shows that are not on a shard are left out.
func (s *Service) AvailableMany(ctx context.Context, showIDs []int64) (map[int64]int64, error) {
	byShard := map[*pg.Pool][]int64{}
	for _, id := range showIDs {
		pool, err := s.shardOf(ctx, id)
		if fault.ReasonOf(err) == fault.ShowNotFound {
			continue
		}
		if err != nil {
			return nil, err
		}
		byShard[pool] = append(byShard[pool], id)
	}
	now := s.now()
	out := make(map[int64]int64, len(showIDs))
	for pool, ids := range byShard {
		rows, err := pool.Query(ctx, availableSQL, ids, now)
		if err != nil {
			return nil, fmt.Errorf("count what is available of %d shows: %w", len(ids), err)
		}
		var id, n int64
		if _, err := pgx.ForEachRow(rows, []any{&id, &n}, func() error { out[id] = n; return nil }); err != nil {
			return nil, fmt.Errorf("count what is available of %d shows: %w", len(ids), err)
		}
	}
	return out, nil
}

// availableSQL counts, for each show of $1 at $2, the free seats (a seat
// of a trip with stops when any of its legs is free, decision 0350; a
// blocked place, the crew's, never is), the
// GA places left and those of lapsed GA holds (see Available).
const availableSQL = `
	SELECT want.show_id,
	       (SELECT count(DISTINCT seat) FROM seats
	        WHERE show_id = want.show_id AND (status = 'available' OR (status = 'held' AND held_until < $2))
	          AND allocated_partner_id IS NULL AND kind <> ` + blockedKind + `)
	     + (SELECT coalesce(sum(remaining), 0) FROM ga_buckets WHERE show_id = want.show_id AND allocated_partner_id IS NULL)
	     + (SELECT coalesce(sum(quantity), 0) FROM holds
	        WHERE show_id = want.show_id AND ga_area <> '' AND status IN ('active', 'ordered') AND expires_at < $2)
	FROM unnest($1::bigint[]) AS want(show_id)`
