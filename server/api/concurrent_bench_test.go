package api_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/internal/testkit/redistest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/ratelimit"
)

// BenchmarkGAHold measures one-place GA holds by 32 concurrent buyers on
// an area split into 16 buckets next to the same area as a single counter
// row (decision 0006), made directly on the shard pool, in interleaved
// rounds, and reports the buckets' throughput as a multiple of the
// counter's: on a shared, noisy machine the ratio means more than either
// rate.
func BenchmarkGAHold(b *testing.B) {
	const (
		buyers   = 32
		perRound = buyers * 8
		capacity = 20000
	)
	// The test server is shared (max_connections 100): 32 buyers share 16
	// connections, as a server's requests share its pool.
	env := apptest.New(b, apptest.Options{MaxConns: 16})
	ctx := context.Background()
	newShow := func(buckets int32) int64 {
		req := seatedShow("ga bench", 1, 1)
		req.Sections = nil
		req.GaAreas = []*catalogv1.GaArea{{Name: "Field", Capacity: capacity, PriceMinor: 10000, Buckets: buckets}}
		return createShow(b, env, req).GetShowId()
	}
	var buyer atomic.Int64
	// round makes perRound holds on show with buyers goroutines and
	// returns how long they took.
	round := func(show int64) time.Duration {
		var (
			wg   sync.WaitGroup
			left atomic.Int64
		)
		left.Store(perRound)
		start := time.Now()
		for range buyers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for left.Add(-1) >= 0 {
					// A new buyer each time: the per-account cap is not measured.
					user := fmt.Sprintf("ga-%d", buyer.Add(1))
					if _, err := env.App.Booking.CreateHold(ctx, user,
						booking.HoldRequest{ShowID: show, GAArea: "Field", Quantity: 1}); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		return time.Since(start)
	}
	counter, buckets := newShow(1), newShow(16)
	var counterTime, bucketsTime time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if i > 0 && i%(capacity/perRound) == 0 {
			counter, buckets = newShow(1), newShow(16)
		}
		counterTime += round(counter)
		bucketsTime += round(buckets)
	}
	holds := float64(b.N * perRound)
	b.ReportMetric(holds/counterTime.Seconds(), "counter-holds/s")
	b.ReportMetric(holds/bucketsTime.Seconds(), "buckets-holds/s")
	b.ReportMetric(float64(counterTime)/float64(bucketsTime), "buckets/counter")
}

