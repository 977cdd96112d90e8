// Package api is Seatghor's edge: the Connect handlers of every service, the
// interceptor chain, and the one net/http server that speaks Connect, gRPC,
// gRPC-Web and REST. It is the only package that knows connect.Error.
package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"

	"buf.build/go/protovalidate"
	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	ticketsv1 "github.com/seatghor/seatghor/gen/seatghor/tickets/v1"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/idempotency"
	"github.com/seatghor/seatghor/server/ledger"
	"github.com/seatghor/seatghor/server/page"
	"github.com/seatghor/seatghor/server/partner"
	"github.com/seatghor/seatghor/server/payment"
	"github.com/seatghor/seatghor/server/ratelimit"
	"github.com/seatghor/seatghor/server/search"
	"github.com/seatghor/seatghor/server/shard"
	"github.com/seatghor/seatghor/server/ticket"
	"github.com/seatghor/seatghor/server/waitingroom"
	"github.com/seatghor/seatghor/server/webhook"
)

// ErrorDomain is the google.rpc.ErrorInfo domain of every reason the API
// sends (decision 0095).
const ErrorDomain = "seatghor.com"

// row is one line of the error table: an error the domain packages (or the
// edge) return, and the Connect code and stable reason it is answered with.
type row struct {
	// key is what the error is known by: a Kind of booking, payment, ticket
	// or waitingroom; a waitingroom.Reason; a sentinel error; a typed
	// error's nil pointer (every error of that type); or an edgeReason.
	key    any
	code   connect.Code
	reason string
}

