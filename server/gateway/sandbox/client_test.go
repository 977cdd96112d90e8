package sandbox_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/gateway"
	"github.com/seatghor/seatghor/server/gateway/sandbox"
)

func TestClientErrorClasses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		status int
		body   string
		want   error
	}{
		{"bad gateway", http.StatusBadGateway, "upstream down", gateway.ErrOutcomeUnknown},
		{"internal", http.StatusInternalServerError, `{"error":{"code":"boom","message":"x"}}`, gateway.ErrOutcomeUnknown},
		{"too many requests", http.StatusTooManyRequests, "", gateway.ErrOutcomeUnknown},
		{"not found", http.StatusNotFound, "", gateway.ErrNotFound},
		{"bad request", http.StatusBadRequest, `{"error":{"code":"invalid_request","message":"x"}}`, gateway.ErrRejected},
		{"forbidden", http.StatusForbidden, "", gateway.ErrRejected},
		// A 2xx we cannot read may still have charged.
		{"garbled success", http.StatusOK, `{"id":`, gateway.ErrOutcomeUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			}))
			t.Cleanup(hs.Close)
			c, err := sandbox.NewClient(sandbox.ClientConfig{BaseURL: hs.URL})
			require.NoError(t, err)
			_, err = c.Charge(ctx(t), chargeReq("k", "p", 100, sandbox.TokenSuccess))
			require.ErrorIs(t, err, tt.want)
			for _, other := range []error{gateway.ErrOutcomeUnknown, gateway.ErrNotFound, gateway.ErrRejected} {
				if other != tt.want {
					require.NotErrorIs(t, err, other)
				}
			}
		})
	}
}

func TestClientTransportErrorIsUnknown(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nobody listens there now

	c, err := sandbox.NewClient(sandbox.ClientConfig{BaseURL: "http://" + addr})
	require.NoError(t, err)
	_, err = c.Charge(ctx(t), chargeReq("k", "p", 100, sandbox.TokenSuccess))
	require.ErrorIs(t, err, gateway.ErrOutcomeUnknown)
	_, err = c.GetCharge(ctx(t), "k")
	require.ErrorIs(t, err, gateway.ErrOutcomeUnknown)
}

func TestClientAPIKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{noWebhooks: true, cfg: sandbox.Config{APIKey: "sk_test"}, client: sandbox.ClientConfig{APIKey: "sk_wrong"}})
	_, err := e.client.Charge(ctx(t), chargeReq("k", "p", 100, sandbox.TokenSuccess))
	require.ErrorIs(t, err, gateway.ErrRejected)
	var apiErr *sandbox.APIError
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, http.StatusUnauthorized, apiErr.StatusCode)
	require.Empty(t, e.gw.Charges())

	good, err := sandbox.NewClient(sandbox.ClientConfig{BaseURL: e.url, APIKey: "sk_test"})
	require.NoError(t, err)
	_, err = good.Charge(ctx(t), chargeReq("k", "p", 100, sandbox.TokenSuccess))
	require.NoError(t, err)
}

func TestClientReusesConnections(t *testing.T) {
	t.Parallel()
	gw := sandbox.New(sandbox.Config{})
	t.Cleanup(gw.Close)
	var conns atomic.Int32
	hs := httptest.NewUnstartedServer(gw)
	hs.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	hs.Start()
	t.Cleanup(hs.Close)
	c, err := sandbox.NewClient(sandbox.ClientConfig{BaseURL: hs.URL})
	require.NoError(t, err)

	for range 20 {
		_, err := c.Charge(ctx(t), chargeReq("k", "p", 100, sandbox.TokenSuccess))
		require.NoError(t, err)
		_, err = c.GetCharge(ctx(t), "missing") // error answers are drained too
		require.ErrorIs(t, err, gateway.ErrNotFound)
	}
	require.Equal(t, int32(1), conns.Load(), "one keep-alive connection for sequential calls")
}

func TestNewClientValidates(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"", "localhost:8080", "ftp://x", "http://"} {
		_, err := sandbox.NewClient(sandbox.ClientConfig{BaseURL: u})
		require.Error(t, err, u)
	}
}
