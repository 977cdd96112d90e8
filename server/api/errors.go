// Package api is Seatghor's edge: the Connect handlers of every service, the
// interceptor chain, and the one net/http server that speaks Connect, gRPC,
// gRPC-Web and REST. It is the only package that knows connect.Error.
package api

import (
	"context"
	"errors"
	"log/slog"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/idempotency"
	"github.com/seatghor/seatghor/server/payment"
	"github.com/seatghor/seatghor/server/waitingroom"
)

// toConnect maps a domain error to its Connect code, in one place. Unknown
// errors are logged and answered "internal" without their text: a database
// error's message never goes on the wire.
func toConnect(ctx context.Context, log *slog.Logger, err error) error {
	var (
		be *booking.Error
		pe *payment.Error
		ce *catalog.InvalidError
		fe *catalog.ForbiddenError
		we *waitingroom.Error
	)
	switch {
	case errors.As(err, &be):
		return bookingError(be)
	case errors.As(err, &pe):
		return paymentError(pe)
	case errors.As(err, &we):
		if we.Kind == waitingroom.KindUnavailable {
			log.WarnContext(ctx, "waiting room unavailable", "err", err)
		}
		return waitingRoomError(we)
	case errors.As(err, &ce):
		return withField(connect.NewError(connect.CodeInvalidArgument, ce), ce.Field, ce.Message)
	case errors.As(err, &fe):
		return withField(connect.NewError(connect.CodePermissionDenied, fe), fe.Field, fe.Message)
	case errors.Is(err, catalog.ErrNotFound), errors.Is(err, catalog.ErrOrganizationNotFound), errors.Is(err, catalog.ErrNotAMember):
		return connect.NewError(connect.CodeNotFound, err)
	case errors.Is(err, catalog.ErrOrganizationExists):
		return connect.NewError(connect.CodeAlreadyExists, err)
	case errors.Is(err, catalog.ErrNotYourSale):
		return connect.NewError(connect.CodePermissionDenied, err)
	case errors.Is(err, catalog.ErrOpeningFrozen):
		return connect.NewError(connect.CodeFailedPrecondition, err)
	case errors.Is(err, idempotency.ErrKeyReused):
		return connect.NewError(connect.CodeInvalidArgument, err)
	case errors.Is(err, idempotency.ErrInProgress):
		return connect.NewError(connect.CodeAborted, err)
	case errors.Is(err, context.Canceled):
		return connect.NewError(connect.CodeCanceled, errors.New("request canceled"))
	case errors.Is(err, context.DeadlineExceeded):
		return connect.NewError(connect.CodeDeadlineExceeded, errors.New("deadline exceeded"))
	}
	log.ErrorContext(ctx, "request failed", "err", err)
	return connect.NewError(connect.CodeInternal, errors.New("internal error"))
}

func bookingError(e *booking.Error) error {
	switch e.Kind {
	case booking.KindUnavailable:
		// the conflict lists the seats and the seat-map version.
		ce := connect.NewError(connect.CodeAborted, e)
		if d, err := connect.NewErrorDetail(&bookingv1.SeatsUnavailable{
			Seats: e.Seats, SeatmapVersion: e.SeatmapVersion, GaArea: e.GAArea, Remaining: int32(e.Remaining),
		}); err == nil {
			ce.AddDetail(d)
		}
		return ce
	case booking.KindNotFound:
		return connect.NewError(connect.CodeNotFound, e)
	case booking.KindInvalid:
		return withField(connect.NewError(connect.CodeInvalidArgument, e), e.Field, e.Message)
	default:
		return connect.NewError(connect.CodeFailedPrecondition, e)
	}
}

func paymentError(e *payment.Error) error {
	switch e.Kind {
	case payment.KindNotFound:
		return connect.NewError(connect.CodeNotFound, e)
	case payment.KindInvalid:
		return withField(connect.NewError(connect.CodeInvalidArgument, e), e.Field, e.Message)
	case payment.KindExhausted:
		return connect.NewError(connect.CodeResourceExhausted, e)
	case payment.KindForbidden:
		return connect.NewError(connect.CodePermissionDenied, e)
	default:
		return connect.NewError(connect.CodeFailedPrecondition, e)
	}
}

// withField attaches the standard BadRequest detail naming the field.
func withField(ce *connect.Error, field, msg string) error {
	if field == "" {
		return ce
	}
	if d, err := connect.NewErrorDetail(&errdetails.BadRequest{
		FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: field, Description: msg}},
	}); err == nil {
		ce.AddDetail(d)
	}
	return ce
}

// waitingRoomError maps the waiting room's answers. A hold without a good
// admitted token is permission_denied (HTTP 403), with an ErrorInfo whose
// reason says which: QUEUE_TOKEN_REQUIRED, …_INVALID, …_EXPIRED,
// …_WRONG_SALE, …_WRONG_CALLER or …_NOT_ADMITTED.
func waitingRoomError(e *waitingroom.Error) error {
	var ce *connect.Error
	switch e.Kind {
	case waitingroom.KindNotFound:
		ce = connect.NewError(connect.CodeNotFound, e)
	case waitingroom.KindForbidden, waitingroom.KindTokenRequired, waitingroom.KindTokenInvalid:
		ce = connect.NewError(connect.CodePermissionDenied, e)
	case waitingroom.KindInvalid:
		return withField(connect.NewError(connect.CodeInvalidArgument, e), e.Field, e.Message)
	case waitingroom.KindUnavailable:
		ce = connect.NewError(connect.CodeUnavailable, e)
	default:
		ce = connect.NewError(connect.CodeFailedPrecondition, e)
	}
	if e.Reason != "" {
		if d, err := connect.NewErrorDetail(&errdetails.ErrorInfo{Reason: e.Reason, Domain: "seatghor.waitingroom.v1"}); err == nil {
			ce.AddDetail(d)
		}
	}
	return ce
}
