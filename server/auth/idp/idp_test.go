package idp_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/oauth2-proxy/mockoidc"
	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/auth/idp"
)

// counted is a real OIDC provider (mockoidc) that counts the discovery
// requests it answers.
type counted struct {
	*mockoidc.MockOIDC
	discoveries, jwks atomic.Int64
}

func startProvider(t *testing.T) *counted {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	m, err := mockoidc.NewServer(key)
	require.NoError(t, err)
	_, err = m.Keypair.KeyID()
	require.NoError(t, err)
	c := &counted{MockOIDC: m}
	require.NoError(t, m.AddMiddleware(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case mockoidc.DiscoveryEndpoint:
				c.discoveries.Add(1)
			case mockoidc.JWKSEndpoint:
				c.jwks.Add(1)
			}
			next.ServeHTTP(w, r)
		})
	}))
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	require.NoError(t, err)
	require.NoError(t, m.Start(ln, nil))
	t.Cleanup(func() { _ = m.Shutdown() })
	return c
}

// idToken is an ID token of p for sub with nonce, audience our client.
func idToken(t *testing.T, p *counted, sub, nonce string) string {
	t.Helper()
	now := time.Now()
	tok, err := p.Keypair.SignJWT(&mockoidc.IDTokenClaims{Nonce: nonce, RegisteredClaims: &jwt.RegisteredClaims{
		Issuer: p.Issuer(), Subject: sub, Audience: jwt.ClaimStrings{p.ClientID},
		IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour)),
	}})
	require.NoError(t, err)
	return tok
}

func TestNewChecksTheSettings(t *testing.T) {
	for name, tt := range map[string]struct {
		cfg     idp.Config
		wantErr string
	}{
		"minimal":           {idp.Config{Issuer: "https://idp.example/realms/x", ClientID: "site"}, ""},
		"named":             {idp.Config{Issuer: "https://idp.example", ClientID: "site", Name: "google"}, ""},
		"no client":         {idp.Config{Issuer: "https://idp.example"}, "SEATGHOR_OIDC_CLIENT_ID"},
		"not a URL":         {idp.Config{Issuer: "idp.example", ClientID: "site"}, "SEATGHOR_OIDC_ISSUER"},
		"a query":           {idp.Config{Issuer: "https://idp.example/?x=1", ClientID: "site"}, "SEATGHOR_OIDC_ISSUER"},
		"name with colon":   {idp.Config{Issuer: "https://idp.example", ClientID: "site", Name: "a:b"}, "SEATGHOR_OIDC_NAME"},
		"name upper case":   {idp.Config{Issuer: "https://idp.example", ClientID: "site", Name: "Google"}, "SEATGHOR_OIDC_NAME"},
		"name way too long": {idp.Config{Issuer: "https://idp.example", ClientID: "site", Name: "abcdefghijklmnopqrstuvwxyz0123456789"}, "SEATGHOR_OIDC_NAME"},
	} {
		t.Run(name, func(t *testing.T) {
			p, err := idp.New(tt.cfg)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.cfg.Issuer, p.Issuer())
		})
	}
}

// TestConcurrentCallersShareOneDiscovery: many first callers at once make
// one discovery request, and all of them are answered from it.
func TestConcurrentCallersShareOneDiscovery(t *testing.T) {
	prov := startProvider(t)
	p, err := idp.New(idp.Config{Name: "test", Issuer: prov.Issuer(), ClientID: prov.ClientID})
	require.NoError(t, err)
	tok := idToken(t, prov, "u1", "")
	const callers = 50
	var wg sync.WaitGroup
	errs := make([]error, callers)
	who := make([]auth.Principal, callers)
	for i := range callers {
		wg.Go(func() { who[i], errs[i] = p.Authenticate(context.Background(), tok) })
	}
	wg.Wait()
	for i := range callers {
		require.NoError(t, errs[i])
		require.Equal(t, auth.Principal{UserID: "idp:test:u1", Role: auth.RoleUser}, who[i])
	}
	require.EqualValues(t, 1, prov.discoveries.Load())
}

// TestAFailedDiscoveryIsNotRepeatedAtOnce: after a failed discovery the
// callers within RetryAfter are told the provider is unavailable without
// another request to it; a later caller discovers it.
func TestAFailedDiscoveryIsNotRepeatedAtOnce(t *testing.T) {
	prov := startProvider(t)
	tok := idToken(t, prov, "u1", "")
	prov.QueueError(&mockoidc.ServerError{Code: http.StatusServiceUnavailable, Error: "temporarily_unavailable"})

	patient, err := idp.New(idp.Config{Issuer: prov.Issuer(), ClientID: prov.ClientID, RetryAfter: time.Hour})
	require.NoError(t, err)
	for range 3 {
		_, err = patient.Authenticate(context.Background(), tok)
		require.ErrorIs(t, err, auth.ErrVerifierUnavailable)
		require.NotErrorIs(t, err, auth.ErrInvalidToken, "the token was not judged")
	}
	require.EqualValues(t, 1, prov.discoveries.Load(), "one attempt within RetryAfter")
	require.Error(t, patient.Check(context.Background()), "readiness reports it")

	eager, err := idp.New(idp.Config{Issuer: prov.Issuer(), ClientID: prov.ClientID, RetryAfter: time.Nanosecond})
	require.NoError(t, err)
	who, err := eager.Authenticate(context.Background(), tok)
	require.NoError(t, err)
	require.Equal(t, "idp:oidc:u1", who.UserID, "the default name")
	require.NoError(t, eager.Check(context.Background()))
}

