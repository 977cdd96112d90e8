// Package tripindex is the trip search read model: one document per
// show (kind, title, route or venue, start, lowest price, seats available,
// operator) in a full-text index with typo tolerance, filters and sorts, so
// TripSearchService never reads the write databases.
//
// Two implementations pass one contract suite: Meili, the production
// adapter for a Meilisearch server, and Embedded, a bleve (scorch) index on
// local disk for dev mode. The Projector keeps either one current from the
// outbox, debouncing availability changes per show.
package tripindex

import (
	"context"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/server/display"
	"github.com/seatghor/seatghor/server/search"
)

// TripIndex is what the projector writes and the search RPC reads.
// Implementations are safe for concurrent use.
type TripIndex interface {
	// Put adds trips or replaces them whole (by ShowID). When it returns
	// nil the trips are durably accepted; a search sees them at once in the
	// embedded index and once the server has indexed them in Meilisearch
	// (Put waits for that too).
	Put(ctx context.Context, trips []search.Trip) error
	// Search answers a query. An index that cannot be reached answers an
	// error wrapping search.ErrUnavailable.
	Search(ctx context.Context, q search.Query) (search.Result, error)
	// Delete deletes every document of the trips (withdrawn shows); a
	// trip the index does not hold is no error.
	Delete(ctx context.Context, shows []int64) error
	// Reset deletes every trip (a rebuild).
	Reset(ctx context.Context) error
	// Close releases the index.
	Close() error
}

// key is the form a filterable city name is stored and compared in, so a
// filter matches "Dhaka", "dhaka" and " DHAKA ".
func key(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// typos is how many typos a query word of this length tolerates:
// Meilisearch's defaults (one from 5 letters, two from 9), which the
// embedded index copies so both pass the same contract.
func typos(word string) int {
	switch n := utf8.RuneCountInString(word); {
	case n >= 9:
		return 2
	case n >= 5:
		return 1
	default:
		return 0
	}
}

// document is a trip as both indexes store it: times as Unix milliseconds
// (sortable, filterable numbers) and the city names also in key form: the
// gazetteer's place id for a known place (any spelling), else key.
//
// A trip with stops is several documents (decision 0364): one per stop
// pair it sells, each keyed and timed as that journey (its places, its
// departure from the boarding stop and its local day, its lowest fare), so
// a search by any pair is a plain filter on it, and sorting by price or
// departure is the journey's. The whole route's document has the trip's
// id and lists the trip where no pair is asked for; a journey's document
// starts or ends at an inner stop (ViaFrom, ViaTo) and is found only by a
// search naming that stop. A trip without stops is one document, as
// before.
type document struct {
	// ID is the show's id for the whole trip, "<show>-<i>-<j>" for the
	// journey from its i-th stop to its j-th.
	ID          string `json:"id"`
	ShowID      int64  `json:"show_id"`
	Kind        int32  `json:"kind"`
	Title       string `json:"title"`
	Operator    string `json:"operator"`
	Origin      string `json:"origin"`
	Destination string `json:"destination"`
	Venue       string `json:"venue"`
	// The names in Bengali script (decision 0385); searchable through
	// Aliases.
	TitleBn    string `json:"title_bn,omitempty"`
	VenueBn    string `json:"venue_bn,omitempty"`
	OperatorBn string `json:"operator_bn,omitempty"`
	// Aliases: the places' tokens, spellings and Bengali names (query.go),
	// of every stop.
	Aliases string `json:"aliases"`
	// OriginKey and DestinationKey are the journey's boarding and dropping
	// places (the trip's own for the whole trip).
	OriginKey      string `json:"origin_key"`
	DestinationKey string `json:"destination_key"`
	// Pairs are every place pair the trip sells ("cumilla>chattogram"),
	// so a route search can leave out the trips it already answered.
	Pairs []string `json:"pairs"`
	// ViaFrom: the journey boards after the trip's first stop; ViaTo: it
	// leaves before its last.
	ViaFrom bool `json:"via_from"`
	ViaTo   bool `json:"via_to"`
	// StartsAt is the journey's departure from its boarding stop (the
	// trip's start for the whole trip): what searches filter and sort by.
	StartsAt     int64  `json:"starts_at"`
	ShowStartsAt int64  `json:"show_starts_at"`
	TimeZone     string `json:"time_zone"`
	// LocalDay is the day StartsAt falls on in TimeZone, YYYYMMDD: what
	// the date filter matches (decision 0172).
	LocalDay int    `json:"local_day"`
	OnSaleAt int64  `json:"on_sale_at"`
	Currency string `json:"currency"`
	Price    int64  `json:"lowest_price_minor"`
	Seats    int    `json:"seats_available"`
	Capacity int    `json:"capacity"`
	// Journey is the journey of a trip with stops, for the answer.
	Journey *search.Journey `json:"journey,omitempty"`
}

// journeyID is the document id of the journey from stop i to stop j of a
// trip of n stops: the trip's id for the whole route.
func journeyID(show int64, i, j, n int) string {
	if i == 0 && j == n-1 {
		return strconv.FormatInt(show, 10)
	}
	return strconv.FormatInt(show, 10) + "-" + strconv.Itoa(i) + "-" + strconv.Itoa(j)
}

// documentIDs are every id the documents of a trip of n stops may have.
func documentIDs(show int64, n int) []string {
	ids := []string{strconv.FormatInt(show, 10)}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if i != 0 || j != n-1 {
				ids = append(ids, journeyID(show, i, j, n))
			}
		}
	}
	return ids
}

