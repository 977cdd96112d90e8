package rediscluster

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// What a failover needs, shared by the tests' clusters (redistest) and
// `seatghor chaos`, which fail primaries over on purpose: which node serves
// a key, its replica, and waiting until every live node agrees on a new
// primary. Each takes the addresses of the nodes that still run.

// PrimaryOf asks the live nodes which primary serves key's slot now.
func PrimaryOf(ctx context.Context, live []string, key string) (string, error) {
	var last error
	for _, addr := range live {
		n := Client(addr)
		p, err := servedBy(ctx, n, key)
		_ = n.Close()
		if err == nil && p != "" {
			return p, nil
		}
		last = err
	}
	return "", fmt.Errorf("rediscluster: no node knows the primary of %q (%v)", key, last)
}

// ReplicaOf returns the address of a replica of the primary at addr.
func ReplicaOf(ctx context.Context, addr string) (string, error) {
	n := Client(addr)
	defer n.Close()
	id, err := n.Do(ctx, "CLUSTER", "MYID").Text()
	if err != nil {
		return "", fmt.Errorf("rediscluster: CLUSTER MYID on %s: %w", addr, err)
	}
	lines, err := n.Do(ctx, "CLUSTER", "REPLICAS", id).StringSlice()
	if err != nil || len(lines) == 0 {
		return "", fmt.Errorf("rediscluster: replicas of %s: %v %v", addr, lines, err)
	}
	// "<id> <ip:port@cport> …"
	f := strings.Fields(lines[0])
	if len(f) < 2 {
		return "", fmt.Errorf("rediscluster: replicas of %s: %q", addr, lines[0])
	}
	return strings.Split(f[1], "@")[0], nil
}

// WaitPrimary waits until every live node says want serves key's slot and
// the cluster is whole again, within.
func WaitPrimary(ctx context.Context, live []string, key, want string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		err := agree(ctx, live, key, want)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func agree(ctx context.Context, live []string, key, want string) error {
	for _, addr := range live {
		n := Client(addr)
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
