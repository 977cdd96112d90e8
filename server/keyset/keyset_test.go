package keyset_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/keyset"
)

var (
	secretA = strings.Repeat("a", keyset.MinSecretLen)
	secretB = strings.Repeat("b", keyset.MinSecretLen) + ":with:colons"
)

func TestParse(t *testing.T) {
	set, err := keyset.Parse(" new:" + secretB + " ,\nold:" + secretA + "\n")
	require.NoError(t, err)
	require.Equal(t, []string{"new", "old"}, set.IDs())
	require.Equal(t, "new", set.Signing().ID, "the first key signs")
	got, ok := set.Secret("old")
	require.True(t, ok)
	require.Equal(t, secretA, string(got))
	got, _ = set.Secret("new")
	require.Equal(t, secretB, string(got), "the secret is everything after the first colon")
	_, ok = set.Secret("gone")
	require.False(t, ok)
	require.Equal(t, "keyset[new,old]", set.String())
	require.NotContains(t, fmt.Sprintf("%v %v", set, set.Signing()), "aaaa", "printing a set or key shows no secret")

	for in, want := range map[string]string{
		"":                                      "at least one key",
		"k1:short":                              "at least 32",
		"k1" + secretA:                          "kid:secret",
		"k1:" + secretA + ",k1:" + secretB:      "listed twice",
		"bad.id:" + secretA:                     "key id",
		":" + secretA:                           "key id",
		strings.Repeat("k", 33) + ":" + secretA: "key id",
		"k1:" + secretA + ",k2:" + secretA[:31]: "k2",
	} {
		_, err := keyset.Parse(in)
		require.ErrorContains(t, err, want, in)
		if err != nil {
			require.NotContains(t, err.Error(), "aaaa", "an error never shows a secret")
		}
	}
}

// The shorthand derives one distinct key per purpose, with the fixed id.
func TestDerive(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range []keyset.Purpose{keyset.Tokens, keyset.TicketCodes, keyset.QueueTokens} {
		k := keyset.Derive("dev-secret", p)
		require.Equal(t, keyset.SharedID, k.ID)
		require.Len(t, k.Secret, 32)
		require.False(t, seen[string(k.Secret)], "a key of its own for %s", p)
		seen[string(k.Secret)] = true
		require.Equal(t, k, keyset.Derive("dev-secret", p), "the same key every time")
		require.NotEqual(t, k, keyset.Derive("other-secret", p))
	}
}

// Listed keys come first and sign; the shorthand's key, when it is set too,
// verifies after them, so leaving the shorthand voids nothing.
func TestResolve(t *testing.T) {
	listed, err := keyset.Parse("k2:" + secretA)
	require.NoError(t, err)
	set, err := keyset.Resolve(listed, "dev-secret", keyset.Tokens)
	require.NoError(t, err)
	require.Equal(t, []string{"k2", keyset.SharedID}, set.IDs())
	set, err = keyset.Resolve(listed, "", keyset.Tokens)
	require.NoError(t, err)
	require.Equal(t, []string{"k2"}, set.IDs())
	set, err = keyset.Resolve(nil, "dev-secret", keyset.Tokens)
	require.NoError(t, err)
	require.Equal(t, keyset.FromSecret("dev-secret", keyset.Tokens), set)
	_, err = keyset.Resolve(nil, "", keyset.Tokens)
	require.Error(t, err)
	clash, err := keyset.Parse(keyset.SharedID + ":" + secretA)
	require.NoError(t, err)
	_, err = keyset.Resolve(clash, "dev-secret", keyset.Tokens)
	require.ErrorContains(t, err, "listed twice")
}
