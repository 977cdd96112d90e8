// Package miniotest gives tests a real MinIO server: the minio
// binary built once from source into a cache directory, started as a
// separate process on a free port with a throwaway data directory. MinIO is
// AGPL: it only ever runs as its own process and is never linked into
// Seatghor (decision 0041).
//
// Shared returns one server per test binary (stopped by Cleanup from
// TestMain); Start returns a server of the test's own, which the test may
// stop and start again (a store outage).
package miniotest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/seatghor/seatghor/internal/devenv/daemon"
	"github.com/seatghor/seatghor/internal/devenv/miniobin"
	"github.com/seatghor/seatghor/server/objstore"
)

// The root credentials of every test server.
const (
	AccessKey = "seatghor-test"
	SecretKey = "seatghor-test-secret"
)

// Server is a running MinIO process.
type Server struct {
	// Addr is host:port of its S3 API.
	Addr string
	dir  string
	mu   sync.Mutex
	proc *proc
}

// proc is a started minio process; exited yields once, when it has ended.
type proc struct {
	cmd    *exec.Cmd
	exited chan error
}

func (p *proc) stop() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// Config returns a configuration of bucket on s.
func (s *Server) Config(bucket string) objstore.Config {
	return objstore.Config{Endpoint: "http://" + s.Addr, AccessKey: AccessKey, SecretKey: SecretKey, Bucket: bucket}
}

var shared struct {
	mu  sync.Mutex
	srv *Server
	err error
}

// Shared returns this test binary's MinIO server, starting it on first use.
func Shared(tb testing.TB) *Server {
	tb.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.srv == nil && shared.err == nil {
		shared.srv, shared.err = start()
	}
	if shared.err != nil {
		tb.Fatalf("miniotest: %v", shared.err)
	}
	return shared.srv
}

// Start starts a MinIO server for tb alone; it stops at cleanup.
func Start(tb testing.TB) *Server {
	tb.Helper()
	s, err := start()
	if err != nil {
		tb.Fatalf("miniotest: %v", err)
	}
	tb.Cleanup(s.kill)
	return s
}

// Cleanup stops the shared server, if one was started. Call it from
// TestMain after m.Run.
func Cleanup() {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.srv != nil {
		shared.srv.kill()
		shared.srv = nil
	}
}

// Bucket returns a fresh bucket name for a test.
func Bucket() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "test-" + hex.EncodeToString(b[:])
}

// Stop kills the server process (its data stays, for Resume).
func (s *Server) Stop(tb testing.TB) {
	tb.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		s.proc.stop()
		s.proc = nil
	}
}

// Resume starts the stopped server again, on the same port and data.
func (s *Server) Resume(tb testing.TB) {
	tb.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		return
	}
	bin, err := Binary()
	if err != nil {
		tb.Fatal(err)
	}
	if s.proc, err = run(bin, s.Addr, s.dir); err != nil {
		tb.Fatalf("miniotest: %v", err)
	}
}

func (s *Server) kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		s.proc.stop()
		s.proc = nil
	}
	_ = os.RemoveAll(s.dir)
}

func start() (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "seatghor-miniotest-")
	if err != nil {
		return nil, err
	}
	for range 3 { // a free port can be taken between the probe and the bind
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s := &Server{Addr: "127.0.0.1:" + strconv.Itoa(port), dir: dir}
		if s.proc, err = run(bin, s.Addr, dir); err == nil {
			return s, nil
		}
	}
	_ = os.RemoveAll(dir)
	return nil, errors.New("minio did not start (see its log in the data directory)")
}

// run starts minio on addr with dir and waits until it answers.
func run(bin, addr, dir string) (*proc, error) {
	data := filepath.Join(dir, "data")
	logf, err := os.OpenFile(filepath.Join(dir, "minio.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(bin, "server", "--quiet", "--address", addr, data)
	cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+AccessKey, "MINIO_ROOT_PASSWORD="+SecretKey,
		"MINIO_BROWSER=off", "MINIO_UPDATE=off")
	cmd.Stdout, cmd.Stderr = logf, logf
	// The server dies with the test binary, even on a crash. Pdeathsig
	// fires when the OS thread that started the child exits, not the
	// process, and Go retires idle threads: so it is started from a thread
	// locked for good, or the server can be killed in the middle of a test.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	started := make(chan error, 1)
	exited := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread lives as long as the server
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		exited <- cmd.Wait()
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("start minio: %w", err)
	}
	client := &http.Client{Timeout: time.Second}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		select {
		case err := <-exited:
			return nil, fmt.Errorf("minio exited: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
		if ready(client, addr) {
			return &proc{cmd: cmd, exited: exited}, nil
		}
	}
	_ = cmd.Process.Kill()
	<-exited
	return nil, fmt.Errorf("minio on %s did not become ready", addr)
}

// ready tells whether minio answers S3 requests: its health check says
// ready a moment before its object layer is up, when a bucket request
// still gets 503 "Server not initialized yet", so an (unsigned) ListBuckets
// must get past that too.
func ready(client *http.Client, addr string) bool {
	for _, path := range []string{"/minio/health/ready", "/"} {
		resp, err := client.Get("http://" + addr + path)
		if err != nil {
			return false
		}
		resp.Body.Close()
		if path == "/minio/health/ready" && resp.StatusCode != http.StatusOK ||
			resp.StatusCode == http.StatusServiceUnavailable {
			return false
		}
	}
	return true
}

// Binary returns the path of the minio binary: SEATGHOR_TEST_MINIO_BIN if
// set, else the cached build, building it first when missing (a few
// minutes, once per machine; package miniobin).
func Binary() (string, error) {
	if p := os.Getenv("SEATGHOR_TEST_MINIO_BIN"); p != "" {
		return p, nil
	}
	return miniobin.Build(context.Background())
}

// freePort picks a port outside the kernel's ephemeral range (daemon.FreePorts says why).
func freePort() (int, error) {
	ports, err := daemon.FreePorts(1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}
