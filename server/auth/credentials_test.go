package auth

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/keyset"
)

// verifierFunc lets a test stand in for a verifier this package does not
// own (an identity provider's, the API keys'): the dispatch is under test.
type verifierFunc func(ctx context.Context, credential string) (Principal, error)

func (f verifierFunc) Authenticate(ctx context.Context, credential string) (Principal, error) {
	return f(ctx, credential)
}

func TestCredentialsChooseTheVerifierByShape(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	tokens, err := NewTokens(keyset.FromSecret("secret", keyset.Tokens), func() time.Time { return now })
	require.NoError(t, err)
	ours, err := tokens.MintPrincipal(Principal{UserID: "agency", Role: RolePartner, PartnerID: 7}, time.Hour)
	require.NoError(t, err)
	// A token another issuer signed, with a key we do not have.
	idp, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.RegisteredClaims{Issuer: "https://idp.example", Subject: "u1"}).
		SignedString([]byte("theirs"))
	require.NoError(t, err)
	unknown, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.RegisteredClaims{Issuer: "https://elsewhere", Subject: "u1"}).
		SignedString([]byte("theirs"))
	require.NoError(t, err)

	fromIdP := verifierFunc(func(_ context.Context, c string) (Principal, error) {
		if c != idp {
			return Principal{}, errors.New("the identity provider got another credential")
		}
		return Principal{UserID: "idp:test:u1", Role: RoleUser}, nil
	})
	fromKeys := verifierFunc(func(_ context.Context, c string) (Principal, error) {
		if c != "sk_test_abc" {
			return Principal{}, ErrInvalidToken
		}
		return Principal{UserID: "partner:3", Role: RolePartner, PartnerID: 3}, nil
	})
	full := NewCredentials(tokens, WithIssuer("https://idp.example", fromIdP), WithAPIKeys(fromKeys))
	tokensOnly := NewCredentials(tokens)

	tests := []struct {
		name  string
		creds *Credentials
		in    string
		want  Principal
		err   bool
	}{
		{"our token", full, ours, Principal{UserID: "agency", Role: RolePartner, PartnerID: 7}, false},
		{"an identity provider's token", full, idp, Principal{UserID: "idp:test:u1", Role: RoleUser}, false},
		{"an API key", full, "sk_test_abc", Principal{UserID: "partner:3", Role: RolePartner, PartnerID: 3}, false},
		{"a wrong API key", full, "sk_test_nope", Principal{}, true},
		{"an unknown issuer", full, unknown, Principal{}, true},
		{"a key with no key verifier", tokensOnly, "sk_test_abc", Principal{}, true},
		{"an identity provider not configured", tokensOnly, idp, Principal{}, true},
		{"three dots of nothing", full, "a.b.c", Principal{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := tt.creds.Authenticate(context.Background(), tt.in)
			if tt.err {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, p)
		})
	}
}
