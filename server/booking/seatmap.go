package booking

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/catalog"
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
	// States has one 2-bit code per seat in layout order, leg by leg on a
	// trip with stops (decision 0350): the seats of leg 0, then of leg 1
	// from place Stride(SeatCount), and so on (each leg starts on a byte);
	// Legs says how many. A seat's row of leg l is place l × stride + its
	// place in layout order: its position on the shard. A venue, and a
	// trip without stops, has one leg, one code per seat. A journey's view
	// (Journey) has one code per seat again.
	States []byte
	// Legs is how many legs States holds when more than one (0: one, a
	// venue's, a trip's without stops, or a journey's view).
	Legs    int
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
	// Decks and Features are what the show draws besides its places
	// (decision 0370): none for a show made before layouts.
	Decks    []catalog.Deck
	Features []catalog.Feature
	// Trip is a bus trip's stops, departure and zone (no stops: one leg,
	// priced by the sections); Fares its prices per stop pair and class
	// (decision 0352).
	Trip  catalog.Trip
	Fares []MapFare
	// From and To are the journey a view shows (Journey: stops in route
	// order); both 0 on the whole map.
	From, To int
}

// MapFare is a fare of a trip: the price of one seat of a class (empty:
// every class without its own) from stop From to stop To (places in route
// order).
type MapFare struct {
	From       int    `json:"from"`
	To         int    `json:"to"`
	SeatClass  string `json:"seat_class,omitempty"`
	PriceMinor int64  `json:"price_minor"`
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
	// NameBn, Deck and SeatClass are the section's Bengali name, deck and
	// seat class (decision 0370): the class a trip's fares name; empty: its
	// only class.
	NameBn    string `json:",omitempty"`
	Deck      int    `json:",omitempty"`
	SeatClass string `json:",omitempty"`
}

