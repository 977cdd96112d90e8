// Command shardcurve measures the shard-count curve (docs/operations.md,
// "Sizing"): the same `seatghor loadtest holds` on the 3,000-buses load with
// four shards placed on 1, 2 and 4 PostgreSQL servers of this machine, one
// configuration after the other in one run, so only the number of servers
// changes; then, on one server, `seatghor loadtest onsale` with every buyer
// paying, for the CPU of a confirmed order. It prints the machine and a
// markdown table; `make shard-curve` runs it.
//
// Every server is a throwaway cluster (internal/devenv/pgcluster) in a temporary
// directory, with the default settings (fsync on); each configuration gets
// fresh databases (the catalog on the first server, shard i on server
// i mod N) and its own `seatghor serve` (roles api, workers, projectors)
// next to a `seatghor gateway`. Everything started is stopped at the end.
package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/seatghor/seatghor/internal/devenv/pgcluster"
	"github.com/seatghor/seatghor/internal/loadtest"
	"github.com/seatghor/seatghor/server/app"
)

// options are the command's flags.
type options struct {
	bin, redisURL, servers, dir string
	shards, shows, concurrency  int
	duration                    time.Duration
	payBuyers                   int
}

func main() {
	var o options
	flag.StringVar(&o.bin, "bin", "bin/seatghor", "the seatghor binary")
	flag.StringVar(&o.redisURL, "redis-url", cmp.Or(os.Getenv("SEATGHOR_REDIS_URL"), "redis://127.0.0.1:6379/0"), "the Redis every configuration uses (a key prefix of its own each)")
	flag.StringVar(&o.servers, "servers", "1,2,4", "the numbers of PostgreSQL servers to measure, the first being the ratios' base")
	flag.StringVar(&o.dir, "dir", "", "where the clusters live (empty: a temporary directory, removed at the end)")
	flag.IntVar(&o.shards, "shards", 4, "shards in every configuration")
	flag.IntVar(&o.shows, "shows", 3000, "40-seat buses (placed on the least-loaded shard each)")
	flag.IntVar(&o.concurrency, "concurrency", 32, "closed-loop clients")
	flag.DurationVar(&o.duration, "duration", 20*time.Second, "how long each phase of loadtest holds runs")
	flag.IntVar(&o.payBuyers, "pay-buyers", 800, "buyers of the paying run on one server, arriving over 20 s at 40 buses (0 skips it)")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o, os.Stdout, log); err != nil {
		log.Error("shardcurve", "err", err)
		os.Exit(1)
	}
}

// point is one configuration's numbers.
type point struct {
	servers int
	holds   loadtest.HoldsScenario
	// placed is the buses per shard, from the catalog's directory.
	placed []int
}

func run(ctx context.Context, o options, stdout io.Writer, log *slog.Logger) error {
	var counts []int
	for _, s := range strings.Split(o.servers, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > o.shards {
			return fmt.Errorf("-servers %q: each between 1 and -shards", o.servers)
		}
		counts = append(counts, n)
	}
	bin, err := filepath.Abs(o.bin)
	if err != nil {
		return err
	}
	dir := o.dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "seatghor-shardcurve-"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	}
	machine := describeMachine()
	started := time.Now().UTC()

	clusters := make([]*pgcluster.Cluster, 0, len(counts))
	defer func() {
		for _, c := range clusters {
			if err := c.Stop(context.WithoutCancel(ctx)); err != nil {
				log.Error("stop PostgreSQL", "err", err)
			}
		}
	}()
	for i := range maxOf(counts) {
		log.Info("starting PostgreSQL", "server", i+1)
		c, err := pgcluster.Start(ctx, pgcluster.Config{Dir: filepath.Join(dir, fmt.Sprintf("pg%d", i+1)), Log: log})
		if err != nil {
			return err
		}
		clusters = append(clusters, c)
	}

	var points []point
	var pay *payCost
	for _, n := range counts {
		p, err := measure(ctx, o, bin, clusters[:n], log)
		if err != nil {
			return fmt.Errorf("%d servers: %w", n, err)
		}
		points = append(points, p)
		if n == 1 && o.payBuyers > 0 && pay == nil {
			if pay, err = measurePay(ctx, o, bin, clusters[0], log); err != nil {
				return fmt.Errorf("paying run: %w", err)
			}
		}
	}
	return writeTable(stdout, o, machine, started, points, pay)
}

