package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/internal/testkit/pgtest"
	"github.com/seatghor/seatghor/internal/testkit/redistest"
)

// TestRebuild: `seatghor rebuild seatmap` deletes the seat map's keys and
// then resets its checkpoints in every database; an unknown projector is
// refused.
func TestRebuild(t *testing.T) {
	admin := pgtest.Server(t)
	catalogURL := admin.Fresh(t, "template0")
	shardURLs := []string{admin.Fresh(t, "template0")}
	r := redistest.New(t)
	t.Setenv("SEATGHOR_CATALOG_URL", catalogURL)
	t.Setenv("SEATGHOR_SHARD_URLS", strings.Join(shardURLs, ","))
	t.Setenv("SEATGHOR_REDIS_URL", r.URL)
	t.Setenv("SEATGHOR_REDIS_PREFIX", r.Prefix)
	// The platform opens with its payment gateway configured; rebuild
	// never calls it.
	t.Setenv("SEATGHOR_GATEWAY_URL", "http://127.0.0.1:1")
	t.Setenv("SEATGHOR_WEBHOOK_SECRETS", "rebuild-test-secret")
	ctx := context.Background()
	var out bytes.Buffer
	require.NoError(t, run(ctx, []string{"migrate"}, &out, &out), out.String())

	key := r.Prefix + "seatmap:{7}:avail"
	require.NoError(t, r.Client.HSet(ctx, key, "v", 1).Err())
	for _, url := range append([]string{catalogURL}, shardURLs...) {
		_, err := connect(t, url).Exec(ctx, `INSERT INTO projection_checkpoints (projector, id) VALUES ('seatmap', 42)`)
		require.NoError(t, err)
	}

	require.NoError(t, run(ctx, []string{"rebuild", "seatmap"}, &out, &out), out.String())
	require.Zero(t, r.Client.Exists(ctx, key).Val(), "the read model is dropped")
	for _, url := range append([]string{catalogURL}, shardURLs...) {
		// Reset in place, to the start, under a new generation (decision
		// 0090): pruners still see it.
		var at string
		require.NoError(t, connect(t, url).QueryRow(ctx, `
			SELECT xid::text || '/' || id || '@' || generation FROM projection_checkpoints WHERE projector = 'seatmap'`).Scan(&at))
		require.Equal(t, "0/0@1", at, "checkpoints are reset")
	}

	require.ErrorContains(t, run(ctx, []string{"rebuild", "tickets"}, &out, &out), `no projector "tickets"`)
	require.ErrorIs(t, run(ctx, []string{"rebuild"}, &out, &out), errUsage)
}

func connect(t *testing.T, url string) *pgx.Conn {
	conn, err := pgx.Connect(context.Background(), url)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}
