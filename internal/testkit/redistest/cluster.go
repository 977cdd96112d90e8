package redistest

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seatghor/seatghor/internal/devenv/daemon"
	"github.com/seatghor/seatghor/internal/devenv/rediscluster"
)

// Cluster is a Redis Cluster of 3 primaries with one replica each
// (package rediscluster), each node a redis-server process on a free port
// of 127.0.0.1, without persistence.
type Cluster struct {
	// URL is the cluster's go-redis cluster URL: the first node, and the
	// others as addr= parameters (what SEATGHOR_REDIS_URL takes).
	URL   string
	dir   string
	nodes map[string]daemon.Process // the live ones, by address
}

// sharedCluster is the one cluster NewCluster hands out in a test binary.
var sharedCluster struct {
	mu  sync.Mutex
	c   *Cluster
	err error
}

// NewCluster returns a fresh key prefix on the test binary's shared Redis
// Cluster, started on first use (stopped by Cleanup). Use StartCluster for
// a test that fails nodes over.
func NewCluster(tb testing.TB) *Server {
	tb.Helper()
	sharedCluster.mu.Lock()
	if sharedCluster.c == nil && sharedCluster.err == nil {
		sharedCluster.c, sharedCluster.err = startCluster()
	}
	c, err := sharedCluster.c, sharedCluster.err
	sharedCluster.mu.Unlock()
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	return c.Server(tb)
}

// StartCluster starts a Redis Cluster for tb alone, stopped at its cleanup.
func StartCluster(tb testing.TB) *Cluster {
	tb.Helper()
	c, err := startCluster()
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	tb.Cleanup(c.stop)
	return c
}

// Server gives tb a fresh key prefix on the cluster, with a cluster client.
func (c *Cluster) Server(tb testing.TB) *Server {
	tb.Helper()
	opts, err := redis.ParseClusterURL(c.URL)
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	return newServer(tb, c.URL, redis.NewClusterClient(opts))
}

// PrimaryOf returns the address of the primary that serves key now.
func (c *Cluster) PrimaryOf(tb testing.TB, key string) string {
	tb.Helper()
	addr, err := c.primaryOf(key)
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	return addr
}

// Failover makes the replica of key's primary take over its slots with
// CLUSTER FAILOVER (the planned handover: the primary stops taking writes
// until its replica has them all, so nothing acknowledged is lost), and
// waits until every node agrees. It returns the new primary's address.
func (c *Cluster) Failover(tb testing.TB, key string) string {
	tb.Helper()
	ctx := context.Background()
	old, err := c.primaryOf(key)
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	replica, err := c.replicaOf(ctx, old)
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	if err := c.node(replica).Do(ctx, "CLUSTER", "FAILOVER").Err(); err != nil {
		tb.Fatalf("redistest: CLUSTER FAILOVER on %s: %v", replica, err)
	}
	if err := c.waitPrimary(key, replica, 20*time.Second); err != nil {
		tb.Fatalf("redistest: failover of %s to %s: %v", old, replica, err)
	}
	return replica
}

// KillPrimaryOf kills (SIGKILL) the primary serving key, so that its
// replica is elected in its place once the others judge it failed
// (cluster-node-timeout, 1s here), and waits for that. It returns the new
// primary's address. Writes the dead primary acknowledged but had not yet
// passed on are lost: Redis replicates asynchronously.
func (c *Cluster) KillPrimaryOf(tb testing.TB, key string) string {
	tb.Helper()
	ctx := context.Background()
	old, err := c.primaryOf(key)
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	replica, err := c.replicaOf(ctx, old)
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	if err := c.nodes[old].Kill(ctx); err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	delete(c.nodes, old)
	if err := c.waitPrimary(key, replica, 30*time.Second); err != nil {
		tb.Fatalf("redistest: %s did not take over from the killed %s: %v", replica, old, err)
	}
	return replica
}

func (c *Cluster) node(addr string) *redis.Client { return rediscluster.Client(addr) }

// live is the addresses of the nodes that still run.
func (c *Cluster) live() []string {
	out := make([]string, 0, len(c.nodes))
	for addr := range c.nodes {
		out = append(out, addr)
	}
	return out
}

// primaryOf asks a live node which primary serves key's slot.
func (c *Cluster) primaryOf(key string) (string, error) {
	return rediscluster.PrimaryOf(context.Background(), c.live(), key)
}

// replicaOf returns the address of a replica of the primary at addr.
func (c *Cluster) replicaOf(ctx context.Context, addr string) (string, error) {
	return rediscluster.ReplicaOf(ctx, addr)
}

// waitPrimary waits until every live node says want serves key's slot and
// the cluster is whole again.
func (c *Cluster) waitPrimary(key, want string, within time.Duration) error {
	return rediscluster.WaitPrimary(context.Background(), c.live(), key, want, within)
}

// startCluster starts a cluster in a directory of its own.
func startCluster() (*Cluster, error) {
	dir, err := os.MkdirTemp("", "seatghor-rediscluster-")
	if err != nil {
		return nil, err
	}
	rc, err := rediscluster.Start(context.Background(), rediscluster.Config{Dir: dir, Attach: true})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	c := &Cluster{URL: rc.URL, dir: dir, nodes: map[string]daemon.Process{}}
	for _, n := range rc.Nodes {
		c.nodes[n.Addr] = n.Process
	}
	return c, nil
}

func (c *Cluster) stop() {
	for addr, p := range c.nodes {
		_ = p.Kill(context.Background())
		delete(c.nodes, addr)
	}
	_ = os.RemoveAll(c.dir)
}
