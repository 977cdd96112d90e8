package tripindex

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/projections"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/search"
)

// Name is the trip index projector's name (`seatghor rebuild tripindex`).
const Name = "tripindex"

// noChange lists the outbox events that change neither a show's listing nor
// its free seats; every other event (including kinds added later)
// recomputes its show, which is always correct and at worst a wasted read.
var noChange = map[string]bool{
	"seatghor.events.v1.OrderCreated":        true,
	"seatghor.events.v1.PaymentStateChanged": true,
	"seatghor.events.v1.TicketIssued":        true,
}

// countOnly lists the outbox events that change a show's seats available
// and nothing of its listing (booking's events on a shard). A show that
// only these name is written as a count when the index takes counts alone
// (CountWriter); every other event, of kinds added later too, rereads the
// listing.
var countOnly = map[string]bool{
	"seatghor.events.v1.SeatsHeld":          true,
	"seatghor.events.v1.HoldReleased":       true,
	"seatghor.events.v1.HoldExpired":        true,
	"seatghor.events.v1.BookingConfirmed":   true,
	"seatghor.events.v1.OrderCancelled":     true,
	"seatghor.events.v1.OrderExpired":       true,
	"seatghor.events.v1.RefundIssued":       true,
	"seatghor.events.v1.SeatsAllocated":     true,
	"seatghor.events.v1.AllocationReleased": true,
	"seatghor.events.v1.AllocationReturned": true,
}

// CountWriter is an index that takes a trip's seats available without its
// listing (Embedded, decision 0272). PutSeats sets the counts of the trips
// it holds and returns the ids it does not hold, which the projector then
// writes whole.
type CountWriter interface {
	PutSeats(ctx context.Context, counts map[int64]int) (unknown []int64, err error)
}

// Shows reads a show's listing from the catalog (catalog.Service does).
type Shows interface {
	GetShow(ctx context.Context, showID int64) (catalog.Show, error)
}

// Seats counts what of a show can be held now, in its shard
// (booking.Service does).
type Seats interface {
	Available(ctx context.Context, showID int64) (int64, error)
}

// ManyShows reads many shows' listings in one query (catalog.Service does).
type ManyShows interface {
	ShowListings(ctx context.Context, ids []int64) (map[int64]catalog.Show, error)
}

// ManySeats counts many shows at once, one query per shard (booking.Service
// does).
type ManySeats interface {
	AvailableMany(ctx context.Context, ids []int64) (map[int64]int64, error)
}

// ProjectorConfig tunes a Projector.
type ProjectorConfig struct {
	// Debounce is the least time between two index writes of one show;
	// default 1s. An on-sale's thousands of holds on one show become one
	// write per Debounce (R-1.1 allows a second or two of staleness).
	Debounce time.Duration
	// Pace is the least time between two outbox reads of its consumer
	// while it is not catching up; default Debounce/2. A burst of holds on
	// 3,000 buses then costs two reads and one index write per Pace, not
	// per hold (decision 0246).
	Pace time.Duration
	// Registerer receives the metrics; nil registers nothing.
	Registerer prometheus.Registerer
	Log        *slog.Logger
}

// Projector keeps the trip index current from the outbox.
//
// Like the seat map (decision 0021) it does not replay events onto
// documents: for every show a batch names it recomputes the whole document
// from the catalog (the listing) and the shard (seats available, counted
// now) and writes it. Order, duplicates and replays therefore do not matter,
// and after quiescence the index equals the databases. When only holds and
// their like name a show and the index takes counts alone (CountWriter),
// the count is all it recomputes and writes (decision 0272).
//
// Pacing (decision 0246): its consumer reads the outbox at most every Pace
// (projections.Paced), and each batch's shows are read with one catalog
// query and one query per shard (when shows and seats can read many at
// once) and written in one index request, so the work per hold falls as the
// on-sale gets busier.
//
// Debouncing: Apply writes a show at most once per Debounce. When a show of
// the batch was written less than Debounce ago, Apply waits until its slot
// before it recomputes; the events that arrive meanwhile stay in the outbox
// and come as one next batch, so a burst of holds on one show costs a write
// per interval, not one per hold. Apply returns only after the write, so
// the consumer's checkpoint never passes an event whose effect is not in
// the index (a crash loses nothing).
type Projector struct {
	index    TripIndex
	shows    Shows
	seats    Seats
	debounce time.Duration
	pace     time.Duration
	log      *slog.Logger

	mu sync.Mutex
	// written is when each show was last written; entries older than
	// debounce are dropped as the map grows.
	written map[int64]time.Time

	writes  prometheus.Counter
	batches prometheus.Counter
}

