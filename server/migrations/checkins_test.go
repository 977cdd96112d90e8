package migrations

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/internal/testkit/pgtest"
)

// TestCheckInsKeepOneRowPerTicket: check-ins stored under other spellings
// of a ticket id before ids had one spelling are folded into one row per
// ticket, the first admission's, under the one spelling; afterwards the
// table refuses any other spelling (decision 0066, shard migration 00015).
func TestCheckInsKeepOneRowPerTicket(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pgtest.Server(t).Fresh(t, "template0"))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	upTo(t, pool, Shard, 14)

	const order = "ord_7_0123456789abcdef"
	rows := [][]string{
		// ticket id, gate, checked in at
		{"tkt_7_0123456789abcdef_001", "second", "2026-05-01 10:00Z"},
		{"tkt_7_0123456789abcdef_0001", "first", "2026-05-01 09:00Z"},
		{"tkt_7_0123456789abcdef_+01", "third", "2026-05-01 11:00Z"},
		{"tkt_7_0123456789abcdef_0002", "only", "2026-05-01 09:30Z"},
		{"tkt_7_0123456789abcdef_1234", "big", "2026-05-01 09:40Z"},
	}
	require.NoError(t, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		// The rows alone; their show and order are not what is tested.
		if _, err := tx.Exec(ctx, `SET LOCAL session_replication_role = replica`); err != nil {
			return err
		}
		for _, r := range rows {
			if _, err := tx.Exec(ctx, `
				INSERT INTO ticket_checkins (ticket_id, show_id, order_id, gate, checked_in_by, checked_in_at)
				VALUES ($1, 7, $2, $3, 'gate', $4)`, r[0], order, r[1], r[2]); err != nil {
				return err
			}
		}
		return nil
	}))

	upTo(t, pool, Shard, 0)
	q, err := pool.Query(ctx, `SELECT ticket_id, gate FROM ticket_checkins ORDER BY ticket_id`)
	require.NoError(t, err)
	got, err := pgx.CollectRows(q, pgx.RowToStructByPos[struct{ ID, Gate string }])
	require.NoError(t, err)
	require.Equal(t, []struct{ ID, Gate string }{
		{"tkt_7_0123456789abcdef_001", "first"},
		{"tkt_7_0123456789abcdef_002", "only"},
		{"tkt_7_0123456789abcdef_1234", "big"},
	}, got)

	for _, bad := range []string{"tkt_7_0123456789abcdef_0003", "tkt_7_0123456789abcdef_3", "tkt_8_0123456789abcdef_003",
		"tkt_07_0123456789abcdef_003", "tkt_7_0123456789ABCDEF_003"} {
		_, err := pool.Exec(ctx, `
			INSERT INTO ticket_checkins (ticket_id, show_id, order_id, checked_in_by, checked_in_at)
			VALUES ($1, 7, $2, 'gate', now())`, bad, order)
		require.ErrorContains(t, err, "ticket_checkins_canonical_id", bad)
	}
}
