package shardmove_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	"github.com/seatghor/seatghor/gen/seatghor/booking/v1/bookingv1connect"
	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/gen/seatghor/catalog/v1/catalogv1connect"
	paymentv1 "github.com/seatghor/seatghor/gen/seatghor/payment/v1"
	"github.com/seatghor/seatghor/gen/seatghor/payment/v1/paymentv1connect"
	seatmapv1 "github.com/seatghor/seatghor/gen/seatghor/seatmap/v1"
	"github.com/seatghor/seatghor/gen/seatghor/seatmap/v1/seatmapv1connect"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/internal/testkit/pgtest"
	"github.com/seatghor/seatghor/internal/testkit/redistest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/payment"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/shard"
	"github.com/seatghor/seatghor/server/shardmove"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Cleanup()
	redistest.Cleanup()
	os.Exit(code)
}

// clients are one caller's API clients; every write carries the key the
// caller gives it, so a retry is the same request.
type clients struct {
	catalog catalogv1connect.CatalogServiceClient
	holds   bookingv1connect.HoldServiceClient
	orders  bookingv1connect.OrderServiceClient
	pay     paymentv1connect.PaymentServiceClient
	seatmap seatmapv1connect.SeatMapServiceClient
}

func as(tb testing.TB, env *apptest.Env, sub string, role auth.Role) clients {
	token := env.Token(tb, sub, role)
	opt := connect.WithInterceptors(connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			req.Header().Set("Authorization", "Bearer "+token)
			if req.Header().Get("Idempotency-Key") == "" {
				req.Header().Set("Idempotency-Key", newKey())
			}
			return next(ctx, req)
		}
	}))
	return clients{
		catalog: catalogv1connect.NewCatalogServiceClient(env.HTTP, env.URL, opt),
		holds:   bookingv1connect.NewHoldServiceClient(env.HTTP, env.URL, opt),
		orders:  bookingv1connect.NewOrderServiceClient(env.HTTP, env.URL, opt),
		pay:     paymentv1connect.NewPaymentServiceClient(env.HTTP, env.URL, opt),
		seatmap: seatmapv1connect.NewSeatMapServiceClient(env.HTTP, env.URL, opt),
	}
}

func newKey() string {
	return fmt.Sprintf("%016x%016x", rand.Uint64(), rand.Uint64())
}

// call sends msg under key, again while the answer is unavailable (the
// show moving: SHOW_MOVING), as a client following the retry advice does.
func call[Req, Res any](ctx context.Context, f func(context.Context, *connect.Request[Req]) (*connect.Response[Res], error), msg *Req, key string, retries *atomic.Int64) (*Res, error) {
	for {
		req := connect.NewRequest(msg)
		req.Header().Set("Idempotency-Key", key)
		resp, err := f(ctx, req)
		if connect.CodeOf(err) == connect.CodeUnavailable && ctx.Err() == nil {
			retries.Add(1)
			time.Sleep(20 * time.Millisecond) // clients back off from 250 ms (decision 0140); shorter here to press on the freeze
			continue
		}
		if err != nil {
			return nil, err
		}
		return resp.Msg, nil
	}
}

func seatedShow(rows, perRow int, shard *int32) *catalogv1.CreateShowRequest {
	var names []string
	for i := range rows {
		names = append(names, string(rune('A'+i)))
	}
	return &catalogv1.CreateShowRequest{
		Kind: catalogv1.ShowKind_SHOW_KIND_CONCERT, Title: "Moving show", Venue: "Test Hall",
		StartsAt: timestamppb.New(time.Now().Add(30 * 24 * time.Hour)), Currency: "BDT",
		Sections: []*catalogv1.Section{{Name: "Main", Rows: names, SeatsPerRow: int32(perRow), PriceMinor: 85000}},
		HoldTtl:  durationpb.New(10 * time.Minute), MaxSeatsPerAccount: 100, MaxSeatsPerHold: 4,
		Shard: shard,
	}
}

// sale is what the buyers were told succeeded.
type sale struct {
	mu       sync.Mutex
	holds    map[string][]string // hold id → seats
	orders   map[string]string   // order id → hold id
	payments map[string]string   // payment id → order id
}

// TestMoveShowUnderHoldAndPayLoad moves a show from shard 0 to shard 1
// while buyers hold, order and pay through the API: every
// hold, order and payment a buyer was told of is on the new shard exactly
// once, every payment is charged once, no seat is sold twice, the old shard
// keeps nothing of the show (journals included), the show's events go on in
// order for every projector (the Redis seat map ends equal to the new shard,
// at its newest event's version; "my tickets" has every sold seat once), and
// the freeze is reported.
func TestMoveShowUnderHoldAndPayLoad(t *testing.T) {
	moveUnderLoad(t, apptest.New(t, loadOptions(t, 2, nil)))
}