// BenchmarkCreateHoldConcurrent measures one-seat holds by 32 concurrent
// buyers on distinct seats of a 10,000-seat show, made directly on the
// shard pool: where BenchmarkCreateHold, one buyer at a time, mostly waits
// for each commit's WAL flush, this one shows what a hold costs the
// database when commits are flushed together (decision 0125).
func BenchmarkCreateHoldConcurrent(b *testing.B) {
	const buyers = 32
	env := apptest.New(b, apptest.Options{MaxConns: 16}) // see BenchmarkGAHold
	ctx := context.Background()
	newShow := func() int64 {
		req := seatedShow("bench", 100, 100) // 10,000 seats
		req.MaxSeatsPerAccount, req.MaxSeatsPerHold = 100, 10
		return createShow(b, env, req).GetShowId()
	}
	rows := rowsAZ(100)
	seat := func(i int64) string { return fmt.Sprintf("%s%d", rows[(i/100)%100], 1+i%100) }
	show := newShow()
	var (
		next    atomic.Int64
		elapsed time.Duration
		holds   int64
	)
	cpu := -backendCPU(b, env.App.Router.Shards())
	b.ResetTimer()
	for b.Loop() {
		if next.Load() >= 10000-buyers*8 {
			b.StopTimer()
			show = newShow()
			next.Store(0)
			b.StartTimer()
		}
		var wg sync.WaitGroup
		start := time.Now()
		for range buyers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 8 {
					i := next.Add(1) - 1
					if _, err := env.App.Booking.CreateHold(ctx, fmt.Sprintf("bench-%d", i%500),
						booking.HoldRequest{ShowID: show, Seats: []string{seat(i)}}); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		elapsed += time.Since(start)
		holds += buyers * 8
	}
	cpu += backendCPU(b, env.App.Router.Shards())
	b.ReportMetric(float64(holds)/elapsed.Seconds(), "holds/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(holds), "pg-cpu-µs/hold")
}

// backendCPU is the CPU time PostgreSQL's backends serving the pools'
// databases have used so far (Linux /proc, the server on this machine): unlike wall
// time, it does not depend on what else the machine is running.
func backendCPU(tb testing.TB, pools []*pg.Pool) time.Duration {
	var pids []int32
	for _, pool := range pools {
		rows, err := pool.Query(context.Background(),
			`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`)
		if err != nil {
			tb.Fatal(err)
		}
		some, err := pgx.CollectRows(rows, pgx.RowTo[int32])
		if err != nil {
			tb.Fatal(err)
		}
		pids = append(pids, some...)
	}
	var ticks int64
	for _, pid := range pids {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue // gone, or not on this machine
		}
		// After the command's ")" come state (1), …, utime (12), stime (13).
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		utime, _ := strconv.ParseInt(f[11], 10, 64)
		stime, _ := strconv.ParseInt(f[12], 10, 64)
		ticks += utime + stime
	}
	return time.Duration(ticks) * time.Second / 100 // USER_HZ
}

// BenchmarkCreateHoldREST measures what the HTTP edge adds to a hold
// under concurrency: rounds of one-seat holds by 32 concurrent buyers over
// REST (POST /v1/holds with a bearer token and an Idempotency-Key, the rate
// limits on, in Redis) interleaved with the same rounds made directly on
// the booking service, each on a 10,000-seat show of its own. rest/direct
// is the REST rounds' throughput over the direct ones' (1 would be an edge
// that costs nothing); on a shared, noisy machine the ratio means more
// than either rate (issue 10, decision 0227).
func BenchmarkCreateHoldREST(b *testing.B) {
	const buyers, users, perBuyer = 32, 500, 8
	r := redistest.New(b)
	lots := ratelimit.Limit{Rate: 1 << 30, Per: time.Minute, Burst: 1 << 30} // counted, never refused
	env := apptest.New(b, apptest.Options{MaxConns: 16, RedisURL: r.URL, RedisPrefix: r.Prefix,
		RateLimits: ratelimit.Config{Holds: lots, SaleHolds: lots}})
	ctx := context.Background()
	newShow := func() int64 {
		req := seatedShow("bench", 100, 100) // 10,000 seats
		req.MaxSeatsPerAccount, req.MaxSeatsPerHold = 100, 10
		return createShow(b, env, req).GetShowId()
	}
	rows := rowsAZ(100)
	seat := func(i int64) string { return fmt.Sprintf("%s%d", rows[(i/100)%100], 1+i%100) }
	tokens := make([]string, users)
	for i := range tokens {
		tokens[i] = "Bearer " + env.Token(b, fmt.Sprintf("bench-%d", i), auth.RoleUser)
	}
	restHold := func(show, i int64) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, env.URL+"/v1/holds",
			strings.NewReader(fmt.Sprintf(`{"show_id": %d, "seats": [%q]}`, show, seat(i))))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", tokens[i%users])
		req.Header.Set(keyHeader, newKey())
		resp, err := env.HTTP.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("POST /v1/holds: %d %s", resp.StatusCode, body)
		}
		return nil
	}
	directHold := func(show, i int64) error {
		_, err := env.App.Booking.CreateHold(ctx, fmt.Sprintf("bench-%d", i%users),
			booking.HoldRequest{ShowID: show, Seats: []string{seat(i)}})
		return err
	}
	type side struct {
		hold    func(show, i int64) error
		show    int64
		next    atomic.Int64
		elapsed time.Duration
	}
	sides := []*side{{hold: restHold, show: newShow()}, {hold: directHold, show: newShow()}}
	round := func(s *side) {
		if s.next.Load() >= 10000-buyers*perBuyer {
			b.StopTimer()
			s.show = newShow()
			s.next.Store(0)
			b.StartTimer()
		}
		var wg sync.WaitGroup
		start := time.Now()
		for range buyers {
			wg.Go(func() {
				for range perBuyer {
					if err := s.hold(s.show, s.next.Add(1)-1); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		s.elapsed += time.Since(start)
	}
	holds := 0
	b.ResetTimer()
	for b.Loop() {
		round(sides[0])
		round(sides[1])
		holds += buyers * perBuyer
	}
	b.ReportMetric(float64(holds)/sides[0].elapsed.Seconds(), "rest-holds/s")
	b.ReportMetric(float64(holds)/sides[1].elapsed.Seconds(), "direct-holds/s")
	b.ReportMetric(sides[1].elapsed.Seconds()/sides[0].elapsed.Seconds(), "rest/direct")
}
