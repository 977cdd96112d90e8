package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/internal/testkit/redistest"
	"github.com/seatghor/seatghor/projections"
	"github.com/seatghor/seatghor/projections/mytickets"
	"github.com/seatghor/seatghor/projections/seatmap"
	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/payment"
	"github.com/seatghor/seatghor/server/ticket"
)

// TestRebuildUnderWriteLoadLosesNothing (decision 0090): `seatghor rebuild`
// runs again and again while buyers hold, release, order and pay, and a
// consumer (another process's worth: its own connections, a fast poll)
// keeps the seat map and "my tickets" going. Once the writes stop and the
// consumer has caught up, both read models equal the databases: every
// confirmed order's tickets are in "my tickets", and every show's Redis
// availability is the shard's, version for version.
func TestRebuildUnderWriteLoadLosesNothing(t *testing.T) {
	ctx := context.Background()
	r := redistest.New(t)
	env := apptest.New(t, apptest.Options{Shards: 2, Tickets: true, RedisURL: r.URL, RedisPrefix: r.Prefix})
	a := env.App
	shardURLs := make([]string, 0, len(a.Router.Shards()))
	for _, s := range a.Router.Shards() {
		shardURLs = append(shardURLs, s.Config().ConnString())
	}
	t.Setenv("SEATGHOR_CATALOG_URL", a.Router.Catalog().Config().ConnString())
	t.Setenv("SEATGHOR_SHARD_URLS", strings.Join(shardURLs, ","))
	t.Setenv("SEATGHOR_READ_URL", a.Read.Config().ConnString())
	t.Setenv("SEATGHOR_REDIS_URL", r.URL)
	t.Setenv("SEATGHOR_REDIS_PREFIX", r.Prefix)
	t.Setenv("SEATGHOR_GATEWAY_URL", "http://127.0.0.1:1") // rebuild never pays
	t.Setenv("SEATGHOR_WEBHOOK_SECRETS", "rebuild-test-secret")

	var shows []int64
	var rows []string // A…T: 400 seats a show, plenty for the whole test
	for i := range 20 {
		rows = append(rows, string(rune('A'+i)))
	}
	for i := range 4 {
		s, err := a.Catalog.CreateShow(ctx, "admin", catalog.NewShow{Admin: true, Show: catalog.Show{
			Kind: catalogv1.ShowKind_SHOW_KIND_CONCERT, Title: fmt.Sprint("Rebuild ", i), Venue: "Hall",
			StartsAt: time.Now().Add(30 * 24 * time.Hour), Currency: "BDT",
			Sections: []catalog.Section{{Name: "Main", Rows: rows, SeatsPerRow: 20, PriceMinor: 85000}},
		}})
		require.NoError(t, err)
		shows = append(shows, s.ID)
	}

	// A show booked only before the rebuilds: no later event recomputes
	// it, so its seat map must come back from the replay itself.
	quiet := shows[0]
	for _, seat := range []string{"A1", "A2", "B1"} {
		h, err := a.Booking.CreateHold(ctx, "early", booking.HoldRequest{ShowID: quiet, Seats: []string{seat}})
		require.NoError(t, err)
		if seat == "A2" {
			_, err = a.Booking.ReleaseHold(ctx, "early", h.ID)
			require.NoError(t, err)
		}
	}
	// The seat maps of many other shows (past ones): a large model takes a
	// while to clear, as in production.
	pipe := a.Redis.Pipeline()
	for i := range 50_000 {
		pipe.Set(ctx, fmt.Sprintf("%sseatmap:{%d}:avail", r.Prefix, 1_000_000+i), "x", 0)
	}
	_, err := pipe.Exec(ctx)
	require.NoError(t, err)

	// The consumer of the running platform, in its own goroutine.
	log := slog.New(slog.DiscardHandler)
	store := seatmap.NewStore(a.Redis, r.Prefix, 0)
	sources := []projections.Source{{Name: a.Router.Catalog().Name, Pool: a.Router.Catalog().Pool}}
	for _, s := range a.Router.Shards() {
		sources = append(sources, projections.Source{Name: s.Name, Pool: s.Pool})
	}
	consumer, err := projections.NewConsumer(sources, []projections.Projector{
		seatmap.NewProjector(store, a.Booking, log),
		mytickets.NewProjector(a.MyTickets, a.Catalog, a.CheckIn.Codes()),
	}, projections.Config{Poll: time.Millisecond, Batch: 20, MaxBackoff: 50 * time.Millisecond, Log: log})
	require.NoError(t, err)
	cctx, stopConsumer := context.WithCancel(ctx)
	consumed := make(chan struct{})
	go func() { consumer.Run(cctx); close(consumed) }()
	t.Cleanup(func() { stopConsumer(); <-consumed })

	// Buyers: hold a random seat; give a third back, order and pay the rest.
	var (
		mu        sync.Mutex
		users     []string
		confirmed atomic.Int64
		wg        sync.WaitGroup
	)
	wctx, stopWriters := context.WithCancel(ctx)
	for w := range 6 {
		wg.Go(func() {
			for i := 0; wctx.Err() == nil; i++ {
				user := fmt.Sprintf("buyer-%d-%d", w, i)
				seat := fmt.Sprintf("%s%d", rows[rand.IntN(len(rows))], 1+rand.IntN(20))
				h, err := a.Booking.CreateHold(ctx, user, booking.HoldRequest{ShowID: shows[1+rand.IntN(len(shows)-1)], Seats: []string{seat}})
				if err != nil {
					continue // taken
				}
				if i%3 == 0 {
					if _, err := a.Booking.ReleaseHold(ctx, user, h.ID); err != nil {
						t.Error(err)
					}
					continue
				}
				o, err := a.Booking.CreateOrder(ctx, user, h.ID)
				if err != nil {
					t.Error(err)
					continue
				}
				mu.Lock()
				users = append(users, user)
				mu.Unlock()
				p, err := a.Payments.StartPayment(ctx, user, payment.StartRequest{OrderID: o.ID, Method: "card", Token: "tok_success"})
				if err != nil {
					t.Error(err)
					continue
				}
				if p.Status == payment.StatusSucceeded {
					confirmed.Add(1)
				}
			}
		})
	}

	// `seatghor rebuild`, the command's own code path, while they buy.
	var out bytes.Buffer
	for i := range 8 {
		before := confirmed.Load()
		waitUntil(t, "more bookings", func() bool { return confirmed.Load() >= before+3 })
		name := mytickets.Name
		if i%4 == 3 {
			name = seatmap.Name
		}
		require.NoError(t, run(ctx, []string{"rebuild", name}, &out, &out), out.String())
	}
	stopWriters()
	wg.Wait()
	t.Logf("%d orders confirmed, %d ordered", confirmed.Load(), len(users))

	// Quiescence: every source's outbox is behind both checkpoints.
	waitUntil(t, "the consumer to catch up", func() bool {
		for _, s := range sources {
			var n int
			require.NoError(t, s.Pool.QueryRow(ctx, `
				SELECT count(*) FROM projection_checkpoints c
				WHERE c.projector = ANY($1) AND NOT EXISTS (SELECT FROM outbox o WHERE (o.xid, o.id) > (c.xid, c.id))`,
				[]string{seatmap.Name, mytickets.Name}).Scan(&n))
			if n != 2 {
				return false
			}
		}
		return true
	})

	// My tickets equals the confirmed orders, ticket for ticket.
	var want, got []string
	for _, u := range users {
		orders, next, err := a.Booking.ListMyOrders(ctx, u, 100, "")
		require.NoError(t, err)
		require.Empty(t, next)
		for _, o := range orders {
			if o.Status == booking.OrderConfirmed {
				for _, l := range o.Lines {
					want = append(want, o.ID+" "+l.Seat)
				}
			}
		}
		views, next, err := a.MyTickets.ListTickets(ctx, ticket.Holder{UserID: u}, ticket.ListFilter{Now: time.Now(), PageSize: 100})
		require.NoError(t, err)
		require.Empty(t, next)
		for _, v := range views {
			require.Equal(t, ticket.StatusValid, v.Status, v.ID)
			got = append(got, v.OrderID+" "+v.Seat)
		}
	}
	require.NotEmpty(t, want)
	var missing, extra []string
	for _, w := range want {
		if !slices.Contains(got, w) {
			missing = append(missing, w)
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			extra = append(extra, g)
		}
	}
	require.Empty(t, missing, "%d of %d confirmed tickets missing from my tickets", len(missing), len(want))
	require.Empty(t, extra, "tickets of orders not confirmed")
	require.Len(t, got, len(want), "no ticket twice")

	// The seat map equals the shards.
	for _, id := range shows {
		m, err := a.Booking.SeatMap(ctx, id)
		require.NoError(t, err)
		avail, ok, err := store.Availability(ctx, id)
		require.NoError(t, err)
		require.True(t, ok, "show %d is in Redis", id)
		require.Equal(t, m.Version, avail.Version, "show %d", id)
		require.Equal(t, m.States, avail.States, "show %d", id)
	}
}

// waitUntil polls cond until it holds; generous, as the xid horizon is
// cluster-wide and other tests' transactions can hold delivery back.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}
