package seatmap_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	paymentv1 "github.com/seatghor/seatghor/gen/seatghor/payment/v1"
	seatmapv1 "github.com/seatghor/seatghor/gen/seatghor/seatmap/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/internal/testkit/redistest"
	"github.com/seatghor/seatghor/projections/seatmap"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/booking"
)

// TestRedisClusterPrimaryFailover (decision 0200): on a Redis Cluster of 3
// primaries with a replica each, holds, payments and seat-map reads run
// through the API while the primary holding one show's keys fails over —
// planned (CLUSTER FAILOVER) and by dying (killed; its replica is elected).
// Holds never stop (they are the shard's), seat-map reads keep answering
// (from the shard during the blip) and come from Redis again afterwards;
// every paid booking is in PostgreSQL; the Redis seat maps converge to the
// shards, and a rebuild (which scans every primary) converges too.
func TestRedisClusterPrimaryFailover(t *testing.T) {
	for _, tc := range []struct {
		name string
		fail func(*redistest.Cluster, testing.TB, string) string
	}{
		{"planned", (*redistest.Cluster).Failover},
		{"primary killed", (*redistest.Cluster).KillPrimaryOf},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cluster := redistest.StartCluster(t)
			r := cluster.Server(t)
			env := apptest.New(t, apptest.Options{Shards: 2, RedisURL: r.URL, RedisPrefix: r.Prefix, Projectors: true})
			ctx := context.Background()
			var shows []int64
			for i := range 3 {
				shows = append(shows, createShow(t, env, fmt.Sprint("cluster ", i), 4, 10, 0))
			}
			seats := make([]string, 0, 40)
			for _, row := range []string{"A", "B", "C", "D"} {
				for n := 1; n <= 10; n++ {
					seats = append(seats, fmt.Sprint(row, n))
				}
			}

			var (
				failedOver            atomic.Bool
				held, holdsAfter      atomic.Int64
				readsAfter, confirmed atomic.Int64
				stop                  = make(chan struct{})
				wg                    sync.WaitGroup
			)
			for u := range 6 {
				c := as(t, env, fmt.Sprint("buyer", u), auth.RoleUser)
				wg.Go(func() {
					for i := 0; ; i++ {
						select {
						case <-stop:
							return
						default:
						}
						show := shows[(u+i)%len(shows)]
						resp, err := c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{
							ShowId: show, Seats: []string{seats[randN(len(seats))]}}))
						if err != nil {
							continue // taken, or over the account's limit
						}
						held.Add(1)
						if failedOver.Load() {
							holdsAfter.Add(1)
						}
						// A few are paid for; the rest go back, so seats stay
						// free to hold throughout.
						if i%4 != 0 || confirmed.Load() >= 24 {
							if _, err := c.holds.ReleaseHold(ctx, connect.NewRequest(&bookingv1.ReleaseHoldRequest{
								HoldId: resp.Msg.GetHold().GetHoldId()})); err != nil {
								t.Error(err)
							}
							continue
						}
						o, err := c.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: resp.Msg.GetHold().GetHoldId()}))
						if err != nil {
							t.Error(err)
							continue
						}
						p, err := c.pay.StartPayment(ctx, connect.NewRequest(&paymentv1.StartPaymentRequest{
							OrderId: o.Msg.GetOrder().GetOrderId(), Sandbox: &paymentv1.SandboxPayment{Token: "tok_success"}}))
						if err != nil {
							t.Error(err)
							continue
						}
						if p.Msg.GetPayment().GetStatus() == paymentv1.PaymentState_PAYMENT_STATE_SUCCEEDED {
							confirmed.Add(1)
						}
					}
				})
			}
			for range 2 {
				c := as(t, env, "reader", auth.RoleUser)
				wg.Go(func() {
					for i := 0; ; i++ {
						select {
						case <-stop:
							return
						default:
						}
						_, err := c.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: shows[i%len(shows)]}))
						if err != nil {
							t.Errorf("GetSeatMap: %v", err)
						} else if failedOver.Load() {
							readsAfter.Add(1)
						}
					}
				})
			}
			waitFor := func(what string, cond func() bool) {
				t.Helper()
				for deadline := time.Now().Add(60 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
					if time.Now().After(deadline) {
						close(stop)
						wg.Wait()
						t.Fatalf("waited a minute for %s", what)
					}
				}
			}
			waitFor("holds before the failover", func() bool { return held.Load() >= 30 })
			key := r.Prefix + "seatmap:{" + fmt.Sprint(shows[0]) + "}:avail"
			old := cluster.PrimaryOf(t, key)
			began := time.Now()
			primary := tc.fail(cluster, t, key)
			t.Logf("%s: primary %s → %s in %v", tc.name, old, primary, time.Since(began).Round(time.Millisecond))
			failedOver.Store(true)
			waitFor("holds and reads after the failover", func() bool { return holdsAfter.Load() >= 30 && readsAfter.Load() >= 30 })
			close(stop)
			wg.Wait()
			t.Logf("holds %d (%d after), confirmed %d, reads after %d", held.Load(), holdsAfter.Load(), confirmed.Load(), readsAfter.Load())
			require.Positive(t, confirmed.Load())

			// Nothing paid is lost: the shards have every booked seat.
			var booked int64
			for _, id := range shows {
				m, err := env.App.Booking.SeatMap(ctx, id)
				require.NoError(t, err)
				for i := range m.SeatCount {
					if m.States[i/4]>>(2*(i%4))&3 == booking.SeatBooked {
						booked++
					}
				}
			}
			require.Equal(t, confirmed.Load(), booked, "every paid booking is in PostgreSQL")

			store := seatmap.NewStore(r.Client, r.Prefix, 0)
			requireConverged(t, env, store, shows)
			require.Equal(t, primary, cluster.PrimaryOf(t, key))
			// Reads come from the cluster again once the reader stops
			// skipping Redis after its last failure (a second).
			c := as(t, env, "reader", auth.RoleUser)
			for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
				cached := metric(t, env, "seatghor_seatmap_reads_total", "cache")
				for _, id := range shows {
					resp, err := c.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: id}))
					require.NoError(t, err)
					want, err := env.App.Booking.SeatMap(ctx, id)
					require.NoError(t, err)
					require.Equal(t, want.States, resp.Msg.GetAvailability())
				}
				if metric(t, env, "seatghor_seatmap_reads_total", "cache")-cached == float64(len(shows)) {
					break
				}
				require.True(t, time.Now().Before(deadline), "seat maps are served from the cluster again")
			}

			// seatghor rebuild seatmap on the cluster: drop on every primary, replay.
			require.NoError(t, env.App.Projections.Rebuild(ctx, seatmap.Name))
			requireConverged(t, env, store, shows)
		})
	}
}
