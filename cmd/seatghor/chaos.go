package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/pflag"

	"github.com/seatghor/seatghor/internal/chaos"
	"github.com/seatghor/seatghor/internal/devenv/demo"
	"github.com/seatghor/seatghor/internal/devenv/pgcluster"
	"github.com/seatghor/seatghor/internal/devenv/rediscluster"
	"github.com/seatghor/seatghor/server/auth"
)

// errChaosViolations means `seatghor chaos` found invariants broken: main
// exits 3, so that a caller tells it from a run that could not be made (1).
var errChaosViolations = chaos.ErrViolations

// chaosOptions are the flags of `seatghor chaos`.
type chaosOptions struct {
	preset, out, doc, dataDir string
	seed                      uint64
	keep                      bool
	broken                    []string
	// The sizes, when set (flags), replace the preset's.
	buyers, payers, busTrips, stadiumSeats, gaPlaces, kills, forged, stale, malformed int
	arrival, outage, holdTTL, converge, settle                                        time.Duration
}

func (o *chaosOptions) register(fs *pflag.FlagSet) {
	fs.StringVar(&o.preset, "preset", "short", "short (under 3 minutes, make test) or full (docs/reliability.md)")
	fs.Uint64Var(&o.seed, "seed", 0, "seed of every choice of the load and the schedule (default the preset's); the same seed replays them")
	fs.StringVar(&o.out, "out", "", "write the result as JSON to this file")
	fs.StringVar(&o.doc, "doc", "", "the full preset writes docs/reliability.md here (default docs/reliability.md; the short preset writes none)")
	fs.StringVar(&o.dataDir, "data-dir", "", "where the cluster runs (default a temporary directory, removed afterwards)")
	fs.BoolVar(&o.keep, "keep", false, "leave the cluster up afterwards (seatghor cluster down --data-dir DIR stops it)")
	fs.StringSliceVar(&o.broken, "broken", nil, "turn on a broken switch of a chaosbroken build: holds, webhooks, audit, counter (make chaos-broken); the run must report violations")
	fs.IntVar(&o.buyers, "buyers", 0, "buyers (default the preset's)")
	fs.DurationVar(&o.arrival, "arrival", 0, "how long the buyers take to arrive: the load's length (default the preset's)")
	fs.IntVar(&o.payers, "payers", -1, "payers: buyers of a general-admission area that never runs out, who bring the payments to the issue's count (default the preset's)")
	fs.IntVar(&o.busTrips, "bus-trips", 0, "40-seat bus trips on sale (default the preset's)")
	fs.IntVar(&o.stadiumSeats, "stadium-seats", 0, "seats of the stadium show, rows of 20 (default the preset's)")
	fs.IntVar(&o.gaPlaces, "ga-places", 0, "general-admission places of the stadium show (default the preset's)")
	fs.IntVar(&o.kills, "kills", -1, "serve processes killed with SIGKILL and started again (default the preset's)")
	fs.DurationVar(&o.outage, "outage", 0, "how long Meilisearch and MinIO are each stopped (default the preset's)")
	fs.IntVar(&o.forged, "forged", -1, "forged gateway webhooks (default the preset's)")
	fs.IntVar(&o.stale, "stale", -1, "stale replayed gateway webhooks (default the preset's)")
	fs.IntVar(&o.malformed, "malformed", -1, "malformed requests (default the preset's)")
	fs.DurationVar(&o.holdTTL, "hold-ttl", 0, "the shows' hold lifetime (default the preset's)")
	fs.DurationVar(&o.converge, "converge-within", 0, "how soon after the last write the read models must equal the databases (default the preset's)")
	fs.DurationVar(&o.settle, "settle-within", 0, "how long the payments may take to settle after the load (default the preset's)")
}

// config is the run's configuration: the preset's, changed by the flags.
func (o chaosOptions) config() (chaos.Config, error) {
	c, ok := chaos.Presets()[o.preset]
	if !ok {
		return c, fmt.Errorf("%w: chaos: --preset %q: short or full", errUsage, o.preset)
	}
	if o.seed != 0 {
		c.Seed = o.seed
	}
	set := func(dst *int, v, unset int) {
		if v != unset {
			*dst = v
		}
	}
	set(&c.Buyers, o.buyers, 0)
	set(&c.Payers, o.payers, -1)
	set(&c.BusTrips, o.busTrips, 0)
	set(&c.StadiumSeats, o.stadiumSeats, 0)
	set(&c.GAPlaces, o.gaPlaces, 0)
	set(&c.Kills, o.kills, -1)
	set(&c.Forged, o.forged, -1)
	set(&c.Stale, o.stale, -1)
	set(&c.Malformed, o.malformed, -1)
	for _, d := range []struct {
		dst *time.Duration
		v   time.Duration
	}{{&c.Arrival, o.arrival}, {&c.Outage, o.outage}, {&c.HoldTTL, o.holdTTL}, {&c.ConvergeWithin, o.converge}, {&c.SettleWithin, o.settle}} {
		if d.v != 0 {
			*d.dst = d.v
		}
	}
	for _, b := range o.broken {
		if b != "holds" && b != "webhooks" && b != "audit" && b != "counter" {
			return c, fmt.Errorf("%w: chaos: --broken %q: holds, webhooks, audit or counter", errUsage, b)
		}
	}
	c.Broken = o.broken
	if err := c.Validate(); err != nil {
		return c, fmt.Errorf("%w: %v", errUsage, err)
	}
	return c, nil
}

