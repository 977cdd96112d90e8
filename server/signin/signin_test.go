package signin_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/golang-jwt/jwt/v5"
	"github.com/oauth2-proxy/mockoidc"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	"github.com/seatghor/seatghor/gen/seatghor/booking/v1/bookingv1connect"
	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/gen/seatghor/catalog/v1/catalogv1connect"
	ledgerv1 "github.com/seatghor/seatghor/gen/seatghor/ledger/v1"
	"github.com/seatghor/seatghor/gen/seatghor/ledger/v1/ledgerv1connect"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/internal/testkit/pgtest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/auth/idp"
	"github.com/seatghor/seatghor/server/signin"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Cleanup()
	os.Exit(code)
}

// provider is a real OpenID Connect provider (mockoidc: discovery, JWKS,
// authorize and token endpoints with PKCE) on a local port.
type provider struct {
	*mockoidc.MockOIDC
}

// startProvider starts a provider signing with key on addr ("" for a free
// port), registered for client (a fresh one when client is nil).
func startProvider(t *testing.T, key *rsa.PrivateKey, addr string, client *mockoidc.Config) provider {
	t.Helper()
	m, err := mockoidc.NewServer(key)
	require.NoError(t, err)
	if client != nil {
		m.ClientID, m.ClientSecret = client.ClientID, client.ClientSecret
	}
	_, err = m.Keypair.KeyID() // computed now, not lazily by concurrent handlers
	require.NoError(t, err)
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	require.NoError(t, m.Start(ln, nil))
	t.Cleanup(func() { _ = m.Shutdown() })
	return provider{m}
}

func newKey(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	return k
}

// claimsStaff is an ID token whose claims say the user is an admin: a
// provider's claims never make staff (decision 0086).
type claimsStaff struct {
	*mockoidc.IDTokenClaims
	Role   string   `json:"role"`
	Roles  []string `json:"roles"`
	Groups []string `json:"groups"`
}

// staffUser is a provider's user whose ID token claims the admin role.
type staffUser struct{ sub string }

func (u staffUser) ID() string { return u.sub }

func (u staffUser) Userinfo([]string) ([]byte, error) {
	return json.Marshal(map[string]string{"sub": u.sub})
}

func (u staffUser) Claims(_ []string, base *mockoidc.IDTokenClaims) (jwt.Claims, error) {
	return claimsStaff{IDTokenClaims: base, Role: "admin", Roles: []string{"admin"}, Groups: []string{"admins"}}, nil
}

// platform starts the platform with p as its identity provider, named "test".
func platform(t *testing.T, p provider) *apptest.Env {
	t.Helper()
	return apptest.New(t, apptest.Options{Shards: 1, OIDC: idp.Config{
		Name: "test", Issuer: p.Issuer(), ClientID: p.ClientID, ClientSecret: p.ClientSecret,
		// Every call may try discovery and the JWKS again: no waiting in tests.
		RetryAfter: time.Nanosecond, KeysRefreshAfter: time.Nanosecond,
	}})
}

// browser is a browser's cookie jar and redirects, stopping at the first
// redirect that carries a fragment: the sign-in's answer to the site.
type browser struct {
	*http.Client
	hops []*url.URL
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	b := &browser{}
	b.Client = &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, _ []*http.Request) error {
		b.hops = append(b.hops, req.URL)
		if req.URL.Fragment != "" {
			return http.ErrUseLastResponse
		}
		return nil
	}}
	return b
}

// landing follows a redirect chain from rawURL and returns where the
// browser lands: the site's page and its fragment.
func (b *browser) landing(t *testing.T, rawURL string) (path string, fragment url.Values) {
	t.Helper()
	resp, err := b.Get(rawURL)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusFound, resp.StatusCode, "the sign-in ends with a redirect to the site")
	loc, err := url.Parse(resp.Header.Get("Location"))
	require.NoError(t, err)
	require.Empty(t, loc.Host, "the sign-in only sends the browser to this site")
	fragment, err = url.ParseQuery(loc.Fragment)
	require.NoError(t, err)
	return loc.Path + "?" + loc.RawQuery, fragment
}

// loginURL is where the site sends the browser to sign in: back to
// returnTo, with the site's one-time value siteState.
func loginURL(env *apptest.Env, returnTo, siteState string) string {
	return env.URL + signin.LoginPath + "?" + url.Values{"return_to": {returnTo}, "site_state": {siteState}}.Encode()
}

