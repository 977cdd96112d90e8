package booking

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/migrations"
	"github.com/seatghor/seatghor/server/schematest"
)

// TestHoldPlansNeverScanATable: the pipelined hold's statements are planned
// once per connection as generic plans (lockAccountSQL), from the
// statistics of that moment. On a new shard, whose holds table is empty
// and never analyzed, PostgreSQL's generic plan counted the account's seats
// with a sequential scan of holds, kept for the connection's life: a cost
// per hold that grew with every hold (decision 0266). With the settings
// lockAccountSQL makes, the generic plans of both statements find every row
// by key, on empty tables.
func TestHoldPlansNeverScanATable(t *testing.T) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, schematest.Fresh(t, migrations.Shard))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	// Empty and never analyzed, as on a new shard before its first hold.
	_, err = conn.Exec(ctx, `ANALYZE holds; ANALYZE seats; ANALYZE ga_buckets`)
	require.NoError(t, err)

	for _, tt := range []struct {
		name, sql, places, args string
	}{
		{"seats", holdSeatsSQL, "text[]", `(1, ARRAY['A1'], now(), 'hld_1_x', 'u', 1, 0)`},
		{"general admission", holdGASQL, "text", `(1, 'Floor', now(), 'hld_1_x', 'u', 1, 0)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tx, err := conn.Begin(ctx)
			require.NoError(t, err)
			defer func() { _ = tx.Rollback(ctx) }()
			_, err = tx.Exec(ctx, `SELECT $1::text, `+lockAccountSQL, "", "u", int64(1))
			require.NoError(t, err)
			_, err = tx.Exec(ctx, `PREPARE hold(bigint, `+tt.places+`, timestamptz, text, text, int, bigint) AS `+tt.sql,
				pgx.QueryExecModeSimpleProtocol)
			require.NoError(t, err)
			rows, err := tx.Query(ctx, `EXPLAIN EXECUTE hold`+tt.args, pgx.QueryExecModeSimpleProtocol)
			require.NoError(t, err)
			lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
			require.NoError(t, err)
			plan := strings.Join(lines, "\n")
			require.Contains(t, plan, "Index", "the plan reads by key")
			require.NotContains(t, plan, "Seq Scan", "a generic plan of the hold scans a table:\n%s", plan)
			_, err = tx.Exec(ctx, `DEALLOCATE hold`)
			require.NoError(t, err)
		})
	}
}
