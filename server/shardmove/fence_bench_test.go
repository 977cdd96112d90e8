package shardmove_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/pg"
)

// BenchmarkFence measures what the move's fence (decisions 0205, 0265: the
// show_writable trigger, a shared advisory lock of the show and a read of
// its row, once per transaction) costs a hold: the same one-seat CreateHold, made directly on the
// booking service, on a show of shard 0 (fenced) and of shard 1, where the
// fence's triggers are disabled, interleaved, reported as a ratio
// (fenced/unfenced). "serial" is one buyer; "concurrent" is 8 at once on
// one show, where the fence's locks of a hot show meet (an
// iteration is a burst of 400 holds on each show).
func BenchmarkFence(b *testing.B) {
	env := apptest.New(b, apptest.Options{Shards: 2, MaxConns: 16})
	ctx := context.Background()
	admin := as(b, env, "admin", auth.RoleAdmin)
	unfence(b, loginRouter(b, env).Shards()[1])
	newShow := func(shard int32) int64 {
		req := seatedShow(1, 100, proto.Int32(shard))
		req.Sections[0].Rows = nil
		for i := range 100 {
			req.Sections[0].Rows = append(req.Sections[0].Rows, string(rune('A'+i/26))+string(rune('A'+i%26)))
		}
		req.MaxSeatsPerAccount, req.MaxSeatsPerHold = 100, 10
		created, err := admin.catalog.CreateShow(ctx, connect.NewRequest(req))
		require.NoError(b, err)
		return created.Msg.GetShow().GetShowId()
	}
	seat := func(i int) string { return fmt.Sprintf("%c%c%d", 'A'+(i/100%100)/26, 'A'+(i/100%100)%26, 1+i%100) }
	hold := func(show int64, i int) time.Duration {
		start := time.Now()
		_, err := env.App.Booking.CreateHold(ctx, fmt.Sprintf("fence-%d", i%500), booking.HoldRequest{ShowID: show, Seats: []string{seat(i)}})
		if err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	report := func(b *testing.B, fenced, unfenced time.Duration, n int) {
		b.ReportMetric(float64(fenced)/float64(unfenced), "fenced/unfenced")
		b.ReportMetric(float64(fenced.Microseconds())/float64(n), "fenced-µs/op")
		b.ReportMetric(float64(unfenced.Microseconds())/float64(n), "unfenced-µs/op")
	}

	b.Run("serial", func(b *testing.B) {
		fenced, unfenced := newShow(0), newShow(1)
		var tf, tu time.Duration
		n := 0
		for i := 0; b.Loop(); i++ {
			if i > 0 && i%10000 == 0 {
				fenced, unfenced = newShow(0), newShow(1)
			}
			if i%2 == 0 {
				tf += hold(fenced, i)
				tu += hold(unfenced, i)
			} else {
				tu += hold(unfenced, i)
				tf += hold(fenced, i)
			}
			n++
		}
		report(b, tf, tu, n)
	})
	b.Run("concurrent", func(b *testing.B) {
		const workers, burst = 8, 400 // a burst of holds on one show, then on the other
		var tf, tu time.Duration
		n := 0
		run := func(show int64, from int) time.Duration {
			var next atomic.Int64
			var wg sync.WaitGroup
			start := time.Now()
			for range workers {
				wg.Go(func() {
					for k := int(next.Add(1)) - 1; k < burst; k = int(next.Add(1)) - 1 {
						hold(show, from+k)
					}
				})
			}
			wg.Wait()
			return time.Since(start)
		}
		fenced, unfenced := newShow(0), newShow(1)
		for i := 0; b.Loop(); i++ { // one burst on each show
			from := i * burst % 10000
			if i > 0 && from == 0 {
				fenced, unfenced = newShow(0), newShow(1)
			}
			if i%2 == 0 {
				tf += run(fenced, from)
				tu += run(unfenced, from)
			} else {
				tu += run(unfenced, from)
				tf += run(fenced, from)
			}
			n += burst
		}
		report(b, tf, tu, n)
	})
}

// unfence disables the fence's triggers on a shard (decision 0205).
func unfence(b *testing.B, pool *pg.Pool) {
	ctx := context.Background()
	rows, err := pool.Query(ctx, `SELECT format('ALTER TABLE %s DISABLE TRIGGER %I', tgrelid::regclass, tgname) FROM pg_trigger WHERE tgname LIKE '%show_writable'`)
	require.NoError(b, err)
	var stmts []string
	for rows.Next() {
		var s string
		require.NoError(b, rows.Scan(&s))
		stmts = append(stmts, s)
	}
	require.NoError(b, rows.Err())
	require.Greater(b, len(stmts), 10)
	for _, s := range stmts {
		_, err := pool.Exec(ctx, s)
		require.NoError(b, err)
	}
}
