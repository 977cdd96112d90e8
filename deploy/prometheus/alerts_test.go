// Package alerts_test checks deploy/prometheus/alerts.yaml offline.
package alerts_test

import (
	"errors"
	"log/slog"
	"os"
	"sort"
	"strings"
	"testing"

	grafanaprom "github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/deploy/grafana"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/internal/testkit/redistest"
)

// probe describes one metric name, to ask a registry whether it holds it.
type probe struct{ desc *prometheus.Desc }

func (p probe) Describe(ch chan<- *prometheus.Desc) { ch <- p.desc }
func (p probe) Collect(chan<- prometheus.Metric)    {}

// registered says whether reg holds a metric named name: a registry refuses
// a second descriptor of a name with another help text (it holds the name),
// and takes one it has never seen (then it is taken out again).
func registered(t *testing.T, reg *prometheus.Registry, name string) bool {
	p := probe{prometheus.NewDesc(name, "probe of the alert rules' test", nil, nil)}
	err := reg.Register(p)
	if err == nil {
		require.True(t, reg.Unregister(p))
		return false
	}
	var are prometheus.AlreadyRegisteredError
	require.False(t, errors.As(err, &are), "%s: %v", name, err)
	return true
}

// metricNames are the metric names expr selects, histograms' series named
// by their histogram.
func metricNames(t *testing.T, p parser.Parser, expr string) []string {
	node, err := p.ParseExpr(expr)
	require.NoError(t, err, expr)
	var names []string
	parser.Inspect(node, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			require.NotEmpty(t, vs.Name, "%s: select metrics by name", expr)
			name := vs.Name
			for _, suffix := range []string{"_bucket", "_count", "_sum"} {
				name = strings.TrimSuffix(name, suffix)
			}
			names = append(names, name)
		}
		return nil
	})
	return names
}

// TestAlertRulesParseAndUseOnlyExportedMetrics: the alert rules of R-11
// are valid Prometheus rules (Prometheus's own rule-file checker: YAML
// fields, PromQL, templates), each has a summary and a runbook, and every
// metric they read is one a running platform registers (with its read
// side, waiting rooms and rate limits) — an alert on a name nobody exports
// never fires.
func TestAlertRulesParseAndUseOnlyExportedMetrics(t *testing.T) {
	p := parser.NewParser(parser.Options{})
	groups, errs := rulefmt.ParseFile("alerts.yaml", false, model.UTF8Validation, p, slog.New(slog.DiscardHandler))
	require.Empty(t, errs)
	require.NotEmpty(t, groups.Groups)

	r := redistest.New(t)
	env := apptest.New(t, apptest.Options{Shards: 1, RedisURL: r.URL, RedisPrefix: r.Prefix, Projectors: true})
	alerts := map[string]bool{}
	used := map[string]bool{}
	for _, g := range groups.Groups {
		for _, rule := range g.Rules {
			require.NotEmpty(t, rule.Alert, "%s: only alerting rules here", g.Name)
			require.False(t, alerts[rule.Alert], "alert %s twice", rule.Alert)
			alerts[rule.Alert] = true
			require.NotEmpty(t, rule.Annotations["summary"], rule.Alert)
			require.NotEmpty(t, rule.Annotations["runbook"], rule.Alert)
			require.Contains(t, []string{"critical", "warning"}, rule.Labels["severity"], rule.Alert)
			for _, name := range metricNames(t, p, rule.Expr) {
				used[name] = true
				require.True(t, registered(t, env.App.Registry, name), "%s reads %s, which the platform does not export", rule.Alert, name)
			}
		}
	}
	names := make([]string, 0, len(used))
	for n := range used {
		names = append(names, n)
	}
	sort.Strings(names)
	t.Logf("%d alerts read %d metrics: %s", len(alerts), len(names), strings.Join(names, " "))
}

// TestDashboardReadsOnlyExportedMetrics: every query of the on-sale
// dashboard (deploy/grafana) is valid PromQL over metrics a running
// platform registers, so no panel stays empty for a misspelt name.
func TestDashboardReadsOnlyExportedMetrics(t *testing.T) {
	d, err := grafana.OnSale()
	require.NoError(t, err)
	p := parser.NewParser(parser.Options{})
	r := redistest.New(t)
	env := apptest.New(t, apptest.Options{Shards: 1, RedisURL: r.URL, RedisPrefix: r.Prefix, Projectors: true})
	queries := 0
	for _, panel := range d.Panels {
		require.NotNil(t, panel.Panel, "the dashboard has no rows")
		for _, target := range panel.Panel.Targets {
			q, ok := target.(grafanaprom.Dataquery)
			require.True(t, ok, "%s: only Prometheus queries", *panel.Panel.Title)
			// Grafana fills $__rate_interval in; Prometheus's parser needs a duration.
			expr := strings.ReplaceAll(q.Expr, "$__rate_interval", "5m")
			for _, name := range metricNames(t, p, expr) {
				require.True(t, registered(t, env.App.Registry, name), "panel %q reads %s, which the platform does not export", *panel.Panel.Title, name)
			}
			queries++
		}
	}
	require.Positive(t, queries)
}

// TestOperationsNamesEveryAlert: docs/operations.md's table of alerts, the
// operator's map of what pages them, lists every alert of alerts.yaml.
func TestOperationsNamesEveryAlert(t *testing.T) {
	p := parser.NewParser(parser.Options{})
	groups, errs := rulefmt.ParseFile("alerts.yaml", false, model.UTF8Validation, p, slog.New(slog.DiscardHandler))
	require.Empty(t, errs)
	doc, err := os.ReadFile("../../docs/operations.md")
	require.NoError(t, err)
	for _, g := range groups.Groups {
		for _, rule := range g.Rules {
			require.True(t, strings.Contains(string(doc), "`"+rule.Alert+"`"), "docs/operations.md does not list the alert %s", rule.Alert)
		}
	}
}
