package seatmap

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"
	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/seatghor/seatghor/gen/seatghor/events/v1"
	"github.com/seatghor/seatghor/projections"
	"github.com/seatghor/seatghor/server/booking"
)

// Name is the seat-map projector's name (`seatghor rebuild seatmap`).
const Name = "seatmap"

// placesOf returns the seats and GA area an event of a shard names. ok is
// false for a kind it does not know: that show is recomputed whole, which
// is always correct and at worst a wasted read.
func placesOf(e projections.Event) (seats []string, area, order string, ok bool, err error) {
	type places interface {
		proto.Message
		GetSeats() []string
		GetGaArea() string
	}
	var m places
	switch e.Type {
	case "seatghor.events.v1.TicketIssued", "seatghor.events.v1.TicketCheckedIn", "seatghor.events.v1.RefundIssued":
		return nil, "", "", true, nil // no seat or GA place changed
	case "seatghor.events.v1.PaymentStateChanged":
		// A payment that starts extends its order's hold: the
		// seats' held_until moves without a new row version, and the map
		// must not let them go at the old time.
		var p eventsv1.PaymentStateChanged
		if err := proto.Unmarshal(e.Payload, &p); err != nil {
			return nil, "", "", false, fmt.Errorf("decode %s %s: %w", e.Type, e.EventID, err)
		}
		return nil, "", p.GetOrderId(), true, nil
	case "seatghor.events.v1.SeatsHeld":
		m = &eventsv1.SeatsHeld{}
	case "seatghor.events.v1.HoldReleased":
		m = &eventsv1.HoldReleased{}
	case "seatghor.events.v1.HoldExpired":
		m = &eventsv1.HoldExpired{}
	case "seatghor.events.v1.OrderCreated": // may extend the seats' held_until
		m = &eventsv1.OrderCreated{}
	case "seatghor.events.v1.BookingConfirmed":
		m = &eventsv1.BookingConfirmed{}
	case "seatghor.events.v1.OrderCancelled":
		m = &eventsv1.OrderCancelled{}
	case "seatghor.events.v1.OrderExpired":
		m = &eventsv1.OrderExpired{}
	case "seatghor.events.v1.SeatsAllocated": // decision 0185
		m = &eventsv1.SeatsAllocated{}
	case "seatghor.events.v1.AllocationReleased":
		m = &eventsv1.AllocationReleased{}
	case "seatghor.events.v1.AllocationReturned":
		m = &eventsv1.AllocationReturned{}
	default:
		return nil, "", "", false, nil
	}
	if err := proto.Unmarshal(e.Payload, m); err != nil {
		return nil, "", "", false, fmt.Errorf("decode %s %s: %w", e.Type, e.EventID, err)
	}
	return m.GetSeats(), m.GetGaArea(), "", true, nil
}

// Shard is what the projector reads from a show's shard: the whole map
// (repair) and the current rows of the seats a batch touched.
type Shard interface {
	Loader
	SeatChanges(ctx context.Context, showID int64, seats, orders []string, ga bool) (booking.SeatChanges, error)
}

// ManyShows reads the seats of many shows at once (booking.Service does).
type ManyShows interface {
	ShowSeatChanges(ctx context.Context, seats map[int64][]string) (map[int64]booking.SeatChanges, error)
}

// Projector keeps the Redis seat maps current from the outbox.
//
// Two changes of one seat must land in the order they happened (docs/DESIGN.md,
// "Ordering of read-model updates"). For each show a batch names, it reads
// the current rows of the seats (and GA areas) the events name, each with
// its row version, and writes each seat only if its version is at least the
// one Redis has (decision 0130): the work follows the change, not the size
// of the show, and duplicates, replays and out-of-order writes change
// nothing newer. The map's version becomes the batch's newest event xid of
// the show, the number booking computes for a conflict answer.
// A show with no map in Redis, an event kind it does not know, and a
// catalog change (ShowPublished) recompute the whole show from one snapshot
// of its shard instead (decision 0021): the repair path.
type Projector struct {
	store *Store
	shard Shard
	// shows is shard when it can read many shows at once; nil: one show
	// at a time.
	shows ManyShows
	log   *slog.Logger
	// parallel bounds concurrent shows within a batch.
	parallel int
}

