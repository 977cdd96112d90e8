package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
)

// root is the repository's root, seen from this package's directory.
const root = "../.."

// TestLayersGuardFindsWrongImports: each rule refuses what it should and
// lets the rest pass — aliased and blank imports, renamed net/http, the
// edge's subpackages, tests of server packages, the generated message
// packages.
func TestLayersGuardFindsWrongImports(t *testing.T) {
	for _, tc := range []struct {
		name string
		path string
		src  string
		want string // a part of the one problem; "" for none
	}{
		{"a domain package imports connect", "server/booking/x.go",
			`package booking; import "connectrpc.com/connect"; var _ connect.Code`,
			"server/booking/x.go imports connectrpc.com/connect: only server/api speaks Connect"},
		{"aliased", "server/ratelimit/x.go",
			`package ratelimit; import c "connectrpc.com/connect"; var _ c.Code`,
			"server/ratelimit/x.go imports connectrpc.com/connect"},
		{"blank", "server/auth/x.go", `package auth; import _ "connectrpc.com/validate"`,
			"server/auth/x.go imports connectrpc.com/validate"},
		{"a generated Connect package", "server/partner/x.go",
			`package partner; import _ "github.com/seatghor/seatghor/gen/seatghor/booking/v1/bookingv1connect"`,
			"imports github.com/seatghor/seatghor/gen/seatghor/booking/v1/bookingv1connect"},
		{"the wiring does not speak Connect either", "server/app/x.go",
			`package app; import _ "connectrpc.com/connect"`, "server/app/x.go imports connectrpc.com/connect"},
		{"the edge", "server/api/x.go", `package api; import _ "connectrpc.com/connect"`, ""},
		{"the edge's subpackage", "server/api/rest/x.go", `package rest; import _ "connectrpc.com/vanguard"`, ""},
		{"a package named like the edge", "server/apix/x.go", `package apix; import _ "connectrpc.com/connect"`,
			"server/apix/x.go imports connectrpc.com/connect"},
		{"a test drives the API", "server/shardmove/x_test.go", `package shardmove_test; import _ "connectrpc.com/connect"`, ""},
		{"the generated messages", "server/booking/x.go",
			`package booking; import _ "github.com/seatghor/seatghor/gen/seatghor/events/v1"`, ""},
		{"outside server/", "internal/loadtest/x.go", `package loadtest; import _ "connectrpc.com/connect"`, ""},

		{"a domain package answers HTTP", "server/payment/x.go",
			"package payment\nimport \"net/http\"\nfunc h(w http.ResponseWriter, r *http.Request) {}",
			"server/payment/x.go:3 serves HTTP (http.ResponseWriter)"},
		{"renamed net/http", "server/booking/x.go",
			"package booking\nimport nh \"net/http\"\nvar _ = nh.ListenAndServe", "serves HTTP (nh.ListenAndServe)"},
		{"a handler type", "server/ticket/x.go",
			"package ticket\nimport \"net/http\"\nvar _ http.Handler", "serves HTTP (http.Handler)"},
		{"httptest outside a test", "server/search/x.go",
			"package search\nimport \"net/http/httptest\"\nvar _ = httptest.NewServer", "serves HTTP (httptest.NewServer)"},
		{"a header is not serving", "server/payment/x.go",
			"package payment\nimport \"net/http\"\nfunc f(h http.Header, c *http.Client) {}", ""},
		{"the site serves", "server/site/x.go", "package site\nimport \"net/http\"\nvar _ http.ResponseWriter", ""},
		{"the sandbox gateway serves", "server/gateway/sandbox/x.go",
			"package sandbox\nimport \"net/http\"\nvar _ http.ServeMux", ""},
		{"but not the gateway adapters", "server/gateway/x.go",
			"package gateway\nimport \"net/http\"\nvar _ http.ServeMux", "server/gateway/x.go:3 serves HTTP (http.ServeMux)"},
		{"a test serves a fake", "server/webhook/x_test.go",
			"package webhook\nimport \"net/http/httptest\"\nvar _ = httptest.NewServer", ""},

		{"a client imports the server", "clients/web/x.go",
			`package web; import _ "github.com/seatghor/seatghor/server/auth"`,
			"clients/web/x.go imports github.com/seatghor/seatghor/server/auth: the clients use the API"},
		{"a client's test imports a test kit", "clients/go/seatghor/x_test.go",
			`package seatghor; import _ "github.com/seatghor/seatghor/internal/testkit/apptest"`,
			"imports github.com/seatghor/seatghor/internal/testkit/apptest"},
		{"a client speaks Connect", "clients/go/seatghor/x.go",
			`package seatghor; import _ "connectrpc.com/connect"; import _ "github.com/seatghor/seatghor/gen/seatghor/booking/v1"`, ""},
		{"a client named like the server", "clients/go/x.go",
			`package x; import _ "github.com/seatghor/seatghor/serverless"`, ""},

		{"not Go", "server/booking/x.go", "package booking; import (", "server/booking/x.go: not Go the guard can read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{tc.path: {Data: []byte(tc.src)}, "server/booking/README.md": {Data: []byte("not Go")}}
			problems := check(fsys, []string{tc.path, "server/booking/README.md"})
			if tc.want == "" {
				require.Empty(t, problems)
				return
			}
			require.Len(t, problems, 1, "%q", problems)
			require.Contains(t, problems[0], tc.want)
		})
	}
}

