// Package api is Seatghor's edge: the Connect handlers of every service, the
// interceptor chain, and the one net/http server that speaks Connect, gRPC,
// gRPC-Web and REST. It is the only package that knows connect.Error.
package api

import (
	"context"
	"errors"
	"log/slog"

	"buf.build/go/protovalidate"
	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	ticketsv1 "github.com/seatghor/seatghor/gen/seatghor/tickets/v1"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/ratelimit"
	"github.com/seatghor/seatghor/server/shard"
)

// ErrorDomain is the google.rpc.ErrorInfo domain of every reason the API
// sends (decision 0095).
const ErrorDomain = "seatghor.com"

// The edge answers every error by the one contract (docs/errors.md,
// decisions 0095 and 0318): a *fault.Error with its reason and the code
// reasonCodes gives it (generated with the reasons from
// proto/seatghor/errors/v1/reason.proto), the few errors of the
// protocol's own mechanisms by the reason they stand for (answerOf), and
// everything else internal.

// errNotSignedIn refuses a call that needs a caller and came without one.
var errNotSignedIn = fault.Sentinel(fault.Unauthenticated, "not signed in")

// invalidField refuses a request whose field is wrong, when no domain
// package checks that field.
func invalidField(field, format string, args ...any) error {
	return fault.OnField(fault.InvalidArgument, field, format, args...)
}

// refusal is the edge's refusal for reason as a Connect error, for the
// handlers outside the interceptor chain (the gRPC health service).
func refusal(reason fault.Reason, format string, args ...any) *connect.Error {
	e := fault.New(reason, format, args...)
	return newError(reasonCodes[reason], string(reason), e, details(e))
}

// answerOf finds what err is answered by: the first error of its chain that
// is a *fault.Error, or one of the mechanisms' own (a rate limit, a
// protovalidate violation, a cancellation or a deadline), and its reason.
// by is nil for everything else.
func answerOf(err error) (reason fault.Reason, by error) {
	walk(err, func(e error) bool {
		switch t := e.(type) {
		case *fault.Error:
			by, reason = t, t.Reason
		case *ratelimit.ExceededError:
			by, reason = t, fault.RateLimited
		case *protovalidate.ValidationError:
			by, reason = t, fault.InvalidArgument
		default:
			switch e {
			case context.Canceled:
				by, reason = e, fault.Canceled
			case context.DeadlineExceeded:
				by, reason = e, fault.DeadlineExceeded
			}
		}
		return by != nil
	})
	return reason, by
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

// toConnect answers err by its reason: its code, an ErrorInfo with the
// reason, a BadRequest naming the field at fault, and its own details
// (SeatsUnavailable, AccountSeatCap, TicketOfOtherShow, RetryInfo,
// QuotaFailure). Errors with no reason are logged and answered "internal"
// without their text: a database error's message never goes on the wire.
// A *connect.Error that is already answered (it has an ErrorInfo) or that
// wraps nothing with a reason (the protocol's own) passes as it is.
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
	reason, by := answerOf(err)
	ok := by != nil
	if !ok && isConnect {
		return err
	}
	code, known := reasonCodes[reason]
	if !ok || !known || code == connect.CodeInternal {
		log.ErrorContext(ctx, "request failed", "err", err)
		return newError(connect.CodeInternal, string(fault.Internal), errors.New("internal error"), nil)
	}
	msg := by
	if f, isFault := by.(*fault.Error); isFault && f.Shared() {
		msg = err // a sentinel: keep what the domain wrapped around it
	}
	switch code {
	case connect.CodeCanceled:
		msg = errors.New("request canceled")
	case connect.CodeDeadlineExceeded:
		msg = errors.New("deadline exceeded")
	case connect.CodeUnavailable:
		log.WarnContext(ctx, "dependency unavailable", "reason", reason, "err", err)
	}
	out := newError(code, string(reason), msg, details(by))
	if e, isLimit := by.(*ratelimit.ExceededError); isLimit {
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
	case *fault.Error:
		switch {
		case e.Reason == fault.SeatsUnavailable || e.Reason == fault.SeatsNotAllocatable || e.Reason == fault.SeatsNotInChannel:
			// the conflict lists the seats and the seat-map version.
			return []proto.Message{&bookingv1.SeatsUnavailable{
				Seats: e.Seats, SeatmapVersion: e.SeatmapVersion, GaArea: e.GAArea, Remaining: int32(e.Remaining)}}
		case e.Reason == fault.SeatsBlocked || e.Reason == fault.WomenSeatUndeclared:
			// Decision 0371: the field at fault, and which seats (the page
			// asks the buyer about those seats, or marks them not for sale).
			return append(badRequest(e.Field, e.Message), &bookingv1.SeatsUnavailable{Seats: e.Seats})
		case e.AccountCap != nil:
			// the app says how many of the cap are taken (decision 0302).
			c := e.AccountCap
			return []proto.Message{&bookingv1.AccountSeatCap{ShowId: c.ShowID, MaxSeats: int32(c.Max),
				Held: int32(c.Held), Asked: int32(c.Asked)}}
		case e.OtherShowID != 0:
			// The gate offers to switch to the ticket's show (decision 0297).
			return []proto.Message{&ticketsv1.TicketOfOtherShow{ShowId: e.OtherShowID}}
		}
		return badRequest(e.Field, e.Message)
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
