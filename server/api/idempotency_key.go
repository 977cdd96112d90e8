package api

import (
	"context"
	"errors"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"github.com/seatghor/seatghor/gen/seatghor/signin/v1/signinv1connect"
	"github.com/seatghor/seatghor/server/idempotency"
)

// idempotencyKeys requires a key on every RPC with side effects (all but
// those declared NO_SIDE_EFFECTS or IDEMPOTENT in the proto, and the phone
// sign-in's, whose caller has no identity yet) and puts it,
// with the request's fingerprint, in the context (idempotency.NewKey). It
// runs after authentication (the key is scoped to the caller) and
// validation (rejected requests are never recorded). Seatghor has no
// streaming writes; streams pass untouched.
func idempotencyKeys(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		// NO_SIDE_EFFECTS reads, and IDEMPOTENT calls that give the same
		// answer however often they run (WaitingRoomService.Join), need no key.
		if l := req.Spec().IdempotencyLevel; l == connect.IdempotencyNoSideEffects || l == connect.IdempotencyIdempotent {
			return next(ctx, req)
		}
		// A phone sign-in has no caller yet to keep a key for (decision
		// 0436): its own limits answer a retry.
		switch req.Spec().Procedure {
		case signinv1connect.PhoneSignInServiceSendCodeProcedure, signinv1connect.PhoneSignInServiceVerifyCodeProcedure:
			return next(ctx, req)
		}
		key, err := idempotencyKey(ctx, req)
		if err != nil {
			return nil, err
		}
		return next(idempotency.WithKey(ctx, key), req)
	}
}

func idempotencyKey(ctx context.Context, req connect.AnyRequest) (idempotency.Key, error) {
	msg, ok := req.Any().(proto.Message)
	if !ok {
		return idempotency.Key{}, errors.New("request is not a protobuf message")
	}
	return idempotency.NewKey(ctx, req.Header().Get(idempotency.Header), req.Spec().Procedure, msg)
}
