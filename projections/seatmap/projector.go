package seatmap

import (
	"context"
	"fmt"
	"log/slog"

	"golang.org/x/sync/errgroup"

	"github.com/seatghor/seatghor/projections"
)

// Name is the seat-map projector's name (`seatghor rebuild seatmap`).
const Name = "seatmap"

// noSeatChange lists the outbox events that never change a seat or GA
// place; every other event (including kinds added later) recomputes its
// show, which is always correct and at worst a wasted read.
var noSeatChange = map[string]bool{
	"seatghor.events.v1.OrderCreated":        true,
	"seatghor.events.v1.PaymentStateChanged": true,
	"seatghor.events.v1.TicketIssued":        true,
	"seatghor.events.v1.TicketCheckedIn":     true,
}

// Projector keeps the Redis seat maps current from the outbox.
//
// Two changes of one seat must land in the order they happened (docs/DESIGN.md).
// Instead of replaying events onto the bitmap, it recomputes the whole
// availability of each show named in a batch from the shard (one
// consistent snapshot: states and version together) and writes it only if
// its version is newer than Redis's. A late or repeated write is therefore
// dropped, whatever order batches, retries and the reader's fills arrive
// in, and after quiescence Redis equals the shard exactly. The version is
// booking's seat-map version (the sum of row versions, decision 0005), the
// same number CreateHold's conflict answer carries.
type Projector struct {
	store  *Store
	loader Loader
	log    *slog.Logger
	// parallel bounds concurrent show recomputes within a batch.
	parallel int
}

// NewProjector returns the seat-map projector.
func NewProjector(store *Store, loader Loader, log *slog.Logger) *Projector {
	return &Projector{store: store, loader: loader, log: log, parallel: 8}
}

// Name implements projections.Projector.
func (p *Projector) Name() string { return Name }

// Apply recomputes every show the batch changed.
func (p *Projector) Apply(ctx context.Context, events []projections.Event) error {
	var shows []int64
	seen := map[int64]bool{}
	published := map[int64]bool{}
	for _, e := range events {
		if noSeatChange[e.Type] || e.ShowID <= 0 {
			continue
		}
		if e.Type == "seatghor.events.v1.ShowPublished" {
			published[e.ShowID] = true
		}
		if !seen[e.ShowID] {
			seen[e.ShowID] = true
			shows = append(shows, e.ShowID)
		}
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(p.parallel)
	for _, id := range shows {
		g.Go(func() error {
			if published[id] {
				// The show's layout may have changed: the next read reloads it.
				if err := p.store.DropLayout(ctx, id); err != nil {
					return err
				}
			}
			m, err := p.loader.SeatMap(ctx, id)
			if isNotFound(err) {
				return nil // not on a shard (yet): a read will load it
			}
			if err != nil {
				return fmt.Errorf("recompute seat map %d: %w", id, err)
			}
			_, err = p.store.PutAvailability(ctx, m)
			return err
		})
	}
	return g.Wait()
}

// Reset drops every seat map.
func (p *Projector) Reset(ctx context.Context) error { return p.store.Reset(ctx) }
