package shardmove_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	paymentv1 "github.com/seatghor/seatghor/gen/seatghor/payment/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/shardmove"
)

// TestMoveBigShow measures a move of a big show under a light load: a
// tenth of its seats held (two a hold), half of those holds ordered, half
// of the orders paid, while two buyers hold and release seats all along.
// It logs how long the move took and how long the show's writes were
// frozen. `go test` runs 2,000 seats; SEATGHOR_MOVE_SEATS=50000 (`make
// bench-move`) is the measurement docs/operations.md reports.
func TestMoveBigShow(t *testing.T) {
	seats := 2000
	if v := os.Getenv("SEATGHOR_MOVE_SEATS"); v != "" {
		var err error
		seats, err = strconv.Atoi(v)
		require.NoError(t, err)
		require.True(t, seats >= 100 && seats%100 == 0, "SEATGHOR_MOVE_SEATS is a multiple of 100")
	}
	env := apptest.New(t, apptest.Options{Shards: 2, MaxConns: 12})
	ctx := context.Background()
	admin := as(t, env, "admin", auth.RoleAdmin)
	show := seatedShow(1, 100, proto.Int32(0))
	section := show.Sections[0]
	show.Sections = nil
	for i := range seats / 100 { // rows A … Z, AA … ZZ of 100 seats, 100 rows a section
		row := string(rune('A' + i%26))
		if i >= 26 {
			row = string(rune('A'+i/26-1)) + row
		}
		if i%100 == 0 {
			show.Sections = append(show.Sections, proto.CloneOf(section))
			show.Sections[len(show.Sections)-1].Name = fmt.Sprintf("Block %d", i/100+1)
			show.Sections[len(show.Sections)-1].Rows = nil
		}
		sec := show.Sections[len(show.Sections)-1]
		sec.Rows = append(sec.Rows, row)
	}
	created, err := admin.catalog.CreateShow(ctx, connect.NewRequest(show))
	require.NoError(t, err)
	showID := created.Msg.GetShow().GetShowId()
	var names []string
	for _, sec := range created.Msg.GetShow().GetSections() {
		for _, r := range sec.GetRows() {
			for i := range 100 {
				names = append(names, fmt.Sprintf("%s%d", r, i+1))
			}
		}
	}
	require.Len(t, names, seats)

	// The show's sales so far: holds of two seats on the first tenth.
	began := time.Now()
	holds := seats / 20
	var next atomic.Int64
	var wg sync.WaitGroup
	var none atomic.Int64
	for range 8 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < holds; i = int(next.Add(1)) - 1 {
				c := as(t, env, fmt.Sprintf("fan-%d", i), auth.RoleUser)
				h, err := call(ctx, c.holds.CreateHold, &bookingv1.CreateHoldRequest{ShowId: showID, Seats: names[2*i : 2*i+2]}, newKey(), &none)
				require.NoError(t, err)
				if i%2 == 1 {
					continue
				}
				o, err := call(ctx, c.orders.CreateOrder, &bookingv1.CreateOrderRequest{HoldId: h.GetHold().GetHoldId()}, newKey(), &none)
				require.NoError(t, err)
				if i%4 == 2 {
					continue
				}
				_, err = call(ctx, c.pay.StartPayment, &paymentv1.StartPaymentRequest{OrderId: o.GetOrder().GetOrderId(),
					Sandbox: &paymentv1.SandboxPayment{Token: "tok_success"}}, newKey(), &none)
				require.NoError(t, err)
			}
		})
	}
	wg.Wait()
	t.Logf("%d seats, %d holds, %d orders, %d payments made in %s", seats, holds, (holds+1)/2, (holds+3)/4, time.Since(began).Round(time.Millisecond))

	// The light load: two buyers hold a seat of the rest and release it.
	loadCtx, stopLoad := context.WithCancel(ctx)
	var ops, retries atomic.Int64
	for w := range 2 {
		c := as(t, env, fmt.Sprintf("light-%d", w), auth.RoleUser)
		wg.Go(func() {
			for loadCtx.Err() == nil {
				seat := names[seats/10+rand.IntN(seats-seats/10)]
				h, err := call(loadCtx, c.holds.CreateHold, &bookingv1.CreateHoldRequest{ShowId: showID, Seats: []string{seat}}, newKey(), &retries)
				if loadCtx.Err() != nil {
					return
				}
				if connect.CodeOf(err) == connect.CodeAborted || connect.CodeOf(err) == connect.CodeFailedPrecondition {
					continue
				}
				require.NoError(t, err)
				_, err = call(ctx, c.holds.ReleaseHold, &bookingv1.ReleaseHoldRequest{HoldId: h.GetHold().GetHoldId()}, newKey(), &retries)
				require.NoError(t, err)
				ops.Add(2)
			}
		})
	}
	time.Sleep(200 * time.Millisecond)
	log := slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	moveStart := time.Now()
	rep, err := shardmove.New(loginRouter(t, env), shardmove.Options{Log: log}).Move(ctx, showID, 1)
	took := time.Since(moveStart)
	require.NoError(t, err)
	time.Sleep(200 * time.Millisecond)
	stopLoad()
	wg.Wait()
	t.Logf("moved a %d-seat show in %s (2 s of it the grace before the delete): %d passes, %d rows copied, %d deleted; writes frozen for %s; light load: %d writes, %d retried",
		seats, took.Round(time.Millisecond), rep.Passes, rep.Copied, rep.Deleted, rep.Freeze.Round(time.Millisecond), ops.Load(), retries.Load())

	moved := env.App.Router.Shards()[1]
	var onNew, heldNew int
	require.NoError(t, moved.QueryRow(ctx, `SELECT (SELECT count(*) FROM seats WHERE show_id = $1),
		(SELECT count(*) FROM holds WHERE show_id = $1 AND cardinality(seats) = 2)`, showID).Scan(&onNew, &heldNew))
	require.Equal(t, seats, onNew)
	require.Equal(t, holds, heldNew, "every hold of the show is on the new shard")
	var onOld int
	require.NoError(t, env.App.Router.Shards()[0].QueryRow(ctx, `SELECT count(*) FROM seats WHERE show_id = $1`, showID).Scan(&onOld))
	require.Zero(t, onOld)
}