// siteState is a one-time value as the site makes it: 128 random bits,
// base64url.
func siteState() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// signIn runs the whole sign-in as a browser would and returns the
// fragment's token, checking its expiry and that the site's value came
// back.
func signIn(t *testing.T, env *apptest.Env, returnTo string) string {
	t.Helper()
	b := newBrowser(t)
	value := siteState()
	_, frag := b.landing(t, loginURL(env, returnTo, value))
	require.Empty(t, frag.Get("auth_error"))
	require.Equal(t, value, frag.Get("site_state"))
	exp, err := strconv.ParseInt(frag.Get("expires_at"), 10, 64)
	require.NoError(t, err)
	require.Greater(t, exp, time.Now().Unix())
	require.NotEmpty(t, frag.Get("token"))
	return frag.Get("token")
}

func bearer(token string) connect.ClientOption {
	return connect.WithInterceptors(connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			req.Header().Set("Authorization", "Bearer "+token)
			req.Header().Set("Idempotency-Key", rand.Text())
			return next(ctx, req)
		}
	}))
}

// seatedShow creates a small show as an admin (our own token).
func seatedShow(t *testing.T, env *apptest.Env) int64 {
	t.Helper()
	cat := catalogv1connect.NewCatalogServiceClient(env.HTTP, env.URL, bearer(env.Token(t, "admin", auth.RoleAdmin)))
	resp, err := cat.CreateShow(context.Background(), connect.NewRequest(&catalogv1.CreateShowRequest{
		Kind: catalogv1.ShowKind_SHOW_KIND_CONCERT, Title: "Sign-in night", Venue: "Test Hall",
		StartsAt: timestamppb.New(time.Now().Add(30 * 24 * time.Hour)), Currency: "BDT",
		Sections: []*catalogv1.Section{{Name: "Main", Rows: []string{"A"}, SeatsPerRow: 4, PriceMinor: 85000}},
		HoldTtl:  durationpb.New(10 * time.Minute), MaxSeatsPerAccount: 4, MaxSeatsPerHold: 4,
	}))
	require.NoError(t, err)
	return resp.Msg.GetShow().GetShowId()
}

// hold holds seat on show with token and returns the hold's buyer, or the
// error's code.
func hold(env *apptest.Env, token string, show int64, seat string) (string, connect.Code) {
	holds := bookingv1connect.NewHoldServiceClient(env.HTTP, env.URL, bearer(token))
	resp, err := holds.CreateHold(context.Background(), connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{seat}}))
	if err != nil {
		return "", connect.CodeOf(err)
	}
	return resp.Msg.GetHold().GetUserId(), 0
}

func TestSignInThroughTheProviderCallsTheAPIAsItsUser(t *testing.T) {
	p := startProvider(t, newKey(t), "", nil)
	env := platform(t, p)
	show := seatedShow(t, env)
	p.QueueUser(staffUser{sub: "rumana-42"})

	b := newBrowser(t)
	value := siteState()
	page, frag := b.landing(t, loginURL(env, "/shows/7?seat=A1", value))
	require.Equal(t, "/shows/7?seat=A1", page, "back where the buyer was")
	// The site's one-time value comes back next to the token (decision
	// 0288), and only to the site: the provider never sees it.
	require.Equal(t, value, frag.Get("site_state"))
	for _, hop := range b.hops[:len(b.hops)-1] { // the last is the site's page
		require.NotContains(t, hop.String(), value, "the provider is not told the site's value")
	}

	// The first hop is the provider's authorization endpoint, with a PKCE
	// S256 challenge, a state and a nonce; the verifier never leaves us.
	require.GreaterOrEqual(t, len(b.hops), 3)
	authz := b.hops[0]
	require.Equal(t, p.AuthorizationEndpoint(), authz.Scheme+"://"+authz.Host+authz.Path)
	q := authz.Query()
	require.Equal(t, "S256", q.Get("code_challenge_method"))
	require.Len(t, q.Get("code_challenge"), 43, "base64url of a SHA-256")
	require.Empty(t, q.Get("code_verifier"))
	require.Equal(t, "code", q.Get("response_type"))
	require.Equal(t, p.ClientID, q.Get("client_id"))
	require.Equal(t, env.URL+signin.CallbackPath, q.Get("redirect_uri"))
	require.NotEmpty(t, q.Get("state"))
	require.NotEmpty(t, q.Get("nonce"))
	require.Equal(t, signin.CallbackPath, b.hops[1].Path, "the provider sends the browser back to the callback")

	token := frag.Get("token")
	require.NotEmpty(t, token)
	exp, err := strconv.ParseInt(frag.Get("expires_at"), 10, 64)
	require.NoError(t, err)
	require.InDelta(t, time.Now().Add(p.AccessTTL).Unix(), exp, 60, "the token's own expiry")

	// The token calls the API as idp:<name>:<sub>, a user: the provider's
	// claim that she is an admin grants nothing.
	buyer, code := hold(env, token, show, "A1")
	require.Zero(t, code)
	require.Equal(t, "idp:test:rumana-42", buyer)
	ledger := ledgerv1connect.NewLedgerServiceClient(env.HTTP, env.URL, bearer(token))
	_, err = ledger.GetTrialBalance(context.Background(), connect.NewRequest(&ledgerv1.GetTrialBalanceRequest{}))
	require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err), "an admin's call with a provider's token: %v", err)

	// The callback is used once: the same answer again is a bad state.
	_, frag = b.landing(t, b.hops[1].String())
	require.Equal(t, signin.ReasonBadState, frag.Get("auth_error"))
}

