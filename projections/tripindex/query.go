package tripindex

import (
	"context"
	"strings"

	"github.com/seatghor/seatghor/server/place"
	"github.com/seatghor/seatghor/server/search"
)

// Both indexes search through the same normalisation (docs/decisions/0110):
// the query is folded (case, diacritics, apostrophes), every place it names
// in any spelling (old or new name, joined or split words, loose
// transliteration, Bengali script) becomes the place's token, and documents
// carry the tokens, spellings and Bengali names of their places. So the two
// implementations differ only in how they match the words left.

// request is a search.Query as an implementation runs it.
type request struct {
	search.Query
	// text is the normalised query text.
	text string
	// originKey and destinationKey filter by place key; "" does not.
	originKey, destinationKey string
	// notRoute, when set, excludes the trips that sell this [origin,
	// destination] (document.Pairs).
	notRoute *[2]string
	// byTime sorts by departure where relevance would: the text names only
	// places, which every hit matches equally.
	byTime bool
}

// wholeOnly says which journeys of a trip with stops r may answer
// (decision 0364): with both places asked, any journey between them; with
// a boarding place only, the journeys from it to the trip's last stop;
// with a dropping place only, those from the first stop; with neither,
// the whole trip, once.
func (r request) wholeOnly() (fromFirst, toLast bool) {
	return r.originKey == "", r.destinationKey == ""
}

// finder is an implementation's search of one request.
type finder func(ctx context.Context, r request) (search.Result, error)

// connectors are the words that join two places in a query ("dhaka to
// ctg", "ঢাকা থেকে চট্টগ্রাম"); they carry no meaning once the places are found.
var connectors = map[string]bool{"to": true, "from": true, "theke": true, "thekey": true, "via": true,
	"থেকে": true, "টু": true, "হয়ে": true}

// parsedText is a query text with its places found.
type parsedText struct {
	words  []string // the normalised words, a place as its token
	places []place.Place
	other  int // words that are neither places nor connectors
}

// parseText finds the places in text (place.Gazetteer.Scan).
func parseText(text string) parsedText {
	var p parsedText
	var conn []string
	for _, w := range place.Default().Scan(text) {
		switch {
		case w.Place != nil:
			p.places = append(p.places, *w.Place)
			p.words = append(p.words, w.Place.Token())
		case connectors[w.Text]:
			conn = append(conn, w.Text)
		default:
			p.other++
			p.words = append(p.words, w.Text)
		}
	}
	if len(p.places) == 0 {
		p.words = append(p.words, conn...) // no places: "to" is a word like any other
	}
	return p
}

// placeKey is the filter form of a place: its id when the gazetteer knows
// it, else the name in key form (free text, R-8.4).
func placeKey(s string) string {
	if p, ok := place.Default().Lookup(s); ok {
		return p.ID
	}
	return key(s)
}

// run answers q through find: a text naming two places and nothing else
// ("dhaka ctg") is a route, whose exact trips come first, each part by
// departure (docs/decisions/0111).
func run(ctx context.Context, q search.Query, find finder) (search.Result, error) {
	r := request{Query: q}
	if q.Origin != "" {
		r.originKey = placeKey(q.Origin)
	}
	if q.Destination != "" {
		r.destinationKey = placeKey(q.Destination)
	}
	var route *[2]string
	if strings.TrimSpace(q.Text) != "" {
		p := parseText(q.Text)
		r.text = strings.Join(p.words, " ")
		r.byTime = p.other == 0 && len(p.places) > 0 && q.Sort == search.SortRelevance
		if len(p.places) == 2 && p.other == 0 && p.places[0].ID != p.places[1].ID && q.Origin == "" &&
			q.Destination == "" && q.Sort == search.SortRelevance {
			route = &[2]string{p.places[0].ID, p.places[1].ID}
		}
	}
	if route == nil {
		return find(ctx, r)
	}
	limit := q.PageSize()
	exact := r
	exact.originKey, exact.destinationKey = route[0], route[1]
	first, err := find(ctx, exact)
	if err != nil {
		return search.Result{}, err
	}
	rest := r
	rest.notRoute = route
	rest.Offset = max(0, q.Offset-int(first.EstimatedTotal))
	rest.Limit = max(1, limit-len(first.Trips)) // at least one, for the total
	more, err := find(ctx, rest)
	if err != nil {
		return search.Result{}, err
	}
	out := search.Result{Trips: first.Trips, EstimatedTotal: first.EstimatedTotal + more.EstimatedTotal}
	if n := limit - len(first.Trips); n > 0 {
		out.Trips = append(out.Trips, more.Trips[:min(n, len(more.Trips))]...)
	}
	return out, nil
}

// aliases is what a document carries for its places beside the display
// names: each place's token, its district's for a stop, its spellings and
// Bengali name, and a transliteration of the Bengali words in the trip.
func aliases(t search.Trip) string {
	g := place.Default()
	var out []string
	places := []string{t.Origin, t.Destination}
	for _, st := range t.Stops {
		places = append(places, st.Place)
	}
	seen := map[string]bool{}
	for _, s := range places {
		p, ok := g.Lookup(s)
		if !ok || seen[p.ID] {
			continue
		}
		seen[p.ID] = true
		out = append(out, p.Token(), place.Fold(p.Name), p.Bengali)
		if p.District != p.ID {
			if d, ok := g.Lookup(p.District); ok {
				out = append(out, d.Token(), d.Bengali)
			}
		}
		for _, a := range p.Aliases {
			out = append(out, strings.ReplaceAll(place.Fold(a), " ", ""))
		}
	}
	// The names in Bengali script are found as written and, like any
	// Bengali name, by their transliteration.
	out = append(out, place.Fold(t.TitleBn), place.Fold(t.VenueBn), place.Fold(t.OperatorBn))
	for _, s := range []string{t.Title, t.Venue, t.Operator, t.Origin, t.Destination, t.TitleBn, t.VenueBn, t.OperatorBn} {
		if f := place.Fold(s); place.IsBengali(f) {
			out = append(out, place.Transliterate(f))
		}
	}
	return strings.Join(out, " ")
}