// TestLayersOfTheRepository: the tree as it is keeps its layers.
func TestLayersOfTheRepository(t *testing.T) {
	require.Empty(t, check(os.DirFS(root), trackedGo(t, root)))
}

// TestCheckRepoRefusesWrongImports: scripts/check-repo.sh runs the guard.
// A copy of the repository with a domain package that imports Connect, one
// that answers HTTP and a client that imports the server fails, naming
// those three and nothing else (so the rest of the copy, the repository as
// it is, passes every guard; `make check-repo` runs the script on the
// repository itself).
func TestCheckRepoRefusesWrongImports(t *testing.T) {
	dir := t.TempDir()
	copyTracked(t, root, dir)
	wrong := map[string]string{
		"server/booking/zz_wrong.go": "package booking\n\nimport _ \"connectrpc.com/connect\"\n",
		"server/catalog/zz_wrong.go": "package catalog\n\nimport \"net/http\"\n\nfunc serve(w http.ResponseWriter, r *http.Request) {}\n",
		"clients/web/zz_wrong.go":    "package web\n\nimport _ \"github.com/seatghor/seatghor/server/auth\"\n",
	}
	for f, src := range wrong {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte(src), 0o644))
	}
	git(t, dir, "add", "-A")
	out, err := checkRepo(t, dir)
	require.Error(t, err, "%s", out)
	require.Contains(t, out, "server/booking/zz_wrong.go imports connectrpc.com/connect: only server/api speaks Connect")
	require.Contains(t, out, "server/catalog/zz_wrong.go:5 serves HTTP (http.ResponseWriter)")
	require.Contains(t, out, "clients/web/zz_wrong.go imports github.com/seatghor/seatghor/server/auth")
	require.Equal(t, 3, strings.Count(out, "check-repo: "), "only the wrong files are refused:\n%s", out)
}

// checkRepo runs scripts/check-repo.sh of the tree at dir.
func checkRepo(t *testing.T, dir string) (string, error) {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join(dir, "scripts", "check-repo.sh"))
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// trackedGo lists the Go files git tracks under dir.
func trackedGo(t *testing.T, dir string) []string {
	t.Helper()
	return strings.Split(strings.TrimSuffix(git(t, dir, "ls-files", "-z", "--", "*.go"), "\x00"), "\x00")
}

// copyTracked copies the files of the working tree at from that git tracks
// or would track (new files not ignored) to a new repository at to, and
// adds them there.
func copyTracked(t *testing.T, from, to string) {
	t.Helper()
	list := git(t, from, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	for f := range strings.SplitSeq(strings.TrimSuffix(list, "\x00"), "\x00") {
		info, err := os.Stat(filepath.Join(from, f))
		if os.IsNotExist(err) {
			continue // deleted in the working tree, not yet in git
		}
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(from, f))
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Join(to, filepath.Dir(f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(to, f), b, info.Mode().Perm()))
	}
	git(t, to, "init", "-q")
	git(t, to, "add", "-A")
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "git %s: %s", strings.Join(args, " "), stderr.String())
	return string(out)
}
