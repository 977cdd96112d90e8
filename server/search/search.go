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
	StartsAt    time.Time
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