// errorTable is the one error contract of the API (docs/errors.md, decision
// 0095): every business error maps to one code and one ErrorInfo reason
// here and nowhere else. Adding an error is one line (and its row in
// docs/errors.md); TestErrorTableCoversEveryDomainError fails until both
// are there.
var errorTable = []row{
	{booking.KindUnavailable, connect.CodeAborted, "SEATS_UNAVAILABLE"},
	{booking.KindNotFound, connect.CodeNotFound, "BOOKING_NOT_FOUND"},
	{booking.KindInvalid, connect.CodeInvalidArgument, "BOOKING_INVALID"},
	{booking.KindPrecondition, connect.CodeFailedPrecondition, "BOOKING_NOT_ALLOWED"},
	{booking.KindCheckedIn, connect.CodeFailedPrecondition, "ORDER_CHECKED_IN"},
	{booking.KindForbidden, connect.CodePermissionDenied, "ALLOCATION_FORBIDDEN"},
	{booking.KindPartnerNotFound, connect.CodeNotFound, "PARTNER_NOT_FOUND"},
	{booking.KindNotAllocatable, connect.CodeFailedPrecondition, "SEATS_NOT_ALLOCATABLE"},
	{booking.KindNotInChannel, connect.CodePermissionDenied, "SEATS_NOT_IN_CHANNEL"},

	{booking.ErrNotConfirmable, connect.CodeFailedPrecondition, "ORDER_NOT_CONFIRMABLE"},

	{payment.KindNotFound, connect.CodeNotFound, "PAYMENT_NOT_FOUND"},
	{payment.KindPrecondition, connect.CodeFailedPrecondition, "PAYMENT_NOT_ALLOWED"},
	{payment.KindInvalid, connect.CodeInvalidArgument, "PAYMENT_INVALID"},
	{payment.KindExhausted, connect.CodeResourceExhausted, "PAYMENT_ATTEMPTS_EXHAUSTED"},
	{payment.KindForbidden, connect.CodePermissionDenied, "PAYMENT_FORBIDDEN"},
	{payment.ErrUnroutable, connect.CodeInvalidArgument, "WEBHOOK_UNROUTABLE"},

	{ticket.KindNotFound, connect.CodeNotFound, "TICKET_NOT_FOUND"},
	{ticket.KindPrecondition, connect.CodeFailedPrecondition, "TICKET_NOT_ADMISSIBLE"},
	{ticket.KindPermission, connect.CodePermissionDenied, "GATE_FORBIDDEN"},
	{ticket.KindInvalid, connect.CodeInvalidArgument, "TICKET_ID_INVALID"},
	{ticket.ErrNotFound, connect.CodeNotFound, "TICKET_NOT_FOUND"},
	{ticket.ErrBadCode, connect.CodeNotFound, "TICKET_NOT_FOUND"},
	{ticket.ErrBadPageToken, connect.CodeInvalidArgument, "PAGE_TOKEN_INVALID"},

	{waitingroom.ReasonTokenRequired, connect.CodePermissionDenied, "QUEUE_TOKEN_REQUIRED"},
	{waitingroom.ReasonTokenInvalid, connect.CodePermissionDenied, "QUEUE_TOKEN_INVALID"},
	{waitingroom.ReasonTokenExpired, connect.CodePermissionDenied, "QUEUE_TOKEN_EXPIRED"},
	{waitingroom.ReasonTokenNotAdmitted, connect.CodePermissionDenied, "QUEUE_TOKEN_NOT_ADMITTED"},
	{waitingroom.ReasonTokenWrongSale, connect.CodePermissionDenied, "QUEUE_TOKEN_WRONG_SALE"},
	{waitingroom.ReasonTokenWrongCaller, connect.CodePermissionDenied, "QUEUE_TOKEN_WRONG_CALLER"},
	{waitingroom.ReasonNotInLine, connect.CodeFailedPrecondition, "NOT_IN_LINE"},
	{waitingroom.ReasonUnavailable, connect.CodeUnavailable, "QUEUE_UNAVAILABLE"},
	{waitingroom.ReasonRateLimits, connect.CodeInvalidArgument, "ADMISSION_RATES_INVALID"},
	{waitingroom.ReasonWindow, connect.CodeInvalidArgument, "SALE_WINDOW_INVALID"},
	// The waiting room's kinds answer errors that carry no Reason.
	{waitingroom.KindNotFound, connect.CodeNotFound, "WAITING_ROOM_NOT_FOUND"},
	{waitingroom.KindForbidden, connect.CodePermissionDenied, "SALE_FORBIDDEN"},
	{waitingroom.KindInvalid, connect.CodeInvalidArgument, "SALE_INVALID"},
	{waitingroom.KindTokenRequired, connect.CodePermissionDenied, "QUEUE_TOKEN_REQUIRED"},
	{waitingroom.KindTokenInvalid, connect.CodePermissionDenied, "QUEUE_TOKEN_INVALID"},
	{waitingroom.KindNotInLine, connect.CodeFailedPrecondition, "NOT_IN_LINE"},
	{waitingroom.KindUnavailable, connect.CodeUnavailable, "QUEUE_UNAVAILABLE"},

	{catalog.ErrNotFound, connect.CodeNotFound, "SHOW_NOT_FOUND"},
	{catalog.ErrNotYourSale, connect.CodePermissionDenied, "SALE_FORBIDDEN"},
	{catalog.ErrOpeningFrozen, connect.CodeFailedPrecondition, "SALE_OPENING_FROZEN"},
	{(*catalog.InvalidError)(nil), connect.CodeInvalidArgument, "SHOW_INVALID"},
	{(*catalog.ForbiddenError)(nil), connect.CodePermissionDenied, "SHOW_FIELD_FORBIDDEN"},
	{catalog.ErrOrganizationNotFound, connect.CodeNotFound, "ORGANIZATION_NOT_FOUND"},
	{catalog.ErrNotAMember, connect.CodeNotFound, "MEMBER_NOT_FOUND"},
	{catalog.ErrOrganizationExists, connect.CodeAlreadyExists, "ORGANIZATION_EXISTS"},

	{ledger.ErrOverdrawn, connect.CodeFailedPrecondition, "PAYOUT_EXCEEDS_BALANCE"},
	{(*ledger.InvalidError)(nil), connect.CodeInvalidArgument, "LEDGER_QUERY_INVALID"},
	// A journal that breaks is our bug, never the caller's.
	{ledger.ErrUnbalanced, connect.CodeInternal, "INTERNAL"},
	{ledger.ErrInvalidJournal, connect.CodeInternal, "INTERNAL"},
	{(*ledger.UnbalancedError)(nil), connect.CodeInternal, "INTERNAL"},

	{webhook.ErrNotFound, connect.CodeNotFound, "WEBHOOK_ENDPOINT_NOT_FOUND"},
	{webhook.ErrForbidden, connect.CodePermissionDenied, "WEBHOOK_FORBIDDEN"},
	{webhook.ErrNotManager, connect.CodePermissionDenied, "WEBHOOK_MANAGE_DENIED"},
	{webhook.ErrEndpointLimit, connect.CodeFailedPrecondition, "WEBHOOK_ENDPOINT_LIMIT"},
	{(*webhook.InvalidError)(nil), connect.CodeInvalidArgument, "WEBHOOK_INVALID"},

	{shard.ErrUnknownShow, connect.CodeNotFound, "SHOW_NOT_FOUND"},
	{shard.ErrBadID, connect.CodeNotFound, "ID_NOT_FOUND"},
	{shard.ErrShowMoving, connect.CodeUnavailable, "SHOW_MOVING"},
	{page.ErrBadToken, connect.CodeInvalidArgument, "PAGE_TOKEN_INVALID"},
	{search.ErrUnavailable, connect.CodeUnavailable, "SEARCH_UNAVAILABLE"},

	{idempotency.ErrKeyMissing, connect.CodeInvalidArgument, "IDEMPOTENCY_KEY_MISSING"},
	{idempotency.ErrKeyTooLong, connect.CodeInvalidArgument, "IDEMPOTENCY_KEY_INVALID"},
	{idempotency.ErrNoCaller, connect.CodeUnauthenticated, "UNAUTHENTICATED"},
	{idempotency.ErrKeyReused, connect.CodeInvalidArgument, "IDEMPOTENCY_KEY_REUSED"},
	{idempotency.ErrInProgress, connect.CodeAborted, "IDEMPOTENCY_KEY_IN_PROGRESS"},

	{auth.ErrNoToken, connect.CodeUnauthenticated, "UNAUTHENTICATED"},
	{auth.ErrInvalidToken, connect.CodeUnauthenticated, "TOKEN_INVALID"},
	{auth.ErrReadOnly, connect.CodePermissionDenied, "API_KEY_READ_ONLY"},

	{partner.ErrNotFound, connect.CodeNotFound, "PARTNER_NOT_FOUND"},
	{partner.ErrKeyNotFound, connect.CodeNotFound, "API_KEY_NOT_FOUND"},
	{partner.ErrSecretShown, connect.CodeFailedPrecondition, "API_KEY_SECRET_SHOWN"},
	{partner.ErrShowNotAllowed, connect.CodePermissionDenied, "PARTNER_SHOW_FORBIDDEN"},
	{partner.ErrAccessForbidden, connect.CodePermissionDenied, "PARTNER_ACCESS_FORBIDDEN"},
	{(*partner.InvalidError)(nil), connect.CodeInvalidArgument, "PARTNER_INVALID"},
	{auth.ErrVerifierUnavailable, connect.CodeUnavailable, "AUTH_UNAVAILABLE"},

	{(*ratelimit.ExceededError)(nil), connect.CodeResourceExhausted, "RATE_LIMITED"},
	{(*protovalidate.ValidationError)(nil), connect.CodeInvalidArgument, "INVALID_ARGUMENT"},
	{context.Canceled, connect.CodeCanceled, "CANCELED"},
	{context.DeadlineExceeded, connect.CodeDeadlineExceeded, "DEADLINE_EXCEEDED"},

	// The edge's own refusals (refuse).
	{reasonNotSignedIn, connect.CodeUnauthenticated, "UNAUTHENTICATED"},
	{reasonRole, connect.CodePermissionDenied, "PERMISSION_DENIED"},
	{reasonInvalid, connect.CodeInvalidArgument, "INVALID_ARGUMENT"},
	{reasonNotServed, connect.CodeUnavailable, "NOT_SERVED"},
	{reasonNoWaitingRooms, connect.CodeFailedPrecondition, "WAITING_ROOMS_NOT_SERVED"},
	{reasonUnknownService, connect.CodeNotFound, "SERVICE_NOT_FOUND"},
}

