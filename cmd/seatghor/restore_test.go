package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/internal/devenv/pgcluster"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/internal/testkit/pgtest"
	"github.com/seatghor/seatghor/internal/testkit/redistest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/payment"
)

// TestRestoreDrill is docs/operations.md's restore drill: bookings made
// through the API, every database dumped with pg_dump and restored with
// pg_restore into fresh ones, then `seatghor verify --rebuild` on the
// copies finds every invariant holding and rebuilds the seat maps and "my
// tickets" from the restored outboxes into an empty Redis. A seat then
// booked twice in the copy makes verify fail and say so.
func TestRestoreDrill(t *testing.T) {
	r := redistest.New(t)
	env := apptest.New(t, apptest.Options{Shards: 2, RedisURL: r.URL, RedisPrefix: r.Prefix, Tickets: true, Projectors: true,
		PaymentWorkers: &payment.WorkerConfig{Poll: 50 * time.Millisecond, RecoverEvery: 200 * time.Millisecond, ReconcileEvery: -1}})
	ctx := context.Background()
	call := func(sub string, role auth.Role, procedure string, body any) map[string]any {
		t.Helper()
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, env.URL+"/"+procedure, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+env.Token(t, sub, role))
		req.Header.Set("Idempotency-Key", fmt.Sprintf("drill-%d", time.Now().UnixNano()))
		resp, err := env.HTTP.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", procedure, raw)
		var m map[string]any
		require.NoError(t, json.Unmarshal(raw, &m))
		return m
	}
	var shows []any
	for i, route := range [][2]string{{"Dhaka", "Sylhet"}, {"Dhaka", "Khulna"}} {
		show := call("ops", auth.RoleAdmin, "seatghor.catalog.v1.CatalogService/CreateShow", map[string]any{
			"kind": "SHOW_KIND_BUS_TRIP", "title": fmt.Sprintf("Drill %d", i), "origin": route[0], "destination": route[1],
			"startsAt": time.Now().Add(72 * time.Hour).Format(time.RFC3339), "currency": "BDT", "shard": i,
			"sections": []any{map[string]any{"name": "Main", "rows": []string{"A", "B"}, "seatsPerRow": 4, "priceMinor": "85000"}},
		})
		shows = append(shows, show["show"].(map[string]any)["showId"])
	}
	var orders []string
	for i, buyer := range []string{"rumana", "karim", "sumi"} {
		hold := call(buyer, auth.RoleUser, "seatghor.booking.v1.HoldService/CreateHold",
			map[string]any{"showId": shows[i%2], "seats": []string{fmt.Sprintf("A%d", i+1), fmt.Sprintf("B%d", i+1)}})
		order := call(buyer, auth.RoleUser, "seatghor.booking.v1.OrderService/CreateOrder",
			map[string]any{"holdId": hold["hold"].(map[string]any)["holdId"]})
		id := order["order"].(map[string]any)["orderId"].(string)
		call(buyer, auth.RoleUser, "seatghor.payment.v1.PaymentService/StartPayment",
			map[string]any{"orderId": id, "sandbox": map[string]any{"token": "tok_success"}})
		orders = append(orders, id)
	}
	for i, id := range orders {
		buyer := []string{"rumana", "karim", "sumi"}[i]
		require.Eventually(t, func() bool {
			o := call(buyer, auth.RoleUser, "seatghor.booking.v1.OrderService/GetOrder", map[string]any{"orderId": id})
			return o["order"].(map[string]any)["status"] == "ORDER_STATUS_CONFIRMED"
		}, 20*time.Second, 50*time.Millisecond, "order %s is confirmed", id)
	}

	// Dump every database and restore it into a fresh one.
	bin, err := pgcluster.BinDir()
	require.NoError(t, err)
	admin := pgtest.Server(t)
	dir := t.TempDir()
	restore := func(url string) string {
		t.Helper()
		file := filepath.Join(dir, fmt.Sprintf("db-%d.dump", time.Now().UnixNano()))
		out, err := exec.Command(filepath.Join(bin, "pg_dump"), "--format=custom", "--file", file, url).CombinedOutput()
		require.NoError(t, err, "pg_dump: %s", out)
		fresh := admin.Fresh(t, "template0")
		out, err = exec.Command(filepath.Join(bin, "pg_restore"), "--exit-on-error", "--dbname", fresh, file).CombinedOutput()
		require.NoError(t, err, "pg_restore: %s", out)
		return fresh
	}
	catalogURL, readURL := restore(env.CatalogURL), restore(env.ReadURL)
	var shardURLs []string
	for _, u := range env.ShardURLs {
		shardURLs = append(shardURLs, restore(u))
	}

	// verify on the copies, with an empty Redis for the rebuilt seat maps.
	empty := redistest.New(t)
	t.Setenv("SEATGHOR_CATALOG_URL", catalogURL)
	t.Setenv("SEATGHOR_SHARD_URLS", strings.Join(shardURLs, ","))
	t.Setenv("SEATGHOR_READ_URL", readURL)
	t.Setenv("SEATGHOR_REDIS_URL", empty.URL)
	t.Setenv("SEATGHOR_REDIS_PREFIX", empty.Prefix)
	t.Setenv("SEATGHOR_AUTH_SECRET", apptest.Secret+"-of-at-least-32-bytes-long")
	t.Setenv("SEATGHOR_GATEWAY_URL", "http://127.0.0.1:1") // verify never calls it
	t.Setenv("SEATGHOR_WEBHOOK_SECRETS", apptest.WebhookSecret)
	var out bytes.Buffer
	require.NoError(t, run(ctx, []string{"verify", "--rebuild", "--timeout", "60s"}, &out, &out), out.String())
	require.Contains(t, out.String(), "ok   seats booked twice: 0")
	require.Contains(t, out.String(), "ok   orders charged once: 3 orders, 0 wrong")
	require.Contains(t, out.String(), "ok   live holds: 3; seats in two: 0, owning part of their seats: 0")
	require.Contains(t, out.String(), "ok   webhook events: ")
	require.Contains(t, out.String(), "ok   read models rebuilt")
	for _, show := range shows {
		key := fmt.Sprintf("%sseatmap:{%v}:avail", empty.Prefix, show)
		require.EqualValues(t, 1, empty.Client.Exists(ctx, key).Val(), "the seat map of show %v is rebuilt (%s)", show, key)
	}
	var tickets int
	require.NoError(t, connect(t, readURL).QueryRow(ctx, `SELECT count(*) FROM my_tickets`).Scan(&tickets))
	require.Equal(t, 6, tickets, "my tickets are rebuilt: two seats in each of three orders")

	// A copy in which a seat is booked twice fails verification.
	shard := connect(t, shardURLs[0])
	_, err = shard.Exec(ctx, `
		CREATE TEMP TABLE twin AS SELECT * FROM holds WHERE status = 'confirmed' LIMIT 1;
		UPDATE twin SET hold_id = hold_id || '_twin';
		INSERT INTO holds SELECT * FROM twin`)
	require.NoError(t, err)
	out.Reset()
	require.ErrorIs(t, run(ctx, []string{"verify"}, &out, &out), errVerify)
	require.Contains(t, out.String(), "FAIL seats booked twice: 2", "both seats of the twin hold")
	require.Contains(t, out.String(), "FAIL live holds: 4; seats in two: 2, owning part of their seats: 1", "the twin owns none of its seats")
}
