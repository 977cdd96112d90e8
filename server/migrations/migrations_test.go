package migrations

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/seatghor/seatghor/internal/testkit/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Cleanup()
	os.Exit(code)
}

// record appends the migrations that are not yet in committed.sum; it never
// rewrites a line that is already there.
var record = flag.Bool("record", false, "append new migration files to committed.sum")

const sumFile = "committed.sum"

// TestCommittedMigrationsAreNeverEdited keeps a committed migration as it
// was applied: databases that ran it will never run it again, so an edit
// would leave them with another schema than a fresh one. committed.sum holds
// the SHA-256 of every migration; a changed or removed file fails, and a new
// file must be recorded on purpose:
//
//	go test ./server/migrations -run TestCommittedMigrationsAreNeverEdited -args -record
func TestCommittedMigrationsAreNeverEdited(t *testing.T) {
	want, order, err := readSums()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	err = fs.WalkDir(files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := files.ReadFile(path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		got[path] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range order {
		switch g, ok := got[path]; {
		case !ok:
			t.Errorf("%s was committed and is gone: a committed migration is never removed", path)
		case g != want[path]:
			t.Errorf("%s changed since it was committed: add a new migration instead of editing it", path)
		}
	}
	var added []string
	for path := range got {
		if _, ok := want[path]; !ok {
			added = append(added, path)
		}
	}
	sort.Strings(added)
	if len(added) == 0 {
		return
	}
	if !*record {
		t.Fatalf("new migrations are not in %s: %v; record them with\n  go test ./server/migrations -run TestCommittedMigrationsAreNeverEdited -args -record", sumFile, added)
	}
	f, err := os.OpenFile(sumFile, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, path := range added {
		if _, err := fmt.Fprintf(f, "%s  %s\n", got[path], path); err != nil {
			t.Fatal(err)
		}
	}
}

// readSums reads committed.sum: "<sha256>  <path>" lines, # comments.
func readSums() (map[string]string, []string, error) {
	f, err := os.Open(sumFile)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	sums := map[string]string{}
	var order []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		sum, path, ok := strings.Cut(line, "  ")
		if !ok {
			return nil, nil, fmt.Errorf("%s: bad line %q", sumFile, line)
		}
		if _, dup := sums[path]; dup {
			return nil, nil, fmt.Errorf("%s: %s is listed twice", sumFile, path)
		}
		sums[path] = sum
		order = append(order, path)
	}
	return sums, order, sc.Err()
}
