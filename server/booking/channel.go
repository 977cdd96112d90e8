package booking

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/pg"
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

// notInChannel returns those of seats (in their order) that the channel of
// partnerID may not hold (inChannel): what tells a hold refused for its
// channel from one that lost a race (decision 0325).
func notInChannel(ctx context.Context, tx pgx.Tx, showID, partnerID int64, seats []string) ([]string, error) {
	rows, err := tx.Query(ctx, `
		SELECT seat FROM seats s
		WHERE show_id = $1 AND seat = ANY($2) AND `+inChannel("s", "$1", "$3")+` IS NOT TRUE`, showID, seats, partnerID)
	if err != nil {
		return nil, fmt.Errorf("check the channel of seats: %w", err)
	}
	outside, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("check the channel of seats: %w", err)
	}
	var out []string
	for _, seat := range seats {
		if slices.Contains(outside, seat) {
			out = append(out, seat)
		}
	}
	return out, nil
}

// ChannelView is what a partner's channel sees of a show's seat map
// differently from the public, which is the map the read model keeps
// (decision 0324): the partner's allocated seats as they are (the public
// sees them taken), its GA quotas' places, and whether general sale is
// its to sell at all. Apply lays it over the public availability.
type ChannelView struct {
	// PartnerID is the channel, 0 for Seatghor's own (the public map).
	PartnerID int64
	// GeneralSale says whether the channel holds general sale: the public
	// always, a partner unless one of its live allocations of the show
	// forbids it (inChannel).
	GeneralSale bool
	// Seats are the partner's allocated seats, each by its place in
	// layout order (every leg's, on a trip with stops: an allocated seat
	// is the partner's on every leg, decision 0355), with its state as the
	// partner sees it.
	Seats []ChannelSeat
	// Areas are the places left in the partner's GA quotas, one per GA
	// area in layout order; nil when it has none.
	Areas []int
}

// ChannelSeat is a seat of a partner's allocation: its place in layout
// order and its 2-bit state (SeatAvailable, SeatHeld, SeatBooked).
type ChannelSeat struct {
	Index int
	State byte
}

// public says whether v is the public map: Seatghor's own channel, or a
// partner without a live allocation of the show.
func (v ChannelView) public() bool {
	return v.GeneralSale && len(v.Seats) == 0 && v.Areas == nil
}

