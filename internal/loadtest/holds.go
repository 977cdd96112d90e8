package loadtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"connectrpc.com/connect"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/redis/go-redis/v9"
	"github.com/valyala/fasthttp"
	"google.golang.org/protobuf/types/known/timestamppb"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/gen/seatghor/catalog/v1/catalogv1connect"
	"github.com/seatghor/seatghor/projections/seatmap"
	"github.com/seatghor/seatghor/server/app"
)

// HoldsConfig is `seatghor loadtest holds`: the on-sale morning's two hot
// paths, CreateHold and GetSeatMap, driven closed loop against a running
// server, each next to the same work done without our code on the same
// machine (the essential hold transaction replayed with pgx on the same
// PostgreSQL, and Redis GETs of a value the size of the seat map's answer),
// so one run gives the ratios of issue 10.
type HoldsConfig struct {
	// BaseURL and AdminURL are the running server and its admin listener
	// (/metrics); PGURLs the shards' databases the shows land on, on one
	// PostgreSQL server or several: the oversold check reads them all, the
	// PostgreSQL CPU is summed over their backends, and the baseline's
	// scratch tables are made and dropped in the first; RedisURL the Redis
	// the GET baseline reads, one or a Redis Cluster (addr= parameters, as
	// SEATGHOR_REDIS_URL).
	BaseURL  string   `json:"-"`
	AdminURL string   `json:"-"`
	PGURLs   []string `json:"-"`
	RedisURL string   `json:"-"`
	// RedisPrefix is the server's key prefix (SEATGHOR_REDIS_PREFIX): with
	// it, the run drops the big show's seat map and times its rebuild.
	RedisPrefix string `json:"-"`
	// Preset names the configuration the run started from.
	Preset string `json:"preset"`
	// Concurrency is the number of closed-loop clients of every phase.
	Concurrency int `json:"concurrency"`
	// ShowSeats is the big show's size, in rows of 500 seats (50,000: 100
	// rows); 0 skips it. Shows is the number of 40-seat buses; 0 skips them.
	ShowSeats int `json:"show_seats"`
	Shows     int `json:"shows"`
	// GAPlaces is the capacity of the two general-admission shows, one with
	// the server's buckets and one with a single counter row; 0 skips them.
	GAPlaces int `json:"ga_places"`
	// Duration is how long each phase runs (hold phases also end when the
	// seats run out).
	Duration time.Duration `json:"duration"`
	// SeatMapPath is the seat map read the GetSeatMap phase measures, with
	// {show} for the show's id; empty: /v1/shows/{show}/seatmap.
	SeatMapPath string `json:"seat_map_path,omitempty"`
	// SeatMapOnly runs only the GetSeatMap phase and its Redis baseline
	// (on shows nobody holds seats of), for measuring the read alone.
	SeatMapOnly bool `json:"seat_map_only,omitempty"`
	// Stops makes the buses coaches of that many stops, sold per leg
	// (issue 24, decision 0350): each hold asks for a journey drawn over the
	// stop pairs, the baseline takes the same rows, and the seat maps read
	// are a journey's each. 0: buses sold whole, as before.
	Stops int `json:"stops,omitempty"`
}

// HoldsPresets are the named configurations: "small" runs in seconds (make
// test), "full" is the documented run (docs/performance.md).
func HoldsPresets() map[string]HoldsConfig {
	return map[string]HoldsConfig{
		"small": {Preset: "small", Concurrency: 4, ShowSeats: 1000, Shows: 5, GAPlaces: 500, Duration: time.Second},
		"full":  {Preset: "full", Concurrency: 32, ShowSeats: 50_000, Shows: 3000, GAPlaces: 50_000, Duration: 20 * time.Second},
	}
}

func (c HoldsConfig) validate() error {
	switch {
	case c.BaseURL == "" || c.AdminURL == "":
		return errors.New("loadtest holds: need the server's URL and its admin URL")
	case len(c.PGURLs) == 0 || c.RedisURL == "":
		return errors.New("loadtest holds: need --pg-url (the shards' databases) and --redis-url for the baselines")
	case c.Concurrency < 1 || c.Duration <= 0:
		return errors.New("loadtest holds: concurrency and duration must be positive")
	case c.ShowSeats < 0 || c.ShowSeats%seatsPerBigRow != 0 || c.ShowSeats > 200*seatsPerBigRow:
		return fmt.Errorf("loadtest holds: show seats are rows of %d, at most 200 rows", seatsPerBigRow)
	case c.Shows < 0 || c.GAPlaces < 0 || c.ShowSeats+c.Shows+c.GAPlaces == 0:
		return errors.New("loadtest holds: nothing to measure (show seats, shows and GA places are all 0)")
	case c.Stops != 0 && (c.Stops < 2 || c.Stops > len(stopPlaces)):
		return fmt.Errorf("loadtest holds: --stops is 0 (buses sold whole) or 2 to %d", len(stopPlaces))
	}
	return nil
}

const (
	seatsPerBigRow = 500
	busRows        = 10 // × 4 seats: the seed's 40-seat bus
	// seatsPerBuyer is each buyer's share of the holds: under the per-account
	// cap and the per-caller hold rate's burst.
	seatsPerBuyer = 10
)

// HoldsResult is one run of `seatghor loadtest holds`.
type HoldsResult struct {
	Config     HoldsConfig     `json:"config"`
	StartedAt  time.Time       `json:"started_at"`
	FinishedAt time.Time       `json:"finished_at"`
	Scenarios  []HoldsScenario `json:"scenarios"`
	// GA compares general-admission holds on bucketed counters with the
	// same on a single counter row, at the same concurrency.
	GA *GAResult `json:"ga,omitempty"`
}

