package payment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/gateway"
	"github.com/seatghor/seatghor/server/pg"
)

// WorkerConfig says how often the payment jobs run.
type WorkerConfig struct {
	// Poll is how often the event processor looks for stored events when
	// nothing woke it; default 1 s.
	Poll time.Duration
	// RecoverEvery is how often the recovery job asks the gateway about
	// open attempts and refunds; default 30 s.
	RecoverEvery time.Duration
	// ReconcileEvery is how often the last ReconcileWindow is reconciled
	// against the gateway's report; default 1 h; negative disables.
	ReconcileEvery  time.Duration
	ReconcileWindow time.Duration
	// CancelEvery is how often the cancellation job looks for shows being
	// cancelled (decision 0440); default 2 s.
	CancelEvery time.Duration
}

func (c *WorkerConfig) defaults() {
	if c.Poll <= 0 {
		c.Poll = time.Second
	}
	if c.RecoverEvery <= 0 {
		c.RecoverEvery = 30 * time.Second
	}
	if c.ReconcileEvery == 0 {
		c.ReconcileEvery = time.Hour
	}
	if c.ReconcileWindow <= 0 {
		c.ReconcileWindow = 24 * time.Hour
	}
	if c.CancelEvery <= 0 {
		c.CancelEvery = 2 * time.Second
	}
}

// RunWorkers runs the payment jobs until ctx ends: the event processor on
// every shard, the recovery job (missed webhooks, unanswered refunds), the
// cancellation job (decision 0440) and periodic reconciliation. Every job
// is safe to run in several processes at once: events are taken with SKIP
// LOCKED and every change is conditional.
func (s *Service) RunWorkers(ctx context.Context, cfg WorkerConfig) {
	cfg.defaults()
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.every(ctx, cfg.RecoverEvery, "recover", s.Recover)
	}()
	go s.every(ctx, cfg.CancelEvery, "cancellations", func(ctx context.Context) error {
		_, err := s.RunCancellations(ctx)
		return err
	})
	if cfg.ReconcileEvery > 0 {
		go s.every(ctx, cfg.ReconcileEvery, "reconcile", func(ctx context.Context) error {
			to := s.now()
			_, err := s.Reconcile(ctx, ReconcileRequest{From: to.Add(-cfg.ReconcileWindow), To: to})
			return err
		})
	}
	tick := time.NewTicker(cfg.Poll)
	defer tick.Stop()
	for {
		if _, err := s.ProcessEvents(ctx); err != nil && ctx.Err() == nil {
			s.log.ErrorContext(ctx, "payment events", "err", err)
		}
		select {
		case <-ctx.Done():
			<-done
			return
		case <-tick.C:
		case <-s.wake:
		}
	}
}

func (s *Service) every(ctx context.Context, d time.Duration, name string, job func(context.Context) error) {
	for {
		// Jitter keeps several processes from asking the gateway in step.
		wait := d/2 + rand.N(d/2+1)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		if err := job(ctx); err != nil && ctx.Err() == nil {
			s.log.ErrorContext(ctx, "payment job failed", "job", name, "err", err)
		}
	}
}

// claimed is a stored event taken by one processor.
type claimed struct {
	id       string
	attempts int
	event    gateway.Event
}

// ProcessEvents applies the stored webhook events of every shard, a batch
// at a time, and returns how many it processed. Several processors can run:
// each claims events with FOR UPDATE SKIP LOCKED and a short lease.
func (s *Service) ProcessEvents(ctx context.Context) (int, error) {
	total := 0
	var errs []error
	for _, pool := range s.router.Shards() {
		for {
			batch, err := s.claim(ctx, pool)
			if err != nil {
				errs = append(errs, err)
				break
			}
			for _, c := range batch {
				result, err := s.process(ctx, c.event)
				if err := s.finish(ctx, pool, c, result, err); err != nil {
					errs = append(errs, err)
				}
			}
			total += len(batch)
			if len(batch) < s.cfg.EventBatch {
				break
			}
		}
	}
	return total, errors.Join(errs...)
}

