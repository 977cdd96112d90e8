// Package gateway is the port between Seatghor and an external payment
// gateway: the words both sides use (charges, refunds, webhook events, the
// settlement report), the errors that tell a timeout from a decline,
// and the webhook signature scheme. Each provider has an adapter (the sandbox
// in package sandbox) that turns its wire format into these types; the
// payment service depends only on what is here.
package gateway

import (
	"errors"
	"time"
)

// ErrOutcomeUnknown means the request may or may not have been applied: a
// timeout, a dropped connection, a 5xx. The caller records UNKNOWN, never
// FAILED, and asks again with the same idempotency key or by status query
// . Adapters wrap it: errors.Is(err, ErrOutcomeUnknown).
var ErrOutcomeUnknown = errors.New("gateway: outcome unknown")

// ErrNotFound means the gateway has no charge or refund for the key or
// reference asked about.
var ErrNotFound = errors.New("gateway: not found")

// ErrRejected means the gateway refused the request itself (bad input, bad
// credentials, a refund larger than the charge): nothing was applied and
// sending it again will not help.
var ErrRejected = errors.New("gateway: request rejected")

// Status is where a charge or refund is at the gateway.
type Status string

// The statuses a gateway reports.
const (
	// StatusPending: the buyer has not finished (a redirect or MFS approval),
	// or the gateway has not decided yet.
	StatusPending Status = "pending"
	// StatusSucceeded: the money was captured (or, for a refund, given back).
	StatusSucceeded Status = "succeeded"
	// StatusFailed: declined or abandoned; no money moved.
	StatusFailed Status = "failed"
)

// ChargeRequest asks for a charge. The same IdempotencyKey always names the
// same charge at the gateway: a repeated request answers the first result
// and never charges twice.
type ChargeRequest struct {
	// IdempotencyKey is stable for one payment attempt across every retry.
	IdempotencyKey string
	// Reference is Seatghor's id of the attempt (the payment_id).
	Reference   string
	AmountMinor int64
	Currency    string
	// Method is "card", "mfs" or "internet_banking".
	Method string
	// Token is a single-use card token or a sandbox test token; empty asks
	// for the redirect flow (a hosted page where the buyer approves).
	Token string
	// ReturnURL is where the hosted page sends the buyer back to.
	ReturnURL string
}

// Charge is the gateway's view of one charge.
type Charge struct {
	// ID is the gateway's own id of the charge.
	ID             string
	IdempotencyKey string
	Reference      string
	Status         Status
	AmountMinor    int64
	Currency       string
	// FeeMinor is the gateway's fee for a captured charge.
	FeeMinor int64
	// FailureCode says why a charge failed: "declined",
	// "insufficient_funds", "cancelled_by_buyer", "expired".
	FailureCode string
	// RedirectURL is the hosted page for a pending redirect-flow charge.
	RedirectURL string
	// RefundedMinor is how much of the charge was refunded so far.
	RefundedMinor int64
	CreatedAt     time.Time
	// CapturedAt is when the money was captured (zero unless succeeded).
	CapturedAt time.Time
}

// RefundRequest asks to give back (part of) a captured charge. Its own
// IdempotencyKey makes a retried refund safe.
type RefundRequest struct {
	IdempotencyKey string
	// Reference is Seatghor's id of the refund.
	Reference   string
	ChargeID    string
	AmountMinor int64
	Currency    string
}

// Refund is the gateway's view of one refund.
type Refund struct {
	ID             string
	IdempotencyKey string
	Reference      string
	ChargeID       string
	Status         Status
	AmountMinor    int64
	Currency       string
	CreatedAt      time.Time
}

// Report is the gateway's settlement report for a period: every
// charge captured and every refund made in [From, To).
type Report struct {
	From, To time.Time
	Charges  []Charge
	Refunds  []Refund
}

// EventType says what a webhook event reports.
type EventType string

// The webhook event types Seatghor understands; others are stored and
// ignored.
const (
	EventChargeSucceeded EventType = "charge.succeeded"
	EventChargeFailed    EventType = "charge.failed"
	EventChargePending   EventType = "charge.pending"
	EventRefundSucceeded EventType = "refund.succeeded"
	EventRefundFailed    EventType = "refund.failed"
)

// Event is one verified webhook event. Exactly one of Charge and Refund is
// set, by Type.
type Event struct {
	// ID is the gateway's unique id of the event; deliveries of the same
	// event carry the same ID.
	ID        string
	Type      EventType
	CreatedAt time.Time
	Charge    *Charge
	Refund    *Refund
}
