package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
	"connectrpc.com/grpcreflect"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/seatghor/seatghor/gen/seatghor/booking/v1/bookingv1connect"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/internal/testkit/pgtest"
	"github.com/seatghor/seatghor/server/api"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/shard"
)

// getStatus answers the status code and body of GET base+path.
func getStatus(t *testing.T, c *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := c.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// acquires counts the connections taken from the router's pools: every
// ping of a database takes one (R-11: /readyz pings each database once).
func acquires(r *shard.Router) int64 {
	n := r.Catalog().Stat().AcquireCount()
	for _, s := range r.Shards() {
		n += s.Stat().AcquireCount()
	}
	return n
}

// TestReadinessPingsEachDatabaseOncePerProbe: however many probes came
// before, and however many run at once, one /readyz answer pings each
// database of the platform once, and still answers 200 (R-11, decision
// 0080).
func TestReadinessPingsEachDatabaseOncePerProbe(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 2})
	databases := int64(len(env.App.Router.Shards()) + 1)
	for i := range 1000 {
		before := acquires(env.App.Router)
		code, body := getStatus(t, env.HTTP, env.URL+"/readyz")
		require.Equal(t, http.StatusOK, code, "probe %d: %s", i, body)
		require.Equal(t, databases, acquires(env.App.Router)-before, "probe %d pinged", i)
	}

	// Concurrent probes share nothing: each pings every database once.
	const workers, each = 16, 25
	before := acquires(env.App.Router)
	var wg sync.WaitGroup
	codes := make(chan int, workers*each)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				resp, err := env.HTTP.Get(env.URL + "/readyz")
				if err != nil {
					codes <- 0
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				codes <- resp.StatusCode
			}
		}()
	}
	wg.Wait()
	close(codes)
	for code := range codes {
		require.Equal(t, http.StatusOK, code)
	}
	require.Equal(t, databases*workers*each, acquires(env.App.Router)-before)
}

// TestDrainingIsNotReady: once the process drains (shutdown), /readyz
// answers 503 and the gRPC health service NOT_SERVING, on the public port
// and the admin listener, while /livez stays 200: the load balancer takes
// the process out, nothing restarts it (R-11, decision 0080).
func TestDrainingIsNotReady(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 1})
	ctx := context.Background()
	health := grpchealth.NewClient(env.H2C, env.URL, connect.WithGRPC())
	serving := func(service string) grpchealth.Status {
		t.Helper()
		res, err := health.Check(ctx, &grpchealth.CheckRequest{Service: service})
		require.NoError(t, err)
		return res.Status
	}
	for _, base := range []string{env.URL, env.AdminURL} {
		code, _ := getStatus(t, env.HTTP, base+"/readyz")
		require.Equal(t, http.StatusOK, code)
	}
	require.Equal(t, grpchealth.StatusServing, serving(""))
	require.Equal(t, grpchealth.StatusServing, serving(bookingv1connect.HoldServiceName))
	_, err := health.Check(ctx, &grpchealth.CheckRequest{Service: "no.such.Service"})
	require.Equal(t, connect.CodeNotFound, connect.CodeOf(err))

	env.App.Readiness.Drain()
	for _, base := range []string{env.URL, env.AdminURL} {
		code, body := getStatus(t, env.HTTP, base+"/readyz")
		require.Equal(t, http.StatusServiceUnavailable, code, base)
		require.JSONEq(t, `{"process":"draining"}`, body)
		code, _ = getStatus(t, env.HTTP, base+"/livez")
		require.Equal(t, http.StatusOK, code, base)
	}
	require.Equal(t, grpchealth.StatusNotServing, serving(""))
	require.Equal(t, grpchealth.StatusNotServing, serving(bookingv1connect.HoldServiceName))
}