// sandboxFaults are the gateway's faults during a run (R2): timeouts
// applied or not, webhooks lost, sent up to three times, reordered and
// late, refunds refused.
func sandboxFaults(seed uint64) string {
	return fmt.Sprintf("seed=%d,timeout=0.03,applied=0.6,hang=1s,drop=0.05,dup=0.1,dup_max=3,delay=1s,reorder=0.05,reorder_delay=2s,refund_fail=0.02", seed)
}

// runChaos is `seatghor chaos`: a cluster of its own, the run, the table.
func runChaos(ctx context.Context, cfg config, o chaosOptions, stdout io.Writer, log *slog.Logger) (err error) {
	ccfg, err := o.config()
	if err != nil {
		return err
	}
	if len(ccfg.Broken) > 0 && !chaosBrokenBuild {
		return fmt.Errorf("%w: chaos: --broken needs a binary built with -tags chaosbroken (make chaos-broken); this one cannot break", errUsage)
	}
	doc := o.doc
	if ccfg.Preset == "full" && doc == "" {
		doc = filepath.Join("docs", "reliability.md")
	}
	if ccfg.Preset != "full" && doc != "" {
		return fmt.Errorf("%w: chaos: only the full preset writes %s", errUsage, doc)
	}
	if len(ccfg.Broken) > 0 {
		doc = "" // a broken build's run is never the record
	}
	dir := o.dataDir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "seatghor-chaos-"); err != nil {
			return err
		}
		if !o.keep {
			defer os.RemoveAll(dir)
		}
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return err
	}

	fmt.Fprintf(stdout, "chaos: starting the cluster in %s\n", dir)
	env := []string{"SEATGHOR_SANDBOX_FAULTS=" + sandboxFaults(ccfg.Seed), "SEATGHOR_LOG_LEVEL=" + cmp.Or(os.Getenv("SEATGHOR_LOG_LEVEL"), "warn")}
	if len(ccfg.Broken) > 0 {
		env = append(env, "SEATGHOR_CHAOS_BROKEN="+strings.Join(ccfg.Broken, ","))
	}
	began := time.Now()
	var upOut bytes.Buffer
	if err := runClusterUp(ctx, cfg, clusterOptions{dataDir: dir, timeout: 5 * time.Minute, env: env}, &upOut, log); err != nil {
		return fmt.Errorf("chaos: cluster up: %w", err)
	}
	fmt.Fprintf(stdout, "chaos: cluster up in %s\n", time.Since(began).Round(time.Second))
	st, err := readClusterState(dir)
	if err != nil || st == nil {
		return fmt.Errorf("chaos: the cluster's state: %v", err)
	}
	if !o.keep {
		defer func() {
			if derr := clusterDown(context.WithoutCancel(ctx), dir, st, 10*time.Second, log); derr != nil {
				err = errors.Join(err, fmt.Errorf("chaos: cluster down: %w", derr))
			}
		}()
	}
	if st.S3.Endpoint == "" || st.MeiliURL == "" {
		return errors.New("chaos: the cluster runs without MinIO or Meilisearch (make deps installs both): their outages cannot be tested")
	}

	secret, err := clusterSecret(cfg, dir)
	if err != nil {
		return err
	}
	tcfg := cfg
	tcfg.AuthSecret, tcfg.CatalogURL, tcfg.ShardURLs, tcfg.ReadURL = secret, st.CatalogURL, st.ShardURLs, st.ReadURL
	tcfg.RedisURL, tcfg.RedisPrefix = st.RedisURL, cmp.Or(cfg.RedisPrefix, "seatghor:")
	tcfg.S3.Endpoint, tcfg.S3.AccessKey, tcfg.S3.SecretKey = st.S3.Endpoint, st.S3.AccessKey, st.S3.SecretKey
	tcfg.TripIndex.MeiliURL, tcfg.TripIndex.MeiliKey = st.MeiliURL, st.MeiliKey
	tcfg.Payment.GatewayURL = st.GatewayURL
	webhookSecrets := cfg.Payment.WebhookSecrets
	if len(webhookSecrets) == 0 {
		webhookSecrets = []string{devWebhookSecret} // cluster up's default
	}
	tcfg.Payment.WebhookSecrets = webhookSecrets
	// The tool's Redis client would print every failed dial to a killed
	// primary on stderr; they go to the log at debug.
	redis.SetLogger(redisLog{log})
	a, err := openTool(ctx, tcfg, "chaos", log)
	if err != nil {
		return err
	}
	defer a.Close()
	keys, err := tcfg.tokenKeys()
	if err != nil {
		return err
	}
	tokens, err := auth.NewTokens(keys, time.Now)
	if err != nil {
		return err
	}

	res, err := chaos.Run(ctx, ccfg, chaos.Deps{
		Cluster: &chaosCluster{dir: dir, st: st, log: log}, App: a, RedisPrefix: tcfg.RedisPrefix, Tokens: tokens,
		WebhookSecret: webhookSecrets[0], Organization: demo.Organization, Gate: demo.Gate, Log: log, Progress: stdout,
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	if err := res.Table(stdout); err != nil {
		return err
	}
	if o.out != "" {
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(o.out, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	// A run that broke invariants is the record too: the page says what
	// broke, and the command still fails.
	if doc != "" {
		var b bytes.Buffer
		if err := res.Doc(&b); err != nil {
			return err
		}
		if err := os.WriteFile(doc, b.Bytes(), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "chaos: wrote %s\n", doc)
	}
	if n := res.Violations(); n > 0 {
		return fmt.Errorf("%w: %d violations (seed %d)", errChaosViolations, n, ccfg.Seed)
	}
	return nil
}

// redisLog is go-redis's logger writing to the log at debug.
type redisLog struct{ log *slog.Logger }

func (l redisLog) Printf(ctx context.Context, format string, v ...any) {
	l.log.DebugContext(ctx, "redis: "+fmt.Sprintf(format, v...))
}

// chaosCluster is a cluster of `cluster up` as the chaos run acts on it:
// its recorded processes killed, stopped and started again as they were
// started, its PostgreSQL servers crashed and started on the same
// address, its Redis primaries killed.
type chaosCluster struct {
	dir string
	st  *clusterState
	log *slog.Logger
}

func (c *chaosCluster) proc(name string) (clusterProc, error) {
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	for _, p := range c.st.Processes {
		if p.Name == name {
			return p, nil
		}
	}
	return clusterProc{}, fmt.Errorf("chaos: no process %q in the cluster", name)
}

func (c *chaosCluster) APIs() []string {
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	var out []string
	for _, p := range c.st.Processes {
		if p.Role == "api" {
			out = append(out, "http://"+p.Addr)
		}
	}
	return out
}

func (c *chaosCluster) Kill(ctx context.Context, name string) error {
	p, err := c.proc(name)
	if err != nil {
		return err
	}
	return p.Kill(ctx)
}

func (c *chaosCluster) Stop(ctx context.Context, name string) error {
	p, err := c.proc(name)
	if err != nil {
		return err
	}
	return p.Stop(ctx, 10*time.Second)
}

// Start starts a process again as cluster up started it, records its new
// id, and waits until it is ready.
func (c *chaosCluster) Start(ctx context.Context, name string) error {
	p, err := c.proc(name)
	if err != nil {
		return err
	}
	if p.Alive() {
		return fmt.Errorf("chaos: %s still runs", name)
	}
	np, err := startClusterProc(c.dir, name, p.Start)
	if err != nil {
		return err
	}
	p.Process = np
	if err := c.st.update(func(s *clusterState) {
		for i := range s.Processes {
			if s.Processes[i].Name == name {
				s.Processes[i] = p
			}
		}
	}); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	return waitClusterProc(ctx, p)
}

func (c *chaosCluster) CrashPostgres(ctx context.Context, i int) error {
	if i < 0 || i >= len(c.st.Postgres) {
		return fmt.Errorf("chaos: no PostgreSQL server %d", i)
	}
	return pgcluster.Crash(ctx, c.st.Postgres[i].Dir, c.log)
}

func (c *chaosCluster) StartPostgres(ctx context.Context, i int) error {
	if i < 0 || i >= len(c.st.Postgres) {
		return fmt.Errorf("chaos: no PostgreSQL server %d", i)
	}
	pg := c.st.Postgres[i]
	_, err := pgcluster.Start(ctx, pgcluster.Config{Dir: pg.Dir, Port: pg.Port, Fast: true, KeepCommits: true, Log: c.log})
	return err
}

func (c *chaosCluster) KillRedisPrimary(ctx context.Context, key string) (string, string, error) {
	var live []string
	for _, n := range c.st.Redis {
		if n.Alive() {
			live = append(live, n.Addr)
		}
	}
	old, err := rediscluster.PrimaryOf(ctx, live, key)
	if err != nil {
		return "", "", err
	}
	replica, err := rediscluster.ReplicaOf(ctx, old)
	if err != nil {
		return old, "", err
	}
	for _, n := range c.st.Redis {
		if n.Addr == old {
			if err := n.Kill(ctx); err != nil {
				return old, "", err
			}
		}
	}
	live = slices.DeleteFunc(live, func(a string) bool { return a == old })
	return old, replica, rediscluster.WaitPrimary(ctx, live, key, replica, 30*time.Second)
}

func (c *chaosCluster) Logs() []string {
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	var out []string
	for _, p := range c.st.Processes {
		if p.Admin != "" { // the serve processes
			out = append(out, p.Log)
		}
	}
	return out
}
