package auth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
)

// Verifier turns one kind of bearer credential into the caller.
type Verifier interface {
	Authenticate(ctx context.Context, credential string) (Principal, error)
}

// Credentials chooses a credential's verifier by its shape before any
// signature is checked (decision 0086): a JWT goes to the verifier of its
// (unverified) issuer, anything else to the API keys. One issuer has one
// verifier, so a credential can never be checked by another's.
type Credentials struct {
	tokens  *Tokens
	issuers map[string]Verifier
	keys    Verifier
}

// CredentialsOption adds a verifier to Credentials.
type CredentialsOption func(*Credentials)

// WithIssuer sends JWTs whose iss claim is issuer to v (an identity
// provider's verifier).
func WithIssuer(issuer string, v Verifier) CredentialsOption {
	return func(c *Credentials) { c.issuers[issuer] = v }
}

// WithAPIKeys sends every credential that is not a JWT to v.
func WithAPIKeys(v Verifier) CredentialsOption {
	return func(c *Credentials) { c.keys = v }
}

// NewCredentials returns the dispatcher over our own tokens and the
// verifiers opts add.
func NewCredentials(tokens *Tokens, opts ...CredentialsOption) *Credentials {
	c := &Credentials{tokens: tokens, issuers: map[string]Verifier{issuer: tokens}}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Authenticate verifies credential with the verifier its shape names; an
// unknown issuer, or a key when no key verifier is configured, is
// ErrInvalidToken.
func (c *Credentials) Authenticate(ctx context.Context, credential string) (Principal, error) {
	iss, isJWT := unverifiedIssuer(credential)
	if !isJWT {
		if c.keys == nil {
			return Principal{}, ErrInvalidToken
		}
		return c.keys.Authenticate(ctx, credential)
	}
	v, ok := c.issuers[iss]
	if !ok {
		return Principal{}, ErrInvalidToken
	}
	return v.Authenticate(ctx, credential)
}

// unverifiedIssuer reads the iss claim of something shaped like a JWT
// (three base64url parts, a JSON payload); isJWT is false for anything else.
// The claim only picks the verifier, which then checks everything.
func unverifiedIssuer(credential string) (iss string, isJWT bool) {
	parts := strings.Split(credential, ".")
	if len(parts) != 3 {
		return "", false
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", false
	}
	var c struct {
		Iss string `json:"iss"`
	}
	if json.Unmarshal(payload, &c) != nil {
		return "", false
	}
	return c.Iss, true
}