// reasonInternal is the reason of everything the table does not know.
const reasonInternal = "INTERNAL"

// edgeReason names a refusal of the edge itself (no domain package decided it).
type edgeReason string

// The edge's refusals.
const (
	reasonNotSignedIn    edgeReason = "not signed in"
	reasonRole           edgeReason = "role"
	reasonInvalid        edgeReason = "invalid"
	reasonNotServed      edgeReason = "not served"
	reasonNoWaitingRooms edgeReason = "no waiting rooms"
	reasonUnknownService edgeReason = "unknown service"
)

// edgeReasons lists them for the table's test.
var edgeReasons = []edgeReason{reasonNotSignedIn, reasonRole, reasonInvalid, reasonNotServed, reasonNoWaitingRooms, reasonUnknownService}

// edgeError is a refusal of the edge: a role missing, a feature this server
// does not run, a request field no domain package checks.
type edgeError struct {
	reason edgeReason
	field  string
	msg    string
}

func (e *edgeError) Error() string { return e.msg }

// refuse returns the edge's refusal for reason.
func refuse(reason edgeReason, format string, args ...any) error {
	return &edgeError{reason: reason, msg: fmt.Sprintf(format, args...)}
}

// invalidField refuses a request whose field is wrong.
func invalidField(field, format string, args ...any) error {
	return &edgeError{reason: reasonInvalid, field: field, msg: fmt.Sprintf(format, args...)}
}