// loadOptions is the platform of the moves under load: Redis's seat map,
// the projectors, "my tickets" and the payment jobs, on fresh shards or the
// given ones. A capture the freeze refuses to record leaves its payment
// pending: the payment jobs settle it, as in production.
func loadOptions(t *testing.T, shards int, shardURLs []string) apptest.Options {
	redis := redistest.New(t)
	return apptest.Options{Shards: shards, ShardURLs: shardURLs, RedisURL: redis.URL, RedisPrefix: redis.Prefix, Projectors: true, MaxConns: 12, Tickets: true,
		Payments:       payment.Config{RecoverAfter: 300 * time.Millisecond},
		PaymentWorkers: &payment.WorkerConfig{Poll: 50 * time.Millisecond, RecoverEvery: 200 * time.Millisecond, ReconcileEvery: -1}}
}

// moveUnderLoad moves a show from env's shard 0 to its shard 1 while
// buyers hold, order and pay, and checks what TestMoveShowUnderHoldAndPayLoad
// says.
func moveUnderLoad(t *testing.T, env *apptest.Env) {
	ctx := context.Background()
	admin := as(t, env, "admin", auth.RoleAdmin)
	created, err := admin.catalog.CreateShow(ctx, connect.NewRequest(seatedShow(10, 20, proto.Int32(0))))
	require.NoError(t, err)
	showID := created.Msg.GetShow().GetShowId()
	require.EqualValues(t, 0, created.Msg.GetShow().GetShard())

	var seats []string
	for _, s := range created.Msg.GetShow().GetSections()[0].GetRows() {
		for i := range 20 {
			seats = append(seats, fmt.Sprintf("%s%d", s, i+1))
		}
	}
	got := &sale{holds: map[string][]string{}, orders: map[string]string{}, payments: map[string]string{}}
	var retries, conflicts atomic.Int64
	loadCtx, stopLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	started := make(chan struct{}, 64)
	for w := range 12 {
		c := as(t, env, fmt.Sprintf("buyer-%d", w), auth.RoleUser)
		wg.Go(func() {
			for loadCtx.Err() == nil {
				want := []string{seats[rand.IntN(len(seats))], seats[rand.IntN(len(seats))]}
				if want[0] == want[1] {
					want = want[:1]
				}
				h, err := call(loadCtx, c.holds.CreateHold, &bookingv1.CreateHoldRequest{ShowId: showID, Seats: want}, newKey(), &retries)
				if connect.CodeOf(err) == connect.CodeAborted || connect.CodeOf(err) == connect.CodeFailedPrecondition {
					conflicts.Add(1)
					continue
				}
				if loadCtx.Err() != nil {
					return
				}
				require.NoError(t, err)
				got.mu.Lock()
				got.holds[h.GetHold().GetHoldId()] = want
				got.mu.Unlock()
				o, err := call(ctx, c.orders.CreateOrder, &bookingv1.CreateOrderRequest{HoldId: h.GetHold().GetHoldId()}, newKey(), &retries)
				require.NoError(t, err)
				got.mu.Lock()
				got.orders[o.GetOrder().GetOrderId()] = h.GetHold().GetHoldId()
				got.mu.Unlock()
				p, err := call(ctx, c.pay.StartPayment, &paymentv1.StartPaymentRequest{OrderId: o.GetOrder().GetOrderId(),
					Sandbox: &paymentv1.SandboxPayment{Token: "tok_success"}}, newKey(), &retries)
				require.NoError(t, err)
				require.Contains(t, []paymentv1.PaymentState{paymentv1.PaymentState_PAYMENT_STATE_SUCCEEDED,
					paymentv1.PaymentState_PAYMENT_STATE_PENDING}, p.GetPayment().GetStatus())
				got.mu.Lock()
				got.payments[p.GetPayment().GetPaymentId()] = o.GetOrder().GetOrderId()
				got.mu.Unlock()
				select {
				case started <- struct{}{}:
				default:
				}
			}
		})
	}
	for range 10 { // some sales before the move
		<-started
	}
	rep, err := shardmove.New(loginRouter(t, env), shardmove.Options{}).Move(ctx, showID, 1)
	require.NoError(t, err)
	t.Logf("moved show %d from shard %d to %d: %d passes, %d rows copied, %d deleted; writes frozen for %s",
		showID, rep.From, rep.To, rep.Passes, rep.Copied, rep.Deleted, rep.Freeze)
	require.Positive(t, rep.Freeze)
	for range 10 { // and some after it
		<-started
	}
	stopLoad()
	wg.Wait()
	t.Logf("%d holds, %d orders, %d payments; %d answers retried, %d seat conflicts",
		len(got.holds), len(got.orders), len(got.payments), retries.Load(), conflicts.Load())

	old, moved := env.App.Router.Shards()[0], env.App.Router.Shards()[1]
	var shardOf int
	require.NoError(t, env.App.Router.Catalog().QueryRow(ctx, `SELECT shard FROM shows WHERE show_id = $1`, showID).Scan(&shardOf))
	require.Equal(t, 1, shardOf)
	for _, table := range []string{"seats", "holds", "orders", "payments", "outbox", "ledger_transactions"} {
		var n int
		require.NoError(t, old.QueryRow(ctx, `SELECT count(*) FROM `+table+` WHERE show_id = $1`, showID).Scan(&n))
		require.Zero(t, n, "the old shard keeps no %s of the show", table)
	}

	// 0 lost: everything a buyer was told of is on the new shard, once.
	count := func(sql string, args ...any) int {
		var n int
		require.NoError(t, moved.QueryRow(ctx, sql, args...).Scan(&n))
		return n
	}
	// Payments answered pending are settled by the payment jobs.
	require.Eventually(t, func() bool {
		return count(`SELECT count(*) FROM orders WHERE show_id = $1 AND status = 'confirmed'`, showID) == len(got.orders)
	}, 30*time.Second, 50*time.Millisecond, "every order a buyer paid for is confirmed")
	for id, want := range got.holds {
		var have []string
		require.NoError(t, moved.QueryRow(ctx, `SELECT seats FROM holds WHERE hold_id = $1`, id).Scan(&have), "hold %s", id)
		require.ElementsMatch(t, want, have)
	}
	for id, hold := range got.orders {
		require.Equal(t, 1, count(`SELECT count(*) FROM orders WHERE order_id = $1 AND hold_id = $2 AND status = 'confirmed'`, id, hold), "order %s", id)
	}
	for id, order := range got.payments {
		require.Equal(t, 1, count(`SELECT count(*) FROM payments WHERE payment_id = $1 AND order_id = $2`, id, order), "payment %s", id)
		require.Len(t, env.Gateway.ChargesFor(id), 1, "payment %s is charged once, retries and all", id)
	}
	// The show's journals moved with it: one booking journal per
	// confirmed order, all on the new shard, and the ledger balances.
	for id := range got.orders {
		require.Equal(t, 1, count(`SELECT count(*) FROM ledger_transactions WHERE kind = 'booking' AND reference = $1 AND show_id = $2`, id, showID), "order %s", id)
	}
	tb, err := env.App.Ledger.TrialBalance(ctx, nil, time.Time{})
	require.NoError(t, err)
	require.Zero(t, tb.SumMinor)
	require.Zero(t, tb.UnbalancedJournals)
	// 0 oversold: a booked seat belongs to exactly one confirmed order.
	require.Equal(t, count(`SELECT count(*) FROM seats WHERE show_id = $1 AND status = 'booked'`, showID),
		count(`SELECT coalesce(sum(cardinality(h.seats)), 0) FROM orders o JOIN holds h USING (hold_id) WHERE o.show_id = $1 AND o.status = 'confirmed'`, showID))
	require.Equal(t, len(got.orders), count(`SELECT count(*) FROM orders WHERE show_id = $1 AND status = 'confirmed'`, showID),
		"every confirmed order is one a buyer was told of")
	require.Zero(t, count(`SELECT count(*) FROM (SELECT event_id FROM outbox WHERE show_id = $1 GROUP BY 1 HAVING count(*) > 1) d`, showID))

	// The seat map in Redis ends equal to the new shard's seats.
	state := map[string]seatmapv1.SeatState{"available": seatmapv1.SeatState_SEAT_STATE_AVAILABLE_UNSPECIFIED,
		"held": seatmapv1.SeatState_SEAT_STATE_HELD, "booked": seatmapv1.SeatState_SEAT_STATE_BOOKED}
	want := make([]seatmapv1.SeatState, len(seats))
	rows, err := moved.Query(ctx, `SELECT status FROM seats WHERE show_id = $1 ORDER BY position`, showID)
	require.NoError(t, err)
	i := 0
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		want[i] = state[s]
		i++
	}
	require.NoError(t, rows.Err())
	require.Equal(t, len(seats), i)
	require.Eventually(t, func() bool {
		m, err := admin.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: showID}))
		if err != nil {
			return false
		}
		for i, w := range want {
			b := m.Msg.GetAvailability()[i/4] >> (2 * (i % 4)) & 3
			if seatmapv1.SeatState(b) != w {
				return false
			}
		}
		return true
	}, 20*time.Second, 50*time.Millisecond, "the seat map converges to the new shard")
	// "My tickets", another projector, ends with every sold seat once.
	read, err := pg.Open(ctx, "read", env.ReadURL, 2)
	require.NoError(t, err)
	defer read.Close()
	booked := count(`SELECT count(*) FROM seats WHERE show_id = $1 AND status = 'booked'`, showID)
	require.Eventually(t, func() bool {
		var orders, tickets int
		err := read.QueryRow(ctx, `SELECT (SELECT count(*) FROM my_ticket_orders WHERE show_id = $1 AND status = 1),
			(SELECT count(*) FROM my_tickets WHERE show_id = $1)`, showID).Scan(&orders, &tickets)
		return err == nil && orders == len(got.orders) && tickets == booked
	}, 30*time.Second, 100*time.Millisecond, "my tickets has every confirmed order and seat of the show once")
	// Its version is the newest event's xid on the new shard again (not
	// stuck at an old shard's higher one), as a conflict answer reports it.
	var newest int64
	require.NoError(t, moved.QueryRow(ctx, `SELECT max(xid)::text::bigint FROM outbox WHERE show_id = $1`, showID).Scan(&newest))
	require.Eventually(t, func() bool {
		m, err := admin.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: showID}))
		return err == nil && m.Msg.GetVersion() == newest
	}, 20*time.Second, 50*time.Millisecond, "the seat map's version is the new shard's newest event")
}

