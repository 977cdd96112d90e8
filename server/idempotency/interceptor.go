package idempotency

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"github.com/seatghor/seatghor/server/auth"
)

// Header is the HTTP header (gRPC metadata "idempotency-key") that carries the key.
const Header = "Idempotency-Key"

// MaxKeyLen bounds the key's length.
const MaxKeyLen = 255

// NewInterceptor returns the interceptor that requires a key on every RPC
// with side effects (all but those declared NO_SIDE_EFFECTS or IDEMPOTENT in
// the proto) and
// puts it, with the request's fingerprint, in the context. It runs after
// authentication (the key is scoped to the caller) and validation (rejected
// requests are never recorded).
func NewInterceptor() connect.Interceptor { return interceptor{} }

type interceptor struct{}

func (interceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		// NO_SIDE_EFFECTS reads, and IDEMPOTENT calls that give the same
		// answer however often they run (WaitingRoomService.Join), need no key.
		if l := req.Spec().IdempotencyLevel; l == connect.IdempotencyNoSideEffects || l == connect.IdempotencyIdempotent {
			return next(ctx, req)
		}
		key, err := keyOf(ctx, req)
		if err != nil {
			return nil, err
		}
		return next(WithKey(ctx, key), req)
	}
}

func keyOf(ctx context.Context, req connect.AnyRequest) (Key, error) {
	raw := req.Header().Get(Header)
	if raw == "" {
		return Key{}, ErrKeyMissing // the API's error table maps these (docs/errors.md)
	}
	if len(raw) > MaxKeyLen {
		return Key{}, ErrKeyTooLong
	}
	p, ok := auth.FromContext(ctx)
	if !ok {
		return Key{}, ErrNoCaller
	}
	msg, ok := req.Any().(proto.Message)
	if !ok {
		return Key{}, errors.New("request is not a protobuf message")
	}
	// Deterministic marshaling gives equal requests equal bytes (map order).
	body, err := proto.MarshalOptions{Deterministic: true}.Marshal(msg)
	if err != nil {
		return Key{}, fmt.Errorf("fingerprint request: %w", err)
	}
	h := sha256.New()
	h.Write([]byte(req.Spec().Procedure))
	h.Write([]byte{0})
	h.Write(body)
	k := Key{Scope: p.UserID, Key: raw, Procedure: req.Spec().Procedure}
	copy(k.Fingerprint[:], h.Sum(nil))
	return k, nil
}

func (interceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

// Seatghor has no streaming writes; streams pass untouched.
func (interceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}