// refusal is the edge's refusal for reason as a Connect error, for the
// handlers outside the interceptor chain (the gRPC health service).
func refusal(reason edgeReason, format string, args ...any) *connect.Error {
	e := &edgeError{reason: reason, msg: fmt.Sprintf(format, args...)}
	r := rows[reason]
	return newError(r.code, r.reason, e, details(e))
}

// errNotSignedIn refuses a call that needs a caller and came without one.
var errNotSignedIn = refuse(reasonNotSignedIn, "not signed in")

// rows indexes errorTable by key; typed errors by their reflect.Type.
var rows = func() map[any]row {
	m := make(map[any]row, len(errorTable))
	for _, r := range errorTable {
		k := r.key
		if isNilPointer(k) {
			k = reflect.TypeOf(k)
		}
		if _, dup := m[k]; dup {
			panic(fmt.Sprintf("api: error table: %v has two rows", r.key))
		}
		m[k] = r
	}
	return m
}()

// isNilPointer tells a typed error's row key ((*T)(nil)) from a sentinel.
func isNilPointer(k any) bool {
	v := reflect.ValueOf(k)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// lookup finds err's row: the first error of its chain the table knows,
// then the sentinels it matches with errors.Is. It returns the row and the
// error that matched.
func lookup(err error) (row, error, bool) {
	var (
		found row
		by    error
	)
	walk(err, func(e error) bool {
		r, ok := rows[keyOf(e)]
		if ok {
			found, by = r, e
		}
		return ok
	})
	if by != nil {
		return found, by, true
	}
	for _, r := range errorTable {
		if s, ok := r.key.(error); ok && !isNilPointer(s) && errors.Is(err, s) {
			return r, s, true
		}
	}
	return row{}, nil, false
}

// keyOf is what the table knows e by.
func keyOf(e error) any {
	switch e := e.(type) {
	case *booking.Error:
		return e.Kind
	case *payment.Error:
		return e.Kind
	case *ticket.Error:
		return e.Kind
	case *waitingroom.Error:
		if e.Reason != "" {
			return e.Reason
		}
		return e.Kind
	case *edgeError:
		return e.reason
	}
	if t := reflect.TypeOf(e); t.Comparable() {
		if _, ok := rows[e]; ok {
			return e
		}
	}
	return reflect.TypeOf(e)
}

// walk visits err's chain (both Unwrap forms) depth first until visit says stop.
func walk(err error, visit func(error) bool) bool {
	if err == nil {
		return false
	}
	if visit(err) {
		return true
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return walk(u.Unwrap(), visit)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if walk(e, visit) {
				return true
			}
		}
	}
	return false
}

// toConnect answers err by the table: its code, an ErrorInfo with its
// reason, a BadRequest naming the field at fault, and its own details
// (SeatsUnavailable, RetryInfo, QuotaFailure). Errors the table does not
// know are logged and answered "internal" without their text: a database
// error's message never goes on the wire. A *connect.Error that is already
// answered (it has an ErrorInfo) or that wraps nothing the table knows (the
// protocol's own) passes as it is.
func toConnect(ctx context.Context, log *slog.Logger, err error) error {
	if err == nil {
		return nil
	}
	var ce *connect.Error
	isConnect := errors.As(err, &ce)
	if isConnect && hasErrorInfo(ce) {
		return err
	}
	err = shard.Classify(err)
	r, by, ok := lookup(err)
	if !ok && isConnect {
		return err
	}
	if !ok || r.code == connect.CodeInternal {
		log.ErrorContext(ctx, "request failed", "err", err)
		return newError(connect.CodeInternal, reasonInternal, errors.New("internal error"), nil)
	}
	msg := by
	switch by.(type) {
	case *booking.Error, *payment.Error, *ticket.Error, *waitingroom.Error, *edgeError,
		*catalog.InvalidError, *catalog.ForbiddenError, *ledger.InvalidError, *partner.InvalidError, *webhook.InvalidError,
		*ratelimit.ExceededError, *protovalidate.ValidationError:
	default:
		msg = err // a sentinel: keep what the domain wrapped around it
	}
	switch r.code {
	case connect.CodeCanceled:
		msg = errors.New("request canceled")
	case connect.CodeDeadlineExceeded:
		msg = errors.New("deadline exceeded")
	case connect.CodeUnavailable:
		log.WarnContext(ctx, "dependency unavailable", "reason", r.reason, "err", err)
	}
	out := newError(r.code, r.reason, msg, details(by))
	if e, ok := by.(*ratelimit.ExceededError); ok {
		out.Meta().Set(retryAfterHeader, e.RetryAfter())
	}
	return out
}

