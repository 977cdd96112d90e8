package network

import "github.com/prometheus/client_golang/prometheus"

// metrics count what the timetable runs do (R-11: a trip left alone is an
// operator's to look at).
type metrics struct {
	runs, made, withdrawn, failures prometheus.Counter
	leftAlone                       *prometheus.CounterVec
}

func newMetrics() metrics {
	return metrics{
		runs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "seatghor_timetable_runs_total",
			Help: "Runs of a timetable (by the job, or asked for through the API).",
		}),
		made: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "seatghor_timetable_trips_made_total",
			Help: "Trips the timetables made (shows created).",
		}),
		withdrawn: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "seatghor_timetable_trips_withdrawn_total",
			Help: "Trips nobody had bought, withdrawn because their timetable changed.",
		}),
		failures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "seatghor_timetable_run_failures_total",
			Help: "Timetable runs that stopped because the catalog refused a trip (the run's failure says why).",
		}),
		leftAlone: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seatghor_timetable_trips_left_alone_total",
			Help: "Trips with sales that no longer follow their changed timetable and were kept as they were, once per change, by reason (has_sales, allocated).",
		}, []string{"reason"}),
	}
}

func (m metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.runs, m.made, m.withdrawn, m.failures, m.leftAlone}
}
