// Package daemon starts local processes that outlive the process that
// started them (each in a session and process group of its own, its output
// in a log file) and stops them again by their recorded process id, from
// another process if need be: what `seatghor cluster up` and `down` do with
// the servers of a local topology, and the Redis Cluster of the tests.
//
// A Process records the process's start time with its id, so a stop or a
// liveness check never takes a later process that reuses the id for ours.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Spec is a process to start.
type Spec struct {
	// Name names it in logs and errors ("api-1", "redis-7001").
	Name string
	// Path is the executable; Args its arguments (without Path).
	Path string
	Args []string
	// Env is its whole environment; nil inherits ours.
	Env []string
	// Dir is its working directory; "" is ours.
	Dir string
	// Log receives its stdout and stderr (appended); "" discards them.
	Log string
	// Attach keeps it in our process group instead of a session of its
	// own, so a Ctrl-C in our terminal ends it too (a test's servers); it
	// still outlives a SIGKILL of ours.
	Attach bool
}

// Process is a started process, as recorded to stop it later.
type Process struct {
	Name string `json:"name"`
	PID  int    `json:"pid"`
	// Started is the process's start time in clock ticks since boot
	// (/proc/PID/stat field 22); 0 where there is no /proc.
	Started uint64 `json:"started,omitempty"`
	Log     string `json:"log,omitempty"`
}

// Start starts spec's process in a new session (unless spec.Attach), so
// that it survives the end of ours and a Ctrl-C in our terminal, and
// returns at once. Our
// process reaps it if it ends while we still run; afterwards init does.
func Start(spec Spec) (Process, error) {
	cmd := exec.Command(spec.Path, spec.Args...)
	cmd.Env, cmd.Dir = spec.Env, spec.Dir
	if spec.Log != "" {
		if err := os.MkdirAll(filepath.Dir(spec.Log), 0o755); err != nil {
			return Process{}, fmt.Errorf("start %s: %w", spec.Name, err)
		}
		f, err := os.OpenFile(spec.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return Process{}, fmt.Errorf("start %s: %w", spec.Name, err)
		}
		defer f.Close() // the child has its own descriptor
		cmd.Stdout, cmd.Stderr = f, f
	}
	if !spec.Attach {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
	if err := cmd.Start(); err != nil {
		return Process{}, fmt.Errorf("start %s: %w", spec.Name, err)
	}
	p := Process{Name: spec.Name, PID: cmd.Process.Pid, Log: spec.Log}
	p.Started, _ = startTime(p.PID)
	go func() { _ = cmd.Wait() }() // no zombie while we run
	return p, nil
}

// Alive tells whether the process still runs (a zombie does not).
func (p Process) Alive() bool {
	if p.PID <= 0 || syscall.Kill(p.PID, 0) != nil {
		return false
	}
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.PID))
	if errors.Is(err, os.ErrNotExist) && !procMounted() {
		return true // no /proc: trust the signal
	}
	if err != nil {
		return false
	}
	state, started, ok := parseStat(string(st))
	if !ok || state == "Z" || state == "X" {
		return false
	}
	return p.Started == 0 || started == p.Started
}

// Stop ends the process: SIGTERM to its process group, then SIGKILL when it
// still runs after grace. It returns once the process is gone; a process
// already gone is fine.
func (p Process) Stop(ctx context.Context, grace time.Duration) error {
	if !p.Alive() {
		return nil
	}
	p.signal(syscall.SIGTERM)
	if p.wait(ctx, grace) {
		return nil
	}
	p.signal(syscall.SIGKILL)
	if p.wait(ctx, 10*time.Second) {
		return nil
	}
	return fmt.Errorf("stop %s: pid %d still runs after SIGKILL", p.Name, p.PID)
}

// Kill ends the process with SIGKILL at once (a crash on demand) and
// returns once it is gone.
func (p Process) Kill(ctx context.Context) error {
	if !p.Alive() {
		return nil
	}
	p.signal(syscall.SIGKILL)
	if p.wait(ctx, 10*time.Second) {
		return nil
	}
	return fmt.Errorf("kill %s: pid %d still runs", p.Name, p.PID)
}

// signal sends sig to the process's group (when it leads one: Setsid),
// and to the process itself.
func (p Process) signal(sig syscall.Signal) {
	_ = syscall.Kill(-p.PID, sig)
	_ = syscall.Kill(p.PID, sig)
}

func (p Process) wait(ctx context.Context, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for p.Alive() {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// startTime reads a process's start time from /proc.
func startTime(pid int) (uint64, error) {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	_, started, ok := parseStat(string(st))
	if !ok {
		return 0, fmt.Errorf("unreadable /proc/%d/stat", pid)
	}
	return started, nil
}

// parseStat returns the state (field 3) and start time (field 22) of a
// /proc/PID/stat line; the command name (field 2) may hold spaces and
// parentheses, so the fields are counted after its last ')'.
func parseStat(s string) (state string, started uint64, ok bool) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return "", 0, false
	}
	started, err := strconv.ParseUint(f[19], 10, 64)
	return f[0], started, err == nil
}

func procMounted() bool {
	_, err := os.Stat("/proc/self/stat")
	return err == nil
}

// FreePorts returns n distinct TCP ports of 127.0.0.1 that nothing listens
// on now, for the processes about to be started (all are held open until
// the last is picked, so none repeats). They are drawn below the kernel's
// ephemeral range: a port the kernel hands out itself (127.0.0.1:0) is
// also the source port of the next outgoing connection, and with tests
// opening thousands of them a freed port was taken before redis-server
// bound it, which then never answered. Below that range only another
// listener picking the same port at the same moment can take it.
func FreePorts(n int) ([]int, error) {
	low := ephemeralLow()
	var ports []int
	for tries := 0; len(ports) < n; tries++ {
		if tries > 64*n {
			return nil, fmt.Errorf("daemon: no %d free ports below %d", n, low)
		}
		port := portFloor + rand.IntN(low-portFloor)
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			continue // in use
		}
		defer ln.Close()
		ports = append(ports, port)
	}
	return ports, nil
}

// portFloor keeps FreePorts above the ports services are usually
// configured on (PostgreSQL 5432, Redis 6379, MinIO 9000, Meilisearch 7700).
const portFloor = 20000

// ephemeralLow is the first port of the kernel's ephemeral range (32768
// when it cannot be read: Linux's default).
func ephemeralLow() int {
	const fallback = 32768
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return fallback
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return fallback
	}
	low, err := strconv.Atoi(f[0])
	if err != nil || low <= portFloor+1000 {
		return fallback
	}
	return low
}
