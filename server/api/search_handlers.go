package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	searchv1 "github.com/seatghor/seatghor/gen/seatghor/search/v1"
	"github.com/seatghor/seatghor/server/display"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/page"
	"github.com/seatghor/seatghor/server/place"
	"github.com/seatghor/seatghor/server/search"
)

// TripSearcher answers trip searches: the trip index read model
// (projections/tripindex, R-8.4), never a write database.
type TripSearcher interface {
	Search(ctx context.Context, q search.Query) (search.Result, error)
}

type searchHandler struct {
	// trips is nil when no index is configured: every search is
	// unavailable.
	trips TripSearcher
	now   func() time.Time
	log   *slog.Logger
}

func (h *searchHandler) SearchTrips(ctx context.Context, req *connect.Request[searchv1.SearchTripsRequest]) (*connect.Response[searchv1.SearchTripsResponse], error) {
	if h.trips == nil {
		return nil, fault.New(fault.NotServed, "trip search is not configured")
	}
	m := req.Msg
	q := search.Query{
		Text: strings.TrimSpace(m.GetQuery()), Origin: m.GetOrigin(), Destination: m.GetDestination(),
		Kind: m.GetKind(), MinSeatsAvailable: int(m.GetMinSeatsAvailable()), Limit: int(m.GetPageSize()),
		MinPriceMinor: m.MinPriceMinor, MaxPriceMinor: m.MaxPriceMinor,
	}
	q.Limit = q.PageSize()
	// "Unset means now", fixed by the first page: the token carries it, so
	// the pages of one search share one window and offsets stay valid.
	q.StartsAfter = h.now().UTC().Truncate(time.Millisecond)
	if m.GetStartsAfter() != nil {
		q.StartsAfter = m.GetStartsAfter().AsTime()
	}
	if m.GetStartsBefore() != nil {
		q.StartsBefore = m.GetStartsBefore().AsTime()
	}
	cur, ok, err := page.Decode(m.GetPageToken())
	if err == nil && ok {
		q.StartsAfter = cur.At
		q.Offset, err = strconv.Atoi(cur.ID)
		if err != nil || q.Offset < 0 {
			err = page.ErrBadToken
		}
	}
	if err != nil {
		return nil, invalidField("page_token", "%s", err.Error())
	}
	if d := m.GetDate(); d != "" {
		day, err := time.Parse(time.DateOnly, d)
		if err != nil {
			return nil, invalidField("date", "date: want YYYY-MM-DD")
		}
		// The local date in each show's own zone (decision 0172), not a
		// UTC day.
		q.Day = display.Day(day, time.UTC)
	}
	switch m.GetSort() {
	case searchv1.TripSort_TRIP_SORT_STARTS_AT:
		q.Sort = search.SortStartsAt
	case searchv1.TripSort_TRIP_SORT_PRICE:
		q.Sort = search.SortPrice
	default:
		q.Sort = search.SortRelevance
	}
	res, err := h.trips.Search(ctx, q)
	if errors.Is(err, search.ErrUnavailable) {
		// search degrades on its own; holds and orders never wait
		// for it.
		h.log.WarnContext(ctx, "trip search unavailable", "err", err)
		return nil, toConnect(ctx, h.log, fmt.Errorf("trip search is unavailable; try again shortly: %w", search.ErrUnavailable))
	}
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	resp := &searchv1.SearchTripsResponse{EstimatedTotalHits: res.EstimatedTotal, Degraded: res.Degraded}
	names := typedPlaces(q)
	for _, t := range res.Trips {
		hit := &searchv1.TripHit{
			ShowId: t.ShowID, Kind: t.Kind, Title: t.Title, Operator: t.Operator, Origin: t.Origin,
			Destination: t.Destination, Venue: t.Venue, StartsAt: timestamppb.New(t.StartsAt),
			OnSaleAt:       timestamppb.New(t.OnSaleAt),
			LowestPrice:    &commonv1.Money{Currency: t.Currency, AmountMinor: t.LowestPriceMinor},
			SeatsAvailable: int32(t.SeatsAvailable), Capacity: int32(t.Capacity),
			TitleBn: t.TitleBn, VenueBn: t.VenueBn, OperatorBn: t.OperatorBn,
		}
		hit.StartsAtLocal = display.LocalTime(t.StartsAt, display.ZoneOrDefault(t.TimeZone))
		hit.OriginPlaceId, hit.OriginBengali, hit.OriginLabel = names.describe(t.Origin)
		hit.DestinationPlaceId, hit.DestinationBengali, hit.DestinationLabel = names.describe(t.Destination)
		hit.Journey = journeyOf(t)
		resp.Trips = append(resp.Trips, hit)
	}
	if next := q.Offset + len(res.Trips); len(res.Trips) == q.Limit && int64(next) < res.EstimatedTotal {
		resp.NextPageToken = page.Encode(page.Cursor{At: q.StartsAfter, ID: strconv.Itoa(next)})
	}
	res2 := connect.NewResponse(resp)
	// an answer a second old is fine, so an edge may share it.
	res2.Header().Set("Cache-Control", "public, max-age=1")
	return res2, nil
}

