package main

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

// root is the repository, from this package's directory.
const root = "../.."

// repoFiles lists the repository's files as scripts/check-repo.sh gives
// them: tracked, and untracked unless ignored.
func repoFiles(t *testing.T, dir string) []string {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "*.go", "*.sql")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	var files []string
	for f := range strings.SplitSeq(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	return files
}

// TestTheRepositoryKeepsItsOwners: as it is, the repository names every
// table only in its owner or a listed exception, every table of the
// migrations has an owner, and every exception is needed.
func TestTheRepositoryKeepsItsOwners(t *testing.T) {
	if problems := check(os.DirFS(root), repoFiles(t, root)); len(problems) > 0 {
		t.Fatalf("the table owners guard fails on the repository:\n%s", strings.Join(problems, "\n"))
	}
}

// overlay is the repository with some files added or replaced.
type overlay struct {
	base  fs.FS
	extra fstest.MapFS
}

func (o overlay) Open(name string) (fs.File, error) {
	if _, ok := o.extra[name]; ok {
		return o.extra.Open(name)
	}
	return o.base.Open(name)
}

// TestSQLOutsideItsOwnerFailsInTheRepository is the deliberately wrong
// change: the gate's package reading the payments table (payment's) fails
// the guard on the real owners file and migrations.
func TestSQLOutsideItsOwnerFailsInTheRepository(t *testing.T) {
	const sneak = "server/ticket/sneak.go"
	fsys := overlay{base: os.DirFS(root), extra: fstest.MapFS{sneak: {Data: []byte("package ticket\n\n" +
		"const paidSQL = `\n\tSELECT amount_minor\n\tFROM payments WHERE order_id = $1`\n")}}}
	problems := check(fsys, append(repoFiles(t, root), sneak))
	if len(problems) != 1 {
		t.Fatalf("want one problem, got %d:\n%s", len(problems), strings.Join(problems, "\n"))
	}
	for _, want := range []string{"server/ticket/sneak.go:5:", "table payments", "server/payment owns"} {
		if !strings.Contains(problems[0], want) {
			t.Errorf("the problem %q does not say %q", problems[0], want)
		}
	}
}

// TestCheckRepoRunsTheGuard: scripts/check-repo.sh, run on a copy of the
// repository with the wrong change (as an untracked file, before it is
// committed), fails and says why; its other guards pass on the copy.
func TestCheckRepoRunsTheGuard(t *testing.T) {
	if testing.Short() {
		t.Skip("copies the repository and runs every guard of check-repo.sh")
	}
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	dir := t.TempDir()
	for f := range strings.SplitSeq(string(out), "\x00") {
		if f == "" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, f))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	sneak := filepath.Join(dir, "server", "ticket", "sneak.go")
	if err := os.WriteFile(sneak, []byte("package ticket\n\nconst paidSQL = `SELECT amount_minor FROM payments WHERE order_id = $1`\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := exec.Command("bash", "scripts/check-repo.sh")
	run.Dir = dir
	got, err := run.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("check-repo.sh: want exit 1, got %v:\n%s", err, got)
	}
	lines := strings.Split(strings.TrimSpace(string(got)), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "server/ticket/sneak.go:3: SQL names table payments") {
		t.Fatalf("check-repo.sh should report the one wrong change only:\n%s", got)
	}
}

// The schema and owners of the table tests below.
const (
	testMigration = `-- +goose Up
CREATE TABLE shows (show_id bigint PRIMARY KEY);
CREATE TABLE IF NOT EXISTS holds (hold_id text PRIMARY KEY);
CREATE UNLOGGED TABLE seats (seat text);
CREATE TABLE tickets_old (id text);
DO $$ BEGIN
    EXECUTE format('CREATE TABLE holds_p%s PARTITION OF holds', 1);
END $$;
-- +goose Down
DROP TABLE seats;
`
	testMigration2 = `-- +goose Up
DROP TABLE IF EXISTS tickets_old;
-- +goose Down
CREATE TABLE tickets_old (id text);
CREATE TABLE tickets_older (id text);
`
	testOwners = `# owners
owner shows server/catalog
owner holds server/booking
owner seats server/booking   # a comment
except shows server/shard        the directory
except holds server/payment/worker.go  the jobs pass over moving shows
`
)

