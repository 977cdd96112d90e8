package seatghor_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The release (make sdk, tools/sdkrelease, decision 0328) installed in a
// fresh project, as a partner installs it by the README: the module from
// the release's module proxy directory at its version, checked against the
// release's go.sum lines, and the same program against a checkout through
// a replace line. Each program reads show 7's seat map from the test server
// and gets a typed error.

// partnerProgram is the fresh project's code: only the SDK's exported API.
const partnerProgram = `package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"connectrpc.com/connect"
	"github.com/seatghor/seatghor/clients/go/seatghor"
	catalogv1 "github.com/seatghor/seatghor/clients/go/seatghor/gen/seatghor/catalog/v1"
	seatmapv1 "github.com/seatghor/seatghor/clients/go/seatghor/gen/seatghor/seatmap/v1"
)

func main() {
	ctx := context.Background()
	c := seatghor.NewClient(os.Args[1], seatghor.WithToken(os.Args[2]))
	m, err := c.SeatMap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: 7}))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	_, err = c.Catalog.GetShow(ctx, connect.NewRequest(&catalogv1.GetShowRequest{ShowId: 999999999}))
	apiErr := &seatghor.APIError{}
	if !errors.As(err, apiErr) {
		fmt.Fprintln(os.Stderr, "no APIError:", err)
		os.Exit(1)
	}
	fmt.Println(m.Msg.GetSeatCount(), apiErr.Reason)
}
`

// TestReleaseInstallsInAFreshProject uses the release in
// $SEATGHOR_SDK_DIST (make test-go-sdk passes make sdk's dist/sdk), else
// builds one (the Go part) with tools/sdkrelease.
func TestReleaseInstallsInAFreshProject(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	dist := os.Getenv("SEATGHOR_SDK_DIST")
	if dist == "" {
		dist = filepath.Join(t.TempDir(), "sdk")
		runIn(t, root, nil, goBin, "run", "-C", "tools", "./sdkrelease", "-out", dist, "-npm=false")
	}
	checkSums(t, dist)
	releaseSum, err := os.ReadFile(filepath.Join(dist, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	path, version := moduleOf(t, releaseSum)
	if path != "github.com/seatghor/seatghor/clients/go/seatghor" || !strings.HasPrefix(version, "v") {
		t.Fatalf("the release's go.sum names %s %s", path, version)
	}
	// Offline stand-ins for the public module proxy and checksum database,
	// for the SDK's dependencies only: the module cache this test was built
	// from (a module proxy's layout) and the SDK's go.sum.
	modCache := strings.TrimSpace(string(runIn(t, root, nil, goBin, "env", "GOMODCACHE")))
	upstream := strings.TrimSpace(string(runIn(t, root, nil, goBin, "env", "GOPROXY")))
	depSums, err := os.ReadFile("go.sum")
	if err != nil {
		t.Fatal(err)
	}
	tok := token(t, "go-release", "user")

	// One module cache of the test's own, so the SDK comes from where each
	// project says and never from an earlier run; -trimpath lets the two
	// builds share the compiled dependencies.
	cache := t.TempDir()
	t.Cleanup(func() {
		// Read-only: the Go command empties it, before TempDir's cleanup.
		cmd := exec.Command(goBin, "clean", "-modcache")
		cmd.Env = append(os.Environ(), "GOMODCACHE="+cache)
		_ = cmd.Run()
	})
	env := []string{
		"GOMODCACHE=" + cache,
		"GOPROXY=file://" + filepath.ToSlash(filepath.Join(dist, "go")) + ",file://" + filepath.ToSlash(filepath.Join(modCache, "cache", "download")) + "," + upstream,
		// The checksum database cannot know a module that is not public.
		"GONOSUMDB=" + path,
		"GOFLAGS=-mod=mod -trimpath",
		"GOWORK=off",
		"GOTOOLCHAIN=local",
	}
	// fresh makes a project of the partner's program with go.mod lines and
	// go.sum.
	fresh := func(t *testing.T, goMod string, sums ...[]byte) string {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/reseller\n\ngo 1.24\n"+goMod)
		writeFile(t, filepath.Join(dir, "go.sum"), string(bytes.Join(sums, nil)))
		writeFile(t, filepath.Join(dir, "main.go"), partnerProgram)
		return dir
	}
	use := func(t *testing.T, dir string) {
		runIn(t, dir, env, goBin, "mod", "tidy")
		runIn(t, dir, env, goBin, "build", "-o", "reseller", ".")
		out := strings.TrimSpace(string(runIn(t, dir, nil, filepath.Join(dir, "reseller"), server.BaseURL, tok)))
		if out != "40 SHOW_NOT_FOUND" {
			t.Fatalf("the partner's program printed %q, want the demo bus's 40 seats and SHOW_NOT_FOUND", out)
		}
	}

	t.Run("release", func(t *testing.T) {
		dir := fresh(t, "", releaseSum, depSums)
		runIn(t, dir, env, goBin, "get", path+"@"+version)
		use(t, dir)
		sum, err := os.ReadFile(filepath.Join(dir, "go.sum"))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.SplitAfter(string(releaseSum), "\n") {
			if line != "" && !strings.Contains(string(sum), line) {
				t.Fatalf("go.sum lost the release's line %q", line)
			}
		}
	})
	t.Run("checkout", func(t *testing.T) {
		dir := fresh(t, "\nrequire "+path+" "+version+"\n\nreplace "+path+" => "+filepath.Join(root, "clients", "go", "seatghor")+"\n", depSums)
		use(t, dir)
	})
}

// checkSums checks SHA256SUMS against every other file of the release.
func checkSums(t *testing.T, dist string) {
	t.Helper()
	f, err := os.Open(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var listed []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		sum, name, ok := strings.Cut(s.Text(), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q", s.Text())
		}
		b, err := os.ReadFile(filepath.Join(dist, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		if got := sha256.Sum256(b); hex.EncodeToString(got[:]) != sum {
			t.Fatalf("SHA256SUMS: %s has changed", name)
		}
		listed = append(listed, name)
	}
	var files []string
	err = filepath.WalkDir(dist, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || p == filepath.Join(dist, "SHA256SUMS") {
			return err
		}
		rel, err := filepath.Rel(dist, p)
		files = append(files, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	if !slices.Equal(files, listed) || !slices.ContainsFunc(files, func(f string) bool { return strings.HasSuffix(f, ".zip") }) {
		t.Fatalf("SHA256SUMS lists %v; the release holds %v", listed, files)
	}
}

// moduleOf reads the module path and version of a go.sum's first line.
func moduleOf(t *testing.T, sum []byte) (path, version string) {
	t.Helper()
	fields := strings.Fields(string(sum))
	if len(fields) < 3 {
		t.Fatalf("go.sum %q", sum)
	}
	return fields[0], fields[1]
}

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// runIn runs a command in dir with env added, failing the test with its
// output if it fails.
func runIn(t *testing.T, dir string, env []string, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s in %s: %v\n%s%s", name, strings.Join(args, " "), dir, err, out, stderr.Bytes())
	}
	return out
}