// TestIDTokenNeedsTheSignInsNonce: the sign-in's ID token must carry the
// nonce the sign-in sent, and its audience is the client id even when the
// API's audience is another.
func TestIDTokenNeedsTheSignInsNonce(t *testing.T) {
	prov := startProvider(t)
	p, err := idp.New(idp.Config{Name: "test", Issuer: prov.Issuer(), ClientID: prov.ClientID, Audience: "https://api.seatghor.example"})
	require.NoError(t, err)
	tok := idToken(t, prov, "u1", "n-123")
	who, _, err := p.VerifyIDToken(context.Background(), tok, "n-123")
	require.NoError(t, err)
	require.Equal(t, "idp:test:u1", who.UserID)
	for _, nonce := range []string{"n-124", ""} {
		_, _, err = p.VerifyIDToken(context.Background(), tok, nonce)
		require.ErrorIs(t, err, auth.ErrInvalidToken, "nonce %q", nonce)
	}
	_, _, err = p.VerifyIDToken(context.Background(), idToken(t, prov, "u1", ""), "")
	require.ErrorIs(t, err, auth.ErrInvalidToken, "no nonce at all")
	// The API's audience is not the client id: the ID token is not an API token.
	_, err = p.Authenticate(context.Background(), tok)
	require.ErrorIs(t, err, auth.ErrInvalidToken)
}

// stranger signs tokens claiming the provider with a key it never had,
// each under a key id it never listed.
type stranger struct{ key *rsa.PrivateKey }

func newStranger(t *testing.T) stranger {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	return stranger{key}
}

func (s stranger) token(t *testing.T, p *counted) string {
	t.Helper()
	kp, err := mockoidc.NewKeypair(s.key)
	require.NoError(t, err)
	kp.Kid = "made-up-" + rand.Text()
	now := time.Now()
	tok, err := kp.SignJWT(&jwt.RegisteredClaims{Issuer: p.Issuer(), Subject: "mallory", Audience: jwt.ClaimStrings{p.ClientID},
		IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour))})
	require.NoError(t, err)
	return tok
}

// TestUnknownKeyIDsDoNotFloodTheProvider: a token with an unknown key id
// makes the JWKS be fetched again, but within KeysRefreshAfter of the
// last fetch it is answered unavailable (not judged) without another
// fetch, however many come; concurrent misses share one fetch.
func TestUnknownKeyIDsDoNotFloodTheProvider(t *testing.T) {
	prov := startProvider(t)
	good := idToken(t, prov, "u1", "")
	mallory := newStranger(t)

	patient, err := idp.New(idp.Config{Issuer: prov.Issuer(), ClientID: prov.ClientID, KeysRefreshAfter: time.Hour})
	require.NoError(t, err)
	_, err = patient.Authenticate(context.Background(), good)
	require.NoError(t, err)
	require.EqualValues(t, 1, prov.jwks.Load())
	for range 20 {
		_, err = patient.Authenticate(context.Background(), mallory.token(t, prov))
		require.ErrorIs(t, err, auth.ErrVerifierUnavailable)
	}
	require.EqualValues(t, 1, prov.jwks.Load(), "no fetch within KeysRefreshAfter")
	_, err = patient.Authenticate(context.Background(), good)
	require.NoError(t, err, "cached keys still verify")
	_, err = patient.Authenticate(context.Background(), good[:len(good)-4]+"AAAA")
	require.ErrorIs(t, err, auth.ErrInvalidToken, "a known key id with a bad signature is refused, not refetched")
	require.EqualValues(t, 1, prov.jwks.Load())

	// 30 first callers at once, all with unknown key ids: one fetch.
	shared, err := idp.New(idp.Config{Issuer: prov.Issuer(), ClientID: prov.ClientID, KeysRefreshAfter: time.Hour})
	require.NoError(t, err)
	require.NoError(t, shared.Check(context.Background()))
	const callers = 30
	tokens := make([]string, callers)
	for i := range tokens {
		tokens[i] = mallory.token(t, prov)
	}
	var wg sync.WaitGroup
	errs := make([]error, callers)
	for i := range callers {
		wg.Go(func() { _, errs[i] = shared.Authenticate(context.Background(), tokens[i]) })
	}
	wg.Wait()
	for _, err := range errs {
		require.True(t, errors.Is(err, auth.ErrInvalidToken) || errors.Is(err, auth.ErrVerifierUnavailable), "%v", err)
	}
	require.EqualValues(t, 2, prov.jwks.Load(), "one fetch for all of them")

	// Past KeysRefreshAfter a miss fetches again and, still unknown, is refused.
	eager, err := idp.New(idp.Config{Issuer: prov.Issuer(), ClientID: prov.ClientID, KeysRefreshAfter: time.Nanosecond})
	require.NoError(t, err)
	_, err = eager.Authenticate(context.Background(), good)
	require.NoError(t, err)
	_, err = eager.Authenticate(context.Background(), mallory.token(t, prov))
	require.ErrorIs(t, err, auth.ErrInvalidToken)
	require.EqualValues(t, 4, prov.jwks.Load())
}
