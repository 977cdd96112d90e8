package pg_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/pg"
)

// TestFound: a query for one row found it, found none, or failed.
func TestFound(t *testing.T) {
	for name, tc := range map[string]struct {
		err     error
		found   bool
		wantErr bool
	}{
		"a row":            {nil, true, false},
		"no row":           {pgx.ErrNoRows, false, false},
		"no row, wrapped":  {fmt.Errorf("scan: %w", pgx.ErrNoRows), false, false},
		"a failed query":   {errors.New("connection reset"), false, true},
		"a database error": {&pgconn.PgError{Code: "55P03"}, false, true},
	} {
		found, err := pg.Found(tc.err)
		require.Equal(t, tc.found, found, name)
		require.Equal(t, tc.wantErr, err != nil, name)
		if tc.wantErr {
			require.ErrorIs(t, err, tc.err, "%s: the failure as it was", name)
		}
	}
	require.Equal(t, "55P03", pg.SQLState(fmt.Errorf("lock: %w", &pgconn.PgError{Code: "55P03"})))
	require.Empty(t, pg.SQLState(errors.New("no database error")))
}

// TestDatabaseErrorsAreReadHere (decision 0318): no store reads pgx's or
// the server's errors itself (pgx.ErrNoRows, *pgconn.PgError); each asks
// this package (Found, IsUniqueViolation, SQLState) and answers with its
// domain's errors.
func TestDatabaseErrorsAreReadHere(t *testing.T) {
	// The test kits and dev tooling run databases rather than store in them.
	tooling := map[string]bool{"pgtest": true, "pgcluster": true}
	var offenders []string
	for _, root := range []string{"..", filepath.Join("..", "..", "projections"), filepath.Join("..", "..", "cmd")} {
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if path == "." || tooling[d.Name()] || d.Name() == "pg" && filepath.Dir(path) == ".." {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if strings.Contains(string(b), "pgx.ErrNoRows") || strings.Contains(string(b), "pgconn.PgError") {
				offenders = append(offenders, path)
			}
			return nil
		})
		require.NoError(t, err)
	}
	require.Empty(t, offenders, "read database errors with pg.Found, pg.IsUniqueViolation or pg.SQLState")
}
