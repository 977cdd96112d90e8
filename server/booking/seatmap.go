package booking

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/pg"
)

// Seat states as 2-bit codes (R-2: 2 bits per seat).
const (
	SeatAvailable = 0
	SeatHeld      = 1
	SeatBooked    = 2
)

// SeatMap is a show's layout and availability, read straight from its shard.
type SeatMap struct {
	ShowID   int64
	Currency string
	Sections []MapSection
	// States has one 2-bit code per seat in layout order.
	States  []byte
	GAAreas []MapArea
	Version int64
	// SeatCount is the number of seats in the layout.
	SeatCount int
	// AsOf is the time the holds were judged at: a held seat whose hold
	// ran out by then is shown available.
	AsOf time.Time
	// ValidUntil is when the first hold shown here runs out; from then on
	// the map is out of date although Version is not (a hold's lapse
	// changes no row). Zero when no seat is held.
	ValidUntil time.Time
	// SeatVersions is each seat's row version, in layout order, and
	// GAVersions each GA area's (the sum of its buckets'): the Redis map
	// takes a seat's or area's state only from a read at least as new
	// (decision 0130). Nil when not known.
	SeatVersions []int64
	GAVersions   []int64
	// Held lists the seats shown held and when each hold runs out, so the
	// Redis map can let a lapsed hold go without rereading the show.
	Held []HeldSeat
}

// HeldSeat is a seat shown held (by its place in layout order) and when
// its hold runs out.
type HeldSeat struct {
	Index int
	Until time.Time
}

// MapSection is a section of the layout.
type MapSection struct {
	Name       string
	PriceMinor int64
	Rows       []MapRow
}

// MapRow is a row of seats.
type MapRow struct {
	Label string
	Seats []string
}

// MapArea is a general-admission area and the places left in it.
type MapArea struct {
	Name       string
	Capacity   int
	Remaining  int
	PriceMinor int64
}

// SeatMap reads a show's seat map. A seat whose hold ran out is shown
// available; GA places of holds that ran out come back when the next
// hold or the sweeper reclaims them.
func (s *Service) SeatMap(ctx context.Context, showID int64) (SeatMap, error) {
	pool, err := s.shardOf(ctx, showID)
	if err != nil {
		return SeatMap{}, err
	}
	now := s.now()
	m := SeatMap{ShowID: showID, AsOf: now}
	err = pg.InTx(ctx, pool, func(tx pgx.Tx) error {
		// One snapshot for the seats, the GA areas and the version: read
		// committed would let a change land between the statements and pair
		// the states with a newer version, which the seat-map cache would
		// then keep forever (R-8.2: it only takes newer versions).
		if _, err := tx.Exec(ctx, `SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`); err != nil {
			return fmt.Errorf("read seat map: %w", err)
		}
		show, err := loadShow(ctx, tx, showID)
		if err != nil {
			return err
		}
		m.Currency = show.Currency
		rows, err := tx.Query(ctx, `
			SELECT s.seat, s.section, s.row_label, s.price_minor, `+seatStateColumns+`
			FROM seats s WHERE s.show_id = $2 ORDER BY s.position`, now, showID)
		if err != nil {
			return fmt.Errorf("read seats: %w", err)
		}
		var seat, section, row string
		var price int64
		var state byte
		var until *time.Time
		var version int64
		_, err = pgx.ForEachRow(rows, []any{&seat, &section, &row, &price, &state, &until, &version}, func() error {
			if until != nil {
				m.Held = append(m.Held, HeldSeat{Index: m.SeatCount, Until: until.UTC()})
				if m.ValidUntil.IsZero() || until.Before(m.ValidUntil) {
					m.ValidUntil = until.UTC()
				}
			}
			m.addSeat(seat, section, row, price, state)
			m.SeatVersions = append(m.SeatVersions, version)
			return nil
		})
		if err != nil {
			return fmt.Errorf("read seats: %w", err)
		}
		rows, err = tx.Query(ctx, `
			SELECT area, sum(capacity), coalesce(sum(remaining) FILTER (WHERE allocated_partner_id IS NULL), 0),
			       min(price_minor), sum(version) FROM ga_buckets
			WHERE show_id = $1 GROUP BY area ORDER BY min(position)`, showID)
		if err != nil {
			return fmt.Errorf("read GA areas: %w", err)
		}
		var a MapArea
		var av int64
		_, err = pgx.ForEachRow(rows, []any{&a.Name, &a.Capacity, &a.Remaining, &a.PriceMinor, &av}, func() error {
			m.GAAreas = append(m.GAAreas, a)
			m.GAVersions = append(m.GAVersions, av)
			return nil
		})
		if err != nil {
			return fmt.Errorf("read GA areas: %w", err)
		}
		m.Version, err = seatmapVersion(ctx, tx, showID)
		return err
	})
	return m, err
}

