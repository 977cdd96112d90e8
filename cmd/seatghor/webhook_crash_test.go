package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/internal/testkit/pgtest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/keyset"
)

// TestWebhooksSurviveKill9 runs `seatghor serve` with the projectors and
// webhooks roles, kills it with SIGKILL while deliveries are in flight (the
// receiver answers slowly), and starts it again: every booking's webhook
// arrives at least once, verified with the Standard Webhooks library, and
// every delivery ends succeeded (issue 12 §4: nothing is lost across a
// kill -9 of the delivering process).
func TestWebhooksSurviveKill9(t *testing.T) {
	admin := pgtest.Server(t)
	catalogURL := admin.Fresh(t, "template0")
	shardURL := admin.Fresh(t, "template0")
	const secret = "webhook-crash-test-secret-of-32-bytes"
	addr := freeAddr(t)

	var mu sync.Mutex
	delivered := map[string]int{}
	var bad []string
	var whsec string
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		time.Sleep(300 * time.Millisecond) // slow: the kill finds sends in flight
		mu.Lock()
		defer mu.Unlock()
		wh, err := standardwebhooks.NewWebhook(whsec)
		if err == nil {
			err = wh.Verify(body, r.Header)
		}
		if err != nil {
			bad = append(bad, err.Error())
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		delivered[r.Header.Get("webhook-id")]++
	}))
	t.Cleanup(receiver.Close)
	count := func() (int, []string) {
		mu.Lock()
		defer mu.Unlock()
		return len(delivered), append([]string(nil), bad...)
	}

	env := append(os.Environ(), runMainEnv+"=1",
		"SEATGHOR_CATALOG_URL="+catalogURL, "SEATGHOR_SHARD_URLS="+shardURL, "SEATGHOR_AUTH_SECRET="+secret,
		"SEATGHOR_ADDR="+addr, "SEATGHOR_ADMIN_ADDR="+freeAddr(t), "SEATGHOR_GATEWAY_URL=http://127.0.0.1:1",
		"SEATGHOR_WEBHOOK_SECRETS=whsec_unused", "SEATGHOR_ROLES=api,projectors,webhooks",
		"SEATGHOR_WEBHOOK_ALLOW_LOOPBACK=1", "SEATGHOR_WEBHOOK_TIMEOUT=2s", "SEATGHOR_WEBHOOK_RETRY_BASE=100ms",
		"SEATGHOR_DRAIN_DELAY=0s", "SEATGHOR_LOG_LEVEL=warn")
	var out bytes.Buffer
	t.Setenv("SEATGHOR_CATALOG_URL", catalogURL)
	t.Setenv("SEATGHOR_SHARD_URLS", shardURL)
	require.NoError(t, run(context.Background(), []string{"migrate"}, &out, &out), out.String())
	logs := &lockedBuffer{}
	start := func() *exec.Cmd { return startServe(t, env, addr, logs) }
	server := start()

	tokens, err := auth.NewTokens(keyset.FromSecret(secret, keyset.Tokens), time.Now)
	require.NoError(t, err)
	call := func(sub string, role auth.Role, procedure string, body any) map[string]any {
		t.Helper()
		tok, err := tokens.Mint(sub, role, time.Hour)
		require.NoError(t, err)
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/"+procedure, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Idempotency-Key", fmt.Sprintf("k-%d", time.Now().UnixNano()))
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", procedure, raw)
		var m map[string]any
		require.NoError(t, json.Unmarshal(raw, &m))
		return m
	}
	ep := call("ops", auth.RoleAdmin, "seatghor.partner.v1.WebhookService/CreateEndpoint",
		map[string]any{"url": receiver.URL, "eventTypes": []string{"booking.confirmed"}})
	mu.Lock()
	whsec = ep["secret"].(string)
	mu.Unlock()
	show := call("ops", auth.RoleAdmin, "seatghor.catalog.v1.CatalogService/CreateShow", map[string]any{
		"kind": "SHOW_KIND_CONCERT", "title": "Free at the park", "venue": "Ramna",
		"startsAt": time.Now().Add(48 * time.Hour).Format(time.RFC3339), "currency": "BDT",
		"sections": []any{map[string]any{"name": "Lawn", "rows": []string{"A"}, "seatsPerRow": 20, "priceMinor": "0"}},
	})
	showID := show["show"].(map[string]any)["showId"]
	const bookings = 20
	for i := 1; i <= bookings; i++ {
		buyer := fmt.Sprintf("buyer-%d", i)
		hold := call(buyer, auth.RoleUser, "seatghor.booking.v1.HoldService/CreateHold",
			map[string]any{"showId": showID, "seats": []string{fmt.Sprintf("A%d", i)}})
		call(buyer, auth.RoleUser, "seatghor.booking.v1.OrderService/CreateOrder",
			map[string]any{"holdId": hold["hold"].(map[string]any)["holdId"]})
	}

	// Kill it while deliveries are on the wire: some sent, most not.
	require.Eventually(t, func() bool { n, _ := count(); return n >= 2 }, 30*time.Second, 10*time.Millisecond, logs.String())
	require.NoError(t, server.Process.Signal(syscall.SIGKILL))
	_ = server.Wait()
	n, _ := count()
	require.Less(t, n, bookings, "killed before it was done")

	start()
	require.Eventually(t, func() bool { n, _ := count(); return n == bookings }, 60*time.Second, 50*time.Millisecond, logs.String())
	_, failures := count()
	require.Empty(t, failures, "every POST verifies")

	db, err := pgx.Connect(context.Background(), catalogURL)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close(context.Background()) })
	require.Eventually(t, func() bool {
		var done, all int
		require.NoError(t, db.QueryRow(context.Background(),
			`SELECT count(*) FILTER (WHERE status = 'succeeded'), count(*) FROM webhook_deliveries`).Scan(&done, &all))
		return done == bookings && all == bookings
	}, 30*time.Second, 50*time.Millisecond)
}
