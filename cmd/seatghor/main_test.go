package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/api"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/auth/idp"
	"github.com/seatghor/seatghor/server/keyset"
	"github.com/seatghor/seatghor/server/objstore"
	"github.com/seatghor/seatghor/server/partner"
)

func TestLoadConfig(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		check   func(t *testing.T, c config)
		wantErr string
	}{
		{"defaults", nil, func(t *testing.T, c config) {
			require.Equal(t, "127.0.0.1:8080", c.Addr)
			require.Equal(t, "127.0.0.1:9090", c.AdminAddr)
			require.Equal(t, 5*time.Second, c.DrainDelay)
			require.Equal(t, 4, c.Shards)
			require.Equal(t, 5*time.Second, c.SweepInterval)
			require.True(t, c.Roles["api"] && c.Roles["workers"] && c.Roles["projectors"] && c.Roles["webhooks"])
			require.False(t, c.Webhooks.AllowLoopback)
			require.Equal(t, "text", c.LogFormat)
		}, ""},
		{"databases", map[string]string{
			"SEATGHOR_CATALOG_URL": "postgres://c", "SEATGHOR_SHARD_URLS": "postgres://a, postgres://b",
			"SEATGHOR_ROLES": "workers", "SEATGHOR_ADDR": ":9000",
		}, func(t *testing.T, c config) {
			require.Equal(t, []string{"postgres://a", "postgres://b"}, c.ShardURLs)
			require.Equal(t, map[string]bool{"workers": true}, c.Roles)
			require.Equal(t, ":9000", c.Addr)
		}, ""},
		{"catalog without shards", map[string]string{"SEATGHOR_CATALOG_URL": "postgres://c"}, nil, "set both"},
		{"bad shards", map[string]string{"SEATGHOR_SHARDS": "0"}, nil, "SEATGHOR_SHARDS"},
		{"bad interval", map[string]string{"SEATGHOR_SWEEP_INTERVAL": "soon"}, nil, "SEATGHOR_SWEEP_INTERVAL"},
		{"projectors role", map[string]string{"SEATGHOR_ROLES": "api, projectors"}, func(t *testing.T, c config) {
			require.Equal(t, map[string]bool{"api": true, "projectors": true}, c.Roles)
		}, ""},
		{"bad role", map[string]string{"SEATGHOR_ROLES": "api,search"}, nil, "SEATGHOR_ROLES"},
		{"webhooks", map[string]string{"SEATGHOR_ROLES": "webhooks", "SEATGHOR_WEBHOOK_TIMEOUT": "2s",
			"SEATGHOR_WEBHOOK_RETRY_BASE": "100ms", "SEATGHOR_WEBHOOK_ALLOW_LOOPBACK": "1", "SEATGHOR_WEBHOOK_CONCURRENCY": "4",
			"SEATGHOR_WEBHOOK_PER_PARTNER": "3", "SEATGHOR_WEBHOOK_MAX_ENDPOINTS": "8"},
			func(t *testing.T, c config) {
				require.Equal(t, 8, c.Webhooks.MaxEndpoints)
				require.Equal(t, map[string]bool{"webhooks": true}, c.Roles)
				require.Equal(t, 2*time.Second, c.Webhooks.Timeout)
				require.Equal(t, 100*time.Millisecond, c.Webhooks.RetryBase)
				require.Equal(t, 4, c.Webhooks.Concurrency)
				require.Equal(t, 3, c.Webhooks.PerPartner)
				require.True(t, c.Webhooks.AllowLoopback)
			}, ""},
		{"bad webhook timeout", map[string]string{"SEATGHOR_WEBHOOK_TIMEOUT": "-1s"}, nil, "SEATGHOR_WEBHOOK_TIMEOUT"},
		{"bad webhook share", map[string]string{"SEATGHOR_WEBHOOK_PER_PARTNER": "0"}, nil, "SEATGHOR_WEBHOOK_PER_PARTNER"},
		{"bad webhook endpoint cap", map[string]string{"SEATGHOR_WEBHOOK_MAX_ENDPOINTS": "0"}, nil, "SEATGHOR_WEBHOOK_MAX_ENDPOINTS"},
		{"bad webhook loopback", map[string]string{"SEATGHOR_WEBHOOK_ALLOW_LOOPBACK": "yes"}, nil, "SEATGHOR_WEBHOOK_ALLOW_LOOPBACK"},
		{"bad level", map[string]string{"SEATGHOR_LOG_LEVEL": "loud"}, nil, "SEATGHOR_LOG_LEVEL"},
		{"log format", map[string]string{"SEATGHOR_LOG_FORMAT": "json"}, func(t *testing.T, c config) {
			require.Equal(t, "json", c.LogFormat)
		}, ""},
		{"bad log format", map[string]string{"SEATGHOR_LOG_FORMAT": "xml"}, nil, "SEATGHOR_LOG_FORMAT"},
		{"admin listener", map[string]string{"SEATGHOR_ADMIN_ADDR": "10.0.0.5:9100", "SEATGHOR_DRAIN_DELAY": "0s"},
			func(t *testing.T, c config) {
				require.Equal(t, "10.0.0.5:9100", c.AdminAddr)
				require.Zero(t, c.DrainDelay)
			}, ""},
		{"admin on the public port", map[string]string{"SEATGHOR_ADDR": ":8080", "SEATGHOR_ADMIN_ADDR": ":8080"}, nil, "SEATGHOR_ADMIN_ADDR"},
		{"bad drain delay", map[string]string{"SEATGHOR_DRAIN_DELAY": "-1s"}, nil, "SEATGHOR_DRAIN_DELAY"},
		{"API key mode", map[string]string{"SEATGHOR_API_KEY_MODE": "test"}, func(t *testing.T, c config) {
			require.Equal(t, partner.ModeTest, c.APIKeyMode)
		}, ""},
		{"bad API key mode", map[string]string{"SEATGHOR_API_KEY_MODE": "sandbox"}, nil, "SEATGHOR_API_KEY_MODE"},
		{"cancellation fee policy", map[string]string{"SEATGHOR_MAX_CANCELLATION_FEE_BPS": "0"}, func(t *testing.T, c config) {
			require.Equal(t, new(0), c.CatalogPolicy.MaxCancellationFeeBps, "0 is a policy: managers set no fee")
		}, ""},
		{"bad cancellation fee policy", map[string]string{"SEATGHOR_MAX_CANCELLATION_FEE_BPS": "10001"}, nil,
			"SEATGHOR_MAX_CANCELLATION_FEE_BPS"},
		{"tickets", map[string]string{
			"SEATGHOR_READ_URL": "postgres://r", "SEATGHOR_S3_ENDPOINT": "http://minio:9000",
			"SEATGHOR_S3_ACCESS_KEY": "ak", "SEATGHOR_S3_SECRET_KEY": "sk",
		}, func(t *testing.T, c config) {
			require.Equal(t, "postgres://r", c.ReadURL)
			require.Equal(t, objstore.Config{Endpoint: "http://minio:9000", AccessKey: "ak", SecretKey: "sk",
				Bucket: "seatghor-tickets"}, c.S3)
		}, ""},
		{"identity provider", map[string]string{
			"SEATGHOR_OIDC_ISSUER": "https://idp.example/realms/seatghor", "SEATGHOR_OIDC_CLIENT_ID": "site",
			"SEATGHOR_OIDC_REDIRECT_URL": "https://tickets.example/auth/callback",
		}, func(t *testing.T, c config) {
			require.True(t, c.OIDC.Enabled())
			require.Equal(t, idp.Config{Issuer: "https://idp.example/realms/seatghor", ClientID: "site",
				RedirectURL: "https://tickets.example/auth/callback"}, c.OIDC, "audience and name default in idp.New")
		}, ""},
		{"no identity provider", nil, func(t *testing.T, c config) { require.False(t, c.OIDC.Enabled()) }, ""},
		{"identity provider without a client", map[string]string{"SEATGHOR_OIDC_ISSUER": "https://idp.example"}, nil,
			"SEATGHOR_OIDC_CLIENT_ID"},
		{"identity provider not a URL", map[string]string{"SEATGHOR_OIDC_ISSUER": "idp.example", "SEATGHOR_OIDC_CLIENT_ID": "site"},
			nil, "SEATGHOR_OIDC_ISSUER"},
		{"identity provider's bad name", map[string]string{"SEATGHOR_OIDC_ISSUER": "https://idp.example",
			"SEATGHOR_OIDC_CLIENT_ID": "site", "SEATGHOR_OIDC_NAME": "a:b"}, nil, "SEATGHOR_OIDC_NAME"},
		{"client without an issuer", map[string]string{"SEATGHOR_OIDC_CLIENT_ID": "site"}, nil, "SEATGHOR_OIDC_ISSUER"},
		{"cors origins", map[string]string{"SEATGHOR_CORS_ORIGINS": "https://Shop.example, http://localhost:5173"},
			func(t *testing.T, c config) {
				require.Equal(t, []string{"https://shop.example", "http://localhost:5173"}, c.CORSOrigins)
			}, ""},
		{"cors origin with a path", map[string]string{"SEATGHOR_CORS_ORIGINS": "https://shop.example/app"}, nil,
			"SEATGHOR_CORS_ORIGINS"},
		{"cors wildcard", map[string]string{"SEATGHOR_CORS_ORIGINS": "*"}, nil, "SEATGHOR_CORS_ORIGINS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := loadConfig(func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			tt.check(t, c)
		})
	}
}

