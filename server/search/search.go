// Package search is the vocabulary of trip search: the query, the
// trip as search sees it and the answer. The API edge (TripSearchService)
// asks in these terms and the trip index read model (projections/tripindex)
// answers in them, so neither depends on the other.
package search

import (
	"time"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/server/fault"
)

// ErrUnavailable means the index did not answer (down, overloaded, timed
// out) or there is none: search degrades, booking does not care.
var ErrUnavailable = fault.Sentinel(fault.SearchUnavailable, "trip index unavailable")

// Trip is one show as search sees it.
type Trip struct {
	ShowID      int64
	Kind        catalogv1.ShowKind
	Title       string
	Operator    string
	Origin      string
	Destination string
	Venue       string
	// TitleBn, VenueBn and OperatorBn are the show's names in Bengali
	// script, when it has them (decision 0385).
	TitleBn    string `json:",omitempty"`
	VenueBn    string `json:",omitempty"`
	OperatorBn string `json:",omitempty"`
	StartsAt   time.Time
	// TimeZone is the show's IANA zone: the one its local date and the
	// times people read are in (decision 0170).
	TimeZone string
	OnSaleAt time.Time
	Currency string
	// LowestPriceMinor is the price of the cheapest seat or GA place, in
	// minor units of Currency.
	LowestPriceMinor int64
	// SeatsAvailable is a hint as of the last index update; the hold
	// decides.
	SeatsAvailable int
	// Capacity counts every seat and GA place.
	Capacity int
	// Stops are a bus trip's stops in route order, with their counters;
	// none for a trip sold whole, from origin to destination. An index
	// lists such a trip once per stop pair it sells (a fare), so a search
	// from any of its stops to a later one finds it (issue 24).
	Stops []Stop `json:",omitempty"`
	// Fares are the prices of its stop pairs, per seat class.
	Fares []Fare `json:",omitempty"`
	// Journey, on a hit of a trip with stops, is the stretch between the
	// stops the search asked for (or the whole route): its departure from
	// the buyer's stop, and LowestPriceMinor is its lowest fare. Nil on a
	// trip without stops.
	Journey *Journey `json:",omitempty"`
}

// Stop is a stop of a bus trip.
type Stop struct {
	ID string `json:"id"`
	// Place is the place's official name, PlaceID the gazetteer's id of it
	// ("" for free text) and PlaceBengali its Bengali name.
	Place        string `json:"place"`
	PlaceID      string `json:"place_id,omitempty"`
	PlaceBengali string `json:"place_bn,omitempty"`
	// Minutes from the trip's start to the coach leaving the stop.
	Minutes  int       `json:"minutes"`
	Counters []Counter `json:"counters,omitempty"`
}

// Counter is where passengers board or leave the coach at a stop.
type Counter struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	NameBn   string `json:"name_bn,omitempty"`
	Boarding bool   `json:"boarding,omitempty"`
	Dropping bool   `json:"dropping,omitempty"`
	// Minutes from the trip's start to the coach being there.
	Minutes int `json:"minutes"`
}

// Fare is the price of the journey between two stops in a seat class
// ("" for every class).
type Fare struct {
	From       string `json:"from"`
	To         string `json:"to"`
	Class      string `json:"class,omitempty"`
	PriceMinor int64  `json:"price_minor"`
}

// Journey is the part of a trip with stops that a hit is for.
type Journey struct {
	// From and To are the boarding and dropping stops, with their counters.
	From Stop `json:"from"`
	To   Stop `json:"to"`
	// DepartsAt is when the coach leaves From, ArrivesAt when it reaches To.
	DepartsAt time.Time `json:"departs_at"`
	ArrivesAt time.Time `json:"arrives_at"`
	// Boarding is From's first boarding counter and Dropping To's first
	// dropping counter, when they have one.
	Boarding *Counter `json:"boarding,omitempty"`
	Dropping *Counter `json:"dropping,omitempty"`
}

// JourneyBetween is the journey of t from its i-th stop to its j-th.
func (t Trip) JourneyBetween(i, j int) Journey {
	from, to := t.Stops[i], t.Stops[j]
	jr := Journey{From: from, To: to, DepartsAt: t.StartsAt.Add(time.Duration(from.Minutes) * time.Minute),
		ArrivesAt: t.StartsAt.Add(time.Duration(to.Minutes) * time.Minute)}
	for _, c := range from.Counters {
		if c.Boarding && (jr.Boarding == nil || c.Minutes < jr.Boarding.Minutes) {
			jr.Boarding = &c
		}
	}
	for _, c := range to.Counters {
		if c.Dropping && (jr.Dropping == nil || c.Minutes < jr.Dropping.Minutes) {
			jr.Dropping = &c
		}
	}
	return jr
}

// At is when the coach is at a counter of t.
func (t Trip) At(c Counter) time.Time { return t.StartsAt.Add(time.Duration(c.Minutes) * time.Minute) }

// LowestFare is the lowest fare of t from stop from to stop to, in any
// class; ok is false when the pair has none (it is not sold).
func (t Trip) LowestFare(from, to string) (price int64, ok bool) {
	for _, f := range t.Fares {
		if f.From == from && f.To == to && (!ok || f.PriceMinor < price) {
			price, ok = f.PriceMinor, true
		}
	}
	return price, ok
}

// Sort orders the hits.
type Sort int

// The orders.
const (
	// SortRelevance: best text match first. Without text it is SortStartsAt.
	SortRelevance Sort = iota
	// SortStartsAt: soonest start first.
	SortStartsAt
	// SortPrice: cheapest first, then soonest.
	SortPrice
)

// Query is a search. Zero fields do not filter.
type Query struct {
	// Text is matched against title, origin, destination, venue and
	// operator, typo tolerant (one typo from 5 letters, two from 9, the
	// last word also as a prefix); every word must match. A place matches
	// in any spelling the gazetteer knows (server/place); a text naming two
	// places and nothing else is a route (docs/decisions/0111).
	Text string
	// Origin and Destination match a place in any spelling the gazetteer
	// knows, else the whole name in any letter case.
	Origin      string
	Destination string
	// StartsAfter (inclusive) and StartsBefore (exclusive) bound StartsAt.
	StartsAfter  time.Time
	StartsBefore time.Time
	// Day is a local date as YYYYMMDD (20261231): only shows departing on
	// that calendar day in their own time zone (decision 0172); 0 does not
	// filter.
	Day  int
	Kind catalogv1.ShowKind
	// MinPriceMinor and MaxPriceMinor bound LowestPriceMinor, inclusive;
	// nil does not bound.
	MinPriceMinor *int64
	MaxPriceMinor *int64
	// MinSeatsAvailable excludes shows with fewer seats available.
	MinSeatsAvailable int
	Sort              Sort
	// Offset and Limit page through the hits; Limit 0 means DefaultLimit.
	Offset int
	Limit  int
}

// DefaultLimit is the page size of a Query without Limit.
const DefaultLimit = 20

// PageSize is q's Limit, or DefaultLimit.
func (q Query) PageSize() int {
	if q.Limit <= 0 {
		return DefaultLimit
	}
	return q.Limit
}

// Result is one page of hits.
type Result struct {
	Trips []Trip
	// EstimatedTotal is about how many trips match in all.
	EstimatedTotal int64
	// Degraded says the text was ignored and only the filters answered:
	// deep search is switched off to save capacity.
	Degraded bool
}
