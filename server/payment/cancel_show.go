package payment

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/counter"
	"github.com/seatghor/seatghor/server/pg"
)

// The cancellation job (decision 0440): a show its operator cancelled
// (catalog.CancelShow) is marked on its shard, and this job ends what is
// live of it: its holds released, its unpaid orders cancelled, its paid
// ones cancelled and refunded in full through the gateway, one order per
// transaction. Everything it does is conditional on the rows' state, so it
// runs in every workers process at once and picks up after a crash where
// the last commit left it; the refunds it records are sent here and, when
// the gateway does not answer, by the recovery job (recoverRefunds).

// cancelGrace is how long after a cancellation the job keeps looking even
// when a pass found nothing: a hold or an order whose statement began
// before the cancellation committed can still commit after it (the hold
// rules read the show in the statement's snapshot), and such a transaction
// lasts milliseconds. After the grace the show's job is done.
const cancelGrace = time.Minute

// cancelBatch is how many orders a pass reads at a time.
const cancelBatch = 200

// RunCancellations runs one pass of the job over every show being
// cancelled, on every shard, and returns how many holds and orders it
// ended. The workers call it every few seconds and when woken.
func (s *Service) RunCancellations(ctx context.Context) (int, error) {
	total := 0
	var errs []error
	for _, pool := range s.router.Shards() {
		shows, err := catalog.Cancelling(ctx, pool)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", pool.Name, err))
			continue
		}
		for _, showID := range shows {
			n, err := s.cancelShow(ctx, pool, showID)
			total += n
			if err != nil {
				errs = append(errs, err)
			}
		}
	}
	return total, errors.Join(errs...)
}

// cancelShow is one pass over a cancelled show on pool, its shard.
func (s *Service) cancelShow(ctx context.Context, pool *pg.Pool, showID int64) (int, error) {
	c, err := catalog.ReadCancellation(ctx, pool, showID)
	if err != nil {
		return 0, err
	}
	ended, err := booking.ReleaseShowHolds(ctx, pool, showID, s.now())
	if err != nil {
		return ended, err
	}
	for {
		ids, err := booking.LiveOrders(ctx, pool, showID, cancelBatch)
		if err != nil {
			return ended, err
		}
		progressed := 0
		for _, id := range ids {
			done, err := s.cancelForShow(ctx, pool, id, c.By)
			if err != nil {
				return ended, fmt.Errorf("cancel order %s of cancelled show %d: %w", id, showID, err)
			}
			if done {
				progressed++
			}
		}
		ended += progressed
		// An order that changed under the pass (paid meanwhile) is left to
		// the next pass rather than tried again at once.
		if len(ids) < cancelBatch || progressed == 0 {
			break
		}
	}
	if now := s.now(); ended == 0 && now.Sub(c.At) > cancelGrace {
		left, err := booking.LiveOrders(ctx, pool, showID, 1)
		if err != nil || len(left) > 0 {
			return ended, err
		}
		return ended, catalog.FinishCancellation(ctx, pool, showID, now)
	}
	return ended, nil
}

// cancelForShow cancels one order of a cancelled show, by the operator
// by, and refunds in full what its buyer paid (no fee: the operator
// cancelled), then sends the refund. done says the order was ended here.
func (s *Service) cancelForShow(ctx context.Context, pool *pg.Pool, orderID, by string) (done bool, err error) {
	now := s.now()
	var refundID string
	err = pg.InTx(ctx, pool, func(tx pgx.Tx) error {
		o, ended, paid, err := booking.CancelForShow(ctx, tx, orderID, by, now)
		done = ended
		if err != nil || !ended || !paid || o.TotalMinor == 0 {
			return err // a free order (decision 0070) has nothing to give back
		}
		if o.CounterShiftID != "" {
			// Paid in cash at a counter: owed there, in cash (decision 0443).
			return counter.RecordOwed(ctx, tx, o, by, now)
		}
		p, refund, err := owedBack(ctx, tx, o)
		if err != nil || refund <= 0 {
			return err
		}
		refundID, err = recordBookedRefund(ctx, tx, p, refund, "show_cancelled", "pending", by, "", now)
		return err
	})
	if err != nil || refundID == "" {
		return done, err
	}
	if err := s.sendRefund(ctx, pool, refundID); err != nil {
		s.log.WarnContext(ctx, "refund not sent yet; the refund worker retries", "refund", refundID, "err", err)
	}
	return done, nil
}

// Cancellation is a show's cancellation and how far the job has got.
type Cancellation struct {
	catalog.Cancellation
	// OrdersLeft are the show's orders the job has still to end.
	OrdersLeft int
	// OrdersCancelled are the orders the cancellation ended.
	OrdersCancelled int
	// Refunds of the cancellation by status: succeeded, pending (sent or
	// about to be, or unknown) and failed (owed, settled by hand).
	RefundsSucceeded, RefundsPending, RefundsFailed int
	// RefundedMinor is what the refunds give back in all, in Currency.
	RefundedMinor int64
	Currency      string
}

// CancellationProgress reads how far a show's cancellation has got from
// its shard; a show not cancelled is not found.
func (s *Service) CancellationProgress(ctx context.Context, showID int64) (Cancellation, error) {
	pool, err := s.router.ForShow(ctx, showID)
	if err != nil {
		return Cancellation{}, err
	}
	c, err := catalog.ReadCancellation(ctx, pool, showID)
	if err != nil {
		return Cancellation{}, err
	}
	out := Cancellation{Cancellation: c}
	if out.OrdersLeft, out.OrdersCancelled, err = booking.CountOrders(ctx, pool, showID, c.At); err != nil {
		return out, err
	}
	err = pool.QueryRow(ctx, `
		SELECT count(*) FILTER (WHERE status = 'succeeded'),
		       count(*) FILTER (WHERE status IN ('pending', 'unknown', 'awaiting_approval')),
		       count(*) FILTER (WHERE status = 'failed'),
		       coalesce(sum(amount_minor), 0)::bigint, coalesce(min(currency), '')
		FROM refunds WHERE show_id = $1 AND reason = 'show_cancelled'`, showID).
		Scan(&out.RefundsSucceeded, &out.RefundsPending, &out.RefundsFailed, &out.RefundedMinor, &out.Currency)
	if err != nil {
		return out, fmt.Errorf("read the refunds of cancelled show %d: %w", showID, err)
	}
	return out, nil
}
