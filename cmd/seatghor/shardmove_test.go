package main

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	connectrpc "connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/gen/seatghor/catalog/v1/catalogv1connect"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
)

// TestShardMoveCommand: `seatghor shard move` moves a show to the shard it
// names, says how long writes were frozen, and the running platform serves
// the show from there; bad arguments are usage errors.
func TestShardMoveCommand(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 2})
	ctx := context.Background()
	cat := catalogv1connect.NewCatalogServiceClient(env.HTTP, env.URL)
	req := connectrpc.NewRequest(&catalogv1.CreateShowRequest{
		Kind: catalogv1.ShowKind_SHOW_KIND_CONCERT, Title: "Mover", Venue: "Hall",
		StartsAt: timestamppb.New(time.Now().Add(24 * time.Hour)), Currency: "BDT", Shard: proto.Int32(0),
		Sections: []*catalogv1.Section{{Name: "Main", Rows: []string{"A"}, SeatsPerRow: 4, PriceMinor: 85000}},
		HoldTtl:  durationpb.New(600e9), MaxSeatsPerAccount: 4, MaxSeatsPerHold: 4,
	})
	req.Header().Set("Authorization", "Bearer "+env.Token(t, "admin", auth.RoleAdmin))
	req.Header().Set("Idempotency-Key", "shard-move-command")
	show, err := cat.CreateShow(ctx, req)
	require.NoError(t, err)
	id := show.Msg.GetShow().GetShowId()

	before, err := env.App.Router.ForShow(ctx, id) // cached from here on
	require.NoError(t, err)
	require.Equal(t, env.App.Router.Shards()[0].Name, before.Name)

	t.Setenv("SEATGHOR_CATALOG_URL", env.CatalogURL)
	t.Setenv("SEATGHOR_SHARD_URLS", strings.Join(env.ShardURLs, ","))
	t.Setenv("SEATGHOR_GATEWAY_URL", "http://127.0.0.1:1")
	t.Setenv("SEATGHOR_WEBHOOK_SECRETS", "shard-move-test-secret")
	var out bytes.Buffer
	require.NoError(t, run(ctx, []string{"shard", "move", "--show", strconv.FormatInt(id, 10), "--to", "1"}, &out, &out), out.String())
	require.Contains(t, out.String(), "from shard 0 to shard 1")
	require.Contains(t, out.String(), "writes frozen for")

	// The running platform's router hears of the move (NOTIFY) and drops
	// its cached answer.
	require.Eventually(t, func() bool {
		pool, err := env.App.Router.ForShow(ctx, id)
		return err == nil && pool.Name == env.App.Router.Shards()[1].Name
	}, 10*time.Second, 10*time.Millisecond, "the running platform follows the directory")
	pool, err := env.App.Router.ForShow(ctx, id)
	require.NoError(t, err)
	var seats int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM seats WHERE show_id = $1`, id).Scan(&seats))
	require.Equal(t, 4, seats)

	require.ErrorContains(t, run(ctx, []string{"shard", "move", "--show", strconv.FormatInt(id, 10), "--to", "1"}, &out, &out), "already on that shard")
	for _, args := range [][]string{{"shard"}, {"shard", "move"}, {"shard", "move", "--show", "x"}, {"shard", "split"}} {
		require.ErrorIs(t, run(ctx, args, &out, &out), errUsage, "%v", args)
	}
}

// TestShardMoveAbortCommand: `seatghor shard move --abort` lifts the freeze
// a dead mover left (decision 0240) and the show sells where it was;
// --abort with --to is a usage error.
func TestShardMoveAbortCommand(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 2})
	ctx := context.Background()
	cat := catalogv1connect.NewCatalogServiceClient(env.HTTP, env.URL)
	req := connectrpc.NewRequest(&catalogv1.CreateShowRequest{
		Kind: catalogv1.ShowKind_SHOW_KIND_CONCERT, Title: "Stuck", Venue: "Hall",
		StartsAt: timestamppb.New(time.Now().Add(24 * time.Hour)), Currency: "BDT", Shard: proto.Int32(0),
		Sections: []*catalogv1.Section{{Name: "Main", Rows: []string{"A"}, SeatsPerRow: 4, PriceMinor: 85000}},
		HoldTtl:  durationpb.New(600e9), MaxSeatsPerAccount: 4, MaxSeatsPerHold: 4,
	})
	req.Header().Set("Authorization", "Bearer "+env.Token(t, "admin", auth.RoleAdmin))
	req.Header().Set("Idempotency-Key", "shard-move-abort-command")
	show, err := cat.CreateShow(ctx, req)
	require.NoError(t, err)
	id := show.Msg.GetShow().GetShowId()
	old := env.App.Router.Shards()[0]
	_, err = old.Exec(ctx, `UPDATE shows SET placement = 'moving' WHERE show_id = $1`, id) // a mover died frozen
	require.NoError(t, err)

	t.Setenv("SEATGHOR_CATALOG_URL", env.CatalogURL)
	t.Setenv("SEATGHOR_SHARD_URLS", strings.Join(env.ShardURLs, ","))
	t.Setenv("SEATGHOR_GATEWAY_URL", "http://127.0.0.1:1")
	t.Setenv("SEATGHOR_WEBHOOK_SECRETS", "shard-move-test-secret")
	var out bytes.Buffer
	require.ErrorIs(t, run(ctx, []string{"shard", "move", "--show", strconv.FormatInt(id, 10), "--to", "1", "--abort"}, &out, &out), errUsage)
	require.NoError(t, run(ctx, []string{"shard", "move", "--show", strconv.FormatInt(id, 10), "--abort"}, &out, &out), out.String())
	require.Contains(t, out.String(), "is served by shard 0")
	var state string
	require.NoError(t, old.QueryRow(ctx, `SELECT placement FROM shows WHERE show_id = $1`, id).Scan(&state))
	require.Equal(t, "active", state)
}
