// Package pgtest gives tests real PostgreSQL databases: the machine's server
// when reachable, else a throwaway cluster (pgcluster).
//
// Each schema is migrated once into a template database, and each test gets
// its own copy (CREATE DATABASE … TEMPLATE), which costs milliseconds and
// lets tests run in parallel without seeing each other's rows.
//
// Environment:
//
//	SEATGHOR_TEST_PG_URL   use this server (a postgres:// URL of any database on it)
//	SEATGHOR_TEST_PG=embedded   always start a throwaway cluster, even if a server answers
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/seatghor/seatghor/internal/devenv/pgcluster"
)

// defaultURL is the machine's server as Debian's package sets it up.
const defaultURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// readyComment marks a template whose migration finished. A template
// without it was left by a crashed run and is made again.
const readyComment = "pgtest: template ready"

// shared is the one server of this test binary. It is process-wide on
// purpose: starting a cluster per test would cost a second each, and
// TestMain's Cleanup is the one place that knows when the tests are done.
var shared struct {
	mu      sync.Mutex
	admin   *Admin
	cluster *pgcluster.Cluster
	dir     string
	err     error // a failed setup is not retried by every test
}

// Admin is an admin connection to the "postgres" database of the test
// server; it creates and drops the tests' databases.
type Admin struct {
	pool *pgxpool.Pool
	base *url.URL

	mu        sync.Mutex
	templates map[string]bool // names made ready by this process
}

// Server returns the server shared by this test binary: the one in
// SEATGHOR_TEST_PG_URL, else the machine's server on 127.0.0.1:5432 if it
// answers within 2s, else a throwaway cluster started once per process.
// Call Cleanup from TestMain after m.Run to stop a cluster this process
// started.
func Server(tb testing.TB) *Admin {
	tb.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.admin == nil && shared.err == nil {
		shared.admin, shared.err = connect()
		if shared.err == nil {
			tb.Logf("pgtest: server %s", shared.admin.URL("postgres"))
		}
	}
	if shared.err != nil {
		tb.Fatalf("pgtest: %v", shared.err)
	}
	return shared.admin
}

// Cleanup closes the admin connection and stops the cluster this process
// started, if any. Databases made by Fresh are dropped by their tests'
// cleanups; templates stay for the next run.
func Cleanup() {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.admin != nil {
		shared.admin.pool.Close()
		shared.admin = nil
	}
	if shared.cluster != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := shared.cluster.Stop(ctx); err == nil {
			_ = os.RemoveAll(shared.dir)
		}
		shared.cluster = nil
	}
}

func connect() (*Admin, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	raw := os.Getenv("SEATGHOR_TEST_PG_URL")
	switch {
	case os.Getenv("SEATGHOR_TEST_PG") == "embedded":
		raw = ""
	case raw != "":
	case answers(ctx, defaultURL):
		raw = defaultURL
	}
	if raw == "" {
		c, dir, err := startCluster(ctx)
		if err != nil {
			return nil, err
		}
		shared.cluster, shared.dir = c, dir
		raw = c.URL("postgres")
	}
	base, err := url.Parse(raw)
	if err != nil || (base.Scheme != "postgres" && base.Scheme != "postgresql") {
		return nil, fmt.Errorf("SEATGHOR_TEST_PG_URL must be a postgres:// URL, got %q", raw)
	}
	a := &Admin{base: base, templates: map[string]bool{}}
	cfg, err := pgxpool.ParseConfig(a.URL("postgres"))
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = 4 // leave the server's connections to the code under test
	if a.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return nil, err
	}
	if err := a.pool.Ping(ctx); err != nil {
		a.pool.Close()
		return nil, fmt.Errorf("connect to %s: %w", a.URL("postgres"), err)
	}
	return a, nil
}

// answers tells whether a server accepts us at rawURL within 2s.
func answers(ctx context.Context, rawURL string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, rawURL)
	if err != nil {
		return false
	}
	defer conn.Close(ctx)
	return conn.Ping(ctx) == nil
}

// startCluster starts this process's cluster, after stopping the clusters
// of test binaries that died without calling Cleanup (a test timeout
// panics past TestMain), so they do not pile up on the machine.
func startCluster(ctx context.Context) (*pgcluster.Cluster, string, error) {
	const prefix = "seatghor-pgtest-"
	old, _ := filepath.Glob(filepath.Join(os.TempDir(), prefix+"*"))
	for _, dir := range old {
		pid, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(dir), prefix))
		if err != nil || !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			continue // not ours, or its process still runs
		}
		if pgcluster.StopDir(ctx, dir, nil) == nil {
			_ = os.RemoveAll(dir)
		}
	}
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("%s%d", prefix, os.Getpid()))
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c, err := pgcluster.Start(ctx, pgcluster.Config{Dir: dir, Fast: true, Log: log})
	if err != nil {
		return nil, "", fmt.Errorf("no server at %s and no throwaway cluster: %w", defaultURL, err)
	}
	return c, dir, nil
}

