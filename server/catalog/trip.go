package catalog

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	"github.com/seatghor/seatghor/server/amount"
	"github.com/seatghor/seatghor/server/display"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/place"
)

// A bus trip with stops (issue 24) is sold per leg, the stretch between two
// consecutive stops (decision 0350), and priced per stop pair and seat
// class (its fares). A trip without stops, and every venue, is one leg.

// TripStop is a stop of a bus trip, in route order.
type TripStop struct {
	// StopID is unique on the trip; the gazetteer's place id by default.
	StopID string `json:"stop_id"`
	// Place is the official name of a known place, or the text as given.
	Place   string `json:"place"`
	PlaceID string `json:"place_id,omitempty"`
	// Minutes from the trip's departure to the coach leaving the stop
	// (reaching it, for the last): 0 for the first, growing.
	Minutes  int       `json:"minutes"`
	Counters []Counter `json:"counters,omitempty"`
}

// Counter is an operator's counter at a stop: a boarding or dropping point.
// Its JSON is what the shard's hold checks by containment ({"id": …,
// "boarding": true}), so id, boarding and dropping are always written.
type Counter struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	NameBn    string `json:"name_bn,omitempty"`
	Address   string `json:"address,omitempty"`
	AddressBn string `json:"address_bn,omitempty"`
	Boarding  bool   `json:"boarding"`
	Dropping  bool   `json:"dropping"`
	// Minutes after the trip's departure that the coach is at the counter.
	Minutes int `json:"minutes"`
}

// Fare is the price of one seat of a class from one stop to a later one.
type Fare struct {
	From       string `json:"from"`
	To         string `json:"to"`
	SeatClass  string `json:"seat_class,omitempty"`
	PriceMinor int64  `json:"price_minor"`
}

// Trip is what a buyer reads of a trip's stops: their times are its
// departure plus their minutes, in its zone.
type Trip struct {
	StartsAt time.Time
	TimeZone string
	Stops    []TripStop
}

// Trip is s's stops with its departure and zone.
func (s Show) Trip() Trip { return Trip{StartsAt: s.StartsAt, TimeZone: s.TimeZone, Stops: s.Stops} }

// Legs is how many legs the trip is sold in: one per pair of consecutive
// stops, and one for a trip without stops (or a venue).
func (t Trip) Legs() int { return max(1, len(t.Stops)-1) }

// StopIndex is the place of stop id in route order; false when the trip
// has no such stop.
func (t Trip) StopIndex(id string) (int, bool) {
	for i, s := range t.Stops {
		if s.StopID == id {
			return i, true
		}
	}
	return 0, false
}

// StopIDs lists the trip's stop ids in route order.
func (t Trip) StopIDs() []string {
	ids := make([]string, len(t.Stops))
	for i, s := range t.Stops {
		ids[i] = s.StopID
	}
	return ids
}

func (t Trip) at(minutes int) time.Time { return t.StartsAt.Add(time.Duration(minutes) * time.Minute) }

// StopsProto is the trip's stops as the API answers them: times in its zone.
func (t Trip) StopsProto() []*catalogv1.TripStop {
	loc := display.ZoneOrDefault(t.TimeZone)
	out := make([]*catalogv1.TripStop, 0, len(t.Stops))
	for _, s := range t.Stops {
		at := t.at(s.Minutes)
		p := &catalogv1.TripStop{StopId: s.StopID, Place: s.Place, PlaceId: s.PlaceID, PlaceBengali: place.Bengali(s.Place),
			MinutesFromStart: int32(s.Minutes), DepartsAt: timestamppb.New(at), DepartsAtLocal: display.LocalTime(at, loc)}
		for _, c := range s.Counters {
			cat := t.at(c.Minutes)
			p.Counters = append(p.Counters, &catalogv1.Counter{CounterId: c.ID, Name: c.Name, NameBn: c.NameBn,
				Address: c.Address, AddressBn: c.AddressBn, Boarding: c.Boarding, Dropping: c.Dropping,
				MinutesAfterDeparture: int32(c.Minutes), At: timestamppb.New(cat), AtLocal: display.LocalTime(cat, loc)})
		}
		out = append(out, p)
	}
	return out
}

