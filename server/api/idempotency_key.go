package api

import (
	"context"
	"errors"
	"slices"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"github.com/seatghor/seatghor/server/idempotency"
)

// idempotencyKeys requires a key on every RPC with side effects (all but
// those declared NO_SIDE_EFFECTS or IDEMPOTENT in the proto, and the
// public ones, whose caller has no identity to keep a key for: the phone
// sign-in's and the guest's, whose own limits answer a retry; decisions
// 0436, 0437) and puts it, with the request's fingerprint, in the context
// (idempotency.NewKey). It runs after authentication (the key is scoped to
// the caller) and validation (rejected requests are never recorded).
// Seatghor has no streaming writes; streams pass untouched.
func idempotencyKeys(public ...string) connect.UnaryInterceptorFunc {
	return func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			// NO_SIDE_EFFECTS reads, and IDEMPOTENT calls that give the same
			// answer however often they run (WaitingRoomService.Join), need no key.
			if l := req.Spec().IdempotencyLevel; l == connect.IdempotencyNoSideEffects || l == connect.IdempotencyIdempotent ||
				slices.Contains(public, req.Spec().Procedure) {
				return next(ctx, req)
			}
			key, err := idempotencyKey(ctx, req)
			if err != nil {
				return nil, err
			}
			return next(idempotency.WithKey(ctx, key), req)
		}
	}
}

func idempotencyKey(ctx context.Context, req connect.AnyRequest) (idempotency.Key, error) {
	msg, ok := req.Any().(proto.Message)
	if !ok {
		return idempotency.Key{}, errors.New("request is not a protobuf message")
	}
	return idempotency.NewKey(ctx, req.Header().Get(idempotency.Header), req.Spec().Procedure, msg)
}
