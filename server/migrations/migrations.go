// Package migrations owns the schema of Seatghor's databases: the catalog and
// every shard. The numbered SQL files are embedded and applied with goose.
package migrations

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
)

//go:embed catalog/*.sql shard/*.sql
var files embed.FS

// Kind names a database schema.
type Kind string

// The schemas.
const (
	Catalog Kind = "catalog"
	Shard   Kind = "shard"
)

// Up applies every pending migration of kind to the database behind pool.
func Up(ctx context.Context, pool *pgxpool.Pool, kind Kind) error {
	dir, err := fs.Sub(files, string(kind))
	if err != nil {
		return fmt.Errorf("migrations %s: %w", kind, err)
	}
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	provider, err := goose.NewProvider(goose.DialectPostgres, db, dir)
	if err != nil {
		return fmt.Errorf("migrations %s: %w", kind, err)
	}
	if _, err := provider.Up(ctx); err != nil {
		return fmt.Errorf("migrate %s: %w", kind, err)
	}
	return nil
}