// NewProjector returns the trip index projector.
func NewProjector(index TripIndex, shows Shows, seats Seats, cfg ProjectorConfig) (*Projector, error) {
	if cfg.Debounce <= 0 {
		cfg.Debounce = time.Second
	}
	if cfg.Pace <= 0 {
		cfg.Pace = cfg.Debounce / 2
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	p := &Projector{index: index, shows: shows, seats: seats, debounce: cfg.Debounce, pace: cfg.Pace, log: cfg.Log,
		written: map[int64]time.Time{},
		writes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "seatghor_tripindex_documents_written_total",
			Help: "Trip documents written to the search index (one per show per debounce interval at most).",
		}),
		batches: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "seatghor_tripindex_writes_total",
			Help: "Write requests sent to the search index (each carries every show of one outbox batch).",
		}),
	}
	if cfg.Registerer != nil {
		for _, c := range []prometheus.Collector{p.writes, p.batches} {
			if err := cfg.Registerer.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

// Name implements projections.Projector.
func (p *Projector) Name() string { return Name }

// Pace implements projections.Paced: the index may be a little behind
// so its consumer gathers the outbox's events for a while.
func (p *Projector) Pace() time.Duration { return p.pace }

// Apply recomputes and writes every show the batch changed, each no sooner
// than Debounce after its previous write. A show that only count-changing
// events name is written as its count when the index can take that alone
// (the on-sale's common case: no catalog read, no document rewritten).
func (p *Projector) Apply(ctx context.Context, events []projections.Event) error {
	var shows []int64
	seen := map[int64]bool{}
	listing := map[int64]bool{}
	for _, e := range events {
		if noChange[e.Type] || e.ShowID <= 0 {
			continue
		}
		if !countOnly[e.Type] {
			listing[e.ShowID] = true
		}
		if !seen[e.ShowID] {
			seen[e.ShowID] = true
			shows = append(shows, e.ShowID)
		}
	}
	if len(shows) == 0 {
		return nil
	}
	if err := p.waitForSlot(ctx, shows); err != nil {
		return err
	}
	whole := shows
	written := 0
	if cw, ok := p.index.(CountWriter); ok {
		whole = nil
		var counted []int64
		for _, id := range shows {
			if listing[id] {
				whole = append(whole, id)
			} else {
				counted = append(counted, id)
			}
		}
		if len(counted) > 0 {
			n, err := p.countAll(ctx, counted)
			if err != nil {
				return err
			}
			unknown, err := cw.PutSeats(ctx, n)
			if err != nil {
				return fmt.Errorf("write the counts of %d trips: %w", len(n), err)
			}
			whole = append(whole, unknown...) // not listed yet: written whole
			written += len(n) - len(unknown)
		}
	}
	if len(whole) > 0 {
		put, gone, err := p.recomputeAll(ctx, whole)
		if err != nil {
			return err
		}
		if len(put) > 0 {
			if err := p.index.Put(ctx, put); err != nil {
				return fmt.Errorf("write %d trips: %w", len(put), err)
			}
			written += len(put)
		}
		// A show the catalog no longer has was withdrawn (ShowWithdrawn),
		// or its operator cancelled it (ShowCancelled): its documents go.
		if len(gone) > 0 {
			if err := p.index.Delete(ctx, gone); err != nil {
				return fmt.Errorf("delete %d trips: %w", len(gone), err)
			}
			written += len(gone)
		}
	}
	if written == 0 {
		return nil
	}
	p.batches.Inc()
	p.writes.Add(float64(written))
	p.markWritten(shows)
	return nil
}

// countAll counts the seats available of shows on their shards: in one
// query per shard when seats counts many at once. A show not on a shard
// (yet) is left out.
func (p *Projector) countAll(ctx context.Context, shows []int64) (map[int64]int, error) {
	out := make(map[int64]int, len(shows))
	if many, ok := p.seats.(ManySeats); ok {
		n, err := many.AvailableMany(ctx, shows)
		if err != nil {
			return nil, err
		}
		for id, c := range n {
			out[id] = int(c)
		}
		return out, nil
	}
	for _, id := range shows {
		n, err := p.seats.Available(ctx, id)
		if fault.ReasonOf(err) == fault.ShowNotFound {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("count seats of show %d: %w", id, err)
		}
		out[id] = int(n)
	}
	return out, nil
}

// waitForSlot sleeps until every show's debounce interval since its last
// write has passed.
func (p *Projector) waitForSlot(ctx context.Context, shows []int64) error {
	p.mu.Lock()
	var due time.Time
	for _, id := range shows {
		if t, ok := p.written[id]; ok && t.Add(p.debounce).After(due) {
			due = t.Add(p.debounce)
		}
	}
	p.mu.Unlock()
	d := time.Until(due)
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (p *Projector) markWritten(shows []int64) {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.written) > 10_000 {
		for id, t := range p.written {
			if now.Sub(t) > p.debounce {
				delete(p.written, id)
			}
		}
	}
	for _, id := range shows {
		p.written[id] = now
	}
}

// recomputeAll builds the documents of shows that are in both the catalog
// and a shard: with one catalog query and one query per shard when shows
// and seats read many at once, else show by show. gone are the shows the
// catalog does not have: withdrawn (a show is in the catalog before any
// event of its shard is), so out of the index.
func (p *Projector) recomputeAll(ctx context.Context, shows []int64) (put []search.Trip, gone []int64, _ error) {
	many, ok1 := p.shows.(ManyShows)
	counts, ok2 := p.seats.(ManySeats)
	if ok1 && ok2 {
		listed, err := many.ShowListings(ctx, shows)
		if err != nil {
			return nil, nil, err
		}
		n, err := counts.AvailableMany(ctx, shows)
		if err != nil {
			return nil, nil, err
		}
		for _, id := range shows {
			show, ok := listed[id]
			free, counted := n[id]
			if !ok || show.CancelledAt != nil {
				gone = append(gone, id)
				continue
			}
			if !counted {
				continue // not (yet) on its shard
			}
			t := FromShow(show)
			t.SeatsAvailable = int(free)
			put = append(put, t)
		}
		return put, gone, nil
	}
	trips := make([]*search.Trip, len(shows))
	missing := make([]bool, len(shows))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i, id := range shows {
		g.Go(func() error {
			t, err := p.recompute(gctx, id)
			if errors.Is(err, catalog.ErrNotFound) {
				missing[i] = true
				return nil
			}
			if err != nil {
				return err
			}
			trips[i] = t
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	for i, t := range trips {
		switch {
		case missing[i]:
			gone = append(gone, shows[i])
		case t != nil:
			put = append(put, *t)
		}
	}
	return put, gone, nil
}

// recompute builds a show's document from the catalog and its shard; nil
// when the show is not yet on its shard, catalog.ErrNotFound when the
// catalog does not have it.
func (p *Projector) recompute(ctx context.Context, id int64) (*search.Trip, error) {
	show, err := p.shows.GetShow(ctx, id)
	if errors.Is(err, catalog.ErrNotFound) {
		return nil, err
	}
	if err == nil && show.CancelledAt != nil {
		// A cancelled show (ShowCancelled, decision 0440) sells nothing:
		// it leaves the index as a withdrawn one does.
		return nil, fmt.Errorf("show %d was cancelled: %w", id, catalog.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read show %d: %w", id, err)
	}
	n, err := p.seats.Available(ctx, id)
	if fault.ReasonOf(err) == fault.ShowNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("count seats of show %d: %w", id, err)
	}
	t := FromShow(show)
	t.SeatsAvailable = int(n)
	return &t, nil
}

// FromShow is a show's listing as a trip (capacity and lowest price from its
// layout), with every seat and place available.
func FromShow(s catalog.Show) search.Trip {
	t := search.Trip{
		ShowID: s.ID, Kind: s.Kind, Title: s.Title, Operator: s.Operator, Origin: s.Origin,
		Destination: s.Destination, Venue: s.Venue, StartsAt: s.StartsAt, TimeZone: s.TimeZone, OnSaleAt: s.OnSaleAt,
		TitleBn: s.TitleBn, VenueBn: s.VenueBn, OperatorBn: s.OperatorBn,
		Currency: s.Currency, Capacity: s.SeatCount - s.BlockedSeats,
	}
	first := true
	lowest := func(p int64) {
		if first || p < t.LowestPriceMinor {
			t.LowestPriceMinor, first = p, false
		}
	}
	for _, sec := range s.Sections {
		if len(sec.Rows) > 0 && sec.SeatsPerRow > 0 {
			lowest(sec.PriceMinor)
		}
	}
	for _, a := range s.GAAreas {
		t.Capacity += a.Capacity
		lowest(a.PriceMinor)
	}
	t.Stops, t.Fares = stopsOf(s)
	for _, f := range t.Fares {
		lowest(f.PriceMinor)
	}
	t.SeatsAvailable = t.Capacity
	return t
}

// stopsOf are a bus trip's stops and fares as search sees them, read from
// the show as the API carries it (catalog.v1.Show stops and fares, the
// contract of issue 24).
func stopsOf(s catalog.Show) ([]search.Stop, []search.Fare) {
	if s.Kind != catalogv1.ShowKind_SHOW_KIND_BUS_TRIP {
		return nil, nil
	}
	// Proto reads the show's settings, which a show not from the catalog
	// (the demo's, a test's) may leave unset.
	if s.CommissionBps == nil || s.CancellationFeeBps == nil {
		s.CommissionBps, s.CancellationFeeBps = new(0), new(0)
	}
	p := s.Proto()
	if len(p.GetStops()) < 2 {
		return nil, nil
	}
	stops := make([]search.Stop, len(p.GetStops()))
	for i, st := range p.GetStops() {
		stops[i] = search.Stop{ID: st.GetStopId(), Place: st.GetPlace(), PlaceID: st.GetPlaceId(),
			PlaceBengali: st.GetPlaceBengali(), Minutes: int(st.GetMinutesFromStart())}
		for _, c := range st.GetCounters() {
			stops[i].Counters = append(stops[i].Counters, search.Counter{ID: c.GetCounterId(), Name: c.GetName(),
				NameBn: c.GetNameBn(), Boarding: c.GetBoarding(), Dropping: c.GetDropping(), Minutes: int(c.GetMinutesAfterDeparture())})
		}
	}
	fares := make([]search.Fare, len(p.GetFares()))
	for i, f := range p.GetFares() {
		fares[i] = search.Fare{From: f.GetFromStopId(), To: f.GetToStopId(), Class: f.GetSeatClass(), PriceMinor: f.GetPriceMinor()}
	}
	return stops, fares
}

// Reset implements projections.Projector.
func (p *Projector) Reset(ctx context.Context) error {
	p.mu.Lock()
	clear(p.written)
	p.mu.Unlock()
	return p.index.Reset(ctx)
}
