package pgtest_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/internal/testkit/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Cleanup()
	os.Exit(code)
}

func createTable(ctx context.Context, url string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "CREATE TABLE seat (id int PRIMARY KEY)")
	return err
}

// TestFreshDatabasesAreIndependent: every copy has the migrated schema and
// none sees another's rows.
func TestFreshDatabasesAreIndependent(t *testing.T) {
	admin := pgtest.Server(t)
	tpl := admin.Template(t, "pgtest", "0000test", createTable)
	if again := admin.Template(t, "pgtest", "0000test", createTable); again != tpl {
		t.Fatalf("second Template = %q, want %q", again, tpl)
	}
	a, b := admin.Fresh(t, tpl), admin.Fresh(t, tpl)
	if a == b {
		t.Fatalf("Fresh returned %s twice", a)
	}
	exec(t, a, "INSERT INTO seat VALUES (1), (2)")
	if n := count(t, a); n != 2 {
		t.Errorf("rows in a = %d, want 2", n)
	}
	if n := count(t, b); n != 0 {
		t.Errorf("rows in b = %d, want 0", n)
	}
}

// TestFreshInParallel copies one template from many tests at once, as
// parallel tests do.
func TestFreshInParallel(t *testing.T) {
	admin := pgtest.Server(t)
	for i := range 8 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			tpl := admin.Template(t, "pgtest", "0000test", createTable)
			url := admin.Fresh(t, tpl)
			exec(t, url, "INSERT INTO seat VALUES (1)")
			if n := count(t, url); n != 1 {
				t.Errorf("rows = %d, want 1", n)
			}
		})
	}
}

// TestTemplateRedoesHalfMade: a template a crashed run left without its
// ready mark is dropped and migrated again; a ready one is not.
func TestTemplateRedoesHalfMade(t *testing.T) {
	admin := pgtest.Server(t)
	var b [4]byte
	_, _ = rand.Read(b[:])
	hash := hex.EncodeToString(b[:]) // unique, so this run's template is new
	name := "seatghor_tpl_halfmade_" + hash
	exec(t, admin.URL("postgres"), "CREATE DATABASE "+name)
	t.Cleanup(func() {
		exec(t, admin.URL("postgres"), "ALTER DATABASE "+name+" WITH IS_TEMPLATE false")
		exec(t, admin.URL("postgres"), "DROP DATABASE "+name+" WITH (FORCE)")
	})

	var migrations atomic.Int32
	migrate := func(ctx context.Context, url string) error {
		migrations.Add(1)
		return createTable(ctx, url)
	}
	if got := admin.Template(t, "halfmade", hash, migrate); got != name {
		t.Fatalf("Template = %q, want %q", got, name)
	}
	if n := migrations.Load(); n != 1 {
		t.Fatalf("migrations = %d, want 1", n)
	}
	if n := count(t, admin.Fresh(t, name)); n != 0 {
		t.Errorf("rows = %d, want 0", n)
	}
}

func exec(t *testing.T, url, sql string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatal(err)
	}
}

func count(t *testing.T, url string) int {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM seat").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
