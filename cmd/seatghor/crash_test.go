package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/internal/testkit/pgtest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/gateway/sandbox"
	"github.com/seatghor/seatghor/server/keyset"
)

// runMainEnv makes the test binary run main() instead of the tests.
const runMainEnv = "SEATGHOR_TEST_RUN_MAIN"

// TestCrashAfterGatewaySuccess kills `seatghor serve` (SIGKILL) after the
// gateway captured a payment and before the server could record the answer
// (the webhook is lost too). Nothing is lost: after a restart the recovery
// job asks the gateway, and the booking is confirmed exactly once.
func TestCrashAfterGatewaySuccess(t *testing.T) {
	admin := pgtest.Server(t)
	catalogURL := admin.Fresh(t, "template0")
	shardURL := admin.Fresh(t, "template0")
	const secret, whsec = "crash-test-secret-of-at-least-32-bytes", "whsec_crash"
	addr := freeAddr(t)

	// The gateway applies tok_timeout_applied charges, then hangs before it
	// answers; every webhook is dropped.
	gw := sandbox.New(sandbox.Config{
		WebhookURL: "http://" + addr + "/webhooks/sandbox", WebhookSecrets: []string{whsec},
		Faults: sandbox.Faults{HangFor: 30 * time.Second, DropRate: 1},
	})
	gwSrv := httptest.NewServer(gw)
	t.Cleanup(gwSrv.Close)
	t.Cleanup(gw.Close)

	env := append(os.Environ(), runMainEnv+"=1",
		"SEATGHOR_CATALOG_URL="+catalogURL, "SEATGHOR_SHARD_URLS="+shardURL, "SEATGHOR_AUTH_SECRET="+secret,
		"SEATGHOR_ADDR="+addr, "SEATGHOR_ADMIN_ADDR="+freeAddr(t), "SEATGHOR_GATEWAY_URL="+gwSrv.URL, "SEATGHOR_WEBHOOK_SECRETS="+whsec,
		"SEATGHOR_ROLES=api,workers", "SEATGHOR_PAYMENT_RECOVER_INTERVAL=500ms", "SEATGHOR_PAYMENT_RECOVER_AFTER=1s",
		"SEATGHOR_LOG_LEVEL=warn")
	var out bytes.Buffer
	t.Setenv("SEATGHOR_CATALOG_URL", catalogURL)
	t.Setenv("SEATGHOR_SHARD_URLS", shardURL)
	require.NoError(t, run(context.Background(), []string{"migrate"}, &out, &out), out.String())
	logs := &lockedBuffer{}
	start := func() *exec.Cmd { return startServe(t, env, addr, logs) }
	server := start()

	tokens, err := auth.NewTokens(keyset.FromSecret(secret, keyset.Tokens), time.Now)
	require.NoError(t, err)
	call := func(sub string, role auth.Role, procedure string, body any) (map[string]any, error) {
		tok, err := tokens.Mint(sub, role, time.Hour)
		require.NoError(t, err)
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/"+procedure, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Idempotency-Key", fmt.Sprintf("k-%d", time.Now().UnixNano()))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var m map[string]any
		require.NoError(t, json.Unmarshal(raw, &m), string(raw))
		if resp.StatusCode != http.StatusOK {
			return m, fmt.Errorf("%s: %d %s", procedure, resp.StatusCode, raw)
		}
		return m, nil
	}
	show, err := call("ops", auth.RoleAdmin, "seatghor.catalog.v1.CatalogService/CreateShow", map[string]any{
		"kind": "SHOW_KIND_BUS_TRIP", "title": "Crash test", "origin": "Dhaka", "destination": "Sylhet",
		"startsAt": time.Now().Add(48 * time.Hour).Format(time.RFC3339), "currency": "BDT",
		"sections": []any{map[string]any{"name": "Main", "rows": []string{"A"}, "seatsPerRow": 4, "priceMinor": "85000"}},
	})
	require.NoError(t, err)
	showID := show["show"].(map[string]any)["showId"]
	hold, err := call("rumana", auth.RoleUser, "seatghor.booking.v1.HoldService/CreateHold",
		map[string]any{"showId": showID, "seats": []string{"A1", "A2"}})
	require.NoError(t, err)
	order, err := call("rumana", auth.RoleUser, "seatghor.booking.v1.OrderService/CreateOrder",
		map[string]any{"holdId": hold["hold"].(map[string]any)["holdId"]})
	require.NoError(t, err)
	orderID := order["order"].(map[string]any)["orderId"].(string)

	go func() { // answered never: the server dies while the gateway hangs
		_, _ = call("rumana", auth.RoleUser, "seatghor.payment.v1.PaymentService/StartPayment",
			map[string]any{"orderId": orderID, "sandbox": map[string]any{"token": "tok_timeout_applied"}})
	}()
	require.Eventually(t, func() bool { return len(gw.Charges()) == 1 }, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, server.Process.Signal(syscall.SIGKILL))
	_ = server.Wait()

	db, err := pgx.Connect(context.Background(), shardURL)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close(context.Background()) })
	var payStatus, orderStatus string
	require.NoError(t, db.QueryRow(context.Background(), `SELECT status FROM payments`).Scan(&payStatus))
	require.NoError(t, db.QueryRow(context.Background(), `SELECT status FROM orders`).Scan(&orderStatus))
	require.Equal(t, "pending", payStatus, "recorded before the call, and nothing after")
	require.Equal(t, "pending_payment", orderStatus)

	start() // the recovery job finds the charge
	require.Eventually(t, func() bool {
		require.NoError(t, db.QueryRow(context.Background(), `SELECT status FROM orders`).Scan(&orderStatus))
		return orderStatus == "confirmed"
	}, 20*time.Second, 100*time.Millisecond, logs.String())
	var journals int
	require.NoError(t, db.QueryRow(context.Background(), `
		SELECT count(*) FROM ledger_transactions WHERE txn_id = 'booking:' || $1`, orderID).Scan(&journals))
	require.Equal(t, 1, journals)
	require.NoError(t, db.QueryRow(context.Background(), `SELECT status FROM payments`).Scan(&payStatus))
	require.Equal(t, "succeeded", payStatus)
	require.Len(t, gw.Charges(), 1, "charged once")
	require.Empty(t, gw.Refunds())
}

// startServe runs the test binary as `seatghor serve` with env (which sets
// runMainEnv) until the test ends, its logs in logs, and returns once addr
// answers /readyz.
func startServe(t *testing.T, env []string, addr string, logs *lockedBuffer) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "serve")
	cmd.Env, cmd.Stdout, cmd.Stderr = env, logs, logs
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == http.StatusOK
	}, 20*time.Second, 50*time.Millisecond, logs.String())
	return cmd
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().String()
}

// lockedBuffer collects the output of the child processes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
