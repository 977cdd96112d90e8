// Package auth issues and checks the Bearer tokens of Seatghor's API: HS256
// JWTs whose subject is the user id and whose role claim says what the caller
// may do.
package auth

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/golang-jwt/jwt/v5"
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
	// UserID is the token subject.
	UserID string
	Role   Role
}

// Is tells whether the caller has one of the roles.
func (p Principal) Is(roles ...Role) bool { return slices.Contains(roles, p.Role) }

// Errors lists the errors of auth that reach the API; its error table has
// a row for each (docs/errors.md).
var Errors = []error{ErrNoToken, ErrInvalidToken}

// ErrNoToken means a call that needs a caller came without a Bearer token.
var ErrNoToken = errors.New("missing Bearer token in the Authorization header")

// ErrInvalidToken means a token is malformed, forged or expired.
var ErrInvalidToken = errors.New("invalid token")

const issuer = "seatghor"

type claims struct {
	Role string `json:"role"`
	jwt.RegisteredClaims
}

// Tokens mints and verifies tokens with one secret.
type Tokens struct {
	secret []byte
	now    func() time.Time
}

// NewTokens returns a token service; now is the clock used for expiry.
func NewTokens(secret string, now func() time.Time) (*Tokens, error) {
	if len(secret) == 0 {
		return nil, errors.New("auth secret is empty")
	}
	return &Tokens{secret: []byte(secret), now: now}, nil
}

// Mint returns a signed token for sub with role, valid for ttl.
func (t *Tokens) Mint(sub string, role Role, ttl time.Duration) (string, error) {
	if sub == "" {
		return "", errors.New("token subject is empty")
	}
	now := t.now()
	c := claims{
		Role: string(role),
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    issuer,
			Subject:   sub,
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
		},
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(t.secret)
}

// Verify checks a token and returns its principal.
func (t *Tokens) Verify(token string) (Principal, error) {
	var c claims
	_, err := jwt.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return t.secret, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithIssuer(issuer),
		jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(t.now),
	)
	if err != nil {
		return Principal{}, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	role, err := ParseRole(c.Role)
	if err != nil || c.Subject == "" {
		return Principal{}, fmt.Errorf("%w: bad subject or role", ErrInvalidToken)
	}
	return Principal{UserID: c.Subject, Role: role}, nil
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
