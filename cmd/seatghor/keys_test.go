package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/keyset"
)

var (
	longA = strings.Repeat("a", 32)
	longB = strings.Repeat("b", 32)
)

// Each purpose's keys come from its variable or from the file its _FILE
// variable names; secrets under 32 bytes are refused.
func TestKeysFromTheEnvironment(t *testing.T) {
	file := filepath.Join(t.TempDir(), "ticket-keys")
	require.NoError(t, os.WriteFile(file, []byte("t2:"+longB+"\nt1:"+longA+"\n"), 0o600))
	c, err := loadConfig(func(k string) string {
		return map[string]string{
			"SEATGHOR_TOKEN_KEYS": "k2:" + longB + ",k1:" + longA, "SEATGHOR_TICKET_KEYS_FILE": file,
			"SEATGHOR_SEAL_KEYS": "s1:" + longA,
		}[k]
	})
	require.NoError(t, err)
	require.Equal(t, []string{"k2", "k1"}, c.TokenKeys.IDs())
	require.Equal(t, []string{"t2", "t1"}, c.TicketKeys.IDs())
	require.Equal(t, []string{"s1"}, c.SealKeys.IDs())
	require.Nil(t, c.QueueKeys, "unset: derived from the shorthand")

	for env, want := range map[string]map[string]string{
		"at least 32": {"SEATGHOR_QUEUE_KEYS": "q1:short"},
		"not both":    {"SEATGHOR_TOKEN_KEYS": "k1:" + longA, "SEATGHOR_TOKEN_KEYS_FILE": file},
		"no-such":     {"SEATGHOR_TOKEN_KEYS_FILE": filepath.Join(t.TempDir(), "no-such")},
	} {
		_, err := loadConfig(func(k string) string { return want[k] })
		require.ErrorContains(t, err, env)
		require.NotContains(t, err.Error(), "aaaa", "a secret is never in an error")
	}
}

// `serve` refuses short keys: a listed key under 32 bytes, a shorthand
// secret under 32 bytes or the dev secret, and a purpose without keys.
func TestServeRefusesWeakKeys(t *testing.T) {
	for name, tc := range map[string]struct {
		env  map[string]string
		want string
	}{
		"short listed key":       {map[string]string{"SEATGHOR_TOKEN_KEYS": "k1:too-short"}, "at least 32"},
		"short shorthand":        {map[string]string{"SEATGHOR_AUTH_SECRET": "s"}, "at least 32"},
		"dev secret":             {map[string]string{"SEATGHOR_AUTH_SECRET": devSecret}, "dev secret"},
		"a purpose without keys": {map[string]string{"SEATGHOR_TOKEN_KEYS": "k1:" + longA, "SEATGHOR_TICKET_KEYS": "t1:" + longA}, "SEATGHOR_QUEUE_KEYS"},
		"no sealing keys": {map[string]string{"SEATGHOR_TOKEN_KEYS": "k1:" + longA, "SEATGHOR_TICKET_KEYS": "t1:" + longA,
			"SEATGHOR_QUEUE_KEYS": "q1:" + longA}, "SEATGHOR_SEAL_KEYS"},
		"short sealing key": {map[string]string{"SEATGHOR_SEAL_KEYS": "s1:short"}, "at least 32"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("SEATGHOR_CATALOG_URL", "postgres://127.0.0.1:1/none")
			t.Setenv("SEATGHOR_SHARD_URLS", "postgres://127.0.0.1:1/none")
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			var out bytes.Buffer
			err := run(context.Background(), []string{"serve"}, &out, &out)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// `seatghor token` signs with the first token key, whose kid is in the
// header; the server's token set (the same environment) verifies it.
func TestTokenSignsWithTheTokenKeys(t *testing.T) {
	t.Setenv("SEATGHOR_TOKEN_KEYS", "k2:"+longB+",k1:"+longA)
	var out, errOut bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"token", "--sub", "rumana"}, &out, &errOut))
	tok := strings.TrimSpace(out.String())
	parsed, _, err := jwt.NewParser().ParseUnverified(tok, jwt.MapClaims{})
	require.NoError(t, err)
	require.Equal(t, "k2", parsed.Header["kid"])
	only, err := keyset.Parse("k2:" + longB)
	require.NoError(t, err)
	tokens, err := auth.NewTokens(only, time.Now)
	require.NoError(t, err)
	p, err := tokens.Verify(tok)
	require.NoError(t, err)
	require.Equal(t, "rumana", p.UserID)
}
