package migrations

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/internal/testkit/pgtest"
)

// TestPartnersBeforeExplicitAccessKeepWhatTheySold: a partner registered
// with empty allow lists sold every show; once a partner sells nothing it
// was not allowed (decision 0284), such a partner is granted every show
// by the migration, and one with lists keeps exactly those.
func TestPartnersBeforeExplicitAccessKeepWhatTheySold(t *testing.T) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pgtest.Server(t).Fresh(t, "template0"))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	upTo(t, pool, Catalog, 85)
	now := time.Now()
	for _, q := range []string{`
		INSERT INTO organizations (organization_id, name, created_by, created_at) VALUES ('green-line', 'Green Line', 'admin', $1)`, `
		INSERT INTO shows (show_id, shard, kind, title, operator, starts_at, on_sale_at, currency, layout,
		                   hold_ttl_ms, payment_extension_ms, max_seats_per_account, max_seats_per_hold,
		                   seat_count, created_by, created_at, organization_id)
		VALUES (1, 0, 1, 't', 'Green Line', $1, $1, 'BDT', '{}', 1, 0, 1, 1, 0, 'op', $1, 'green-line'),
		       (2, 0, 1, 't', 'Other', $1, $1, 'BDT', '{}', 1, 0, 1, 1, 0, 'op', $1, NULL)`, `
		INSERT INTO partners (partner_id, name, commission_bps, allowed_organization_ids, allowed_show_ids, created_by, created_at)
		VALUES (1, 'sold everything', 0, '{}', '{}', 'admin', $1),
		       (2, 'sold Green Line', 0, '{green-line}', '{}', 'admin', $1)`} {
		_, err = pool.Exec(ctx, q, now)
		require.NoError(t, err)
	}
	upTo(t, pool, Catalog, 0)

	maySell := func(partner, show int64) bool {
		var ok bool
		require.NoError(t, pool.QueryRow(ctx, `SELECT partner_may_sell($1, $2)`, partner, show).Scan(&ok))
		return ok
	}
	require.True(t, maySell(1, 1), "a partner with empty lists sold every show and still does")
	require.True(t, maySell(1, 2))
	require.True(t, maySell(2, 1), "a partner with lists keeps them")
	require.False(t, maySell(2, 2))

	_, err = pool.Exec(ctx, `
		INSERT INTO partners (partner_id, name, commission_bps, created_by, created_at) VALUES (3, 'new', 0, 'admin', $1)`, now)
	require.NoError(t, err)
	require.False(t, maySell(3, 1), "a partner registered now sells nothing until allowed")
	require.False(t, maySell(3, 2))
}
