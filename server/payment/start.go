package payment

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/gateway"
	"github.com/seatghor/seatghor/server/idempotency"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/shard"
)

// StartRequest asks to pay an order.
type StartRequest struct {
	OrderID string
	// Method is "card", "mfs" or "internet_banking".
	Method string
	// Token is a card token or a sandbox test token; empty takes the
	// redirect flow.
	Token     string
	ReturnURL string
}

// StartPayment records a new attempt for one of the caller's unpaid orders,
// extends the order's hold once, and sends the charge. The attempt
// is committed PENDING before the gateway is called, and the charge
// carries the attempt's own key, so a retried StartPayment (same
// Idempotency-Key) re-sends the same charge and can never charge twice. The
// answer is the attempt as it stands after the gateway's answer: SUCCEEDED
// (and the order confirmed), FAILED, UNKNOWN after timeouts, or PENDING with
// a redirect URL.
func (s *Service) StartPayment(ctx context.Context, userID string, req StartRequest) (Payment, error) {
	pool, err := s.shardOfID(ctx, "order", req.OrderID)
	if err != nil {
		return Payment{}, err
	}
	now := s.now()
	p, err := idempotency.Do(ctx, pool, codec, idempotency.Options{Now: now, Wait: s.cfg.IdempotencyWait, Target: req.OrderID},
		func(tx pgx.Tx) (Payment, error) { return s.recordAttempt(ctx, tx, userID, req, now) })
	if err != nil {
		return Payment{}, err
	}
	return s.send(ctx, p.ID)
}

// recordAttempt writes the PENDING attempt and extends the hold, in one
// transaction. Two taps racing here never make two open attempts: the
// unique indexes on (order_id, attempt) and on the open attempt refuse the
// second.
func (s *Service) recordAttempt(ctx context.Context, tx pgx.Tx, userID string, req StartRequest, now time.Time) (Payment, error) {
	o, err := booking.ReadOrder(ctx, tx, req.OrderID)
	if err != nil {
		return Payment{}, err
	}
	if o.UserID != userID {
		return Payment{}, notFound("order", req.OrderID)
	}
	if st := o.EffectiveStatus(now); st != booking.OrderPendingPayment {
		return Payment{}, fault.New(fault.PaymentNotAllowed, "order %s is %s: nothing to pay", o.ID, st)
	}
	if o.TotalMinor <= 0 {
		// Decision 0070: a free order is confirmed when it is made; the
		// gateway is never asked for a zero charge.
		return Payment{}, fault.New(fault.PaymentNotAllowed, "order %s is free: nothing to pay", o.ID)
	}
	var open, attempts int
	if err := tx.QueryRow(ctx, `
		SELECT count(*) FILTER (WHERE status IN ('pending', 'unknown', 'succeeded')), count(*)
		FROM payments WHERE order_id = $1`, o.ID).Scan(&open, &attempts); err != nil {
		return Payment{}, fmt.Errorf("read attempts of order %s: %w", o.ID, err)
	}
	if open > 0 {
		// never start a second charge while the first one's outcome
		// is open; the buyer waits for it (GetPayment).
		return Payment{}, fault.New(fault.PaymentNotAllowed, "order %s already has a payment in progress", o.ID)
	}
	if attempts >= s.cfg.MaxAttempts {
		return Payment{}, fault.New(fault.PaymentAttemptsExhausted, "order %s has had %d payment attempts, the most allowed", o.ID, attempts)
	}
	id := shard.NewID("pay", o.ShowID)
	p := Payment{
		ID: id, OrderID: o.ID, ShowID: o.ShowID, UserID: userID, Attempt: attempts + 1, Method: req.Method,
		Provider: s.cfg.Provider, Status: StatusPending, AmountMinor: o.TotalMinor, Currency: o.Currency,
		// the gateway's key is the attempt's; every retry sends it.
		GatewayKey: "chg_" + id, PayBy: o.PayBy, CreatedAt: now, UpdatedAt: now,
		token: req.Token, returnURL: req.ReturnURL,
	}
	// The attempt row first, the hold second: the order in which a capture
	// takes them too (payment, then hold), so a double tap racing a capture
	// cannot deadlock with it.
	if _, err := tx.Exec(ctx, `
		INSERT INTO payments (payment_id, order_id, show_id, user_id, attempt, method, provider, token, return_url,
		                      gateway_key, status, amount_minor, currency, pay_by, created_at, updated_at, partner_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'pending', $11, $12, $13, $14, $14, nullif($15, 0))`,
		p.ID, p.OrderID, p.ShowID, p.UserID, p.Attempt, p.Method, p.Provider, p.token, p.returnURL,
		p.GatewayKey, p.AmountMinor, p.Currency, p.PayBy, now, o.PartnerID); err != nil {
		if pg.IsUniqueViolation(err, "") {
			return Payment{}, fault.New(fault.PaymentNotAllowed, "order %s already has a payment in progress", o.ID)
		}
		return Payment{}, fmt.Errorf("record payment attempt: %w", err)
	}
	terms, err := catalog.ReadTerms(ctx, tx, o.ShowID)
	if err != nil {
		return Payment{}, err
	}
	if p.PayBy, err = booking.ExtendForPayment(ctx, tx, o.HoldID, terms.PaymentExtension, now); err != nil {
		return Payment{}, err
	}
	if _, err := tx.Exec(ctx, `UPDATE payments SET pay_by = $2 WHERE payment_id = $1`, p.ID, p.PayBy); err != nil {
		return Payment{}, fmt.Errorf("record pay-by of %s: %w", p.ID, err)
	}
	return p, appendStateChanged(ctx, tx, p, "", now)
}