// TestNewShardJoinsByConfiguration: a platform restarted with one more
// shard in its configuration places new shows there first (least loaded),
// while the shows already placed stay where the directory says.
func TestNewShardJoinsByConfiguration(t *testing.T) {
	ctx := context.Background()
	first := apptest.New(t, apptest.Options{Shards: 2})
	admin := as(t, first, "admin", auth.RoleAdmin)
	before := map[int64]int32{}
	for range 4 {
		s, err := admin.catalog.CreateShow(ctx, connect.NewRequest(seatedShow(1, 4, nil)))
		require.NoError(t, err)
		before[s.Msg.GetShow().GetShowId()] = s.Msg.GetShow().GetShard()
	}

	grown := apptest.New(t, apptest.Options{CatalogURL: first.CatalogURL, ShardURLs: first.ShardURLs, Shards: 1})
	require.Len(t, grown.App.Router.Shards(), 3)
	admin = as(t, grown, "admin", auth.RoleAdmin)
	perShard := map[int32]int{}
	for range 3 {
		s, err := admin.catalog.CreateShow(ctx, connect.NewRequest(seatedShow(1, 4, nil)))
		require.NoError(t, err)
		perShard[s.Msg.GetShow().GetShard()]++
	}
	require.Equal(t, 2, perShard[2], "the new shard, empty, gets new shows first")
	require.Equal(t, 1, perShard[0]+perShard[1])

	holder := as(t, grown, "rumana", auth.RoleUser)
	for id, shard := range before {
		pool, err := grown.App.Router.ForShow(ctx, id)
		require.NoError(t, err)
		require.Equal(t, grown.App.Router.Shards()[shard].Name, pool.Name, "show %d stays on shard %d", id, shard)
		_, err = holder.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: id, Seats: []string{"A1"}}))
		require.NoError(t, err, "show %d still sells", id)
	}
}

