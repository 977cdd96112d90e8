// Package auth issues and checks the Bearer tokens of Seatghor's API: HS256
// JWTs whose subject is the user id and whose role claim says what the caller
// may do, signed with the token key set (the key id in the JWT's kid
// header). Which verifier a bearer credential goes to, and how it yields the
// caller: docs/decisions/0086-the-auth-model.md.
package auth

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/seatghor/seatghor/server/keyset"
)

// Role is what a caller may do.
type Role string

// The roles.
const (
	RoleUser     Role = "user"
	RoleOperator Role = "operator"
	RoleAdmin    Role = "admin"
	RolePartner  Role = "partner"
)

// ParseRole checks a role name.
func ParseRole(s string) (Role, error) {
	r := Role(s)
	switch r {
	case RoleUser, RoleOperator, RoleAdmin, RolePartner:
		return r, nil
	}
	return "", fmt.Errorf("unknown role %q (want user, operator, admin or partner)", s)
}

// Principal is the authenticated caller.
type Principal struct {
	// UserID is the caller's opaque id: our token's subject, or the ids
	// decision 0086 gives other credentials.
	UserID string
	Role   Role
	// PartnerID is the reseller the caller acts for (the partner role's
	// channel); 0 for everyone else.
	PartnerID int64
	// APIKey is the id of the partner API key the call came with; "" for
	// every other credential. Keys may not manage keys (decision 0180).
	APIKey string
	// ReadOnly limits the caller to procedures declared NO_SIDE_EFFECTS
	// (a read-only API key): the API edge refuses the rest ErrReadOnly,
	// except those its Grant opens.
	ReadOnly bool
	// Grant names a set of procedures with side effects a ReadOnly caller
	// may call all the same (the API edge's grants): a webhooks-scoped
	// API key's, which manage its partner's webhook endpoints and nothing
	// else (decision 0276). "" opens none.
	Grant string
}

// Is tells whether the caller has one of the roles.
func (p Principal) Is(roles ...Role) bool { return slices.Contains(roles, p.Role) }

// Errors lists the errors of auth that reach the API; its error table has
// a row for each (docs/errors.md).
var Errors = []error{ErrNoToken, ErrInvalidToken, ErrReadOnly, ErrVerifierUnavailable}

// ErrNoToken means a call that needs a caller came without a Bearer token.
var ErrNoToken = errors.New("missing Bearer token in the Authorization header")

// ErrInvalidToken means a token is malformed, forged or expired.
var ErrInvalidToken = errors.New("invalid token")

// ErrReadOnly refuses a read-only credential a procedure with side effects
// its grant does not open.
var ErrReadOnly = errors.New("this API key's scope allows no such call: a read_only key calls only procedures without side effects, a webhooks key those and the webhook endpoint changes")

// ErrVerifierUnavailable means the credential's verifier could not judge
// it for now (an identity provider not yet discovered): the token may be
// good, so the caller retries rather than signing in again.
var ErrVerifierUnavailable = errors.New("the credential's verifier is unavailable")

const issuer = "seatghor"

type claims struct {
	Role      string `json:"role"`
	PartnerID int64  `json:"partner_id,omitempty"`
	jwt.RegisteredClaims
}

// Tokens mints tokens with the signing key of a key set and verifies them
// with the key their kid header names, if the set still lists it.
type Tokens struct {
	keys *keyset.Set
	now  func() time.Time
}

// NewTokens returns a token service over keys (the token key set,
// SEATGHOR_TOKEN_KEYS); now is the clock used for expiry.
func NewTokens(keys *keyset.Set, now func() time.Time) (*Tokens, error) {
	if keys == nil {
		return nil, errors.New("no token keys")
	}
	return &Tokens{keys: keys, now: now}, nil
}

// Mint returns a signed token for sub with role, valid for ttl.
func (t *Tokens) Mint(sub string, role Role, ttl time.Duration) (string, error) {
	return t.MintPrincipal(Principal{UserID: sub, Role: role}, ttl)
}

// MintPrincipal returns a signed token that verifies to p, valid for ttl:
// a partner-role principal must name its partner (Verify refuses one that
// does not).
func (t *Tokens) MintPrincipal(p Principal, ttl time.Duration) (string, error) {
	if p.UserID == "" {
		return "", errors.New("token subject is empty")
	}
	if p.PartnerID < 0 {
		return "", errors.New("negative partner id")
	}
	if p.Is(RolePartner) && p.PartnerID == 0 {
		return "", errors.New("a partner token needs the partner id it acts for")
	}
	now := t.now()
	c := claims{
		Role:      string(p.Role),
		PartnerID: p.PartnerID,
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    issuer,
			Subject:   p.UserID,
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
		},
	}
	key := t.keys.Signing()
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, c)
	tok.Header["kid"] = key.ID
	return tok.SignedString(key.Secret)
}

// key finds the secret of the key a token names; a token without a kid, or
// signed with a key no longer listed, is refused.
func (t *Tokens) key(tok *jwt.Token) (any, error) {
	kid, _ := tok.Header["kid"].(string)
	secret, ok := t.keys.Secret(kid)
	if !ok {
		return nil, fmt.Errorf("unknown key id %q", kid)
	}
	return secret, nil
}

// Verify checks a token and returns its principal. A partner-role token
// naming no partner is refused: it would act for no channel, so no
// partner's allow-list or allocation would apply to it (decision 0326).
func (t *Tokens) Verify(token string) (Principal, error) {
	var c claims
	_, err := jwt.ParseWithClaims(token, &c, t.key,
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithIssuer(issuer),
		jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(t.now),
	)
	if err != nil {
		return Principal{}, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	role, err := ParseRole(c.Role)
	if err != nil || c.Subject == "" || c.PartnerID < 0 {
		return Principal{}, fmt.Errorf("%w: bad subject, role or partner", ErrInvalidToken)
	}
	if role == RolePartner && c.PartnerID == 0 {
		return Principal{}, fmt.Errorf("%w: a partner token names no partner", ErrInvalidToken)
	}
	return Principal{UserID: c.Subject, Role: role, PartnerID: c.PartnerID}, nil
}

// Authenticate is Verify as a Verifier, so our tokens take their place
// among the credentials.
func (t *Tokens) Authenticate(_ context.Context, token string) (Principal, error) {
	return t.Verify(token)
}

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the caller; ok is false for unauthenticated contexts.
func FromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}
