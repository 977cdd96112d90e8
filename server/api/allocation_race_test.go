package api_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	partnerv1 "github.com/seatghor/seatghor/gen/seatghor/partner/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
)

// raceReturn advances the clock to returnAt once the racers have made
// `after` attempts between them, and then runs the return job twice at
// once, as two workers would. It reports how many allocations the two
// returned between them. It sets returning first: a hold answered while
// returning was still false was made before the return began.
func raceReturn(t *testing.T, a allocationEnv, attempts *atomic.Int64, after int64, returnAt time.Time, returning *atomic.Bool, stop <-chan struct{}) <-chan int {
	out := make(chan int, 1)
	go func() {
		for attempts.Load() < after {
			select {
			case <-stop:
			case <-time.After(time.Millisecond):
				continue
			}
			break
		}
		returning.Store(true)
		a.clk.Set(returnAt)
		var wg sync.WaitGroup
		var returned atomic.Int64
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n, err := a.env.App.Booking.ReturnDue(context.Background(), 10)
				if err != nil {
					t.Errorf("return due allocations: %v", err)
				}
				returned.Add(int64(n))
			}()
		}
		wg.Wait()
		out <- int(returned.Load())
	}()
	return out
}

// TestAllocationRaceWithReturn: 24 public buyers and 8 callers of partner 7
// race for the 20 seats of a show whose row A is allocated to partner 7
// (general sale closed to it), and the allocation returns to general sale
// in the middle of the race, by two workers at once. No seat is ever in two
// live holds (0 oversold); before the return the public got no seat of row
// A and the partner none of row B; afterwards every seat is held by exactly
// one caller or free for anyone (0 leaked).
func TestAllocationRaceWithReturn(t *testing.T) {
	a := newAllocationEnv(t, apptest.Options{Shards: 1, MaxConns: 12}, seatedShow("seat race", 2, 10)) // A1…B10
	ctx := context.Background()
	showID := a.show.GetShowId()
	start := a.clk.Now()
	returnAt := start.Add(time.Minute)
	a.allocate(t, &partnerv1.AllocateSeatsRequest{PartnerId: 7, Seats: seatList("A", 1, 10), ReturnAt: timestamppb.New(returnAt)})
	all := append(seatList("A", 1, 10), seatList("B", 1, 10)...)

	type won struct {
		seat, holdID, who string
		partner           bool
		beforeReturn      bool
	}
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		owner     = map[string]won{}
		attempts  atomic.Int64
		returning atomic.Bool
		stop      = make(chan struct{})
	)
	returned := raceReturn(t, a, &attempts, 64, returnAt, &returning, stop)
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			partner := i < 8
			who := fmt.Sprintf("public-%d", i)
			c := withToken(a.env, a.env.Token(t, who, auth.RoleUser))
			if partner {
				who = fmt.Sprintf("agent-%d", i)
				c = a.partner(t, who, 7)
			}
			for range 40 {
				seat := all[rand.IntN(len(all))]
				attempts.Add(1)
				h, err := c.hold(showID, seat)
				if err != nil {
					reason, su := refusedSeat(t, err)
					if len(su.GetSeats()) != 1 || su.GetSeats()[0] != seat {
						t.Errorf("refusal of %s lists %v", seat, su.GetSeats())
					}
					// Only row A is ever outside the public's channel, and
					// only row B outside the partner's (decision 0325).
					if inA := seat[0] == 'A'; reason == "SEATS_NOT_IN_CHANNEL" && inA == partner {
						t.Errorf("%s refused %s as outside its channel", who, seat)
					}
					continue
				}
				w := won{seat: seat, holdID: h.GetHoldId(), who: who, partner: partner, beforeReturn: !returning.Load()}
				mu.Lock()
				if prev, dup := owner[seat]; dup {
					t.Errorf("seat %s sold twice: %s and %s", seat, prev.who, who)
				}
				owner[seat] = w
				mu.Unlock()
				return // one seat each: the crowd outnumbers the seats
			}
		}()
	}
	wg.Wait()
	close(stop)
	require.Equal(t, 1, <-returned, "the allocation returns once, whichever worker does it")

	before, after := 0, 0
	for _, w := range owner {
		inA := w.seat[0] == 'A'
		if w.beforeReturn {
			before++
			require.False(t, !w.partner && inA, "the public held allocated seat %s before the return", w.seat)
			require.False(t, w.partner && !inA, "the partner held general-sale seat %s before the return", w.seat)
		} else {
			after++
		}
	}
	t.Logf("%d seats held before the return began, %d during or after; %d attempts", before, after, attempts.Load())

	// 0 leaked: nothing is still ring-fenced, and every seat nobody holds
	// is free for anyone.
	pool, err := a.env.App.Router.ForShow(ctx, showID)
	require.NoError(t, err)
	var fenced int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM seats WHERE show_id = $1 AND allocation_id IS NOT NULL`, showID).Scan(&fenced))
	require.Zero(t, fenced)
	for i, seat := range all {
		if _, held := owner[seat]; held {
			continue
		}
		_, err := withToken(a.env, a.env.Token(t, fmt.Sprintf("late-%d", i), auth.RoleUser)).hold(showID, seat)
		require.NoError(t, err, "seat %s is neither held nor free", seat)
	}
	var held int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM seats WHERE show_id = $1 AND status = 'held'`, showID).Scan(&held))
	require.Equal(t, len(all), held)
	assertNoDoubleHolds(t, a.env, showID)
}