// HoldsScenario is one inventory: the big show, or the buses.
type HoldsScenario struct {
	Name  string   `json:"name"`
	Shows int      `json:"shows"`
	Seats int      `json:"seats"`
	Holds RPCStats `json:"create_hold"`
	// Stops is the buses' stops (0: sold whole); Legs the seat-legs the
	// holds asked for, on average per hold.
	Stops        int     `json:"stops,omitempty"`
	LegsPerHold  float64 `json:"legs_per_hold,omitempty"`
	FastSeatMaps float64 `json:"seat_maps_on_fast_path,omitempty"`
	// HeldInDB is the holds the database shows holding seats afterwards
	// (equal to the successful holds); Oversold the seats (seat-legs of a
	// trip with stops) in more than one live hold (must be 0).
	HeldInDB int `json:"held_in_db"`
	Oversold int `json:"oversold"`
	// StatementsPerHold is the server's database statements per hold while
	// the holds ran (its /metrics).
	StatementsPerHold float64 `json:"statements_per_hold"`
	// The seat-map projector while the holds ran, from /metrics: the p99 of
	// its event delay (change to read model, histogram buckets, counted
	// until it caught up), the largest lag sampled every 100 ms, and how
	// long it took to catch up after the last hold, in seconds.
	SeatMapDelayP99 float64 `json:"seatmap_delay_p99_seconds"`
	ProjectorLagMax float64 `json:"seatmap_lag_max_seconds"`
	CatchUp         float64 `json:"seatmap_catch_up_seconds"`
	// HoldsCPU is the CPU time per successful hold while the holds ran:
	// the server's (projectors included), PostgreSQL's and this tool's.
	HoldsCPU CPU `json:"create_hold_cpu"`
	// Baseline is the essential hold transaction replayed with pgx on the
	// same PostgreSQL: conditional seat UPDATE, hold INSERT, outbox INSERT.
	Baseline    RPCStats `json:"baseline_tx"`
	BaselineCPU CPU      `json:"baseline_tx_cpu"`
	HoldsRatio  float64  `json:"holds_ratio"`
	// SeatMap is the seat map read with Go's net/http client, SeatMapLean
	// the same read with fasthttp's, a keep-alive client about as lean per
	// request as go-redis is per GET (decision 0255); the Redis baseline's
	// ratio is given for both.
	SeatMap    RPCStats `json:"get_seat_map"`
	SeatMapCPU CPU      `json:"get_seat_map_cpu"`
	// SeatMapBytes is the size of one seat map answer (REST, JSON), as
	// each client read it.
	SeatMapBytes     int      `json:"seat_map_bytes"`
	SeatMapLean      RPCStats `json:"get_seat_map_lean"`
	SeatMapLeanCPU   CPU      `json:"get_seat_map_lean_cpu"`
	SeatMapLeanBytes int      `json:"seat_map_lean_bytes"`
	RedisGet         RPCStats `json:"redis_get"`
	SeatMapRatio     float64  `json:"seat_map_ratio"`
	SeatMapLeanRatio float64  `json:"seat_map_lean_ratio"`
	// Rebuilds are full rebuilds of the one show's seat map after the
	// holds (with --redis-prefix): its Redis map dropped, then one
	// GetSeatMap, which loads the whole show from the shard, writes it to
	// Redis and answers it, in seconds, each of three.
	Rebuilds []float64 `json:"seat_map_rebuild_seconds,omitempty"`
}

// GAResult is GA holds of one place each, bucketed against a single row.
type GAResult struct {
	Places    int      `json:"places"`
	Buckets   int      `json:"buckets"`
	Bucketed  RPCStats `json:"bucketed"`
	SingleRow RPCStats `json:"single_row"`
	// BucketedCPU and SingleRowCPU are the CPU per successful hold of each.
	BucketedCPU  CPU `json:"bucketed_cpu"`
	SingleRowCPU CPU `json:"single_row_cpu"`
	// BucketedStatements and SingleRowStatements are the server's database
	// statements per successful hold of each (projectors included): 8 when
	// every hold took the two-round-trip path (decision 0125), more when
	// holds fell back to the ordinary one (decision 0235).
	BucketedStatements  float64 `json:"bucketed_statements_per_hold"`
	SingleRowStatements float64 `json:"single_row_statements_per_hold"`
	Ratio               float64 `json:"ratio"`
	OversoldGA          int     `json:"oversold"`
}

