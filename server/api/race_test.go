package api_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	seatmapv1 "github.com/seatghor/seatghor/gen/seatghor/seatmap/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
)

// freeSeats reads the seat map and returns the free seat ids.
func freeSeats(m *seatmapv1.GetSeatMapResponse) []string {
	var free []string
	i := 0
	for _, s := range m.GetSections() {
		for _, r := range s.GetRows() {
			for _, seat := range r.GetSeats() {
				if (m.GetAvailability()[i/4]>>(2*(i%4)))&3 == 0 {
					free = append(free, seat)
				}
				i++
			}
		}
	}
	return free
}

// TestSeedRace is the seed's race over the real API: 300 buyers,
// 100 seats; each reads the seat map, picks a free seat and retries up to 3
// times on conflict. Conditional writes must sell exactly 100, none twice.
func TestSeedRace(t *testing.T) {
	env := apptest.New(t, apptest.Options{})
	show := createShow(t, env, seatedShow("seed race", 10, 10))
	ctx := context.Background()

	var (
		wg                     sync.WaitGroup
		held, gaveUp, failures atomic.Int64
		mu                     sync.Mutex
		owner                  = map[string]string{}
	)
	for b := range 300 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			user := fmt.Sprintf("buyer-%d", b)
			c := as(t, env, user, auth.RoleUser)
			for range 3 {
				m, err := c.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: show.GetShowId()}))
				if err != nil {
					t.Errorf("seat map: %v", err)
					return
				}
				free := freeSeats(m.Msg)
				if len(free) == 0 {
					break
				}
				seat := free[rand.IntN(len(free))]
				resp, err := c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{
					ShowId: show.GetShowId(), Seats: []string{seat}}))
				if err == nil {
					held.Add(1)
					mu.Lock()
					if prev, dup := owner[seat]; dup {
						t.Errorf("seat %s sold twice: %s and %s", seat, prev, user)
					}
					owner[seat] = resp.Msg.GetHold().GetHoldId()
					mu.Unlock()
					return
				}
				if su := unavailable(t, err); len(su.GetSeats()) != 1 || su.GetSeats()[0] != seat {
					t.Errorf("conflict lists %v, want [%s]", su.GetSeats(), seat)
				}
				failures.Add(1)
			}
			gaveUp.Add(1)
		}()
	}
	wg.Wait()
	require.EqualValues(t, 100, held.Load(), "seats held")
	require.Len(t, owner, 100)
	require.EqualValues(t, 200, gaveUp.Load(), "buyers without a seat")
	assertNoDoubleHolds(t, env, show.GetShowId())
	t.Logf("100 held, %d failed writes, %d gave up", failures.Load(), gaveUp.Load())
}

// TestLargeRace: 2,000 buyers ask for 1–4 adjacent seats each on a
// 1,000-seat show. No seat may be in two holds, no hold may be partial, and
// every refusal is ABORTED with the seats that were taken.
func TestLargeRace(t *testing.T) {
	if testing.Short() {
		t.Skip("large race skipped in -short mode")
	}
	env := apptest.New(t, apptest.Options{MaxConns: 12})
	show := createShow(t, env, seatedShow("large race", 20, 50)) // rows A..T × 50
	ctx := context.Background()
	rows := rowsAZ(20)

	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		owner   = map[string]string{}
		refused atomic.Int64
		sem     = make(chan struct{}, 200) // 200 in flight at a time
	)
	for b := range 2000 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			n := 1 + rand.IntN(4)
			row := rows[rand.IntN(len(rows))]
			first := 1 + rand.IntN(50-n+1)
			var seats []string
			for i := range n {
				seats = append(seats, fmt.Sprintf("%s%d", row, first+i))
			}
			c := as(t, env, fmt.Sprintf("buyer-%d", b), auth.RoleUser)
			resp, err := c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{
				ShowId: show.GetShowId(), Seats: seats}))
			if err != nil {
				su := unavailable(t, err)
				if len(su.GetSeats()) == 0 {
					t.Errorf("refusal of %v lists no seats", seats)
				}
				for _, s := range su.GetSeats() {
					if !contains(seats, s) {
						t.Errorf("refusal of %v lists seat %s that was not asked for", seats, s)
					}
				}
				refused.Add(1)
				return
			}
			got := resp.Msg.GetHold().GetSeats()
			if len(got) != n {
				t.Errorf("partial hold: asked %v, got %v", seats, got)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, s := range got {
				if prev, dup := owner[s]; dup {
					t.Errorf("seat %s in two holds: %s and %s", s, prev, resp.Msg.GetHold().GetHoldId())
				}
				owner[s] = resp.Msg.GetHold().GetHoldId()
			}
		}()
	}
	wg.Wait()
	require.Positive(t, refused.Load(), "a crowd this size must collide")
	assertNoDoubleHolds(t, env, show.GetShowId())
	// The database agrees with what the buyers were told.
	pool, err := env.App.Router.ForShow(ctx, show.GetShowId())
	require.NoError(t, err)
	var heldInDB int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM seats WHERE show_id = $1 AND status = 'held'`,
		show.GetShowId()).Scan(&heldInDB))
	require.Equal(t, len(owner), heldInDB)
	t.Logf("%d seats held, %d requests refused", len(owner), refused.Load())
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// assertNoDoubleHolds checks in the shard that every held seat belongs to
// exactly one live hold that lists it.
func assertNoDoubleHolds(t *testing.T, env *apptest.Env, showID int64) {
	t.Helper()
	ctx := context.Background()
	pool, err := env.App.Router.ForShow(ctx, showID)
	require.NoError(t, err)
	var bad int
	require.NoError(t, pool.QueryRow(ctx, `
		SELECT count(*) FROM (
			SELECT s.seat FROM seats s
			JOIN holds h ON h.show_id = s.show_id AND s.seat = ANY(h.seats) AND h.status = 'active'
			WHERE s.show_id = $1
			GROUP BY s.seat HAVING count(*) > 1 OR bool_or(s.hold_id <> h.hold_id)
		) x`, showID).Scan(&bad))
	require.Zero(t, bad, "seats claimed by more than one live hold")
}