// toDocuments are the documents of a trip: one, or one per journey it
// sells with the whole route always among them.
func toDocuments(t search.Trip) []document {
	loc := display.ZoneOrDefault(t.TimeZone)
	whole := document{
		ID: strconv.FormatInt(t.ShowID, 10), ShowID: t.ShowID, Kind: int32(t.Kind), Title: t.Title, Operator: t.Operator,
		Origin: t.Origin, Destination: t.Destination, Venue: t.Venue, Aliases: aliases(t),
		TitleBn: t.TitleBn, VenueBn: t.VenueBn, OperatorBn: t.OperatorBn,
		OriginKey: placeKey(t.Origin), DestinationKey: placeKey(t.Destination),
		StartsAt: t.StartsAt.UnixMilli(), ShowStartsAt: t.StartsAt.UnixMilli(), TimeZone: t.TimeZone,
		LocalDay: display.Day(t.StartsAt, loc), OnSaleAt: t.OnSaleAt.UnixMilli(), Currency: t.Currency,
		Price: t.LowestPriceMinor, Seats: t.SeatsAvailable, Capacity: t.Capacity,
	}
	n := len(t.Stops)
	if n < 2 {
		whole.Pairs = []string{whole.OriginKey + ">" + whole.DestinationKey}
		return []document{whole}
	}
	var (
		out   []document
		pairs []string
	)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			price, sold := t.LowestFare(t.Stops[i].ID, t.Stops[j].ID)
			if !sold && (i != 0 || j != n-1) {
				continue
			}
			d := whole
			jr := t.JourneyBetween(i, j)
			d.ID, d.Journey = journeyID(t.ShowID, i, j, n), &jr
			d.OriginKey, d.DestinationKey = stopKey(t.Stops[i]), stopKey(t.Stops[j])
			d.ViaFrom, d.ViaTo = i > 0, j < n-1
			d.StartsAt, d.LocalDay = jr.DepartsAt.UnixMilli(), display.Day(jr.DepartsAt, loc)
			if sold {
				d.Price = price
			}
			if sold || len(t.Fares) == 0 {
				pairs = append(pairs, d.OriginKey+">"+d.DestinationKey)
			}
			out = append(out, d)
		}
	}
	for i := range out {
		out[i].Pairs = pairs
	}
	return out
}

// stopKey is a stop's place in key form.
func stopKey(s search.Stop) string {
	if s.PlaceID != "" {
		return s.PlaceID
	}
	return placeKey(s.Place)
}

// trip is the hit a document answers: the trip, with the journey it is
// for, whose lowest fare is the price.
func (d document) trip() search.Trip {
	return search.Trip{
		ShowID: d.ShowID, Kind: catalogv1.ShowKind(d.Kind), Title: d.Title, Operator: d.Operator, Origin: d.Origin,
		Destination: d.Destination, Venue: d.Venue, StartsAt: time.UnixMilli(d.ShowStartsAt).UTC(), TimeZone: d.TimeZone,
		TitleBn: d.TitleBn, VenueBn: d.VenueBn, OperatorBn: d.OperatorBn,
		OnSaleAt: time.UnixMilli(d.OnSaleAt).UTC(), Currency: d.Currency, LowestPriceMinor: d.Price,
		SeatsAvailable: d.Seats, Capacity: d.Capacity, Journey: d.Journey,
	}
}