func testFS(extra map[string]string) (fs.FS, []string) {
	m := fstest.MapFS{
		"server/migrations/shard/00001_x.sql": {Data: []byte(testMigration)},
		"server/migrations/shard/00002_y.sql": {Data: []byte(testMigration2)},
		ownersFile:                            {Data: []byte(testOwners)},
	}
	// Out of order: the migrations are applied by version.
	files := []string{"server/migrations/shard/00002_y.sql", "server/migrations/shard/00001_x.sql"}
	for name, data := range extra {
		m[name] = &fstest.MapFile{Data: []byte(data)}
		if name != ownersFile {
			files = append(files, name)
		}
	}
	return m, files
}

// used keeps the two exceptions of testOwners needed, so a case reports only
// its own problems.
var used = map[string]string{
	"server/shard/router.go":   "package shard\nconst q = `SELECT shard FROM shows`\n",
	"server/payment/worker.go": "package payment\nconst q = `SELECT FROM holds`\n",
}

func TestSQLOutsideItsOwner(t *testing.T) {
	for _, tc := range []struct {
		name string
		file string
		src  string
		// want are the tables reported, each "file:line table"; none: it passes.
		want []string
	}{
		{"the owner", "server/booking/hold.go", "package booking\nconst q = `SELECT * FROM holds h JOIN seats s ON true`\n", nil},
		{"FROM", "server/ticket/t.go", "package ticket\nconst q = `SELECT 1 FROM holds WHERE true`\n", []string{"server/ticket/t.go:2 holds"}},
		{"JOIN, on its line", "server/ticket/t.go", "package ticket\nconst q = `\n\tSELECT 1\n\tFROM tickets t\n\tJOIN seats s ON true`\n", []string{"server/ticket/t.go:5 seats"}},
		{"INSERT INTO", "server/ticket/t.go", "package ticket\nvar q = \"INSERT INTO holds (hold_id) VALUES ($1)\"\n", []string{"server/ticket/t.go:2 holds"}},
		{"UPDATE", "server/ticket/t.go", "package ticket\nconst q = `UPDATE seats SET seat = 'A1'`\n", []string{"server/ticket/t.go:2 seats"}},
		{"DELETE FROM ... USING", "server/ticket/t.go", "package ticket\nconst q = `DELETE FROM tickets t USING seats s WHERE true`\n", []string{"server/ticket/t.go:2 seats"}},
		{"a list after FROM", "server/ticket/t.go", "package ticket\nconst q = `SELECT 1 FROM pick p, seats AS s, holds`\n", []string{"server/ticket/t.go:2 seats", "server/ticket/t.go:2 holds"}},
		{"schema and quotes", "server/ticket/t.go", "package ticket\nconst q = `SELECT 1 FROM public.seats JOIN \"holds\" ON true`\n", []string{"server/ticket/t.go:2 seats", "server/ticket/t.go:2 holds"}},
		{"lower case", "server/ticket/t.go", "package ticket\nconst q = `select 1 from seats`\n", []string{"server/ticket/t.go:2 seats"}},
		{"ONLY", "server/ticket/t.go", "package ticket\nconst q = `TRUNCATE ONLY holds`\n", []string{"server/ticket/t.go:2 holds"}},
		{"CopyFrom's identifier", "server/ticket/t.go", "package ticket\nvar t = pgx.Identifier{\"seats\"}\n", []string{"server/ticket/t.go:2 seats"}},
		{"a .sql file", "deploy/x.sql", "-- FROM seats in a comment\nSELECT 1\nFROM seats;\n", []string{"deploy/x.sql:3 seats"}},
		{"a string in a SQL string", "server/ticket/t.go", "package ticket\nconst q = `SELECT 'FROM seats'`\n", nil},
		{"a comment", "server/ticket/t.go", "package ticket\n// SELECT 1 FROM seats\nconst q = 1\n", nil},
		{"a word, not a table", "server/ticket/t.go", "package ticket\nvar e = \"no seats left; holds expire\"\n", nil},
		{"a column named like a table", "server/ticket/t.go", "package ticket\nconst q = `SELECT h.seats FROM tickets h`\n", nil},
		{"a partition is its table's", "server/ticket/t.go", "package ticket\nconst q = `SELECT 1 FROM holds_p1`\n", nil},
		{"a test", "server/ticket/t_test.go", "package ticket\nconst q = `SELECT 1 FROM seats`\n", nil},
		{"a package's exception", "server/shard/other.go", "package shard\nconst q = `SELECT 1 FROM shows`\n", nil},
		{"a file's exception", "server/payment/refund.go", "package payment\nconst q = `SELECT 1 FROM holds`\n", []string{"server/payment/refund.go:2 holds"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			extra := map[string]string{tc.file: tc.src}
			for f, src := range used {
				if f != tc.file {
					extra[f] = src
				}
			}
			problems := check(testFS(extra))
			if len(problems) != len(tc.want) {
				t.Fatalf("want %d problems, got:\n%s", len(tc.want), strings.Join(problems, "\n"))
			}
			for i, w := range tc.want {
				at, table, _ := strings.Cut(w, " ")
				if !strings.HasPrefix(problems[i], at+": SQL names table "+table+",") {
					t.Errorf("problem %d is %q, want it at %s about %s", i, problems[i], at, table)
				}
			}
		})
	}
}