// TestJSONLogLinesParseAndCarryTheRequestID: SEATGHOR_LOG_FORMAT=json
// writes one JSON object a line, and a line logged with a request's
// context carries its request_id; text stays key=value.
func TestJSONLogLinesParseAndCarryTheRequestID(t *testing.T) {
	var out bytes.Buffer
	env := map[string]string{"SEATGHOR_LOG_FORMAT": "json"}
	c, err := loadConfig(func(k string) string { return env[k] })
	require.NoError(t, err)
	log := newLogger(c, &out)
	log.Info("plain", "n", 1)
	log.With("k", "v").InfoContext(api.ContextWithRequestID(context.Background(), "rid-1"), "in a request", "n", 2)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 2)
	var recs []map[string]any
	for _, l := range lines {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &rec), "line %q", l)
		recs = append(recs, rec)
	}
	require.NotContains(t, recs[0], "request_id")
	require.Equal(t, "in a request", recs[1]["msg"])
	require.Equal(t, "rid-1", recs[1]["request_id"])
	require.Equal(t, "v", recs[1]["k"])

	out.Reset()
	c.LogFormat = "text"
	newLogger(c, &out).InfoContext(api.ContextWithRequestID(context.Background(), "rid-2"), "in a request")
	require.Contains(t, out.String(), "request_id=rid-2")
	require.Error(t, json.Unmarshal(out.Bytes(), new(map[string]any)))
}