func TestProviderTokensThatAreRefused(t *testing.T) {
	p := startProvider(t, newKey(t), "", nil)
	env := platform(t, p)
	show := seatedShow(t, env)
	// A token the provider really issued is the control.
	good := signIn(t, env, "/")
	_, code := hold(env, good, show, "A1")
	require.Zero(t, code)

	now := time.Now()
	claims := func(edit func(*jwt.RegisteredClaims)) *jwt.RegisteredClaims {
		c := &jwt.RegisteredClaims{Issuer: p.Issuer(), Subject: "mallory", Audience: jwt.ClaimStrings{p.ClientID},
			IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour))}
		edit(c)
		return c
	}
	signed := func(c jwt.Claims) string {
		tok, err := p.Keypair.SignJWT(c)
		require.NoError(t, err)
		return tok
	}
	kid, err := p.Keypair.KeyID()
	require.NoError(t, err)
	hs256 := jwt.NewWithClaims(jwt.SigningMethodHS256, claims(func(*jwt.RegisteredClaims) {}))
	hs256.Header["kid"] = kid
	// The classic confusion: an HMAC keyed with what a client knows.
	forgedHS256, err := hs256.SignedString([]byte(p.ClientSecret))
	require.NoError(t, err)
	none, err := jwt.NewWithClaims(jwt.SigningMethodNone, claims(func(*jwt.RegisteredClaims) {})).
		SignedString(jwt.UnsafeAllowNoneSignatureType)
	require.NoError(t, err)
	stranger, err := mockoidc.NewKeypair(newKey(t))
	require.NoError(t, err)
	stranger.Kid = "not-the-providers"
	unknownKid, err := stranger.SignJWT(claims(func(*jwt.RegisteredClaims) {}))
	require.NoError(t, err)

	for _, tt := range []struct{ name, token string }{
		{"expired", signed(claims(func(c *jwt.RegisteredClaims) {
			c.IssuedAt, c.ExpiresAt = jwt.NewNumericDate(now.Add(-2*time.Hour)), jwt.NewNumericDate(now.Add(-time.Hour))
		}))},
		{"no expiry", signed(claims(func(c *jwt.RegisteredClaims) { c.ExpiresAt = nil }))},
		{"wrong audience", signed(claims(func(c *jwt.RegisteredClaims) { c.Audience = jwt.ClaimStrings{"another-app"} }))},
		{"wrong issuer", signed(claims(func(c *jwt.RegisteredClaims) { c.Issuer = "https://idp.elsewhere.example" }))},
		{"no subject", signed(claims(func(c *jwt.RegisteredClaims) { c.Subject = "" }))},
		{"HS256 claiming the provider", forgedHS256},
		{"alg none", none},
		{"unknown kid", unknownKid},
		{"tampered", good[:len(good)-4] + "AAAA"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, code := hold(env, tt.token, show, "A2")
			require.Equal(t, connect.CodeUnauthenticated, code)
		})
	}
}

