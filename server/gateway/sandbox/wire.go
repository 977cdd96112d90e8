package sandbox

import (
	"time"

	"github.com/seatghor/seatghor/server/gateway"
)

// The sandbox's wire format: JSON with snake_case fields, money as integer
// minor units plus a currency code (DESIGN: money is int64 minor units
// everywhere), times as RFC 3339 with nanoseconds. Both the server and the
// client use these types, so they cannot drift apart.

// SignatureHeader carries gateway.Sign of a webhook's raw body.
const SignatureHeader = "Sandbox-Signature"

// IdempotencyKeyHeader names the charge or refund a POST creates.
const IdempotencyKeyHeader = "Idempotency-Key"

// ReplayedHeader is "true" on an answer that repeats an earlier request's
// result for the same idempotency key.
const ReplayedHeader = "Idempotent-Replayed"

type chargeRequestJSON struct {
	Reference   string `json:"reference"`
	AmountMinor int64  `json:"amount_minor"`
	Currency    string `json:"currency"`
	Method      string `json:"method,omitempty"`
	Token       string `json:"token,omitempty"`
	ReturnURL   string `json:"return_url,omitempty"`
}

type chargeJSON struct {
	ID             string    `json:"id"`
	IdempotencyKey string    `json:"idempotency_key"`
	Reference      string    `json:"reference"`
	Status         string    `json:"status"`
	AmountMinor    int64     `json:"amount_minor"`
	Currency       string    `json:"currency"`
	Method         string    `json:"method,omitempty"`
	FeeMinor       int64     `json:"fee_minor"`
	FailureCode    string    `json:"failure_code,omitempty"`
	RedirectURL    string    `json:"redirect_url,omitempty"`
	ReturnURL      string    `json:"return_url,omitempty"`
	RefundedMinor  int64     `json:"refunded_minor"`
	CreatedAt      time.Time `json:"created_at"`
	CapturedAt     time.Time `json:"captured_at,omitzero"`

	// askedMinor is the amount the request asked for when the sandbox
	// captured another one (TokenWrongAmount); never on the wire.
	askedMinor int64
}

type chargeListJSON struct {
	Data []chargeJSON `json:"data"`
}

type refundRequestJSON struct {
	Reference   string `json:"reference"`
	ChargeID    string `json:"charge_id"`
	AmountMinor int64  `json:"amount_minor"`
	Currency    string `json:"currency"`
}

type refundJSON struct {
	ID             string    `json:"id"`
	IdempotencyKey string    `json:"idempotency_key"`
	Reference      string    `json:"reference"`
	ChargeID       string    `json:"charge_id"`
	Status         string    `json:"status"`
	AmountMinor    int64     `json:"amount_minor"`
	Currency       string    `json:"currency"`
	CreatedAt      time.Time `json:"created_at"`
}

type reportJSON struct {
	From    time.Time    `json:"from"`
	To      time.Time    `json:"to"`
	Charges []chargeJSON `json:"charges"`
	Refunds []refundJSON `json:"refunds"`
}

// eventJSON is a webhook body. Data is kept raw on the way in, so its shape
// is chosen by Type.
type eventJSON struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Created int64  `json:"created"`
	Data    any    `json:"data"`
}

type errorJSON struct {
	Error errorBodyJSON `json:"error"`
}

type errorBodyJSON struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (c chargeJSON) toGateway() gateway.Charge {
	return gateway.Charge{
		ID:             c.ID,
		IdempotencyKey: c.IdempotencyKey,
		Reference:      c.Reference,
		Status:         gateway.Status(c.Status),
		AmountMinor:    c.AmountMinor,
		Currency:       c.Currency,
		FeeMinor:       c.FeeMinor,
		FailureCode:    c.FailureCode,
		RedirectURL:    c.RedirectURL,
		RefundedMinor:  c.RefundedMinor,
		CreatedAt:      c.CreatedAt,
		CapturedAt:     c.CapturedAt,
	}
}

func (r refundJSON) toGateway() gateway.Refund {
	return gateway.Refund{
		ID:             r.ID,
		IdempotencyKey: r.IdempotencyKey,
		Reference:      r.Reference,
		ChargeID:       r.ChargeID,
		Status:         gateway.Status(r.Status),
		AmountMinor:    r.AmountMinor,
		Currency:       r.Currency,
		CreatedAt:      r.CreatedAt,
	}
}

func chargeFromGateway(c gateway.Charge) chargeJSON {
	return chargeJSON{
		ID: c.ID, IdempotencyKey: c.IdempotencyKey, Reference: c.Reference, Status: string(c.Status),
		AmountMinor: c.AmountMinor, Currency: c.Currency, FeeMinor: c.FeeMinor, FailureCode: c.FailureCode,
		RedirectURL: c.RedirectURL, RefundedMinor: c.RefundedMinor, CreatedAt: c.CreatedAt, CapturedAt: c.CapturedAt,
	}
}

func refundFromGateway(r gateway.Refund) refundJSON {
	return refundJSON{
		ID: r.ID, IdempotencyKey: r.IdempotencyKey, Reference: r.Reference, ChargeID: r.ChargeID,
		Status: string(r.Status), AmountMinor: r.AmountMinor, Currency: r.Currency, CreatedAt: r.CreatedAt,
	}
}