// RunHolds runs every scenario the configuration asks for.
func RunHolds(ctx context.Context, cfg HoldsConfig, tokens Tokens, log *slog.Logger) (HoldsResult, error) {
	if err := cfg.validate(); err != nil {
		return HoldsResult{}, err
	}
	res := HoldsResult{Config: cfg, StartedAt: time.Now().UTC()}
	r := &holdsRun{cfg: cfg, tokens: tokens, log: log, runID: randomID(), http: &http.Client{Transport: &http.Transport{
		MaxIdleConns: 2 * cfg.Concurrency, MaxIdleConnsPerHost: 2 * cfg.Concurrency, IdleConnTimeout: time.Minute,
		DisableCompression: true, DialContext: (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
	}}}
	lean, err := leanClient(cfg.BaseURL, cfg.Concurrency)
	if err != nil {
		return res, err
	}
	r.lean = lean
	defer lean.CloseIdleConnections()
	for _, u := range cfg.PGURLs {
		pool, err := pgxpool.New(ctx, u)
		if err != nil {
			return res, fmt.Errorf("shard database: %w", err)
		}
		defer pool.Close()
		r.shards = append(r.shards, pool)
	}
	r.pg = r.shards[0]
	rdb, err := app.OpenRedis(cfg.RedisURL, cfg.RedisPrefix, cfg.Concurrency)
	if err != nil {
		return res, fmt.Errorf("baseline redis: %w", err)
	}
	r.redis = rdb
	defer r.redis.Close()
	if cfg.ShowSeats > 0 {
		sc, err := r.scenario(ctx, fmt.Sprintf("one show of %d rows × %d seats", cfg.ShowSeats/seatsPerBigRow, seatsPerBigRow),
			1, cfg.ShowSeats/seatsPerBigRow, seatsPerBigRow)
		if err != nil {
			return res, err
		}
		res.Scenarios = append(res.Scenarios, sc)
	}
	if cfg.Shows > 0 {
		name := fmt.Sprintf("%d buses of %d seats", cfg.Shows, busRows*4)
		if cfg.Stops > 0 {
			name = fmt.Sprintf("%d coaches of %d seats and %d stops, journeys drawn over the stop pairs", cfg.Shows, busRows*4, cfg.Stops)
		}
		sc, err := r.scenario(ctx, name, cfg.Shows, busRows, 4)
		if err != nil {
			return res, err
		}
		res.Scenarios = append(res.Scenarios, sc)
	}
	if cfg.GAPlaces > 0 && !cfg.SeatMapOnly {
		ga, err := r.ga(ctx)
		if err != nil {
			return res, err
		}
		res.GA = &ga
	}
	res.FinishedAt = time.Now().UTC()
	return res, nil
}

type holdsRun struct {
	cfg    HoldsConfig
	tokens Tokens
	log    *slog.Logger
	runID  string
	http   *http.Client
	// lean is the seat map's second client (decision 0255).
	lean *fasthttp.HostClient
	// shards are the databases of PGURLs; pg the first, the baseline's.
	shards []*pgxpool.Pool
	pg     *pgxpool.Pool
	redis  redis.UniversalClient
	// tokenCache keeps each buyer's token.
	tokenMu    sync.Mutex
	tokenCache map[string]string
}

func (r *holdsRun) token(sub string, admin bool) (string, error) {
	r.tokenMu.Lock()
	defer r.tokenMu.Unlock()
	if t, ok := r.tokenCache[sub]; ok {
		return t, nil
	}
	t, err := r.tokens.Token(sub, admin)
	if err != nil {
		return "", err
	}
	if r.tokenCache == nil {
		r.tokenCache = map[string]string{}
	}
	r.tokenCache[sub] = t
	return t, nil
}

// scenario creates the shows, then runs the four phases one after the
// other: CreateHold, GetSeatMap, the pgx baseline and the Redis baseline.
func (r *holdsRun) scenario(ctx context.Context, name string, shows, rows, seatsPerRow int) (HoldsScenario, error) {
	sc := HoldsScenario{Name: name, Shows: shows, Seats: shows * rows * seatsPerRow}
	r.log.Info("loadtest holds: creating shows", "scenario", name)
	ids, err := r.createShows(ctx, shows, func(i int) *catalogv1.CreateShowRequest {
		req := r.showRequest(fmt.Sprintf("Load test %s %d", r.runID[:6], i+1), catalogv1.ShowKind_SHOW_KIND_BUS_TRIP)
		if shows == 1 {
			req.Kind = catalogv1.ShowKind_SHOW_KIND_SPORT
			req.Venue = "Load test stadium"
			req.Origin, req.Destination = "", ""
		}
		req.Sections = []*catalogv1.Section{{Name: "Main", Rows: rowLabels(rows), SeatsPerRow: int32(seatsPerRow), PriceMinor: 85000}}
		if shows > 1 && r.cfg.Stops > 0 {
			req.Stops, req.Fares = tripStops(r.cfg.Stops)
			req.Origin, req.Destination = "", ""
		}
		return req
	})
	if err != nil {
		return sc, err
	}
	labels := seatLabels(rows, seatsPerRow)
	perShow := len(labels)
	plan := holdPlan(shows, perShow, 0, randomID())
	if shows > 1 && r.cfg.Stops > 0 {
		plan = holdPlan(shows, perShow, r.cfg.Stops, randomID())
		sc.Stops = r.cfg.Stops
		legs := 0
		for _, p := range plan {
			legs += p.to - p.from
		}
		sc.LegsPerHold = float64(legs) / float64(len(plan))
	}
	// Hold i is plan[i]: consecutive holds spread over the shows, and no
	// seat-leg is asked for twice.
	seat := func(i int) (int64, string) { return ids[plan[i].show], labels[plan[i].seat] }
	if err := r.waitSeatMap(ctx, ids[0]); err != nil {
		return sc, err
	}

	r.log.Info("loadtest holds: waiting for the seat-map projector to catch up", "scenario", name)
	if _, err := r.caughtUp(ctx); err != nil {
		return sc, err
	}
	if r.cfg.SeatMapOnly {
		return sc, r.seatMapPhase(ctx, name, ids, &sc)
	}
	r.log.Info("loadtest holds: CreateHold", "scenario", name)
	before, err := scrape(ctx, r.http, r.cfg.AdminURL)
	if err != nil {
		return sc, err
	}
	delayBefore, err := r.scrapeSeatMap(ctx)
	if err != nil {
		return sc, err
	}
	lagStop := r.sampleLag(ctx)
	cpu0 := cpuNow(ctx, r.shards, &before)
	ok := make([]atomic.Bool, len(plan))
	rec := newRecorder()
	elapsed := r.closedLoop(ctx, len(plan), func(w, k, i int) {
		show, label := seat(i)
		buyer := fmt.Sprintf("lth-%s-%dx%d-%d-%d", r.runID, shows, seatsPerRow, w, k/seatsPerBuyer) // a new buyer every 10 holds
		body := fmt.Sprintf(`{"showId":"%d","seats":[%q]%s}`, show, label, plan[i].journeyJSON())
		if r.post(ctx, rec, "CreateHold", buyer, "/v1/holds", body) {
			ok[i].Store(true)
		}
	})
	start := time.Now() // the last hold's answer
	lags := lagStop()
	after, err := scrape(ctx, r.http, r.cfg.AdminURL)
	if err != nil {
		return sc, err
	}
	cpu1 := cpuNow(ctx, r.shards, &after)
	delayAfter, err := r.caughtUp(ctx)
	if err != nil {
		return sc, err
	}
	sc.CatchUp = delayAfter.at.Sub(start).Seconds()
	sc.SeatMapDelayP99 = delayAfter.sub(delayBefore).quantile(0.99)
	sc.Holds = rec.stats(elapsed)["CreateHold"]
	held := 0
	for i := range ok {
		if ok[i].Load() {
			held++
		}
	}
	if held > 0 {
		sc.StatementsPerHold = (after.statements - before.statements) / float64(held)
	}
	sc.HoldsCPU = cpu0.per(cpu1, held)
	if len(lags) > 0 {
		sc.ProjectorLagMax = slices.Max(lags)
	}
	sc.HeldInDB, sc.Oversold, err = r.checkHolds(ctx, ids)
	if err != nil {
		return sc, err
	}
	if sc.HeldInDB != held {
		r.log.Warn("loadtest holds: the database holds other seats than the answers said", "answers", held, "database", sc.HeldInDB)
	}

	if shows == 1 && r.cfg.RedisPrefix != "" {
		r.log.Info("loadtest holds: seat-map rebuilds", "scenario", name)
		if sc.Rebuilds, err = r.rebuilds(ctx, ids[0], 3); err != nil {
			return sc, err
		}
	}

	r.log.Info("loadtest holds: baseline transaction", "scenario", name)
	sc.Baseline, sc.BaselineCPU, err = r.baselineTx(ctx, shows, perShow, plan)
	if err != nil {
		return sc, err
	}
	sc.HoldsRatio = ratio(sc.Holds.PerSecond, sc.Baseline.PerSecond)
	return sc, r.seatMapPhase(ctx, name, ids, &sc)
}

// seatMapPhase reads the shows' seat maps (the configured read) twice,
// with net/http's client and then with fasthttp's (decision 0255), then
// GETs from Redis a value as large as one answer, one right after the
// other.
func (r *holdsRun) seatMapPhase(ctx context.Context, name string, ids []int64, sc *HoldsScenario) error {
	seatMapPath := r.cfg.SeatMapPath
	if seatMapPath == "" {
		seatMapPath = "/v1/shows/{show}/seatmap"
	}
	path := func(w, k int) string {
		p := strings.ReplaceAll(seatMapPath, "{show}", strconv.FormatInt(ids[(w+k*r.cfg.Concurrency)%len(ids)], 10))
		if sc.Stops > 0 && !strings.Contains(p, "from_stop_id") {
			// A journey's map each (decision 0354), drawn over the pairs.
			from := (w + k) % (sc.Stops - 1)
			to := from + 1 + (w*7+k*3)%(sc.Stops-1-from)
			sep := "?"
			if strings.Contains(p, "?") {
				sep = "&"
			}
			p += sep + "from_stop_id=" + stopID(from) + "&to_stop_id=" + stopID(to)
		}
		return p
	}
	r.log.Info("loadtest holds: GetSeatMap, net/http client", "scenario", name)
	before, err := scrape(ctx, r.http, r.cfg.AdminURL)
	if err != nil {
		return err
	}
	sc.SeatMap, sc.SeatMapCPU, sc.SeatMapBytes, err = r.seatMapReads(ctx, func(rec *recorder, w, k int) int {
		return r.get(ctx, rec, "GetSeatMap", path(w, k))
	})
	if err != nil {
		return err
	}
	after, err := scrape(ctx, r.http, r.cfg.AdminURL)
	if err != nil {
		return err
	}
	if n := sc.SeatMap.Calls - sc.SeatMap.errorCount(); n > 0 {
		// What share of the answers the fast path gave (decision 0230).
		sc.FastSeatMaps = (after.fastSeatMaps - before.fastSeatMaps) / float64(n)
	}
	tok, err := r.token("lth-reader-"+r.runID, false)
	if err != nil {
		return err
	}
	r.log.Info("loadtest holds: GetSeatMap, fasthttp client", "scenario", name)
	auth := "Bearer " + tok
	sc.SeatMapLean, sc.SeatMapLeanCPU, sc.SeatMapLeanBytes, err = r.seatMapReads(ctx, func(rec *recorder, w, k int) int {
		return r.leanGet(rec, "GetSeatMap", path(w, k), auth)
	})
	if err != nil {
		return err
	}

	r.log.Info("loadtest holds: baseline Redis GET", "scenario", name, "bytes", sc.SeatMapBytes)
	sc.RedisGet, err = r.baselineRedis(ctx, max(sc.SeatMapBytes, 1))
	if err != nil {
		return err
	}
	sc.SeatMapRatio = ratio(sc.SeatMap.PerSecond, sc.RedisGet.PerSecond)
	sc.SeatMapLeanRatio = ratio(sc.SeatMapLean.PerSecond, sc.RedisGet.PerSecond)
	return nil
}

// seatMapReads runs read closed loop, each call one seat map read that
// returns the answer's size (<= 0 when it failed), and gives its stats,
// its CPU per answer and the size of an answer.
func (r *holdsRun) seatMapReads(ctx context.Context, read func(rec *recorder, w, k int) int) (RPCStats, CPU, int, error) {
	before, err := scrape(ctx, r.http, r.cfg.AdminURL)
	if err != nil {
		return RPCStats{}, CPU{}, 0, err
	}
	cpu0 := cpuNow(ctx, r.shards, &before)
	rec := newRecorder()
	var size atomic.Int64
	elapsed := r.closedLoop(ctx, 0, func(w, k, _ int) {
		if n := read(rec, w, k); n > 0 {
			size.Store(int64(n))
		}
	})
	st := rec.stats(elapsed)["GetSeatMap"]
	after, err := scrape(ctx, r.http, r.cfg.AdminURL)
	if err != nil {
		return RPCStats{}, CPU{}, 0, err
	}
	return st, cpu0.per(cpuNow(ctx, r.shards, &after), st.Calls-st.errorCount()), int(size.Load()), nil
}

// rebuilds drops the show's seat map from Redis and times the GetSeatMap
// that rebuilds it from the shard (the whole show read from one snapshot,
// its layout and availability written), n times.
func (r *holdsRun) rebuilds(ctx context.Context, show int64, n int) ([]float64, error) {
	store := seatmap.NewStore(r.redis, r.cfg.RedisPrefix, 0)
	path := fmt.Sprintf("%s/v1/shows/%d/seatmap", r.cfg.BaseURL, show)
	var out []float64
	for range n {
		if err := store.Drop(ctx, show); err != nil {
			return nil, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, path, nil)
		if err != nil {
			return nil, err
		}
		start := time.Now()
		if _, err := r.do(req); err != nil {
			return nil, fmt.Errorf("rebuild the seat map of show %d: %w", show, err)
		}
		out = append(out, time.Since(start).Seconds())
	}
	return out, nil
}

// gaSlices is how many slices each GA side's time is cut into.
const gaSlices = 4

// ga holds one place at a time on a bucketed GA area and on the same area
// with a single counter row at the same concurrency, in turns: each side's
// time is cut into gaSlices slices, run alternately (buckets first, then
// the one row first, and so on), so a change in the machine's load during
// the run falls on both sides alike. Each slice starts once the seat-map
// projector has applied everything before it, so neither side pays for the
// other's events (decision 0235).
func (r *holdsRun) ga(ctx context.Context) (GAResult, error) {
	res := GAResult{Places: r.cfg.GAPlaces}
	type side struct {
		label      string
		buckets    int32
		show       int64
		rec        *recorder
		elapsed    time.Duration
		held       int
		cpu        CPU // totals, in µs
		statements float64
	}
	sides := []*side{{label: "buckets"}, {label: "single", buckets: 1}}
	for _, sd := range sides {
		ids, err := r.createShows(ctx, 1, func(int) *catalogv1.CreateShowRequest {
			req := r.showRequest(fmt.Sprintf("Load test %s GA %s", r.runID[:6], sd.label), catalogv1.ShowKind_SHOW_KIND_SPORT)
			req.Venue, req.Origin, req.Destination = "Load test field", "", ""
			req.GaAreas = []*catalogv1.GaArea{{Name: "Field", Capacity: int32(r.cfg.GAPlaces), PriceMinor: 50000, Buckets: sd.buckets}}
			return req
		})
		if err != nil {
			return res, err
		}
		sd.show, sd.rec = ids[0], newRecorder()
	}
	slice := max(r.cfg.Duration/gaSlices, time.Millisecond)
	runSlice := func(n int, sd *side) error {
		if sd.held >= r.cfg.GAPlaces {
			return nil // sold out
		}
		if _, err := r.caughtUp(ctx); err != nil {
			return err
		}
		r.log.Info("loadtest holds: GA holds", "counter", sd.label, "slice", n+1)
		before, err := scrape(ctx, r.http, r.cfg.AdminURL)
		if err != nil {
			return err
		}
		cpu0 := cpuNow(ctx, r.shards, &before)
		var held atomic.Int64
		sd.elapsed += r.closedLoopFor(ctx, slice, r.cfg.GAPlaces-sd.held, func(w, k, _ int) {
			// A new buyer every 10 holds, and new buyers in every slice.
			buyer := fmt.Sprintf("ltg-%s-%s-%d-%d-%d", r.runID, sd.label, n, w, k/seatsPerBuyer)
			body := fmt.Sprintf(`{"showId":"%d","gaArea":"Field","quantity":1}`, sd.show)
			if r.post(ctx, sd.rec, "CreateHold", buyer, "/v1/holds", body) {
				held.Add(1)
			}
		})
		after, err := scrape(ctx, r.http, r.cfg.AdminURL)
		if err != nil {
			return err
		}
		c := cpu0.per(cpuNow(ctx, r.shards, &after), 1)
		sd.cpu.ServerUS += c.ServerUS
		sd.cpu.DatabaseUS += c.DatabaseUS
		sd.cpu.ToolUS += c.ToolUS
		sd.statements += after.statements - before.statements
		sd.held += int(held.Load())
		return nil
	}
	for n := range gaSlices {
		order := sides
		if n%2 == 1 {
			order = []*side{sides[1], sides[0]}
		}
		for _, sd := range order {
			if err := runSlice(n, sd); err != nil {
				return res, err
			}
		}
	}
	for _, sd := range sides {
		taken, err := r.sumShards(ctx, `SELECT coalesce(sum(quantity), 0)::int FROM holds WHERE show_id = $1 AND status = 'active'`, sd.show)
		if err != nil {
			return res, fmt.Errorf("count GA holds: %w", err)
		}
		res.OversoldGA += max(0, taken-r.cfg.GAPlaces)
		if sd.held > 0 {
			h := float64(sd.held)
			sd.cpu = CPU{ServerUS: sd.cpu.ServerUS / h, DatabaseUS: sd.cpu.DatabaseUS / h, ToolUS: sd.cpu.ToolUS / h}
			sd.statements /= h
		}
	}
	b, one := sides[0], sides[1]
	res.Buckets, _ = r.sumShards(ctx, `SELECT count(*)::int FROM ga_buckets WHERE show_id = $1`, b.show)
	res.Bucketed, res.BucketedCPU, res.BucketedStatements = b.rec.stats(b.elapsed)["CreateHold"], b.cpu, b.statements
	res.SingleRow, res.SingleRowCPU, res.SingleRowStatements = one.rec.stats(one.elapsed)["CreateHold"], one.cpu, one.statements
	res.Ratio = ratio(res.Bucketed.PerSecond, res.SingleRow.PerSecond)
	return res, nil
}

func (r *holdsRun) showRequest(title string, kind catalogv1.ShowKind) *catalogv1.CreateShowRequest {
	return &catalogv1.CreateShowRequest{
		Kind: kind, Title: title, Origin: "Dhaka", Destination: "Chattogram",
		StartsAt: timestamppb.New(time.Now().Add(72 * time.Hour)), Currency: "BDT",
		MaxSeatsPerAccount: seatsPerBuyer, MaxSeatsPerHold: seatsPerBuyer,
	}
}

// createShows creates n shows as an admin, a few at a time.
func (r *holdsRun) createShows(ctx context.Context, n int, req func(int) *catalogv1.CreateShowRequest) ([]int64, error) {
	tok, err := r.token("loadtest-admin", true)
	if err != nil {
		return nil, err
	}
	cat := catalogv1connect.NewCatalogServiceClient(r.http, r.cfg.BaseURL, connect.WithInterceptors(withToken(tok)))
	ids := make([]int64, n)
	next := atomic.Int64{}
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	for range min(n, 8) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				resp, err := cat.CreateShow(ctx, connect.NewRequest(req(i)))
				if err != nil {
					once.Do(func() { firstErr = fmt.Errorf("create show: %w", err) })
					return
				}
				ids[i] = resp.Msg.GetShow().GetShowId()
			}
		})
	}
	wg.Wait()
	return ids, firstErr
}

