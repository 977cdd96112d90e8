package eticket

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/errgroup"

	eventsv1 "github.com/seatghor/seatghor/gen/seatghor/events/v1"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/pg"
)

// reprintPage is how many orders one step of a reprint makes again.
const reprintOrders = 100

// requestReprint queues show showID's e-tickets to be made again, from
// its first order: a request while one runs starts it over, since what is
// printed changed again (decision 0484).
func (p *Projector) requestReprint(ctx context.Context, showID int64) error {
	_, err := p.reprints.Exec(ctx, `
		INSERT INTO eticket_reprints (show_id, requested_at) VALUES ($1, $2)
		ON CONFLICT (show_id) DO UPDATE SET after_order = '', requested_at = excluded.requested_at`, showID, p.now())
	if err != nil {
		return fmt.Errorf("eticket: queue the reprint of show %d: %w", showID, err)
	}
	return nil
}

// Reprint makes again the next page of e-tickets of the show queued
// longest: its confirmed orders after the last one made, in order id
// order. The queue's row stays locked meanwhile (another process skips
// it and takes the next show), and moves on, or goes, when the page is
// stored. It says whether there was a page to make.
func (p *Projector) Reprint(ctx context.Context) (bool, error) {
	made := false
	err := pg.InTx(ctx, p.reprints, func(tx pgx.Tx) error {
		var showID int64
		var after string
		err := tx.QueryRow(ctx, `
			SELECT show_id, after_order FROM eticket_reprints ORDER BY requested_at, show_id LIMIT 1 FOR UPDATE SKIP LOCKED`).
			Scan(&showID, &after)
		if found, err := pg.Found(err); err != nil || !found {
			return err
		}
		made = true
		last, err := p.reprintPage(ctx, showID, after)
		if err != nil {
			return err
		}
		if last == "" { // the last page was made (or none was left)
			_, err = tx.Exec(ctx, `DELETE FROM eticket_reprints WHERE show_id = $1`, showID)
		} else {
			_, err = tx.Exec(ctx, `UPDATE eticket_reprints SET after_order = $2 WHERE show_id = $1`, showID, last)
		}
		if err != nil {
			return fmt.Errorf("eticket: the reprint of show %d: %w", showID, err)
		}
		return nil
	})
	return made, err
}

// reprintPage makes again the e-tickets of up to reprintOrders confirmed
// orders of the show after order after, and returns the last of them to
// go on from, or "" when that page was the last (or the show is gone:
// nothing to print).
func (p *Projector) reprintPage(ctx context.Context, showID int64, after string) (string, error) {
	show, ok, err := p.show(ctx, showID)
	if err != nil || !ok {
		return "", err
	}
	booked, err := p.bookings.ConfirmedBookings(ctx, showID)
	if fault.ReasonOf(err) == fault.ShowNotFound {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("eticket: the bookings of show %d: %w", showID, err)
	}
	slices.SortFunc(booked, func(a, b *eventsv1.BookingConfirmed) int { return cmp.Compare(a.GetOrderId(), b.GetOrderId()) })
	i, _ := slices.BinarySearchFunc(booked, after, func(b *eventsv1.BookingConfirmed, id string) int {
		return cmp.Compare(b.GetOrderId(), id)
	})
	if i < len(booked) && booked[i].GetOrderId() == after {
		i++
	}
	page := booked[i:min(len(booked), i+reprintOrders)]
	if len(page) == 0 {
		return "", nil
	}
	var g errgroup.Group
	g.SetLimit(p.parallel)
	for _, b := range page { // the show read once for the page
		g.Go(func() error { return p.render(ctx, show, b) })
	}
	if err := g.Wait(); err != nil {
		return "", err
	}
	if i+len(page) == len(booked) {
		return "", nil
	}
	return page[len(page)-1].GetOrderId(), nil
}

// RunReprints makes queued reprints a page at a time until ctx ends,
// looking again every idle when the queue is empty, and after a failure
// (logged; the page is made again).
func (p *Projector) RunReprints(ctx context.Context, idle time.Duration, log *slog.Logger) {
	for ctx.Err() == nil {
		made, err := p.Reprint(ctx)
		if err != nil && ctx.Err() == nil {
			log.Warn("e-tickets not made again yet", "err", err)
		}
		if made && err == nil {
			continue
		}
		select {
		case <-ctx.Done():
		case <-time.After(idle):
		}
	}
}
