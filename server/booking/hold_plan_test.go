package booking

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/internal/testkit/schematest"
	"github.com/seatghor/seatghor/server/migrations"
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
	_, err = conn.Exec(ctx, `ANALYZE holds; ANALYZE seats; ANALYZE ga_buckets; ANALYZE trip_stops; ANALYZE fares`)
	require.NoError(t, err)

	one := `SELECT $1::text, ` + lockAccountSQL
	// The parameters of holdBatchRulesCTE, which both batch statements start with.
	const batchRules = "bigint[], text[], text[], int[], timestamptz[], text[], text[], text[], text[], text[], text[], text[], text[], text[]"
	oneArgs := []any{"", "u", int64(1)}
	for _, tt := range []struct {
		name, lock, sql, params, args string
		lockArgs                      []any
		// everyIndexByKey: no index is read whole either. The one-hold
		// statements do not promise it (on empty tables their generic plans
		// read a show's seats through the index by show, and the UPDATE
		// joins from the index read whole); the batch's does.
		everyIndexByKey bool
	}{
		{"seats", one, holdSeatsSQL, "bigint, text[], timestamptz, text, text, int, text, text, text, text, text[]",
			`(1, ARRAY['A1'], now(), 'hld_1_x', 'u', 1, '', '', '', '', ARRAY['A1'])`, oneArgs, false},
		{"seats for a journey", one, holdSeatsSQL, "bigint, text[], timestamptz, text, text, int, text, text, text, text, text[]",
			`(1, ARRAY['A1'], now(), 'hld_1_x', 'u', 1, 'cumilla', 'chattogram', 'cantonment', '', ARRAY[]::text[])`, oneArgs, false},
		{"general admission", one, holdGASQL, "bigint, text, timestamptz, text, text, int, text, text, text, text",
			`(1, 'Floor', now(), 'hld_1_x', 'u', 1, '', '', '', '')`, oneArgs, false},
		// A batch's statement (decision 0270) reads by key too, never as
		// a hashed subplan over a table.
		{"a batch of seats", holdBatchLockSQL, holdBatchSQL,
			batchRules + ", int[], text[], bigint[], text[], bool[]",
			`(ARRAY[1, 2], ARRAY['hld_1_x', 'hld_2_y'], ARRAY['u', 'v'], ARRAY[1, 1], ARRAY[now(), now()],
			  ARRAY['u', 'v'], ARRAY['/hold', '/hold'], ARRAY['show:1', 'show:2'], ARRAY['k', 'l'], ARRAY['', ''],
			  ARRAY['', 'cumilla'], ARRAY['', 'chattogram'], ARRAY['', 'cantonment'], ARRAY['', ''],
			  ARRAY[1, 2], ARRAY['A1', 'A2'], ARRAY[1, 2], ARRAY['A1', 'A2'], ARRAY[true, false])`,
			[]any{[]string{"", ""}, []string{"u", "v"}, []int64{1, 1}}, true},
		{"a batch of general admission", holdBatchLockSQL, holdBatchGASQL,
			batchRules,
			`(ARRAY[1, 2], ARRAY['hld_1_x', 'hld_2_y'], ARRAY['u', 'v'], ARRAY[1, 1], ARRAY[now(), now()],
			  ARRAY['u', 'v'], ARRAY['/hold', '/hold'], ARRAY['show:1', 'show:2'], ARRAY['k', 'l'], ARRAY['Floor', 'Floor'],
			  ARRAY['', ''], ARRAY['', ''], ARRAY['', ''], ARRAY['', ''])`,
			[]any{[]string{"", ""}, []string{"u", "v"}, []int64{1, 2}}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tx, err := conn.Begin(ctx)
			require.NoError(t, err)
			defer func() { _ = tx.Rollback(ctx) }()
			_, err = tx.Exec(ctx, tt.lock, tt.lockArgs...)
			require.NoError(t, err)
			_, err = tx.Exec(ctx, `PREPARE hold(`+tt.params+`) AS `+tt.sql,
				pgx.QueryExecModeSimpleProtocol)
			require.NoError(t, err)
			rows, err := tx.Query(ctx, `EXPLAIN EXECUTE hold`+tt.args, pgx.QueryExecModeSimpleProtocol)
			require.NoError(t, err)
			lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
			require.NoError(t, err)
			plan := strings.Join(lines, "\n")
			require.Contains(t, plan, "Index", "the plan reads by key")
			require.NotContains(t, plan, "Seq Scan", "a generic plan of the hold scans a table:\n%s", plan)
			require.NotContains(t, plan, "hashed SubPlan", "a generic plan of the hold hashes a table:\n%s", plan)
			// An index scan without a condition reads the whole index.
			for i, line := range lines {
				if !tt.everyIndexByKey {
					break
				}
				if strings.Contains(line, "Index Scan using") || strings.Contains(line, "Index Only Scan using") {
					require.Contains(t, lines[i+1], "Index Cond", "a generic plan of the hold reads a whole index:\n%s", plan)
					if strings.Contains(line, " on seats ") {
						require.Contains(t, lines[i+1], "seat =", "a generic plan of the hold reads a show's seats:\n%s", plan)
					}
				}
			}
			_, err = tx.Exec(ctx, `DEALLOCATE hold`)
			require.NoError(t, err)
		})
	}
}
