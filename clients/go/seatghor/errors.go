package seatghor

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	bookingv1 "github.com/seatghor/seatghor/clients/go/seatghor/gen/seatghor/booking/v1"
)

// ErrorDomain is the google.rpc.ErrorInfo domain of every reason the API
// sends.
const ErrorDomain = "seatghor.com"

// ReasonStillRunning is ReasonIdempotencyKeyInProgress by the name of the
// error type that carries it (StillRunningError). Every reason has its
// constant in reasons.gen.go, generated with docs/errors.md from the API's one
// list of reasons.
const ReasonStillRunning = ReasonIdempotencyKeyInProgress

// Reasons returns every reason this SDK knows (docs/errors.md), each once.
// A newer server may send others: they arrive as an APIError with that
// Reason.
func Reasons() []string {
	var all []string
	for _, group := range [][]string{invalidArgumentReasons, queueTokenReasons, unauthenticatedReasons, singleReasons, otherReasons} {
		all = append(all, group...)
	}
	return all
}

// APIError is an error the API answered with one of its reasons. Every typed
// error of this package embeds it and unwraps to it, and it unwraps to the
// *connect.Error, so errors.As(err, &seatghor.APIError{}) matches all of them
// and connect.CodeOf(err) still works. Act on Reason, never on the message
// (docs/errors.md).
type APIError struct {
	// Reason is the ErrorInfo reason: one word of docs/errors.md.
	Reason string
	// Code is the Connect code (invalid_argument, aborted, …).
	Code connect.Code
	// Message is for people and may change.
	Message string
	// Metadata is the ErrorInfo's metadata, if any.
	Metadata map[string]string
	// FieldViolations are the fields at fault (the BadRequest detail).
	FieldViolations []FieldViolation
	// RetryDelay is how long the server asked the caller to wait (RetryInfo
	// or Retry-After); 0 when it said nothing.
	RetryDelay time.Duration

	err *connect.Error
}

// FieldViolation is one field at fault of a google.rpc.BadRequest.
type FieldViolation struct {
	// Field is the request's field path (seats[0], amount.amount_minor) or a
	// header (Idempotency-Key).
	Field string
	// Description says what is wrong, for people.
	Description string
	// Reason is the rule broken, e.g. string.pattern (protovalidate), or "".
	Reason string
}

func (e APIError) Error() string {
	if e.err == nil {
		return "seatghor: " + e.Reason
	}
	return e.err.Error()
}

// Unwrap returns the *connect.Error the API answered.
func (e APIError) Unwrap() error {
	if e.err == nil {
		return nil
	}
	return e.err
}

// Field returns the violation of one field, e.g. e.Field("seats[0]").
func (e APIError) Field(path string) (FieldViolation, bool) {
	for _, v := range e.FieldViolations {
		if v.Field == path {
			return v, true
		}
	}
	return FieldViolation{}, false
}

// InvalidRequestError is a request the server refused as wrong (code
// invalid_argument): fix the fields of FieldViolations; retrying as is will
// not help.
type InvalidRequestError struct{ APIError }

// Unwrap returns the APIError.
func (e InvalidRequestError) Unwrap() error { return e.APIError }

// SeatsUnavailableError is SEATS_UNAVAILABLE: someone else holds or bought
// the seats, or the GA area has fewer places left. Reload the seat map at
// least at SeatmapVersion and let the buyer choose again.
type SeatsUnavailableError struct {
	APIError
	// Seats are the seats that are taken.
	Seats []string
	// GAArea is the general-admission area asked for, when the hold was for one.
	GAArea string
	// Remaining is what remains in that area.
	Remaining int32
	// SeatmapVersion is the seat-map version the conflict was read at.
	SeatmapVersion int64
}

// Unwrap returns the APIError.
func (e SeatsUnavailableError) Unwrap() error { return e.APIError }

// QueueTokenError is a waiting room's refusal of the Queue-Token (or its
// absence): join the waiting room again, or keep polling while Reason is
// QUEUE_TOKEN_NOT_ADMITTED.
type QueueTokenError struct{ APIError }

// Unwrap returns the APIError.
func (e QueueTokenError) Unwrap() error { return e.APIError }

// UnauthenticatedError is no API key or token, or one that is no good.
type UnauthenticatedError struct{ APIError }

// Unwrap returns the APIError.
func (e UnauthenticatedError) Unwrap() error { return e.APIError }

// StillRunningError is IDEMPOTENCY_KEY_IN_PROGRESS: the same call (same
// key) is still running. The client retries it by itself; it reaches the
// caller only when the retries ran out.
type StillRunningError struct{ APIError }

