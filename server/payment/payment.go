// Package payment turns an order into money and a confirmed booking without
// ever losing a paisa or charging twice. An attempt is recorded PENDING
// before the gateway is called; a timeout is UNKNOWN, never FAILED
// every change of state is one conditional UPDATE, so states never
// go backwards and duplicates change nothing; a success confirms the booking
// in one local transaction with its ledger journal and outbox event,
// or, when the hold is gone, is refunded with its own key.
// Webhooks only record; workers apply them, recover what was missed
// and reconcile with the gateway's report.
package payment

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/gateway"
	"github.com/seatghor/seatghor/server/idempotency"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/shard"
)

// Gateway is what the payment service needs of a payment provider; the
// sandbox client is one.
type Gateway interface {
	Charge(ctx context.Context, req gateway.ChargeRequest) (gateway.Charge, error)
	GetCharge(ctx context.Context, idempotencyKey string) (gateway.Charge, error)
	FindCharges(ctx context.Context, reference string) ([]gateway.Charge, error)
	Refund(ctx context.Context, req gateway.RefundRequest) (gateway.Refund, error)
	GetRefund(ctx context.Context, idempotencyKey string) (gateway.Refund, error)
	Report(ctx context.Context, from, to time.Time) (gateway.Report, error)
	ParseWebhook(header http.Header, body []byte, now time.Time) (gateway.Event, error)
}

// Status is where a payment attempt is in its life.
type Status string

// The statuses, as stored.
const (
	StatusPending                Status = "pending"
	StatusSucceeded              Status = "succeeded"
	StatusFailed                 Status = "failed"
	StatusUnknown                Status = "unknown"
	StatusReconciliationRequired Status = "reconciliation_required"
)

// Payment is one attempt to pay an order.
type Payment struct {
	ID              string    `json:"id"`
	OrderID         string    `json:"order_id"`
	ShowID          int64     `json:"show_id"`
	UserID          string    `json:"user_id"`
	Attempt         int       `json:"attempt"`
	Method          string    `json:"method"`
	Provider        string    `json:"provider"`
	Status          Status    `json:"status"`
	AmountMinor     int64     `json:"amount_minor"`
	Currency        string    `json:"currency"`
	GatewayKey      string    `json:"gateway_key"`
	GatewayChargeID string    `json:"gateway_charge_id,omitempty"`
	RedirectURL     string    `json:"redirect_url,omitempty"`
	FeeMinor        int64     `json:"fee_minor,omitempty"`
	FailureReason   string    `json:"failure_reason,omitempty"`
	FailureMessage  string    `json:"failure_message,omitempty"`
	RefundedMinor   int64     `json:"refunded_minor,omitempty"`
	Outcome         string    `json:"outcome,omitempty"`
	PayBy           time.Time `json:"pay_by"`
	CreatedAt       time.Time `json:"created_at"`
	UpdatedAt       time.Time `json:"updated_at"`

	token, returnURL string
}

// open tells whether the attempt's outcome is still open at the gateway.
func (p Payment) open() bool { return p.Status == StatusPending || p.Status == StatusUnknown }

// Errors lists the sentinel errors of payment; the API answers each by its
// reason (ErrUnroutable only ever answers a webhook; docs/errors.md).
var Errors = []error{ErrUnroutable}

func notFound(what, id string) *fault.Error {
	return fault.New(fault.PaymentNotFound, "%s %s not found", what, id)
}

// codec records payment's and booking's business errors with idempotency
// keys: cancelling an order may answer either. payment's are those it
// makes for a request (decision 0318); the kinds are those of its own error
// type before, so that the answers recorded then replay.
var codec = idempotency.Union(map[string]idempotency.Codec{
	"payment": idempotency.Faults("payment",
		[]fault.Reason{fault.PaymentNotFound, fault.PaymentNotAllowed, fault.PaymentInvalid,
			fault.PaymentAttemptsExhausted, fault.PaymentForbidden},
		map[string]fault.Reason{"not_found": fault.PaymentNotFound, "precondition": fault.PaymentNotAllowed,
			"invalid": fault.PaymentInvalid, "exhausted": fault.PaymentAttemptsExhausted, "forbidden": fault.PaymentForbidden}),
	"booking": booking.ErrorCodec,
})

// Config tunes the payment service. Zero values take the defaults.
type Config struct {
	// Provider names the gateway in records and reports; default "sandbox".
	Provider string
	// ChargeTries is how often one charge request is sent while no answer
	// comes back, always with the same key (seed 000 §7); default 3.
	ChargeTries int
	// MaxAttempts bounds the attempts per order; default 5.
	MaxAttempts int
	// RecoverAfter is how long an attempt stays PENDING or UNKNOWN before the
	// recovery job asks the gateway about it; default 1 minute.
	RecoverAfter time.Duration
	// NotFoundGrace is how long after an attempt was recorded the gateway
	// may still not know it before the attempt counts as never received,
	// i.e. FAILED; default 10 minutes.
	NotFoundGrace time.Duration
	// PendingGrace is how long after its pay-by time a redirect attempt the
	// buyer never finished stays PENDING before it is closed as FAILED;
	// default 10 minutes.
	PendingGrace time.Duration
	// IdempotencyWait is how long a duplicate request waits for the first.
	IdempotencyWait time.Duration
	// EventBatch is how many stored webhook events a processor claims at
	// a time; default 50.
	EventBatch int
	// RefundApprovalMinor is the total from which manual refunds need a
	// second person's approval: the charge's refunds, or the
	// requester's own unapproved ones of the last 24 hours, with the new
	// one (decision 0060); default 500000 (5,000 Tk).
	RefundApprovalMinor int64
}

func (c *Config) defaults() {
	if c.Provider == "" {
		c.Provider = "sandbox"
	}
	if c.ChargeTries <= 0 {
		c.ChargeTries = 3
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 5
	}
	if c.RecoverAfter <= 0 {
		c.RecoverAfter = time.Minute
	}
	if c.NotFoundGrace <= 0 {
		c.NotFoundGrace = 10 * time.Minute
	}
	if c.PendingGrace <= 0 {
		c.PendingGrace = 10 * time.Minute
	}
	if c.IdempotencyWait <= 0 {
		c.IdempotencyWait = 3 * time.Second
	}
	if c.EventBatch <= 0 {
		c.EventBatch = 50
	}
	if c.RefundApprovalMinor <= 0 {
		c.RefundApprovalMinor = 500000
	}
}

// Service is the payment service.
type Service struct {
	router  *shard.Router
	gw      Gateway
	clock   clock.Clock
	cfg     Config
	log     *slog.Logger
	metrics *metrics
	// wake nudges the event processor when a webhook was stored.
	wake chan struct{}
}

// NewService returns the payment service over the shards and the gateway.
func NewService(router *shard.Router, gw Gateway, clk clock.Clock, log *slog.Logger, cfg Config) *Service {
	cfg.defaults()
	return &Service{router: router, gw: gw, clock: clk, cfg: cfg, log: log, metrics: newMetrics(router),
		wake: make(chan struct{}, 1)}
}

func (s *Service) now() time.Time { return s.clock.Now().UTC() }

func (s *Service) shardOfID(ctx context.Context, what, id string) (*pg.Pool, error) {
	pool, _, err := s.router.ForID(ctx, id)
	if errors.Is(err, shard.ErrBadID) || errors.Is(err, shard.ErrUnknownShow) {
		return nil, notFound(what, id)
	}
	return pool, err
}

// Provider names the gateway the service pays through.
func (s *Service) Provider() string { return s.cfg.Provider }