// waitSeatMap waits until the show's seat map answers (the projectors may
// not have seen the show yet).
func (r *holdsRun) waitSeatMap(ctx context.Context, show int64) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/v1/shows/%d/seatmap", r.cfg.BaseURL, show), nil)
		if err != nil {
			return err
		}
		_, err = r.do(req)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the seat map of show %d did not answer within 30 s: %w", show, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// closedLoop runs Concurrency workers for the configured duration, each
// calling fn back to back; fn gets the worker, its call number and a
// global index i < limit (every index once; the loop ends when they run
// out). limit 0 means no limit. It returns the time it ran.
func (r *holdsRun) closedLoop(ctx context.Context, limit int, fn func(w, k, i int)) time.Duration {
	return r.closedLoopFor(ctx, r.cfg.Duration, limit, fn)
}

// closedLoopFor is closedLoop for d instead of the configured duration.
func (r *holdsRun) closedLoopFor(ctx context.Context, d time.Duration, limit int, fn func(w, k, i int)) time.Duration {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var next atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for w := range r.cfg.Concurrency {
		wg.Go(func() {
			for k := 0; ctx.Err() == nil; k++ {
				i := int(next.Add(1) - 1)
				if limit > 0 && i >= limit {
					return
				}
				fn(w, k, i)
			}
		})
	}
	wg.Wait()
	return time.Since(start)
}

