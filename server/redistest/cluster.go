package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cluster is a Redis Cluster of 3 primaries with one replica each, each node
// a redis-server process on a free port of 127.0.0.1, without persistence.
type Cluster struct {
	// URL is the cluster's go-redis cluster URL: the first node, and the
	// others as addr= parameters (what SEATGHOR_REDIS_URL takes).
	URL   string
	dir   string
	nodes map[string]*exec.Cmd // by address
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
	cmd := c.nodes[old]
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	delete(c.nodes, old)
	if err := c.waitPrimary(key, replica, 30*time.Second); err != nil {
		tb.Fatalf("redistest: %s did not take over from the killed %s: %v", replica, old, err)
	}
	return replica
}

func (c *Cluster) node(addr string) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: addr, DialTimeout: time.Second, ReadTimeout: 2 * time.Second, MaxRetries: -1})
}

// primaryOf asks a live node which primary serves key's slot.
func (c *Cluster) primaryOf(key string) (string, error) {
	ctx := context.Background()
	var last error
	for addr := range c.nodes {
		n := c.node(addr)
		p, err := servedBy(ctx, n, key)
		_ = n.Close()
		if err == nil && p != "" {
			return p, nil
		}
		last = err
	}
	return "", fmt.Errorf("no node knows the primary of %q (%v)", key, last)
}

// servedBy returns the primary that node n says serves key ("" if none).
func servedBy(ctx context.Context, n *redis.Client, key string) (string, error) {
	slot, err := n.ClusterKeySlot(ctx, key).Result()
	if err != nil {
		return "", err
	}
	shards, err := n.ClusterShards(ctx).Result()
	if err != nil {
		return "", err
	}
	for _, sh := range shards {
		for _, r := range sh.Slots {
			if r.Start > slot || slot > r.End {
				continue
			}
			for _, nd := range sh.Nodes {
				if nd.Role == "master" && nd.Health == "online" {
					return net.JoinHostPort(nd.IP, strconv.FormatInt(nd.Port, 10)), nil
				}
			}
		}
	}
	return "", nil
}

// replicaOf returns the address of a replica of the primary at addr.
func (c *Cluster) replicaOf(ctx context.Context, addr string) (string, error) {
	n := c.node(addr)
	defer n.Close()
	id, err := n.Do(ctx, "CLUSTER", "MYID").Text()
	if err != nil {
		return "", fmt.Errorf("CLUSTER MYID on %s: %w", addr, err)
	}
	lines, err := n.Do(ctx, "CLUSTER", "REPLICAS", id).StringSlice()
	if err != nil || len(lines) == 0 {
		return "", fmt.Errorf("replicas of %s: %v %v", addr, lines, err)
	}
	// "<id> <ip:port@cport> …"
	f := strings.Fields(lines[0])
	if len(f) < 2 {
		return "", fmt.Errorf("replicas of %s: %q", addr, lines[0])
	}
	return strings.Split(f[1], "@")[0], nil
}

// waitPrimary waits until every live node says want serves key's slot and
// the cluster is whole again.
func (c *Cluster) waitPrimary(key, want string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		err := c.agree(key, want)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (c *Cluster) agree(key, want string) error {
	ctx := context.Background()
	for addr := range c.nodes {
		n := c.node(addr)
		info, err := n.ClusterInfo(ctx).Result()
		if err == nil && !strings.Contains(info, "cluster_state:ok") {
			err = fmt.Errorf("%s: cluster not ok", addr)
		}
		if err == nil {
			var p string
			if p, err = servedBy(ctx, n, key); err == nil && p != want {
				err = fmt.Errorf("%s: %q still served by %q", addr, key, p)
			}
		}
		_ = n.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// startCluster starts six nodes and joins them with redis-cli --cluster
// create (3 primaries, a replica each).
func startCluster() (c *Cluster, err error) {
	server, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, errors.New("no redis-server to start a cluster with (apt-get install redis-server)")
	}
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		return nil, errors.New("no redis-cli to create a cluster with (apt-get install redis-tools)")
	}
	dir, err := os.MkdirTemp("", "seatghor-rediscluster-")
	if err != nil {
		return nil, err
	}
	started := &Cluster{dir: dir, nodes: map[string]*exec.Cmd{}}
	c = started
	defer func() {
		if err != nil {
			started.stop() // c is nil by now
		}
	}()
	// Twelve distinct ports: each node's own and its cluster bus port
	// (named, since the default, port+10000, may be taken or past 65535).
	ports, err := freePorts(12)
	if err != nil {
		return nil, err
	}
	var addrs []string
	for i := range 6 {
		port, bus := ports[2*i], ports[2*i+1]
		nd := filepath.Join(dir, strconv.Itoa(port))
		if err := os.Mkdir(nd, 0o700); err != nil {
			return nil, err
		}
		// cluster-node-timeout 1s: a dead primary is replaced within a few
		// seconds. Without full coverage the slots of the other primaries
		// keep answering while one fails over.
		cmd := exec.Command(server, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
			"--appendonly", "no", "--dir", nd, "--logfile", filepath.Join(nd, "redis.log"),
			"--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(bus), "--cluster-config-file", filepath.Join(nd, "nodes.conf"),
			"--cluster-node-timeout", "1000", "--cluster-require-full-coverage", "no",
			// Replicas sync at once, not after the default 5 s wait for more.
			"--repl-diskless-sync-delay", "0")
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("start redis-server: %w", err)
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		c.nodes[addr] = cmd
		addrs = append(addrs, addr)
	}
	for _, a := range addrs {
		for deadline := time.Now().Add(10 * time.Second); !answers("redis://" + a); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				return nil, fmt.Errorf("redis-server %s did not answer", a)
			}
		}
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("redis-cli --cluster create: %v\n%s", err, out)
	}
	// redis-cli returns once the slots are assigned; wait until every node
	// sees the whole cluster and every replica has synced.
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := c.ready()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("cluster not ready: %w", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.URL = "redis://" + addrs[0] + "?addr=" + strings.Join(addrs[1:], "&addr=")
	return c, nil
}

// freePorts returns n distinct TCP ports of 127.0.0.1 that nothing listens
// on now (all held open until the last is picked, so none repeats).
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer ln.Close()
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func (c *Cluster) ready() error {
	ctx := context.Background()
	for addr := range c.nodes {
		n := c.node(addr)
		info, err := n.ClusterInfo(ctx).Result()
		if err == nil && (!strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_known_nodes:6")) {
			err = fmt.Errorf("%s: %s", addr, strings.ReplaceAll(info, "\r\n", " "))
		}
		if err == nil {
			var repl string
			repl, err = n.Info(ctx, "replication").Result()
			if err == nil && strings.Contains(repl, "role:slave") && !strings.Contains(repl, "master_link_status:up") {
				err = fmt.Errorf("%s: replica not in sync", addr)
			}
		}
		_ = n.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

func (c *Cluster) stop() {
	for addr, cmd := range c.nodes {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		delete(c.nodes, addr)
	}
	_ = os.RemoveAll(c.dir)
}
