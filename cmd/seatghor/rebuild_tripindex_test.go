package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/internal/testkit/meilitest"
	"github.com/seatghor/seatghor/internal/testkit/pgtest"
	"github.com/seatghor/seatghor/projections/tripindex"
	"github.com/seatghor/seatghor/server/search"
)

// TestRebuildTripIndex: `seatghor rebuild tripindex` empties the
// Meilisearch index and then resets the projector's checkpoints in every
// database, so the running projectors replay it.
func TestRebuildTripIndex(t *testing.T) {
	meili := meilitest.New(t)
	admin := pgtest.Server(t)
	catalogURL := admin.Fresh(t, "template0")
	shardURLs := []string{admin.Fresh(t, "template0")}
	t.Setenv("SEATGHOR_CATALOG_URL", catalogURL)
	t.Setenv("SEATGHOR_SHARD_URLS", strings.Join(shardURLs, ","))
	t.Setenv("SEATGHOR_MEILI_URL", meili.URL)
	t.Setenv("SEATGHOR_MEILI_KEY", meili.Key)
	t.Setenv("SEATGHOR_MEILI_INDEX", meili.Index)
	t.Setenv("SEATGHOR_GATEWAY_URL", "http://127.0.0.1:1") // never called
	t.Setenv("SEATGHOR_WEBHOOK_SECRETS", "rebuild-test-secret")
	ctx := context.Background()
	var out bytes.Buffer
	require.NoError(t, run(ctx, []string{"migrate"}, &out, &out), out.String())

	idx, err := tripindex.NewMeili(tripindex.MeiliConfig{URL: meili.URL, Key: meili.Key, Index: meili.Index})
	require.NoError(t, err)
	defer idx.Close()
	require.NoError(t, idx.Put(ctx, []search.Trip{{ShowID: 7, Title: "Dhaka to Cox's Bazar", StartsAt: time.Now()}}))
	for _, url := range append([]string{catalogURL}, shardURLs...) {
		_, err := connect(t, url).Exec(ctx, `INSERT INTO projection_checkpoints (projector, id) VALUES ('tripindex', 42)`)
		require.NoError(t, err)
	}

	require.NoError(t, run(ctx, []string{"rebuild", "tripindex"}, &out, &out), out.String())
	r, err := idx.Search(ctx, search.Query{Text: "cox"})
	require.NoError(t, err)
	require.Empty(t, r.Trips, "the read model is dropped")
	for _, url := range append([]string{catalogURL}, shardURLs...) {
		// Reset in place, to the start, under a new generation (decision
		// 0090): pruners still see it.
		var at string
		require.NoError(t, connect(t, url).QueryRow(ctx, `
			SELECT xid::text || '/' || id || '@' || generation FROM projection_checkpoints WHERE projector = 'tripindex'`).Scan(&at))
		require.Equal(t, "0/0@1", at, "checkpoints are reset")
	}
}
