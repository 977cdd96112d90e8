package idempotency

import (
	"context"
	"crypto/sha256"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/seatghor/seatghor/server/auth"
)

// Header is the HTTP header (gRPC metadata "idempotency-key") that carries the key.
const Header = "Idempotency-Key"

// MaxKeyLen bounds the key's length.
const MaxKeyLen = 255

// NewKey checks raw, the key a caller sent with a call of procedure, and
// makes the call's Key: scoped to the caller in ctx (it runs after
// authentication) and fingerprinted by the procedure and the request's
// bytes, so that the same key sent with another request is told apart
// (ErrKeyReused). The API edge calls it for every RPC with side effects.
func NewKey(ctx context.Context, raw, procedure string, req proto.Message) (Key, error) {
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
	// Deterministic marshaling gives equal requests equal bytes (map order).
	body, err := proto.MarshalOptions{Deterministic: true}.Marshal(req)
	if err != nil {
		return Key{}, fmt.Errorf("fingerprint request: %w", err)
	}
	h := sha256.New()
	h.Write([]byte(procedure))
	h.Write([]byte{0})
	h.Write(body)
	k := Key{Scope: p.UserID, Key: raw, Procedure: procedure}
	copy(k.Fingerprint[:], h.Sum(nil))
	return k, nil
}
