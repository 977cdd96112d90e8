package api_test

import (
	"io"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/internal/testkit/apptest"
)

// TestAdminMetricsSayWhichBuildAnswers: the admin listener's /metrics has
// seatghor_build_info, value 1, labelled with the module version, the VCS
// revision and the Go version.
func TestAdminMetricsSayWhichBuildAnswers(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 1})
	families, err := env.App.Registry.Gather()
	require.NoError(t, err)
	var labels map[string]string
	for _, f := range families {
		if f.GetName() != "seatghor_build_info" {
			continue
		}
		require.Len(t, f.GetMetric(), 1)
		m := f.GetMetric()[0]
		require.InDelta(t, 1, m.GetGauge().GetValue(), 0)
		labels = map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
	}
	require.NotNil(t, labels, "no seatghor_build_info")
	require.Equal(t, runtime.Version(), labels["goversion"])
	require.NotEmpty(t, labels["version"])
	require.NotEmpty(t, labels["revision"])

	resp, err := env.HTTP.Get(env.AdminURL + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Contains(t, string(body), `seatghor_build_info{goversion="`+runtime.Version()+`"`)
}

// TestSeatDatabaseRoundTripsAreTimed: every round trip to a database is
// observed in seatghor_db_round_trip_seconds{database}, so the seat
// databases' p99 can be alerted on.
func TestSeatDatabaseRoundTripsAreTimed(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 2})
	count := func(database string) uint64 {
		families, err := env.App.Registry.Gather()
		require.NoError(t, err)
		for _, f := range families {
			if f.GetName() != "seatghor_db_round_trip_seconds" {
				continue
			}
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "database" && l.GetValue() == database {
						return m.GetHistogram().GetSampleCount()
					}
				}
			}
		}
		t.Fatalf("no seatghor_db_round_trip_seconds for %s", database)
		return 0
	}
	shard := env.App.Router.Shards()[1]
	before := count(shard.Name)
	for range 3 {
		_, err := shard.Exec(t.Context(), "SELECT 1")
		require.NoError(t, err)
	}
	// A scrape queries the shards too (the payment gauges), so at least 3.
	require.GreaterOrEqual(t, count(shard.Name), before+3)
}
