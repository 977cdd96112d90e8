package api_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
)

// TestConcurrentHoldsShareTransactions: 48 buyers each hold a different
// seat of one show at the same moment, through the API. The holds go in
// batches (decision 0270): every one is taken, fewer transactions than
// holds wrote them, none failed, each hold has its seat, its one outbox
// event and its key's record (a retry with the key answers the same hold).
func TestConcurrentHoldsShareTransactions(t *testing.T) {
	env := apptest.New(t, apptest.Options{})
	ctx := context.Background()
	show := createShow(t, env, seatedShow("batches", 6, 10))
	const buyers = 48
	type buyer struct {
		c    clients
		key  string
		seat string
		hold *bookingv1.Hold
	}
	var bs [buyers]buyer
	rows := rowsAZ(6)
	for i := range bs {
		bs[i] = buyer{c: as(t, env, fmt.Sprintf("batch-buyer-%d", i), auth.RoleUser), key: newKey(),
			seat: fmt.Sprintf("%s%d", rows[i/10], 1+i%10)}
	}
	before := env.App.Booking.HoldBatchStats()
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
	)
	for i := range bs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			resp, err := bs[i].c.holds.CreateHold(ctx, withKey(&bookingv1.CreateHoldRequest{
				ShowId: show.GetShowId(), Seats: []string{bs[i].seat}}, bs[i].key))
			if err != nil {
				t.Errorf("hold of %s: %v", bs[i].seat, err)
				return
			}
			bs[i].hold = resp.Msg.GetHold()
		}()
	}
	close(start)
	wg.Wait()
	after := env.App.Booking.HoldBatchStats()
	t.Logf("%d holds in %d batches", after.Held-before.Held, after.Batches-before.Batches)
	require.EqualValues(t, buyers, after.Held-before.Held, "every hold taken in a batch")
	require.Zero(t, after.Failed-before.Failed, "no batch failed")
	require.Less(t, after.Batches-before.Batches, int64(buyers), "some transactions carried several holds")

	pool, err := env.App.Router.ForShow(ctx, show.GetShowId())
	require.NoError(t, err)
	for _, b := range bs {
		require.Equal(t, []string{b.seat}, b.hold.GetSeats())
		var holder string
		require.NoError(t, pool.QueryRow(ctx, `SELECT hold_id FROM seats WHERE show_id = $1 AND seat = $2`,
			show.GetShowId(), b.seat).Scan(&holder))
		require.Equal(t, b.hold.GetHoldId(), holder)
		var events int
		require.NoError(t, pool.QueryRow(ctx, `
			SELECT count(*) FROM outbox WHERE show_id = $1 AND event_type = 'seatghor.events.v1.SeatsHeld'
			  AND position($2::bytea IN payload) > 0`, show.GetShowId(), []byte(b.hold.GetHoldId())).Scan(&events))
		require.Equal(t, 1, events, "one event of hold %s", b.hold.GetHoldId())
		again, err := b.c.holds.CreateHold(ctx, withKey(&bookingv1.CreateHoldRequest{
			ShowId: show.GetShowId(), Seats: []string{b.seat}}, b.key))
		require.NoError(t, err)
		require.Equal(t, b.hold.GetHoldId(), again.Msg.GetHold().GetHoldId(), "a retry answers the same hold")
	}
	require.Equal(t, buyers, countHolds(t, env, show.GetShowId()))
}
