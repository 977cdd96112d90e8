package gateway_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/gateway"
)

func TestVerifySignature(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	body := []byte(`{"id":"evt_1","type":"charge.succeeded"}`)
	current := []string{"whsec_new"}

	tests := []struct {
		name      string
		header    string
		body      []byte
		now       time.Time
		tolerance time.Duration
		want      error
	}{
		{name: "good", header: gateway.Sign(current, now, body)},
		{
			// The sender signs with old and new secret while rotating; a
			// receiver holding only the new one still verifies.
			name:   "rotated secret",
			header: gateway.Sign([]string{"whsec_old", "whsec_new"}, now, body),
		},
		{
			name:   "receiver still on the old secret",
			header: gateway.Sign([]string{"whsec_old"}, now, body),
			want:   gateway.ErrSignatureMismatch,
		},
		{
			name:   "forged with another secret",
			header: gateway.Sign([]string{"attacker"}, now, body),
			want:   gateway.ErrSignatureMismatch,
		},
		{
			name:   "body altered after signing",
			header: gateway.Sign(current, now, body),
			body:   []byte(`{"id":"evt_1","type":"charge.failed"}`),
			want:   gateway.ErrSignatureMismatch,
		},
		{
			// Moving a genuine signature to another timestamp breaks it.
			name:   "timestamp replaced",
			header: strings.Replace(gateway.Sign(current, now, body), fmt.Sprint(now.Unix()), fmt.Sprint(now.Unix()+1), 1),
			want:   gateway.ErrSignatureMismatch,
		},
		{
			name:   "stale",
			header: gateway.Sign(current, now.Add(-301*time.Second), body),
			want:   gateway.ErrSignatureStale,
		},
		{
			name:   "just inside the default tolerance",
			header: gateway.Sign(current, now.Add(-300*time.Second), body),
		},
		{
			name:   "future",
			header: gateway.Sign(current, now.Add(10*time.Minute), body),
			want:   gateway.ErrSignatureStale,
		},
		{
			name:      "custom tolerance",
			header:    gateway.Sign(current, now.Add(-30*time.Second), body),
			tolerance: 10 * time.Second,
			want:      gateway.ErrSignatureStale,
		},
		{
			// A stale forgery is a forgery: the signature is checked first.
			name:   "stale and forged",
			header: gateway.Sign([]string{"attacker"}, now.Add(-time.Hour), body),
			want:   gateway.ErrSignatureMismatch,
		},
		{name: "missing", header: "", want: gateway.ErrSignatureMissing},
		{name: "blank", header: "   ", want: gateway.ErrSignatureMissing},
		{name: "malformed: no timestamp", header: "v1=" + strings.Repeat("ab", 32), want: gateway.ErrSignatureMalformed},
		{name: "malformed: no v1", header: fmt.Sprintf("t=%d", now.Unix()), want: gateway.ErrSignatureMalformed},
		{name: "malformed: bad timestamp", header: "t=yesterday,v1=" + strings.Repeat("ab", 32), want: gateway.ErrSignatureMalformed},
		{name: "malformed: not hex", header: fmt.Sprintf("t=%d,v1=zz", now.Unix()), want: gateway.ErrSignatureMalformed},
		{name: "malformed: garbage", header: "sha256 deadbeef", want: gateway.ErrSignatureMalformed},
		{
			name:   "unknown scheme next to v1 is ignored",
			header: gateway.Sign(current, now, body) + ",v0=whatever",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := body
			if tt.body != nil {
				b = tt.body
			}
			at := now
			if !tt.now.IsZero() {
				at = tt.now
			}
			err := gateway.VerifySignature(tt.header, b, current, at, tt.tolerance)
			if tt.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tt.want)
			for _, other := range []error{gateway.ErrSignatureMissing, gateway.ErrSignatureMalformed, gateway.ErrSignatureMismatch, gateway.ErrSignatureStale} {
				if other != tt.want {
					require.False(t, errors.Is(err, other), "error %v is also %v", err, other)
				}
			}
		})
	}
}

func TestSignFormat(t *testing.T) {
	t.Parallel()
	at := time.Unix(1_700_000_000, 0)
	h := gateway.Sign([]string{"a", "", "b"}, at, []byte("{}"))
	parts := strings.Split(h, ",")
	require.Len(t, parts, 3, "one t and one v1 per non-empty secret: %s", h)
	require.Equal(t, "t=1700000000", parts[0])
	for _, p := range parts[1:] {
		require.True(t, strings.HasPrefix(p, "v1="), p)
		require.Len(t, p, len("v1=")+64)
	}
	// Both secrets verify on their own.
	require.NoError(t, gateway.VerifySignature(h, []byte("{}"), []string{"a"}, at, 0))
	require.NoError(t, gateway.VerifySignature(h, []byte("{}"), []string{"b"}, at, 0))
	require.ErrorIs(t, gateway.VerifySignature(h, []byte("{}"), nil, at, 0), gateway.ErrSignatureMismatch)
}