// newError is the one place a connect.Error is made: code, message, the
// error's own details, then the ErrorInfo with its reason (last, so the
// details clients read first keep their place).
func newError(code connect.Code, reason string, msg error, details []proto.Message) *connect.Error {
	ce := connect.NewError(code, msg)
	for _, d := range details {
		addDetail(ce, d)
	}
	addDetail(ce, &errdetails.ErrorInfo{Reason: reason, Domain: ErrorDomain})
	return ce
}

func addDetail(ce *connect.Error, m proto.Message) {
	if d, err := connect.NewErrorDetail(m); err == nil {
		ce.AddDetail(d)
	}
}

func hasErrorInfo(ce *connect.Error) bool {
	for _, d := range ce.Details() {
		if d.Type() == "google.rpc.ErrorInfo" {
			return true
		}
	}
	return false
}

// details are the answer's details besides the ErrorInfo: a BadRequest for
// every error that names a field, and the error's own.
func details(by error) []proto.Message {
	switch e := by.(type) {
	case *booking.Error:
		if e.Kind == booking.KindUnavailable || e.Kind == booking.KindNotAllocatable || e.Kind == booking.KindNotInChannel {
			// the conflict lists the seats and the seat-map version.
			return []proto.Message{&bookingv1.SeatsUnavailable{
				Seats: e.Seats, SeatmapVersion: e.SeatmapVersion, GaArea: e.GAArea, Remaining: int32(e.Remaining)}}
		}
		if c := e.AccountCap; c != nil {
			// the app says how many of the cap are taken (decision 0302).
			return []proto.Message{&bookingv1.AccountSeatCap{ShowId: c.ShowID, MaxSeats: int32(c.Max),
				Held: int32(c.Held), Asked: int32(c.Asked)}}
		}
		return badRequest(e.Field, e.Message)
	case *payment.Error:
		return badRequest(e.Field, e.Message)
	case *waitingroom.Error:
		return badRequest(e.Field, e.Message)
	case *ticket.Error:
		if e.OtherShowID != 0 {
			// The gate offers to switch to the ticket's show (decision 0297).
			return []proto.Message{&ticketsv1.TicketOfOtherShow{ShowId: e.OtherShowID}}
		}
		return badRequest(e.Field, e.Message)
	case *catalog.InvalidError:
		return badRequest(e.Field, e.Message)
	case *catalog.ForbiddenError:
		return badRequest(e.Field, e.Message)
	case *ledger.InvalidError:
		return badRequest(e.Field, e.Message)
	case *partner.InvalidError:
		return badRequest(e.Field, e.Message)
	case *webhook.InvalidError:
		return badRequest(e.Field, e.Message)
	case *edgeError:
		return badRequest(e.field, e.msg)
	case *protovalidate.ValidationError:
		br := &errdetails.BadRequest{}
		for _, v := range e.Violations {
			br.FieldViolations = append(br.FieldViolations, &errdetails.BadRequest_FieldViolation{
				Field: protovalidate.FieldPathString(v.Proto.GetField()), Description: v.Proto.GetMessage(),
				Reason: v.Proto.GetRuleId(),
			})
		}
		return []proto.Message{br}
	case *ratelimit.ExceededError:
		return []proto.Message{
			&errdetails.RetryInfo{RetryDelay: durationpb.New(e.Wait)},
			&errdetails.QuotaFailure{Violations: []*errdetails.QuotaFailure_Violation{{Subject: e.Limit, Description: e.Quota()}}},
		}
	}
	if by == idempotency.ErrKeyMissing || by == idempotency.ErrKeyTooLong || by == idempotency.ErrKeyReused {
		return badRequest(idempotency.Header, by.Error()) // a header, named as sent
	}
	if by == ticket.ErrBadPageToken || by == page.ErrBadToken {
		return badRequest("page_token", "not a page token this server issued")
	}
	return nil
}

func badRequest(field, msg string) []proto.Message {
	if field == "" {
		return nil
	}
	return []proto.Message{&errdetails.BadRequest{
		FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: field, Description: msg}}}}
}

// edgeInterceptor answers every error of the chain and the handlers by the
// table: the interceptors (auth, rate limits, validation, idempotency) return
// their packages' errors and this turns them into Connect errors.
type edgeInterceptor struct{ log *slog.Logger }

func (i edgeInterceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		resp, err := next(ctx, req)
		if err != nil {
			return nil, toConnect(ctx, i.log, err)
		}
		return resp, nil
	}
}

func (i edgeInterceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (i edgeInterceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		return toConnect(ctx, i.log, next(ctx, conn))
	}
}