// JourneyProto is the journey from stop from to stop to (places in route
// order) with its counters, as buyers read it: names in both languages,
// the departure from the boarding stop, the arrival at the dropping one
// and the counters' times, in the trip's zone. Nil for a trip without
// stops, or stops it does not have.
func (t Trip) JourneyProto(from, to int, boarding, dropping string) *commonv1.Journey {
	if from < 0 || to >= len(t.Stops) || from >= to {
		return nil
	}
	loc := display.ZoneOrDefault(t.TimeZone)
	f, d := t.Stops[from], t.Stops[to]
	departs, arrives := t.at(f.Minutes), t.at(d.Minutes)
	j := &commonv1.Journey{FromStopId: f.StopID, ToStopId: d.StopID, BoardingCounterId: boarding, DroppingCounterId: dropping,
		FromName: f.Place, FromNameBn: place.Bengali(f.Place), ToName: d.Place, ToNameBn: place.Bengali(d.Place),
		DepartsAt: timestamppb.New(departs), DepartsAtLocal: display.LocalTime(departs, loc),
		ArrivesAt: timestamppb.New(arrives), ArrivesAtLocal: display.LocalTime(arrives, loc)}
	for _, c := range f.Counters {
		if c.ID == boarding {
			at := t.at(c.Minutes)
			j.BoardingCounterName, j.BoardingCounterNameBn = c.Name, c.NameBn
			j.BoardingAt, j.BoardingAtLocal = timestamppb.New(at), display.LocalTime(at, loc)
		}
	}
	for _, c := range d.Counters {
		if c.ID == dropping {
			j.DroppingCounterName, j.DroppingCounterNameBn = c.Name, c.NameBn
		}
	}
	return j
}

// CounterName is the name of the trip's counter id, in Bengali when lang is
// and the counter has a Bengali name; the id itself when no stop of the trip
// has that counter (a shift opened at an office that is no boarding point).
func (t Trip) CounterName(id string, lang display.Lang) string {
	for _, s := range t.Stops {
		for _, c := range s.Counters {
			switch {
			case c.ID != id:
			case lang == display.Bengali && c.NameBn != "":
				return c.NameBn
			case c.Name != "":
				return c.Name
			}
		}
	}
	return id
}

// FaresProto is the trip's fares as the API answers them.
func FaresProto(fares []Fare) []*catalogv1.Fare {
	out := make([]*catalogv1.Fare, 0, len(fares))
	for _, f := range fares {
		out = append(out, &catalogv1.Fare{FromStopId: f.From, ToStopId: f.To, SeatClass: f.SeatClass, PriceMinor: f.PriceMinor})
	}
	return out
}

// MaxStops bounds a trip's stops (the API's rule too): 29 legs.
const MaxStops = 30

// stopIDPattern is a stop's or counter's id (the API's pattern).
var stopIDPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)

