package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"testing"

	"github.com/oauth2-proxy/mockoidc"
	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/internal/testkit/pgtest"
	"github.com/seatghor/seatghor/server/gateway/sandbox"
)

// TestServeSignsInThroughTheProvider runs the real binary's `serve` with
// SEATGHOR_OIDC_* pointing at a real OIDC provider (mockoidc, in this
// process) and SEATGHOR_CORS_ORIGINS: a browser's sign-in ends on the
// site with a token in the fragment, the API takes that token, and a
// listed origin's preflight is answered.
func TestServeSignsInThroughTheProvider(t *testing.T) {
	prov, err := mockoidc.Run()
	require.NoError(t, err)
	t.Cleanup(func() { _ = prov.Shutdown() })
	_, err = prov.Keypair.KeyID() // computed now, not lazily by concurrent handlers
	require.NoError(t, err)
	prov.QueueUser(&mockoidc.MockUser{Subject: "nusrat-7"})

	admin := pgtest.Server(t)
	catalogURL, shardURL := admin.Fresh(t, "template0"), admin.Fresh(t, "template0")
	const whsec = "whsec_signin"
	gw := sandbox.New(sandbox.Config{WebhookSecrets: []string{whsec}})
	gwSrv := httptest.NewServer(gw)
	t.Cleanup(gwSrv.Close)
	t.Cleanup(gw.Close)
	addr := freeAddr(t)
	base := "http://" + addr
	var out bytes.Buffer
	t.Setenv("SEATGHOR_CATALOG_URL", catalogURL)
	t.Setenv("SEATGHOR_SHARD_URLS", shardURL)
	require.NoError(t, run(context.Background(), []string{"migrate"}, &out, &out), out.String())

	env := append(os.Environ(), runMainEnv+"=1",
		"SEATGHOR_AUTH_SECRET=signin-test-secret-of-at-least-32-bytes", "SEATGHOR_ADDR="+addr,
		"SEATGHOR_ADMIN_ADDR="+freeAddr(t), "SEATGHOR_GATEWAY_URL="+gwSrv.URL, "SEATGHOR_WEBHOOK_SECRETS="+whsec,
		"SEATGHOR_ROLES=api", "SEATGHOR_DB_MAX_CONNS=4", "SEATGHOR_LOG_LEVEL=warn",
		"SEATGHOR_OIDC_ISSUER="+prov.Issuer(), "SEATGHOR_OIDC_CLIENT_ID="+prov.ClientID,
		"SEATGHOR_OIDC_CLIENT_SECRET="+prov.ClientSecret, "SEATGHOR_OIDC_NAME=mock",
		"SEATGHOR_OIDC_REDIRECT_URL="+base+"/auth/callback", "SEATGHOR_CORS_ORIGINS=https://shop.example")
	logs := &lockedBuffer{}
	startServe(t, env, addr, logs)

	// The browser: a cookie jar, following redirects until the site's page.
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	browser := &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, _ []*http.Request) error {
		if req.URL.Fragment != "" {
			return http.ErrUseLastResponse
		}
		return nil
	}}
	const siteState = "a-one-time-value-of-the-site" // the site's, kept in the tab (decision 0288)
	resp, err := browser.Get(base + "/auth/login?return_to=%2Ftickets&site_state=" + siteState)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusFound, resp.StatusCode, logs.String())
	loc, err := url.Parse(resp.Header.Get("Location"))
	require.NoError(t, err)
	require.Equal(t, "/tickets", loc.Path)
	frag, err := url.ParseQuery(loc.Fragment)
	require.NoError(t, err)
	require.NotEmpty(t, frag.Get("token"), "fragment %q", loc.Fragment)
	require.NotEmpty(t, frag.Get("expires_at"))
	require.Equal(t, siteState, frag.Get("site_state"))

	// The API takes the token (the orders of idp:mock:nusrat-7: none yet);
	// a forged one is refused.
	get := func(token string) int {
		req, err := http.NewRequest(http.MethodGet, base+"/v1/orders", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		return resp.StatusCode
	}
	require.Equal(t, http.StatusOK, get(frag.Get("token")), logs.String())
	require.Equal(t, http.StatusUnauthorized, get(frag.Get("token")+"x"))

	// CORS: the listed origin's preflight is answered, another's is not.
	preflight := func(origin string) string {
		req, err := http.NewRequest(http.MethodOptions, base+"/v1/orders", nil)
		require.NoError(t, err)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "GET")
		req.Header.Set("Access-Control-Request-Headers", "authorization")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		return resp.Header.Get("Access-Control-Allow-Origin")
	}
	require.Equal(t, "https://shop.example", preflight("https://shop.example"))
	require.Empty(t, preflight("https://evil.example"))
}
