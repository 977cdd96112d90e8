package grafana

import (
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite onsale.json from OnSale")

// TestDashboardFileIsGenerated: onsale.json is OnSale's JSON, and it decodes
// strictly into Grafana's dashboard schema. After changing OnSale:
// go test ./deploy/grafana -run TestDashboardFileIsGenerated -args -update
func TestDashboardFileIsGenerated(t *testing.T) {
	d, err := OnSale()
	require.NoError(t, err)
	want, err := json.MarshalIndent(d, "", "  ")
	require.NoError(t, err)
	want = append(want, '\n')
	if *update {
		require.NoError(t, os.WriteFile("onsale.json", want, 0o644))
	}
	got, err := os.ReadFile("onsale.json")
	require.NoError(t, err)
	require.Equal(t, string(want), string(got), "onsale.json is stale: run the test with -args -update")

	plugins.RegisterDefaultPlugins()
	//lint:ignore SA1019 the classic model (see OnSale)
	var strict dashboard.Dashboard
	err = strict.UnmarshalJSONStrict(got)
	// The SDK answers success with an empty, typed-nil cog.BuildErrors.
	if be, ok := err.(cog.BuildErrors); ok && len(be) == 0 {
		err = nil
	}
	require.NoError(t, err)
	require.Equal(t, "seatghor-onsale", *strict.Uid)
}
