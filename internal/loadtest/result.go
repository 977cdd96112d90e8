package loadtest

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Result is one load test run, machine-readable so two runs can be compared.
type Result struct {
	Config     Config    `json:"config"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	Phases     []Phase   `json:"phases"`
}

// Phase is what one hold TTL did.
type Phase struct {
	HoldTTL time.Duration `json:"hold_ttl"`
	Seats   int           `json:"seats"`
	// Elapsed is from the first arrival to the last buyer's last answer.
	Elapsed time.Duration `json:"elapsed"`
	// Sold counts seats in confirmed orders; Oversold the seats confirmed
	// for more than one order (must be 0); BookedOnServer what the seat
	// maps show as booked afterwards (equal to Sold).
	Sold           int `json:"sold"`
	Oversold       int `json:"oversold"`
	BookedOnServer int `json:"booked_on_server"`
	// Lost counts the orders a buyer saw confirmed that the server does
	// not hold confirmed afterwards (must be 0). Failovers counts calls
	// sent again, with their idempotency key, to another API process
	// because theirs was gone.
	Lost      int `json:"lost"`
	Failovers int `json:"failovers"`
	// Holds, by payers and leavers, and buyers who found nothing.
	PayerHolds  int `json:"payer_holds"`
	LeaverHolds int `json:"leaver_holds"`
	GaveUp      int `json:"gave_up"`
	// FirstSoldOut is when a buyer first found no seats on any trip, from
	// the first arrival; 0 when it never happened. GhostSeats are the
	// seats held by leavers that were still within their TTL then.
	FirstSoldOut time.Duration `json:"first_sold_out"`
	GhostSeats   int           `json:"ghost_seats"`
	GhostShare   float64       `json:"ghost_share"`
	// Model is what the seed\'s on-sale estimator predicts for this phase.
	Model Model `json:"model"`
	// Admission is the waiting rooms' state each second: the rate the
	// controller chose (summed over the trips), admitted and waiting.
	Admission       []AdmissionSample   `json:"admission,omitempty"`
	RPC             map[string]RPCStats `json:"rpc"`
	DBWritesPerSec  float64             `json:"db_writes_per_sec"`
	DBStmtsPerSec   float64             `json:"db_statements_per_sec"`
	ProjectorLagMax float64             `json:"projector_lag_max_seconds"`
}

// Model is the seed's estimator (seed 000 §2) for a phase: with buyers
// arriving at rate A, a share p paying for k seats each, seats are held at
// A·p·k by payers and A·(1−p)·k by leavers; the inventory S is gone at
// tFull = S / (A·k); leavers' holds still alive then are min(T, tFull)
// worth of them, and the first "sold out" comes at tFull, or later when
// ghosts have started to return (T < tFull).
type Model struct {
	GhostSeats   float64       `json:"ghost_seats"`
	GhostShare   float64       `json:"ghost_share"`
	FirstSoldOut time.Duration `json:"first_sold_out"`
}

func predict(cfg Config, ttl time.Duration) Model {
	s := float64(cfg.Trips * cfg.RowsPerTrip * 4)
	a := float64(cfg.Buyers) / cfg.Arrival.Seconds()
	sold, ghostRate := a*cfg.PayShare*cfg.SeatsPerOrder, a*(1-cfg.PayShare)*cfg.SeatsPerOrder
	tFull := s / (sold + ghostRate)
	t := ttl.Seconds()
	m := Model{GhostSeats: ghostRate * min(t, tFull)}
	m.GhostShare = m.GhostSeats / s
	out := tFull
	if t < tFull && sold > 0 {
		out = (s - ghostRate*t) / sold
	}
	m.FirstSoldOut = time.Duration(out * float64(time.Second))
	return m
}

// AdmissionSample is the waiting rooms at one moment of a phase.
type AdmissionSample struct {
	At       time.Duration `json:"at"`
	Rate     float64       `json:"rate_per_second"`
	Admitted int64         `json:"admitted"`
	Waiting  int64         `json:"waiting"`
}

// RPCStats are the calls of one RPC: throughput, errors by code, latency of
// the successful ones in milliseconds.
type RPCStats struct {
	Calls     int            `json:"calls"`
	Errors    map[string]int `json:"errors,omitempty"`
	PerSecond float64        `json:"per_second"`
	P50ms     float64        `json:"p50_ms"`
	P95ms     float64        `json:"p95_ms"`
	P99ms     float64        `json:"p99_ms"`
}

func (p *phase) result(elapsed time.Duration, writes, statements, lagMax float64, booked int) Phase {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := Phase{
		HoldTTL: p.ttl, Seats: p.cfg.Trips * p.cfg.RowsPerTrip * 4, Elapsed: elapsed, BookedOnServer: booked,
		GaveUp: p.gaveUp, RPC: p.rpc.stats(elapsed), Failovers: p.failovers,
		DBWritesPerSec:  writes / elapsed.Seconds(),
		DBStmtsPerSec:   statements / elapsed.Seconds(),
		ProjectorLagMax: lagMax, Model: predict(p.cfg, p.ttl), Admission: p.admission,
	}
	for _, n := range p.sold {
		out.Sold++
		if n > 1 {
			out.Oversold++
		}
	}
	for _, h := range p.holds {
		if h.payer {
			out.PayerHolds++
		} else {
			out.LeaverHolds++
		}
	}
	if !p.soldOut.IsZero() {
		out.FirstSoldOut = p.soldOut.Sub(p.start)
		for _, h := range p.holds {
			if !h.payer && !h.at.After(p.soldOut) && h.at.Add(p.ttl).After(p.soldOut) {
				out.GhostSeats += h.seats
			}
		}
		out.GhostShare = float64(out.GhostSeats) / float64(out.Seats)
	}
	return out
}

// metrics are the server's counters the load test reads from /metrics on
// its admin listener.
type metrics struct {
	statements, writes, projectorLag float64
	// fastSeatMaps is the seat maps the API's fast path answered.
	fastSeatMaps float64
	// cpu is the server process's CPU seconds (process_cpu_seconds_total).
	cpu float64
}

// scraped are the metrics of several processes, by admin URL.
type scraped map[string]metrics

// scrapeAll reads the metrics of every admin URL; it returns those that
// answered, and the first error.
func scrapeAll(ctx context.Context, hc *http.Client, urls []string) (scraped, error) {
	out := scraped{}
	var first error
	for _, u := range urls {
		m, err := scrape(ctx, hc, u)
		if err != nil {
			first = cmp.Or(first, err)
			continue
		}
		out[u] = m
	}
	return out, first
}

// since sums the write and statement counts gained since before, over the
// processes that answered both times.
func (s scraped) since(before scraped) (writes, statements float64) {
	for u, a := range s {
		if b, ok := before[u]; ok {
			writes += a.writes - b.writes
			statements += a.statements - b.statements
		}
	}
	return writes, statements
}

// projectorLag is the largest projector lag of the processes.
func (s scraped) projectorLag() float64 {
	lag := 0.0
	for _, m := range s {
		lag = max(lag, m.projectorLag)
	}
	return lag
}

func scrape(ctx context.Context, hc *http.Client, base string) (metrics, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	if err != nil {
		return metrics{}, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return metrics{}, fmt.Errorf("scrape metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return metrics{}, fmt.Errorf("scrape metrics: %s/metrics answered %s (is it the admin listener?)", base, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return metrics{}, fmt.Errorf("parse metrics: %w", err)
	}
	var m metrics
	for name, f := range families {
		for _, s := range f.GetMetric() {
			switch name {
			case "seatghor_db_statements_total":
				m.statements += s.GetCounter().GetValue()
			case "seatghor_db_write_statements_total":
				m.writes += s.GetCounter().GetValue()
			case "seatghor_projector_lag_seconds":
				m.projectorLag = max(m.projectorLag, s.GetGauge().GetValue())
			case "process_cpu_seconds_total":
				m.cpu = s.GetCounter().GetValue()
			case "seatghor_seatmap_fast_answers_total":
				m.fastSeatMaps += s.GetCounter().GetValue()
			}
		}
	}
	return m, nil
}

// WriteTable prints the run as the seed prints its model: one line per hold
// TTL, then the API's throughput and latency per RPC.
func (r Result) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "on-sale load test %q: %d buyers, %d seats, %.0f %% pay, %.1f seats per order\n\n",
		r.Config.Preset, r.Config.Buyers, r.Config.Trips*r.Config.RowsPerTrip*4, 100*r.Config.PayShare, r.Config.SeatsPerOrder)
	fmt.Fprintf(&b, "%-8s %6s %9s %5s %12s %7s %19s %10s %12s %10s   %s\n",
		"TTL", "sold", "oversold", "lost", "ghost seats", "share", "first 'sold out' at", "gave up", "DB writes/s", "lag max",
		"model: ghosts, share, sold out")
	for _, p := range r.Phases {
		soldOut := "never"
		if p.FirstSoldOut > 0 {
			soldOut = fmt.Sprintf("%.1f s", p.FirstSoldOut.Seconds())
		}
		fmt.Fprintf(&b, "%-8s %6d %9d %5d %12d %6.1f%% %19s %10d %12.0f %9.2fs   %.0f, %.1f%%, %.1f s\n", p.HoldTTL, p.Sold,
			p.Oversold, p.Lost, p.GhostSeats, 100*p.GhostShare, soldOut, p.GaveUp, p.DBWritesPerSec, p.ProjectorLagMax,
			p.Model.GhostSeats, 100*p.Model.GhostShare, p.Model.FirstSoldOut.Seconds())
	}
	for _, p := range r.Phases {
		fmt.Fprintf(&b, "\nTTL %s: %d payer holds, %d leaver holds, %d booked on the server, %d calls failed over, %.1f s\n",
			p.HoldTTL, p.PayerHolds, p.LeaverHolds, p.BookedOnServer, p.Failovers, p.Elapsed.Seconds())
		if len(p.Admission) > 0 {
			b.WriteString("  waiting room, each second (s: admission rate/s, admitted, waiting):")
			for i, a := range p.Admission {
				if i%6 == 0 {
					b.WriteString("\n   ")
				}
				fmt.Fprintf(&b, " %3.0f: %4.0f %5d %5d |", a.At.Seconds(), a.Rate, a.Admitted, a.Waiting)
			}
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "  %-14s %7s %8s %8s %8s %8s  %s\n", "RPC", "calls", "per s", "p50 ms", "p95 ms", "p99 ms", "errors")
		for _, name := range sortedKeys(p.RPC) {
			s := p.RPC[name]
			fmt.Fprintf(&b, "  %-14s %7d %8.1f %8.1f %8.1f %8.1f  %v\n", name, s.Calls, s.PerSecond, s.P50ms, s.P95ms, s.P99ms, s.Errors)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Compare prints run b against baseline a as ratios (b / a): throughput,
// latency and DB writes per RPC and phase, matched by hold TTL.
func Compare(w io.Writer, a, b Result) error {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%-8s %-14s %10s %10s %10s\n", "TTL", "RPC", "per s ×", "p50 ×", "p99 ×")
	for _, pb := range b.Phases {
		i := slices.IndexFunc(a.Phases, func(p Phase) bool { return p.HoldTTL == pb.HoldTTL })
		if i < 0 {
			continue
		}
		pa := a.Phases[i]
		for _, name := range sortedKeys(pb.RPC) {
			sa, ok := pa.RPC[name]
			if !ok {
				continue
			}
			sb2 := pb.RPC[name]
			fmt.Fprintf(&sb, "%-8s %-14s %10.2f %10.2f %10.2f\n", pb.HoldTTL, name,
				ratio(sb2.PerSecond, sa.PerSecond), ratio(sb2.P50ms, sa.P50ms), ratio(sb2.P99ms, sa.P99ms))
		}
		fmt.Fprintf(&sb, "%-8s %-14s %10.2f\n", pb.HoldTTL, "DB writes/s", ratio(pb.DBWritesPerSec, pa.DBWritesPerSec))
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

func ratio(b, a float64) float64 {
	if a == 0 {
		return 0
	}
	return b / a
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
