package api_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
)

// TestKeyRecordRefusesASecondHold (decision 0226): the pipelined hold no
// longer looks its key up; the key's record, inserted with the key's lock
// held, is the look-up. Once the first hold is released its seats are free
// again, so every retry's speculative hold succeeds — and the record must
// still turn each retry into the first answer: 20 concurrent retries with
// the same request and 10 with another request under the same key, none
// of them a new hold, and the seats stay free.
func TestKeyRecordRefusesASecondHold(t *testing.T) {
	env := apptest.New(t, apptest.Options{})
	show := createShow(t, env, seatedShow("record", 2, 10))
	ctx := context.Background()
	c := as(t, env, "rumana", auth.RoleUser)
	id := show.GetShowId()
	req := &bookingv1.CreateHoldRequest{ShowId: id, Seats: []string{"A1", "A2"}}

	first, err := c.holds.CreateHold(ctx, withKey(req, "rec-1"))
	require.NoError(t, err)
	_, err = c.holds.ReleaseHold(ctx, connect.NewRequest(&bookingv1.ReleaseHoldRequest{HoldId: first.Msg.GetHold().GetHoldId()}))
	require.NoError(t, err)

	const same, other = 20, 10
	errs := make([]error, same+other)
	ids := make([]string, same)
	var wg sync.WaitGroup
	for i := range same + other {
		wg.Go(func() {
			r := req
			if i >= same {
				r = &bookingv1.CreateHoldRequest{ShowId: id, Seats: []string{fmt.Sprintf("B%d", i-same+1)}}
			}
			resp, err := c.holds.CreateHold(ctx, withKey(r, "rec-1"))
			errs[i] = err
			if err == nil && i < same {
				ids[i] = resp.Msg.GetHold().GetHoldId()
			}
		})
	}
	wg.Wait()
	for i := range same {
		require.NoError(t, errs[i])
		require.Equal(t, first.Msg.GetHold().GetHoldId(), ids[i], "retry %d gets the first answer", i)
	}
	for i := same; i < same+other; i++ {
		require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(errs[i]), "%v", errs[i])
	}
	require.Equal(t, 1, countHolds(t, env, id), "no retry made a hold")
	pool, err := env.App.Router.ForShow(ctx, id)
	require.NoError(t, err)
	var held int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM seats WHERE show_id = $1 AND status <> 'available'`, id).Scan(&held))
	require.Zero(t, held, "the released seats stay free")
	var outbox int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM outbox WHERE show_id = $1 AND event_type LIKE '%SeatsHeld'`, id).Scan(&outbox))
	require.Equal(t, 1, outbox, "one SeatsHeld event, the first hold's")
}
