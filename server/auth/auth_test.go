package auth

import (
	"strings"
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
	noPartner := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "shop", "role": "partner", "iss": "seatghor",
		"exp": now.Add(time.Hour).Unix()})
	noPartner.Header["kid"] = keyset.SharedID
	noPartnerToken, err := noPartner.SignedString(keyset.Derive("secret", keyset.Tokens).Secret)
	require.NoError(t, err)
	for name, tok := range map[string]string{
		"forged": forged, "expired": expired, "alg none": none, "unknown role": badRoleToken, "garbage": "a.b.c",
		"partner without a partner": noPartnerToken,
	} {
		_, err := tokens.Verify(tok)
		require.ErrorIs(t, err, ErrInvalidToken, name)
	}
	_, err = NewTokens(nil, clock)
	require.Error(t, err)
}

// A partner-role token must name its partner (decision 0326): minting one
// without is refused, and one with it verifies to the partner.
func TestPartnerTokenNamesItsPartner(t *testing.T) {
	tokens, err := NewTokens(keyset.FromSecret("secret", keyset.Tokens), time.Now)
	require.NoError(t, err)
	_, err = tokens.MintPrincipal(Principal{UserID: "shop", Role: RolePartner}, time.Hour)
	require.ErrorContains(t, err, "partner id")
	_, err = tokens.Mint("shop", RolePartner, time.Hour)
	require.ErrorContains(t, err, "partner id")
	tok, err := tokens.MintPrincipal(Principal{UserID: "shop", Role: RolePartner, PartnerID: 7}, time.Hour)
	require.NoError(t, err)
	p, err := tokens.Verify(tok)
	require.NoError(t, err)
	require.Equal(t, Principal{UserID: "shop", Role: RolePartner, PartnerID: 7}, p)
}

// Rotating the token keys (decision 0085): the new key is listed first and
// signs, with its kid in the header; tokens of the old key verify while it
// is listed and are refused once it is removed. A token without a kid (the
// format before key sets) is refused.
func TestRotatingTokenKeys(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	keys := func(s string) *keyset.Set {
		set, err := keyset.Parse(s)
		require.NoError(t, err)
		return set
	}
	oldSecret, newSecret := strings.Repeat("o", 32), strings.Repeat("n", 32)
	kidOf := func(tok string) any {
		parsed, _, err := jwt.NewParser().ParseUnverified(tok, jwt.MapClaims{})
		require.NoError(t, err)
		return parsed.Header["kid"]
	}

	before, err := NewTokens(keys("k1:"+oldSecret), clock)
	require.NoError(t, err)
	old, err := before.Mint("rumana", RoleUser, time.Hour)
	require.NoError(t, err)
	require.Equal(t, "k1", kidOf(old))

	during, err := NewTokens(keys("k2:"+newSecret+",k1:"+oldSecret), clock)
	require.NoError(t, err)
	p, err := during.Verify(old)
	require.NoError(t, err, "the old key still verifies while listed")
	require.Equal(t, "rumana", p.UserID)
	fresh, err := during.Mint("karim", RoleAdmin, time.Hour)
	require.NoError(t, err)
	require.Equal(t, "k2", kidOf(fresh), "the new key signs")
	_, err = before.Verify(fresh)
	require.ErrorIs(t, err, ErrInvalidToken, "a server that does not know k2 yet refuses its tokens")

	after, err := NewTokens(keys("k2:"+newSecret), clock)
	require.NoError(t, err)
	_, err = after.Verify(old)
	require.ErrorIs(t, err, ErrInvalidToken, "the old key is removed: its tokens are refused")
	p, err = after.Verify(fresh)
	require.NoError(t, err)
	require.Equal(t, Principal{UserID: "karim", Role: RoleAdmin}, p)

	// A token naming a listed kid but signed with another secret, and a
	// token without a kid, are refused.
	forged := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "x", "role": "admin", "iss": "seatghor",
		"exp": now.Add(time.Hour).Unix()})
	forged.Header["kid"] = "k2"
	forgedToken, err := forged.SignedString([]byte(oldSecret))
	require.NoError(t, err)
	noKid, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "x", "role": "admin", "iss": "seatghor",
		"exp": now.Add(time.Hour).Unix()}).SignedString([]byte(newSecret))
	require.NoError(t, err)
	for name, tok := range map[string]string{"wrong secret for kid": forgedToken, "no kid": noKid} {
		_, err := after.Verify(tok)
		require.ErrorIs(t, err, ErrInvalidToken, name)
	}
}