func TestOwnersFileIsChecked(t *testing.T) {
	for _, tc := range []struct {
		name   string
		owners string
		want   string
	}{
		{"a table without owner", "owner shows server/catalog\nowner holds server/booking\n" +
			"except shows server/shard x\nexcept holds server/payment/worker.go x\n", "table seats (server/migrations/shard/00001_x.sql) has no owner"},
		{"two owners", testOwners + "owner seats server/ticket\n", "table seats has an owner already, server/booking"},
		{"an owner of no table", testOwners + "owner tickets server/ticket\n", "the migrations leave no table tickets"},
		{"an owner of a dropped table", testOwners + "owner tickets_old server/ticket\n", "the migrations leave no table tickets_old"},
		{"an owner of a table of a Down section", testOwners + "owner tickets_older server/ticket\n", "the migrations leave no table tickets_older"},
		{"an exception without reason", testOwners + "except seats server/ticket\n", "an exception says why"},
		{"an exception for the owner", testOwners + "except seats server/booking/hold.go because\n", `the exception "seats server/booking/hold.go" names the owner's own code`},
		{"an exception no SQL needs", testOwners + "except seats server/ticket the gate reads them\n", `the exception "seats server/ticket" is needed by no SQL`},
		{"an exception listed twice", testOwners + "except shows server/shard again\n", `the exception "shows server/shard" is listed twice`},
		{"a line of no kind", testOwners + "owns seats server/booking\n", `a line is "owner …" or "except …", not "owns"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			extra := map[string]string{ownersFile: tc.owners}
			for f, src := range used {
				extra[f] = src
			}
			problems := check(testFS(extra))
			if len(problems) != 1 || !strings.Contains(problems[0], tc.want) {
				t.Fatalf("want one problem saying %q, got:\n%s", tc.want, strings.Join(problems, "\n"))
			}
		})
	}
	t.Run("no owners file", func(t *testing.T) {
		fsys, files := testFS(nil)
		delete(fsys.(fstest.MapFS), ownersFile)
		problems := check(fsys, files)
		if len(problems) != 1 || !strings.Contains(problems[0], ownersFile+" is missing") {
			t.Fatalf("got %q", problems)
		}
	})
}
