package shardmove_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/internal/devenv/pgcluster"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/migrations"
)

// TestMoveShowBetweenServersUnderLoad is TestMoveShowUnderHoldAndPayLoad
// with the two shards on two PostgreSQL servers of their own, throwaway
// clusters started here (the catalog stays on the test server). Their
// transaction ids are unrelated; the old shard's server is made to run
// 20,000 ahead, so the new shard's events only get higher xids than the
// show's old ones because the mover spends ids on the new server (decision
// 0205), which the seat map's version checks at the end.
func TestMoveShowBetweenServersUnderLoad(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var urls []string
	for range 2 {
		cluster, err := pgcluster.Start(ctx, pgcluster.Config{Dir: t.TempDir(), Fast: true, Log: log})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, cluster.Stop(context.Background())) })
		require.NoError(t, cluster.CreateDatabase(ctx, "seatghor_shard"))
		urls = append(urls, cluster.URL("seatghor_shard"))
		require.NoError(t, migrations.UpURL(ctx, urls[len(urls)-1], migrations.Shard))
	}

	server := func(url string) (id, next int64) {
		conn, err := pgx.Connect(ctx, url)
		require.NoError(t, err)
		defer conn.Close(ctx)
		require.NoError(t, conn.QueryRow(ctx, `SELECT system_identifier, pg_snapshot_xmax(pg_current_snapshot())::text::bigint
			FROM pg_control_system()`).Scan(&id, &next))
		return id, next
	}
	srcID, srcNext := server(urls[0])
	dstID, dstNext := server(urls[1])
	require.NotEqual(t, srcID, dstID, "two servers")
	if ahead := dstNext - srcNext + 20_000; ahead > 0 {
		conn, err := pgx.Connect(ctx, urls[0])
		require.NoError(t, err)
		_, err = conn.Exec(ctx, fmt.Sprintf(`DO $$ BEGIN FOR i IN 1..%d LOOP PERFORM pg_current_xact_id(); COMMIT; END LOOP; END $$`, ahead))
		require.NoError(t, err)
		require.NoError(t, conn.Close(ctx))
	}
	_, srcNext = server(urls[0])
	_, dstNext = server(urls[1])
	t.Logf("old shard's server at xid %d, new shard's at %d", srcNext, dstNext)

	moveUnderLoad(t, apptest.New(t, loadOptions(t, 0, urls)))
}

// testLog sends a cluster's warnings to the test's log.
type testLog struct{ t *testing.T }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
