package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/sync/errgroup"

	"github.com/seatghor/seatghor/internal/devenv/daemon"
	"github.com/seatghor/seatghor/internal/devenv/demo"
	"github.com/seatghor/seatghor/internal/devenv/miniobin"
	"github.com/seatghor/seatghor/internal/devenv/pgcluster"
	"github.com/seatghor/seatghor/internal/devenv/rediscluster"
	"github.com/seatghor/seatghor/server/app"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/objstore"
)

// clusterOptions are the flags of `seatghor cluster up|down|status`.
type clusterOptions struct {
	dataDir string
	timeout time.Duration
	// env is added to the environment of the gateway and the serve
	// processes (not a flag: `seatghor chaos` sets the sandbox's faults and
	// the test build's switches through it).
	env []string
}

func (o *clusterOptions) register(fs *pflag.FlagSet) {
	fs.StringVar(&o.dataDir, "data-dir", "", "where the cluster keeps its databases, logs and state (default $SEATGHOR_DATA_DIR/cluster, else .seatghor/cluster)")
	fs.DurationVar(&o.timeout, "timeout", 2*time.Minute, "up: how long the processes may take to be ready; down: how long each may take to stop before SIGKILL (a tenth of it)")
}

func (o clusterOptions) dir(cfg config) (string, error) {
	return filepath.Abs(cmp.Or(o.dataDir, filepath.Join(cfg.DataDir, "cluster")))
}

// The state file, the secret file and the log directory of a cluster.
const (
	clusterStateFile  = "cluster.json"
	clusterSecretFile = "auth_secret"
	clusterLogDir     = "logs"
)

// clusterState is what `cluster up` started, written to DIR/cluster.json as
// each part starts (so `down` finds it after a crash of `up` too).
type clusterState struct {
	StartedAt time.Time `json:"started_at"`
	// Postgres are the PostgreSQL servers' directories and ports.
	Postgres []clusterPG `json:"postgres"`
	// Redis are the Redis Cluster's nodes; RedisURL reaches the cluster.
	Redis    []rediscluster.Node `json:"redis,omitempty"`
	RedisURL string              `json:"redis_url,omitempty"`
	// Processes are the other processes: MinIO, Meilisearch, the gateway
	// and the serve processes, in the order they started.
	Processes []clusterProc `json:"processes"`
	// The databases and services the serve processes are configured with
	// (MinIO's and Meilisearch's keys too: the file is private, 0600).
	CatalogURL string          `json:"catalog_url,omitempty"`
	ReadURL    string          `json:"read_url,omitempty"`
	ShardURLs  []string        `json:"shard_urls,omitempty"`
	S3         objstore.Config `json:"s3"`
	MeiliURL   string          `json:"meili_url,omitempty"`
	MeiliKey   string          `json:"meili_key,omitempty"`
	GatewayURL string          `json:"gateway_url,omitempty"`

	mu   sync.Mutex
	path string
}

// clusterPG is one PostgreSQL server of the cluster.
type clusterPG struct {
	Dir       string   `json:"dir"`
	Port      int      `json:"port"`
	Databases []string `json:"databases"`
}

// clusterProc is one process `cluster up` started; Addr is its public
// address (the API's, the gateway's, MinIO's, Meilisearch's) and Admin its
// admin listener (serve processes). Start is how it was started, so that
// it can be started again after a crash (restartClusterProc).
type clusterProc struct {
	daemon.Process
	Role  string       `json:"role"`
	Addr  string       `json:"addr,omitempty"`
	Admin string       `json:"admin,omitempty"`
	Start clusterStart `json:"start"`
}

// clusterStart is a process's command line, working directory and the
// variables added to the environment it inherits.
type clusterStart struct {
	Path string   `json:"path"`
	Args []string `json:"args,omitempty"`
	Dir  string   `json:"dir,omitempty"`
	Env  []string `json:"env,omitempty"`
}

// startClusterProc starts a process of the cluster in dir, its output in
// DIR/logs/NAME.log.
func startClusterProc(dir, name string, s clusterStart) (daemon.Process, error) {
	return daemon.Start(daemon.Spec{Name: name, Path: s.Path, Args: s.Args, Dir: cmp.Or(s.Dir, dir),
		Log: filepath.Join(dir, clusterLogDir, name+".log"), Env: append(os.Environ(), s.Env...)})
}