// TestStoppedDatabaseIsNotReady: a required database that stops answering
// makes /readyz 503 and names it, the others still "ok", and the gRPC
// health service NOT_SERVING.
func TestStoppedDatabaseIsNotReady(t *testing.T) {
	admin := pgtest.Server(t)
	ctx := context.Background()
	open := func(name string) (*pg.Pool, string) {
		url := admin.Fresh(t, "template0")
		p, err := pg.Open(ctx, name, url, 2)
		require.NoError(t, err)
		t.Cleanup(p.Close)
		return p, url
	}
	catalog, _ := open("catalog")
	shard0, shard0URL := open("shard-0")
	readiness := api.NewReadiness(shard.NewRouter(catalog, []*pg.Pool{shard0}), nil, 0)
	srv := httptest.NewServer(readiness.ReadyHandler())
	t.Cleanup(srv.Close)

	code, body := getStatus(t, srv.Client(), srv.URL)
	require.Equal(t, http.StatusOK, code)
	require.JSONEq(t, `{"catalog":"ok","shard-0":"ok"}`, body)

	// The shard's database goes away under the open pool.
	conn, err := pgx.Connect(ctx, admin.URL("postgres"))
	require.NoError(t, err)
	defer conn.Close(ctx)
	db := shard0URL[strings.LastIndex(shard0URL, "/")+1:]
	if i := strings.IndexByte(db, '?'); i >= 0 {
		db = db[:i]
	}
	_, err = conn.Exec(ctx, "DROP DATABASE "+pgx.Identifier{db}.Sanitize()+" WITH (FORCE)")
	require.NoError(t, err)

	code, body = getStatus(t, srv.Client(), srv.URL)
	require.Equal(t, http.StatusServiceUnavailable, code)
	var parts map[string]string
	require.NoError(t, json.Unmarshal([]byte(body), &parts))
	require.Equal(t, map[string]string{"catalog": "ok", "shard-0": "unreachable"}, parts)
	res, err := readiness.Check(ctx, &grpchealth.CheckRequest{})
	require.NoError(t, err)
	require.Equal(t, grpchealth.StatusNotServing, res.Status, "gRPC health reports the same state")
}

// TestReadinessHasADeadline: a required part that never answers (a
// database behind a dropped network) makes /readyz 503 once the deadline
// passes, instead of hanging the probe.
func TestReadinessHasADeadline(t *testing.T) {
	hang := api.HealthCheck{Name: "blackhole", Required: true, Check: func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	}}
	cache := api.HealthCheck{Name: "cache", Check: func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	}}
	ready, parts := api.NewReadiness(nil, []api.HealthCheck{hang, cache}, 1).State(context.Background())
	require.False(t, ready)
	require.Equal(t, map[string]string{"blackhole": "unreachable", "cache": "degraded"}, parts)
}

// TestAdminSurfaceIsNotPublic: /metrics (it shows ledger balances), gRPC
// reflection and pprof answer on the admin listener only; the public port
// answers 404 for them and keeps /livez, /readyz and gRPC health
// (decision 0081).
func TestAdminSurfaceIsNotPublic(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 1})
	ctx := context.Background()
	for _, path := range []string{"/metrics", "/debug/pprof/", "/debug/pprof/cmdline", "/debug/pprof/goroutine?debug=1"} {
		code, _ := getStatus(t, env.HTTP, env.URL+path)
		require.Equal(t, http.StatusNotFound, code, "public %s", path)
		code, body := getStatus(t, env.HTTP, env.AdminURL+path)
		require.Equal(t, http.StatusOK, code, "admin %s: %s", path, body)
	}
	code, body := getStatus(t, env.HTTP, env.AdminURL+"/metrics")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "seatghor_payments_unknown ")
	for _, path := range []string{"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
		"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"} {
		req, err := http.NewRequest(http.MethodPost, env.URL+path, strings.NewReader(""))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/grpc")
		resp, err := env.H2C.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusNotFound, resp.StatusCode, path)
	}
	_, err := grpcreflect.NewClient(env.H2C, env.URL, connect.WithGRPC()).NewStream(ctx).ListServices()
	require.Error(t, err, "no reflection on the public port")
	stream := grpcreflect.NewClient(env.H2C, env.AdminURL, connect.WithGRPC()).NewStream(ctx)
	services, err := stream.ListServices()
	require.NoError(t, err)
	require.Contains(t, services, protoreflect.FullName(bookingv1connect.HoldServiceName))
	_, _ = stream.Close()
	for _, path := range []string{"/livez", "/readyz"} {
		code, _ := getStatus(t, env.HTTP, env.URL+path)
		require.Equal(t, http.StatusOK, code, "public %s", path)
	}
}