// env is one configuration: its databases and the processes' settings.
type env struct {
	catalogURL string
	shardURLs  []string
	vars       []string
	addr, adm  string
	prefix     string
	// drops are the databases to drop at the end, on their clusters.
	drops []drop
}

type drop struct {
	on   *pgcluster.Cluster
	name string
}

// tearDown drops the configuration's databases and its Redis keys, so the
// next configuration runs on idle servers (no autovacuum of this one's
// tables, no 24 h seat maps left in a shared Redis).
func (e env) tearDown(ctx context.Context, redisURL string, log *slog.Logger) {
	ctx = context.WithoutCancel(ctx)
	for _, d := range e.drops {
		conn, err := pgx.Connect(ctx, d.on.URL("postgres"))
		if err == nil {
			_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{d.name}.Sanitize()+" WITH (FORCE)")
			_ = conn.Close(ctx)
		}
		if err != nil {
			log.Warn("drop database", "name", d.name, "err", err)
		}
	}
	rdb, err := app.OpenRedis(redisURL, e.prefix, 0)
	if err != nil {
		log.Warn("redis", "err", err)
		return
	}
	defer rdb.Close()
	del := func(ctx context.Context, c *redis.Client) error {
		iter := c.Scan(ctx, 0, e.prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			if err := c.Unlink(ctx, iter.Val()).Err(); err != nil {
				return err
			}
		}
		return iter.Err()
	}
	switch c := rdb.(type) {
	case *redis.Client:
		err = del(ctx, c)
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, del)
	}
	if err != nil {
		log.Warn("delete the run's Redis keys", "prefix", e.prefix, "err", err)
	}
}

// setUp creates the configuration's databases (named after tag), migrates
// them and returns the environment of its processes.
func setUp(ctx context.Context, bin, tag string, o options, catalog *pgcluster.Cluster, shardOn func(i int) *pgcluster.Cluster) (env, error) {
	e := env{prefix: "shardcurve-" + tag + "-" + randomHex(4) + ":"}
	name := "shardcurve_" + tag + "_" + randomHex(4)
	if err := catalog.CreateDatabase(ctx, name+"_catalog"); err != nil {
		return e, err
	}
	e.drops = append(e.drops, drop{catalog, name + "_catalog"})
	e.catalogURL = catalog.URL(name + "_catalog")
	for i := range o.shards {
		c := shardOn(i)
		db := fmt.Sprintf("%s_shard_%d", name, i)
		if err := c.CreateDatabase(ctx, db); err != nil {
			return e, err
		}
		e.drops = append(e.drops, drop{c, db})
		e.shardURLs = append(e.shardURLs, c.URL(db))
	}
	var err error
	if e.addr, err = freeAddr(); err != nil {
		return e, err
	}
	if e.adm, err = freeAddr(); err != nil {
		return e, err
	}
	gw, err := freeAddr()
	if err != nil {
		return e, err
	}
	e.vars = append(os.Environ(),
		"SEATGHOR_CATALOG_URL="+e.catalogURL, "SEATGHOR_SHARD_URLS="+strings.Join(e.shardURLs, ","),
		"SEATGHOR_AUTH_SECRET=shardcurve-"+randomHex(16), "SEATGHOR_ADDR="+e.addr, "SEATGHOR_ADMIN_ADDR="+e.adm,
		"SEATGHOR_REDIS_URL="+o.redisURL, "SEATGHOR_REDIS_PREFIX="+e.prefix, "SEATGHOR_ROLES=api,workers,projectors",
		"SEATGHOR_GATEWAY_URL=http://"+gw, "SEATGHOR_SANDBOX_ADDR="+gw, "SEATGHOR_WEBHOOK_SECRETS=shardcurve-"+randomHex(16),
		"SEATGHOR_DRAIN_DELAY=0", "SEATGHOR_LOG_LEVEL=warn")
	if out, err := command(ctx, bin, e.vars, "migrate").CombinedOutput(); err != nil {
		return e, fmt.Errorf("migrate: %w: %s", err, out)
	}
	return e, nil
}