// post sends one REST write as buyer and records it; it tells whether the
// server answered 200.
func (r *holdsRun) post(ctx context.Context, rec *recorder, name, buyer, path, body string) bool {
	tok, err := r.token(buyer, false)
	if err != nil {
		return false
	}
	_, err = timed(rec, name, func() (int, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.cfg.BaseURL+path, bytes.NewBufferString(body))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Idempotency-Key", randomID())
		return r.do(req)
	})
	return err == nil
}

// get sends one REST read and records it; it returns the answer's size, or
// -1.
func (r *holdsRun) get(ctx context.Context, rec *recorder, name, path string) int {
	n, err := timed(rec, name, func() (int, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.cfg.BaseURL+path, nil)
		if err != nil {
			return 0, err
		}
		return r.do(req)
	})
	if err != nil {
		return -1
	}
	return n
}

// leanClient is a fasthttp keep-alive client of the server at baseURL,
// one connection per closed-loop client like go-redis's pool, reading into
// 32 KiB buffers as go-redis does.
func leanClient(baseURL string, conns int) (*fasthttp.HostClient, error) {
	u, err := url.Parse(baseURL)
	if err != nil || u.Host == "" || u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("loadtest holds: server URL %q is not http(s)://host[:port]", baseURL)
	}
	return &fasthttp.HostClient{Addr: u.Host, IsTLS: u.Scheme == "https", MaxConns: conns, MaxConnWaitTimeout: 5 * time.Second,
		ReadBufferSize: 32 << 10, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second, DisablePathNormalizing: true}, nil
}

// leanGet is get with the lean client, the bearer header given: an answer
// counts when its status is 200 and its body as long as its
// Content-Length says.
func (r *holdsRun) leanGet(rec *recorder, name, path, authorization string) int {
	n, err := timed(rec, name, func() (int, error) {
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(resp)
		req.SetRequestURI(r.cfg.BaseURL + path)
		req.Header.Set("Authorization", authorization)
		if err := r.lean.Do(req, resp); err != nil {
			return 0, connect.NewError(connect.CodeUnavailable, err)
		}
		if resp.StatusCode() != http.StatusOK {
			return 0, connect.NewError(httpCode(resp.StatusCode()), fmt.Errorf("HTTP %d", resp.StatusCode()))
		}
		if n, cl := len(resp.Body()), resp.Header.ContentLength(); n == 0 || cl >= 0 && n != cl {
			return 0, connect.NewError(connect.CodeUnavailable, fmt.Errorf("answer of %d bytes, Content-Length %d", n, cl))
		}
		return len(resp.Body()), nil
	})
	if err != nil {
		return -1
	}
	return n
}

