package validate

import (
	"context"
	"fmt"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/stretchr/testify/require"
)

// secrets are what deploy/compose.yaml refuses to start without.
var secrets = []string{"SEATGHOR_AUTH_SECRET=a", "SEATGHOR_WEBHOOK_SECRET=b", "MINIO_ROOT_PASSWORD=c"}

func loadCompose(t *testing.T, env []string) (*types.Project, error) {
	t.Helper()
	opts, err := cli.NewProjectOptions([]string{"../compose.yaml"}, cli.WithEnv(env), cli.WithName("seatghor"))
	require.NoError(t, err)
	return opts.LoadProject(context.Background())
}

// TestCompose loads deploy/compose.yaml as docker compose does (compose-go,
// with its schema validation) and checks it is the production topology:
// the services, one role per seatghor process, the migration and the
// Redis Cluster first, no secret written into the file.
func TestCompose(t *testing.T) {
	for i := range secrets {
		without := append(append([]string{}, secrets[:i]...), secrets[i+1:]...)
		_, err := loadCompose(t, without)
		require.Error(t, err, "compose starts without %s: a secret has a default", secrets[i])
	}
	p, err := loadCompose(t, secrets)
	require.NoError(t, err)

	want := []string{"api-1", "api-2", "gateway", "meilisearch", "migrate", "minio", "pg-a", "pg-b", "projectors", "workers",
		"redis-1", "redis-2", "redis-3", "redis-4", "redis-5", "redis-6", "redis-cluster-init"}
	require.ElementsMatch(t, want, p.ServiceNames())

	roles := map[string]string{"api-1": "api", "api-2": "api", "workers": "workers", "projectors": "projectors"}
	known := knownVariables(t)
	for name, svc := range p.Services {
		if svc.Image != "seatghor:latest" {
			continue
		}
		for k := range svc.Environment {
			if strings.HasPrefix(k, "SEATGHOR_") {
				requireKnown(t, known, "compose service "+name, k)
			}
		}
		role, isServe := roles[name]
		if !isServe {
			continue
		}
		require.Empty(t, svc.Command, "%s runs the image's default command, serve", name)
		require.NotNil(t, svc.Environment["SEATGHOR_ROLES"], name)
		require.Equal(t, role, *svc.Environment["SEATGHOR_ROLES"], name)
		require.Equal(t, types.ServiceConditionCompletedSuccessfully, svc.DependsOn["migrate"].Condition,
			"%s starts after the migration", name)
		require.Equal(t, types.ServiceConditionCompletedSuccessfully, svc.DependsOn["redis-cluster-init"].Condition,
			"%s starts once the Redis Cluster is formed", name)
		require.NotNil(t, svc.HealthCheck, name)
		require.Equal(t, []string{"CMD", "/usr/local/bin/seatghor", "probe", "http://127.0.0.1:9090/readyz"}, []string(svc.HealthCheck.Test))
		for _, url := range []string{"SEATGHOR_CATALOG_URL", "SEATGHOR_SHARD_URLS", "SEATGHOR_READ_URL", "SEATGHOR_REDIS_URL"} {
			require.NotNil(t, svc.Environment[url], "%s needs %s", name, url)
		}
		require.Len(t, strings.Split(*svc.Environment["SEATGHOR_SHARD_URLS"], ","), 4, "%s: four shards", name)
		require.ElementsMatch(t, redisNodes, clusterURLNodes(t, *svc.Environment["SEATGHOR_REDIS_URL"]),
			"%s: SEATGHOR_REDIS_URL names the six nodes as a cluster URL (server/app OpenRedis)", name)
	}
	require.Equal(t, []string{"migrate"}, []string(p.Services["migrate"].Command))
	checkRedisCluster(t, p)
}

// redisNodes are the Redis Cluster's nodes as seatghor reaches them.
var redisNodes = []string{"redis-1:6379", "redis-2:6379", "redis-3:6379", "redis-4:6379", "redis-5:6379", "redis-6:6379"}

// clusterURLNodes are the nodes a go-redis cluster URL names: its host,
// then each addr= parameter.
func clusterURLNodes(t *testing.T, raw string) []string {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	require.Equal(t, "redis", u.Scheme)
	return append([]string{u.Host}, u.Query()["addr"]...)
}

// checkRedisCluster checks the topology of `seatghor cluster up`: six
// cluster nodes, persistent, announcing their service names, at fixed
// addresses outside the range handed to other containers, and the one-shot
// service that forms them into 3 primaries with a replica each.
func checkRedisCluster(t *testing.T, p *types.Project) {
	t.Helper()
	ipam := p.Networks["default"].Ipam.Config
	require.Len(t, ipam, 1, "the default network has one subnet")
	subnet, err := netip.ParsePrefix(ipam[0].Subnet)
	require.NoError(t, err)
	dynamic, err := netip.ParsePrefix(ipam[0].IPRange)
	require.NoError(t, err, "the default network names the range for containers without a fixed address")

	var addrs []string
	for i := range 6 {
		name := fmt.Sprintf("redis-%d", i+1)
		svc := p.Services[name]
		require.Equal(t, "redis:7", svc.Image, name)
		args := strings.Join(svc.Command, " ")
		for _, want := range []string{"--cluster-enabled yes", "--appendonly yes", "--cluster-require-full-coverage no",
			"--cluster-announce-hostname " + name, "--cluster-preferred-endpoint-type hostname"} {
			require.Contains(t, args, want, name)
		}
		require.Len(t, svc.Volumes, 1, name)
		require.Equal(t, "volume", svc.Volumes[0].Type, name)
		require.Equal(t, "/data", svc.Volumes[0].Target, "%s keeps its AOF and nodes.conf", name)
		require.Contains(t, p.Volumes, svc.Volumes[0].Source, name)
		require.NotNil(t, svc.HealthCheck, name)
		require.Equal(t, []string{"CMD", "redis-cli", "ping"}, []string(svc.HealthCheck.Test), name)
		require.NotNil(t, svc.Networks["default"], name)
		ip, err := netip.ParseAddr(svc.Networks["default"].Ipv4Address)
		require.NoError(t, err, "%s has a fixed address (decision 0250)", name)
		require.True(t, subnet.Contains(ip) && !dynamic.Contains(ip), "%s: %s in %s, outside %s", name, ip, subnet, dynamic)
		addrs = append(addrs, ip.String()+":6379")
	}
	volumes := map[string]bool{}
	for i := range 6 {
		volumes[p.Services[fmt.Sprintf("redis-%d", i+1)].Volumes[0].Source] = true
	}
	require.Len(t, volumes, 6, "a volume per node")

	init := p.Services["redis-cluster-init"]
	require.Equal(t, "redis:7", init.Image)
	require.Equal(t, "no", init.Restart, "the init runs once")
	for i := range 6 {
		require.Equal(t, types.ServiceConditionHealthy, init.DependsOn[fmt.Sprintf("redis-%d", i+1)].Condition)
	}
	script := strings.Join(append(slices.Clone(init.Entrypoint), init.Command...), " ")
	create := regexp.MustCompile(`redis-cli --cluster create ([0-9.: ]+) --cluster-replicas 1 --cluster-yes`).FindStringSubmatch(script)
	require.NotNil(t, create, "the init forms 3 primaries with a replica each:\n%s", script)
	require.Equal(t, addrs, strings.Fields(create[1]), "the init names the nodes' fixed addresses")
	require.Contains(t, script, "cluster_known_nodes:1", "the init creates the cluster only on a node that belongs to none")
}
