// Package meilitest gives tests a real Meilisearch server: the one in
// SEATGHOR_TEST_MEILI_URL (with SEATGHOR_TEST_MEILI_KEY), else a throwaway
// server started once per test binary on a free port of 127.0.0.1 with a
// temporary database and a random master key, from the binary that
// scripts/install-meilisearch.sh installs (and that it runs on first use;
// docs/decisions/0051). Each test gets its own index. Own starts a server
// for one test alone, which it may stop and start (an outage on demand).
//
// When no server can be had, New skips the test with a loud message saying
// why; SEATGHOR_TEST_MEILI=require turns that into a failure.
package meilitest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/seatghor/seatghor/internal/devenv/daemon"
)

// Server is a Meilisearch server for one test.
type Server struct {
	// URL and Key reach the server (Key is its master key).
	URL string
	Key string
	// Index is this test's index uid, deleted at cleanup.
	Index string
}

var shared struct {
	mu       sync.Mutex
	done     bool
	url, key string
	err      error
	proc     *proc
	dir      string
}

// proc is a running server; exited closes when the goroutine that started
// it (and alone waits for it) has reaped it.
type proc struct {
	cmd    *exec.Cmd
	exited chan struct{}
}

// kill stops the server and waits until it is reaped.
func (p *proc) kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// New returns the shared server with a fresh index name for tb, or skips tb.
func New(tb testing.TB) *Server {
	tb.Helper()
	shared.mu.Lock()
	if !shared.done {
		shared.url, shared.key, shared.err = find()
		shared.done = true
	}
	url, key, err := shared.url, shared.key, shared.err
	shared.mu.Unlock()
	if err != nil {
		skipOrFail(tb, err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	s := &Server{URL: url, Key: key, Index: "test_" + hex.EncodeToString(b[:])}
	tb.Cleanup(func() { s.deleteIndex() })
	return s
}

// Stop kills the server this process started, if any. Call it from
// TestMain after m.Run.
func Stop() {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.proc != nil {
		shared.proc.kill()
		_ = os.RemoveAll(shared.dir)
		shared.proc = nil
	}
}

func (s *Server) deleteIndex() {
	req, err := http.NewRequest(http.MethodDelete, s.URL+"/indexes/"+s.Index, nil)
	if err != nil {
		return
	}
	req.Header.Set("Authorization", "Bearer "+s.Key)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		_ = resp.Body.Close()
	}
}

func find() (url, key string, err error) {
	if u := os.Getenv("SEATGHOR_TEST_MEILI_URL"); u != "" {
		return strings.TrimRight(u, "/"), os.Getenv("SEATGHOR_TEST_MEILI_KEY"), nil
	}
	bin, err := install()
	if err != nil {
		return "", "", err
	}
	return start(bin)
}

// install runs scripts/install-meilisearch.sh, which prints the binary's
// path (installing it first if needed).
func install() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		script := filepath.Join(dir, "scripts", "install-meilisearch.sh")
		if _, err := os.Stat(script); err == nil {
			var stderr strings.Builder
			cmd := exec.Command("bash", script)
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				return "", fmt.Errorf("%s: %v: %s", script, err, strings.TrimSpace(stderr.String()))
			}
			return strings.TrimSpace(string(out)), nil
		}
		if filepath.Dir(dir) == dir {
			return "", errors.New("scripts/install-meilisearch.sh not found above " + wd)
		}
	}
}

// start runs the shared server on a free port with a throwaway database.
func start(bin string) (string, string, error) {
	port, err := freePort()
	if err != nil {
		return "", "", err
	}
	dir, err := os.MkdirTemp("", "seatghor-meilitest-")
	if err != nil {
		return "", "", err
	}
	key := newKey()
	cmd, err := launch(bin, port, dir, key)
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", "", err
	}
	shared.proc, shared.dir = cmd, dir
	return fmt.Sprintf("http://127.0.0.1:%d", port), key, nil
}

// Process is a Meilisearch server of one test, which the test may stop and
// start again (same port, same database): an outage on demand.
type Process struct {
	Server
	bin  string
	port int
	dir  string
	mu   sync.Mutex
	cmd  *proc
}

