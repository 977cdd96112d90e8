package chaos

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestScheduleIsTheSeeds: the same seed and sizes give the same schedule
// (--seed replays it), another seed another one; every fault the preset
// asks for is in it, in time order, within the arrival window; the two
// outages, the PostgreSQL crash and the Redis failover do not overlap, and
// the kills fall outside them when there is room.
func TestScheduleIsTheSeeds(t *testing.T) {
	for name, cfg := range Presets() {
		t.Run(name, func(t *testing.T) {
			a, b := Schedule(cfg, 5), Schedule(cfg, 5)
			require.Equal(t, a, b, "the same seed, the same schedule")
			other := cfg
			other.Seed++
			require.NotEqual(t, a, Schedule(other, 5), "another seed, another schedule")

			kinds := map[FaultKind]int{}
			var windows []Fault
			for i, f := range a {
				kinds[f.Kind]++
				require.GreaterOrEqual(t, f.At, time.Duration(0))
				require.Less(t, f.end(), cfg.Arrival, "%s ends within the arrival window", f)
				if i > 0 {
					require.GreaterOrEqual(t, f.At, a[i-1].At, "in time order")
				}
				switch f.Kind {
				case FaultKill:
					require.Contains(t, killable, f.Target)
					require.Positive(t, f.Restart)
				case FaultMeili, FaultMinIO:
					require.Equal(t, cfg.Outage, f.For)
					windows = append(windows, f)
				case FaultPostgres:
					require.Positive(t, f.For)
					windows = append(windows, f)
				case FaultRedis:
					require.Less(t, f.Show, 5)
					windows = append(windows, f)
				}
			}
			require.Equal(t, map[FaultKind]int{FaultKill: cfg.Kills, FaultMeili: 1, FaultMinIO: 1, FaultPostgres: 1, FaultRedis: 1}, kinds)
			for i, w := range windows {
				for _, v := range windows[i+1:] {
					require.True(t, w.end() < v.At || v.end() < w.At, "%s and %s overlap", w, v)
				}
			}
			if name == "full" { // room for every kill between the windows
				for _, f := range a {
					if f.Kind != FaultKill {
						continue
					}
					for _, w := range windows {
						require.False(t, f.At > w.At && f.At < w.end(), "%s falls in %s", f, w)
					}
				}
			}
		})
	}
}

func TestPresetsAreValid(t *testing.T) {
	for name, cfg := range Presets() {
		require.NoError(t, cfg.Validate(), name)
		require.Equal(t, name, cfg.Preset)
	}
	bad := Presets()["short"]
	bad.Outage = bad.Arrival
	require.Error(t, bad.Validate(), "outages that do not fit")
	bad = Presets()["short"]
	bad.StadiumSeats = 30
	require.Error(t, bad.Validate(), "stadium rows of 20")
}

// TestBackwards: an order's statuses as read one after the other may stay
// or move forward, never back.
func TestBackwards(t *testing.T) {
	for _, tc := range []struct {
		statuses []string
		back     bool
	}{
		{nil, false},
		{[]string{"ORDER_STATUS_PENDING_PAYMENT", "ORDER_STATUS_PENDING_PAYMENT", "ORDER_STATUS_CONFIRMED"}, false},
		{[]string{"ORDER_STATUS_PENDING_PAYMENT", "ORDER_STATUS_EXPIRED", "ORDER_STATUS_REFUNDED"}, false},
		{[]string{"ORDER_STATUS_CONFIRMED", "ORDER_STATUS_CANCELLED"}, false},
		{[]string{"ORDER_STATUS_CONFIRMED", "ORDER_STATUS_PENDING_PAYMENT"}, true},
		{[]string{"ORDER_STATUS_CANCELLED", "ORDER_STATUS_CONFIRMED"}, true},
		{[]string{"ORDER_STATUS_EXPIRED", "ORDER_STATUS_CONFIRMED"}, true},
		{[]string{"ORDER_STATUS_REFUNDED", "ORDER_STATUS_EXPIRED"}, true},
	} {
		require.Equal(t, tc.back, backwards(tc.statuses), "%v", tc.statuses)
	}
}