// do sends req and reads the whole answer; a status other than 200 is an
// error named after the status (recorded by code).
func (r *holdsRun) do(req *http.Request) (int, error) {
	if req.Header.Get("Authorization") == "" { // a reader
		tok, err := r.token("lth-reader-"+r.runID, false)
		if err != nil {
			return 0, err
		}
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := r.http.Do(req)
	if err != nil {
		if req.Context().Err() != nil {
			return 0, connect.NewError(connect.CodeCanceled, err)
		}
		return 0, connect.NewError(connect.CodeUnavailable, err)
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil {
		return 0, connect.NewError(connect.CodeUnavailable, err)
	}
	if resp.StatusCode != http.StatusOK {
		return 0, connect.NewError(httpCode(resp.StatusCode), fmt.Errorf("HTTP %d", resp.StatusCode))
	}
	return int(n), nil
}

// httpCode maps a REST status back to the Connect code the recorder files
// errors under.
func httpCode(status int) connect.Code {
	switch status {
	case http.StatusBadRequest:
		return connect.CodeInvalidArgument
	case http.StatusUnauthorized:
		return connect.CodeUnauthenticated
	case http.StatusForbidden:
		return connect.CodePermissionDenied
	case http.StatusNotFound:
		return connect.CodeNotFound
	case http.StatusConflict:
		return connect.CodeAborted
	case http.StatusPreconditionFailed:
		return connect.CodeFailedPrecondition
	case http.StatusTooManyRequests:
		return connect.CodeResourceExhausted
	case http.StatusServiceUnavailable:
		return connect.CodeUnavailable
	}
	return connect.CodeUnknown
}

// sampleLag reads the seat-map projector's lag from /metrics every 100 ms; the
// returned function stops it and gives the samples.
func (r *holdsRun) sampleLag(ctx context.Context) func() []float64 {
	ctx, stop := context.WithCancel(ctx)
	done := make(chan []float64)
	go func() {
		var out []float64
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				done <- out
				return
			case <-tick.C:
				if m, err := r.scrapeSeatMap(ctx); err == nil {
					out = append(out, m.lag)
				}
			}
		}
	}()
	return func() []float64 { stop(); return <-done }
}

// checkHolds counts, on every shard, the holds whose seats the shows'
// rows show taken and the seat-legs in more than one live hold. A show lives on one
// shard, so the sums over the shards are the shows' counts.
func (r *holdsRun) checkHolds(ctx context.Context, ids []int64) (held, oversold int, err error) {
	for i, db := range r.shards {
		var h, o int
		err = db.QueryRow(ctx, `SELECT count(DISTINCT hold_id) FROM seats WHERE show_id = ANY($1) AND status <> 'available'`, ids).Scan(&h)
		if err != nil {
			return 0, 0, fmt.Errorf("count held seats on --pg-url %d (is it a shard's database?): %w", i+1, err)
		}
		// Per leg: a seat of a trip with stops is sold once per leg
		// (decision 0350); a bus sold whole has one.
		err = db.QueryRow(ctx, `
			SELECT count(*) FROM (
				SELECT show_id, seat, leg FROM holds, unnest(seats) AS seat, generate_series(from_stop, to_stop - 1) AS leg
				WHERE show_id = ANY($1) AND status IN ('active', 'ordered', 'confirmed')
				GROUP BY show_id, seat, leg HAVING count(*) > 1) twice`, ids).Scan(&o)
		if err != nil {
			return 0, 0, fmt.Errorf("count oversold seats on --pg-url %d: %w", i+1, err)
		}
		held, oversold = held+h, oversold+o
	}
	return held, oversold, nil
}

