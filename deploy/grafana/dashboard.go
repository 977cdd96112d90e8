// Package grafana builds the on-sale dashboard (deploy/grafana/onsale.json)
// with Grafana's foundation SDK: what an operator watches while a sale
// opens — holds per second, latency by RPC, the oversell guard,
// projector lag, the waiting rooms, payments in doubt and the ledger. The
// JSON is generated from this code and committed; its test checks the two
// agree and that every query reads a metric the platform exports.
package grafana

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// The RPC the on-sale is measured by (R-2's admission rate is holds).
const createHold = `procedure="/seatghor.booking.v1.HoldService/CreateHold"`

func query(expr, legend string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().Expr(expr).LegendFormat(legend)
}

func series(title, unit, description string, queries ...*prometheus.DataqueryBuilder) *timeseries.PanelBuilder {
	p := timeseries.NewPanelBuilder().Title(title).Unit(unit).Description(description).Min(0).Height(8).Span(12)
	for _, q := range queries {
		p.WithTarget(q)
	}
	return p
}

func single(title, unit, description string, q *prometheus.DataqueryBuilder) *stat.PanelBuilder {
	return stat.NewPanelBuilder().Title(title).Unit(unit).Description(description).Height(4).Span(6).WithTarget(q)
}

// OnSale is the dashboard, in the classic JSON model that every Grafana
// imports (the SDK marks it deprecated in favour of the v2 schema, which
// only Grafana 12's new dashboards API reads).
//
//lint:ignore SA1019 the classic model is the one every Grafana imports
func OnSale() (dashboard.Dashboard, error) {
	panels := []cog.Builder[dashboard.Panel]{
		single("Seats booked twice", "short", "The oversell guard: must be 0 (alert SeatghorSeatBookedTwice).",
			query(`max(seatghor_seats_booked_twice)`, "booked twice")),
		single("Trial balance", "short", "Sum of every ledger line in minor units: must be 0.",
			query(`max(seatghor_ledger_trial_balance_minor)`, "trial balance")),
		single("Payments unknown", "short", "Attempts whose outcome the gateway has not told yet; the workers recover them.",
			query(`sum(seatghor_payments_unknown)`, "unknown")),
		single("Refunds failed", "short", "Refunds the gateway refused: pay back by hand.",
			query(`sum(seatghor_refunds_failed)`, "failed")),
		series("Holds per second", "reqps", "CreateHold answers by result code.",
			query(`sum by (code) (rate(seatghor_rpc_duration_seconds_count{`+createHold+`}[$__rate_interval]))`, "{{code}}")),
		series("p99 by RPC", "s", "The slowest 1% of each RPC (R-11: CreateHold p99 is what the waiting room steers by).",
			query(`histogram_quantile(0.99, sum by (procedure, le) (rate(seatghor_rpc_duration_seconds_bucket[$__rate_interval])))`, "{{procedure}}")),
		series("Projector lag", "s", "How far each read model is behind its outbox (R-8.1).",
			query(`max by (projector, database) (seatghor_projector_lag_seconds)`, "{{projector}} {{database}}")),
		series("Outbox backlog", "short", "Events not yet applied, by projector.",
			query(`sum by (projector) (seatghor_projector_backlog_events)`, "{{projector}}")),
		series("Waiting room: admission", "short", "Admission rate A in force (R-9.4) and the admission number X.",
			query(`sum by (sale) (seatghor_waitingroom_admission_rate)`, "A {{sale}}"),
			query(`max by (sale) (seatghor_waitingroom_admission_number)`, "X {{sale}}")),
		series("Waiting room: depth", "short", "Places given out but not yet admitted, and what can still be held.",
			query(`sum by (sale) (seatghor_waitingroom_joined - seatghor_waitingroom_admission_number)`, "waiting {{sale}}"),
			query(`sum by (sale) (seatghor_waitingroom_available)`, "available {{sale}}")),
		series("Payments in doubt", "s", "The oldest open attempt; the count of unknown outcomes.",
			query(`max(seatghor_payments_open_oldest_seconds)`, "oldest open"),
			query(`sum(seatghor_payments_unknown)`, "unknown")),
		series("Seat database round trips", "s", "p99 of a round trip to each database: a hot shard shows here first (R-4.2).",
			query(`histogram_quantile(0.99, sum by (database, le) (rate(seatghor_db_round_trip_seconds_bucket[$__rate_interval])))`, "{{database}}")),
	}
	//lint:ignore SA1019 see OnSale
	b := dashboard.NewDashboardBuilder("Seatghor on-sale").
		Uid("seatghor-onsale").
		Description("What to watch while a sale opens (docs/operations.md).").
		Tags([]string{"seatghor"}).
		Refresh("10s").
		Time("now-1h", "now").
		Timezone(common.TimeZoneBrowser).
		WithVariable(dashboard.NewDatasourceVariableBuilder("datasource").Label("Prometheus").Type("prometheus"))
	for _, p := range panels {
		b.WithPanel(p)
	}
	return b.Build()
}