// send sends the attempt's charge when its outcome is open and the gateway
// has not answered it yet, and applies the answer. It is safe to call any
// number of times: the key makes the gateway answer the first result.
func (s *Service) send(ctx context.Context, paymentID string) (Payment, error) {
	pool, err := s.shardOfID(ctx, "payment", paymentID)
	if err != nil {
		return Payment{}, err
	}
	p, err := getPayment(ctx, pool, paymentID, false)
	if err != nil {
		return p, err
	}
	if !p.open() || p.GatewayChargeID != "" {
		return p, nil
	}
	req := gateway.ChargeRequest{
		IdempotencyKey: p.GatewayKey, Reference: p.ID, AmountMinor: p.AmountMinor, Currency: p.Currency,
		Method: p.Method, Token: p.token, ReturnURL: p.returnURL,
	}
	var charge gateway.Charge
	for try := 1; ; try++ {
		charge, err = observe(s.metrics, "charge", func() (gateway.Charge, error) { return s.gw.Charge(ctx, req) })
		if err == nil || !errors.Is(err, gateway.ErrOutcomeUnknown) || try >= s.cfg.ChargeTries || ctx.Err() != nil {
			break
		}
	}
	switch {
	case err == nil:
		// An answer is applied even if our caller has gone meanwhile.
		if err := s.Apply(context.WithoutCancel(ctx), charge); err != nil {
			return p, err
		}
	case errors.Is(err, gateway.ErrOutcomeUnknown), ctx.Err() != nil:
		// no answer is UNKNOWN, never FAILED; the recovery job or a
		// webhook will tell. The write must survive the caller's deadline.
		if err := s.markUnknown(context.WithoutCancel(ctx), pool, p.ID); err != nil {
			return p, err
		}
	case errors.Is(err, gateway.ErrRejected):
		if err := s.fail(context.WithoutCancel(ctx), pool, p.ID, p.GatewayKey, "gateway_error", "the payment gateway refused the request"); err != nil {
			return p, err
		}
	default:
		return p, fmt.Errorf("charge %s: %w", p.ID, err)
	}
	return getPayment(context.WithoutCancel(ctx), pool, p.ID, false)
}
