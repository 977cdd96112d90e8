package booking

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/catalog"
)

// Inventory writes a new show's seats and GA buckets and counts the GA
// places left, for the catalog (catalog.Inventory): booking owns the seats
// and ga_buckets tables (docs/table-owners.txt), the catalog says what a
// show has. It has no state; the transactions and pools are the callers'.
type Inventory struct{}

// Provision writes one row per seat of show's sections, in order, and
// each GA area's buckets, its capacity spread over them, in tx: the shard
// transaction that writes the show's terms.
func (Inventory) Provision(ctx context.Context, tx pgx.Tx, s catalog.Show) error {
	var seats [][]any
	for _, sec := range s.Sections {
		for _, r := range sec.Rows {
			for n := 1; n <= sec.SeatsPerRow; n++ {
				seats = append(seats, []any{s.ID, fmt.Sprintf("%s%d", r, n), len(seats), sec.Name, r, sec.PriceMinor})
			}
		}
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"seats"},
		[]string{"show_id", "seat", "position", "section", "row_label", "price_minor"},
		pgx.CopyFromRows(seats)); err != nil {
		return fmt.Errorf("insert seats: %w", err)
	}
	var buckets [][]any
	for pos, a := range s.GAAreas {
		for b := range a.Buckets {
			capacity := a.Capacity / a.Buckets
			if b < a.Capacity%a.Buckets {
				capacity++
			}
			buckets = append(buckets, []any{s.ID, a.Name, b, pos, capacity, capacity, a.PriceMinor})
		}
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"ga_buckets"},
		[]string{"show_id", "area", "bucket", "position", "capacity", "remaining", "price_minor"},
		pgx.CopyFromRows(buckets)); err != nil {
		return fmt.Errorf("insert GA buckets: %w", err)
	}
	return nil
}

// GAPlacesLeft counts the places of each GA area of a show left for general
// sale, outside partners' allocations (decision 0185), on q, its shard. An
// area with no bucket is missing from the map.
func (Inventory) GAPlacesLeft(ctx context.Context, q catalog.Querier, showID int64) (map[string]int, error) {
	rows, err := q.Query(ctx, `
		SELECT area, coalesce(sum(remaining) FILTER (WHERE allocated_partner_id IS NULL), 0)
		FROM ga_buckets WHERE show_id = $1 GROUP BY area`, showID)
	if err != nil {
		return nil, fmt.Errorf("read GA places of show %d: %w", showID, err)
	}
	left := map[string]int{}
	var (
		area      string
		remaining int
	)
	if _, err := pgx.ForEachRow(rows, []any{&area, &remaining}, func() error {
		left[area] = remaining
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read GA places of show %d: %w", showID, err)
	}
	return left, nil
}