// addSeat appends a seat in layout order, opening sections and rows as they
// change, and packs its state four seats a byte, the first in the low bits.
func (m *SeatMap) addSeat(seat, section, row string, price int64, state byte) {
	if n := len(m.Sections); n == 0 || m.Sections[n-1].Name != section {
		m.Sections = append(m.Sections, MapSection{Name: section, PriceMinor: price})
	}
	sec := &m.Sections[len(m.Sections)-1]
	if n := len(sec.Rows); n == 0 || sec.Rows[n-1].Label != row {
		sec.Rows = append(sec.Rows, MapRow{Label: row})
	}
	r := &sec.Rows[len(sec.Rows)-1]
	i := m.SeatCount
	m.SeatCount++
	r.Seats = append(r.Seats, seat)
	if i%4 == 0 {
		m.States = append(m.States, 0)
	}
	m.States[i/4] |= state << (2 * (i % 4))
}

// SeatChange is the state of one seat as read now: its place in layout
// order, its 2-bit state, its row version and, while held, when the hold
// runs out.
type SeatChange struct {
	Index     int
	State     byte
	Version   int64
	HeldUntil time.Time
}

// AreaChange is the places left in one GA area (by layout order) and the
// area's version (the sum of its buckets' versions).
type AreaChange struct {
	Index     int
	Remaining int
	Version   int64
}

// SeatChanges is what the seat-map projector needs to bring a show's map up
// to date after events that named these seats (and GA areas, when ga).
type SeatChanges struct {
	Seats []SeatChange
	Areas []AreaChange
	AsOf  time.Time
}

// SeatChanges reads the current state of the named seats of a show, of the
// seats of the named orders' holds, and of its GA areas when ga is set: the
// rows an event batch touched, so the
// Redis map follows a change at the cost of the change, not of the show
// (decision 0130). Each row is read with its own version, so read
// committed is enough: the map takes a seat's state only from a read at
// least as new as the one it has. Unknown seat ids are skipped.
func (s *Service) SeatChanges(ctx context.Context, showID int64, seats, orders []string, ga bool) (SeatChanges, error) {
	pool, err := s.shardOf(ctx, showID)
	if err != nil {
		return SeatChanges{}, err
	}
	now := s.now()
	c := SeatChanges{AsOf: now}
	if len(seats) > 0 || len(orders) > 0 {
		rows, err := pool.Query(ctx, `
			SELECT s.position, `+seatStateColumns+`
			FROM seats s WHERE s.show_id = $2 AND s.seat = ANY($3)
			UNION
			SELECT s.position, `+seatStateColumns+`
			FROM orders o JOIN seats s ON s.hold_id = o.hold_id
			WHERE o.order_id = ANY($4) AND s.show_id = $2`, now, showID, seats, orders)
		if err != nil {
			return c, fmt.Errorf("read seats of show %d: %w", showID, err)
		}
		var sc SeatChange
		var until *time.Time
		_, err = pgx.ForEachRow(rows, []any{&sc.Index, &sc.State, &until, &sc.Version}, func() error {
			sc.HeldUntil = time.Time{}
			if until != nil {
				sc.HeldUntil = until.UTC()
			}
			c.Seats = append(c.Seats, sc)
			return nil
		})
		if err != nil {
			return c, fmt.Errorf("read seats of show %d: %w", showID, err)
		}
	}
	if ga {
		rows, err := pool.Query(ctx, `
			SELECT (dense_rank() OVER (ORDER BY min(position)))::int - 1,
			       coalesce(sum(remaining) FILTER (WHERE allocated_partner_id IS NULL), 0)::int, sum(version)::bigint
			FROM ga_buckets WHERE show_id = $1 GROUP BY area`, showID)
		if err != nil {
			return c, fmt.Errorf("read GA areas of show %d: %w", showID, err)
		}
		c.Areas, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (AreaChange, error) {
			var a AreaChange
			return a, r.Scan(&a.Index, &a.Remaining, &a.Version)
		})
		if err != nil {
			return c, fmt.Errorf("read GA areas of show %d: %w", showID, err)
		}
	}
	return c, nil
}

