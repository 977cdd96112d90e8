package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
)

// TestCORSAllowsOnlyTheListedOrigins: a page of a listed origin may call
// the API from a browser (the preflight of a Connect call with every
// header the TypeScript SDK sends is answered, and the answers carry the
// headers it reads); any other origin, or a server with no origins listed,
// gets no CORS header at all (decision 0167).
func TestCORSAllowsOnlyTheListedOrigins(t *testing.T) {
	const shop, evil = "https://shop.example", "https://evil.example"
	env := apptest.New(t, apptest.Options{Shards: 1, CORSOrigins: []string{shop, "http://localhost:5173"}})
	closed := apptest.New(t, apptest.Options{Shards: 1})
	show := createShow(t, env, seatedShow("CORS night", 1, 4)).GetShowId()
	token := env.Token(t, "rumana", auth.RoleUser)
	// Sorted and lower case, as browsers send them.
	sdkHeaders := "authorization,connect-protocol-version,connect-timeout-ms,content-type,grpc-timeout," +
		"idempotency-key,if-none-match,queue-token,x-grpc-web,x-request-id,x-user-agent"

	do := func(t *testing.T, base, method, path, origin string, h map[string]string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, base+path, nil)
		require.NoError(t, err)
		req.Header.Set("Origin", origin)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := env.HTTP.Do(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		return resp
	}
	preflight := func(t *testing.T, base, origin, headers string) *http.Response {
		return do(t, base, http.MethodOptions, "/seatghor.booking.v1.HoldService/CreateHold", origin, map[string]string{
			"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": headers,
		})
	}
	seatMap := fmt.Sprintf("/v1/shows/%d/seatmap", show)
	auth := map[string]string{"Authorization": "Bearer " + token}
	noCORS := func(t *testing.T, resp *http.Response) {
		t.Helper()
		for k := range resp.Header {
			require.False(t, strings.HasPrefix(k, "Access-Control-"), "no CORS header: %s", k)
		}
	}

	t.Run("allowed origin's preflight", func(t *testing.T) {
		resp := preflight(t, env.URL, shop, sdkHeaders)
		require.Equal(t, http.StatusNoContent, resp.StatusCode)
		require.Equal(t, shop, resp.Header.Get("Access-Control-Allow-Origin"))
		require.Contains(t, resp.Header.Get("Access-Control-Allow-Methods"), "POST")
		allowed := strings.ToLower(resp.Header.Get("Access-Control-Allow-Headers"))
		for _, h := range strings.Split(sdkHeaders, ",") {
			require.Contains(t, allowed, h)
		}
		require.NotEmpty(t, resp.Header.Get("Access-Control-Max-Age"))
		require.Empty(t, resp.Header.Get("Access-Control-Allow-Credentials"), "bearer tokens, never cookies")
	})
	t.Run("allowed origin's request", func(t *testing.T) {
		resp := do(t, env.URL, http.MethodGet, seatMap, shop, auth)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Equal(t, shop, resp.Header.Get("Access-Control-Allow-Origin"))
		require.Contains(t, resp.Header.Values("Vary"), "Origin")
		exposed := strings.ToLower(resp.Header.Get("Access-Control-Expose-Headers"))
		for _, h := range []string{"etag", "retry-after", "x-request-id", "grpc-status", "grpc-message"} {
			require.Contains(t, exposed, h)
		}
		require.NotEmpty(t, resp.Header.Get("ETag"))
	})
	t.Run("the other listed origin", func(t *testing.T) {
		resp := preflight(t, env.URL, "http://localhost:5173", "authorization")
		require.Equal(t, "http://localhost:5173", resp.Header.Get("Access-Control-Allow-Origin"))
	})
	t.Run("disallowed origin's preflight", func(t *testing.T) {
		noCORS(t, preflight(t, env.URL, evil, sdkHeaders))
	})
	t.Run("disallowed origin's request", func(t *testing.T) {
		resp := do(t, env.URL, http.MethodGet, seatMap, evil, auth)
		noCORS(t, resp)
	})
	t.Run("a header the API does not take", func(t *testing.T) {
		noCORS(t, preflight(t, env.URL, shop, "authorization,x-evil"))
	})
	t.Run("no origins listed", func(t *testing.T) {
		noCORS(t, preflight(t, closed.URL, shop, sdkHeaders))
		resp := do(t, closed.URL, http.MethodGet, "/livez", shop, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		noCORS(t, resp)
	})
}