// Unwrap returns the APIError.
func (e StillRunningError) Unwrap() error { return e.APIError }

// RateLimitedError is RATE_LIMITED: too many calls; RetryDelay says how
// long to wait.
type RateLimitedError struct {
	APIError
	// QuotaViolations are the limits hit (the QuotaFailure detail).
	QuotaViolations []QuotaViolation
}

// QuotaViolation is one limit a RATE_LIMITED call ran into.
type QuotaViolation struct {
	Subject     string
	Description string
}

// Unwrap returns the APIError.
func (e RateLimitedError) Unwrap() error { return e.APIError }

var (
	invalidArgument = setOf(invalidArgumentReasons)
	queueToken      = setOf(queueTokenReasons)
	unauthenticated = setOf(unauthenticatedReasons)
	known           = setOf(Reasons())
)

func setOf(reasons []string) map[string]bool {
	m := make(map[string]bool, len(reasons))
	for _, r := range reasons {
		m[r] = true
	}
	return m
}

// Typed turns a *connect.Error that carries a seatghor.com ErrorInfo into
// the typed error of its reason (SeatsUnavailableError, …, or an APIError)
// and returns any other error as it is. The Client's calls do this already;
// Typed is for errors from elsewhere (your own Connect clients).
func Typed(err error) error {
	var already APIError
	if errors.As(err, &already) {
		return err
	}
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return err
	}
	base, ok := apiError(ce)
	if !ok {
		return err
	}
	switch r := base.Reason; {
	case r == ReasonSeatsUnavailable:
		e := SeatsUnavailableError{APIError: base}
		for _, d := range details(ce) {
			if su, ok := d.(*bookingv1.SeatsUnavailable); ok {
				e.Seats, e.GAArea, e.Remaining, e.SeatmapVersion = su.GetSeats(), su.GetGaArea(), su.GetRemaining(), su.GetSeatmapVersion()
			}
		}
		return e
	case r == ReasonRateLimited:
		e := RateLimitedError{APIError: base}
		for _, d := range details(ce) {
			if q, ok := d.(*errdetails.QuotaFailure); ok {
				for _, v := range q.GetViolations() {
					e.QuotaViolations = append(e.QuotaViolations, QuotaViolation{v.GetSubject(), v.GetDescription()})
				}
			}
		}
		return e
	case r == ReasonStillRunning:
		return StillRunningError{base}
	case queueToken[r]:
		return QueueTokenError{base}
	case unauthenticated[r]:
		return UnauthenticatedError{base}
	case invalidArgument[r], base.Code == connect.CodeInvalidArgument && !known[r]:
		return InvalidRequestError{base}
	}
	return base
}

// apiError reads the ErrorInfo and the common details of ce.
func apiError(ce *connect.Error) (APIError, bool) {
	e := APIError{Code: ce.Code(), Message: ce.Message(), err: ce}
	found := false
	for _, d := range details(ce) {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			if d.GetDomain() == ErrorDomain && !found {
				e.Reason, e.Metadata, found = d.GetReason(), d.GetMetadata(), true
			}
		case *errdetails.BadRequest:
			for _, v := range d.GetFieldViolations() {
				e.FieldViolations = append(e.FieldViolations, FieldViolation{v.GetField(), v.GetDescription(), v.GetReason()})
			}
		}
	}
	e.RetryDelay, _ = serverRetryDelay(ce, time.Now())
	return e, found
}

// details decodes the error details this SDK knows (the google.rpc ones and
// the API's own); unknown ones are left out.
func details(ce *connect.Error) []any {
	var out []any
	for _, d := range ce.Details() {
		if v, err := d.Value(); err == nil {
			out = append(out, v)
		}
	}
	return out
}

// serverRetryDelay is how long the server asked the caller to wait: its
// RetryInfo detail, else its Retry-After header (seconds or an HTTP date).
// ok is false when it said nothing.
func serverRetryDelay(ce *connect.Error, now time.Time) (d time.Duration, ok bool) {
	for _, v := range details(ce) {
		if ri, isInfo := v.(*errdetails.RetryInfo); isInfo && ri.GetRetryDelay() != nil {
			return max(0, ri.GetRetryDelay().AsDuration()), true
		}
	}
	h := strings.TrimSpace(ce.Meta().Get("Retry-After"))
	if h == "" {
		return 0, false
	}
	if secs, err := strconv.ParseUint(h, 10, 32); err == nil {
		return time.Duration(secs) * time.Second, true
	}
	at, err := http.ParseTime(h)
	if err != nil {
		return 0, false
	}
	return max(0, at.Sub(now)), true
}
