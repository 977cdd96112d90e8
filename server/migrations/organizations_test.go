package migrations

import (
	"context"
	"io/fs"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/internal/testkit/pgtest"
)

// upTo applies kind's migrations up to version (everything when 0) to a
// database.
func upTo(t *testing.T, pool *pgxpool.Pool, kind Kind, version int64) {
	t.Helper()
	dir, err := fs.Sub(files, string(kind))
	require.NoError(t, err)
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, dir)
	require.NoError(t, err)
	if version == 0 {
		_, err = p.Up(t.Context())
	} else {
		_, err = p.UpTo(t.Context(), version)
	}
	require.NoError(t, err)
}

// TestShowsBeforeOrganizationsKeepTheirCreator: shows that exist when the
// organisations arrive (decision 0075) belong to an organisation of their
// creator's, managed by the creator, and the shard's copy names the same
// organisation although the two migrations cannot see each other.
func TestShowsBeforeOrganizationsKeepTheirCreator(t *testing.T) {
	ctx := context.Background()
	admin := pgtest.Server(t)
	open := func() *pgxpool.Pool {
		pool, err := pgxpool.New(ctx, admin.Fresh(t, "template0"))
		require.NoError(t, err)
		t.Cleanup(pool.Close)
		return pool
	}
	cat, shard := open(), open()
	upTo(t, cat, Catalog, 6)
	upTo(t, shard, Shard, 8)
	now := time.Now()
	for id, creator := range map[int64]string{1: "op-1", 2: "op-1", 3: "op-2"} {
		_, err := cat.Exec(ctx, `
			INSERT INTO shows (show_id, shard, kind, title, operator, starts_at, on_sale_at, currency, layout,
			                   hold_ttl_ms, payment_extension_ms, max_seats_per_account, max_seats_per_hold,
			                   seat_count, created_by, created_at)
			VALUES ($1, 0, 1, 't', 'Some Name', $2, $2, 'BDT', '{}', 1, 0, 1, 1, 0, $3, $2)`, id, now, creator)
		require.NoError(t, err)
		_, err = shard.Exec(ctx, `
			INSERT INTO shows (show_id, operator_id, currency, on_sale_at, starts_at, hold_ttl_ms, payment_extension_ms,
			                   max_seats_per_account, max_seats_per_hold, created_at)
			VALUES ($1, $2, 'BDT', $3, $3, 1, 0, 1, 1, $3)`, id, creator, now)
		require.NoError(t, err)
	}
	upTo(t, cat, Catalog, 0)
	upTo(t, shard, Shard, 0)

	orgOf := func(pool *pgxpool.Pool) map[int64]string {
		rows, err := pool.Query(ctx, `SELECT show_id, organization_id FROM shows ORDER BY show_id`)
		require.NoError(t, err)
		m := map[int64]string{}
		for rows.Next() {
			var id int64
			var org string
			require.NoError(t, rows.Scan(&id, &org))
			m[id] = org
		}
		require.NoError(t, rows.Err())
		return m
	}
	catOrgs := orgOf(cat)
	require.Equal(t, catOrgs, orgOf(shard), "the shard names the catalog's organisation")
	require.Equal(t, catOrgs[1], catOrgs[2], "one organisation per creator")
	require.NotEqual(t, catOrgs[1], catOrgs[3])
	for id, creator := range map[int64]string{1: "op-1", 3: "op-2"} {
		var role, name string
		require.NoError(t, cat.QueryRow(ctx, `
			SELECT m.role, o.name FROM memberships m JOIN organizations o USING (organization_id)
			WHERE m.organization_id = $1 AND m.user_id = $2`, catOrgs[id], creator).Scan(&role, &name))
		require.Equal(t, "manager", role, "the creator manages its shows' organisation")
		require.Equal(t, creator, name)
	}
}