// sumShards is the sum of one integer query over every shard (a show's
// rows are on one of them, the others answer 0).
func (r *holdsRun) sumShards(ctx context.Context, query string, args ...any) (int, error) {
	total := 0
	for _, db := range r.shards {
		var n int
		if err := db.QueryRow(ctx, query, args...).Scan(&n); err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// baselineTx replays the essential hold transaction with pgx on scratch
// copies of the shard's seats, holds and outbox (CREATE TABLE … LIKE …
// INCLUDING ALL: the same columns, defaults, constraints and indexes, read
// from the shard itself rather than copied here), which it creates and
// drops: the holds of plan (one seat each, on the legs of its journey, a
// row per leg as the shard has them), the same concurrency and duration.
func (r *holdsRun) baselineTx(ctx context.Context, shows, perShow int, plan []plannedHold) (RPCStats, CPU, error) {
	p := "loadtest_" + r.runID[:8] + "_"
	legs := 1
	for _, h := range plan {
		legs = max(legs, h.to)
	}
	stride := (perShow + 3) / 4 * 4
	ddl := `
CREATE TABLE ` + p + `seats (LIKE seats INCLUDING ALL);
CREATE TABLE ` + p + `holds (LIKE holds INCLUDING ALL);
CREATE TABLE ` + p + `outbox (LIKE outbox INCLUDING ALL);
INSERT INTO ` + p + `seats (show_id, seat, position, section, row_label, price_minor, leg)
SELECT s, 'S' || n, l * $4 + n, 'Main', 'R', 85000, l
FROM generate_series(1, $1) s, generate_series(0, $2 - 1) n, generate_series(0, $3 - 1) l;
ANALYZE ` + p + `seats;`
	drop := `DROP TABLE IF EXISTS ` + p + `seats, ` + p + `holds, ` + p + `outbox`
	defer func() { _, _ = r.pg.Exec(context.WithoutCancel(ctx), drop) }()
	// Simple protocol for the multi-statement script; the parameters go in
	// as literals.
	script := strings.NewReplacer("$1", strconv.Itoa(shows), "$2", strconv.Itoa(perShow), "$3", strconv.Itoa(legs),
		"$4", strconv.Itoa(stride)).Replace(ddl)
	if _, err := r.pg.Exec(ctx, script, pgx.QueryExecModeSimpleProtocol); err != nil {
		return RPCStats{}, CPU{}, fmt.Errorf("baseline tables: %w", err)
	}
	payload := bytes.Repeat([]byte{'x'}, 120) // about a HoldCreated event's size
	rec := newRecorder()
	cpu0 := cpuNow(ctx, r.shards, nil)
	elapsed := r.closedLoop(ctx, len(plan), func(w, k, i int) {
		h := plan[i]
		show, seat := int64(h.show+1), "S"+strconv.Itoa(h.seat)
		_, _ = timed(rec, "tx", func() (struct{}, error) {
			holdID := "h_" + randomID()
			err := pgx.BeginFunc(ctx, r.pg, func(tx pgx.Tx) error {
				tag, err := tx.Exec(ctx, `UPDATE `+p+`seats SET status = 'held', hold_id = $3,
					held_until = now() + interval '10 minutes', version = version + 1
					WHERE show_id = $1 AND seat = $2 AND leg >= $4 AND leg < $5 AND status = 'available'`,
					show, seat, holdID, h.from, h.to)
				if err != nil {
					return err
				}
				if tag.RowsAffected() != int64(h.to-h.from) {
					return connect.NewError(connect.CodeAborted, errors.New("seat taken"))
				}
				if _, err := tx.Exec(ctx, `INSERT INTO `+p+`holds (hold_id, show_id, user_id, status, seats, quantity,
					amount_minor, currency, expires_at, created_at, updated_at, from_stop, to_stop)
					VALUES ($1, $2, $3, 'active', $4, 1, 85000, 'BDT', now() + interval '10 minutes', now(), now(), $5, $6)`,
					holdID, show, fmt.Sprintf("u-%d-%d", w, k/seatsPerBuyer), []string{seat}, h.from, h.to); err != nil {
					return err
				}
				_, err = tx.Exec(ctx, `INSERT INTO `+p+`outbox (show_id, event_id, event_type, payload, occurred_at)
					VALUES ($1, $2, 'HoldCreated', $3, now())`, show, "e_"+holdID, payload)
				return err
			})
			return struct{}{}, err
		})
	})
	st := rec.stats(elapsed)["tx"]
	return st, cpu0.per(cpuNow(ctx, r.shards, nil), st.Calls-st.errorCount()), nil
}

// plannedHold is one hold of a run: seat seat of show show (indexes of the
// run's shows and of a show's seats), for the legs from … to-1 (0 → 1 for
// a bus sold whole).
type plannedHold struct {
	show, seat, from, to int
	// stops: the show is a coach with stops, the hold names its journey.
	stops bool
}

// journeyJSON is the hold's journey as the REST body's field, empty for a
// bus sold whole.
func (h plannedHold) journeyJSON() string {
	if !h.stops {
		return ""
	}
	return fmt.Sprintf(`,"journey":{"fromStopId":%q,"toStopId":%q}`, stopID(h.from), stopID(h.to))
}

// holdPlan is the holds of a run over shows of perShow seats: with stops,
// every seat's legs cut at random into journeys (each a stop pair, drawn
// from seed), so that no two holds share a seat-leg and each takes the
// rows of its journey's legs; without, one hold per seat. Consecutive
// holds are of different shows.
func holdPlan(shows, perShow, stops int, seed string) []plannedHold {
	rng := rand.New(rand.NewPCG(uint64(len(seed)), hashString(seed)))
	var plan []plannedHold
	if stops == 0 {
		for i := range shows * perShow {
			plan = append(plan, plannedHold{show: i % shows, seat: i / shows, from: 0, to: 1})
		}
		return plan
	}
	legs := stops - 1
	// Journeys of each seat of each show, then taken round by round: the
	// k-th journey of seat s of every show, before the (k+1)-th.
	for s := range perShow {
		cuts := make([][]plannedHold, shows)
		most := 0
		for show := range shows {
			from := 0
			for from < legs {
				to := from + 1 + rng.IntN(legs-from)
				cuts[show] = append(cuts[show], plannedHold{show: show, seat: s, from: from, to: to, stops: true})
				from = to
			}
			most = max(most, len(cuts[show]))
		}
		for k := range most {
			for show := range shows {
				if k < len(cuts[show]) {
					plan = append(plan, cuts[show][k])
				}
			}
		}
	}
	return plan
}

// hashString is FNV-1a of s.
func hashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := range len(s) {
		h = (h ^ uint64(s[i])) * 1099511628211
	}
	return h
}

// stopPlaces are the places of the coaches' stops, Dhaka to Chattogram
// and on (free text the gazetteer lacks is a stop of its own id).
var stopPlaces = []string{"Dhaka", "Daudkandi", "Cumilla", "Feni", "Chattogram", "Patiya", "Chakaria", "Cox's Bazar"}

// stopID is the id CreateShow gives stop i of stopPlaces.
func stopID(i int) string {
	return []string{"dhaka", "daudkandi", "cumilla", "feni", "chattogram", "patiya", "chakaria", "coxs-bazar"}[i]
}

// tripStops are the stops and fares of a coach of n stops: a fare for
// every pair, 300 Tk a leg.
func tripStops(n int) ([]*catalogv1.TripStop, []*catalogv1.Fare) {
	var stops []*catalogv1.TripStop
	var fares []*catalogv1.Fare
	for i := range n {
		stops = append(stops, &catalogv1.TripStop{StopId: stopID(i), Place: stopPlaces[i], MinutesFromStart: int32(50 * i)})
		for j := i + 1; j < n; j++ {
			fares = append(fares, &catalogv1.Fare{FromStopId: stopID(i), ToStopId: stopID(j), PriceMinor: int64(30000 * (j - i))})
		}
	}
	return stops, fares
}

// baselineRedis GETs one value of size bytes from Redis, closed loop.
func (r *holdsRun) baselineRedis(ctx context.Context, size int) (RPCStats, error) {
	key := "seatghor-loadtest:" + r.runID
	if err := r.redis.Set(ctx, key, bytes.Repeat([]byte{'x'}, size), time.Hour).Err(); err != nil {
		return RPCStats{}, fmt.Errorf("baseline redis: %w", err)
	}
	defer r.redis.Del(context.WithoutCancel(ctx), key)
	rec := newRecorder()
	elapsed := r.closedLoop(ctx, 0, func(_, _, _ int) {
		_, _ = timed(rec, "GET", func() ([]byte, error) { return r.redis.Get(ctx, key).Bytes() })
	})
	return rec.stats(elapsed)["GET"], nil
}

// rowLabels are A … Z, AA, AB, … (R-12's row keys).
func rowLabels(n int) []string {
	rows := make([]string, n)
	for i := range rows {
		rows[i] = string(rune('A' + i%26))
		if i >= 26 {
			rows[i] = string(rune('A'+i/26-1)) + rows[i]
		}
	}
	return rows
}

// seatLabels are the seats of one section, row by row: A1, A2, …
func seatLabels(rows, perRow int) []string {
	out := make([]string, 0, rows*perRow)
	for _, r := range rowLabels(rows) {
		for n := 1; n <= perRow; n++ {
			out = append(out, r+strconv.Itoa(n))
		}
	}
	return out
}

// WriteTable prints each scenario's phases next to their baselines, with
// the ratios issue 10 sets its goals in.
func (r HoldsResult) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "holds load test %q: %d concurrent clients, %s per phase\n", r.Config.Preset, r.Config.Concurrency, r.Config.Duration)
	line := func(name string, s RPCStats, unit string) {
		fmt.Fprintf(&b, "  %-34s %8.1f %-10s %8.1f %8.1f %8.1f  %7d  %v\n", name, s.PerSecond, unit, s.P50ms, s.P95ms, s.P99ms, s.Calls, s.Errors)
	}
	for _, sc := range r.Scenarios {
		fmt.Fprintf(&b, "\n%s (%d seats)\n", sc.Name, sc.Seats)
		fmt.Fprintf(&b, "  %-34s %8s %-10s %8s %8s %8s  %7s  %s\n", "what", "rate", "", "p50 ms", "p95 ms", "p99 ms", "calls", "errors")
		if sc.Stops > 0 {
			line("CreateHold (REST, one seat, a journey)", sc.Holds, "holds/s")
			line("baseline: seat-legs+hold+outbox tx", sc.Baseline, "tx/s")
			fmt.Fprintf(&b, "  journeys drawn over the stop pairs of %d stops: %.2f legs a hold\n", sc.Stops, sc.LegsPerHold)
		} else {
			line("CreateHold (REST, one seat)", sc.Holds, "holds/s")
			line("baseline: seat+hold+outbox tx, pgx", sc.Baseline, "tx/s")
		}
		line(fmt.Sprintf("GetSeatMap (net/http) %d B", sc.SeatMapBytes), sc.SeatMap, "answers/s")
		line(fmt.Sprintf("GetSeatMap (fasthttp) %d B", sc.SeatMapLeanBytes), sc.SeatMapLean, "answers/s")
		line(fmt.Sprintf("baseline: Redis GET of %d B", sc.SeatMapBytes), sc.RedisGet, "GETs/s")
		fmt.Fprintf(&b, "  ratios: holds / baseline tx %.2f, seat maps / Redis GET %.3f (net/http client), %.3f (fasthttp client)\n",
			sc.HoldsRatio, sc.SeatMapRatio, sc.SeatMapLeanRatio)
		fmt.Fprintf(&b, "  seat maps answered by the fast path (net/http phase): %.1f %%\n", 100*sc.FastSeatMaps)
		cpu := func(name string, c CPU) {
			fmt.Fprintf(&b, "  CPU per %-22s server %6.0f µs, PostgreSQL %6.0f µs, this tool %6.0f µs\n", name+":", c.ServerUS, c.DatabaseUS, c.ToolUS)
		}
		cpu("hold", sc.HoldsCPU)
		cpu("baseline tx", sc.BaselineCPU)
		cpu("seat map, net/http", sc.SeatMapCPU)
		cpu("seat map, fasthttp", sc.SeatMapLeanCPU)
		fmt.Fprintf(&b, "  held in the database %d, oversold %d, %.1f server statements per hold (projectors included)\n",
			sc.HeldInDB, sc.Oversold, sc.StatementsPerHold)
		if len(sc.Rebuilds) > 0 {
			fmt.Fprintf(&b, "  full rebuild of the show's seat map (dropped from Redis, then one GetSeatMap):")
			for _, s := range sc.Rebuilds {
				fmt.Fprintf(&b, " %.0f ms", 1000*s)
			}
			fmt.Fprintln(&b)
		}
		fmt.Fprintf(&b, "  seat-map projector during the holds: event delay p99 <= %g s, lag max %.3f s, caught up %.1f s after the last hold\n",
			sc.SeatMapDelayP99, sc.ProjectorLagMax, sc.CatchUp)
	}
	if ga := r.GA; ga != nil {
		fmt.Fprintf(&b, "\nGA holds, one place each, %d places\n", ga.Places)
		line(fmt.Sprintf("CreateHold, %d buckets", ga.Buckets), ga.Bucketed, "holds/s")
		line("CreateHold, one counter row", ga.SingleRow, "holds/s")
		fmt.Fprintf(&b, "  ratio: buckets / one row %.2f, oversold %d\n", ga.Ratio, ga.OversoldGA)
		for _, c := range []struct {
			name       string
			cpu        CPU
			statements float64
		}{{"buckets", ga.BucketedCPU, ga.BucketedStatements}, {"one row", ga.SingleRowCPU, ga.SingleRowStatements}} {
			fmt.Fprintf(&b, "  CPU per hold, %-8s server %6.0f µs, PostgreSQL %6.0f µs, this tool %6.0f µs; %.1f server statements per hold\n",
				c.name+":", c.cpu.ServerUS, c.cpu.DatabaseUS, c.cpu.ToolUS, c.statements)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// seatMapMetrics is the seat-map projector's state on /metrics, summed over
// its sources.
type seatMapMetrics struct {
	at      time.Time
	lag     float64
	backlog float64
	// delay is the event delay histogram: cumulative counts by upper bound.
	delay map[float64]float64
}

func (r *holdsRun) scrapeSeatMap(ctx context.Context) (seatMapMetrics, error) {
	m := seatMapMetrics{at: time.Now(), delay: map[float64]float64{}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.cfg.AdminURL+"/metrics", nil)
	if err != nil {
		return m, err
	}
	resp, err := r.http.Do(req)
	if err != nil {
		return m, fmt.Errorf("scrape metrics: %w", err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return m, fmt.Errorf("parse metrics: %w", err)
	}
	for name, f := range families {
		for _, s := range f.GetMetric() {
			seatmap := false
			for _, l := range s.GetLabel() {
				seatmap = seatmap || l.GetName() == "projector" && l.GetValue() == "seatmap"
			}
			if !seatmap {
				continue
			}
			switch name {
			case "seatghor_projector_lag_seconds":
				m.lag = max(m.lag, s.GetGauge().GetValue())
			case "seatghor_projector_backlog_events":
				m.backlog += s.GetGauge().GetValue()
			case "seatghor_projector_event_delay_seconds":
				for _, b := range s.GetHistogram().GetBucket() {
					m.delay[b.GetUpperBound()] += float64(b.GetCumulativeCount())
				}
			}
		}
	}
	return m, nil
}

// sub is the delay histogram of the events between o and m.
func (m seatMapMetrics) sub(o seatMapMetrics) seatMapMetrics {
	out := seatMapMetrics{at: m.at, delay: map[float64]float64{}}
	for le, n := range m.delay {
		out.delay[le] = n - o.delay[le]
	}
	return out
}

// quantile is the upper bound of the histogram bucket the q-quantile falls
// in (0 without events).
func (m seatMapMetrics) quantile(q float64) float64 {
	bounds := make([]float64, 0, len(m.delay))
	for le := range m.delay {
		bounds = append(bounds, le)
	}
	slices.Sort(bounds)
	total := 0.0
	for _, n := range m.delay {
		total = max(total, n)
	}
	if total == 0 {
		return 0
	}
	last := 0.0
	for _, le := range bounds {
		if math.IsInf(le, 1) {
			break
		}
		last = le
		if m.delay[le] >= q*total {
			return le
		}
	}
	return last // beyond the last bucket: at least that
}

// caughtUp waits (at most five minutes) until the seat-map projector has
// no backlog, and returns its metrics then.
func (r *holdsRun) caughtUp(ctx context.Context) (seatMapMetrics, error) {
	deadline := time.Now().Add(5 * time.Minute)
	for {
		m, err := r.scrapeSeatMap(ctx)
		if err != nil {
			return m, err
		}
		if m.backlog == 0 {
			return m, nil
		}
		if time.Now().After(deadline) {
			return m, fmt.Errorf("the seat-map projector still has %.0f events to apply after 5 minutes", m.backlog)
		}
		select {
		case <-ctx.Done():
			return m, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
