package validate

import (
	"context"
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
// the services, one role per seatghor process, the migration first, no
// secret written into the file.
func TestCompose(t *testing.T) {
	for i := range secrets {
		without := append(append([]string{}, secrets[:i]...), secrets[i+1:]...)
		_, err := loadCompose(t, without)
		require.Error(t, err, "compose starts without %s: a secret has a default", secrets[i])
	}
	p, err := loadCompose(t, secrets)
	require.NoError(t, err)

	want := []string{"api-1", "api-2", "gateway", "meilisearch", "migrate", "minio", "pg-a", "pg-b", "projectors", "redis", "workers"}
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
		require.NotNil(t, svc.HealthCheck, name)
		require.Equal(t, []string{"CMD", "/usr/local/bin/seatghor", "probe", "http://127.0.0.1:9090/readyz"}, []string(svc.HealthCheck.Test))
		for _, url := range []string{"SEATGHOR_CATALOG_URL", "SEATGHOR_SHARD_URLS", "SEATGHOR_READ_URL", "SEATGHOR_REDIS_URL"} {
			require.NotNil(t, svc.Environment[url], "%s needs %s", name, url)
		}
		require.Len(t, strings.Split(*svc.Environment["SEATGHOR_SHARD_URLS"], ","), 4, "%s: four shards", name)
	}
	require.Equal(t, []string{"migrate"}, []string(p.Services["migrate"].Command))
}
