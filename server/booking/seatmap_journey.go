package booking

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/fault"
)

// A trip's seat map keeps every leg's availability (SeatMap.States, leg by
// leg); a buyer sees one journey's (decision 0354): a seat is free for the
// journey from stop f to stop t when every leg f … t-1 of it is, held when
// none is sold but one is held, booked otherwise; and a seat whose class
// has no fare for the journey is shown booked (not sold for it). The RPC,
// the Redis read model and the API's fast path all answer a journey with
// MapAvailability.Journey, so they cannot differ.

// readFares reads a trip's fares, by stop places, in tx.
func readFares(ctx context.Context, tx pgx.Tx, showID int64) ([]MapFare, error) {
	rows, err := tx.Query(ctx, `
		SELECT from_stop, to_stop, seat_class, price_minor FROM fares
		WHERE show_id = $1 ORDER BY from_stop, to_stop, seat_class`, showID)
	if err != nil {
		return nil, fmt.Errorf("read the fares of show %d: %w", showID, err)
	}
	fares, err := pgx.CollectRows(rows, pgx.RowToStructByPos[MapFare])
	if err != nil {
		return nil, fmt.Errorf("read the fares of show %d: %w", showID, err)
	}
	return fares, nil
}

// journeyETag is the layout etag of the journey from stop from to stop to
// of a trip whose layout's etag is base: the journey's prices are its own
// layout.
func journeyETag(base string, from, to int) string {
	sum := sha256.Sum256([]byte(base + ";J" + strconv.Itoa(from) + "-" + strconv.Itoa(to)))
	return hex.EncodeToString(sum[:12])
}

// resolveJourney is the journey a seat-map read names by its stop ids
// (empty: the first stop, the last stop) on a trip whose stops are
// stopIDs: their places in route order. A show without stops has one
// journey, 0 → 1, and names none.
func resolveJourney(showID int64, stopIDs []string, from, to string) (int, int, error) {
	if len(stopIDs) == 0 {
		switch {
		case from != "":
			return 0, 0, fault.OnField(fault.BookingInvalid, "from_stop_id", "show %d has no stops; name none", showID)
		case to != "":
			return 0, 0, fault.OnField(fault.BookingInvalid, "to_stop_id", "show %d has no stops; name none", showID)
		}
		return 0, 1, nil
	}
	f, t := 0, len(stopIDs)-1
	if from != "" {
		if f = slices.Index(stopIDs, from); f < 0 {
			return 0, 0, fault.OnField(fault.BookingInvalid, "from_stop_id", "show %d has no stop %q", showID, from)
		}
	}
	if to != "" {
		if t = slices.Index(stopIDs, to); t < 0 {
			return 0, 0, fault.OnField(fault.BookingInvalid, "to_stop_id", "show %d has no stop %q", showID, to)
		}
	}
	if t <= f {
		return 0, 0, fault.OnField(fault.BookingInvalid, "to_stop_id", "stop %q is not after %q on the route", stopIDs[t], stopIDs[f])
	}
	return f, t, nil
}

// JourneyOf is the journey of a's show named by the stop ids from and to
// (empty: the first stop, the last stop): their places in route order.
func (a MapAvailability) JourneyOf(from, to string) (int, int, error) {
	return resolveJourney(a.ShowID, a.StopIDs, from, to)
}

// JourneyOf is the journey of m's show named by the stop ids from and to.
func (m SeatMap) JourneyOf(from, to string) (int, int, error) {
	return resolveJourney(m.ShowID, m.Trip.StopIDs(), from, to)
}

// farePrice is the price of a seat of class for the journey from → to:
// the class's fare, else the pair's fare for every class; false when the
// trip does not sell it.
func farePrice(fares []MapFare, from, to int, class string) (int64, bool) {
	price, ok := int64(0), false
	for _, f := range fares {
		if f.From != from || f.To != to {
			continue
		}
		switch f.SeatClass {
		case class:
			return f.PriceMinor, true
		case "":
			price, ok = f.PriceMinor, true
		}
	}
	return price, ok
}

// Journey is a's view of the journey from stop from to stop to (places in
// route order): one 2-bit state per seat, each section priced by its fare,
// the journey's layout etag. A show without stops has one journey, and a
// is its own view. A journey the trip sells no seat of is refused
// (JOURNEY_NOT_SOLD, decision 0352).
func (a MapAvailability) Journey(from, to int) (MapAvailability, error) {
	if len(a.StopIDs) == 0 {
		return a, nil
	}
	if from < 0 || to >= len(a.StopIDs) || from >= to {
		return a, fault.New(fault.BookingInvalid, "show %d has no journey from stop %d to %d", a.ShowID, from, to)
	}
	stride := Stride(a.SeatCount)
	states := make([]byte, (a.SeatCount+3)/4)
	code := func(place int) byte {
		if place/4 >= len(a.States) {
			return 0
		}
		return a.States[place/4] >> (2 * (place % 4)) & 3
	}
	for i := range a.SeatCount {
		var st byte
		for leg := from; leg < to; leg++ {
			st = max(st, code(leg*stride+i))
		}
		states[i/4] |= st << (2 * (i % 4))
	}
	spans := slices.Clone(a.Sections)
	sold := false
	for k, sec := range spans {
		price, ok := farePrice(a.Fares, from, to, sec.SeatClass)
		spans[k].PriceMinor = price
		if ok {
			sold = true
			continue
		}
		for i := sec.First; i < sec.First+sec.Count && i < a.SeatCount; i++ {
			states[i/4] |= SeatBooked << (2 * (i % 4)) // not sold for this journey
		}
	}
	if !sold {
		return a, fault.New(fault.JourneyNotSold, "show %d sells no seat from %s to %s", a.ShowID, a.StopIDs[from], a.StopIDs[to])
	}
	v := a
	v.States, v.Sections, v.Legs = states, spans, 0
	v.LayoutETag = journeyETag(a.LayoutETag, from, to)
	v.FromStopID, v.ToStopID = a.StopIDs[from], a.StopIDs[to]
	return v, nil
}

// Journey is m's view of the journey from stop from to stop to: its
// availability (MapAvailability.Journey) with the layout, each section
// priced by its fare. A show without stops is its own view.
func (m SeatMap) Journey(from, to int) (SeatMap, error) {
	if len(m.Trip.Stops) == 0 {
		return m, nil
	}
	a, err := m.Availability().Journey(from, to)
	if err != nil {
		return m, err
	}
	v := m
	v.States, v.Legs, v.From, v.To = a.States, 0, from, to
	v.Sections = slices.Clone(m.Sections)
	for k := range v.Sections {
		v.Sections[k].PriceMinor = a.Sections[k].PriceMinor
	}
	// Per-place facts of the whole map, not of a view.
	v.SeatVersions, v.Held = nil, nil
	return v, nil
}

// Places is how many places m's States holds: one per seat of one leg, or
// every leg's, the padding included (decision 0350).
func (m SeatMap) Places() int {
	if m.Legs <= 1 {
		return m.SeatCount
	}
	return m.Legs * Stride(m.SeatCount)
}