// start runs `seatghor serve` and `seatghor gateway` of e until the
// returned stop; serve is ready when it returns.
func start(ctx context.Context, bin string, e env) (serve *exec.Cmd, stop func(), err error) {
	var logs bytes.Buffer
	gw := command(ctx, bin, e.vars, "gateway")
	serve = command(ctx, bin, e.vars, "serve")
	gw.Stdout, gw.Stderr, serve.Stdout, serve.Stderr = &logs, &logs, &logs, &logs
	stop = func() {
		for _, c := range []*exec.Cmd{serve, gw} {
			if c.Process != nil {
				_ = c.Process.Signal(syscall.SIGTERM)
				_ = c.Wait()
			}
		}
	}
	if err := gw.Start(); err != nil {
		return nil, stop, err
	}
	if err := serve.Start(); err != nil {
		return nil, stop, err
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get("http://" + e.adm + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return serve, stop, nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			stop()
			return nil, func() {}, fmt.Errorf("seatghor serve not ready after 60 s: %s", logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// measure runs loadtest holds on the buses with the shards on servers.
func measure(ctx context.Context, o options, bin string, servers []*pgcluster.Cluster, log *slog.Logger) (point, error) {
	p := point{servers: len(servers)}
	e, err := setUp(ctx, bin, strconv.Itoa(len(servers)), o, servers[0], func(i int) *pgcluster.Cluster { return servers[i%len(servers)] })
	defer e.tearDown(ctx, o.redisURL, log)
	if err != nil {
		return p, err
	}
	_, stop, err := start(ctx, bin, e)
	if err != nil {
		return p, err
	}
	defer stop()
	log.Info("loadtest holds", "servers", len(servers), "shards", o.shards, "buses", o.shows)
	out := filepath.Join(os.TempDir(), "shardcurve-"+randomHex(6)+".json")
	defer os.Remove(out)
	args := []string{"loadtest", "holds", "--preset", "full", "--show-seats", "0", "--ga-places", "0",
		"--shows", strconv.Itoa(o.shows), "--concurrency", strconv.Itoa(o.concurrency), "--duration", o.duration.String(),
		"--url", "http://" + e.addr, "--admin-url", "http://" + e.adm, "--redis-url", o.redisURL, "--out", out}
	for _, u := range e.shardURLs {
		args = append(args, "--pg-url", u)
	}
	lt := command(ctx, bin, e.vars, args...)
	lt.Stderr = os.Stderr
	var table bytes.Buffer
	lt.Stdout = &table
	if err := lt.Run(); err != nil {
		return p, fmt.Errorf("loadtest holds: %w", err)
	}
	fmt.Fprint(os.Stderr, table.String())
	var res loadtest.HoldsResult
	if err := readJSON(out, &res); err != nil {
		return p, err
	}
	if len(res.Scenarios) != 1 {
		return p, errors.New("loadtest holds gave no buses scenario")
	}
	p.holds = res.Scenarios[0]
	p.placed, err = placement(ctx, e.catalogURL, o.shards)
	return p, err
}

// placement is the shows per shard, from the catalog's directory.
func placement(ctx context.Context, catalogURL string, shards int) ([]int, error) {
	conn, err := pgx.Connect(ctx, catalogURL)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	out := make([]int, shards)
	rows, err := conn.Query(ctx, `SELECT shard, count(*) FROM shows GROUP BY shard`)
	if err != nil {
		return nil, fmt.Errorf("placement: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var shard, n int
		if err := rows.Scan(&shard, &n); err != nil {
			return nil, err
		}
		if shard >= 0 && shard < shards {
			out[shard] = n
		}
	}
	return out, rows.Err()
}

// payCost is the CPU of the paying run, per confirmed order: the server
// process and every process of the PostgreSQL server (backends, WAL
// writer, checkpointer, autovacuum), read from /proc around the run, less
// what the two use idle (the workers' and projectors' polling, measured for
// idleFor before the run) over the run's length.
type payCost struct {
	orders, seats          int
	serverUS, pgUS         float64
	idleServer, idlePG     float64 // CPU seconds per second, idle
	seconds                float64
	holdErrs, holdConflict int
}

const idleFor = 5 * time.Second

// measurePay runs loadtest onsale with every buyer paying, four shards on
// one server.
func measurePay(ctx context.Context, o options, bin string, server *pgcluster.Cluster, log *slog.Logger) (*payCost, error) {
	e, err := setUp(ctx, bin, "pay", o, server, func(int) *pgcluster.Cluster { return server })
	defer e.tearDown(ctx, o.redisURL, log)
	if err != nil {
		return nil, err
	}
	serve, stop, err := start(ctx, bin, e)
	if err != nil {
		return nil, err
	}
	defer stop()
	log.Info("loadtest onsale (every buyer pays)", "buyers", o.payBuyers)
	out := filepath.Join(os.TempDir(), "shardcurve-"+randomHex(6)+".json")
	defer os.Remove(out)
	lt := command(ctx, bin, e.vars, "loadtest", "onsale", "--preset", "full", "--buyers", strconv.Itoa(o.payBuyers),
		"--trips", "40", "--rows", "10", "--arrival", "20s", "--pay-share", "1", "--ttl", "10m",
		"--url", "http://"+e.addr, "--admin-url", "http://"+e.adm, "--out", out)
	lt.Stdout, lt.Stderr = os.Stderr, os.Stderr
	pgPID, err := postmasterPID(ctx, server)
	if err != nil {
		return nil, err
	}
	is0, ip0 := procCPU(serve.Process.Pid), treeCPU(pgPID)
	time.Sleep(idleFor)
	s0, p0, t0 := procCPU(serve.Process.Pid), treeCPU(pgPID), time.Now()
	c := &payCost{idleServer: (s0 - is0) / idleFor.Seconds(), idlePG: (p0 - ip0) / idleFor.Seconds()}
	if err := lt.Run(); err != nil {
		return nil, fmt.Errorf("loadtest onsale: %w", err)
	}
	s1, p1 := procCPU(serve.Process.Pid), treeCPU(pgPID)
	c.seconds = time.Since(t0).Seconds()
	var res loadtest.Result
	if err := readJSON(out, &res); err != nil {
		return nil, err
	}
	if len(res.Phases) == 0 {
		return nil, errors.New("loadtest onsale gave no phase")
	}
	ph := res.Phases[0]
	pay := ph.RPC["StartPayment"]
	c.seats, c.orders = ph.Sold, pay.Calls-errorsOf(pay)
	if c.orders > 0 {
		c.serverUS = max(s1-s0-c.idleServer*c.seconds, 0) * 1e6 / float64(c.orders)
		c.pgUS = max(p1-p0-c.idlePG*c.seconds, 0) * 1e6 / float64(c.orders)
	}
	hold := ph.RPC["CreateHold"]
	c.holdErrs, c.holdConflict = errorsOf(hold), hold.Errors["aborted"]+hold.Errors["already_exists"]+hold.Errors["failed_precondition"]
	return c, nil
}

func errorsOf(s loadtest.RPCStats) int {
	n := 0
	for _, e := range s.Errors {
		n += e
	}
	return n
}

// postmasterPID is the first line of the cluster's postmaster.pid.
func postmasterPID(ctx context.Context, c *pgcluster.Cluster) (int, error) {
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		return 0, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var dir string
	if err := conn.QueryRow(ctx, `SHOW data_directory`).Scan(&dir); err != nil {
		return 0, err
	}
	b, err := os.ReadFile(filepath.Join(dir, "postmaster.pid"))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
}

// procStat is a process's parent and CPU seconds (utime+stime, in USER_HZ
// of 1/100 s) from /proc/<pid>/stat.
func procStat(pid int) (ppid int, cpu float64, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, false
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0, 0, false
	}
	ppid, _ = strconv.Atoi(f[1])
	u, _ := strconv.ParseFloat(f[11], 64)
	s, _ := strconv.ParseFloat(f[12], 64)
	return ppid, (u + s) / 100, true
}

func procCPU(pid int) float64 {
	_, c, _ := procStat(pid)
	return c
}

// treeCPU is the CPU seconds of the postmaster and its children.
func treeCPU(postmaster int) float64 {
	total := procCPU(postmaster)
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, c, ok := procStat(pid); ok && ppid == postmaster {
			total += c
		}
	}
	return total
}

// machine is what the table names the machine by.
type machine struct {
	cpus    int
	model   string
	loadAvg string
}

func describeMachine() machine {
	m := machine{cpus: runtime.NumCPU(), model: "unknown", loadAvg: loadAvg()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.model = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}

// loadAvg is the 1, 5 and 15 minute load averages.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func writeTable(w io.Writer, o options, m machine, started time.Time, points []point, pay *payCost) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Shard-count curve, %s: %d cores (nproc), %s; load average (1, 5, 15 min) %s at the start, %s at the end.\n",
		started.Format("2006-01-02 15:04 UTC"), m.cpus, m.model, m.loadAvg, loadAvg())
	fmt.Fprintf(&b, "Command: `go run ./scripts/shardcurve -servers %s -shards %d -shows %d -concurrency %d -duration %s -pay-buyers %d` (`make shard-curve`).\n\n",
		o.servers, o.shards, o.shows, o.concurrency, o.duration, o.payBuyers)
	fmt.Fprintln(&b, "| PostgreSQL servers | shards per server | buses per shard | CreateHold holds/s | ÷ 1 server | p50 ms | p99 ms | errors | PostgreSQL µs/hold | server µs/hold | load tool µs/hold | baseline tx/s (server 1) | oversold |")
	fmt.Fprintln(&b, "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	base := 0.0
	for i, p := range points {
		h := p.holds
		if i == 0 {
			base = h.Holds.PerSecond
		}
		per := make([]string, o.shards)
		perServer := make([]string, p.servers)
		for s := range o.shards {
			per[s] = strconv.Itoa(p.placed[s])
		}
		for srv := range p.servers {
			n := 0
			for s := srv; s < o.shards; s += p.servers {
				n++
			}
			perServer[srv] = strconv.Itoa(n)
		}
		r := 0.0
		if base > 0 {
			r = h.Holds.PerSecond / base
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %.0f | %.2f | %.1f | %.1f | %d | %.0f | %.0f | %.0f | %.0f | %d |\n",
			p.servers, strings.Join(perServer, ", "), strings.Join(per, ", "), h.Holds.PerSecond, r, h.Holds.P50ms, h.Holds.P99ms,
			errorsOf(h.Holds), h.HoldsCPU.DatabaseUS, h.HoldsCPU.ServerUS, h.HoldsCPU.ToolUS, h.Baseline.PerSecond, h.Oversold)
	}
	if pay != nil {
		fmt.Fprintf(&b, "\nPaying run (loadtest onsale, every buyer pays, 4 shards on 1 server): %d confirmed orders (%d seats) in %.0f s; "+
			"CPU per confirmed order, its holds, seat-map reads, order, payment, webhook and settlement included, less the idle use "+
			"(server %.3f, PostgreSQL %.3f CPU s/s): server %.0f µs, PostgreSQL %.0f µs (every process of the server); "+
			"%d CreateHold errors, %d of them a seat taken (the crowd's contention).\n",
			pay.orders, pay.seats, pay.seconds, pay.idleServer, pay.idlePG, pay.serverUS, pay.pgUS, pay.holdErrs, pay.holdConflict)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// command runs the seatghor binary with the configuration's environment.
func command(ctx context.Context, bin string, vars []string, args ...string) *exec.Cmd {
	c := exec.CommandContext(ctx, bin, args...)
	c.Env = vars
	c.Cancel = func() error { return c.Process.Signal(syscall.SIGTERM) }
	c.WaitDelay = 30 * time.Second
	return c
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func maxOf(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
