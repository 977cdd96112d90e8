package pgcluster_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/internal/devenv/pgcluster"
)

// TestStartStopRestart covers dev mode's promise: a second start on the
// same directory finds what the first one created.
func TestStartStopRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	log := slog.New(slog.NewTextHandler(testWriter{t}, nil))

	c := start(ctx, t, pgcluster.Config{Dir: dir, Log: log})
	if err := c.CreateDatabase(ctx, "seats"); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateDatabase(ctx, "seats"); err != nil {
		t.Fatalf("second CreateDatabase: %v", err)
	}
	exec(ctx, t, c.URL("seats"), "CREATE TABLE kept (id int)")
	if got := selectOne(ctx, t, c.URL("seats")); got != 1 {
		t.Fatalf("SELECT 1 = %d", got)
	}
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(ctx); err != nil {
		t.Fatalf("second Stop: %v", err)
	}

	c = start(ctx, t, pgcluster.Config{Dir: dir, Log: log})
	exec(ctx, t, c.URL("seats"), "SELECT count(*) FROM kept")
}

// TestStartAfterKill leaves a postmaster running without its owner, as a
// SIGKILLed `seatghor dev` does; the next Start must take over.
func TestStartAfterKill(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	log := slog.New(slog.NewTextHandler(testWriter{t}, nil))

	if _, err := pgcluster.Start(ctx, pgcluster.Config{Dir: dir, Fast: true}); err != nil {
		t.Fatal(err) // the cluster is never stopped: orphaned
	}
	c := start(ctx, t, pgcluster.Config{Dir: dir, Fast: true, Log: log})
	if got := selectOne(ctx, t, c.URL("postgres")); got != 1 {
		t.Fatalf("SELECT 1 = %d", got)
	}
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}

	// A postmaster.pid naming a PID that is not our server (here: this test
	// process) is stale and must not stop the start.
	pid := fmt.Appendf(nil, "%d\n%s\n", os.Getpid(), filepath.Join(dir, "data"))
	if err := os.WriteFile(filepath.Join(dir, "data", "postmaster.pid"), pid, 0o600); err != nil {
		t.Fatal(err)
	}
	c = start(ctx, t, pgcluster.Config{Dir: dir, Fast: true, Log: log})
	if got := selectOne(ctx, t, c.URL("postgres")); got != 1 {
		t.Fatalf("SELECT 1 = %d", got)
	}
}

// TestCrashAndRestartOnTheSamePort is what `seatghor chaos` does to a
// shard server: an immediate stop (no checkpoint) cuts the server away,
// and a start on the same directory and port recovers every committed row
// from the write-ahead log, at the address its clients were given
// (KeepCommits: without it, a commit acknowledged before its log was
// written may be lost, as this test saw).
func TestCrashAndRestartOnTheSamePort(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	log := slog.New(slog.NewTextHandler(testWriter{t}, nil))

	c := start(ctx, t, pgcluster.Config{Dir: dir, Fast: true, KeepCommits: true, Log: log})
	exec(ctx, t, c.URL("postgres"), "CREATE TABLE kept (id int); INSERT INTO kept VALUES (1), (2)")
	if err := pgcluster.Crash(ctx, dir, log); err != nil {
		t.Fatal(err)
	}
	if _, err := pgx.Connect(ctx, c.URL("postgres")); err == nil {
		t.Fatal("the crashed server still answers")
	}
	if err := pgcluster.Crash(ctx, dir, log); err != nil {
		t.Fatalf("a second crash of a stopped server: %v", err)
	}
	again := start(ctx, t, pgcluster.Config{Dir: dir, Port: c.Port(), Fast: true, KeepCommits: true, Log: log})
	if again.URL("postgres") != c.URL("postgres") {
		t.Fatalf("restarted at %s, not %s", again.URL("postgres"), c.URL("postgres"))
	}
	conn, err := pgx.Connect(ctx, again.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM kept").Scan(&n); err != nil || n != 2 {
		t.Fatalf("after the crash: %d rows, %v; want 2", n, err)
	}
}

func start(ctx context.Context, t *testing.T, cfg pgcluster.Config) *pgcluster.Cluster {
	t.Helper()
	c, err := pgcluster.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Registered after t.TempDir, so it runs before the directory goes.
	t.Cleanup(func() {
		if err := c.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return c
}

func exec(ctx context.Context, t *testing.T, url, sql string) {
	t.Helper()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatal(err)
	}
}

func selectOne(ctx context.Context, t *testing.T, url string) int {
	t.Helper()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "SELECT 1").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// TestPortTaken: a port the caller chose is not swapped for another, and
// the error carries the server's reason.
func TestPortTaken(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	_, err = pgcluster.Start(ctx, pgcluster.Config{Dir: t.TempDir(), Port: port, Fast: true})
	if err == nil || !strings.Contains(err.Error(), "Address already in use") {
		t.Fatalf("Start on a taken port: err = %v, want one saying the address is in use", err)
	}
}
