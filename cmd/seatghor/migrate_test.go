package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/internal/testkit/meilitest"
	"github.com/seatghor/seatghor/internal/testkit/pgtest"
	"github.com/seatghor/seatghor/internal/testkit/redistest"
)

func TestMain(m *testing.M) {
	// The crash test runs the binary's own main in a child process (this
	// test binary, re-executed), so it can kill it at will.
	if os.Getenv(runMainEnv) == "1" {
		main()
		return
	}
	code := m.Run()
	meilitest.Stop()
	redistest.Cleanup()
	pgtest.Cleanup()
	os.Exit(code)
}

// TestMigrate: `seatghor migrate` applies the schema to the catalog and to
// every shard of SEATGHOR_SHARD_URLS, and a second run changes nothing.
func TestMigrate(t *testing.T) {
	admin := pgtest.Server(t)
	catalogURL := admin.Fresh(t, "template0")
	shardURLs := []string{admin.Fresh(t, "template0"), admin.Fresh(t, "template0")}
	readURL := admin.Fresh(t, "template0")
	t.Setenv("SEATGHOR_READ_URL", readURL)
	t.Setenv("SEATGHOR_CATALOG_URL", catalogURL)
	t.Setenv("SEATGHOR_SHARD_URLS", strings.Join(shardURLs, ","))
	ctx := context.Background()
	for range 2 {
		var out bytes.Buffer
		require.NoError(t, run(ctx, []string{"migrate"}, &out, &out), out.String())
	}
	tables := func(url string) []string {
		conn, err := pgx.Connect(ctx, url)
		require.NoError(t, err)
		defer conn.Close(ctx)
		rows, err := conn.Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'goose_db_version' ORDER BY 1`)
		require.NoError(t, err)
		names, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		return names
	}
	require.Equal(t, []string{"api_keys", "audit_log", "counter_shifts", "guest_starts", "idempotency_keys", "layout_templates", "memberships", "organizations", "outbox", "partners",
		"phone_accounts", "phone_code_sends", "phone_codes",
		"projection_checkpoints", "routes", "sale_shows", "shows", "timetable_trips", "timetables", "waiting_rooms",
		"webhook_attempts", "webhook_deliveries", "webhook_endpoints"}, tables(catalogURL))
	for _, u := range shardURLs {
		require.Equal(t, []string{"allocations", "audit_log", "cash_entries", "fares", "ga_buckets", "gate_devices", "gate_scans", "hold_ga_takes", "holds",
			"idempotency_keys", "ledger_lines", "ledger_transactions", "order_passengers", "orders", "outbox", "payment_events",
			"payments", "projection_checkpoints", "refunds", "seats", "shows", "ticket_checkins", "ticket_no_shows", "trip_marks", "trip_stops"}, tables(u))
	}
	// The read database: hash partitions by user; the
	// notifications projector's three tables (issue 25); the lookups of
	// tickets by phone that missed (decision 0437); the e-tickets' reprints
	// (decision 0484).
	read := tables(readURL)
	require.Len(t, read, 5+4*8+3+1+1)
	require.Contains(t, read, "eticket_reprints")
	require.Contains(t, read, "notifications")
	require.Contains(t, read, "ticket_lookup_misses")
	require.Contains(t, read, "my_tickets")
	require.Contains(t, read, "my_tickets_p7")
	require.Contains(t, read, "ticket_shows")
}
