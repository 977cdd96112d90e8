package audit_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/internal/testkit/pgtest"
	"github.com/seatghor/seatghor/internal/testkit/schematest"
	"github.com/seatghor/seatghor/server/audit"
	"github.com/seatghor/seatghor/server/migrations"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Cleanup()
	os.Exit(code)
}

// TestRecordCommitsWithTheChange: an entry recorded in a transaction that
// rolls back is not in the log; one in a transaction that commits is,
// with its actor, organisation and detail; Read filters by organisation,
// target, actor and action (or an action's kind), newest first, a page
// at a time; the
// application role may add entries but not change or remove them.
func TestRecordCommitsWithTheChange(t *testing.T) {
	ctx := context.Background()
	db, err := pgxpool.New(ctx, schematest.Fresh(t, migrations.Catalog))
	require.NoError(t, err)
	t.Cleanup(db.Close)
	at := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	entry := func(target, action string) audit.Entry {
		return audit.Entry{At: at, Actor: audit.Actor{Kind: audit.ActorAPIKey, ID: "key_abc"}, Action: action,
			Target: target, Detail: map[string]any{"url": "https://agency.example/"}}
	}
	member := func(org, user, by string) audit.Entry {
		return audit.Entry{At: at, Actor: audit.Actor{Kind: audit.ActorUser, ID: by}, Action: "member.set",
			Target: "member:" + org + ":" + user, OrganizationID: org, Detail: map[string]any{"after": map[string]any{"role": "gate"}}}
	}

	tx, err := db.Begin(ctx)
	require.NoError(t, err)
	require.NoError(t, audit.Record(ctx, tx, entry("webhook-endpoint:1", "webhook_endpoint.create")))
	require.NoError(t, tx.Rollback(ctx))
	require.NoError(t, pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		for _, e := range []audit.Entry{entry("webhook-endpoint:1", "webhook_endpoint.create"),
			entry("webhook-endpoint:2", "webhook_endpoint.create"), entry("webhook-endpoint:1", "webhook_endpoint.disable"),
			member("hanif", "u-1", "boss"), member("hanif", "u-2", "boss"), member("shyamoli", "u-3", "other")} {
			if err := audit.Record(ctx, tx, e); err != nil {
				return err
			}
		}
		return nil
	}))
	require.Error(t, audit.Record(ctx, db, audit.Entry{At: at, Action: "x", Target: "y"}), "an entry names its actor")

	got, err := audit.Read(ctx, db, audit.Filter{Target: "webhook-endpoint:1"})
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.Equal(t, "webhook_endpoint.disable", got[0].Action, "newest first")
	require.Equal(t, "webhook_endpoint.create", got[1].Action)
	require.Equal(t, audit.Actor{Kind: audit.ActorAPIKey, ID: "key_abc"}, got[1].Actor)
	require.Equal(t, at, got[1].At)
	require.Equal(t, map[string]any{"url": "https://agency.example/"}, got[1].Detail)
	require.Empty(t, got[1].OrganizationID)
	all, err := audit.Read(ctx, db, audit.Filter{})
	require.NoError(t, err)
	require.Len(t, all, 6)

	targets := func(f audit.Filter) []string {
		t.Helper()
		got, err := audit.Read(ctx, db, f)
		require.NoError(t, err)
		var out []string
		for _, e := range got {
			out = append(out, e.Target)
		}
		return out
	}
	require.Equal(t, []string{"member:hanif:u-2", "member:hanif:u-1"}, targets(audit.Filter{OrganizationID: "hanif"}))
	require.Equal(t, []string{"member:shyamoli:u-3"}, targets(audit.Filter{ActorID: "other"}))
	require.Equal(t, []string{"webhook-endpoint:2", "webhook-endpoint:1"}, targets(audit.Filter{Action: "webhook_endpoint.create"}))
	require.Len(t, targets(audit.Filter{Action: "webhook_endpoint."}), 3, "an action's kind")
	require.Empty(t, targets(audit.Filter{Action: "webhook_endpoint"}), "no dot: the action itself")
	page := targets(audit.Filter{Limit: 2})
	require.Equal(t, []string{"member:shyamoli:u-3", "member:hanif:u-2"}, page)
	require.Equal(t, []string{"member:hanif:u-1", "webhook-endpoint:1"}, targets(audit.Filter{Before: all[1].ID, Limit: 2}), "the next page")

	// As the application role: append-only.
	conn, err := db.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	_, err = conn.Exec(ctx, `SET ROLE seatghor_app`)
	require.NoError(t, err)
	require.NoError(t, audit.Record(ctx, conn, entry("webhook-endpoint:3", "webhook_endpoint.create")))
	_, err = conn.Exec(ctx, `UPDATE audit_log SET actor_id = 'someone else'`)
	require.ErrorContains(t, err, "permission denied")
	_, err = conn.Exec(ctx, `DELETE FROM audit_log`)
	require.ErrorContains(t, err, "permission denied")
	_, err = conn.Exec(ctx, `RESET ROLE`)
	require.NoError(t, err)
}
