package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	connectrpc "connectrpc.com/connect"
	"connectrpc.com/grpchealth"
	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/internal/testkit/pgtest"
	"github.com/seatghor/seatghor/internal/testkit/redistest"
	"github.com/seatghor/seatghor/server/gateway/sandbox"
)

// statusOf answers the status code and body of GET url (0 when the
// request fails).
func statusOf(url string) (int, string) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// requireAdminSplit: the admin listener serves /metrics and pprof, the
// public port answers 404 for them and serves the probes.
// requireSite: the public port serves the site (decision 0162), and the
// dev sign-in, the test payments and the phone sign-in (SMS to the sandbox) only in dev.
func requireSite(t *testing.T, public string, dev bool) {
	t.Helper()
	code, body := statusOf(public + "/")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `<div id="app">`)
	code, body = statusOf(public + "/auth/config.json")
	require.Equal(t, http.StatusOK, code)
	require.JSONEq(t, fmt.Sprintf(`{"devSignIn": %[1]t, "oidcSignIn": false, "testPayments": %[1]t, "phoneSignIn": %[1]t}`, dev), body)
	resp, err := http.Post(public+"/auth/dev-token", "application/json", strings.NewReader(`{"name": "asha", "role": "user"}`))
	require.NoError(t, err)
	_ = resp.Body.Close()
	want := http.StatusNotFound
	if dev {
		want = http.StatusOK
	}
	require.Equal(t, want, resp.StatusCode, "POST /auth/dev-token")
}

func requireAdminSplit(t *testing.T, public, admin string) {
	t.Helper()
	for _, path := range []string{"/metrics", "/debug/pprof/"} {
		code, _ := statusOf(public + path)
		require.Equal(t, http.StatusNotFound, code, "public %s", path)
		code, _ = statusOf(admin + path)
		require.Equal(t, http.StatusOK, code, "admin %s", path)
	}
	_, metrics := statusOf(admin + "/metrics")
	require.Contains(t, metrics, "seatghor_db_statements_total")
	for _, path := range []string{"/livez", "/readyz"} {
		code, body := statusOf(public + path)
		require.Equal(t, http.StatusOK, code, "public %s: %s", path, body)
	}
}

// TestServeAdminListenerAndDrain: `seatghor serve` logs its admin listener
// (SEATGHOR_ADMIN_ADDR, here a free port) and serves /metrics and pprof
// there, not on the public port; told to stop (SIGTERM), it first stops
// being ready (/readyz 503, gRPC health NOT_SERVING) while /livez stays 200
// through the drain delay (decisions 0080, 0081).
func TestServeAdminListenerAndDrain(t *testing.T) {
	admin := pgtest.Server(t)
	catalogURL, shardURL := admin.Fresh(t, "template0"), admin.Fresh(t, "template0")
	var out strings.Builder
	t.Setenv("SEATGHOR_CATALOG_URL", catalogURL)
	t.Setenv("SEATGHOR_SHARD_URLS", shardURL)
	require.NoError(t, run(context.Background(), []string{"migrate"}, &out, &out), out.String())
	gw := sandbox.New(sandbox.Config{WebhookSecrets: []string{"whsec_admin"}})
	gwSrv := httptest.NewServer(gw)
	t.Cleanup(gwSrv.Close)
	t.Cleanup(gw.Close)

	addr := freeAddr(t)
	cmd := exec.Command(os.Args[0], "serve")
	cmd.Env = append(os.Environ(), runMainEnv+"=1",
		"SEATGHOR_CATALOG_URL="+catalogURL, "SEATGHOR_SHARD_URLS="+shardURL, "SEATGHOR_AUTH_SECRET=admin-test-secret-of-at-least-32-bytes",
		"SEATGHOR_ADDR="+addr, "SEATGHOR_ADMIN_ADDR=127.0.0.1:0", "SEATGHOR_DRAIN_DELAY=10m",
		"SEATGHOR_GATEWAY_URL="+gwSrv.URL, "SEATGHOR_WEBHOOK_SECRETS=whsec_admin", "SEATGHOR_ROLES=api")
	logs := &lockedBuffer{}
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	adminURL := make(chan string, 1)
	go func() {
		serving := regexp.MustCompile(`msg=serving .*admin=(http://\S+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			_, _ = logs.Write(append(sc.Bytes(), '\n'))
			if m := serving.FindStringSubmatch(sc.Text()); m != nil {
				adminURL <- m[1]
			}
		}
	}()
	var adminBase string
	select {
	case adminBase = <-adminURL:
	case <-time.After(30 * time.Second):
		t.Fatalf("no admin address logged:\n%s", logs.String())
	}
	public := "http://" + addr
	require.NotEqual(t, public, adminBase)
	requireAdminSplit(t, public, adminBase)
	requireSite(t, public, false)
	health := grpchealth.NewClient(http.DefaultClient, public, connectrpc.WithGRPCWeb())
	res, err := health.Check(context.Background(), &grpchealth.CheckRequest{})
	require.NoError(t, err)
	require.Equal(t, grpchealth.StatusServing, res.Status)

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.Eventually(t, func() bool {
		code, _ := statusOf(public + "/readyz")
		return code == http.StatusServiceUnavailable
	}, 20*time.Second, 20*time.Millisecond, logs.String())
	for _, base := range []string{public, adminBase} {
		code, _ := statusOf(base + "/livez")
		require.Equal(t, http.StatusOK, code, "%s/livez while draining", base)
		code, body := statusOf(base + "/readyz")
		require.Equal(t, http.StatusServiceUnavailable, code, "%s/readyz while draining", base)
		require.JSONEq(t, `{"process":"draining"}`, body)
	}
	res, err = health.Check(context.Background(), &grpchealth.CheckRequest{})
	require.NoError(t, err)
	require.Equal(t, grpchealth.StatusNotServing, res.Status)
}

// TestDevPrintsAdminURL: `seatghor dev` picks a free port for its admin
// listener, prints it in its banner and serves /metrics there only; on
// SIGTERM it drains and exits cleanly (decision 0081).
func TestDevPrintsAdminURL(t *testing.T) {
	admin := pgtest.Server(t)
	r := redistest.New(t)
	addr := freeAddr(t)
	cmd := exec.Command(os.Args[0], "dev", "--data-dir", t.TempDir(), "--addr", addr)
	cmd.Env = append(os.Environ(), runMainEnv+"=1",
		"SEATGHOR_CATALOG_URL="+admin.Fresh(t, "template0"), "SEATGHOR_SHARD_URLS="+admin.Fresh(t, "template0"),
		"SEATGHOR_REDIS_URL="+r.URL, "SEATGHOR_REDIS_PREFIX="+r.Prefix, "SEATGHOR_SANDBOX_ADDR="+freeAddr(t),
		"SEATGHOR_LOG_LEVEL=warn")
	logs := &lockedBuffer{}
	cmd.Stderr = logs
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	adminURL := make(chan string, 1)
	go func() {
		banner := regexp.MustCompile(`^Admin listener:\s+(http://\S+)`)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if m := banner.FindStringSubmatch(sc.Text()); m != nil {
				adminURL <- m[1]
			}
		}
	}()
	var adminBase string
	select {
	case adminBase = <-adminURL:
	case <-time.After(60 * time.Second):
		t.Fatalf("no admin URL in the banner:\n%s", logs.String())
	}
	require.NotContains(t, adminBase, ":9090", "a free port, not serve's default")
	requireAdminSplit(t, "http://"+addr, adminBase)
	requireSite(t, "http://"+addr, true)

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, cmd.Wait(), logs.String())
}
