// Package migrations owns the schema of Seatghor's databases: the catalog,
// every shard and the read database. The numbered SQL files are embedded and applied with goose.
package migrations

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
)

//go:embed catalog/*.sql shard/*.sql read/*.sql
var files embed.FS

// Kind names a database schema.
type Kind string

// The schemas.
const (
	Catalog Kind = "catalog"
	Shard   Kind = "shard"
	// Read is the read database of the "my tickets" view.
	Read Kind = "read"
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

// Hash identifies the content of kind's migrations, so test templates made
// from an older schema are never reused.
func Hash(kind Kind) (string, error) {
	h := sha256.New()
	err := fs.WalkDir(files, string(kind), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := files.ReadFile(path)
		if err != nil {
			return err
		}
		h.Write([]byte(path))
		h.Write(b)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("hash migrations %s: %w", kind, err)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// UpURL applies kind's migrations to the database at url.
func UpURL(ctx context.Context, url string, kind Kind) error {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return fmt.Errorf("migrations %s: %w", kind, err)
	}
	defer pool.Close()
	return Up(ctx, pool, kind)
}
