package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/seatghor/seatghor/internal/devenv/daemon"
)

// startDevRedis gives `seatghor dev` its seat-map cache (docs/DESIGN.md, dev
// mode): the installed redis-server on a free port with its files under
// dir, else an in-process Redis. stop ends it.
func startDevRedis(ctx context.Context, dir string, log *slog.Logger) (url string, stop func(), err error) {
	if bin, err := exec.LookPath("redis-server"); err == nil {
		url, stop, err := startRedisServer(ctx, bin, dir)
		if err == nil {
			log.Info("started redis-server", "url", url, "dir", dir)
			return url, stop, nil
		}
		log.Warn("redis-server did not start; using the in-process Redis", "err", err)
	}
	m := miniredis.NewMiniRedis()
	if err := m.Start(); err != nil {
		return "", nil, fmt.Errorf("in-process Redis: %w", err)
	}
	log.Info("started the in-process Redis (install redis-server for the real one)", "addr", m.Addr())
	return "redis://" + m.Addr() + "/0", m.Close, nil
}

func startRedisServer(ctx context.Context, bin, dir string) (string, func(), error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, err
	}
	ports, err := daemon.FreePorts(1)
	if err != nil {
		return "", nil, err
	}
	port := ports[0]
	// Not tied to ctx: dev stops it itself after the server shut down.
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", dir, "--logfile", filepath.Join(dir, "redis.log"))
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	url := fmt.Sprintf("redis://127.0.0.1:%d/0", port)
	c := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port)})
	defer c.Close()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if ctx.Err() != nil {
			stop()
			return "", nil, ctx.Err()
		}
		if c.Ping(ctx).Err() == nil {
			return url, stop, nil
		}
	}
	stop()
	return "", nil, errors.New("redis-server did not answer within 10s")
}
