// Package fault is the one shape of Seatghor's business errors: an Error
// with a stable Reason (the words of docs/errors.md), a message for people,
// the request field at fault and the details a client acts on. The reasons
// are declared once, in proto/seatghor/errors/v1/reason.proto, and generated
// into reasons.gen.go (decision 0318).
//
// Domain packages return an *Error for every answer that is not a bug: made
// where it is decided (New, OnField), or a shared sentinel (Sentinel)
// matched with errors.Is and wrapped to say more. The API's edge answers it with its reason's code
// (server/api); an error with no *Error in its chain is a bug, answered
// internal without its text.
package fault

import (
	"errors"
	"fmt"
)

// Reason is a stable machine-readable word for why a request was refused:
// the google.rpc.ErrorInfo reason the API sends. The constants are in
// reasons.gen.go.
type Reason string

// Error is a business answer: the request was refused for Reason. One made
// for a request may be recorded with its idempotency key and replayed as it
// was, so every field is JSON.
type Error struct {
	Reason  Reason `json:"reason"`
	Message string `json:"message"`
	// Field names the request field at fault (seats, ga_area, url, …); the
	// edge sends it as a google.rpc.BadRequest.
	Field string `json:"field,omitempty"`

	// Seats are the seats that were taken (SEATS_UNAVAILABLE), could not be
	// allocated (SEATS_NOT_ALLOCATABLE) or do not exist (BOOKING_INVALID).
	Seats []string `json:"seats,omitempty"`
	// SeatmapVersion is the seat-map version a conflict was read at.
	SeatmapVersion int64 `json:"seatmap_version,omitempty"`
	// GAArea and Remaining describe a general-admission shortage.
	GAArea    string `json:"ga_area,omitempty"`
	Remaining int    `json:"remaining,omitempty"`
	// AccountCap is set when a hold would take the account past the seats
	// it may hold or buy of a show (R-3.8; decision 0302).
	AccountCap *AccountCap `json:"account_cap,omitempty"`
	// OtherShowID is the show a ticket of another show is for, when the
	// caller checks that show in too (decision 0297).
	OtherShowID int64 `json:"other_show_id,omitempty"`

	// shared marks a sentinel (Sentinel).
	shared bool
}

// AccountCap describes a refusal by the per-account seat cap.
type AccountCap struct {
	ShowID int64 `json:"show_id"`
	// Max is what one account may hold or buy of the show; Held what the
	// account holds, awaits payment for or bought; Asked what the refused
	// hold asked for.
	Max   int `json:"max"`
	Held  int `json:"held"`
	Asked int `json:"asked"`
}

// Error is the message, after the field at fault when there is one.
func (e *Error) Error() string {
	if e.Field != "" {
		return e.Field + ": " + e.Message
	}
	return e.Message
}

// New returns an error of reason r with a formatted message.
func New(r Reason, format string, args ...any) *Error {
	return &Error{Reason: r, Message: fmt.Sprintf(format, args...)}
}

// OnField returns an error of reason r naming the request field at fault.
func OnField(r Reason, field, format string, args ...any) *Error {
	return &Error{Reason: r, Field: field, Message: fmt.Sprintf(format, args...)}
}

// Sentinel returns a shared error of reason r, for a package-level Err…
// variable that callers match with errors.Is. Say what it is about by
// wrapping it (fmt.Errorf("key %s: %w", id, ErrKeyNotFound)): its answer's
// message is the whole chain's text. Being the same for every request, it is
// never recorded with an idempotency key (a retry decides again). Never
// change one.
func Sentinel(r Reason, msg string) *Error { return &Error{Reason: r, Message: msg, shared: true} }

// SentinelOnField is Sentinel for a refusal of one request field or header
// (the Idempotency-Key header, a page_token).
func SentinelOnField(r Reason, field, msg string) *Error {
	return &Error{Reason: r, Field: field, Message: msg, shared: true}
}

// Shared tells a sentinel from an error made for one request.
func (e *Error) Shared() bool { return e.shared }

// As returns the first *Error of err's chain: the one the API answers.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// ReasonOf is the reason err is answered with, "" when it carries none.
func ReasonOf(err error) Reason {
	if e, ok := As(err); ok {
		return e.Reason
	}
	return ""
}
