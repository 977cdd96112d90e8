// Package redistest gives tests a real Redis server: the one in
// SEATGHOR_TEST_REDIS_URL, else the machine's on 127.0.0.1:6379 if it
// answers, else a throwaway redis-server started once per test binary on a
// free port (always, with SEATGHOR_TEST_REDIS=own). Each test gets its own
// key prefix, so parallel tests (and parallel test binaries) never see each
// other's keys.
//
// NewCluster and StartCluster give a real Redis Cluster instead (3 primaries
// with one replica each, started from redis-server and redis-cli);
// SEATGHOR_TEST_REDIS=cluster runs every test on one.
package redistest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/seatghor/seatghor/internal/devenv/daemon"
)

const defaultURL = "redis://127.0.0.1:6379/0"

// shared is the one server of this test binary (see pgtest for why it is
// process-wide).
var shared struct {
	mu  sync.Mutex
	url string
	cmd *exec.Cmd
	dir string
	err error
}

// Server is a Redis server for one test.
type Server struct {
	// URL is the server's redis:// URL.
	URL string
	// Prefix is this test's key prefix; every key the test writes starts
	// with it and is deleted at cleanup.
	Prefix string
	// Client is connected to URL (a cluster client on a cluster); closed
	// at cleanup.
	Client redis.UniversalClient
}

// New returns the shared server with a fresh key prefix for tb.
func New(tb testing.TB) *Server {
	tb.Helper()
	if os.Getenv("SEATGHOR_TEST_REDIS") == "cluster" {
		return NewCluster(tb)
	}
	shared.mu.Lock()
	if shared.url == "" && shared.err == nil {
		shared.url, shared.err = find()
	}
	url, err := shared.url, shared.err
	shared.mu.Unlock()
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	return newServer(tb, url, redis.NewClient(opts))
}

// newServer gives tb a fresh key prefix on the Redis of url and deletes
// its keys at cleanup.
func newServer(tb testing.TB, url string, c redis.UniversalClient) *Server {
	var b [6]byte
	_, _ = rand.Read(b[:])
	s := &Server{URL: url, Prefix: "test:" + hex.EncodeToString(b[:]) + ":", Client: c}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		del := func(ctx context.Context, node redis.UniversalClient) error {
			iter := node.Scan(ctx, 0, s.Prefix+"*", 1000).Iterator()
			for iter.Next(ctx) {
				node.Del(ctx, iter.Val())
			}
			return nil
		}
		if cc, ok := c.(*redis.ClusterClient); ok {
			_ = cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error { return del(ctx, node) })
		} else {
			_ = del(ctx, c)
		}
		_ = s.Client.Close()
	})
	return s
}

// Cleanup stops the server this process started, if any. Call it from
// TestMain after m.Run.
func Cleanup() {
	sharedCluster.mu.Lock()
	if sharedCluster.c != nil {
		sharedCluster.c.stop()
		sharedCluster.c = nil
	}
	sharedCluster.mu.Unlock()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.cmd != nil {
		_ = shared.cmd.Process.Kill()
		_ = shared.cmd.Wait()
		_ = os.RemoveAll(shared.dir)
		shared.cmd = nil
	}
}

func find() (string, error) {
	if os.Getenv("SEATGHOR_TEST_REDIS") == "own" {
		return start()
	}
	if u := os.Getenv("SEATGHOR_TEST_REDIS_URL"); u != "" {
		return u, nil
	}
	if answers(defaultURL) {
		return defaultURL, nil
	}
	return start()
}

func answers(url string) bool {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return false
	}
	opts.DialTimeout = time.Second
	c := redis.NewClient(opts)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return c.Ping(ctx).Err() == nil
}

// start runs redis-server on a free port without persistence.
func start() (string, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return "", fmt.Errorf("no Redis at %s and no redis-server to start (apt-get install redis-server, or set SEATGHOR_TEST_REDIS_URL)", defaultURL)
	}
	port, err := FreePort()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "seatghor-redistest-")
	if err != nil {
		return "", err
	}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", dir, "--logfile", filepath.Join(dir, "redis.log"))
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("start redis-server: %w", err)
	}
	url := fmt.Sprintf("redis://127.0.0.1:%d/0", port)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if answers(url) {
			shared.cmd, shared.dir = cmd, dir
			return url, nil
		}
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	return "", fmt.Errorf("redis-server on port %d did not answer", port)
}

// FreePort returns a TCP port on 127.0.0.1 that nothing listens on now,
// outside the ephemeral range (daemon.FreePorts says why).
func FreePort() (int, error) {
	ports, err := daemon.FreePorts(1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}