func TestKeyRotationAtTheProviderIsPickedUp(t *testing.T) {
	p := startProvider(t, newKey(t), "", nil)
	env := platform(t, p)
	show := seatedShow(t, env)
	before := signIn(t, env, "/")
	_, code := hold(env, before, show, "A1")
	require.Zero(t, code)

	// The provider restarts with a new signing key (its JWKS lists only
	// the new one); the API has the old one cached.
	addr, client := p.Server.Addr, p.Config()
	require.NoError(t, p.Shutdown())
	rotated := startProvider(t, newKey(t), addr, client)
	require.Equal(t, p.Issuer(), rotated.Issuer())

	// A token with the new key id makes the API fetch the JWKS again.
	after := signIn(t, env, "/")
	buyer, code := hold(env, after, show, "A2")
	require.Zero(t, code)
	require.Equal(t, "idp:test:"+mockoidc.DefaultUser().Subject, buyer)
	// The old key is gone from the provider's JWKS, so from our cache too.
	_, code = hold(env, before, show, "A3")
	require.Equal(t, connect.CodeUnauthenticated, code)
}

func TestSignInErrorsLandOnTheSite(t *testing.T) {
	p := startProvider(t, newKey(t), "", nil)
	env := platform(t, p)

	// A sign-in the buyer declines: the provider sends her back with
	// error=access_denied and the state.
	b := newBrowser(t)
	b.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := b.Get(loginURL(env, "/tickets", siteState()))
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	authz, err := url.Parse(resp.Header.Get("Location"))
	require.NoError(t, err)
	state := authz.Query().Get("state")
	path, frag := newBrowserWith(b).landing(t, env.URL+signin.CallbackPath+"?error=access_denied&state="+url.QueryEscape(state))
	require.Equal(t, "/tickets?", path)
	require.Equal(t, url.Values{"auth_error": {signin.ReasonAccessDenied}}, frag)

	for _, tt := range []struct{ name, query string }{
		{"no state", "code=abc"},
		{"a state this browser never started", "code=abc&state=" + rand.Text() + rand.Text()},
		{"a short state", "code=abc&state=x"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path, frag := newBrowser(t).landing(t, env.URL+signin.CallbackPath+"?"+tt.query)
			require.Equal(t, "/?", path, "without its state the sign-in does not know the page: the home page")
			require.Equal(t, signin.ReasonBadState, frag.Get("auth_error"))
			require.Empty(t, frag.Get("token"))
		})
	}
}

// newBrowserWith is b's cookies with redirects followed again.
func newBrowserWith(b *browser) *browser {
	nb := &browser{}
	nb.Client = &http.Client{Jar: b.Jar, CheckRedirect: func(req *http.Request, _ []*http.Request) error {
		nb.hops = append(nb.hops, req.URL)
		if req.URL.Fragment != "" {
			return http.ErrUseLastResponse
		}
		return nil
	}}
	return nb
}

func TestLoginRefusesOpenRedirects(t *testing.T) {
	p := startProvider(t, newKey(t), "", nil)
	env := platform(t, p)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tt := range []struct {
		returnTo string
		ok       bool
	}{
		{"", true},
		{"/", true},
		{"/shows/7?seat=A1&lang=bn", true},
		{"https://evil.example/", false},
		{"//evil.example/path", false},
		{`/\evil.example`, false},
		{"evil.example", false},
		{"/ok#token=mine", false},
		{"/\tfoo", false},
		{"javascript:alert(1)", false},
	} {
		t.Run(tt.returnTo, func(t *testing.T) {
			resp, err := noFollow.Get(loginURL(env, tt.returnTo, siteState()))
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())
			if !tt.ok {
				require.Equal(t, http.StatusBadRequest, resp.StatusCode)
				require.Empty(t, resp.Header.Get("Location"))
				return
			}
			require.Equal(t, http.StatusFound, resp.StatusCode)
			require.Contains(t, resp.Header.Get("Location"), p.AuthorizationEndpoint())
		})
	}
}

