package signin

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/keyset"
)

// TestStateCookieOpensOnlyAsSealed: the state cookie opens under its own
// name, before it expires, with a key the token key set still lists; any
// change to it, or another name, is a bad state.
func TestStateCookieOpensOnlyAsSealed(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	old, err := keyset.New(keyset.Key{ID: "old", Secret: []byte(strings.Repeat("o", 32))})
	require.NoError(t, err)
	rotated, err := keyset.New(keyset.Key{ID: "new", Secret: []byte(strings.Repeat("n", 32))},
		keyset.Key{ID: "old", Secret: []byte(strings.Repeat("o", 32))})
	require.NoError(t, err)
	dropped, err := keyset.New(keyset.Key{ID: "new", Secret: []byte(strings.Repeat("n", 32))})
	require.NoError(t, err)
	sOld, err := newSealer(old)
	require.NoError(t, err)
	sRotated, err := newSealer(rotated)
	require.NoError(t, err)
	sDropped, err := newSealer(dropped)
	require.NoError(t, err)

	st := loginState{State: "s", Nonce: "n", Verifier: "v", ReturnTo: "/tickets", Expires: now.Add(StateTTL).Unix()}
	value, err := sOld.seal("c1", st)
	require.NoError(t, err)
	require.NotContains(t, value, "/tickets", "sealed, not just signed")

	got, err := sOld.open("c1", value, now)
	require.NoError(t, err)
	require.Equal(t, st, got)
	got, err = sRotated.open("c1", value, now)
	require.NoError(t, err, "a key still listed opens what it sealed")
	require.Equal(t, st, got)

	flipped := []byte(value)
	flipped[len(flipped)-3] ^= 1
	for name, tt := range map[string]struct {
		s           *sealer
		name, value string
		at          time.Time
	}{
		"expired":           {sOld, "c1", value, now.Add(StateTTL)},
		"another cookie":    {sOld, "c2", value, now},
		"tampered":          {sOld, "c1", string(flipped), now},
		"key no longer set": {sDropped, "c1", value, now},
		"no key id":         {sOld, "c1", strings.TrimPrefix(value, "old."), now},
		"empty":             {sOld, "c1", "", now},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := tt.s.open(tt.name, tt.value, tt.at)
			require.ErrorIs(t, err, errBadState)
		})
	}
}