// MapRow is a row of seats.
type MapRow struct {
	Label string
	Seats []string
	// X and Y are the seats' centres in layout units, in the order of
	// Seats; nil when a seat of the row has no position (a show made
	// before layouts). Kinds are their kinds; nil when all are ordinary.
	X     []int32            `json:",omitempty"`
	Y     []int32            `json:",omitempty"`
	Kinds []catalog.SeatKind `json:",omitempty"`
	// unplaced: a seat of the row has no position.
	unplaced bool
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
		drawing, err := readDrawing(ctx, tx, showID)
		if err != nil {
			return err
		}
		m.Decks, m.Features = drawing.Decks, drawing.Features
		if m.Trip, err = readTrip(ctx, tx, showID); err != nil {
			return err
		}
		if len(m.Trip.Stops) > 0 {
			if m.Fares, err = readFares(ctx, tx, showID); err != nil {
				return err
			}
		}
		// Leg 0's rows first (positions 0 … n-1: the layout), then each
		// other leg's at its place (decision 0350).
		rows, err := tx.Query(ctx, `
			SELECT s.seat, s.section, s.row_label, s.price_minor, s.seat_class, s.leg, s.position, s.x, s.y, s.kind,
			       `+seatStateColumns+`
			FROM seats s WHERE s.show_id = $2 ORDER BY s.position`, now, showID)
		if err != nil {
			return fmt.Errorf("read seats: %w", err)
		}
		var seat, section, row, class string
		var price int64
		var leg, pos int
		var x, y *int32
		var kind int16
		var state byte
		var until *time.Time
		var version int64
		_, err = pgx.ForEachRow(rows, []any{&seat, &section, &row, &price, &class, &leg, &pos, &x, &y, &kind, &state, &until, &version}, func() error {
			if leg == 0 {
				m.addSeat(seat, section, row, price, state)
				m.placeSeat(x, y, catalog.SeatKind(kind))
				m.Sections[len(m.Sections)-1].SeatClass = class
			} else {
				m.setPlace(pos, state)
				m.Legs = max(m.Legs, leg+1)
			}
			if until != nil {
				m.Held = append(m.Held, HeldSeat{Index: pos, Until: until.UTC()})
				if m.ValidUntil.IsZero() || until.Before(m.ValidUntil) {
					m.ValidUntil = until.UTC()
				}
			}
			for len(m.SeatVersions) <= pos {
				m.SeatVersions = append(m.SeatVersions, 0)
			}
			m.SeatVersions[pos] = version
			return nil
		})
		if err != nil {
			return fmt.Errorf("read seats: %w", err)
		}
		m.finishLayout(drawing)
		if m.Legs > 1 {
			// Every leg's places, the padding at the end of each included.
			places := m.Legs * Stride(m.SeatCount)
			m.States = append(m.States, make([]byte, places/4-len(m.States))...)
			m.SeatVersions = append(m.SeatVersions, make([]int64, places-len(m.SeatVersions))...)
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

// setPlace sets the state of place i (a seat of a leg after the first),
// growing States to it.
func (m *SeatMap) setPlace(i int, state byte) {
	for len(m.States) <= i/4 {
		m.States = append(m.States, 0)
	}
	m.States[i/4] |= state << (2 * (i % 4))
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
	m.setPlace(i, state)
}

// placeSeat gives the seat addSeat added last its position and kind.
func (m *SeatMap) placeSeat(x, y *int32, kind catalog.SeatKind) {
	sec := &m.Sections[len(m.Sections)-1]
	r := &sec.Rows[len(sec.Rows)-1]
	switch {
	case x == nil || y == nil:
		r.unplaced, r.X, r.Y = true, nil, nil
	case !r.unplaced:
		r.X, r.Y = append(r.X, *x), append(r.Y, *y)
	}
	r.Kinds = append(r.Kinds, kind)
}

// finishLayout drops the kinds of rows whose seats are all ordinary, and
// gives each section what the show's drawing says of it.
func (m *SeatMap) finishLayout(d catalog.Drawing) {
	for si := range m.Sections {
		sec := &m.Sections[si]
		for ri := range sec.Rows {
			r := &sec.Rows[ri]
			if !slices.ContainsFunc(r.Kinds, func(k catalog.SeatKind) bool { return k != catalog.KindOrdinary }) {
				r.Kinds = nil
			}
			// unplaced only steers placeSeat while the rows are read: X
			// nil says the same from here on, to a map read back from
			// Redis too.
			r.unplaced = false
		}
		if i := slices.IndexFunc(d.Sections, func(s catalog.DrawingSection) bool { return s.Name == sec.Name }); i >= 0 {
			sec.NameBn, sec.Deck, sec.SeatClass = d.Sections[i].NameBn, d.Sections[i].Deck, d.Sections[i].SeatClass
		}
	}
}

// readDrawing reads what the show draws besides its seats (decision 0370);
// nothing for a show made before layouts.
func readDrawing(ctx context.Context, tx pgx.Tx, showID int64) (catalog.Drawing, error) {
	var (
		d   catalog.Drawing
		raw []byte
	)
	if err := tx.QueryRow(ctx, `SELECT drawing FROM shows WHERE show_id = $1`, showID).Scan(&raw); err != nil {
		return d, fmt.Errorf("read the drawing of show %d: %w", showID, err)
	}
	if raw == nil {
		return d, nil
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return d, fmt.Errorf("decode the drawing of show %d: %w", showID, err)
	}
	return d, nil
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
// have it) and for a crew or blocked seat (never sold, decision 0371), 1
// for one held that has not run out, else 0; the time only
// for a seat shown held. Every read of the map takes them from here: the
// projector's many-show read once had its own copy without allocations and
// showed an allocated seat free.
const seatStateColumns = `
	CASE WHEN s.status = 'booked' OR s.allocated_partner_id IS NOT NULL OR s.kind = ` + blockedKind + ` THEN 2
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
	// SeatClass is the class a trip's fares name (decision 0352).
	SeatClass string `json:",omitempty"`
}

// MapAvailability is the small part of a seat map, what a caller that
// already has the layout needs, plus enough of the layout to
// answer a section: its etag and where each section's seats start; and on
// a trip with stops, enough to answer a journey (Journey): its legs, stop
// ids and fares.
type MapAvailability struct {
	ShowID     int64
	Currency   string
	Version    int64
	SeatCount  int
	States     []byte
	GAAreas    []MapArea
	LayoutETag string
	Sections   []SectionSpan
	// Legs is how many legs States holds when more than one
	// (SeatMap.States); StopIDs and Fares are a trip's with stops (none
	// for a venue).
	Legs    int
	StopIDs []string
	Fares   []MapFare
	// FromStopID and ToStopID are the journey of a view (Journey).
	FromStopID, ToStopID string
	// ValidUntil is when the first hold shown runs out (zero: none);
	// after it the answer is out of date.
	ValidUntil time.Time
}

// Availability returns m's small part.
func (m SeatMap) Availability() MapAvailability {
	a := MapAvailability{ShowID: m.ShowID, Currency: m.Currency, Version: m.Version, SeatCount: m.SeatCount,
		States: m.States, GAAreas: m.GAAreas, LayoutETag: m.LayoutETag(), Sections: m.Spans(), Legs: m.Legs,
		Fares: m.Fares, ValidUntil: m.ValidUntil}
	if len(m.Trip.Stops) > 0 {
		a.StopIDs = m.Trip.StopIDs()
		if m.From != m.To {
			a.FromStopID, a.ToStopID = a.StopIDs[m.From], a.StopIDs[m.To]
		}
	}
	return a
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
		spans = append(spans, SectionSpan{Name: s.Name, PriceMinor: s.PriceMinor, First: first, Count: n, SeatClass: s.SeatClass})
		first += n
	}
	return spans
}

// LayoutETag identifies m's layout (currency, sections, rows, seat ids,
// prices, GA areas and capacities): it changes exactly when the layout
// does, never with availability. GetSeatLayout sends it as its ETag, and a
// GetSeatMap caller that names it gets availability only. On a trip with
// stops it names the trip's layout (its stops and fares included, the
// sections' prices not: fares price it) and, on a journey's view, the
// journey (journeyETag): each journey is a layout of its own prices.
func (m SeatMap) LayoutETag() string {
	h := sha256.New()
	field := func(s string) { fmt.Fprintf(h, "%d:%s;", len(s), s) }
	trip := len(m.Trip.Stops) > 0
	field(m.Currency)
	for _, s := range m.Sections {
		if trip {
			fmt.Fprintf(h, "C%d;", s.Deck)
		} else {
			fmt.Fprintf(h, "S%d,%d;", s.PriceMinor, s.Deck)
		}
		field(s.Name)
		field(s.NameBn)
		field(s.SeatClass)
		for _, r := range s.Rows {
			fmt.Fprintf(h, "R%d;", len(r.Seats))
			field(r.Label)
			for _, seat := range r.Seats {
				field(seat)
			}
			fmt.Fprintf(h, "P%v%v;K%v;", r.X, r.Y, r.Kinds)
		}
	}
	for _, d := range m.Decks {
		fmt.Fprintf(h, "D%d,%d;", d.Width, d.Height)
		field(d.Name)
		field(d.NameBn)
	}
	for _, f := range m.Features {
		fmt.Fprintf(h, "F%d,%d,%d,%d,%d,%d;", f.Kind, f.Deck, f.X, f.Y, f.Width, f.Height)
		field(f.Label)
		field(f.LabelBn)
	}
	for _, a := range m.GAAreas {
		fmt.Fprintf(h, "G%d,%d;", a.Capacity, a.PriceMinor)
		field(a.Name)
	}
	if trip {
		fmt.Fprintf(h, "T%d;", m.Trip.StartsAt.UnixMicro())
		field(m.Trip.TimeZone)
		for _, st := range m.Trip.Stops {
			fmt.Fprintf(h, "P%d;", st.Minutes)
			field(st.StopID)
			field(st.Place)
			// Field by field: a stop read back from Redis has nil counters
			// where the shard's has none.
			for _, c := range st.Counters {
				fmt.Fprintf(h, "c%t,%t,%d;", c.Boarding, c.Dropping, c.Minutes)
				for _, f := range []string{c.ID, c.Name, c.NameBn, c.Address, c.AddressBn} {
					field(f)
				}
			}
		}
		for _, f := range m.Fares {
			fmt.Fprintf(h, "F%d,%d,%d;", f.From, f.To, f.PriceMinor)
			field(f.SeatClass)
		}
	}
	sum := h.Sum(nil)
	base := hex.EncodeToString(sum[:12])
	if trip && m.From != m.To {
		return journeyETag(base, m.From, m.To)
	}
	return base
}
