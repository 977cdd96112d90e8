package payment

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/pg"
)

const paymentColumns = `payment_id, order_id, show_id, user_id, attempt, method, provider, status, amount_minor,
	currency, gateway_key, gateway_charge_id, redirect_url, fee_minor, failure_reason, failure_message,
	refunded_minor, outcome, pay_by, created_at, updated_at, token, return_url`

func scanPayment(row pgx.Row) (Payment, error) {
	var p Payment
	err := row.Scan(&p.ID, &p.OrderID, &p.ShowID, &p.UserID, &p.Attempt, &p.Method, &p.Provider, &p.Status,
		&p.AmountMinor, &p.Currency, &p.GatewayKey, &p.GatewayChargeID, &p.RedirectURL, &p.FeeMinor,
		&p.FailureReason, &p.FailureMessage, &p.RefundedMinor, &p.Outcome, &p.PayBy, &p.CreatedAt, &p.UpdatedAt,
		&p.token, &p.returnURL)
	p.PayBy, p.CreatedAt, p.UpdatedAt = p.PayBy.UTC(), p.CreatedAt.UTC(), p.UpdatedAt.UTC()
	return p, err
}

// querier reads: a pool or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func getPayment(ctx context.Context, q querier, paymentID string, lock bool) (Payment, error) {
	sql := `SELECT ` + paymentColumns + ` FROM payments WHERE payment_id = $1`
	if lock {
		sql += ` FOR UPDATE`
	}
	p, err := scanPayment(q.QueryRow(ctx, sql, paymentID))
	found, err := pg.Found(err)
	if err != nil {
		return p, fmt.Errorf("read payment %s: %w", paymentID, err)
	}
	if !found {
		return p, notFound("payment", paymentID)
	}
	return p, nil
}

// GetPayment returns one of the caller's payments; another caller's is "not
// found", as if it did not exist (R-10).
func (s *Service) GetPayment(ctx context.Context, userID string, admin bool, paymentID string) (Payment, error) {
	pool, err := s.shardOfID(ctx, "payment", paymentID)
	if err != nil {
		return Payment{}, err
	}
	p, err := getPayment(ctx, pool, paymentID, false)
	if err != nil {
		return p, err
	}
	if p.UserID != userID && !admin {
		return Payment{}, notFound("payment", paymentID)
	}
	return p, nil
}
