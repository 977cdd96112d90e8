package booking

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/fault"
)

// Inventory writes a new show's seats and GA buckets and counts the GA
// places left, for the catalog (catalog.Inventory): booking owns the seats
// and ga_buckets tables (docs/table-owners.txt), the catalog says what a
// show has. It has no state; the transactions and pools are the callers'.
type Inventory struct{}

// Provision writes one row per place of show's layout (catalog.Show.Places:
// its drawing, or straight rows of its sections), in layout order, with its
// deck, kind and seat class and, from a drawing, its position (decision
// 0370; straight rows have none: the venue map packs them to the screen), and each GA area's
// buckets, its capacity spread over them, in tx: the shard transaction
// that writes the show's terms. A bus trip with stops gets a row per seat
// and leg (decision 0350), each with the seat's kind (every leg's hold
// checks it), its stops and its fares (decision 0351); a seat's row of leg
// l is at position l × stride + its place in layout order (stride: the
// seats rounded up to a multiple of 4, so each leg's availability starts
// on a byte of the seat map's).
func (Inventory) Provision(ctx context.Context, tx pgx.Tx, s catalog.Show) error {
	type seat struct {
		id, section, row, class string
		price                   int64
		x, y                    *int
		deck                    int
		kind                    int16
	}
	var layout []seat
	for _, sec := range s.Places().Sections {
		for _, r := range sec.Rows {
			for _, p := range r.Seats {
				st := seat{id: p.Seat, section: sec.Name, row: r.Label, class: sec.SeatClass, price: sec.PriceMinor, deck: sec.Deck, kind: int16(p.Kind)}
				if s.Layout != nil {
					st.x, st.y = &p.X, &p.Y
				}
				layout = append(layout, st)
			}
		}
	}
	trip := s.Trip()
	stride := Stride(len(layout))
	seats := make([][]any, 0, len(layout)*trip.Legs())
	for leg := range trip.Legs() {
		for i, st := range layout {
			seats = append(seats, []any{s.ID, st.id, leg*stride + i, st.section, st.row, st.price, int16(leg), st.class,
				st.x, st.y, st.deck, st.kind})
		}
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"seats"},
		[]string{"show_id", "seat", "position", "section", "row_label", "price_minor", "leg", "seat_class", "x", "y", "deck", "kind"},
		pgx.CopyFromRows(seats)); err != nil {
		return fmt.Errorf("insert seats: %w", err)
	}
	if err := provisionTrip(ctx, tx, s.ID, trip, s.Fares); err != nil {
		return err
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

// Stride is how many places each leg takes in the seat map's per-leg
// availability of a show of seats seats: the seats rounded up to a
// multiple of 4, so that every leg starts on a byte (decision 0350).
func Stride(seats int) int { return (seats + 3) / 4 * 4 }

// provisionTrip writes a trip's stops and fares (by their stops' places in
// route order) in tx; nothing for a show without stops.
func provisionTrip(ctx context.Context, tx pgx.Tx, showID int64, trip catalog.Trip, fares []catalog.Fare) error {
	if len(trip.Stops) == 0 {
		return nil
	}
	stops := make([][]any, 0, len(trip.Stops))
	for i, st := range trip.Stops {
		counters, err := json.Marshal(st.Counters)
		if err != nil {
			return fmt.Errorf("encode the counters of stop %s: %w", st.StopID, err)
		}
		if st.Counters == nil {
			counters = []byte("[]")
		}
		stops = append(stops, []any{showID, int16(i), st.StopID, st.Place, st.PlaceID, st.Minutes, string(counters)})
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"trip_stops"},
		[]string{"show_id", "stop", "stop_id", "place", "place_id", "minutes", "counters"}, pgx.CopyFromRows(stops)); err != nil {
		return fmt.Errorf("insert stops: %w", err)
	}
	rows := make([][]any, 0, len(fares))
	for _, f := range fares {
		from, _ := trip.StopIndex(f.From)
		to, _ := trip.StopIndex(f.To)
		rows = append(rows, []any{showID, int16(from), int16(to), f.SeatClass, f.PriceMinor})
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"fares"},
		[]string{"show_id", "from_stop", "to_stop", "seat_class", "price_minor"}, pgx.CopyFromRows(rows)); err != nil {
		return fmt.Errorf("insert fares: %w", err)
	}
	return nil
}

