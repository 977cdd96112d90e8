package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/clients/go/loadtest"
	"github.com/seatghor/seatghor/server/apptest"
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