// TestGAAllocationRaceWithReturn is the race of TestAllocationRaceWithReturn
// on a 40-place general-admission area with a quota of 10 for partner 7:
// no place is sold twice (the buckets' counters and the holds add up to 40
// exactly), before the return the partner's holds took only from its quota
// and the public's never did, and afterwards every place nobody holds can
// be held by anyone.
func TestGAAllocationRaceWithReturn(t *testing.T) {
	req := seatedShow("ga race", 1, 1)
	req.Sections = nil
	req.GaAreas = []*catalogv1.GaArea{{Name: "Field", Capacity: 40, PriceMinor: 10000, Buckets: 4}}
	a := newAllocationEnv(t, apptest.Options{Shards: 1, MaxConns: 12}, req)
	ctx := context.Background()
	showID := a.show.GetShowId()
	returnAt := a.clk.Now().Add(time.Minute)
	alloc := a.allocate(t, &partnerv1.AllocateSeatsRequest{PartnerId: 7, Quantity: proto.Int32(10), ReturnAt: timestamppb.New(returnAt)})
	require.Equal(t, "Field", alloc.GetGaArea())
	pool, err := a.env.App.Router.ForShow(ctx, showID)
	require.NoError(t, err)
	var quota int
	require.NoError(t, pool.QueryRow(ctx, `SELECT bucket FROM ga_buckets WHERE allocation_id = $1`, alloc.GetAllocationId()).Scan(&quota))

	type won struct {
		holdID       string
		partner      bool
		n            int32
		beforeReturn bool
	}
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		holds     []won
		attempts  atomic.Int64
		returning atomic.Bool
		stop      = make(chan struct{})
	)
	returned := raceReturn(t, a, &attempts, 64, returnAt, &returning, stop)
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			partner := i < 8
			c := withToken(a.env, a.env.Token(t, fmt.Sprintf("fan-%d", i), auth.RoleUser))
			if partner {
				c = a.partner(t, fmt.Sprintf("agent-%d", i), 7)
			}
			for range 40 {
				n := int32(1 + rand.IntN(2))
				attempts.Add(1)
				h, err := c.holdGA(showID, n)
				if err != nil {
					if su := unavailable(t, err); su.GetRemaining() >= n {
						t.Errorf("refused %d places with %d remaining", n, su.GetRemaining())
					}
					continue
				}
				mu.Lock()
				holds = append(holds, won{h.GetHoldId(), partner, n, !returning.Load()})
				mu.Unlock()
				return
			}
		}()
	}
	wg.Wait()
	close(stop)
	require.Equal(t, 1, <-returned)

	sold := 0
	for _, h := range holds {
		sold += int(h.n)
		rows, err := pool.Query(ctx, `SELECT bucket FROM hold_ga_takes WHERE hold_id = $1`, h.holdID)
		require.NoError(t, err)
		buckets, err := pgx.CollectRows(rows, pgx.RowTo[int])
		require.NoError(t, err)
		for _, b := range buckets {
			if h.beforeReturn {
				require.Equal(t, h.partner, b == quota, "hold %s (partner %v) took from bucket %d before the return; the quota is %d",
					h.holdID, h.partner, b, quota)
			}
		}
	}
	// 0 oversold, 0 leaked: what is held and what is left add up to the
	// area, and nothing is ring-fenced any more.
	var capacity, remaining, live, fenced int
	require.NoError(t, pool.QueryRow(ctx, `
		SELECT (SELECT sum(capacity) FROM ga_buckets WHERE show_id = $1), (SELECT sum(remaining) FROM ga_buckets WHERE show_id = $1),
		       (SELECT coalesce(sum(quantity), 0) FROM holds WHERE show_id = $1 AND status = 'active'),
		       (SELECT count(*) FROM ga_buckets WHERE show_id = $1 AND allocation_id IS NOT NULL)`, showID).
		Scan(&capacity, &remaining, &live, &fenced))
	require.Equal(t, 40, capacity)
	require.Equal(t, sold, live)
	require.Equal(t, 40, remaining+live)
	require.Zero(t, fenced)
	t.Logf("%d places held by %d holds; %d attempts", sold, len(holds), attempts.Load())
	// Whatever is left is anyone's.
	for i := 0; remaining > 0; i++ {
		n := min(remaining, 10)
		_, err := withToken(a.env, a.env.Token(t, fmt.Sprintf("late-%d", i), auth.RoleUser)).holdGA(showID, int32(n))
		require.NoError(t, err)
		remaining -= n
	}
}