// loginRouter is a router over env's databases as the login role, as
// `seatghor shard move` opens them: a move deletes the moved show's
// journals from the old shard, which the application role may not.
func loginRouter(t testing.TB, env *apptest.Env) *shard.Router {
	ctx := context.Background()
	cat, err := pg.Open(ctx, "catalog", env.CatalogURL, 4)
	require.NoError(t, err)
	t.Cleanup(cat.Close)
	var shards []*pg.Pool
	for i, url := range env.ShardURLs {
		p, err := pg.Open(ctx, fmt.Sprintf("shard-%d", i), url, 4)
		require.NoError(t, err)
		t.Cleanup(p.Close)
		shards = append(shards, p)
	}
	return shard.NewRouter(cat, shards)
}

// TestMoveFinishesAfterAMoverDied: a show left frozen by a mover that died
// before the flip refuses writes with the retryable SHOW_MOVING, and running
// the move again finishes it; two moves of one show at once are refused.
func TestMoveFinishesAfterAMoverDied(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 2})
	ctx := context.Background()
	admin := as(t, env, "admin", auth.RoleAdmin)
	created, err := admin.catalog.CreateShow(ctx, connect.NewRequest(seatedShow(1, 4, proto.Int32(0))))
	require.NoError(t, err)
	showID := created.Msg.GetShow().GetShowId()
	old := env.App.Router.Shards()[0]
	_, err = old.Exec(ctx, `UPDATE shows SET placement = 'moving' WHERE show_id = $1`, showID)
	require.NoError(t, err)

	buyer := as(t, env, "rumana", auth.RoleUser)
	_, err = buyer.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: showID, Seats: []string{"A1"}}))
	require.Equal(t, connect.CodeUnavailable, connect.CodeOf(err), "%v", err)

	router := loginRouter(t, env)
	lock, err := router.Catalog().Acquire(ctx)
	require.NoError(t, err)
	_, err = lock.Exec(ctx, `SELECT pg_advisory_lock(hashtextextended('shard move', $1))`, showID)
	require.NoError(t, err)
	_, err = shardmove.New(router, shardmove.Options{}).Move(ctx, showID, 1)
	require.ErrorIs(t, err, shardmove.ErrBusy, "another move of the show is running")
	require.NoError(t, lock.Hijack().Close(ctx), "the other mover dies: its session, and so its lock, ends")

	rep, err := shardmove.New(router, shardmove.Options{}).Move(ctx, showID, 1)
	require.NoError(t, err)
	require.Equal(t, 1, rep.To)
	require.Eventually(t, func() bool {
		_, err := buyer.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: showID, Seats: []string{"A1"}}))
		return err == nil
	}, 10*time.Second, 20*time.Millisecond, "the show sells on its new shard")
}