// URL returns the address of database on the test server.
func (a *Admin) URL(database string) string {
	u := *a.base
	u.Path = "/" + database
	u.RawPath = ""
	return u.String()
}

var notIdent = regexp.MustCompile(`[^a-z0-9_]+`)

// Template returns the name of a database migrated by migrate, made once
// per server and per schema content: seatghor_tpl_<name>_<hash8>. Test
// binaries run in parallel processes, so the making is guarded by an
// advisory lock; a template left half-made by a crashed run is dropped and
// made again.
func (a *Admin) Template(tb testing.TB, name, contentHash string, migrate func(ctx context.Context, url string) error) string {
	tb.Helper()
	hash := notIdent.ReplaceAllString(strings.ToLower(contentHash), "")
	hash = hash[:min(8, len(hash))]
	name = notIdent.ReplaceAllString(strings.ToLower(name), "_")
	name = name[:min(63-len("seatghor_tpl__")-len(hash), len(name))] // PostgreSQL's identifier limit
	db := "seatghor_tpl_" + name + "_" + hash

	a.mu.Lock()
	defer a.mu.Unlock()
	if a.templates[db] {
		return db
	}
	ctx := tb.Context()
	if err := a.makeTemplate(ctx, db, migrate); err != nil {
		tb.Fatalf("pgtest: template %s: %v", db, err)
	}
	a.templates[db] = true
	return db
}

func (a *Admin) makeTemplate(ctx context.Context, db string, migrate func(ctx context.Context, url string) error) error {
	conn, err := a.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	// Advisory locks belong to the session, so lock and unlock on one
	// connection. Unlock even when ctx is done, or the pooled connection
	// would hold the lock for the rest of the run.
	key := lockKey(db)
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", key); err != nil {
		return err
	}
	defer func() {
		// On failure the session's end releases the lock anyway.
		_, _ = conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", key)
	}()

	var comment *string
	err = conn.QueryRow(ctx,
		`SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = $1`, db).Scan(&comment)
	switch {
	case err == nil && comment != nil && *comment == readyComment:
		return nil
	case err == nil:
		// PostgreSQL refuses to drop a database marked as a template.
		if _, err := conn.Exec(ctx, "ALTER DATABASE "+pgx.Identifier{db}.Sanitize()+" WITH IS_TEMPLATE false"); err != nil {
			return err
		}
		if err := dropDatabase(ctx, conn.Conn(), db); err != nil {
			return err
		}
	case !errors.Is(err, pgx.ErrNoRows):
		return err
	}
	ident := pgx.Identifier{db}.Sanitize()
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+ident); err != nil {
		return err
	}
	if err := migrate(ctx, a.URL(db)); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	// A connection migrate left open would make every copy fail with
	// "source database is being accessed by other users".
	if _, err := conn.Exec(ctx,
		`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, db); err != nil {
		return err
	}
	// No connections from now on: a test that wrote to the template would
	// change every later copy. Marked ready in the same transaction, so a
	// crash leaves either a finished template or one that is made again.
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "ALTER DATABASE "+ident+" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false"); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "COMMENT ON DATABASE "+ident+" IS '"+readyComment+"'")
		return err
	})
}

// Fresh creates a database seatghor_t_<random> copied from template, drops
// it when the test ends, and returns its URL.
func (a *Admin) Fresh(tb testing.TB, template string) string {
	tb.Helper()
	var b [8]byte
	_, _ = rand.Read(b[:])
	db := "seatghor_t_" + hex.EncodeToString(b[:])
	ctx := tb.Context()
	sql := "CREATE DATABASE " + pgx.Identifier{db}.Sanitize() + " TEMPLATE " + pgx.Identifier{template}.Sanitize()
	// A copy needs the template to have no sessions; one that is just
	// closing (e.g. the migration's last connection) is waited out.
	var err error
	for wait := 50 * time.Millisecond; ; wait *= 2 {
		_, err = a.pool.Exec(ctx, sql)
		var pgErr *pgconn.PgError
		if err == nil || !errors.As(err, &pgErr) || pgErr.Code != "55006" || wait > 2*time.Second {
			break
		}
		time.Sleep(wait)
	}
	if err != nil {
		tb.Fatalf("pgtest: create database %s from %s: %v", db, template, err)
	}
	tb.Cleanup(func() {
		// tb.Context is done by now; the drop must still happen.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		conn, err := a.pool.Acquire(ctx)
		if err != nil {
			tb.Errorf("pgtest: drop database %s: %v", db, err)
			return
		}
		defer conn.Release()
		if err := dropDatabase(ctx, conn.Conn(), db); err != nil {
			tb.Errorf("pgtest: %v", err)
		}
	})
	return a.URL(db)
}

// dropDatabase drops db, ending the sessions a test left open (FORCE).
func dropDatabase(ctx context.Context, conn *pgx.Conn, db string) error {
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{db}.Sanitize()+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop database %s: %w", db, err)
	}
	return nil
}

func lockKey(db string) int64 {
	h := fnv.New64a()
	h.Write([]byte("pgtest template " + db))
	return int64(h.Sum64())
}
