package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/internal/devenv/pgcluster"
	"github.com/seatghor/seatghor/internal/loadtest"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/internal/testkit/redistest"
	"github.com/seatghor/seatghor/server/migrations"
)

// TestLoadtestCommand: `seatghor loadtest onsale` against a running
// platform prints the table, writes the JSON result, and compares two runs
// as ratios.
func TestLoadtestCommand(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 1})
	t.Setenv("SEATGHOR_AUTH_SECRET", apptest.Secret)
	dir := t.TempDir()
	first, second := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	ctx := context.Background()
	var out bytes.Buffer
	args := []string{"loadtest", "onsale", "--url", env.URL, "--admin-url", env.AdminURL, "--buyers", "40", "--trips", "1", "--rows", "5"}
	require.NoError(t, run(ctx, append(args, "--out", first), &out, &out), out.String())
	require.Contains(t, out.String(), "first 'sold out' at")
	out.Reset()
	require.NoError(t, run(ctx, append(args, "--out", second, "--compare", first), &out, &out), out.String())
	require.Contains(t, out.String(), "CreateHold")
	require.Contains(t, out.String(), "p99 ×")

	b, err := os.ReadFile(second)
	require.NoError(t, err)
	var res loadtest.Result
	require.NoError(t, json.Unmarshal(b, &res))
	require.Len(t, res.Phases, 1)
	require.Zero(t, res.Phases[0].Oversold)
	require.Equal(t, 40, res.Config.Buyers)
}

// TestLoadtestHoldsCommand: `seatghor loadtest holds` against a running
// platform measures CreateHold and GetSeatMap on the big show and the buses,
// their baselines (the essential transaction on the shard's PostgreSQL,
// Redis GETs) and GA holds with buckets and one row, and writes the numbers
// as JSON; no seat is held twice. Only that numbers come out is asserted.
func TestLoadtestHoldsCommand(t *testing.T) {
	r := redistest.New(t)
	env := apptest.New(t, apptest.Options{Shards: 1, RedisURL: r.URL, RedisPrefix: r.Prefix, Projectors: true})
	t.Setenv("SEATGHOR_AUTH_SECRET", apptest.Secret)
	file := filepath.Join(t.TempDir(), "holds.json")
	var out bytes.Buffer
	err := run(context.Background(), []string{"loadtest", "holds", "--url", env.URL, "--admin-url", env.AdminURL,
		"--pg-url", env.App.Router.Shards()[0].Config().ConnString(), "--redis-url", r.URL, "--redis-prefix", r.Prefix,
		"--concurrency", "4", "--show-seats", "1000", "--shows", "5", "--ga-places", "200", "--duration", "500ms",
		"--out", file}, &out, &out)
	require.NoError(t, err, out.String())
	t.Log("\n" + out.String())
	require.Contains(t, out.String(), "holds / baseline tx")

	b, err := os.ReadFile(file)
	require.NoError(t, err)
	var res loadtest.HoldsResult
	require.NoError(t, json.Unmarshal(b, &res))
	require.Len(t, res.Scenarios, 2)
	for _, sc := range res.Scenarios {
		require.Zero(t, sc.Oversold, sc.Name)
		require.Positive(t, sc.Holds.PerSecond, sc.Name)
		require.Positive(t, sc.HeldInDB, sc.Name)
		require.Positive(t, sc.Baseline.PerSecond, sc.Name)
		require.Positive(t, sc.SeatMap.PerSecond, sc.Name)
		require.Positive(t, sc.SeatMapBytes, sc.Name)
		require.Positive(t, sc.RedisGet.PerSecond, sc.Name)
		require.Positive(t, sc.HoldsRatio, sc.Name)
		require.Positive(t, sc.SeatMapRatio, sc.Name)
		require.Positive(t, sc.SeatMapLean.PerSecond, sc.Name)
		require.Equal(t, sc.SeatMapBytes, sc.SeatMapLeanBytes, "both clients read the same answer: %s", sc.Name)
		require.Positive(t, sc.SeatMapLeanRatio, sc.Name)
	}
	require.Len(t, res.Scenarios[0].Rebuilds, 3, "the big show's seat map rebuilt and timed")
	require.NotNil(t, res.GA)
	require.Positive(t, res.GA.Bucketed.PerSecond)
	require.Positive(t, res.GA.SingleRow.PerSecond)
	require.Zero(t, res.GA.OversoldGA)
}

