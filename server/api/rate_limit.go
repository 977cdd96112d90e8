package api

import (
	"context"

	"connectrpc.com/connect"

	"github.com/seatghor/seatghor/gen/seatghor/booking/v1/bookingv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/payment/v1/paymentv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/waitingroom/v1/waitingroomv1connect"
	"github.com/seatghor/seatghor/server/ratelimit"
)

// retryAfterHeader carries a rate-limit refusal's wait in whole seconds
// (ratelimit.ExceededError.RetryAfter).
const retryAfterHeader = "Retry-After"

// limitedAction is what the limits count a call of procedure as; false for
// a procedure they do not count.
func limitedAction(procedure string) (ratelimit.Action, bool) {
	switch procedure {
	case bookingv1connect.HoldServiceCreateHoldProcedure:
		return ratelimit.Hold, true
	case paymentv1connect.PaymentServiceStartPaymentProcedure:
		return ratelimit.Pay, true
	case waitingroomv1connect.WaitingRoomServiceJoinProcedure:
		return ratelimit.Join, true
	}
	return "", false
}

// rateLimited counts the calls the rate limits know (limitedAction) with
// limits, which refuses a call over its limit. It runs right
// after authentication (the caller is the key) and before anything else
// costs work. The limited RPCs are unary; streams pass untouched.
func rateLimited(limits *ratelimit.Limiter) connect.UnaryInterceptorFunc {
	return func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			if action, ok := limitedAction(req.Spec().Procedure); ok {
				var show int64 // the per-sale cap's show; every hold names one
				if m, ok := req.Any().(interface{ GetShowId() int64 }); ok {
					show = m.GetShowId()
				}
				if err := limits.Allow(ctx, action, show); err != nil {
					return nil, err
				}
			}
			return next(ctx, req)
		}
	}
}
