package api

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/auth"
)

// fakeVerifier accepts the credentials it knows and counts its checks.
type fakeVerifier struct {
	accept map[string]auth.Principal
	calls  int
}

func (v *fakeVerifier) Authenticate(_ context.Context, credential string) (auth.Principal, error) {
	v.calls++
	p, ok := v.accept[credential]
	if !ok {
		return p, errors.New("refused")
	}
	return p, nil
}

func jwtShaped(exp time.Time) string {
	payload := base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, `{"sub":"u","exp":%d}`, exp.Unix()))
	return "e30." + payload + ".sig"
}

// TestVerifiedTokens (decision 0231): a verified JWT is remembered until
// it expires (a minute at most), then checked again; refused credentials
// and API keys are checked every time.
func TestVerifiedTokens(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	short, long := jwtShaped(now.Add(10*time.Second)), jwtShaped(now.Add(time.Hour))
	v := &fakeVerifier{accept: map[string]auth.Principal{
		short:         {UserID: "u", Role: auth.RoleUser},
		long:          {UserID: "u", Role: auth.RoleUser},
		"sk_test_key": {UserID: "partner:1", Role: auth.RolePartner, PartnerID: 1, APIKey: "k1"},
	}}
	tokens := newVerifiedTokens(v, func() time.Time { return now })
	check := func(token string, wantOK bool, wantCalls int) {
		t.Helper()
		_, ok := tokens.authenticate(context.Background(), token)
		require.Equal(t, wantOK, ok)
		require.Equal(t, wantCalls, v.calls)
	}
	check(short, true, 1)
	check(short, true, 1) // remembered
	check("a.b.c", false, 2)
	check("a.b.c", false, 3) // a refusal is not remembered
	check("sk_test_key", true, 4)
	check("sk_test_key", true, 5) // nor an API key
	now = now.Add(10 * time.Second)
	check(short, true, 6) // expired here: checked again (the verifier decides)
	delete(v.accept, short)
	check(short, false, 7)
	check(long, true, 8)
	now = now.Add(30 * time.Second)
	check(long, true, 8)
	now = now.Add(31 * time.Second)
	check(long, true, 9) // a minute at most
}

// TestAnswerETagIsTheRPCs: the fast path's ETag of an answer is the one
// the RPC path's formula gives (the format before decision 0230).
func TestAnswerETagIsTheRPCs(t *testing.T) {
	states := []byte{1, 2, 3, 0xff}
	ga := []int32{5, 0, 12}
	h := sha256.New()
	fmt.Fprintf(h, "%s;%d;%d;%t;%d;", "etag1", 10, 40, true, 0)
	h.Write(states)
	for _, g := range ga {
		fmt.Fprintf(h, ";%d", g)
	}
	sum := h.Sum(nil)
	want := fmt.Sprintf(`"%d-%s"`, int64(987654321), hex.EncodeToString(sum[:8]))
	require.Equal(t, want, answerETag(987654321, "etag1", 10, 40, true, 0, states, ga))
}
