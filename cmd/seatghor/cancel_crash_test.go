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
	"strings"
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

// TestCancelShowSurvivesKill9 (issue 25 §5, decisions 0440 and 0443): a
// coach with 20 bookings paid online and 10 sold for cash at a counter is
// cancelled by its operator, and `seatghor serve` (api and workers) is
// killed (SIGKILL) while the cancellation job is half-way through the
// refunds (the gateway answers each refund slowly). Restarted, the job
// finishes: each online booking refunded in full exactly once at the
// gateway, each cash one owed once at its counter, every order cancelled
// once, the ledger balanced.
func TestCancelShowSurvivesKill9(t *testing.T) {
	admin := pgtest.Server(t)
	catalogURL := admin.Fresh(t, "template0")
	shardURL := admin.Fresh(t, "template0")
	const secret, whsec = "cancel-crash-secret-of-at-least-32-bytes", "whsec_cancel_crash"
	addr := freeAddr(t)

	gw := sandbox.New(sandbox.Config{WebhookURL: "http://" + addr + "/webhooks/sandbox", WebhookSecrets: []string{whsec}})
	// Refunds take 150 ms each at the gateway: the kill falls among them.
	gwSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "refund") && r.Method == http.MethodPost {
			time.Sleep(150 * time.Millisecond)
		}
		gw.ServeHTTP(w, r)
	}))
	t.Cleanup(gwSrv.Close)
	t.Cleanup(gw.Close)

	env := append(os.Environ(), runMainEnv+"=1",
		"SEATGHOR_CATALOG_URL="+catalogURL, "SEATGHOR_SHARD_URLS="+shardURL, "SEATGHOR_AUTH_SECRET="+secret,
		"SEATGHOR_ADDR="+addr, "SEATGHOR_ADMIN_ADDR="+freeAddr(t), "SEATGHOR_GATEWAY_URL="+gwSrv.URL, "SEATGHOR_WEBHOOK_SECRETS="+whsec,
		"SEATGHOR_ROLES=api,workers", "SEATGHOR_PAYMENT_RECOVER_INTERVAL=500ms", "SEATGHOR_PAYMENT_RECOVER_AFTER=1s",
		"SEATGHOR_DRAIN_DELAY=0s", "SEATGHOR_LOG_LEVEL=warn")
	var out bytes.Buffer
	t.Setenv("SEATGHOR_CATALOG_URL", catalogURL)
	t.Setenv("SEATGHOR_SHARD_URLS", shardURL)
	require.NoError(t, run(context.Background(), []string{"migrate"}, &out, &out), out.String())
	logs := &lockedBuffer{}
	start := func() { startServe(t, env, addr, logs) }
	server := startServe(t, env, addr, logs)

	tokens, err := auth.NewTokens(keyset.FromSecret(secret, keyset.Tokens), time.Now)
	require.NoError(t, err)
	keys := 0
	call := func(sub string, role auth.Role, procedure string, body any) map[string]any {
		t.Helper()
		tok, err := tokens.Mint(sub, role, time.Hour)
		require.NoError(t, err)
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/"+procedure, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tok)
		keys++
		req.Header.Set("Idempotency-Key", fmt.Sprintf("cancel-crash-%d", keys))
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", procedure, raw)
		var m map[string]any
		require.NoError(t, json.Unmarshal(raw, &m))
		return m
	}
	call("ops", auth.RoleAdmin, "seatghor.catalog.v1.CatalogService/CreateOrganization",
		map[string]any{"organizationId": "kill-lines", "name": "Kill Lines"})
	call("ops", auth.RoleAdmin, "seatghor.catalog.v1.CatalogService/AddOrganizationMember",
		map[string]any{"organizationId": "kill-lines", "userId": "clerk", "role": "ORGANIZATION_ROLE_COUNTER"})
	show := call("ops", auth.RoleAdmin, "seatghor.catalog.v1.CatalogService/CreateShow", map[string]any{
		"kind": "SHOW_KIND_BUS_TRIP", "title": "Dhaka to Khulna 22:00", "origin": "Dhaka", "destination": "Khulna",
		"organizationId": "kill-lines", "startsAt": time.Now().Add(48 * time.Hour).Format(time.RFC3339), "currency": "BDT",
		"sections": []any{map[string]any{"name": "Main", "rows": []string{"A", "B", "C", "D", "E", "F", "G", "H", "I", "J"},
			"seatsPerRow": 4, "priceMinor": "90000"}},
	})
	showID := show["show"].(map[string]any)["showId"]
	seat := func(i int) string { return fmt.Sprintf("%c%d", 'A'+i/4, i%4+1) }
	for i := range 20 {
		buyer := fmt.Sprintf("buyer-%d", i)
		hold := call(buyer, auth.RoleUser, "seatghor.booking.v1.HoldService/CreateHold",
			map[string]any{"showId": showID, "seats": []string{seat(i)}})
		order := call(buyer, auth.RoleUser, "seatghor.booking.v1.OrderService/CreateOrder",
			map[string]any{"holdId": hold["hold"].(map[string]any)["holdId"]})
		p := call(buyer, auth.RoleUser, "seatghor.payment.v1.PaymentService/StartPayment",
			map[string]any{"orderId": order["order"].(map[string]any)["orderId"], "sandbox": map[string]any{"token": "tok_success"}})
		require.Equal(t, "PAYMENT_STATE_SUCCEEDED", p["payment"].(map[string]any)["status"])
	}
	shift := call("clerk", auth.RoleOperator, "seatghor.counter.v1.CounterService/OpenShift",
		map[string]any{"organizationId": "kill-lines", "counterId": "gabtoli"})["shift"].(map[string]any)["shiftId"]
	for i := 20; i < 30; i++ {
		call("clerk", auth.RoleOperator, "seatghor.counter.v1.CounterService/SellTickets", map[string]any{
			"shiftId": shift, "showId": showID, "seats": []string{seat(i)}, "contact": map[string]any{"phone": fmt.Sprintf("01711-%06d", i)}})
	}
	require.Empty(t, gw.Refunds())

	call("ops", auth.RoleAdmin, "seatghor.catalog.v1.CatalogService/CancelShow",
		map[string]any{"showId": showID, "reason": "Ferry closed at Paturia"})
	require.Eventually(t, func() bool { return len(gw.Refunds()) >= 3 }, 30*time.Second, 5*time.Millisecond, logs.String())
	require.NoError(t, server.Process.Signal(syscall.SIGKILL))
	_ = server.Wait()
	require.Less(t, len(gw.Refunds()), 20, "killed half-way through the refunds")

	start()
	db, err := pgx.Connect(context.Background(), shardURL)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close(context.Background()) })
	count := func(sql string) int {
		var n int
		require.NoError(t, db.QueryRow(context.Background(), sql).Scan(&n))
		return n
	}
	require.Eventually(t, func() bool {
		return len(gw.Refunds()) >= 20 && count(`SELECT count(*) FROM cash_entries WHERE kind = 'owed'`) == 10 &&
			count(`SELECT count(*) FROM refunds WHERE status <> 'succeeded'`) == 0
	}, 60*time.Second, 100*time.Millisecond, logs.String())
	time.Sleep(3 * time.Second) // a pass more of the job, which must change nothing
	perCharge := map[string]int64{}
	for _, r := range gw.Refunds() {
		perCharge[r.ChargeID] += r.AmountMinor
	}
	require.Len(t, gw.Refunds(), 20, "one refund per online booking, none twice")
	require.Len(t, perCharge, 20)
	for charge, amount := range perCharge {
		require.EqualValues(t, 90000, amount, "charge %s refunded in full", charge)
	}
	require.Equal(t, 10, count(`SELECT count(*) FROM cash_entries WHERE kind = 'owed' AND amount_minor = 90000`), "each cash ticket owed in full, once")
	require.Equal(t, 30, count(`SELECT count(*) FROM orders WHERE status = 'cancelled'`))
	require.Equal(t, 30, count(`SELECT count(*) FROM outbox WHERE event_type = 'seatghor.events.v1.OrderCancelled'`), "each order cancelled once")
	require.Equal(t, 30, count(`SELECT count(*) FROM ledger_transactions WHERE kind = 'refund'`), "one refund journal per booking")
	require.Equal(t, 0, count(`SELECT coalesce(sum(amount_minor), 0)::int FROM ledger_lines`), "the trial balance is 0")
	require.Equal(t, -900000, count(`SELECT sum(amount_minor)::int FROM ledger_lines WHERE account = 'counter_owed:kill-lines:gabtoli'`))
}
