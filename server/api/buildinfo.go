package api

import (
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// Build says which build this is: the module's version, the commit it was
// built from ("unknown" outside a VCS checkout) and the Go release.
type Build struct {
	Version, Revision, GoVersion string
}

// ReadBuild reads the running binary's build information; `seatghor
// version` prints it and the seatghor_build_info gauge carries it.
func ReadBuild() Build {
	b := Build{Version: "unknown", Revision: "unknown", GoVersion: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			b.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && s.Value != "" {
				b.Revision = s.Value
			}
		}
	}
	return b
}

// BuildInfo is the seatghor_build_info gauge: always 1, its labels say
// which build answers — the module's version, the commit it was
// built from and the Go release — so a dashboard can tell the two halves
// of a rollout apart.
func BuildInfo() prometheus.Collector {
	b := ReadBuild()
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "seatghor_build_info",
		Help: "Always 1; the labels are the build's module version, VCS revision and Go version.",
		ConstLabels: prometheus.Labels{"version": b.Version, "revision": b.Revision,
			"goversion": b.GoVersion},
	})
	g.Set(1)
	return g
}
