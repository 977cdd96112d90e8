package loadtest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/internal/devenv/pgcluster"
	"github.com/seatghor/seatghor/internal/testkit/pgtest"
)

// TestCPUSumsTheBackendsOfEveryServer: the PostgreSQL CPU of a phase is
// read from the backends of every database given, on every server (here
// the tests' server and a throwaway cluster): the marks hold both pools'
// backends, and work done on the second server alone shows up.
func TestCPUSumsTheBackendsOfEveryServer(t *testing.T) {
	ctx := context.Background()
	cluster, err := pgcluster.Start(ctx, pgcluster.Config{Dir: t.TempDir(), Fast: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cluster.Stop(context.Background()) })
	var pools []*pgxpool.Pool
	var pids []int
	for _, u := range []string{pgtest.Server(t).URL("postgres"), cluster.URL("postgres")} {
		p, err := pgxpool.New(ctx, u)
		require.NoError(t, err)
		t.Cleanup(p.Close)
		var pid int
		require.NoError(t, p.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid))
		pools, pids = append(pools, p), append(pids, pid)
	}

	before := cpuNow(ctx, pools, nil)
	for _, pid := range pids {
		require.Contains(t, before.database, pid, "a backend of each server")
	}
	// A few hundred ms of CPU on the second server only: many clock ticks.
	_, err = pools[1].Exec(ctx, `SELECT count(*) FROM generate_series(1, 5000000)`)
	require.NoError(t, err)
	used := before.per(cpuNow(ctx, pools, nil), 1)
	require.Positive(t, used.DatabaseUS)
}
