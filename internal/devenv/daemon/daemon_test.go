package daemon

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestStartOutlivesAndStops: a started process runs in a session of its
// own and logs to its file; Stop ends it (SIGTERM), Kill one that ignores
// SIGTERM after the grace, and both are no-ops on a process that is gone.
func TestStartOutlivesAndStops(t *testing.T) {
	ctx := context.Background()
	log := filepath.Join(t.TempDir(), "logs", "p.log")
	p, err := Start(Spec{Name: "sleeper", Path: "/bin/sh", Args: []string{"-c", "echo hello; exec sleep 60"}, Log: log})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Kill(ctx) })
	require.True(t, p.Alive())
	require.Positive(t, p.Started)
	require.Eventually(t, func() bool { b, _ := os.ReadFile(log); return string(b) == "hello\n" }, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, p.Stop(ctx, 5*time.Second))
	require.False(t, p.Alive())
	require.NoError(t, p.Stop(ctx, time.Second), "stopping twice is fine")

	stubborn, err := Start(Spec{Name: "stubborn", Path: "/bin/sh", Args: []string{"-c", "trap '' TERM; while :; do sleep 0.05; done"}})
	require.NoError(t, err)
	require.Eventually(t, stubborn.Alive, time.Second, 10*time.Millisecond)
	time.Sleep(100 * time.Millisecond) // the trap is set
	require.NoError(t, stubborn.Stop(ctx, 200*time.Millisecond))
	require.False(t, stubborn.Alive())

	// An id now belonging to another process, recorded with a start time
	// that is not that process's (not p's: this process and the sleeper
	// may have started within the same clock tick).
	own, err := startTime(os.Getpid())
	require.NoError(t, err)
	reused := p
	reused.PID, reused.Started = os.Getpid(), own+1
	require.False(t, reused.Alive(), "another start time is another process")
	reused.Started = own
	require.True(t, reused.Alive(), "the same start time is the same process")
}

func TestParseStat(t *testing.T) {
	for _, tt := range []struct {
		in      string
		state   string
		started uint64
		ok      bool
	}{
		{"42 (sleep) S 1 42 42 0 -1 4194560 97 0 0 0 0 0 0 0 20 0 1 0 123456 2 3", "S", 123456, true},
		{"42 (a (b) c) Z 1 42 42 0 -1 4194560 97 0 0 0 0 0 0 0 20 0 1 0 99 2 3", "Z", 99, true},
		{"42 (x) S 1", "", 0, false},
		{"garbage", "", 0, false},
	} {
		state, started, ok := parseStat(tt.in)
		require.Equal(t, tt.ok, ok, tt.in)
		if ok {
			require.Equal(t, tt.state, state)
			require.Equal(t, tt.started, started)
		}
	}
}

// TestFreePortsOutsideEphemeralRange: the ports are distinct, free, and
// below the range the kernel hands out to outgoing connections, where a
// port freed for redis-server used to be taken before it bound it. Many
// connections opened meanwhile never land on one of them.
func TestFreePortsOutsideEphemeralRange(t *testing.T) {
	ports, err := FreePorts(12)
	require.NoError(t, err)
	low := ephemeralLow()
	seen := map[int]bool{}
	for _, p := range ports {
		require.False(t, seen[p], "port %d twice", p)
		seen[p] = true
		require.GreaterOrEqual(t, p, portFloor)
		require.Less(t, p, low)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	for range 200 {
		c, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		require.False(t, seen[c.LocalAddr().(*net.TCPAddr).Port], "an outgoing connection took a port FreePorts gave")
		_ = c.Close()
	}
	for _, p := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		require.NoError(t, err, "port %d is free to bind", p)
		_ = l.Close()
	}
}
