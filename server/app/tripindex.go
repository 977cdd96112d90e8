package app

import (
	"context"
	"fmt"
	"time"

	"github.com/seatghor/seatghor/projections"
	"github.com/seatghor/seatghor/projections/tripindex"
	"github.com/seatghor/seatghor/server/api"
	"github.com/seatghor/seatghor/server/search"
)

// TripIndexConfig says where the trip index is.
type TripIndexConfig struct {
	// MeiliURL and MeiliKey locate the production index on a Meilisearch
	// server; MeiliIndex names it (default "trips").
	MeiliURL   string
	MeiliKey   string
	MeiliIndex string
	// Dir holds the embedded index (dev mode) when MeiliURL is empty. With
	// neither, SearchTrips answers unavailable and no projector feeds an
	// index.
	Dir string
	// Debounce is the least time between two index writes of one show;
	// default 1 s.
	Debounce time.Duration
	// DeepSearchOff switches free-text search off on a sale day:
	// SearchTrips ignores the query text, answers from the filters alone
	// and says so (degraded).
	DeepSearchOff bool
}

// openTripIndex opens the trip index and returns its projector; both nil
// when none is configured. A new embedded index (first start, or its
// directory deleted) is filled by replaying the outbox: it returns
// replay = true and the caller resets the projector's checkpoints.
func (a *App) openTripIndex(cfg Config, apiCfg *api.Config) (p projections.Projector, replay bool, err error) {
	tc := cfg.TripIndex
	switch {
	case tc.MeiliURL != "":
		// No network here: the platform starts while Meilisearch is down
		// and search answers unavailable until it returns.
		if a.Trips, err = tripindex.NewMeili(tripindex.MeiliConfig{URL: tc.MeiliURL, Key: tc.MeiliKey, Index: tc.MeiliIndex}); err != nil {
			return nil, false, fmt.Errorf("SEATGHOR_MEILI_URL: %w", err)
		}
	case tc.Dir != "":
		if a.Trips, replay, err = tripindex.OpenEmbedded(tc.Dir); err != nil {
			return nil, false, err
		}
	default:
		return nil, false, nil
	}
	apiCfg.TripSearch = a.Trips
	if tc.DeepSearchOff {
		apiCfg.TripSearch = shallowSearch{a.Trips}
	}
	p, err = tripindex.NewProjector(a.Trips, a.Catalog, a.Booking, tripindex.ProjectorConfig{
		Debounce: tc.Debounce, Registerer: a.Registry, Log: cfg.Log})
	if err != nil {
		a.closeTrips()
		return nil, false, err
	}
	return p, replay, nil
}

// replayTripIndex resets the trip index projector's checkpoints so the
// consumers fill a new, empty index from the outbox.
func (a *App) replayTripIndex(ctx context.Context) error {
	if err := a.Projections.Rebuild(ctx, tripindex.Name); err != nil {
		return fmt.Errorf("fill the new trip index: %w", err)
	}
	return nil
}

func (a *App) closeTrips() {
	if a.Trips != nil {
		_ = a.Trips.Close()
		a.Trips = nil
	}
}

// shallowSearch answers searches from their filters alone (R-8.6: deep
// search off, so capacity goes to buying).
type shallowSearch struct{ index tripindex.TripIndex }

func (s shallowSearch) Search(ctx context.Context, q search.Query) (search.Result, error) {
	text := q.Text
	q.Text = ""
	if q.Sort == search.SortRelevance {
		q.Sort = search.SortStartsAt
	}
	res, err := s.index.Search(ctx, q)
	res.Degraded = text != ""
	return res, err
}
