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
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/seatghor/seatghor/server/fault"
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

// GuestPrefix starts a guest's user id (decision 0437): a buyer with no
// account, made for one checkout, who gives a mobile number to find the
// tickets by.
const GuestPrefix = "gs_"

// Guest tells whether the caller is a guest.
func (p Principal) Guest() bool { return strings.HasPrefix(p.UserID, GuestPrefix) }

// Is tells whether the caller has one of the roles.
func (p Principal) Is(roles ...Role) bool { return slices.Contains(roles, p.Role) }

// Errors lists the sentinel errors of auth that reach the API; it answers
// each by its reason (docs/errors.md).
var Errors = []error{ErrNoToken, ErrInvalidToken, ErrTokenExpired, ErrKeyRevoked, ErrKeyMalformed, ErrKeyWrongMode,
	ErrReadOnly, ErrVerifierUnavailable}

// ErrNoToken means a call that needs a caller came without a Bearer token.
var ErrNoToken = fault.Sentinel(fault.Unauthenticated, "missing Bearer token in the Authorization header")

// ErrInvalidToken means a credential is refused: malformed, forged, signed
// by a key no longer listed, an API key never issued. Every refused
// credential is one (errors.Is); those refused for a reason the caller can
// act on are also one of the errors below (Refused), whose reason the API
// answers. The rest say nothing more: a forger learns nothing.
var ErrInvalidToken = fault.Sentinel(fault.TokenInvalid, "invalid token")

// The credentials refused for a reason of their own (issue 29: errors a
// partner can act on). Each is told only once it cannot help a forger: an
// expiry after the signature holds, a revocation after the secret matched a
// key, a shape or a mode that the credential shows anyway.
var (
	// ErrTokenExpired: a token whose signature holds, past its expiry.
	ErrTokenExpired = fault.Sentinel(fault.TokenExpired, "the token has expired: sign in again, or mint a new one")
	// ErrKeyRevoked: the secret of an API key that was revoked.
	ErrKeyRevoked = fault.Sentinel(fault.APIKeyRevoked,
		"this API key was revoked: use another key of the partner, or create one")
	// ErrKeyMalformed: neither a token nor an API key as issued.
	ErrKeyMalformed = fault.Sentinel(fault.APIKeyMalformed,
		"not a token nor an API key as issued (sk_live_ or sk_test_ and 52 letters and digits): copy the whole key")
	// ErrKeyWrongMode: an API key of the mode this server does not take.
	ErrKeyWrongMode = fault.Sentinel(fault.APIKeyWrongMode, "an API key of the other mode")
)

// Refused returns why, a credential's refusal with a reason of its own
// (ErrTokenExpired, ErrKeyRevoked, ErrKeyMalformed or ErrKeyWrongMode,
// wrapped or not), as an ErrInvalidToken too: errors.Is(err,
// ErrInvalidToken) holds for every refused credential, and the API answers
// why's reason.
func Refused(why error) error { return refused{why} }

type refused struct{ error }

func (r refused) Unwrap() error { return r.error }

// Is makes a Refused error an ErrInvalidToken.
func (r refused) Is(target error) bool { return target == ErrInvalidToken }

// Told says whether err is a refusal the caller is told the reason of: the
// edge answers it as it is, where any other refusal is ErrInvalidToken.
func Told(err error) bool {
	for _, why := range []error{ErrTokenExpired, ErrKeyRevoked, ErrKeyMalformed, ErrKeyWrongMode} {
		if errors.Is(err, why) {
			return true
		}
	}
	return false
}

// ErrReadOnly refuses a read-only credential a procedure with side effects
// its grant does not open.
var ErrReadOnly = fault.Sentinel(fault.APIKeyReadOnly, "this API key's scope allows no such call: a read_only key calls only procedures without side effects, a webhooks key those and the webhook endpoint changes")

// ErrVerifierUnavailable means the credential's verifier could not judge
// it for now (an identity provider not yet discovered): the token may be
// good, so the caller retries rather than signing in again.
var ErrVerifierUnavailable = fault.Sentinel(fault.AuthUnavailable, "the credential's verifier is unavailable")

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
	if errors.Is(err, jwt.ErrTokenExpired) {
		// The claims are read only once the signature holds (jwt checks it
		// first), so a forged token is never "expired".
		return Principal{}, Refused(ErrTokenExpired)
	}
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