// NewProjector returns the seat-map projector.
func NewProjector(store *Store, shard Shard, log *slog.Logger) *Projector {
	shows, _ := shard.(ManyShows)
	return &Projector{store: store, shard: shard, shows: shows, log: log, parallel: 8}
}

// BusyPoll implements projections.Eager: while holds pour in, a seat map
// follows within tens of milliseconds (issue 10: projector delay p99 <
// 100 ms). Not less: each batch rewrites a big show's whole availability
// and seat versions in Redis (200 kB for 50,000 seats).
func (p *Projector) BusyPoll() time.Duration { return 25 * time.Millisecond }

// Name implements projections.Projector.
func (p *Projector) Name() string { return Name }

// showWork is what one batch asks of one show.
type showWork struct {
	id        int64
	version   int64 // newest event xid of the show in the batch
	seats     map[string]bool
	orders    []string // whose hold's seats to read (a payment extended it)
	ga        bool
	full      bool
	published bool
}

// Apply brings every show the batch names up to date.
func (p *Projector) Apply(ctx context.Context, events []projections.Event) error {
	_, err := p.ApplyPreview(ctx, events, nil)
	return err
}

// ApplyPreview implements projections.Previewer: it applies events as
// Apply does and previews ahead, the committed events that an older
// transaction still holds back (decision 0248), in the same seat read and
// Redis pipeline (decision 0260): a big show both name is read and written
// once a look, not twice. A previewed seat is written under its row
// version like any change (decision 0130), so nothing newer is undone and
// the order of events does not matter; the show's version comes from
// events alone (a preview-only show's 0 never raises it): it stays the
// newest xid delivered in order, which a conflict answer relies on
// . Only the common case is previewed, shows with a map whose
// events name seats only and whose batch work, if any, takes the same
// path; the rest waits for its turn. It returns the events of ahead whose
// seats it wrote.
func (p *Projector) ApplyPreview(ctx context.Context, events, ahead []projections.Event) ([]projections.Event, error) {
	work := map[int64]*showWork{}
	var order []int64
	for _, e := range events {
		if e.ShowID <= 0 {
			continue
		}
		w := work[e.ShowID]
		if w == nil {
			w = &showWork{id: e.ShowID, seats: map[string]bool{}}
			work[e.ShowID] = w
			order = append(order, e.ShowID)
		}
		seats, area, order, ok, err := placesOf(e)
		if err != nil {
			p.log.WarnContext(ctx, "seat map: undecodable event; recomputing its show", "show_id", e.ShowID, "err", err)
			ok = false
		}
		if !ok {
			w.full = true
			w.published = w.published || e.Type == "seatghor.events.v1.ShowPublished"
			continue
		}
		// Only booking's events (a shard's outbox) carry the show's
		// version; the kinds placesOf knows are all booking's.
		w.version = max(w.version, int64(e.XID))
		for _, s := range seats {
			w.seats[s] = true
		}
		w.ga = w.ga || area != ""
		if order != "" && !slices.Contains(w.orders, order) {
			w.orders = append(w.orders, order)
		}
	}
	// Shows whose events name only seats (the on-sale's holds) are read in
	// one query per shard and written in one Redis pipeline (decision
	// 0210); the others, and the shows that turn out to have no map, one
	// show at a time.
	var rest []*showWork
	seats := map[int64][]string{}
	for _, id := range order {
		w := work[id]
		if w.full || w.published || w.ga || len(w.orders) > 0 || len(w.seats) == 0 || p.shows == nil {
			rest = append(rest, w)
			continue
		}
		seats[id] = slices.Sorted(maps.Keys(w.seats))
	}
	previewed := map[int64]bool{}
	for id, named := range p.previewable(ahead) {
		if w := work[id]; w != nil {
			if _, many := seats[id]; !many {
				continue // its batch takes the one-show path: left to Apply
			}
			for seat := range named {
				w.seats[seat] = true
			}
			seats[id] = slices.Sorted(maps.Keys(w.seats))
		} else {
			seats[id] = slices.Sorted(maps.Keys(named))
		}
		previewed[id] = true
	}
	var changes map[int64]booking.SeatChanges
	var missing []int64
	if len(seats) > 0 {
		var err error
		if changes, err = p.shows.ShowSeatChanges(ctx, seats); err != nil {
			return nil, fmt.Errorf("read seats of %d shows: %w", len(seats), err)
		}
		// A show only previewed has no version here: 0 never raises it.
		versions := make(map[int64]int64, len(changes))
		for id := range changes {
			if w := work[id]; w != nil {
				versions[id] = w.version
			}
		}
		if missing, err = p.store.ApplyChangesMany(ctx, versions, changes); err != nil {
			return nil, err
		}
		for _, id := range missing {
			// A show only previewed and without a map is left to Apply,
			// which recomputes it.
			if work[id] != nil {
				rest = append(rest, &showWork{id: id, full: true})
			}
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(p.parallel)
	for _, w := range rest {
		g.Go(func() error { return p.applyShow(gctx, w) })
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var shown []projections.Event
	for _, e := range ahead {
		if _, ok := changes[e.ShowID]; ok && previewed[e.ShowID] && !slices.Contains(missing, e.ShowID) {
			shown = append(shown, e)
		}
	}
	return shown, nil
}

// previewable returns, by show, the seats that events name, for the shows
// a preview may show: those whose events all name seats only (no GA area,
// no payment's order, a kind placesOf knows).
func (p *Projector) previewable(events []projections.Event) map[int64]map[string]bool {
	named := map[int64]map[string]bool{}
	if p.shows == nil {
		return named
	}
	skip := map[int64]bool{}
	for _, e := range events {
		if e.ShowID <= 0 || skip[e.ShowID] {
			continue
		}
		seats, area, order, ok, err := placesOf(e)
		if err != nil || !ok || area != "" || order != "" {
			skip[e.ShowID] = true
			delete(named, e.ShowID)
			continue
		}
		if named[e.ShowID] == nil {
			named[e.ShowID] = map[string]bool{}
		}
		for _, seat := range seats {
			named[e.ShowID][seat] = true
		}
	}
	for id, set := range named {
		if len(set) == 0 {
			delete(named, id)
		}
	}
	return named
}

func (p *Projector) applyShow(ctx context.Context, w *showWork) error {
	if w.published {
		// The show's layout may have changed: the next read reloads it.
		if err := p.store.DropLayout(ctx, w.id); err != nil {
			return err
		}
	}
	if !w.full {
		seats := make([]string, 0, len(w.seats))
		for s := range w.seats {
			seats = append(seats, s)
		}
		slices.Sort(seats)
		var c booking.SeatChanges
		var err error
		if len(seats) > 0 || len(w.orders) > 0 || w.ga {
			c, err = p.shard.SeatChanges(ctx, w.id, seats, w.orders, w.ga)
			if isNotFound(err) {
				return nil // not on a shard (yet): a read will load it
			}
			if err != nil {
				return fmt.Errorf("read seats of show %d: %w", w.id, err)
			}
		}
		missing, err := p.store.ApplyChanges(ctx, w.id, w.version, c)
		if err != nil || !missing {
			return err
		}
	}
	return p.Recompute(ctx, w.id)
}

// Recompute writes a show's whole availability from one snapshot of its
// shard if it is newer than Redis's (the repair path, and a rebuild's
// measure: TestFullRebuildOfALargeShow).
func (p *Projector) Recompute(ctx context.Context, showID int64) error {
	m, err := p.shard.SeatMap(ctx, showID)
	if isNotFound(err) {
		return nil // not on a shard (yet): a read will load it
	}
	if err != nil {
		return fmt.Errorf("recompute seat map %d: %w", showID, err)
	}
	_, err = p.store.PutAvailability(ctx, m)
	return err
}

// Reset drops every seat map.
func (p *Projector) Reset(ctx context.Context) error { return p.store.Reset(ctx) }
