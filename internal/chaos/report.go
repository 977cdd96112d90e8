package chaos

import (
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Result is what a run did and found; --out writes it as JSON.
type Result struct {
	Config     Config    `json:"config"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	Machine    Machine   `json:"machine"`
	Load       Load      `json:"load"`
	// Schedule is the faults as planned (the seed's), Faults as applied.
	Schedule []Fault    `json:"schedule"`
	Faults   []Injected `json:"faults"`
	Outages  []Outage   `json:"outages"`
	// Settled is how long the payments took to settle after the load.
	Settled     time.Duration `json:"settled"`
	Convergence Convergence   `json:"convergence"`
	Checks      []Check       `json:"checks"`
}

// Violations is the sum of every check's violations: 0 or the run failed.
func (r Result) Violations() int64 {
	var n int64
	for _, c := range r.Checks {
		n += c.Violations
	}
	return n
}

// Machine is where the run ran: its CPUs and how loaded it was (the
// machine is shared; the load averages say by how much).
type Machine struct {
	CPUs       int        `json:"cpus"`
	GoVersion  string     `json:"go_version"`
	LoadBefore [3]float64 `json:"load_before"`
	// LoadMax is the highest 1-minute load average seen during the load.
	LoadMax float64 `json:"load_max"`
}

func machine() Machine {
	return Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), LoadBefore: loadAverage()}
}

// loadAverage reads /proc/loadavg (zeros where there is none).
func loadAverage() [3]float64 {
	var out [3]float64
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return out
	}
	for i, f := range strings.Fields(string(b)) {
		if i == 3 {
			break
		}
		out[i], _ = strconv.ParseFloat(f, 64)
	}
	return out
}

// Load is the load the run sent and how the platform carried it.
type Load struct {
	Duration  time.Duration       `json:"duration"`
	Requests  int                 `json:"requests"`
	PerSecond float64             `json:"per_second"`
	RPCs      map[string]RPCStats `json:"rpcs"`
	Failovers int                 `json:"failovers"`
	// What the crowd did.
	Buyers, Payers, Seats, GAPlaces, Holds, GaveUp, Orders, Payments, Confirmed, Cancelled, CheckedIn int
	// What the counter sold and took back for cash, and the console's
	// edits answered.
	CounterSales, CounterRefunds, ConsoleEdits int
	// Malformed requests and gateway webhooks (forged, stale) sent.
	Malformed, Forged, Stale int
	// Internal counts, by RPC, the well-formed requests answered internal
	// or unknown (the faults may cause some; they are reported).
	Internal map[string]int `json:"internal,omitempty"`
}

// Outage is one server's outage: what the holds and payments met during
// it, what the reads it serves answered, and how long its read model took
// to catch up.
type Outage struct {
	Name string        `json:"name"`
	For  time.Duration `json:"for"`
	// Writes are the holds, orders and payments sent during the outage;
	// WriteErrors those the platform failed (not a taken seat).
	Writes      int     `json:"writes"`
	WriteErrors int     `json:"write_errors"`
	ErrorRate   float64 `json:"error_rate"`
	// Reads are the reads the server serves (searches, or e-ticket
	// downloads), ReadCodes their answers; none may be internal.
	Reads         int            `json:"reads"`
	ReadsInternal int            `json:"reads_internal"`
	ReadCodes     map[string]int `json:"read_codes"`
	// CatchUp is how long after the server was back its read model had
	// every event of before; -1: not before the read models' watch ended.
	CatchUp time.Duration `json:"catch_up"`
}

// outageReads are the RPCs each outage degrades.
var outageReads = map[FaultKind][]string{FaultMeili: {"SearchTrips"}, FaultMinIO: {"GetTicketDownload"}}

// writeRPCs are the writes whose errors an outage must not raise.
var writeRPCs = []string{"CreateHold", "CreateOrder", "StartPayment"}

func (r *run) outages() []Outage {
	calls := r.rec.snapshot()
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Outage
	for _, k := range []FaultKind{FaultMeili, FaultMinIO} {
		w, ok := r.windows[k]
		if !ok {
			continue
		}
		o := Outage{Name: outageProcess[k], For: w.to.Sub(w.from).Round(time.Millisecond), ReadCodes: map[string]int{},
			CatchUp: r.catchUp[k]}
		for _, c := range calls {
			if c.at.Before(w.from) || !c.at.Before(w.to) {
				continue
			}
			switch {
			case slices.Contains(writeRPCs, c.rpc):
				o.Writes++
				if serverError(c.code) {
					o.WriteErrors++
				}
			case slices.Contains(outageReads[k], c.rpc):
				o.Reads++
				o.ReadCodes[c.code]++
				if c.code == "internal" || c.code == "unknown" {
					o.ReadsInternal++
				}
			}
		}
		if o.Writes > 0 {
			o.ErrorRate = float64(o.WriteErrors) / float64(o.Writes)
		}
		out = append(out, o)
	}
	return out
}

func (r *run) loadSummary() Load {
	calls := r.rec.snapshot()
	rpcs, n := stats(calls, r.loadStart, r.loadEnd)
	r.mu.Lock()
	defer r.mu.Unlock()
	l := Load{Duration: r.loadEnd.Sub(r.loadStart).Round(time.Millisecond), Requests: n, RPCs: rpcs, Failovers: r.rec.failovers,
		Buyers: r.cfg.Buyers, Payers: r.cfg.Payers, Seats: r.seatCount(), GAPlaces: r.cfg.GAPlaces, Holds: len(r.holds), GaveUp: r.gaveUp,
		Orders: len(r.orders), Payments: r.payments, Malformed: r.bad.sent, Forged: r.hooks.forged, Stale: r.hooks.stale,
		ConsoleEdits: len(r.edits.answered)}
	if r.desk != nil {
		l.CounterSales, l.CounterRefunds = len(r.desk.sold), len(r.desk.refunds)
	}
	l.PerSecond = float64(n) / max(l.Duration.Seconds(), 0.001)
	for rpc, st := range rpcs {
		if k := st.Codes["internal"] + st.Codes["unknown"]; k > 0 && rpc != "malformed" {
			if l.Internal == nil {
				l.Internal = map[string]int{}
			}
			l.Internal[rpc] = k
		}
	}
	for _, o := range r.orders {
		if o.confirmed {
			l.Confirmed++
		}
		if o.cancelTried {
			l.Cancelled++
		}
		if o.checkedIn {
			l.CheckedIn++
		}
	}
	return l
}

// Table prints the result: the load, the faults, the outages, the read
// models and the invariants.
func (r Result) Table(w io.Writer) error {
	var b strings.Builder
	c := r.Config
	fmt.Fprintf(&b, "seatghor chaos  preset %s  seed %d", c.Preset, c.Seed)
	if len(c.Broken) > 0 {
		fmt.Fprintf(&b, "  BROKEN BUILD: %s", strings.Join(c.Broken, ","))
	}
	fmt.Fprintf(&b, "\n(--seed %d replays this schedule and every choice of the load; not the interleaving of the real processes)\n", c.Seed)
	m := r.Machine
	fmt.Fprintf(&b, "machine: %d CPUs, load average %.1f before, up to %.1f during the load (shared)\n\n", m.CPUs, m.LoadBefore[0], m.LoadMax)
	l := r.Load
	fmt.Fprintf(&b, "load: %d buyers on %d seats and %d general-admission places, %d payers, in %s: %d requests, %.1f req/s, %d failovers\n",
		l.Buyers, l.Seats, l.GAPlaces, l.Payers, l.Duration, l.Requests, l.PerSecond, l.Failovers)
	fmt.Fprintf(&b, "      %d holds (%d gave up), %d orders, %d payments started, %d confirmed, %d cancelled, %d checked in;\n",
		l.Holds, l.GaveUp, l.Orders, l.Payments, l.Confirmed, l.Cancelled, l.CheckedIn)
	fmt.Fprintf(&b, "      %d malformed requests, %d forged and %d stale gateway webhooks\n\n", l.Malformed, l.Forged, l.Stale)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rpc\trequests\treq/s\tp50 ms\tp99 ms\tanswers\t")
	for _, name := range slices.Sorted(maps.Keys(l.RPCs)) {
		s := l.RPCs[name]
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%.1f\t%s\t\n", name, s.Requests, s.PerSecond, s.P50ms, s.P99ms, codes(s.Codes))
	}
	_ = tw.Flush()
	b.WriteString("\nfaults injected:\n")
	for _, k := range faultCounts(r.Faults) {
		fmt.Fprintf(&b, "  %s\n", k)
	}
	for _, o := range r.Outages {
		fmt.Fprintf(&b, "outage %s %.1fs: holds and payments %d, failed %d (%.1f%%); reads %s; caught up %s after\n",
			o.Name, o.For.Seconds(), o.Writes, o.WriteErrors, 100*o.ErrorRate, codes(o.ReadCodes), durationOr(o.CatchUp))
	}
	cv := r.Convergence
	fmt.Fprintf(&b, "\npayments settled %s after the load; read models equal to the databases %s after the last write (target %s):\n",
		r.Settled, durationOr(cv.Took), cv.Within)
	for _, name := range slices.Sorted(maps.Keys(cv.Models)) {
		fmt.Fprintf(&b, "  %-20s %s\n", name, cv.Models[name])
	}
	for _, name := range slices.Sorted(maps.Keys(cv.Left)) {
		fmt.Fprintf(&b, "  %-20s NOT EQUAL: %s\n", name, cv.Left[name])
	}
	for _, name := range slices.Sorted(maps.Keys(cv.Moved)) {
		fmt.Fprintf(&b, "  %-20s moved apart at the last look, equal again within the target: %s\n", name, cv.Moved[name])
	}
	b.WriteString("\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\tinvariant\tchecked\tviolations")
	var broken []Check
	for _, ch := range r.Checks {
		mark := ""
		if ch.Violations > 0 {
			mark, broken = "  <--", append(broken, ch)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d%s\n", ch.Req, ch.Name, ch.Checked, ch.Violations, mark)
	}
	_ = tw.Flush()
	for _, ch := range broken {
		fmt.Fprintf(&b, "  %s %s: %s\n", ch.Req, ch.Name, ch.Detail)
	}
	if len(l.Internal) > 0 {
		fmt.Fprintf(&b, "\nwell-formed requests answered internal (during the faults; not an invariant): %s\n", codes(l.Internal))
	}
	fmt.Fprintf(&b, "\nviolations: %d\n", r.Violations())
	_, err := io.WriteString(w, b.String())
	return err
}

// codes prints answer counts, most first.
func codes(m map[string]int) string {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int {
		if m[a] != m[b] {
			return m[b] - m[a]
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// faultCounts sums the faults applied by kind and target.
func faultCounts(fs []Injected) []string {
	type key struct {
		kind   FaultKind
		target string
	}
	n := map[key]int{}
	down := map[key]time.Duration{}
	back := map[key]time.Duration{}
	failed := map[key]int{}
	for _, f := range fs {
		k := key{f.Kind, f.Target}
		n[k]++
		down[k] += f.Down
		back[k] = max(back[k], f.Recovered)
		if f.Err != "" {
			failed[k]++
		}
	}
	keys := slices.Collect(maps.Keys(n))
	slices.SortFunc(keys, func(a, b key) int {
		return strings.Compare(string(a.kind)+a.target, string(b.kind)+b.target)
	})
	var out []string
	for _, k := range keys {
		s := fmt.Sprintf("%-22s %-12s ×%-3d down %6.1fs in all, back within %5.1fs", k.kind, k.target, n[k], down[k].Seconds(), back[k].Seconds())
		if failed[k] > 0 {
			s += fmt.Sprintf(", %d FAILED", failed[k])
		}
		out = append(out, s)
	}
	return out
}

func durationOr(d time.Duration) string {
	if d < 0 {
		return "not within the watch"
	}
	return d.String()
}
