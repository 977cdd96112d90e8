// Package schematest gives tests databases with one of the platform's
// schemas (server/migrations): each a fresh copy of a template database
// that is migrated once per schema version on the test server (pgtest).
package schematest

import (
	"context"
	"testing"

	"github.com/seatghor/seatghor/internal/testkit/pgtest"
	"github.com/seatghor/seatghor/server/migrations"
)

// Template names admin's template database of kind's schema, made and
// migrated when its version has none yet.
func Template(tb testing.TB, admin *pgtest.Admin, kind migrations.Kind) string {
	tb.Helper()
	hash, err := migrations.Hash(kind)
	if err != nil {
		tb.Fatal(err)
	}
	return admin.Template(tb, string(kind), hash, func(ctx context.Context, url string) error {
		return migrations.UpURL(ctx, url, kind)
	})
}

// Fresh is the URL of a new database with kind's schema on the test
// server, dropped when the test ends.
func Fresh(tb testing.TB, kind migrations.Kind) string {
	tb.Helper()
	admin := pgtest.Server(tb)
	return admin.Fresh(tb, Template(tb, admin, kind))
}