func TestAProviderDownAtStartIsDiscoveredLater(t *testing.T) {
	// Where the provider will be: a free port, nothing listening yet.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	client := &mockoidc.Config{ClientID: "seatghor-site", ClientSecret: "site-secret"}
	env := apptest.New(t, apptest.Options{Shards: 1, OIDC: idp.Config{
		Name: "test", Issuer: "http://" + addr + mockoidc.IssuerBase, ClientID: client.ClientID, ClientSecret: client.ClientSecret,
		RetryAfter: time.Nanosecond, KeysRefreshAfter: time.Nanosecond,
	}})

	// The platform runs: ready, the provider reported degraded.
	resp, err := env.HTTP.Get(env.URL + "/readyz")
	require.NoError(t, err)
	var ready map[string]string
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&ready))
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusOK, resp.StatusCode, "%+v", ready)
	require.Equal(t, "degraded", ready["oidc"], "%+v", ready)
	// A sign-in meanwhile says the provider is unavailable, and so does the
	// API to a token of the provider's: it is not judged, so not refused.
	_, frag := newBrowser(t).landing(t, loginURL(env, "/tickets", siteState()))
	require.Equal(t, signin.ReasonUnavailable, frag.Get("auth_error"))
	show := seatedShow(t, env)
	early, err := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.RegisteredClaims{
		Issuer: "http://" + addr + mockoidc.IssuerBase, Subject: "early", Audience: jwt.ClaimStrings{client.ClientID},
		ExpiresAt: jwt.NewNumericDate(time.Now().Add(time.Hour)),
	}).SignedString(newKey(t))
	require.NoError(t, err)
	_, code := hold(env, early, show, "A2")
	require.Equal(t, connect.CodeUnavailable, code)

	// The provider comes up: the next sign-in discovers it and works.
	startProvider(t, newKey(t), addr, client)
	buyer, code := hold(env, signIn(t, env, "/"), show, "A1")
	require.Zero(t, code)
	require.Equal(t, "idp:test:"+mockoidc.DefaultUser().Subject, buyer)
}

// TestLoginNeedsTheSitesOneTimeValue (decision 0288): a sign-in carries
// the site's one-time value, and the callback gives back only the value
// this browser's own sign-in sealed in its cookie: neither the callback's
// query nor another browser's callback can make it answer another value.
func TestLoginNeedsTheSitesOneTimeValue(t *testing.T) {
	p := startProvider(t, newKey(t), "", nil)
	env := platform(t, p)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tt := range []struct{ name, value string }{
		{"none", ""},
		{"too short", "c2hvcnQ"},
		{"too long", strings.Repeat("a", 129)},
		{"not base64url", "abcdefghijklmnopqrstuv+/"},
		{"a fragment", "abcdefghijklmnopqrstuv#token=x"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := noFollow.Get(loginURL(env, "/tickets", tt.value))
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())
			require.Equal(t, http.StatusBadRequest, resp.StatusCode)
			require.Empty(t, resp.Header.Get("Location"))
		})
	}

	// callbackOf runs a sign-in with value in b up to the provider's
	// redirect to the callback, and returns that redirect.
	callbackOf := func(b *browser, value string) *url.URL {
		t.Helper()
		b.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
			if req.URL.Path == signin.CallbackPath {
				return http.ErrUseLastResponse
			}
			return nil
		}
		resp, err := b.Get(loginURL(env, "/tickets", value))
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		cb, err := url.Parse(resp.Header.Get("Location"))
		require.NoError(t, err)
		require.Equal(t, signin.CallbackPath, cb.Path)
		return cb
	}

	// A site_state added to the callback's query is not what comes back.
	mine, theirs := siteState(), siteState()
	b := newBrowser(t)
	cb := callbackOf(b, mine)
	q := cb.Query()
	q.Set("site_state", theirs)
	cb.RawQuery = q.Encode()
	_, frag := newBrowserWith(b).landing(t, cb.String())
	require.NotEmpty(t, frag.Get("token"))
	require.Equal(t, mine, frag.Get("site_state"))

	// Mallory's callback (her code and state, her value) opened in
	// another browser: no token and no value, the state cookie is hers.
	cb = callbackOf(newBrowser(t), theirs)
	_, frag = newBrowser(t).landing(t, cb.String())
	require.Equal(t, signin.ReasonBadState, frag.Get("auth_error"))
	require.Empty(t, frag.Get("token"))
	require.Empty(t, frag.Get("site_state"))
}