// TestAllocationRacesPublicHolds: the operator allocates seats while 24
// public buyers grab seats of the same rows. An allocation takes all its
// seats or none, and a seat is never both ring-fenced and in a public hold.
func TestAllocationRacesPublicHolds(t *testing.T) {
	a := newAllocationEnv(t, apptest.Options{Shards: 1, MaxConns: 12}, seatedShow("allocation race", 4, 10)) // A1…D10
	ctx := context.Background()
	showID := a.show.GetShowId()
	rows := []string{"A", "B", "C", "D"}
	var (
		wg               sync.WaitGroup
		allocated, tried atomic.Int64
	)
	for i := range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := withToken(a.env, a.env.Token(t, fmt.Sprintf("buyer-%d", i), auth.RoleUser))
			for range 3 {
				seat := fmt.Sprintf("%s%d", rows[rand.IntN(4)], 1+rand.IntN(10))
				if _, err := c.hold(showID, seat); err != nil {
					refusedSeat(t, err) // taken, or allocated meanwhile
				}
			}
		}()
	}
	for i := range 8 { // the operator tries pairs of seats, as allocations do
		wg.Add(1)
		go func() {
			defer wg.Done()
			row := rows[i%4]
			seats := []string{fmt.Sprintf("%s%d", row, 1+i/4), fmt.Sprintf("%s%d", row, 6+i/4)}
			tried.Add(1)
			_, err := a.operator.alloc.AllocateSeats(ctx, connect.NewRequest(&partnerv1.AllocateSeatsRequest{
				ShowId: showID, PartnerId: int64(1 + i), Seats: seats, ReturnAt: timestamppb.New(a.clk.Now().Add(time.Hour))}))
			if err != nil {
				if code, reason := reasonOf(t, err); code != connect.CodeFailedPrecondition || reason != "SEATS_NOT_ALLOCATABLE" {
					t.Errorf("allocation of %v: %v", seats, err)
				}
				return
			}
			allocated.Add(1)
		}()
	}
	wg.Wait()
	pool, err := a.env.App.Router.ForShow(ctx, showID)
	require.NoError(t, err)
	var both, partial, fenced int
	require.NoError(t, pool.QueryRow(ctx, `
		SELECT (SELECT count(*) FROM seats WHERE show_id = $1 AND allocation_id IS NOT NULL AND status <> 'available'),
		       (SELECT count(*) FROM (SELECT a.allocation_id FROM allocations a LEFT JOIN seats s ON s.allocation_id = a.allocation_id
		                              WHERE a.show_id = $1 GROUP BY a.allocation_id HAVING count(s.seat) <> 2) x),
		       (SELECT count(*) FROM seats WHERE show_id = $1 AND allocation_id IS NOT NULL)`, showID).Scan(&both, &partial, &fenced))
	require.Zero(t, both, "a ring-fenced seat is in a public hold")
	require.Zero(t, partial, "an allocation took some of its seats")
	require.EqualValues(t, 2*allocated.Load(), fenced)
	assertNoDoubleHolds(t, a.env, showID)
	t.Logf("%d of %d allocations succeeded", allocated.Load(), tried.Load())
}
