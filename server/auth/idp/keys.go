package idp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/seatghor/seatghor/server/auth"
)

// keySet is the provider's JWKS, cached: a token signed with a key id the
// cache lacks makes it fetch the JWKS again (the provider rotated its
// keys), but at most once per refreshEvery, so tokens with made-up key
// ids cannot turn into a flood of requests to the provider (decision
// 0165). It is go-oidc's KeySet; go-oidc checks everything else.
type keySet struct {
	url          string
	client       *http.Client
	refreshEvery time.Duration

	mu        sync.Mutex
	keys      []jose.JSONWebKey
	fetchedAt time.Time
}

// keyAlgs are the JWS algorithms a key set accepts (go-oidc checks the
// same before it asks).
var keyAlgs = []jose.SignatureAlgorithm{jose.RS256, jose.ES256}

// VerifySignature returns the payload of jwt if a key of the provider's
// signed it.
func (k *keySet) VerifySignature(ctx context.Context, jwt string) ([]byte, error) {
	payload, err := k.verifySignature(ctx, jwt)
	if to, ok := ctx.Value(keyErrKey{}).(*error); ok {
		*to = err
	}
	return payload, err
}

func (k *keySet) verifySignature(ctx context.Context, jwt string) ([]byte, error) {
	jws, err := jose.ParseSignedCompact(jwt, keyAlgs)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", auth.ErrInvalidToken, err)
	}
	kid := jws.Signatures[0].Header.KeyID
	keys, fetchedAt := k.cached()
	if payload, ok := verifyWith(jws, kid, keys); ok {
		return payload, nil
	}
	if kid != "" && slices.ContainsFunc(keys, func(key jose.JSONWebKey) bool { return key.KeyID == kid }) {
		// A key we have did not verify it: forged or altered, not new.
		return nil, fmt.Errorf("%w: bad signature (key id %q)", auth.ErrInvalidToken, kid)
	}
	keys, err = k.refresh(ctx, fetchedAt)
	if err != nil {
		return nil, err
	}
	if payload, ok := verifyWith(jws, kid, keys); ok {
		return payload, nil
	}
	return nil, fmt.Errorf("%w: no key of the provider's verifies it (key id %q)", auth.ErrInvalidToken, kid)
}

func (k *keySet) cached() ([]jose.JSONWebKey, time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.keys, k.fetchedAt
}

// verifyWith tries the keys named kid (every key when the token names
// none).
func verifyWith(jws *jose.JSONWebSignature, kid string, keys []jose.JSONWebKey) ([]byte, bool) {
	for i := range keys {
		if kid != "" && keys[i].KeyID != kid {
			continue
		}
		if payload, err := jws.Verify(&keys[i]); err == nil {
			return payload, true
		}
	}
	return nil, false
}

// refresh fetches the JWKS unless another caller has since the cache the
// caller saw (seen), or it was fetched less than refreshEvery ago: then
// the current keys, or ErrVerifierUnavailable when they are that recent
// (the token may be signed with a key newer than the cache: not judged).
// Callers wait for one another, so concurrent misses make one request.
func (k *keySet) refresh(ctx context.Context, seen time.Time) ([]jose.JSONWebKey, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.fetchedAt.After(seen) {
		return k.keys, nil
	}
	if !k.fetchedAt.IsZero() && time.Since(k.fetchedAt) < k.refreshEvery {
		return nil, fmt.Errorf("%w: unknown key id, the provider's keys were fetched %s ago",
			auth.ErrVerifierUnavailable, time.Since(k.fetchedAt).Round(time.Millisecond))
	}
	keys, err := k.fetch(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", auth.ErrVerifierUnavailable, err)
	}
	k.keys, k.fetchedAt = keys, time.Now()
	return keys, nil
}

// fetch reads the JWKS; keys of a type go-jose does not know are skipped,
// as a provider may list some for other uses.
func (k *keySet) fetch(ctx context.Context) ([]jose.JSONWebKey, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := k.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("JWKS: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("JWKS: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("JWKS: %s", resp.Status)
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fmt.Errorf("JWKS: %w", err)
	}
	var keys []jose.JSONWebKey
	for _, raw := range set.Keys {
		var key jose.JSONWebKey
		if err := key.UnmarshalJSON(raw); err != nil {
			continue
		}
		if key.IsPublic() {
			keys = append(keys, key)
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("JWKS: no usable key")
	}
	return keys, nil
}