// ChannelView reads how partnerID's channel sees the show differently from
// the public map: nothing for partner 0 or a partner without a live
// allocation of the show (one query), else its allocations' seats and GA
// places, read in one snapshot. A held seat whose hold ran out is free
// as on the public map.
func (s *Service) ChannelView(ctx context.Context, showID, partnerID int64) (ChannelView, error) {
	v := ChannelView{PartnerID: partnerID, GeneralSale: true}
	if partnerID == 0 {
		return v, nil
	}
	pool, err := s.shardOf(ctx, showID)
	if err != nil {
		return v, err
	}
	now := s.now()
	err = pg.InTx(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`); err != nil {
			return fmt.Errorf("read partner %d's view of show %d: %w", partnerID, showID, err)
		}
		var live int
		if err := tx.QueryRow(ctx, `
			SELECT count(*), coalesce(bool_and(general_sale), true) FROM allocations
			WHERE show_id = $1 AND partner_id = $2 AND status = 'active'`, showID, partnerID).Scan(&live, &v.GeneralSale); err != nil {
			return fmt.Errorf("read partner %d's allocations of show %d: %w", partnerID, showID, err)
		}
		if live == 0 {
			return nil // a seat or bucket is the partner's only while its allocation lives
		}
		rows, err := tx.Query(ctx, `
			SELECT s.position,
			       CASE WHEN s.status = 'booked' THEN 2
			            WHEN s.status = 'held' AND s.held_until >= $3 THEN 1
			            ELSE 0 END
			FROM allocations a JOIN seats s ON s.allocation_id = a.allocation_id AND s.show_id = a.show_id
			WHERE a.show_id = $1 AND a.partner_id = $2 AND a.status = 'active'
			ORDER BY s.position`, showID, partnerID, now)
		if err != nil {
			return fmt.Errorf("read partner %d's seats of show %d: %w", partnerID, showID, err)
		}
		var seat ChannelSeat
		if _, err := pgx.ForEachRow(rows, []any{&seat.Index, &seat.State}, func() error {
			v.Seats = append(v.Seats, seat)
			return nil
		}); err != nil {
			return fmt.Errorf("read partner %d's seats of show %d: %w", partnerID, showID, err)
		}
		rows, err = tx.Query(ctx, `
			SELECT coalesce(sum(remaining) FILTER (WHERE allocated_partner_id = $2), 0)::int
			FROM ga_buckets WHERE show_id = $1 GROUP BY area ORDER BY min(position)`, showID, partnerID)
		if err != nil {
			return fmt.Errorf("read partner %d's GA places of show %d: %w", partnerID, showID, err)
		}
		v.Areas, err = pgx.CollectRows(rows, pgx.RowTo[int])
		if err != nil {
			return fmt.Errorf("read partner %d's GA places of show %d: %w", partnerID, showID, err)
		}
		return nil
	})
	return v, err
}

// Apply returns a, the public availability, as v's channel sees it: with
// general sale closed to it, every seat taken (SeatBooked: another
// channel's, whether held or sold) and no general-sale GA places; its own
// seats in their states; its quotas' places added to its GA areas. a is
// not changed.
func (v ChannelView) Apply(a MapAvailability) MapAvailability {
	if v.public() {
		return a
	}
	states := make([]byte, len(a.States))
	if v.GeneralSale {
		copy(states, a.States)
	} else {
		for i := range states {
			states[i] = 0b10_10_10_10
		}
		// Past the last seat of each leg stays 0, as addSeat packs it.
		if r := a.SeatCount % 4; r != 0 {
			per := (a.SeatCount + 3) / 4
			for end := per; end <= len(states); end += per {
				states[end-1] &= byte(1<<(2*r)) - 1
			}
		}
	}
	for _, s := range v.Seats {
		// An index is a place of a leg (decision 0350): a seat of leg 0,
		// or of a later leg of a trip with stops.
		if s.Index < 0 || s.Index%Stride(a.SeatCount) >= a.SeatCount || s.Index/4 >= len(states) {
			continue // a layout the public map does not have yet
		}
		shift := 2 * (s.Index % 4)
		states[s.Index/4] = states[s.Index/4]&^(3<<shift) | s.State<<shift
	}
	areas := slices.Clone(a.GAAreas)
	for i := range areas {
		if !v.GeneralSale {
			areas[i].Remaining = 0
		}
		if i < len(v.Areas) {
			areas[i].Remaining += v.Areas[i]
		}
	}
	a.States, a.GAAreas = states, areas
	return a
}

// CounterView reads how an operator's counter sees the show differently
// from the public map: the seat legs a no-show left, which the public sees
// held, are free to the counter until they lapse to general sale
// (decision 0482). Nothing when there are none.
func (s *Service) CounterView(ctx context.Context, showID int64) (ChannelView, error) {
	v := ChannelView{GeneralSale: true}
	pool, err := s.shardOf(ctx, showID)
	if err != nil {
		return v, err
	}
	rows, err := pool.Query(ctx, `
		SELECT position FROM seats
		WHERE show_id = $1 AND status = 'held' AND hold_id LIKE '`+CounterHoldPrefix+`%' AND held_until >= $2
		ORDER BY position`, showID, s.now())
	if err != nil {
		return v, fmt.Errorf("read the counters' seats of show %d: %w", showID, err)
	}
	var seat ChannelSeat // State 0: free
	if _, err := pgx.ForEachRow(rows, []any{&seat.Index}, func() error {
		v.Seats = append(v.Seats, seat)
		return nil
	}); err != nil {
		return v, fmt.Errorf("read the counters' seats of show %d: %w", showID, err)
	}
	return v, nil
}
