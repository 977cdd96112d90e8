package shardmove_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/shardmove"
)

// errDied stands for the mover's death: a panic at a step leaves what the
// move did so far and nothing else, and its sessions end (its lock too).
var errDied = errors.New("the mover died")

// TestMoverDiesAtEachStep kills a move after each of its steps and checks
// what the show is meanwhile and that running the move again (or
// aborting it, before the flip) settles it (decision 0240): before the
// flip the show serves from its old shard, frozen at most until then;
// after it, from the new shard only (its requests never read the old
// rows), and the rerun deletes the old rows. Either way the show's hold
// is on the shard the directory names, once, and nowhere else.
func TestMoverDiesAtEachStep(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 2})
	ctx := context.Background()
	admin := as(t, env, "admin", auth.RoleAdmin)
	buyer := as(t, env, "rumana", auth.RoleUser)
	router := loginRouter(t, env)
	for _, tc := range []struct {
		step    string
		flipped bool // the directory names the new shard after the death
		frozen  bool // the show's writes are refused after the death
		abort   bool // settled by --abort, not by running the move again
	}{
		{step: shardmove.StepCopied},
		{step: shardmove.StepCopied, abort: true},
		{step: shardmove.StepFrozen, frozen: true},
		{step: shardmove.StepFrozen, frozen: true, abort: true},
		{step: shardmove.StepActivated, frozen: true},
		{step: shardmove.StepActivated, frozen: true, abort: true},
		{step: shardmove.StepFlipped, flipped: true},
		{step: shardmove.StepMarked, flipped: true},
	} {
		name := tc.step
		if tc.abort {
			name += "/abort"
		}
		t.Run(name, func(t *testing.T) {
			created, err := admin.catalog.CreateShow(ctx, connect.NewRequest(seatedShow(1, 4, proto.Int32(0))))
			require.NoError(t, err)
			showID := created.Msg.GetShow().GetShowId()
			hold, err := buyer.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: showID, Seats: []string{"A1"}}))
			require.NoError(t, err)
			holdID := hold.Msg.GetHold().GetHoldId()

			opts := shardmove.Options{Grace: 50 * time.Millisecond}
			shardmove.SetStepHook(&opts, func(step string) {
				if step == tc.step {
					panic(errDied)
				}
			})
			require.PanicsWithValue(t, errDied, func() { _, _ = shardmove.New(router, opts).Move(ctx, showID, 1) })

			want := 0
			if tc.flipped {
				want = 1
			}
			var dir int
			require.NoError(t, router.Catalog().QueryRow(ctx, `SELECT shard FROM shows WHERE show_id = $1`, showID).Scan(&dir))
			require.Equal(t, want, dir)
			// The hold reads from the shard the directory names; a new one
			// is refused (retryably) while frozen, else taken there.
			require.Eventually(t, func() bool {
				pool, err := env.App.Router.ForShow(ctx, showID)
				return err == nil && pool.Name == env.App.Router.Shards()[want].Name
			}, 10*time.Second, 10*time.Millisecond, "the platform follows the directory")
			got, err := buyer.holds.GetHold(ctx, connect.NewRequest(&bookingv1.GetHoldRequest{HoldId: holdID}))
			require.NoError(t, err)
			require.Equal(t, []string{"A1"}, got.Msg.GetHold().GetSeats())
			_, err = buyer.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: showID, Seats: []string{"A2"}}))
			if tc.frozen {
				require.Equal(t, connect.CodeUnavailable, connect.CodeOf(err), "%v", err)
			} else {
				require.NoError(t, err)
			}

			var rep shardmove.Report
			if tc.abort {
				rep, err = shardmove.New(router, shardmove.Options{Grace: 50 * time.Millisecond}).Abort(ctx, showID)
				require.NoError(t, err)
				require.Equal(t, 0, rep.From)
				require.Positive(t, rep.Leftovers, "the partial copy is deleted")
			} else {
				rep, err = shardmove.New(router, shardmove.Options{Grace: 50 * time.Millisecond}).Move(ctx, showID, 1)
				require.NoError(t, err)
				if tc.flipped {
					require.Equal(t, 1, rep.From, "the rerun only cleans up")
					require.Positive(t, rep.Leftovers, "the old shard's rows are deleted")
				} else {
					require.Equal(t, 0, rep.From)
					require.Positive(t, rep.Deleted)
				}
			}
			served := 1
			if tc.abort {
				served = 0
			}
			require.NoError(t, router.Catalog().QueryRow(ctx, `SELECT shard FROM shows WHERE show_id = $1`, showID).Scan(&dir))
			require.Equal(t, served, dir)
			for i, pool := range router.Shards() {
				var holds, seats int
				var state string
				require.NoError(t, pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM holds WHERE hold_id = $2), (SELECT count(*) FROM seats WHERE show_id = $1),
					(SELECT placement FROM shows WHERE show_id = $1)`, showID, holdID).Scan(&holds, &seats, &state))
				if i == served {
					require.Equal(t, []any{1, 4, "active"}, []any{holds, seats, state}, "shard %d serves the show", i)
				} else {
					require.Equal(t, []any{0, 0, "moved"}, []any{holds, seats, state}, "shard %d keeps only the tombstone", i)
				}
			}
			require.Eventually(t, func() bool {
				_, err := buyer.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: showID, Seats: []string{"A3"}}))
				return err == nil
			}, 10*time.Second, 20*time.Millisecond, "the show sells")
		})
	}
}

// TestJobsPassOverAShowNotServedHere: the hold sweeper leaves alone the
// expired holds of a show its shard no longer serves (a mover died after
// the flip, its rows wait for the rerun) and still ends those of the other
// shows there (decision 0242); before, the refused write stopped its round.
func TestJobsPassOverAShowNotServedHere(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 2})
	ctx := context.Background()
	admin := as(t, env, "admin", auth.RoleAdmin)
	buyer := as(t, env, "rumana", auth.RoleUser)
	old := env.App.Router.Shards()[0]
	var shows []int64
	for range 2 {
		created, err := admin.catalog.CreateShow(ctx, connect.NewRequest(seatedShow(1, 4, proto.Int32(0))))
		require.NoError(t, err)
		shows = append(shows, created.Msg.GetShow().GetShowId())
		_, err = buyer.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: shows[len(shows)-1], Seats: []string{"A1"}}))
		require.NoError(t, err)
	}
	_, err := old.Exec(ctx, `UPDATE holds SET expires_at = now() - interval '1 second' WHERE show_id = ANY ($1)`, shows)
	require.NoError(t, err)
	_, err = old.Exec(ctx, `UPDATE shows SET placement = 'moved' WHERE show_id = $1`, shows[0])
	require.NoError(t, err)

	n, err := env.App.Booking.Sweep(ctx, 500)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	var status string
	require.NoError(t, old.QueryRow(ctx, `SELECT status FROM holds WHERE show_id = $1`, shows[1]).Scan(&status))
	require.Equal(t, "expired", status)
}
