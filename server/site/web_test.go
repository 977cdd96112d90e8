package site_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/keyset"
	"github.com/seatghor/seatghor/server/site"
)

// apiStandIn answers for the API the site wraps: what the site does not
// serve must reach it untouched.
var apiStandIn = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/v1/") || strings.HasPrefix(r.URL.Path, "/seatghor.") || r.URL.Path == "/livez" {
		w.Header().Set("X-Api", "yes")
		w.WriteHeader(http.StatusTeapot)
		return
	}
	http.NotFound(w, r)
})

func newSite(t *testing.T, opts site.Options) http.Handler {
	t.Helper()
	h, err := site.Wrap(apiStandIn, opts)
	require.NoError(t, err)
	return h
}

func get(h http.Handler, method, path string, header map[string]string, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	for k, v := range header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestWrapRoutes(t *testing.T) {
	h := newSite(t, site.Options{})
	tests := []struct {
		method, path string
		code         int
		page, api    bool
	}{
		{"GET", "/", 200, true, false},
		{"GET", "/search?from=Dhaka", 200, true, false},
		{"GET", "/show/7", 200, true, false},
		{"GET", "/wait/7", 200, true, false},
		{"GET", "/order/ord_x", 200, true, false},
		{"GET", "/t/MWTY306PTD", 200, true, false},
		{"GET", "/tickets", 200, true, false},
		{"GET", "/signin", 200, true, false},
		{"GET", "/gate", 200, true, false},
		{"GET", "/v1/shows/7/seatmap", 418, false, true},
		{"POST", "/seatghor.booking.v1.HoldService/CreateHold", 418, false, true},
		{"GET", "/livez", 418, false, true},
		{"GET", "/assets/nope.js", 404, false, false},
		// The dev sign-in exists only when asked for (seatghor dev).
		{"POST", "/auth/dev-token", 404, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			w := get(h, tt.method, tt.path, nil, "")
			require.Equal(t, tt.code, w.Code)
			require.Equal(t, tt.page, strings.Contains(w.Body.String(), `<div id="app">`))
			require.Equal(t, tt.api, w.Header().Get("X-Api") == "yes")
		})
	}
}

func TestAssetsGzipAndRevalidate(t *testing.T) {
	h := newSite(t, site.Options{})
	plain := get(h, "GET", "/assets/app.js", nil, "")
	require.Equal(t, 200, plain.Code)
	require.Equal(t, "text/javascript; charset=utf-8", plain.Header().Get("Content-Type"))
	require.Equal(t, "no-cache", plain.Header().Get("Cache-Control"))
	etag := plain.Header().Get("ETag")
	require.NotEmpty(t, etag)

	zipped := get(h, "GET", "/assets/app.js", map[string]string{"Accept-Encoding": "gzip, br"}, "")
	require.Equal(t, "gzip", zipped.Header().Get("Content-Encoding"))
	zr, err := gzip.NewReader(zipped.Body)
	require.NoError(t, err)
	body, err := io.ReadAll(zr)
	require.NoError(t, err)
	require.Equal(t, plain.Body.Bytes(), body)
	require.Less(t, zipped.Body.Len(), plain.Body.Len()/2)

	again := get(h, "GET", "/assets/app.js", map[string]string{"If-None-Match": etag}, "")
	require.Equal(t, http.StatusNotModified, again.Code)
	require.Zero(t, again.Body.Len())
}

func TestConfigSaysWhichSignIns(t *testing.T) {
	tokens, err := auth.NewTokens(keyset.FromSecret("web-test", keyset.Tokens), time.Now)
	require.NoError(t, err)
	for _, opts := range []site.Options{{}, {OIDCSignIn: true}, {DevSignIn: true, TestPayments: true, Tokens: tokens, PhoneSignIn: true}} {
		w := get(newSite(t, opts), "GET", "/auth/config.json", nil, "")
		require.Equal(t, 200, w.Code)
		var got map[string]bool
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &got))
		require.Equal(t, map[string]bool{"devSignIn": opts.DevSignIn, "oidcSignIn": opts.OIDCSignIn,
			"testPayments": opts.TestPayments, "phoneSignIn": opts.PhoneSignIn}, got)
	}
	_, err = site.Wrap(apiStandIn, site.Options{DevSignIn: true})
	require.ErrorContains(t, err, "Tokens")
}