func readClusterState(dir string) (*clusterState, error) {
	s := &clusterState{path: filepath.Join(dir, clusterStateFile)}
	b, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, s); err != nil {
		return nil, fmt.Errorf("%s: %w", s.path, err)
	}
	return s, nil
}

// update changes the state under its lock and writes it.
func (s *clusterState) update(change func(*clusterState)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	change(s)
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp := s.path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, s.path)
}

// alive lists the recorded processes and Redis nodes that still run.
func (s *clusterState) alive() (alive, all []daemon.Process) {
	for _, p := range s.all() {
		if p.Alive() {
			alive = append(alive, p)
		}
	}
	return alive, s.all()
}

// all is every recorded process, the last started first (the order to stop
// them in: the API before what it uses).
func (s *clusterState) all() []daemon.Process {
	var out []daemon.Process
	for i := len(s.Processes) - 1; i >= 0; i-- {
		out = append(out, s.Processes[i].Process)
	}
	for _, n := range s.Redis {
		out = append(out, n.Process)
	}
	return out
}

// errClusterUp means `cluster up` found the directory's cluster running.
var errClusterUp = errors.New("cluster already up")

// runClusterUp is `seatghor cluster up`: the production topology as local
// processes (decision 0215), returning once every one is ready.
func runClusterUp(ctx context.Context, cfg config, o clusterOptions, stdout io.Writer, log *slog.Logger) (err error) {
	dir, err := o.dir(cfg)
	if err != nil {
		return err
	}
	if old, err := readClusterState(dir); err != nil {
		return err
	} else if old != nil {
		if alive, all := old.alive(); len(alive) > 0 {
			return fmt.Errorf("%w in %s: %d of its %d processes run (seatghor cluster status --data-dir %s); stop it first with seatghor cluster down --data-dir %s",
				errClusterUp, dir, len(alive), len(all), dir, dir)
		}
		log.Info("the cluster recorded in the directory is down; starting it again", "dir", dir)
	}
	start := time.Now()
	if err := os.MkdirAll(filepath.Join(dir, clusterLogDir), 0o755); err != nil {
		return err
	}
	secret, err := clusterSecret(cfg, dir)
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cluster up: which binary to start: %w", err)
	}
	st := &clusterState{path: filepath.Join(dir, clusterStateFile), StartedAt: start.UTC()}
	if err := st.update(func(*clusterState) {}); err != nil {
		return err
	}
	defer func() {
		if err != nil { // leave nothing half-started behind
			log.Error("cluster up failed; stopping what it started", "err", err)
			if derr := clusterDown(context.WithoutCancel(ctx), dir, st, 10*time.Second, log); derr != nil {
				log.Error("stopping the partial cluster", "err", derr)
			}
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()

	// The stores start side by side: PostgreSQL, Redis, MinIO, Meilisearch.
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return startClusterPostgres(gctx, cfg, dir, st, log) })
	g.Go(func() error {
		redisDir := filepath.Join(dir, "redis")
		// Nothing in Redis is kept across runs (the projectors rebuild it).
		if err := os.RemoveAll(redisDir); err != nil {
			return err
		}
		rc, err := rediscluster.Start(gctx, rediscluster.Config{Dir: redisDir})
		if rc != nil {
			return st.update(func(s *clusterState) { s.Redis, s.RedisURL = rc.Nodes, rc.URL })
		}
		return err
	})
	g.Go(func() error { return startClusterMinIO(gctx, dir, st, log) })
	g.Go(func() error { return startClusterMeili(gctx, dir, st, log) })
	if err := g.Wait(); err != nil {
		return err
	}
	mcfg := cfg
	mcfg.CatalogURL, mcfg.ShardURLs, mcfg.ReadURL = st.CatalogURL, st.ShardURLs, st.ReadURL
	if err := migrateDatabases(ctx, mcfg); err != nil {
		return err
	}
	if err := loadClusterDemo(ctx, mcfg, secret, log); err != nil {
		return err
	}

	// The sandbox gateway, then the serve processes by role: two API
	// processes, the workers (and webhook senders), the projectors.
	ports, err := daemon.FreePorts(9)
	if err != nil {
		return err
	}
	api1 := "127.0.0.1:" + strconv.Itoa(ports[0])
	gatewayAddr := "127.0.0.1:" + strconv.Itoa(ports[8])
	webhookSecrets := cfg.Payment.WebhookSecrets
	if len(webhookSecrets) == 0 {
		webhookSecrets = []string{devWebhookSecret}
	}
	gwStart := clusterStart{Path: exe, Args: []string{"gateway", "--addr", gatewayAddr, "--webhook-url", "http://" + api1 + "/webhooks/sandbox"},
		Env: append([]string{"SEATGHOR_WEBHOOK_SECRETS=" + strings.Join(webhookSecrets, ",")}, o.env...)}
	gw, err := startClusterProc(dir, "gateway", gwStart)
	if err != nil {
		return err
	}
	if err := st.update(func(s *clusterState) {
		s.GatewayURL = "http://" + gatewayAddr
		s.Processes = append(s.Processes, clusterProc{Process: gw, Role: "gateway", Addr: gatewayAddr, Start: gwStart})
	}); err != nil {
		return err
	}
	serveEnv := []string{
		"SEATGHOR_CATALOG_URL=" + st.CatalogURL, "SEATGHOR_SHARD_URLS=" + strings.Join(st.ShardURLs, ","),
		"SEATGHOR_READ_URL=" + st.ReadURL, "SEATGHOR_REDIS_URL=" + st.RedisURL,
		"SEATGHOR_GATEWAY_URL=" + st.GatewayURL, "SEATGHOR_WEBHOOK_SECRETS=" + strings.Join(webhookSecrets, ","),
		"SEATGHOR_AUTH_SECRET=" + secret,
		// As in dev: test API keys (payments go to the sandbox), partners'
		// webhooks to loopback, payments settled within seconds.
		"SEATGHOR_API_KEY_MODE=test", "SEATGHOR_WEBHOOK_ALLOW_LOOPBACK=1",
		"SEATGHOR_PAYMENT_RECOVER_INTERVAL=" + cmp.Or(os.Getenv("SEATGHOR_PAYMENT_RECOVER_INTERVAL"), "2s"),
		"SEATGHOR_PAYMENT_RECOVER_AFTER=" + cmp.Or(os.Getenv("SEATGHOR_PAYMENT_RECOVER_AFTER"), "3s"),
		"SEATGHOR_DRAIN_DELAY=" + cmp.Or(os.Getenv("SEATGHOR_DRAIN_DELAY"), "0s"),
	}
	if st.S3.Endpoint != "" {
		serveEnv = append(serveEnv, "SEATGHOR_S3_ENDPOINT="+st.S3.Endpoint, "SEATGHOR_S3_ACCESS_KEY="+st.S3.AccessKey,
			"SEATGHOR_S3_SECRET_KEY="+st.S3.SecretKey, "SEATGHOR_S3_BUCKET="+cfg.S3.Bucket)
	}
	if st.MeiliURL != "" {
		serveEnv = append(serveEnv, "SEATGHOR_MEILI_URL="+st.MeiliURL, "SEATGHOR_MEILI_KEY="+st.MeiliKey)
	}
	roles := []struct{ name, roles string }{
		{"api-1", "api"}, {"api-2", "api"}, {"workers", "workers,webhooks"}, {"projectors", "projectors"},
	}
	for i, r := range roles {
		addr := "127.0.0.1:" + strconv.Itoa(ports[2*i])
		admin := "127.0.0.1:" + strconv.Itoa(ports[2*i+1])
		start := clusterStart{Path: exe, Args: []string{"serve"},
			Env: append(slices.Concat(serveEnv, o.env), "SEATGHOR_ROLES="+r.roles, "SEATGHOR_ADDR="+addr, "SEATGHOR_ADMIN_ADDR="+admin)}
		p, err := startClusterProc(dir, r.name, start)
		if err != nil {
			return err
		}
		proc := clusterProc{Process: p, Role: r.roles, Admin: admin, Start: start}
		if r.roles == "api" {
			proc.Addr = addr
		}
		if err := st.update(func(s *clusterState) { s.Processes = append(s.Processes, proc) }); err != nil {
			return err
		}
	}
	for _, p := range st.Processes {
		if err := waitClusterProc(ctx, p); err != nil {
			return err
		}
	}
	log.Info("cluster up", "dir", dir, "took", time.Since(start).Round(time.Millisecond))
	return printCluster(stdout, cfg, st, dir, secret)
}

