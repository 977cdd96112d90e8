package booking

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/pg"
)

// SectionSales is a section's (or a general-admission area's) places: on
// a trip with stops a place is a seat on one leg.
type SectionSales struct {
	Section string
	Places  int
	Sold    int
	Held    int
}

// ChannelSales is a channel's confirmed orders.
type ChannelSales struct {
	// Channel is "web", "partner" or "counter", as the manifest names
	// them (ticket.Channel).
	Channel     string
	Orders      int
	AmountMinor int64
}

// ShowSales is how a show is selling, read in one snapshot of its shard
// (the console's dashboard, decision 0447).
type ShowSales struct {
	ShowID   int64
	AsOf     time.Time
	Currency string
	// Sections in layout order, then the general-admission areas.
	Sections []SectionSales
	// Channels with confirmed orders: web, partner, counter.
	Channels []ChannelSales
}

// salesSQL counts a show's places by section: sold, and held by a hold
// that has not run out (an unpaid order's included); then its GA areas,
// whose places taken by confirmed orders are sold and the rest of those
// taken held.
const salesSQL = `
	SELECT section, count(*)::int,
	       count(*) FILTER (WHERE status = 'booked')::int,
	       count(*) FILTER (WHERE status = 'held' AND held_until > $2)::int
	FROM seats WHERE show_id = $1
	GROUP BY section ORDER BY min(position)`

const gaSalesSQL = `
	WITH sold AS (
		SELECT h.ga_area, sum(h.quantity)::int AS n
		FROM holds h JOIN orders o ON o.hold_id = h.hold_id
		WHERE h.show_id = $1 AND h.ga_area <> '' AND o.status = 'confirmed'
		GROUP BY h.ga_area)
	SELECT b.area, sum(b.capacity)::int, coalesce(max(s.n), 0),
	       (sum(b.capacity) - sum(b.remaining))::int - coalesce(max(s.n), 0)
	FROM ga_buckets b LEFT JOIN sold s ON s.ga_area = b.area
	WHERE b.show_id = $1
	GROUP BY b.area ORDER BY min(b.position)`

// channelSQL sums a show's confirmed orders by channel: a partner's carry
// its id, a counter's its shift.
const channelSQL = `
	SELECT CASE WHEN partner_id IS NOT NULL THEN 'partner'
	            WHEN counter_shift_id IS NOT NULL THEN 'counter' ELSE 'web' END AS channel,
	       count(*)::int, sum(amount_minor)::bigint
	FROM orders WHERE show_id = $1 AND status = 'confirmed'
	GROUP BY 1 ORDER BY 1 DESC`

// ShowSales reads how a show is selling. The caller checks who may ask.
func (s *Service) ShowSales(ctx context.Context, showID int64) (ShowSales, error) {
	pool, err := s.shardOf(ctx, showID)
	if err != nil {
		return ShowSales{}, err
	}
	out := ShowSales{ShowID: showID, AsOf: s.now()}
	err = pg.InTx(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`); err != nil {
			return err
		}
		show, err := loadShow(ctx, tx, showID)
		if err != nil {
			return err
		}
		out.Currency = show.Currency
		for _, q := range []struct {
			sql  string
			args []any
		}{{salesSQL, []any{showID, out.AsOf}}, {gaSalesSQL, []any{showID}}} {
			rows, err := tx.Query(ctx, q.sql, q.args...)
			if err != nil {
				return err
			}
			got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (SectionSales, error) {
				var x SectionSales
				return x, r.Scan(&x.Section, &x.Places, &x.Sold, &x.Held)
			})
			if err != nil {
				return err
			}
			out.Sections = append(out.Sections, got...)
		}
		rows, err := tx.Query(ctx, channelSQL, showID)
		if err != nil {
			return err
		}
		out.Channels, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (ChannelSales, error) {
			var c ChannelSales
			return c, r.Scan(&c.Channel, &c.Orders, &c.AmountMinor)
		})
		return err
	})
	if err != nil {
		return ShowSales{}, fmt.Errorf("sales of show %d: %w", showID, err)
	}
	return out, nil
}

// Occupancy is a show's places (seat-legs on a trip with stops, GA
// places): sold, and held by a hold that has not run out.
type Occupancy struct {
	Places, Sold, Held int
}

// occupancySQL is salesSQL and gaSalesSQL for many shows, by show.
const occupancySQL = `
	SELECT show_id, count(*)::int,
	       count(*) FILTER (WHERE status = 'booked')::int,
	       count(*) FILTER (WHERE status = 'held' AND held_until > $2)::int
	FROM seats WHERE show_id = ANY($1)
	GROUP BY show_id
	UNION ALL
	SELECT c.show_id, c.places, coalesce(s.n, 0), c.taken - coalesce(s.n, 0)
	FROM (SELECT show_id, sum(capacity)::int AS places, (sum(capacity) - sum(remaining))::int AS taken
	      FROM ga_buckets WHERE show_id = ANY($1) GROUP BY show_id) c
	LEFT JOIN (SELECT h.show_id, sum(h.quantity)::int AS n
	           FROM holds h JOIN orders o ON o.hold_id = h.hold_id
	           WHERE h.show_id = ANY($1) AND h.ga_area <> '' AND o.status = 'confirmed'
	           GROUP BY h.show_id) s ON s.show_id = c.show_id`

// ShowsOccupancy reads the places of many shows (an organisation's sales,
// decision 0451), asking each shard once. A show without places is absent.
// The caller checks who may ask.
func (s *Service) ShowsOccupancy(ctx context.Context, showIDs []int64) (map[int64]Occupancy, error) {
	byShard, err := s.router.Group(ctx, showIDs)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]Occupancy, len(showIDs))
	for pool, ids := range byShard {
		rows, err := pool.Query(ctx, occupancySQL, ids, s.now())
		if err != nil {
			return nil, fmt.Errorf("occupancy of %d shows on %s: %w", len(ids), pool.Name, err)
		}
		var id int64
		var o Occupancy
		if _, err := pgx.ForEachRow(rows, []any{&id, &o.Places, &o.Sold, &o.Held}, func() error {
			sum := out[id]
			out[id] = Occupancy{Places: sum.Places + o.Places, Sold: sum.Sold + o.Sold, Held: sum.Held + o.Held}
			return nil
		}); err != nil {
			return nil, fmt.Errorf("occupancy of %d shows on %s: %w", len(ids), pool.Name, err)
		}
	}
	return out, nil
}