// TestMoveADraft (decision 0483): a draft has no rows on a shard until it
// is published, so its move only points its directory entry to the new
// shard, announced as a flip is; published there, it sells from the new
// shard and the old one never had it. Moving it to where it is is
// refused.
func TestMoveADraft(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 2})
	ctx := context.Background()
	admin := as(t, env, "admin", auth.RoleAdmin)
	req := seatedShow(1, 4, proto.Int32(0))
	req.Draft = true
	created, err := admin.catalog.CreateShow(ctx, connect.NewRequest(req))
	require.NoError(t, err)
	showID := created.Msg.GetShow().GetShowId()
	// The API's router has the draft's shard cached: the move must reach it.
	_, err = env.App.Router.ForShow(ctx, showID)
	require.NoError(t, err)

	router := loginRouter(t, env)
	rep, err := shardmove.New(router, shardmove.Options{}).Move(ctx, showID, 1)
	require.NoError(t, err)
	require.Equal(t, shardmove.Report{ShowID: showID, From: 0, To: 1}, rep, "nothing copied, nothing frozen")
	_, err = shardmove.New(router, shardmove.Options{}).Move(ctx, showID, 1)
	require.ErrorIs(t, err, shardmove.ErrSameShard)

	require.Eventually(t, func() bool {
		pool, err := env.App.Router.ForShow(ctx, showID)
		return err == nil && pool.Name == env.App.Router.Shards()[1].Name
	}, 10*time.Second, 20*time.Millisecond, "the API's router follows the announcement")
	_, err = admin.catalog.PublishShow(ctx, connect.NewRequest(&catalogv1.PublishShowRequest{ShowId: showID}))
	require.NoError(t, err)
	got, err := admin.catalog.GetShow(ctx, connect.NewRequest(&catalogv1.GetShowRequest{ShowId: showID}))
	require.NoError(t, err)
	require.EqualValues(t, 1, got.Msg.GetShow().GetShard())
	buyer := as(t, env, "rumana", auth.RoleUser)
	_, err = buyer.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: showID, Seats: []string{"A1"}}))
	require.NoError(t, err, "the published draft sells from its new shard")
	for i, pool := range env.App.Router.Shards() {
		var seats int
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM seats WHERE show_id = $1`, showID).Scan(&seats))
		require.Equal(t, map[int]int{0: 0, 1: 4}[i], seats, "seats on %s", pool.Name)
	}
}