// TestLoadtestHoldsOnTwoServers: with two shards on two PostgreSQL servers
// (the tests' and a throwaway cluster) and the seat maps in a Redis
// Cluster, `seatghor loadtest holds` given both shards' --pg-url finds the
// holds on both, checks them for overselling across both, and reads
// PostgreSQL's CPU; its baseline GETs go through the cluster URL.
func TestLoadtestHoldsOnTwoServers(t *testing.T) {
	ctx := context.Background()
	cluster, err := pgcluster.Start(ctx, pgcluster.Config{Dir: t.TempDir(), Fast: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cluster.Stop(context.Background()) })
	require.NoError(t, cluster.CreateDatabase(ctx, "shard_remote"))
	remote := cluster.URL("shard_remote")
	require.NoError(t, migrations.UpURL(ctx, remote, migrations.Shard))

	r := redistest.NewCluster(t)
	env := apptest.New(t, apptest.Options{ShardURLs: []string{remote}, Shards: 1, RedisURL: r.URL, RedisPrefix: r.Prefix, Projectors: true})
	require.Len(t, env.ShardURLs, 2)
	t.Setenv("SEATGHOR_AUTH_SECRET", apptest.Secret)
	file := filepath.Join(t.TempDir(), "holds.json")
	var out bytes.Buffer
	err = run(ctx, []string{"loadtest", "holds", "--url", env.URL, "--admin-url", env.AdminURL,
		"--pg-url", env.ShardURLs[0], "--pg-url", env.ShardURLs[1], "--redis-url", r.URL, "--redis-prefix", r.Prefix,
		"--concurrency", "4", "--show-seats", "0", "--shows", "10", "--ga-places", "0", "--duration", "500ms",
		"--out", file}, &out, &out)
	require.NoError(t, err, out.String())
	t.Log("\n" + out.String())

	b, err := os.ReadFile(file)
	require.NoError(t, err)
	var res loadtest.HoldsResult
	require.NoError(t, json.Unmarshal(b, &res))
	require.Len(t, res.Scenarios, 1)
	sc := res.Scenarios[0]
	require.Zero(t, sc.Oversold)
	ok := sc.Holds.Calls
	for _, n := range sc.Holds.Errors {
		ok -= n
	}
	require.Positive(t, ok)
	require.Equal(t, ok, sc.HeldInDB, "the held seats of both shards counted")
	require.Positive(t, sc.HoldsCPU.DatabaseUS)
	require.Positive(t, sc.RedisGet.PerSecond)
	// Placement put buses on both shards (ten shows from eight creators:
	// some creator's second show sees its first placed); HeldInDB above is
	// the sum over both.
	for _, u := range env.ShardURLs {
		conn, err := pgx.Connect(ctx, u)
		require.NoError(t, err)
		var shows, held int
		require.NoError(t, conn.QueryRow(ctx, `SELECT count(DISTINCT show_id), count(*) FILTER (WHERE status <> 'available') FROM seats`).Scan(&shows, &held))
		require.NoError(t, conn.Close(ctx))
		require.Positive(t, shows, u)
		t.Logf("%s: %d buses, %d seats held", u, shows, held)
	}
}

// TestLoadtestHoldsSeatMapOnly: --seatmap-only measures the seat-map read
// and its Redis baseline alone: no holds, no GA.
func TestLoadtestHoldsSeatMapOnly(t *testing.T) {
	r := redistest.New(t)
	env := apptest.New(t, apptest.Options{Shards: 1, RedisURL: r.URL, RedisPrefix: r.Prefix, Projectors: true})
	t.Setenv("SEATGHOR_AUTH_SECRET", apptest.Secret)
	file := filepath.Join(t.TempDir(), "seatmap.json")
	var out bytes.Buffer
	err := run(context.Background(), []string{"loadtest", "holds", "--url", env.URL, "--admin-url", env.AdminURL,
		"--pg-url", env.App.Router.Shards()[0].Config().ConnString(), "--redis-url", r.URL, "--redis-prefix", r.Prefix,
		"--concurrency", "4", "--show-seats", "1000", "--shows", "0", "--ga-places", "200", "--duration", "300ms",
		"--seatmap-only", "--out", file}, &out, &out)
	require.NoError(t, err, out.String())
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	var res loadtest.HoldsResult
	require.NoError(t, json.Unmarshal(b, &res))
	require.Len(t, res.Scenarios, 1)
	sc := res.Scenarios[0]
	require.Zero(t, sc.Holds.Calls)
	require.Empty(t, sc.Rebuilds)
	require.Positive(t, sc.SeatMap.PerSecond)
	require.Positive(t, sc.RedisGet.PerSecond)
	require.Positive(t, sc.SeatMapRatio)
	require.Positive(t, sc.SeatMapLean.PerSecond, "the lean client's phase")
	require.Empty(t, sc.SeatMapLean.Errors)
	require.Equal(t, sc.SeatMapBytes, sc.SeatMapLeanBytes)
	require.Positive(t, sc.SeatMapLeanRatio)
	require.Nil(t, res.GA, "no GA phase")
}
