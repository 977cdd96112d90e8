package api_test

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
)

func countHolds(t *testing.T, env *apptest.Env, showID int64) int {
	t.Helper()
	ctx := context.Background()
	pool, err := env.App.Router.ForShow(ctx, showID)
	require.NoError(t, err)
	var n int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM holds WHERE show_id = $1`, showID).Scan(&n))
	return n
}

// TestIdempotentCreateHold: — the same key with the same request gets
// the first answer without the work being done twice; with a different
// request it is refused.
func TestIdempotentCreateHold(t *testing.T) {
	env := apptest.New(t, apptest.Options{})
	show := createShow(t, env, seatedShow("idempotency", 4, 10))
	ctx := context.Background()
	c := as(t, env, "rumana", auth.RoleUser)
	id := show.GetShowId()

	t.Run("sequential retry", func(t *testing.T) {
		req := &bookingv1.CreateHoldRequest{ShowId: id, Seats: []string{"A1", "A2"}}
		first, err := c.holds.CreateHold(ctx, withKey(req, "seq-1"))
		require.NoError(t, err)
		again, err := c.holds.CreateHold(ctx, withKey(req, "seq-1"))
		require.NoError(t, err)
		require.True(t, proto.Equal(first.Msg, again.Msg), "replay differs:\n%v\n%v", first.Msg, again.Msg)
		require.Equal(t, 1, countHolds(t, env, id))
	})

	t.Run("different request, same key", func(t *testing.T) {
		_, err := c.holds.CreateHold(ctx, withKey(&bookingv1.CreateHoldRequest{ShowId: id, Seats: []string{"A3"}}, "seq-1"))
		require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err))
		require.Contains(t, err.Error(), "different request")
		require.Equal(t, 1, countHolds(t, env, id))
	})

	t.Run("same key, other caller: independent", func(t *testing.T) {
		other := as(t, env, "karim", auth.RoleUser)
		resp, err := other.holds.CreateHold(ctx, withKey(&bookingv1.CreateHoldRequest{ShowId: id, Seats: []string{"B1"}}, "seq-1"))
		require.NoError(t, err)
		require.Equal(t, "karim", resp.Msg.GetHold().GetUserId())
	})

	t.Run("business error is replayed", func(t *testing.T) {
		req := &bookingv1.CreateHoldRequest{ShowId: id, Seats: []string{"A2", "A4"}} // A2 is Rumana's
		_, err := as(t, env, "sumi", auth.RoleUser).holds.CreateHold(ctx, withKey(req, "conflict-1"))
		first := unavailable(t, err)
		// Rumana releases A1, A2: a fresh request would now succeed, but the
		// retry with the same key gets the first answer.
		holds, err := c.holds.CreateHold(ctx, withKey(&bookingv1.CreateHoldRequest{ShowId: id, Seats: []string{"A1", "A2"}}, "seq-1"))
		require.NoError(t, err)
		_, err = c.holds.ReleaseHold(ctx, connect.NewRequest(&bookingv1.ReleaseHoldRequest{HoldId: holds.Msg.GetHold().GetHoldId()}))
		require.NoError(t, err)
		_, err = as(t, env, "sumi", auth.RoleUser).holds.CreateHold(ctx, withKey(req, "conflict-1"))
		require.True(t, proto.Equal(first, unavailable(t, err)))
	})

	t.Run("concurrent duplicates", func(t *testing.T) {
		before := countHolds(t, env, id)
		req := &bookingv1.CreateHoldRequest{ShowId: id, Seats: []string{"B5", "B6"}}
		var wg sync.WaitGroup
		ids := make([]string, 20)
		errs := make([]error, 20)
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := c.holds.CreateHold(ctx, withKey(req, "burst-1"))
				errs[i] = err
				if err == nil {
					ids[i] = resp.Msg.GetHold().GetHoldId()
				}
			}()
		}
		wg.Wait()
		for i := range 20 {
			require.NoError(t, errs[i])
			require.Equal(t, ids[0], ids[i], "every duplicate gets the first answer")
		}
		require.Equal(t, before+1, countHolds(t, env, id))
	})

	t.Run("first still running", func(t *testing.T) {
		// Hold the key's lock the way a slow first request would, in a
		// transaction on the show's shard, past the duplicate's wait.
		pool, err := env.App.Router.ForShow(ctx, id)
		require.NoError(t, err)
		tx, err := pool.Begin(ctx)
		require.NoError(t, err)
		defer tx.Rollback(ctx)
		_, err = tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, "idem:6:rumana:slow-1")
		require.NoError(t, err)
		start := time.Now()
		_, err = c.holds.CreateHold(ctx, withKey(&bookingv1.CreateHoldRequest{ShowId: id, Seats: []string{"B9"}}, "slow-1"))
		require.Equal(t, connect.CodeAborted, connect.CodeOf(err), "%v", err)
		require.Contains(t, err.Error(), "still running")
		require.GreaterOrEqual(t, time.Since(start), 2*time.Second, "the duplicate waits for the first before giving up")
	})

	t.Run("key required and rejected requests not recorded", func(t *testing.T) {
		req := connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: id, Seats: []string{"C1"}})
		req.Header().Set(keyHeader, "")
		raw := clientsFor(env.HTTP, env.URL)
		req.Header().Set("Authorization", "Bearer "+env.Token(t, "rumana", auth.RoleUser))
		_, err := raw.holds.CreateHold(ctx, req)
		require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err))
		require.Contains(t, err.Error(), "Idempotency-Key")

		// An invalid request is not recorded: the same key then works.
		_, err = c.holds.CreateHold(ctx, withKey(&bookingv1.CreateHoldRequest{ShowId: id, Seats: []string{"c1"}}, "v-1"))
		require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err))
		_, err = c.holds.CreateHold(ctx, withKey(&bookingv1.CreateHoldRequest{ShowId: id, Seats: []string{"C1"}}, "v-1"))
		require.NoError(t, err)
	})

	t.Run("over REST too", func(t *testing.T) {
		post := func(body string) (int, string) {
			req, err := http.NewRequest(http.MethodPost, env.URL+"/v1/holds", strings.NewReader(body))
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+env.Token(t, "rumana", auth.RoleUser))
			req.Header.Set(keyHeader, "rest-1")
			resp, err := env.HTTP.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			var sb strings.Builder
			_, _ = io.Copy(&sb, resp.Body)
			return resp.StatusCode, sb.String()
		}
		code1, body1 := post(`{"show_id": ` + strconv.FormatInt(id, 10) + `, "seats": ["D1"]}`)
		code2, body2 := post(`{"show_id": ` + strconv.FormatInt(id, 10) + `, "seats": ["D1"]}`)
		require.Equal(t, http.StatusOK, code1, body1)
		require.Equal(t, code1, code2)
		require.JSONEq(t, body1, body2)
	})
}