func (s *Service) claim(ctx context.Context, pool *pg.Pool) ([]claimed, error) {
	now := s.now()
	rows, err := pool.Query(ctx, `
		UPDATE payment_events SET locked_until = $1::timestamptz + interval '30 seconds', attempts = attempts + 1
		WHERE event_id IN (
			SELECT event_id FROM payment_events e
			WHERE processed_at IS NULL AND (locked_until IS NULL OR locked_until < $1)
			  -- Not the events of a show this shard no longer (or not yet)
			  -- serves: their writes are refused (decision 0242).
			  AND NOT EXISTS (SELECT FROM shows s WHERE s.show_id::text = split_part(e.reference, '_', 2) AND s.placement <> 'active')
			ORDER BY received_at LIMIT $2
			FOR UPDATE SKIP LOCKED)
		RETURNING event_id, attempts, event`, now, s.cfg.EventBatch)
	if err != nil {
		return nil, fmt.Errorf("claim payment events on %s: %w", pool.Name, err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (claimed, error) {
		var (
			c   claimed
			raw []byte
		)
		if err := r.Scan(&c.id, &c.attempts, &raw); err != nil {
			return c, err
		}
		return c, json.Unmarshal(raw, &c.event)
	})
}

// process applies one event. Order is never assumed: a success is
// applied as it is (it is verified and a state never goes backwards), but a
// failure may be stale, so the gateway's current verified status is asked
// and applied instead.
func (s *Service) process(ctx context.Context, ev gateway.Event) (string, error) {
	switch {
	case ev.Charge != nil && ev.Type == gateway.EventChargeFailed:
		charge, err := observe(s.metrics, "get_charge", func() (gateway.Charge, error) {
			return s.gw.GetCharge(ctx, ev.Charge.IdempotencyKey)
		})
		if err != nil {
			return "", fmt.Errorf("status of charge %s: %w", ev.Charge.ID, err)
		}
		return "applied " + string(charge.Status), s.Apply(ctx, charge)
	case ev.Charge != nil:
		return "applied " + string(ev.Charge.Status), s.Apply(ctx, *ev.Charge)
	case ev.Refund != nil:
		pool, err := s.shardOfID(ctx, "refund", ev.Refund.Reference)
		if err != nil {
			return "ignored: unknown refund", nil
		}
		return "applied refund " + string(ev.Refund.Status), s.applyRefund(ctx, pool, *ev.Refund)
	default:
		return "ignored", nil
	}
}

// finish marks an event processed, or lets it be retried later with
// backoff when applying it failed.
func (s *Service) finish(ctx context.Context, pool *pg.Pool, c claimed, result string, perr error) error {
	now := s.now()
	if nf, ok := fault.As(perr); ok && nf.Reason == fault.PaymentNotFound {
		result, perr = "ignored: "+nf.Message, nil
	}
	if perr == nil {
		_, err := pool.Exec(ctx, `
			UPDATE payment_events SET processed_at = $2, result = $3, locked_until = NULL WHERE event_id = $1`,
			c.id, now, result)
		return err
	}
	backoff := min(time.Duration(1<<min(c.attempts, 10))*time.Second, 10*time.Minute)
	_, err := pool.Exec(ctx, `
		UPDATE payment_events SET locked_until = $2, last_error = $3 WHERE event_id = $1`,
		c.id, now.Add(backoff), perr.Error())
	return errors.Join(fmt.Errorf("process event %s: %w", c.id, perr), err)
}

// Recover asks the gateway about every attempt that stayed PENDING or
// UNKNOWN longer than RecoverAfter and applies its verified answer (missed
// webhooks, crashes between the gateway's answer and our commit), and sends
// again the refunds the gateway has not confirmed.
func (s *Service) Recover(ctx context.Context) error {
	var errs []error
	for _, pool := range s.router.Shards() {
		if err := s.recoverPayments(ctx, pool); err != nil {
			errs = append(errs, err)
		}
		if err := s.recoverRefunds(ctx, pool); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (s *Service) recoverPayments(ctx context.Context, pool *pg.Pool) error {
	now := s.now()
	rows, err := pool.Query(ctx, `
		SELECT `+paymentColumns+` FROM payments p
		WHERE status IN ('pending', 'unknown') AND updated_at <= $1
		  AND NOT EXISTS (SELECT FROM shows s WHERE s.show_id = p.show_id AND s.placement <> 'active')
		ORDER BY updated_at LIMIT 500`, now.Add(-s.cfg.RecoverAfter))
	if err != nil {
		return fmt.Errorf("open payments on %s: %w", pool.Name, err)
	}
	open, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Payment, error) { return scanPayment(r) })
	if err != nil {
		return fmt.Errorf("open payments on %s: %w", pool.Name, err)
	}
	var errs []error
	for _, p := range open {
		if err := s.resolve(ctx, pool, p); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// resolve settles one open attempt from the gateway's verified status.
func (s *Service) resolve(ctx context.Context, pool *pg.Pool, p Payment) error {
	now := s.now()
	charge, err := observe(s.metrics, "get_charge", func() (gateway.Charge, error) { return s.gw.GetCharge(ctx, p.GatewayKey) })
	switch {
	case errors.Is(err, gateway.ErrNotFound):
		if now.Sub(p.CreatedAt) < s.cfg.NotFoundGrace {
			return nil // the request may still be on its way
		}
		// The gateway never got the charge: nothing was taken. Should a
		// capture still appear, it is refunded (failed_attempt_capture).
		return s.fail(ctx, pool, p.ID, p.GatewayKey, "gateway_error", "The payment gateway never received the payment; nothing was charged.")
	case err != nil:
		return fmt.Errorf("status of payment %s: %w", p.ID, err)
	case charge.Status == gateway.StatusPending && now.After(p.PayBy.Add(s.cfg.PendingGrace)):
		return s.fail(ctx, pool, p.ID, p.GatewayKey, "timed_out", failureMessage("expired"))
	}
	return s.Apply(ctx, charge)
}

func (s *Service) recoverRefunds(ctx context.Context, pool *pg.Pool) error {
	rows, err := pool.Query(ctx, `
		SELECT refund_id FROM refunds r WHERE status IN ('pending', 'unknown') AND updated_at <= $1
		  AND NOT EXISTS (SELECT FROM shows s WHERE s.show_id = r.show_id AND s.placement <> 'active')
		ORDER BY updated_at LIMIT 500`, s.now().Add(-s.cfg.RecoverAfter))
	if err != nil {
		return fmt.Errorf("open refunds on %s: %w", pool.Name, err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("open refunds on %s: %w", pool.Name, err)
	}
	var errs []error
	for _, id := range ids {
		if err := s.sendRefund(ctx, pool, id); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
