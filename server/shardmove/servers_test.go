package shardmove_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/apptest"
	"github.com/seatghor/seatghor/server/migrations"
	"github.com/seatghor/seatghor/server/pgcluster"
	"github.com/seatghor/seatghor/server/pgtest"
)

// TestMoveShowBetweenServersUnderLoad is TestMoveShowUnderHoldAndPayLoad
// with the two shards on two PostgreSQL servers: the test server's and a
// throwaway cluster started here. Their transaction ids are unrelated; the
// old shard's server is made to run ahead by thousands, so the new shard's
// events only get higher xids than the show's old ones because the mover
// spends ids on the new server (decision 0205), which the seat map's
// version checks at the end.
func TestMoveShowBetweenServersUnderLoad(t *testing.T) {
	ctx := context.Background()
	admin := pgtest.Server(t)
	hash, err := migrations.Hash(migrations.Shard)
	require.NoError(t, err)
	tpl := admin.Template(t, string(migrations.Shard), hash, func(ctx context.Context, url string) error {
		return migrations.UpURL(ctx, url, migrations.Shard)
	})
	local := admin.Fresh(t, tpl)

	log := slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cluster, err := pgcluster.Start(ctx, pgcluster.Config{Dir: t.TempDir(), Fast: true, Log: log})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, cluster.Stop(context.Background())) })
	require.NoError(t, cluster.CreateDatabase(ctx, "seatghor_shard"))
	remote := cluster.URL("seatghor_shard")
	require.NoError(t, migrations.UpURL(ctx, remote, migrations.Shard))

	server := func(url string) (id, next int64) {
		conn, err := pgx.Connect(ctx, url)
		require.NoError(t, err)
		defer conn.Close(ctx)
		require.NoError(t, conn.QueryRow(ctx, `SELECT system_identifier, pg_snapshot_xmax(pg_current_snapshot())::text::bigint
			FROM pg_control_system()`).Scan(&id, &next))
		return id, next
	}
	srcID, srcNext := server(local)
	dstID, dstNext := server(remote)
	require.NotEqual(t, srcID, dstID, "two servers")
	if ahead := dstNext - srcNext + 20_000; ahead > 0 {
		conn, err := pgx.Connect(ctx, local)
		require.NoError(t, err)
		_, err = conn.Exec(ctx, fmt.Sprintf(`DO $$ BEGIN FOR i IN 1..%d LOOP PERFORM pg_current_xact_id(); COMMIT; END LOOP; END $$`, ahead))
		require.NoError(t, err)
		require.NoError(t, conn.Close(ctx))
	}
	_, srcNext = server(local)
	_, dstNext = server(remote)
	t.Logf("old shard's server at xid %d, new shard's at %d", srcNext, dstNext)

	moveUnderLoad(t, apptest.New(t, loadOptions(t, 0, []string{local, remote})))
}

// testLog sends a cluster's warnings to the test's log.
type testLog struct{ t *testing.T }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
