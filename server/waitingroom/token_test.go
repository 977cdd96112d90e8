package waitingroom

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/keyset"
)

// Rotating the queue keys (decision 0085): the new key signs and its kid is
// in the token; tokens of the old key verify while it is listed and are
// refused once it is removed.
func TestRotatingQueueKeys(t *testing.T) {
	now := time.Now()
	keys := func(s string) *keyset.Set {
		set, err := keyset.Parse(s)
		require.NoError(t, err)
		return set
	}
	oldSecret, newSecret := strings.Repeat("o", 32), strings.Repeat("n", 32)
	tk := ticket{SaleID: 7, Subject: "rumana", IssuedAt: now.UnixMilli(), ExpiresAt: now.Add(time.Minute).UnixMilli()}
	for _, prefix := range []string{queuePrefix, admittedPrefix} {
		old := newSigner(keys("q1:"+oldSecret)).mint(prefix, tk)
		require.True(t, strings.HasPrefix(old, prefix+"q1."), old)

		during := newSigner(keys("q2:" + newSecret + ",q1:" + oldSecret))
		got, err := during.open(prefix, old, now)
		require.NoError(t, err, "the old key still verifies while listed")
		require.Equal(t, "rumana", got.Subject)
		fresh := during.mint(prefix, tk)
		require.True(t, strings.HasPrefix(fresh, prefix+"q2."), "the new key signs: %s", fresh)

		after := newSigner(keys("q2:" + newSecret))
		_, err = after.open(prefix, old, now)
		require.ErrorIs(t, err, errForged, "the old key is removed: its tokens are refused")
		_, err = after.open(prefix, fresh, now)
		require.NoError(t, err)
		_, err = during.open(prefix, strings.Replace(fresh, prefix+"q2.", prefix+"q1.", 1), now)
		require.ErrorIs(t, err, errForged, "the kid is signed")
	}
}

// Tokens issued before key sets ("<prefix><payload>.<mac>", no kid) were
// signed with the key derived from SEATGHOR_AUTH_SECRET: they verify while
// that secret is set, and are refused once it is gone.
func TestQueueTokensOfTheFirstFormatVerifyWhileTheShorthandIsSet(t *testing.T) {
	now := time.Now()
	const secret = "the-platform-secret"
	raw, err := json.Marshal(ticket{SaleID: 7, Subject: "rumana", ExpiresAt: now.Add(time.Minute).UnixMilli()})
	require.NoError(t, err)
	payload := b64.EncodeToString(raw)
	m := hmac.New(sha256.New, keyset.Derive(secret, keyset.QueueTokens).Secret)
	m.Write([]byte(admittedPrefix + payload))
	legacy := admittedPrefix + payload + "." + b64.EncodeToString(m.Sum(nil))

	listed, err := keyset.Parse("q1:" + strings.Repeat("n", 32))
	require.NoError(t, err)
	withShorthand, err := keyset.Resolve(listed, secret, keyset.QueueTokens)
	require.NoError(t, err)
	got, err := newSigner(withShorthand).open(admittedPrefix, legacy, now)
	require.NoError(t, err)
	require.Equal(t, "rumana", got.Subject)
	_, err = newSigner(listed).open(admittedPrefix, legacy, now)
	require.ErrorIs(t, err, errForged, "without the shorthand the first format is void")
}
