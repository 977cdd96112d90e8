package api

import (
	"context"
	"errors"
	"strings"

	"connectrpc.com/connect"

	"github.com/seatghor/seatghor/server/auth"
)

// newAuthInterceptor returns the first interceptor of the chain: every RPC
// needs a Bearer credential that creds accepts; the principal is put in the
// context. Procedures named in public may also be called without a token:
// answers that are the same for everyone, which an edge cache or CDN serves
// . A token that is sent is still checked. A read-only caller may
// call only procedures declared NO_SIDE_EFFECTS, and those grants lists
// under its Grant (grant name → procedures).
func newAuthInterceptor(creds auth.Verifier, grants map[string][]string, public ...string) connect.Interceptor {
	i := &authInterceptor{creds: creds, public: map[string]bool{}, grants: map[string]bool{}}
	for _, p := range public {
		i.public[p] = true
	}
	for g, procs := range grants {
		for _, p := range procs {
			i.grants[g+" "+p] = true
		}
	}
	return i
}

type authInterceptor struct {
	creds  auth.Verifier
	public map[string]bool
	// grants holds "grant procedure" pairs.
	grants map[string]bool
}

// refused says whether p may not call spec's procedure: a read-only caller
// calling one with side effects its grant does not open.
func (i *authInterceptor) refused(p auth.Principal, spec connect.Spec) bool {
	return p.ReadOnly && spec.IdempotencyLevel != connect.IdempotencyNoSideEffects &&
		(p.Grant == "" || !i.grants[p.Grant+" "+spec.Procedure])
}

func (i *authInterceptor) authenticate(ctx context.Context, h interface{ Get(string) string }) (context.Context, error) {
	raw, ok := strings.CutPrefix(h.Get("Authorization"), "Bearer ")
	if !ok || raw == "" {
		return nil, auth.ErrNoToken // the API's error table maps it (docs/errors.md)
	}
	p, err := i.creds.Authenticate(ctx, strings.TrimSpace(raw))
	if errors.Is(err, auth.ErrVerifierUnavailable) {
		return nil, auth.ErrVerifierUnavailable
	}
	if auth.Told(err) {
		return nil, err // a refusal the caller can act on (ErrInvalidToken)
	}
	if err != nil {
		return nil, auth.ErrInvalidToken // never why: a forger learns nothing
	}
	return auth.WithPrincipal(ctx, p), nil
}

func (i *authInterceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		if i.public[req.Spec().Procedure] && req.Header().Get("Authorization") == "" {
			return next(ctx, req) // anonymous: no principal in ctx
		}
		ctx, err := i.authenticate(ctx, req.Header())
		if err != nil {
			return nil, err
		}
		if p, _ := auth.FromContext(ctx); i.refused(p, req.Spec()) {
			return nil, auth.ErrReadOnly
		}
		return next(ctx, req)
	}
}

func (i *authInterceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (i *authInterceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		ctx, err := i.authenticate(ctx, conn.RequestHeader())
		if err != nil {
			return err
		}
		if p, _ := auth.FromContext(ctx); i.refused(p, conn.Spec()) {
			return auth.ErrReadOnly
		}
		return next(ctx, conn)
	}
}
