package api

import (
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// BuildInfo is the seatghor_build_info gauge: always 1, its labels say
// which build answers — the module's version, the commit it was
// built from and the Go release — so a dashboard can tell the two halves
// of a rollout apart.
func BuildInfo() prometheus.Collector {
	version, revision := "unknown", "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && s.Value != "" {
				revision = s.Value
			}
		}
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "seatghor_build_info",
		Help: "Always 1; the labels are the build's module version, VCS revision and Go version.",
		ConstLabels: prometheus.Labels{"version": version, "revision": revision,
			"goversion": runtime.Version()},
	})
	g.Set(1)
	return g
}
