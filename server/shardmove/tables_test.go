package shardmove

import (
	"context"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/internal/testkit/pgtest"
	"github.com/seatghor/seatghor/internal/testkit/schematest"
	"github.com/seatghor/seatghor/server/migrations"
	"github.com/seatghor/seatghor/server/pg"
)

// TestEveryShardTableIsMovedOrStays fails when a shard table is in neither
// list (a new show-scoped table someone forgot), and when a moved table
// with show rows lacks the fence that freezes its writes during a move.
func TestEveryShardTableIsMovedOrStays(t *testing.T) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, schematest.Fresh(t, migrations.Shard))
	require.NoError(t, err)
	defer conn.Close(ctx)

	rows, err := conn.Query(ctx, `SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`)
	require.NoError(t, err)
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	listed := append(tableNames(), outbox)
	for _, name := range tables {
		_, stay := stays[name]
		require.True(t, stay || slices.Contains(listed, name),
			"shard table %s is neither moved (server/shardmove/tables.go: moved) nor said to stay (stays): a show move would lose its rows", name)
	}
	require.Contains(t, tables, outbox)
	for _, tb := range moved {
		require.Contains(t, tables, tb.name)
		if tb.unfenced != "" {
			continue
		}
		var fenced bool
		require.NoError(t, conn.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid
			WHERE t.tgrelid = $1::regclass AND p.proname = 'show_writable')`, tb.name).Scan(&fenced))
		require.True(t, fenced, "table %s has no show_writable trigger: writes during a move's freeze would be lost", tb.name)
	}
}

// TestSpendXIDs: outrun's means of putting a new shard's transaction ids
// past an old shard's (a real gap between two servers:
// TestMoveShowBetweenServersUnderLoad).
func TestSpendXIDs(t *testing.T) {
	ctx := context.Background()
	admin := pgtest.Server(t)
	pool, err := pg.Open(ctx, "scratch", admin.Fresh(t, "template0"), 2)
	require.NoError(t, err)
	defer pool.Close()
	next := func() int64 {
		var x int64
		require.NoError(t, pool.QueryRow(ctx, `SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint`).Scan(&x))
		return x
	}
	before := next()
	require.NoError(t, spendXIDs(ctx, pool, 500))
	require.GreaterOrEqual(t, next()-before, int64(500))
}
