package auth

import (
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/keyset"
)

func TestVerify(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	tokens, err := NewTokens(keyset.FromSecret("secret", keyset.Tokens), clock)
	require.NoError(t, err)
	good, err := tokens.Mint("rumana", RoleOperator, time.Hour)
	require.NoError(t, err)
	p, err := tokens.Verify(good)
	require.NoError(t, err)
	require.Equal(t, Principal{UserID: "rumana", Role: RoleOperator}, p)

	other, err := NewTokens(keyset.FromSecret("other", keyset.Tokens), clock)
	require.NoError(t, err)
	forged, err := other.Mint("rumana", RoleAdmin, time.Hour)
	require.NoError(t, err)
	expired, err := tokens.Mint("rumana", RoleUser, -time.Minute)
	require.NoError(t, err)
	none, err := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"sub": "x", "role": "admin", "iss": "seatghor",
		"exp": now.Add(time.Hour).Unix()}).SignedString(jwt.UnsafeAllowNoneSignatureType)
	require.NoError(t, err)
	badRole := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "x", "role": "king", "iss": "seatghor",
		"exp": now.Add(time.Hour).Unix()})
	badRole.Header["kid"] = keyset.SharedID
	badRoleToken, err := badRole.SignedString(keyset.Derive("secret", keyset.Tokens).Secret)
	require.NoError(t, err)
	for name, tok := range map[string]string{
		"forged": forged, "expired": expired, "alg none": none, "unknown role": badRoleToken, "garbage": "a.b.c",
	} {
		_, err := tokens.Verify(tok)
		require.ErrorIs(t, err, ErrInvalidToken, name)
	}
	_, err = NewTokens(nil, clock)
	require.Error(t, err)
}