// completeTrip checks a trip's stops and fares and fills what they leave
// (decision 0351): places through the gazetteer, stop ids from them,
// counters' defaults, origin and destination from the first and last
// stops. A show without stops passes untouched, and so must have no fares.
func completeTrip(s *Show) error {
	invalid := func(field, format string, args ...any) error {
		return fault.OnField(fault.ShowInvalid, field, format, args...)
	}
	if len(s.Stops) == 0 {
		if len(s.Fares) > 0 {
			return invalid("fares", "fares are per stop pair: name the trip's stops")
		}
		return nil
	}
	switch {
	case s.Kind != catalogv1.ShowKind_SHOW_KIND_BUS_TRIP:
		return invalid("stops", "only a bus trip has stops")
	case len(s.Stops) < 2:
		return invalid("stops", "a trip with stops has at least two: where it starts and where it ends")
	case len(s.Stops) > MaxStops:
		return invalid("stops", "%d stops; at most %d", len(s.Stops), MaxStops)
	case len(s.GAAreas) > 0:
		return invalid("ga_areas", "a trip with stops sells seats per leg; general admission is not sold per leg")
	case len(s.Fares) == 0:
		return invalid("fares", "a trip with stops is priced by its fares: give at least one (a stop pair and its price)")
	}
	ids := map[string]int{}
	counters := map[string]bool{}
	last := len(s.Stops) - 1
	for i := range s.Stops {
		st := &s.Stops[i]
		field := fmt.Sprintf("stops[%d]", i)
		st.Place = strings.TrimSpace(st.Place)
		if st.Place == "" {
			return invalid(field+".place", "name the stop's place")
		}
		st.Place, st.PlaceID = canonicalPlace(st.Place)
		if st.StopID == "" {
			st.StopID = cmpOr(st.PlaceID, slug(st.Place))
		}
		if !stopIDPattern.MatchString(st.StopID) {
			return invalid(field+".stop_id", "give the stop an id of lowercase letters, digits and dashes (the place %q has none)", st.Place)
		}
		if j, ok := ids[st.StopID]; ok {
			return invalid(field+".stop_id", "stop id %q is stops[%d]'s too: give one of them another id", st.StopID, j)
		}
		ids[st.StopID] = i
		switch {
		case i == 0 && st.Minutes != 0:
			return invalid(field+".minutes_from_start", "the first stop is where the trip departs: 0 minutes, not %d", st.Minutes)
		case i > 0 && st.Minutes <= s.Stops[i-1].Minutes:
			return invalid(field+".minutes_from_start", "%d minutes is not after the stop before (%d): stops are in route order",
				st.Minutes, s.Stops[i-1].Minutes)
		}
		for k := range st.Counters {
			c := &st.Counters[k]
			cfield := fmt.Sprintf("%s.counters[%d]", field, k)
			if !stopIDPattern.MatchString(c.ID) {
				return invalid(cfield+".counter_id", "a counter's id is lowercase letters, digits and dashes")
			}
			if counters[c.ID] {
				return invalid(cfield+".counter_id", "counter id %q appears twice on the trip", c.ID)
			}
			counters[c.ID] = true
			if strings.TrimSpace(c.Name) == "" {
				return invalid(cfield+".name", "name the counter")
			}
			if !c.Boarding && !c.Dropping {
				// Neither said: the first stop's counters board, the last's
				// drop, the others do both.
				c.Boarding, c.Dropping = i < last, i > 0
			}
			if i == last && c.Boarding && !c.Dropping {
				return invalid(cfield+".boarding", "nobody boards at the last stop: its counters are dropping points")
			}
		}
	}
	first, end := s.Stops[0], s.Stops[last]
	var err error
	if s.Origin, s.OriginPlaceID, err = endOfTrip(s.Origin, s.OriginPlaceID, first, "origin", "first"); err != nil {
		return err
	}
	if s.Destination, s.DestinationPlaceID, err = endOfTrip(s.Destination, s.DestinationPlaceID, end, "destination", "last"); err != nil {
		return err
	}
	classes := map[string]bool{"": true}
	for _, sec := range s.Sections {
		classes[sec.SeatClass] = true
	}
	type pair struct {
		from, to int
		class    string
	}
	seen := map[pair]bool{}
	for i, f := range s.Fares {
		field := fmt.Sprintf("fares[%d]", i)
		from, ok := ids[f.From]
		if !ok {
			return invalid(field+".from_stop_id", "the trip has no stop %q (its stops: %s)", f.From, strings.Join(s.Trip().StopIDs(), ", "))
		}
		to, ok := ids[f.To]
		if !ok {
			return invalid(field+".to_stop_id", "the trip has no stop %q (its stops: %s)", f.To, strings.Join(s.Trip().StopIDs(), ", "))
		}
		if to <= from {
			return invalid(field+".to_stop_id", "stop %q is not after %q on the route", f.To, f.From)
		}
		if !classes[f.SeatClass] {
			return invalid(field+".seat_class", "no section of the show has seat class %q", f.SeatClass)
		}
		if f.PriceMinor < 0 || f.PriceMinor > amount.MaxPriceMinor {
			return invalid(field+".price_minor", "price %d is out of range: 0 to %d minor units", f.PriceMinor, amount.MaxPriceMinor)
		}
		k := pair{from, to, f.SeatClass}
		if seen[k] {
			return invalid(field, "%s → %s%s has a fare already", f.From, f.To, classLabel(f.SeatClass))
		}
		seen[k] = true
	}
	return nil
}

// endOfTrip is a trip's origin (or destination) given its first (or last)
// stop: the stop's place when the request names none, the request's when it
// names the same place, refused when it names another.
func endOfTrip(name, placeID string, stop TripStop, field, which string) (string, string, error) {
	if name == "" {
		return stop.Place, stop.PlaceID, nil
	}
	same := placeID != "" && placeID == stop.PlaceID || placeID == "" && strings.EqualFold(name, stop.Place)
	if !same {
		return "", "", fault.OnField(fault.ShowInvalid, field, "%s is %q but the %s stop is %q: leave %s out, or make them the same place",
			field, name, which, stop.Place, field)
	}
	return name, placeID, nil
}

func classLabel(class string) string {
	if class == "" {
		return ""
	}
	return " (" + class + ")"
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// slug is a stop id made of a place's name: "Feni Bypass" → "feni-bypass";
// empty when the name has no Latin letter or digit (then the request must
// name the id).
func slug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		default:
			dash = true
		}
	}
	s := b.String()
	if len(s) > 64 {
		s = strings.TrimRight(s[:64], "-")
	}
	return s
}