// Own starts a server for tb alone (skipping tb like New when none can be
// had); it is killed at cleanup.
func Own(tb testing.TB) *Process {
	tb.Helper()
	bin, err := ownBinary()
	if err != nil {
		skipOrFail(tb, err)
	}
	port, err := freePort()
	if err != nil {
		tb.Fatal(err)
	}
	p := &Process{bin: bin, port: port, dir: tb.TempDir()}
	p.URL, p.Key, p.Index = fmt.Sprintf("http://127.0.0.1:%d", port), newKey(), "trips"
	p.Start(tb)
	tb.Cleanup(func() { p.Stop(tb) })
	return p
}

// Start starts the server (again) and waits until it answers.
func (p *Process) Start(tb testing.TB) {
	tb.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		return
	}
	cmd, err := launch(p.bin, p.port, p.dir, p.Key)
	if err != nil {
		tb.Fatalf("meilitest: %v", err)
	}
	p.cmd = cmd
}

// Stop kills the server; its database stays for the next Start.
func (p *Process) Stop(tb testing.TB) {
	tb.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return
	}
	p.cmd.kill()
	// Wait until the port is free, too.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", p.port), 100*time.Millisecond)
		if err != nil {
			break
		}
		_ = c.Close()
	}
	p.cmd = nil
}

var ownBin struct {
	once sync.Once
	bin  string
	err  error
}

func ownBinary() (string, error) {
	if os.Getenv("SEATGHOR_TEST_MEILI_URL") != "" && os.Getenv("SEATGHOR_TEST_MEILI_BIN") == "" {
		return "", errors.New("SEATGHOR_TEST_MEILI_URL is set; a test that stops its own server needs SEATGHOR_TEST_MEILI_BIN too")
	}
	ownBin.once.Do(func() {
		if b := os.Getenv("SEATGHOR_TEST_MEILI_BIN"); b != "" {
			ownBin.bin = b
			return
		}
		ownBin.bin, ownBin.err = install()
	})
	return ownBin.bin, ownBin.err
}

func skipOrFail(tb testing.TB, err error) {
	tb.Helper()
	msg := "\n*** MEILISEARCH TESTS SKIPPED: no Meilisearch server: " + err.Error() +
		"\n*** (set SEATGHOR_TEST_MEILI_URL, or fix the install; SEATGHOR_TEST_MEILI=require fails instead)\n"
	if os.Getenv("SEATGHOR_TEST_MEILI") == "require" {
		tb.Fatal(msg)
	}
	tb.Skip(msg)
}

// freePort picks a port outside the kernel's ephemeral range (daemon.FreePorts says why).
func freePort() (int, error) {
	ports, err := daemon.FreePorts(1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}

func newKey() string {
	var kb [16]byte
	_, _ = rand.Read(kb[:])
	return hex.EncodeToString(kb[:])
}

// launch runs the server on port with its database under dir and waits
// until it answers. The process is started from a goroutine that keeps its
// OS thread for the server's lifetime, so Pdeathsig kills the server when
// the test binary dies, even without Stop (a timeout, a crash).
func launch(bin string, port int, dir, key string) (*proc, error) {
	log, err := os.OpenFile(filepath.Join(dir, "meilisearch.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	cmd := exec.Command(bin, "--db-path", filepath.Join(dir, "data.ms"),
		"--http-addr", fmt.Sprintf("127.0.0.1:%d", port), "--master-key", key, "--env", "development",
		"--no-analytics", "--log-level", "WARN", "--max-indexing-threads", "2")
	cmd.Dir = dir // dumps/ and snapshots/ default to the working directory
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	started := make(chan error, 1)
	running := &proc{cmd: cmd, exited: make(chan struct{})}
	go func() {
		defer close(running.exited)
		runtime.LockOSThread() // never unlocked: the thread lives as long as the server
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait()
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/health", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return running, nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	running.kill()
	out, _ := os.ReadFile(filepath.Join(dir, "meilisearch.log"))
	return nil, fmt.Errorf("meilisearch on port %d did not answer within 30 s: %s", port, strings.TrimSpace(string(out)))
}
