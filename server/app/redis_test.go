package app

import (
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// TestOpenRedisPicksTheDeployment (decision 0200): SEATGHOR_REDIS_URL alone
// tells a single Redis from a Redis Cluster, and a cluster's key prefix may
// not hold a hash tag of its own.
func TestOpenRedisPicksTheDeployment(t *testing.T) {
	for _, tc := range []struct {
		url, prefix string
		cluster     bool
		bad         bool
	}{
		{url: "redis://127.0.0.1:6379/0", prefix: "seatghor:"},
		{url: "redis://127.0.0.1:6379/0", prefix: "a{b}:"},
		{url: "redis://127.0.0.1:7000?addr=127.0.0.1:7001&addr=127.0.0.1:7002", prefix: "seatghor:", cluster: true},
		{url: "redis://127.0.0.1:7000?addr=127.0.0.1:7001", prefix: "seatghor{1}:", bad: true},
		{url: "redis://127.0.0.1:7000?addr=127.0.0.1:7001&db=2", prefix: "seatghor:", bad: true},
		{url: "http://127.0.0.1:6379", prefix: "seatghor:", bad: true},
	} {
		c, err := OpenRedis(tc.url, tc.prefix, 0)
		if tc.bad {
			require.Error(t, err, tc.url)
			continue
		}
		require.NoError(t, err, tc.url)
		_, isCluster := c.(*redis.ClusterClient)
		require.Equal(t, tc.cluster, isCluster, tc.url)
		require.NoError(t, c.Close())
	}
}
