package booking

import (
	"context"
	"fmt"
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
	var n int64
	err = pool.QueryRow(ctx, `
		SELECT (SELECT count(*) FROM seats
		        WHERE show_id = $1 AND (status = 'available' OR (status = 'held' AND held_until < $2))
		          AND allocated_partner_id IS NULL)
		     + (SELECT coalesce(sum(remaining), 0) FROM ga_buckets WHERE show_id = $1 AND allocated_partner_id IS NULL)
		     + (SELECT coalesce(sum(quantity), 0) FROM holds
		        WHERE show_id = $1 AND ga_area <> '' AND status IN ('active', 'ordered') AND expires_at < $2)`,
		showID, s.now()).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count what is available of show %d: %w", showID, err)
	}
	return n, nil
}