func TestDevToken(t *testing.T) {
	tokens, err := auth.NewTokens(keyset.FromSecret("web-test", keyset.Tokens), time.Now)
	require.NoError(t, err)
	h := newSite(t, site.Options{DevSignIn: true, Tokens: tokens})
	tests := []struct {
		name, body string
		code       int
		user       string
		role       auth.Role
		errPart    string
	}{
		{"buyer", `{"name": "Rumana", "role": "user"}`, 200, "rumana", auth.RoleUser, ""},
		{"role defaults to user", `{"name": "karim"}`, 200, "karim", auth.RoleUser, ""},
		{"gate staff", `{"name": "demo-gate", "role": "operator"}`, 200, "demo-gate", auth.RoleOperator, ""},
		{"admin", `{"name": "admin", "role": "admin"}`, 200, "admin", auth.RoleAdmin, ""},
		{"partners are not for people", `{"name": "p", "role": "partner"}`, 400, "", "", "role"},
		{"unknown role", `{"name": "p", "role": "root"}`, 400, "", "", "role"},
		{"empty name", `{"name": " ", "role": "user"}`, 400, "", "", "name"},
		{"name with spaces", `{"name": "a b", "role": "user"}`, 400, "", "", "name"},
		{"not JSON", `name=a`, 400, "", "", "JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := get(h, "POST", "/auth/dev-token", map[string]string{"Content-Type": "application/json"}, tt.body)
			require.Equal(t, tt.code, w.Code, w.Body.String())
			var out struct{ Token, UserID, Error string }
			require.NoError(t, json.NewDecoder(bytes.NewReader(w.Body.Bytes())).Decode(&out))
			if tt.code != 200 {
				require.Contains(t, out.Error, tt.errPart)
				return
			}
			require.Equal(t, tt.user, out.UserID)
			p, err := tokens.Verify(out.Token)
			require.NoError(t, err)
			require.Equal(t, auth.Principal{UserID: tt.user, Role: tt.role}, p)
		})
	}
}

// TestWebAppFilesServed (decision 0397): the web app's manifest, its icons
// and the service worker, at the top of the site (the worker's scope is
// the whole site), revalidated like every asset; the worker's precache
// list names the shell and the scripts the page loads.
func TestWebAppFilesServed(t *testing.T) {
	h := newSite(t, site.Options{})
	for _, tt := range []struct{ path, contentType string }{
		{"/manifest.webmanifest", "application/manifest+json"},
		{"/sw.js", "text/javascript; charset=utf-8"},
		{"/icons/icon-192.png", "image/png"},
		{"/icons/icon-512.png", "image/png"},
		{"/icons/icon-maskable-512.png", "image/png"},
		{"/icons/apple-touch-icon.png", "image/png"},
	} {
		w := get(h, "GET", tt.path, nil, "")
		require.Equal(t, 200, w.Code, tt.path)
		require.Equal(t, tt.contentType, w.Header().Get("Content-Type"), tt.path)
		require.Equal(t, "no-cache", w.Header().Get("Cache-Control"), tt.path)
		require.NotEmpty(t, w.Header().Get("ETag"), tt.path)
		require.Equal(t, "nosniff", w.Header().Get("X-Content-Type-Options"), tt.path)
	}
	var m struct {
		Name         string `json:"name"`
		ShortName    string `json:"short_name"`
		StartURL     string `json:"start_url"`
		Icons        []struct{ Src, Sizes, Type, Purpose string }
		Translations map[string]struct {
			Name      string `json:"name"`
			ShortName string `json:"short_name"`
		}
	}
	require.NoError(t, json.Unmarshal(get(h, "GET", "/manifest.webmanifest", nil, "").Body.Bytes(), &m))
	require.Equal(t, "Seatghor", m.ShortName)
	require.Contains(t, m.Name, "সিটঘর")
	require.Equal(t, "সিটঘর", m.Translations["bn"].ShortName)
	require.Equal(t, "/", m.StartURL)
	require.Len(t, m.Icons, 3)
	for _, icon := range m.Icons {
		require.Equal(t, 200, get(h, "GET", icon.Src, nil, "").Code, icon.Src)
	}
	sw := get(h, "GET", "/sw.js", nil, "").Body.String()
	for _, url := range []string{`url:"/"`, `url:"/assets/app.js"`, `url:"/assets/app.css"`} {
		require.Contains(t, sw, url, "precached")
	}
	page := get(h, "GET", "/", nil, "").Body.String()
	require.Contains(t, page, `<link rel="manifest" href="/manifest.webmanifest">`)
	require.Equal(t, 404, get(h, "GET", "/icons/nope.png", nil, "").Code)
}
