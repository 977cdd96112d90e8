package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/internal/loadtest"
)

// clusterPresetEnv picks the load of TestClusterOnSaleWithAPIKilled:
// unset, a short run (go test ./...); "long", the run of make cluster-onsale.
const clusterPresetEnv = "SEATGHOR_TEST_CLUSTER_ONSALE"

// TestClusterOnSaleWithAPIKilled runs `seatghor cluster up` (this test
// binary as seatghor), sends the on-sale crowd through both API processes,
// SIGKILLs one of them in the middle, and checks that no confirmed order
// was lost, no seat sold twice and `seatghor verify` passes on the
// cluster's databases; `cluster down` then leaves no recorded process
// running.
func TestClusterOnSaleWithAPIKilled(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const secret = "cluster-test-secret-of-at-least-32-bytes"
	t.Setenv("SEATGHOR_AUTH_SECRET", secret)
	t.Cleanup(func() { // also when the test fails half-way
		var out bytes.Buffer
		if err := run(ctx, []string{"cluster", "down", "--data-dir", dir}, &out, &out); err != nil {
			t.Errorf("cluster down at cleanup: %v\n%s", err, out.String())
		}
	})
	up := exec.Command(os.Args[0], "cluster", "up", "--data-dir", dir)
	var stdout, stderr bytes.Buffer
	up.Env = append(os.Environ(), runMainEnv+"=1", "SEATGHOR_LOG_LEVEL=warn")
	up.Stdout, up.Stderr = &stdout, &stderr
	began := time.Now()
	require.NoError(t, up.Run(), "stderr:\n%s\nstdout:\n%s", stderr.String(), stdout.String())
	t.Logf("cluster up took %s:\n%s", time.Since(began).Round(time.Millisecond), stdout.String())

	var apis []string
	for _, l := range strings.Split(stdout.String(), "\n") {
		if url, ok := strings.CutPrefix(l, "api "); ok {
			apis = append(apis, url)
		}
	}
	require.Len(t, apis, 2, "one api line per API process")
	for _, url := range apis {
		resp, err := http.Get(url + "/readyz")
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, url)
	}
	st, err := readClusterState(dir)
	require.NoError(t, err)
	procs := map[string]clusterProc{}
	for _, p := range st.Processes {
		procs[p.Name] = p
	}
	require.Len(t, st.Postgres, 2)
	require.Len(t, st.Redis, 6)

	var out bytes.Buffer
	err = run(ctx, []string{"cluster", "up", "--data-dir", dir}, &out, &out)
	require.ErrorIs(t, err, errClusterUp, "a running cluster is not started twice")

	// The crowd through both API processes; api-2 dies (SIGKILL) while
	// buyers still arrive.
	args := []string{"loadtest", "onsale", "--url", strings.Join(apis, ","),
		"--admin-url", "http://" + procs["api-1"].Admin, "--admin-url", "http://" + procs["api-2"].Admin,
		"--buyers", "120", "--trips", "2", "--rows", "10", "--arrival", "5s"}
	killAfter := 2 * time.Second
	if os.Getenv(clusterPresetEnv) == "long" {
		args = append(args, "--buyers", "1200", "--trips", "40", "--arrival", "60s", "--ttl", "1m")
		killAfter = 20 * time.Second
	}
	file := filepath.Join(dir, "onsale.json")
	killed := make(chan error, 1)
	go func() {
		time.Sleep(killAfter) // the arrivals last longer: the kill falls mid-run
		killed <- procs["api-2"].Kill(ctx)
	}()
	out.Reset()
	require.NoError(t, run(ctx, append(args, "--out", file), &out, &out), out.String())
	require.NoError(t, <-killed)
	t.Log("\n" + out.String())
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	var res loadtest.Result
	require.NoError(t, json.Unmarshal(b, &res))
	require.Len(t, res.Phases, 1)
	ph := res.Phases[0]
	require.Zero(t, ph.Lost, "every order a buyer saw confirmed is confirmed")
	require.Zero(t, ph.Oversold, "no seat sold twice")
	require.Positive(t, ph.Sold)
	require.Positive(t, ph.Failovers, "buyers of the killed process moved to the other")

	out.Reset()
	require.ErrorIs(t, run(ctx, []string{"cluster", "status", "--data-dir", dir}, &out, &out), errClusterDown)
	require.Regexp(t, `api-2 +DOWN`, out.String())

	t.Setenv("SEATGHOR_CATALOG_URL", st.CatalogURL)
	t.Setenv("SEATGHOR_SHARD_URLS", strings.Join(st.ShardURLs, ","))
	t.Setenv("SEATGHOR_READ_URL", st.ReadURL)
	t.Setenv("SEATGHOR_GATEWAY_URL", st.GatewayURL)
	t.Setenv("SEATGHOR_WEBHOOK_SECRETS", devWebhookSecret)
	out.Reset()
	require.NoError(t, run(ctx, []string{"verify"}, &out, &out), out.String())
	require.Contains(t, out.String(), "ok   seats booked twice: 0")

	out.Reset()
	require.NoError(t, run(ctx, []string{"cluster", "down", "--data-dir", dir}, &out, &out), out.String())
	for _, p := range st.all() {
		require.False(t, p.Alive(), "%s (pid %d) still runs", p.Name, p.PID)
	}
	for _, pg := range st.Postgres {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(pg.Port), time.Second)
		if err == nil {
			c.Close()
		}
		require.Error(t, err, "PostgreSQL in %s still answers", pg.Dir)
	}
	out.Reset()
	require.NoError(t, run(ctx, []string{"cluster", "down", "--data-dir", dir}, &out, &out), "down again: %s", out.String())
}

// TestClusterCommandsOnAnEmptyDirectory: down has nothing to stop and
// succeeds; status says there is no cluster and exits 1.
func TestClusterCommandsOnAnEmptyDirectory(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"cluster", "down", "--data-dir", dir}, &out, &out), out.String())
	out.Reset()
	require.ErrorIs(t, run(context.Background(), []string{"cluster", "status", "--data-dir", dir}, &out, &out), errClusterDown)
	require.Contains(t, out.String(), "no cluster in "+dir)
}