// placeNames maps a place id to the listed spelling the buyer named it by
// in the query text or the origin and destination filters.
type placeNames map[string]string

func typedPlaces(q search.Query) placeNames {
	g := place.Default()
	names := placeNames{}
	for _, w := range g.Scan(q.Text) {
		if w.Place != nil {
			names[w.Place.ID] = w.Spelling
		}
	}
	for _, s := range []string{q.Origin, q.Destination} {
		if p, spelling, ok := g.Match(s); ok {
			names[p.ID] = spelling
		}
	}
	return names
}

// describe is a hit's place for a buyer (decision 0112): its place id,
// Bengali name and label ("Chattogram (Chittagong)" to one who typed
// Chittagong); a place the gazetteer does not know is its name alone.
func (n placeNames) describe(name string) (id, bengali, label string) {
	p, ok := place.Default().Lookup(name)
	if !ok {
		return "", "", name
	}
	return p.ID, p.Bengali, p.Label(n[p.ID])
}

// journeyOf is a hit's journey on a trip with stops (issue 24): from the
// buyer's stop to theirs, with the first boarding counter there and the
// times in the trip's zone; nil for a trip sold whole.
func journeyOf(t search.Trip) *commonv1.Journey {
	j := t.Journey
	if j == nil {
		return nil
	}
	loc := display.ZoneOrDefault(t.TimeZone)
	bengali := func(s search.Stop) string {
		if s.PlaceBengali != "" {
			return s.PlaceBengali
		}
		return place.Bengali(s.Place)
	}
	out := &commonv1.Journey{
		FromStopId: j.From.ID, ToStopId: j.To.ID, FromName: j.From.Place, FromNameBn: bengali(j.From),
		ToName: j.To.Place, ToNameBn: bengali(j.To),
		DepartsAt: timestamppb.New(j.DepartsAt), DepartsAtLocal: display.LocalTime(j.DepartsAt, loc),
		ArrivesAt: timestamppb.New(j.ArrivesAt), ArrivesAtLocal: display.LocalTime(j.ArrivesAt, loc),
	}
	if c := j.Boarding; c != nil {
		at := t.At(*c)
		out.BoardingCounterId, out.BoardingCounterName, out.BoardingCounterNameBn = c.ID, c.Name, c.NameBn
		out.BoardingAt, out.BoardingAtLocal = timestamppb.New(at), display.LocalTime(at, loc)
	}
	if c := j.Dropping; c != nil {
		out.DroppingCounterId, out.DroppingCounterName, out.DroppingCounterNameBn = c.ID, c.Name, c.NameBn
	}
	return out
}
