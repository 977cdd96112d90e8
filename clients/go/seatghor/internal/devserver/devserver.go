// Package devserver starts the real Seatghor binary (`seatghor dev`: its own
// PostgreSQL, the demo shows) on a temporary directory and a free port for
// the SDK's tests and examples, as clients/ts/test/api.test.ts does.
//
// The binary is $SEATGHOR_BIN, else bin/seatghor of the repository this
// module sits in, built first when it is missing.
package devserver

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

const (
	startTimeout = 90 * time.Second
	stopTimeout  = 30 * time.Second
)

// Server is a running `seatghor dev`.
type Server struct {
	// BaseURL is where it serves Connect, gRPC, gRPC-Web and REST.
	BaseURL string
	bin     string
	dataDir string
	cmd     *exec.Cmd
	exited  chan struct{}
	mu      sync.Mutex
	logs    bytes.Buffer
}

var running = regexp.MustCompile(`Seatghor is running at (http://\S+)`)

// Start starts the server and returns once it serves. env adds NAME=value
// settings to its environment (e.g. SEATGHOR_SWEEP_INTERVAL=200ms).
func Start(ctx context.Context, env ...string) (*Server, error) {
	bin, err := binary(ctx)
	if err != nil {
		return nil, err
	}
	dataDir, err := os.MkdirTemp("", "seatghor-go-sdk-")
	if err != nil {
		return nil, err
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin, dataDir: dataDir, exited: make(chan struct{})}
	s.cmd = exec.Command(bin, "dev", "--data-dir", dataDir, "--addr", addr)
	// The in-process sandbox gateway listens on a port the system picks
	// (as the site's and the TypeScript client's harnesses ask), so
	// parallel runs never collide on its default 127.0.0.1:8081, nor on a
	// port picked free here and taken by another process before it binds.
	s.cmd.Env = append(append(os.Environ(), "SEATGHOR_SANDBOX_ADDR=127.0.0.1:0"), env...)
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s.cmd.Stderr = writerFunc(s.log)
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			_, _ = s.log([]byte(line + "\n"))
			if m := running.FindStringSubmatch(line); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	go func() {
		_ = s.cmd.Wait()
		close(s.exited)
	}()
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case s.BaseURL = <-found:
		return s, nil
	case <-s.exited:
		err = errors.New("seatghor dev exited before serving")
	case <-timer.C:
		err = fmt.Errorf("seatghor dev did not serve within %s", startTimeout)
	case <-ctx.Done():
		err = ctx.Err()
	}
	s.Stop()
	return nil, fmt.Errorf("%w\n%s", err, s.Logs())
}

// Token mints an access token (a JWT) for sub with role (user, operator,
// admin or partner) by `seatghor token`.
func (s *Server) Token(ctx context.Context, sub, role string) (string, error) {
	return s.token(ctx, "--sub", sub, "--role", role)
}

// PartnerToken mints an access token for sub acting for the partner: the
// credential of the partner's staff, which may make the partner's API keys.
func (s *Server) PartnerToken(ctx context.Context, sub string, partnerID int64) (string, error) {
	return s.token(ctx, "--sub", sub, "--role", "partner", "--partner", strconv.FormatInt(partnerID, 10))
}

func (s *Server) token(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, s.bin, append([]string{"token"}, args...)...).Output()
	if err != nil {
		return "", fmt.Errorf("seatghor token %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

// Logs returns what the server printed so far.
func (s *Server) Logs() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.String()
}

// Stop interrupts the server, kills it if it does not stop in time, and
// removes its data directory.
func (s *Server) Stop() {
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.exited:
	case <-time.After(stopTimeout):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
	_ = os.RemoveAll(s.dataDir)
}

func (s *Server) log(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.Write(p)
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// binary finds the server binary, building it when the repository has none.
func binary(ctx context.Context) (string, error) {
	if b := os.Getenv("SEATGHOR_BIN"); b != "" {
		return filepath.Abs(b)
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(root, "bin", "seatghor")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/seatghor")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the server (or set SEATGHOR_BIN): %w\n%s", err, out)
	}
	return bin, nil
}

// repoRoot walks up from the working directory to the repository that holds
// cmd/seatghor.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if st, err := os.Stat(filepath.Join(dir, "cmd", "seatghor")); err == nil && st.IsDir() {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no Seatghor repository above the working directory: set SEATGHOR_BIN")
		}
		dir = parent
	}
}