// Retire implements catalog.Inventory: the show's seats and GA buckets are
// deleted in one statement that reports what they had (decision 0363). A
// hold that took a seat before the statement reached the seat's row is
// seen (the DELETE waits for it and returns the row it committed); one
// that comes after finds the seat gone and takes nothing. So "nothing
// held or sold" and "no seat left to hold" are one fact, whichever commits
// first. The holds and allocations the show ever had are counted after
// it, with every hold that took anything already committed. The caller
// rolls tx back when anything was found.
func (Inventory) Retire(ctx context.Context, tx pgx.Tx, showID int64) (catalog.Sales, error) {
	var s catalog.Sales
	err := tx.QueryRow(ctx, `
		WITH seats_gone AS (DELETE FROM seats WHERE show_id = $1 RETURNING seat, status, allocation_id),
		     buckets_gone AS (DELETE FROM ga_buckets WHERE show_id = $1
		                      RETURNING capacity - remaining AS taken, allocated_partner_id)
		SELECT (SELECT count(DISTINCT seat) FILTER (WHERE status = 'held') FROM seats_gone),
		       (SELECT count(DISTINCT seat) FILTER (WHERE status = 'booked') FROM seats_gone),
		       (SELECT coalesce(sum(taken), 0) FROM buckets_gone WHERE allocated_partner_id IS NULL),
		       (SELECT count(DISTINCT seat) FILTER (WHERE allocation_id IS NOT NULL) FROM seats_gone)
		         + (SELECT count(*) FILTER (WHERE allocated_partner_id IS NOT NULL) FROM buckets_gone)`, showID).
		Scan(&s.SeatsHeld, &s.SeatsSold, &s.PlacesTaken, &s.Allocated)
	if err != nil {
		return catalog.Sales{}, fmt.Errorf("retire the seats of show %d: %w", showID, err)
	}
	var allocations int
	if err := tx.QueryRow(ctx, `
		SELECT (SELECT count(*) FROM holds WHERE show_id = $1), (SELECT count(*) FROM allocations WHERE show_id = $1)`,
		showID).Scan(&s.Holds, &allocations); err != nil {
		return catalog.Sales{}, fmt.Errorf("count the holds of show %d: %w", showID, err)
	}
	s.Allocated += allocations
	return s, nil
}

// Reprice writes a section's new price to its seats (decision 0459). The
// section's seats are locked first: a hold that took one before commits
// first and the change is refused (fault.PriceFrozen), one that comes
// after waits and pays the new price, so the price a buyer is shown is
// the price of the order. A section that has its new price already (the
// same request again, after a crash before the catalog committed) is left
// as it is.
func (Inventory) Reprice(ctx context.Context, tx pgx.Tx, showID int64, p catalog.SectionPrice) error {
	var stale, taken int
	if err := tx.QueryRow(ctx, `
		SELECT count(*) FILTER (WHERE price_minor <> $3), count(*) FILTER (WHERE status <> 'available')
		FROM (SELECT price_minor, status FROM seats WHERE show_id = $1 AND section = $2 FOR UPDATE) s`,
		showID, p.Section, p.PriceMinor).Scan(&stale, &taken); err != nil {
		return fmt.Errorf("lock the seats of section %q: %w", p.Section, err)
	}
	switch {
	case stale == 0:
		return nil
	case taken > 0:
		return fault.OnField(fault.PriceFrozen, "section_prices", "section %q of show %d has %d seats held or sold: its price stays",
			p.Section, showID, taken)
	}
	if _, err := tx.Exec(ctx, `UPDATE seats SET price_minor = $3 WHERE show_id = $1 AND section = $2`,
		showID, p.Section, p.PriceMinor); err != nil {
		return fmt.Errorf("reprice section %q: %w", p.Section, err)
	}
	return nil
}

// RepriceArea writes a general-admission area's new price to its buckets
// (decision 0474), as Reprice does a section's: the buckets are locked
// first, and a place held or sold in any of them (a partner's allocated
// bucket too) refuses the change, since a hold's amount is its bucket's
// price when it is taken.
func (Inventory) RepriceArea(ctx context.Context, tx pgx.Tx, showID int64, p catalog.AreaPrice) error {
	var stale, taken int
	if err := tx.QueryRow(ctx, `
		SELECT count(*) FILTER (WHERE price_minor <> $3), coalesce(sum(capacity - remaining), 0)
		FROM (SELECT price_minor, capacity, remaining FROM ga_buckets WHERE show_id = $1 AND area = $2 FOR UPDATE) b`,
		showID, p.Area, p.PriceMinor).Scan(&stale, &taken); err != nil {
		return fmt.Errorf("lock the places of area %q: %w", p.Area, err)
	}
	switch {
	case stale == 0:
		return nil
	case taken > 0:
		return fault.OnField(fault.PriceFrozen, "ga_area_prices", "area %q of show %d has %d places held or sold: its price stays",
			p.Area, showID, taken)
	}
	if _, err := tx.Exec(ctx, `UPDATE ga_buckets SET price_minor = $3 WHERE show_id = $1 AND area = $2`,
		showID, p.Area, p.PriceMinor); err != nil {
		return fmt.Errorf("reprice area %q: %w", p.Area, err)
	}
	return nil
}