// migrateDatabases applies the schema to cfg's catalog, shards and read
// database (dev, migrate and cluster up).
func migrateDatabases(ctx context.Context, cfg config) error {
	if err := app.Migrate(ctx, cfg.CatalogURL, cfg.ShardURLs); err != nil {
		return err
	}
	if cfg.ReadURL != "" {
		return app.MigrateRead(ctx, cfg.ReadURL)
	}
	return nil
}

// clusterSecret is SEATGHOR_AUTH_SECRET, else the secret kept in
// DIR/auth_secret, made on the first up (serve refuses dev's).
func clusterSecret(cfg config, dir string) (string, error) {
	if cfg.AuthSecret != "" {
		return cfg.AuthSecret, nil
	}
	path := filepath.Join(dir, clusterSecretFile)
	if b, err := os.ReadFile(path); err == nil {
		return strings.TrimSpace(string(b)), nil
	}
	secret := randomHex(32)
	if err := os.WriteFile(path, []byte(secret+"\n"), 0o600); err != nil {
		return "", err
	}
	return secret, nil
}

// startClusterPostgres starts the two PostgreSQL servers: the catalog, the
// read database and the first half of the shards on the first, the other
// shards on the second (as deploy/compose.yaml).
func startClusterPostgres(ctx context.Context, cfg config, dir string, st *clusterState, log *slog.Logger) error {
	half := (cfg.Shards + 1) / 2
	var shards [2][]string
	for i := range cfg.Shards {
		shards[min(i/half, 1)] = append(shards[min(i/half, 1)], fmt.Sprintf("seatghor_shard_%d", i))
	}
	servers := [2][]string{append([]string{"seatghor_catalog", "seatghor_read"}, shards[0]...), shards[1]}
	urls := map[string]string{}
	var mu sync.Mutex
	g, ctx := errgroup.WithContext(ctx)
	for i, dbs := range servers {
		g.Go(func() error {
			pgDir := filepath.Join(dir, fmt.Sprintf("postgres-%d", i+1))
			// Fast: fsync off. A local topology for trying things out and
			// load tests; a crash of the machine may cost its data, a crash
			// of the server none (KeepCommits; chaos crashes them).
			c, err := pgcluster.Start(ctx, pgcluster.Config{Dir: pgDir, Fast: true, KeepCommits: true, Log: log})
			if err != nil {
				return fmt.Errorf("PostgreSQL %d: %w", i+1, err)
			}
			if err := st.update(func(s *clusterState) {
				s.Postgres = append(s.Postgres, clusterPG{Dir: pgDir, Port: c.Port(), Databases: dbs})
			}); err != nil {
				return err
			}
			for _, db := range dbs {
				if err := c.CreateDatabase(ctx, db); err != nil {
					return err
				}
				mu.Lock()
				urls[db] = c.URL(db)
				mu.Unlock()
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return st.update(func(s *clusterState) {
		slices.SortFunc(s.Postgres, func(a, b clusterPG) int { return strings.Compare(a.Dir, b.Dir) })
		s.CatalogURL, s.ReadURL, s.ShardURLs = urls["seatghor_catalog"], urls["seatghor_read"], nil
		for i := range cfg.Shards {
			s.ShardURLs = append(s.ShardURLs, urls[fmt.Sprintf("seatghor_shard_%d", i)])
		}
	})
}

// startClusterMinIO runs MinIO for the e-ticket PDFs when its binary is
// built; without it the cluster has no PDFs (decision 0215). MinIO is AGPL:
// a process of its own, never linked (decision 0041).
func startClusterMinIO(ctx context.Context, dir string, st *clusterState, log *slog.Logger) error {
	bin, err := miniobin.Find()
	if errors.Is(err, miniobin.ErrNotBuilt) {
		log.Warn("MinIO not started: e-ticket PDFs are off in this cluster", "why", err)
		return nil
	}
	if err != nil {
		return err
	}
	// The port is free when chosen and bound by MinIO a moment later:
	// another process may take it between (seen once in CI), and MinIO
	// exits. It starts again on a fresh port, up to three times.
	for attempt := 1; ; attempt++ {
		ports, err := daemon.FreePorts(1)
		if err != nil {
			return err
		}
		addr := "127.0.0.1:" + strconv.Itoa(ports[0])
		secret := randomHex(16)
		start := clusterStart{Path: bin, Args: []string{"server", "--quiet", "--address", addr, filepath.Join(dir, "minio")},
			Env: []string{"MINIO_ROOT_USER=seatghor", "MINIO_ROOT_PASSWORD=" + secret, "MINIO_BROWSER=off", "MINIO_UPDATE=off"}}
		p, err := startClusterProc(dir, "minio", start)
		if err != nil {
			return err
		}
		proc := clusterProc{Process: p, Role: "minio", Addr: addr, Start: start}
		if err := st.update(func(s *clusterState) {
			s.Processes = append(s.Processes, proc)
			s.S3 = objstore.Config{Endpoint: "http://" + addr, AccessKey: "seatghor", SecretKey: secret}
		}); err != nil {
			return err
		}
		err = waitClusterProc(ctx, proc)
		if err == nil || p.Alive() || attempt == 3 || ctx.Err() != nil {
			return err
		}
		log.Warn("MinIO exited while starting; starting it on another port", "addr", addr, "attempt", attempt)
		if err := st.update(func(s *clusterState) {
			s.Processes = slices.DeleteFunc(s.Processes, func(q clusterProc) bool { return q.Role == "minio" && q.Addr == addr })
		}); err != nil {
			return err
		}
	}
}

// meiliVersion is the Meilisearch that scripts/install-meilisearch.sh
// installs (decision 0051).
const meiliVersion = "1.21.0"

// meiliBinary is where scripts/install-meilisearch.sh puts Meilisearch;
// "" when it is not there.
func meiliBinary() string {
	dir := os.Getenv("SEATGHOR_MEILI_DIR")
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(base, "seatghor", "meilisearch-"+meiliVersion)
	}
	bin := filepath.Join(dir, "meilisearch")
	if _, err := os.Stat(bin); err != nil {
		return ""
	}
	return bin
}

// startClusterMeili runs Meilisearch for the trip index where it is
// installed; without it trip search is off in the cluster: the embedded
// index belongs to one process, and here three would use it (decision 0215).
func startClusterMeili(ctx context.Context, dir string, st *clusterState, log *slog.Logger) error {
	bin := meiliBinary()
	if bin == "" {
		log.Warn("Meilisearch not installed (scripts/install-meilisearch.sh): trip search is off in this cluster")
		return nil
	}
	ports, err := daemon.FreePorts(1)
	if err != nil {
		return err
	}
	addr := "127.0.0.1:" + strconv.Itoa(ports[0])
	key := randomHex(16)
	mdir := filepath.Join(dir, "meilisearch")
	if err := os.MkdirAll(mdir, 0o755); err != nil {
		return err
	}
	start := clusterStart{Path: bin, Dir: mdir, Args: []string{"--db-path", filepath.Join(mdir, "data.ms"), "--http-addr", addr, "--master-key", key,
		"--env", "development", "--no-analytics", "--log-level", "WARN"}}
	p, err := startClusterProc(dir, "meilisearch", start)
	if err != nil {
		return err
	}
	proc := clusterProc{Process: p, Role: "meilisearch", Addr: addr, Start: start}
	if err := st.update(func(s *clusterState) {
		s.Processes = append(s.Processes, proc)
		s.MeiliURL, s.MeiliKey = "http://"+addr, key
	}); err != nil {
		return err
	}
	return waitClusterProc(ctx, proc)
}

// loadClusterDemo loads the demo shows into the cluster's databases, as dev
// does (loadDemo).
func loadClusterDemo(ctx context.Context, cfg config, secret string, log *slog.Logger) error {
	cfg.AuthSecret, cfg.RedisURL, cfg.ReadURL, cfg.S3, cfg.TripIndex = secret, "", "", objstore.Config{}, app.TripIndexConfig{}
	// The tools open a gateway client they never call.
	cfg.Payment.GatewayURL, cfg.Payment.WebhookSecrets = "http://127.0.0.1:1", []string{devWebhookSecret}
	a, err := openTool(ctx, cfg, "cluster up", log)
	if err != nil {
		return err
	}
	defer a.Close()
	return loadDemo(ctx, a, log)
}

// waitClusterProc waits until a process is ready: a serve process's
// /readyz (on the public port for the API), MinIO's and Meilisearch's health, the
// gateway's port; it fails at once when the process has died.
func waitClusterProc(ctx context.Context, p clusterProc) error {
	var url string
	switch p.Role {
	case "minio":
		url = "http://" + p.Addr + "/minio/health/ready"
	case "meilisearch":
		url = "http://" + p.Addr + "/health"
	case "gateway":
		url = "" // any answer on its port
	case "api":
		// The public port: it opens a moment after the admin listener.
		url = "http://" + p.Addr + "/readyz"
	default:
		url = "http://" + p.Admin + "/readyz"
	}
	client := &http.Client{Timeout: time.Second}
	for {
		if !p.Alive() {
			return fmt.Errorf("%s exited while starting; its log: %s", p.Name, p.Log)
		}
		if url == "" {
			if c, err := net.DialTimeout("tcp", p.Addr, time.Second); err == nil {
				_ = c.Close()
				return nil
			}
		} else if resp, err := client.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && (p.Role != "minio" || minioServes(client, p.Addr)) {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %w; its log: %s", p.Name, ctx.Err(), p.Log)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// minioServes tells whether MinIO's object layer is up: its health check
// says ready a moment before a bucket request stops getting 503.
func minioServes(client *http.Client, addr string) bool {
	resp, err := client.Get("http://" + addr + "/")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode != http.StatusServiceUnavailable
}

// printCluster prints one line per API process first ("api URL", what
// scripts read), then the rest.
func printCluster(w io.Writer, cfg config, st *clusterState, dir, secret string) error {
	var b strings.Builder
	var api string
	for _, p := range st.Processes {
		if p.Role == "api" {
			fmt.Fprintf(&b, "api http://%s\n", p.Addr)
			api = cmp.Or(api, "http://"+p.Addr)
		}
	}
	for _, p := range st.Processes {
		if p.Admin != "" {
			fmt.Fprintf(&b, "admin %-10s http://%s  (/metrics, /readyz; roles %s)\n", p.Name, p.Admin, p.Role)
		}
	}
	fmt.Fprintf(&b, "gateway    %s  (the sandbox; webhooks to api-1)\n", st.GatewayURL)
	for i, pg := range st.Postgres {
		fmt.Fprintf(&b, "postgres   127.0.0.1:%d  (server %d: %s)\n", pg.Port, i+1, strings.Join(pg.Databases, ", "))
	}
	fmt.Fprintf(&b, "redis      %s  (3 primaries, a replica each)\n", st.RedisURL)
	if st.S3.Endpoint != "" {
		fmt.Fprintf(&b, "s3         %s  (MinIO)\n", st.S3.Endpoint)
	} else {
		b.WriteString("s3         off: MinIO is not built (make deps), no e-ticket PDFs\n")
	}
	if st.MeiliURL != "" {
		fmt.Fprintf(&b, "search     %s  (Meilisearch)\n", st.MeiliURL)
	} else {
		b.WriteString("search     off: Meilisearch is not installed (scripts/install-meilisearch.sh)\n")
	}
	cfg.AuthSecret = secret
	keys, err := cfg.tokenKeys()
	if err != nil {
		return err
	}
	tokens, err := auth.NewTokens(keys, time.Now)
	if err != nil {
		return err
	}
	for _, t := range []struct {
		sub  string
		role auth.Role
	}{{"admin", auth.RoleAdmin}, {"rumana", auth.RoleUser}} {
		tok, err := tokens.Mint(t.sub, t.role, 7*24*time.Hour)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "token      %s %s  (%s)\n", t.role, tok, t.sub)
	}
	if os.Getenv("SEATGHOR_AUTH_SECRET") == "" {
		fmt.Fprintf(&b, "secret     export SEATGHOR_AUTH_SECRET=$(cat %s)  (for seatghor token, loadtest)\n", filepath.Join(dir, clusterSecretFile))
	}
	fmt.Fprintf(&b, "demo       show 7 (a bus), 9 (general admission): %s/v1/shows/7/seatmap\n", api)
	fmt.Fprintf(&b, "logs       %s\n", filepath.Join(dir, clusterLogDir))
	fmt.Fprintf(&b, "state      %s\n", st.path)
	fmt.Fprintf(&b, "stop       seatghor cluster down --data-dir %s\n", dir)
	_, err = io.WriteString(w, b.String())
	return err
}

// runClusterDown is `seatghor cluster down`: stops what `up` recorded.
func runClusterDown(ctx context.Context, cfg config, o clusterOptions, stdout io.Writer, log *slog.Logger) error {
	dir, err := o.dir(cfg)
	if err != nil {
		return err
	}
	st, err := readClusterState(dir)
	if err != nil {
		return err
	}
	if err := clusterDown(ctx, dir, st, o.timeout/10, log); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "cluster in %s is down\n", dir)
	return err
}

// clusterDown stops every recorded process (SIGTERM, SIGKILL after grace),
// the last started first, then the PostgreSQL servers of dir, and removes
// the state file. What is gone already is skipped, so it works after a
// crash and a second time.
func clusterDown(ctx context.Context, dir string, st *clusterState, grace time.Duration, log *slog.Logger) error {
	var errs []error
	if st != nil {
		for _, p := range st.all() {
			if err := p.Stop(ctx, grace); err != nil {
				errs = append(errs, err)
			}
		}
	}
	// Every PostgreSQL directory, recorded or not: `up` may have died
	// between starting a server and recording it.
	pgDirs, _ := filepath.Glob(filepath.Join(dir, "postgres-*"))
	for _, d := range pgDirs {
		// StopDir's own log calls a running server "left by an earlier run".
		if err := pgcluster.StopDir(ctx, d, nil); err != nil {
			errs = append(errs, err)
		} else {
			log.Info("postgres stopped", "dir", d)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(dir, clusterStateFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// errClusterDown means `cluster status` found parts of the cluster down.
var errClusterDown = errors.New("cluster not (wholly) up")

// runClusterStatus is `seatghor cluster status`: which recorded processes
// run.
func runClusterStatus(_ context.Context, cfg config, o clusterOptions, stdout io.Writer) error {
	dir, err := o.dir(cfg)
	if err != nil {
		return err
	}
	st, err := readClusterState(dir)
	if err != nil {
		return err
	}
	if st == nil {
		fmt.Fprintf(stdout, "no cluster in %s\n", dir)
		return errClusterDown
	}
	down := 0
	line := func(name string, pid int, up bool, where string) {
		state := "up"
		if !up {
			state, down = "DOWN", down+1
		}
		fmt.Fprintf(stdout, "%-12s %-5s pid %-8d %s\n", name, state, pid, where)
	}
	for _, pg := range st.Postgres {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(pg.Port), time.Second)
		if err == nil {
			_ = c.Close()
		}
		line(filepath.Base(pg.Dir), 0, err == nil, "127.0.0.1:"+strconv.Itoa(pg.Port))
	}
	for _, n := range st.Redis {
		line(n.Name, n.PID, n.Alive(), n.Addr)
	}
	for _, p := range st.Processes {
		line(p.Name, p.PID, p.Alive(), cmp.Or(p.Addr, p.Admin))
	}
	if down > 0 {
		return fmt.Errorf("%w: %d down", errClusterDown, down)
	}
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// loadDemo loads the demo organisation and shows that are missing (dev and
// cluster up).
func loadDemo(ctx context.Context, a *app.App, log *slog.Logger) error {
	n, err := demo.Load(ctx, a.Catalog, time.Now())
	if err != nil {
		return fmt.Errorf("demo data: %w", err)
	}
	// The bus network: its routes and timetables now, its trips made by
	// the timetable job in the background once the workers run.
	if err := demo.LoadNetwork(ctx, a.Catalog, a.Network, time.Now()); err != nil {
		return fmt.Errorf("demo network: %w", err)
	}
	log.Info("demo data loaded", "new_shows", n, "routes", len(demo.Routes()), "timetables", len(demo.Timetables(time.Now())))
	return nil
}
