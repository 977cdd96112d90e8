package api

import (
	"context"
	"log/slog"
	"time"

	"connectrpc.com/connect"

	"github.com/seatghor/seatghor/gen/seatghor/booking/v1/bookingv1connect"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/waitingroom"
)

// QueueTokenHeader carries the admitted token of a waiting room on
// CreateHold (R-5.2; gRPC metadata "queue-token").
const QueueTokenHeader = "Queue-Token"

// queueTokenInterceptor is the last of the chain: while a show's waiting
// room is active, CreateHold needs an admitted Queue-Token for the sale the
// show sells through and the caller, checked by its HMAC alone. It
// also measures those holds for the admission controller, which slows
// admission when they slow down.
type queueTokenInterceptor struct {
	rooms *waitingroom.Service
	log   *slog.Logger
}

func (i *queueTokenInterceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		if req.Spec().Procedure != bookingv1connect.HoldServiceCreateHoldProcedure {
			return next(ctx, req)
		}
		m, ok := req.Any().(interface{ GetShowId() int64 })
		if !ok {
			return next(ctx, req)
		}
		show := m.GetShowId()
		sale, err := i.rooms.ActiveSale(ctx, show)
		if err != nil {
			return nil, toConnect(ctx, i.log, err)
		}
		if sale == 0 {
			return next(ctx, req)
		}
		p, _ := auth.FromContext(ctx)
		if err := i.rooms.CheckAdmitted(p.UserID, show, sale, req.Header().Get(QueueTokenHeader)); err != nil {
			return nil, toConnect(ctx, i.log, err)
		}
		start := time.Now()
		resp, err := next(ctx, req)
		i.rooms.RecordHold(ctx, sale, time.Since(start), serverFault(err))
		return resp, err
	}
}

// serverFault tells a database or server failure from a business answer
// (a taken seat is the system working, not struggling).
func serverFault(err error) bool {
	switch connect.CodeOf(err) {
	case connect.CodeInternal, connect.CodeUnavailable, connect.CodeDeadlineExceeded, connect.CodeUnknown,
		connect.CodeDataLoss:
		return err != nil
	}
	return false
}

func (i *queueTokenInterceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (i *queueTokenInterceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}