// ShowSeatChanges reads, like SeatChanges, the current rows of the named
// seats of many shows at once: one query per shard, however many shows a
// projector batch names (3,000 buses on sale each change a seat or two a
// batch; decision 0210). Shows that are not on a shard are left out.
func (s *Service) ShowSeatChanges(ctx context.Context, seats map[int64][]string) (map[int64]SeatChanges, error) {
	type ask struct {
		shows []int64
		seats []string
	}
	byShard := map[*pg.Pool]*ask{}
	now := s.now()
	out := make(map[int64]SeatChanges, len(seats))
	for showID, names := range seats {
		pool, err := s.shardOf(ctx, showID)
		if fault.ReasonOf(err) == fault.ShowNotFound {
			continue // not on a shard (yet): a read will load it
		}
		if err != nil {
			return nil, err
		}
		out[showID] = SeatChanges{AsOf: now}
		a := byShard[pool]
		if a == nil {
			a = &ask{}
			byShard[pool] = a
		}
		for _, seat := range names {
			a.shows = append(a.shows, showID)
			a.seats = append(a.seats, seat)
		}
	}
	for pool, a := range byShard {
		rows, err := pool.Query(ctx, showSeatChangesSQL, now, a.shows, a.seats)
		if err != nil {
			return nil, fmt.Errorf("read %d seats of shows: %w", len(a.seats), err)
		}
		var showID int64
		var sc SeatChange
		var until *time.Time
		_, err = pgx.ForEachRow(rows, []any{&showID, &sc.Index, &sc.State, &until, &sc.Version}, func() error {
			sc.HeldUntil = time.Time{}
			if until != nil {
				sc.HeldUntil = until.UTC()
			}
			c := out[showID]
			c.Seats = append(c.Seats, sc)
			out[showID] = c
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read %d seats of shows: %w", len(a.seats), err)
		}
	}
	return out, nil
}

// seatStateColumns are a seat's state on the public map, when its hold runs
// out and its row version, of the seats row s judged at $1: 2 for a seat
// booked or ring-fenced for a partner (decision 0185: the public cannot
// have it), 1 for one held that has not run out, else 0; the time only
// for a seat shown held. Every read of the map takes them from here: the
// projector's many-show read once had its own copy without allocations and
// showed an allocated seat free.
const seatStateColumns = `
	CASE WHEN s.status = 'booked' OR s.allocated_partner_id IS NOT NULL THEN 2
	     WHEN s.status = 'held' AND s.held_until >= $1 THEN 1
	     ELSE 0 END,
	CASE WHEN s.status = 'held' AND s.held_until >= $1 AND s.allocated_partner_id IS NULL THEN s.held_until END,
	s.version`

// showSeatChangesSQL is SeatChanges's seat read for pairs of ($2 show, $3
// seat), each found by the primary key.
const showSeatChangesSQL = `
	SELECT s.show_id, s.position, ` + seatStateColumns + `
	FROM unnest($2::bigint[], $3::text[]) AS w(show_id, seat)
	JOIN seats s ON s.show_id = w.show_id AND s.seat = w.seat`

// SectionSpan places a section in layout order: its seats are
// First … First+Count-1 of the availability.
type SectionSpan struct {
	Name       string
	PriceMinor int64
	First      int
	Count      int
}

// MapAvailability is the small part of a seat map, what a caller that
// already has the layout needs, plus enough of the layout to
// answer a section: its etag and where each section's seats start.
type MapAvailability struct {
	ShowID     int64
	Currency   string
	Version    int64
	SeatCount  int
	States     []byte
	GAAreas    []MapArea
	LayoutETag string
	Sections   []SectionSpan
}

// Availability returns m's small part.
func (m SeatMap) Availability() MapAvailability {
	return MapAvailability{ShowID: m.ShowID, Currency: m.Currency, Version: m.Version, SeatCount: m.SeatCount,
		States: m.States, GAAreas: m.GAAreas, LayoutETag: m.LayoutETag(), Sections: m.Spans()}
}

// Spans places each section of m in layout order.
func (m SeatMap) Spans() []SectionSpan {
	spans := make([]SectionSpan, 0, len(m.Sections))
	first := 0
	for _, s := range m.Sections {
		n := 0
		for _, r := range s.Rows {
			n += len(r.Seats)
		}
		spans = append(spans, SectionSpan{Name: s.Name, PriceMinor: s.PriceMinor, First: first, Count: n})
		first += n
	}
	return spans
}

// LayoutETag identifies m's layout (currency, sections, rows, seat ids,
// prices, GA areas and capacities): it changes exactly when the layout
// does, never with availability. GetSeatLayout sends it as its ETag, and a
// GetSeatMap caller that names it gets availability only.
func (m SeatMap) LayoutETag() string {
	h := sha256.New()
	field := func(s string) { fmt.Fprintf(h, "%d:%s;", len(s), s) }
	field(m.Currency)
	for _, s := range m.Sections {
		fmt.Fprintf(h, "S%d;", s.PriceMinor)
		field(s.Name)
		for _, r := range s.Rows {
			fmt.Fprintf(h, "R%d;", len(r.Seats))
			field(r.Label)
			for _, seat := range r.Seats {
				field(seat)
			}
		}
	}
	for _, a := range m.GAAreas {
		fmt.Fprintf(h, "G%d,%d;", a.Capacity, a.PriceMinor)
		field(a.Name)
	}
	sum := h.Sum(nil)
	return hex.EncodeToString(sum[:12])
}
