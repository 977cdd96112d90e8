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
type document struct {
	ID          int64  `json:"id"`
	Kind        int32  `json:"kind"`
	Title       string `json:"title"`
	Operator    string `json:"operator"`
	Origin      string `json:"origin"`
	Destination string `json:"destination"`
	Venue       string `json:"venue"`
	// Aliases: the places' tokens, spellings and Bengali names (query.go).
	Aliases        string `json:"aliases"`
	OriginKey      string `json:"origin_key"`
	DestinationKey string `json:"destination_key"`
	StartsAt       int64  `json:"starts_at"`
	TimeZone       string `json:"time_zone"`
	// LocalDay is the day StartsAt falls on in TimeZone, YYYYMMDD: what
	// the date filter matches (decision 0172).
	LocalDay int    `json:"local_day"`
	OnSaleAt int64  `json:"on_sale_at"`
	Currency string `json:"currency"`
	Price    int64  `json:"lowest_price_minor"`
	Seats    int    `json:"seats_available"`
	Capacity int    `json:"capacity"`
}

func toDocument(t search.Trip) document {
	return document{
		ID: t.ShowID, Kind: int32(t.Kind), Title: t.Title, Operator: t.Operator, Origin: t.Origin,
		Destination: t.Destination, Venue: t.Venue, Aliases: aliases(t), OriginKey: placeKey(t.Origin), DestinationKey: placeKey(t.Destination),
		StartsAt: t.StartsAt.UnixMilli(), TimeZone: t.TimeZone,
		LocalDay: display.Day(t.StartsAt, display.ZoneOrDefault(t.TimeZone)), OnSaleAt: t.OnSaleAt.UnixMilli(), Currency: t.Currency,
		Price: t.LowestPriceMinor, Seats: t.SeatsAvailable, Capacity: t.Capacity,
	}
}

func (d document) trip() search.Trip {
	return search.Trip{
		ShowID: d.ID, Kind: catalogv1.ShowKind(d.Kind), Title: d.Title, Operator: d.Operator, Origin: d.Origin,
		Destination: d.Destination, Venue: d.Venue, StartsAt: time.UnixMilli(d.StartsAt).UTC(), TimeZone: d.TimeZone,
		OnSaleAt: time.UnixMilli(d.OnSaleAt).UTC(), Currency: d.Currency, LowestPriceMinor: d.Price,
		SeatsAvailable: d.Seats, Capacity: d.Capacity,
	}
}
