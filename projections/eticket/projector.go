// Package eticket makes the e-ticket PDFs: after a booking commits,
// a projector renders one PDF per order and language, English and Bengali
// (the show, the buyer, and a QR code of each ticket's signed code) and stores it in object storage (MinIO or
// any S3 API). If the store is down, the batch fails and the outbox
// consumer retries it with backoff; the checkpoint stays put until the PDFs
// are stored, so no ticket is lost.
package eticket

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
	"google.golang.org/protobuf/proto"

	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	eventsv1 "github.com/seatghor/seatghor/gen/seatghor/events/v1"
	"github.com/seatghor/seatghor/projections"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/display"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/ticket"
)

// Name is the projector's name (`seatghor rebuild eticket`).
const Name = "eticket"

// ContentType is the media type of the stored files.
const ContentType = "application/pdf"

// Objects is where the PDFs go (objstore.Bucket).
type Objects interface {
	Put(ctx context.Context, key string, data []byte, contentType string) error
}

// Marks records which orders have their PDF (the "my tickets" read model,
// so the list can say the download is ready).
type Marks interface {
	MarkPDF(ctx context.Context, userID, orderID, key string, at time.Time) error
	ResetPDFs(ctx context.Context) error
}

// Shows looks shows up in the catalog.
type Shows interface {
	GetShow(ctx context.Context, showID int64) (catalog.Show, error)
}

// Bookings reads what each confirmed order of a show said when it was
// booked (booking.Service.ConfirmedBookings): a show moved to a new time
// has every e-ticket made again (decision 0465).
type Bookings interface {
	ConfirmedBookings(ctx context.Context, showID int64) ([]*eventsv1.BookingConfirmed, error)
}

// Languages are the languages every e-ticket is made in (decision 0171).
var Languages = []display.Lang{display.Bengali, display.English}

// Key is the object key of an order's e-ticket in a language; it depends on
// nothing else, so a replay overwrites the same object. English keeps the
// key e-tickets had before there were two languages.
func Key(showID int64, orderID string, lang display.Lang) string {
	if lang == display.Bengali {
		return fmt.Sprintf("tickets/%d/%s.bn.pdf", showID, orderID)
	}
	return fmt.Sprintf("tickets/%d/%s.pdf", showID, orderID)
}

// Projector renders and stores e-tickets.
type Projector struct {
	objects  Objects
	marks    Marks
	shows    Shows
	bookings Bookings
	codes    *ticket.Codes
	now      func() time.Time
	parallel int
	// reprints is the read database, where the queue of shows whose
	// e-tickets are made again lives (eticket_reprints).
	reprints *pg.Pool
}

// NewProjector returns the e-ticket projector.
func NewProjector(objects Objects, marks Marks, shows Shows, bookings Bookings, codes *ticket.Codes, reprints *pg.Pool, now func() time.Time) *Projector {
	return &Projector{objects: objects, marks: marks, shows: shows, bookings: bookings, codes: codes, reprints: reprints, now: now, parallel: 4}
}

// Name implements projections.Projector.
func (p *Projector) Name() string { return Name }

// Apply renders and stores the PDF of every booking confirmed in the batch,
// and queues the PDFs of every show moved to a new time (decision 0465) or
// renamed (decision 0469) to be made again (RunReprints, decision 0484).
// A failure fails the batch (it is retried whole; storing is idempotent).
func (p *Projector) Apply(ctx context.Context, events []projections.Event) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(p.parallel)
	for _, e := range events {
		switch e.Type {
		case "seatghor.events.v1.BookingConfirmed":
			var ev eventsv1.BookingConfirmed
			if err := proto.Unmarshal(e.Payload, &ev); err != nil {
				return fmt.Errorf("eticket: event %s: %w", e.EventID, err)
			}
			g.Go(func() error { return p.make(ctx, &ev) })
		case "seatghor.events.v1.ShowRescheduled", "seatghor.events.v1.ShowRenamed":
			// What is printed changed: its times or its names.
			var ev interface {
				proto.Message
				GetShowId() int64
			} = &eventsv1.ShowRenamed{}
			if e.Type == "seatghor.events.v1.ShowRescheduled" {
				ev = &eventsv1.ShowRescheduled{}
			}
			if err := proto.Unmarshal(e.Payload, ev); err != nil {
				return fmt.Errorf("eticket: event %s: %w", e.EventID, err)
			}
			// Made again by a job of their own, a page at a time
			// (decision 0484): a stadium's would hold this batch up.
			if err := p.requestReprint(ctx, ev.GetShowId()); err != nil {
				return err
			}
		}
	}
	return g.Wait()
}

// make renders and stores the e-tickets of booking ev.
func (p *Projector) make(ctx context.Context, ev *eventsv1.BookingConfirmed) error {
	show, ok, err := p.show(ctx, ev.GetShowId())
	if err != nil || !ok {
		return err
	}
	return p.render(ctx, show, ev)
}

// show reads a show from the catalog; false for a show gone from it,
// which has nothing to print.
func (p *Projector) show(ctx context.Context, showID int64) (catalog.Show, bool, error) {
	show, err := p.shows.GetShow(ctx, showID)
	if errors.Is(err, catalog.ErrNotFound) {
		return show, false, nil
	}
	if err != nil {
		return show, false, fmt.Errorf("eticket: show %d: %w", showID, err)
	}
	return show, true, nil
}

// render renders booking ev of show in each language and stores them,
// then marks the order's PDF made.
func (p *Projector) render(ctx context.Context, show catalog.Show, ev *eventsv1.BookingConfirmed) error {
	// The journey's times as the trip runs now: a booking confirmed before
	// a delay, read after it, says the times it had then.
	ev.Journey = journeyNow(show, ev.GetJourney())
	tickets, err := ticket.FromBooking(ev, p.codes)
	if err != nil || len(tickets) == 0 {
		return err
	}
	// English last: its key is the mark, so a marked order has both.
	var key string
	for _, lang := range Languages {
		pdf, err := Render(show, ev.GetUserId(), tickets, lang)
		if err != nil {
			return err
		}
		key = Key(ev.GetShowId(), ev.GetOrderId(), lang)
		if err := p.objects.Put(ctx, key, pdf, ContentType); err != nil {
			return fmt.Errorf("eticket: store %s: %w", key, err)
		}
	}
	return p.marks.MarkPDF(ctx, ev.GetUserId(), ev.GetOrderId(), key, p.now())
}

// Reset forgets which PDFs exist; a replay stores them again (the objects
// are overwritten, not deleted first).
func (p *Projector) Reset(ctx context.Context) error { return p.marks.ResetPDFs(ctx) }

// journeyNow is journey j of show as it runs now (its stops' and counters'
// times from the show's current departure); j itself for a show without
// stops or a journey it does not have.
func journeyNow(show catalog.Show, j *commonv1.Journey) *commonv1.Journey {
	if j == nil || len(show.Stops) == 0 {
		return j
	}
	t := show.Trip()
	from, okFrom := t.StopIndex(j.GetFromStopId())
	to, okTo := t.StopIndex(j.GetToStopId())
	if !okFrom || !okTo {
		return j
	}
	if now := t.JourneyProto(from, to, j.GetBoardingCounterId(), j.GetDroppingCounterId()); now != nil {
		return now
	}
	return j
}