// TestToken: `SEATGHOR_AUTH_SECRET=s seatghor token --sub rumana` prints
// only the token, signed with s.
func TestToken(t *testing.T) {
	t.Setenv("SEATGHOR_AUTH_SECRET", "s")
	for _, tc := range []struct {
		args []string
		role auth.Role
	}{
		{[]string{"token", "--sub", "rumana"}, auth.RoleUser},
		{[]string{"token", "--sub", "boss", "--role", "admin"}, auth.RoleAdmin},
	} {
		var out, errOut bytes.Buffer
		require.NoError(t, run(context.Background(), tc.args, &out, &errOut))
		require.Empty(t, errOut.String())
		require.Equal(t, 1, strings.Count(out.String(), "\n"), "one line: %q", out.String())
		tokens, err := auth.NewTokens(keyset.FromSecret("s", keyset.Tokens), time.Now)
		require.NoError(t, err)
		p, err := tokens.Verify(strings.TrimSpace(out.String()))
		require.NoError(t, err)
		require.Equal(t, tc.role, p.Role)
		require.Equal(t, tc.args[2], p.UserID)
	}
	var out bytes.Buffer
	require.ErrorIs(t, run(context.Background(), []string{"token"}, &out, &out), errUsage)
	require.ErrorIs(t, run(context.Background(), []string{"token", "--sub", "x", "--role", "king"}, &out, &out), errUsage)
}

// TestPartnerToken: a partner token names its partner (decision 0326):
// `--role partner` without `--partner` (or with a bad one) is a usage error
// and prints no token; `--partner` with another role too; with it, the
// token verifies to the partner.
func TestPartnerToken(t *testing.T) {
	t.Setenv("SEATGHOR_AUTH_SECRET", "s")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"token", "--sub", "shop", "--role", "partner"}, "--role partner needs --partner"},
		{[]string{"token", "--sub", "shop", "--role", "partner", "--partner", "0"}, "--role partner needs --partner"},
		{[]string{"token", "--sub", "shop", "--role", "partner", "--partner", "-3"}, "--role partner needs --partner"},
		{[]string{"token", "--sub", "rumana", "--partner", "7"}, "--partner goes only with --role partner"},
		{[]string{"token", "--sub", "boss", "--role", "admin", "--partner", "7"}, "--partner goes only with --role partner"},
	} {
		t.Run(strings.Join(tc.args[1:], " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := run(context.Background(), tc.args, &out, &errOut)
			require.ErrorIs(t, err, errUsage)
			require.ErrorContains(t, err, tc.want)
			require.Empty(t, out.String(), "no token printed")
		})
	}
	var out, errOut bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"token", "--sub", "shop", "--role", "partner", "--partner", "7"}, &out, &errOut))
	tokens, err := auth.NewTokens(keyset.FromSecret("s", keyset.Tokens), time.Now)
	require.NoError(t, err)
	p, err := tokens.Verify(strings.TrimSpace(out.String()))
	require.NoError(t, err)
	require.Equal(t, auth.Principal{UserID: "shop", Role: auth.RolePartner, PartnerID: 7}, p)
}