// TestStats: requests are counted by RPC within the window, with their
// answers; latencies are of the answered ones.
func TestStats(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var calls []record
	for i := range 100 {
		calls = append(calls, record{rpc: "CreateHold", at: t0.Add(time.Duration(i) * 10 * time.Millisecond),
			took: time.Duration(i+1) * time.Millisecond, code: "ok"})
	}
	calls = append(calls, record{rpc: "CreateHold", at: t0, took: time.Minute, code: "no answer"},
		record{rpc: "GetSeatMap", at: t0.Add(-time.Second), took: time.Millisecond, code: "ok"})
	s, n := stats(calls, t0, t0.Add(time.Second))
	require.Equal(t, 101, n, "the read before the window is left out")
	h := s["CreateHold"]
	require.Equal(t, 101, h.Requests)
	require.Equal(t, map[string]int{"ok": 100, "no answer": 1}, h.Codes)
	require.InDelta(t, 101, h.PerSecond, 0.001)
	require.InDelta(t, 51, h.P50ms, 0.001)
	require.InDelta(t, 99, h.P99ms, 0.001, "the unanswered call's minute is not a latency")
	require.True(t, serverError("no answer"))
	require.True(t, serverError("internal"))
	require.False(t, serverError("aborted"))
}

// TestTableAndDoc: the table and the document carry the seed, what
// --seed replays, the load, the faults, the outages, the read models and
// every invariant; violations are summed and shown.
func TestTableAndDoc(t *testing.T) {
	cfg := Presets()["full"]
	res := Result{Config: cfg, StartedAt: time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC), FinishedAt: time.Date(2026, 12, 3, 10, 12, 0, 0, time.UTC),
		Machine:  Machine{CPUs: 2, LoadBefore: [3]float64{3.5, 3, 2}, LoadMax: 9.25},
		Schedule: Schedule(cfg, 16),
		Load: Load{Duration: 5 * time.Minute, Requests: 1000, PerSecond: 3.3, Buyers: 2000, Payers: 1200, Seats: 1000, GAPlaces: 1200,
			Payments: 1800, Forged: 100, Stale: 100,
			RPCs: map[string]RPCStats{"CreateHold": {Requests: 10, PerSecond: 1, P50ms: 5, P99ms: 50, Codes: map[string]int{"ok": 9, "aborted": 1}}}},
		Faults: []Injected{{Fault: Fault{Kind: FaultKill, Target: "api-1"}, Down: 3 * time.Second, Recovered: 2 * time.Second},
			{Fault: Fault{Kind: FaultMeili, Target: "meilisearch", For: 20 * time.Second}, Down: 21 * time.Second, Recovered: time.Second}},
		Outages: []Outage{{Name: "meilisearch", For: 21 * time.Second, Writes: 100, WriteErrors: 1, ErrorRate: 0.01,
			Reads: 40, ReadCodes: map[string]int{"unavailable": 40}, CatchUp: 4 * time.Second}},
		Convergence: Convergence{Within: 30 * time.Second, Took: 7 * time.Second, Converged: true,
			Models: map[string]time.Duration{modelSeatMaps: time.Second, modelTrips: 7 * time.Second}},
		Checks: []Check{{Req: "R1", Name: "seats in two live holds or orders", Checked: 900}, {Req: "R3", Name: "order states going backwards", Checked: 5}},
	}
	var table bytes.Buffer
	require.NoError(t, res.Table(&table))
	out := table.String()
	for _, want := range []string{"seed 1", "--seed 1 replays this schedule", "not the interleaving", "2000 buyers", "CreateHold",
		"kill -9", "outage meilisearch", "caught up 4s", "trip index", "seats in two live holds or orders", "violations: 0"} {
		require.Contains(t, out, want)
	}
	require.Zero(t, res.Violations())

	var doc bytes.Buffer
	require.NoError(t, res.Doc(&doc))
	md := doc.String()
	require.True(t, strings.HasPrefix(md, "# Reliability under faults\n"))
	for _, want := range []string{"Seed 1, preset full", "load average was 3.5 before the run and up to 9.2", "| buyers (1 to 4 seats or places each) | 2,000 | 2000 |",
		"does not replay\nthe interleaving", "| CreateHold | 10 |", "| kill -9 | api-1 | 1 |", "| meilisearch | 21s |", "Violations: **0**",
		"| R1 | seats in two live holds or orders | 900 | 0 |", "```\n", "2000 buyers and 1200 payers",
		"| payments started (at least) | 2,000 | 1800 |", "Where the two columns differ"} {
		require.Contains(t, md, want)
	}
	// Past the count of payments, the row says the count was met.
	res.Load.Payments = 2150
	doc.Reset()
	require.NoError(t, res.Doc(&doc))
	require.Contains(t, doc.String(), "| payments started (at least) | 2,000 | 2,000 |")

	res.Checks[1].Violations = 2
	require.EqualValues(t, 2, res.Violations())
	table.Reset()
	require.NoError(t, res.Table(&table))
	require.Contains(t, table.String(), "violations: 2")
}
