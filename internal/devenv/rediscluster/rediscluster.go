// Package rediscluster starts a local Redis Cluster of 3 primaries with one
// replica each from the installed redis-server and redis-cli: each node a
// detached process (package daemon) on a free port of 127.0.0.1, without
// persistence, its files and log under one directory. `seatghor cluster
// up` runs one, and internal/testkit/redistest gives tests one.
package rediscluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seatghor/seatghor/internal/devenv/daemon"
)

// Node is one redis-server of the cluster.
type Node struct {
	Addr string `json:"addr"`
	daemon.Process
}

// Cluster is a running Redis Cluster.
type Cluster struct {
	// URL is the cluster's go-redis cluster URL: the first node, and the
	// others as addr= parameters (what SEATGHOR_REDIS_URL takes).
	URL string
	// Nodes are its servers, primaries and replicas.
	Nodes []Node
}

// Config is where and how a cluster runs.
type Config struct {
	// Dir holds a directory per node (created if missing).
	Dir string
	// Attach keeps the nodes in the caller's process group (tests: a
	// Ctrl-C ends them too); else each has a session of its own.
	Attach bool
}

// Start starts six nodes with their files under cfg.Dir and joins them
// with redis-cli --cluster create; it returns once every node sees the
// whole cluster and every replica has synced. The nodes run until Stop,
// whatever becomes of the caller. On an error, the nodes it started are
// stopped.
func Start(ctx context.Context, cfg Config) (c *Cluster, err error) {
	server, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, errors.New("no redis-server to start a cluster with (apt-get install redis-server)")
	}
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		return nil, errors.New("no redis-cli to create a cluster with (apt-get install redis-tools)")
	}
	started := &Cluster{}
	defer func() {
		if err != nil {
			started.Stop(context.WithoutCancel(ctx))
		}
	}()
	// Twelve distinct ports: each node's own and its cluster bus port
	// (named, since the default, port+10000, may be taken or past 65535).
	ports, err := daemon.FreePorts(12)
	if err != nil {
		return nil, err
	}
	var addrs []string
	for i := range 6 {
		port, bus := ports[2*i], ports[2*i+1]
		nd := filepath.Join(cfg.Dir, strconv.Itoa(port))
		if err := os.MkdirAll(nd, 0o700); err != nil {
			return nil, fmt.Errorf("rediscluster: %w", err)
		}
		// cluster-node-timeout 1s: a dead primary is replaced within a few
		// seconds. Without full coverage the slots of the other primaries
		// keep answering while one fails over.
		p, err := daemon.Start(daemon.Spec{Name: "redis-" + strconv.Itoa(port), Path: server, Dir: nd, Attach: cfg.Attach, Args: []string{
			"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
			"--appendonly", "no", "--dir", nd, "--logfile", filepath.Join(nd, "redis.log"),
			"--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(bus), "--cluster-config-file", filepath.Join(nd, "nodes.conf"),
			"--cluster-node-timeout", "1000", "--cluster-require-full-coverage", "no",
			// Replicas sync at once, not after the default 5 s wait for more.
			"--repl-diskless-sync-delay", "0"}})
		if err != nil {
			return nil, fmt.Errorf("rediscluster: %w", err)
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		started.Nodes = append(started.Nodes, Node{Addr: addr, Process: p})
		addrs = append(addrs, addr)
	}
	for _, a := range addrs {
		if err := poll(ctx, 10*time.Second, func() error { return ping(ctx, a) }); err != nil {
			return nil, fmt.Errorf("rediscluster: redis-server %s did not answer: %w", a, err)
		}
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	if out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("rediscluster: redis-cli --cluster create: %v\n%s", err, out)
	}
	// redis-cli returns once the slots are assigned; wait until every node
	// sees the whole cluster and every replica has synced.
	if err := poll(ctx, 30*time.Second, func() error { return started.Ready(ctx) }); err != nil {
		return nil, fmt.Errorf("rediscluster: not ready: %w", err)
	}
	started.URL = "redis://" + addrs[0] + "?addr=" + strings.Join(addrs[1:], "&addr=")
	return started, nil
}

// Client connects to one node alone (not to the cluster).
func Client(addr string) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: addr, DialTimeout: time.Second, ReadTimeout: 2 * time.Second, MaxRetries: -1})
}

// Ready says why the cluster is not whole yet: a node that is down, does
// not see all six, or a replica not in sync; nil when it is.
func (c *Cluster) Ready(ctx context.Context) error {
	for _, nd := range c.Nodes {
		n := Client(nd.Addr)
		info, err := n.ClusterInfo(ctx).Result()
		if err == nil && (!strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_known_nodes:6")) {
			err = fmt.Errorf("%s: %s", nd.Addr, strings.ReplaceAll(info, "\r\n", " "))
		}
		if err == nil {
			var repl string
			repl, err = n.Info(ctx, "replication").Result()
			if err == nil && strings.Contains(repl, "role:slave") && !strings.Contains(repl, "master_link_status:up") {
				err = fmt.Errorf("%s: replica not in sync", nd.Addr)
			}
		}
		_ = n.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// Stop kills every node (nothing is persisted) and waits until they are gone.
func (c *Cluster) Stop(ctx context.Context) {
	for _, nd := range c.Nodes {
		_ = nd.Kill(ctx)
	}
}

func ping(ctx context.Context, addr string) error {
	n := Client(addr)
	defer n.Close()
	return n.Ping(ctx).Err()
}

// poll calls check every 20 ms until it returns nil, within.
func poll(ctx context.Context, within time.Duration, check func() error) error {
	deadline := time.Now().Add(within)
	for {
		err := check()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
