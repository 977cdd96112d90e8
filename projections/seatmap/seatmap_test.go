package seatmap_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"math/big"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	"github.com/seatghor/seatghor/gen/seatghor/booking/v1/bookingv1connect"
	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/gen/seatghor/catalog/v1/catalogv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/partner/v1/partnerv1connect"
	paymentv1 "github.com/seatghor/seatghor/gen/seatghor/payment/v1"
	"github.com/seatghor/seatghor/gen/seatghor/payment/v1/paymentv1connect"
	seatmapv1 "github.com/seatghor/seatghor/gen/seatghor/seatmap/v1"
	"github.com/seatghor/seatghor/gen/seatghor/seatmap/v1/seatmapv1connect"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/internal/testkit/pgtest"
	"github.com/seatghor/seatghor/internal/testkit/redistest"
	"github.com/seatghor/seatghor/projections/seatmap"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/clock"
)

func TestMain(m *testing.M) {
	// go-redis logs every failed dial; the outage tests cause them on purpose.
	redis.SetLogger(quiet{})
	code := m.Run()
	redistest.Cleanup()
	pgtest.Cleanup()
	os.Exit(code)
}

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// caller is one user's API clients; every write gets a fresh idempotency key.
type caller struct {
	holds    bookingv1connect.HoldServiceClient
	orders   bookingv1connect.OrderServiceClient
	pay      paymentv1connect.PaymentServiceClient
	catalog  catalogv1connect.CatalogServiceClient
	seatmap  seatmapv1connect.SeatMapServiceClient
	alloc    partnerv1connect.AllocationServiceClient
	partners partnerv1connect.PartnerServiceClient
}

func as(tb testing.TB, env *apptest.Env, sub string, role auth.Role) caller {
	return withToken(env, env.Token(tb, sub, role))
}

// withToken returns the API clients of the caller token names.
func withToken(env *apptest.Env, token string) caller {
	opt := connect.WithInterceptors(connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			req.Header().Set("Authorization", "Bearer "+token)
			if req.Spec().IdempotencyLevel != connect.IdempotencyNoSideEffects {
				var b [12]byte
				_, _ = rand.Read(b[:])
				req.Header().Set("Idempotency-Key", hex.EncodeToString(b[:]))
			}
			return next(ctx, req)
		}
	}))
	return caller{
		holds:    bookingv1connect.NewHoldServiceClient(env.HTTP, env.URL, opt),
		orders:   bookingv1connect.NewOrderServiceClient(env.HTTP, env.URL, opt),
		pay:      paymentv1connect.NewPaymentServiceClient(env.HTTP, env.URL, opt),
		catalog:  catalogv1connect.NewCatalogServiceClient(env.HTTP, env.URL, opt),
		seatmap:  seatmapv1connect.NewSeatMapServiceClient(env.HTTP, env.URL, opt, connect.WithHTTPGet()),
		alloc:    partnerv1connect.NewAllocationServiceClient(env.HTTP, env.URL, opt),
		partners: partnerv1connect.NewPartnerServiceClient(env.HTTP, env.URL, opt),
	}
}

// createShow makes a show of rows × perRow seats, plus a GA area when ga > 0.
func createShow(t *testing.T, env *apptest.Env, title string, rows, perRow, ga int) int64 {
	t.Helper()
	var labels []string
	for i := range rows {
		labels = append(labels, string(rune('A'+i)))
	}
	req := &catalogv1.CreateShowRequest{
		Kind: catalogv1.ShowKind_SHOW_KIND_CONCERT, Title: title, Venue: "Test Hall",
		StartsAt: timestamppb.New(time.Now().Add(30 * 24 * time.Hour)), Currency: "BDT",
		Sections: []*catalogv1.Section{{Name: "Main", Rows: labels, SeatsPerRow: int32(perRow), PriceMinor: 85000}},
		HoldTtl:  durationpb.New(10 * time.Minute), MaxSeatsPerAccount: 10, MaxSeatsPerHold: 10,
	}
	if ga > 0 {
		req.GaAreas = []*catalogv1.GaArea{{Name: "Floor", Capacity: int32(ga), PriceMinor: 50000, Buckets: 2}}
	}
	resp, err := as(t, env, "admin", auth.RoleAdmin).catalog.CreateShow(context.Background(), connect.NewRequest(req))
	require.NoError(t, err)
	return resp.Msg.GetShow().GetShowId()
}

func newEnv(t *testing.T, projectors bool, clk clock.Clock) (*apptest.Env, *redistest.Server) {
	r := redistest.New(t)
	env := apptest.New(t, apptest.Options{Shards: 2, RedisURL: r.URL, RedisPrefix: r.Prefix, Projectors: projectors, Clock: clk})
	return env, r
}

// requireConverged waits until the Redis availability of every show equals
// what the shard says, seat for seat, GA place for GA place, version for
// version.
func requireConverged(t *testing.T, env *apptest.Env, store *seatmap.Store, shows []int64) {
	t.Helper()
	ctx := context.Background()
	var last string
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		last = ""
		for _, id := range shows {
			want, err := env.App.Booking.SeatMap(ctx, id)
			require.NoError(t, err)
			got, ok, err := store.Availability(ctx, id)
			require.NoError(t, err)
			var ga []int
			for _, a := range want.GAAreas {
				ga = append(ga, a.Remaining)
			}
			switch {
			case !ok:
				last = fmt.Sprintf("show %d: no availability in Redis", id)
			case got.Version != want.Version || string(got.States) != string(want.States) || fmt.Sprint(got.GA) != fmt.Sprint(ga):
				last = fmt.Sprintf("show %d: redis v%d %x %v, shard v%d %x %v", id, got.Version, got.States, got.GA,
					want.Version, want.States, ga)
			}
			if last != "" {
				break
			}
		}
		if last == "" {
			return
		}
	}
	for _, p := range env.App.Router.Shards() {
		var cps string
		if err := p.QueryRow(ctx, `SELECT coalesce(string_agg(projector || '@' || xid::text || '/' || id, ', '), '') FROM projection_checkpoints`).Scan(&cps); err != nil {
			cps = err.Error()
		}
		var n int
		var maxXID string
		_ = p.QueryRow(ctx, `SELECT count(*), coalesce(max(xid)::text, '') FROM outbox`).Scan(&n, &maxXID)
		t.Logf("%s: checkpoints %s; outbox rows %d up to xid %s", p.Name, cps, n, maxXID)
	}
	t.Fatalf("Redis did not converge to the shards: %s", last)
}

// TestRedisEqualsShardsAfterConcurrentBurst (R-8.2, docs/DESIGN.md, "Ordering of
// read-model updates"): concurrent holds, releases and paid confirmations of
// the same seats on shows of two shards (expiries: TestExpiryReachesTheMap); after quiescence the Redis map equals the seat rows
// exactly. The same after the cache is wiped and read again, and after a
// rebuild of the projector.
func TestRedisEqualsShardsAfterConcurrentBurst(t *testing.T) {
	t.Parallel()
	env, r := newEnv(t, true, nil)
	ctx := context.Background()
	var shows []int64
	for i := range 4 {
		shows = append(shows, createShow(t, env, fmt.Sprint("burst ", i), 3, 4, 20))
	}
	seats := []string{"A1", "A2", "A3", "A4", "B1", "B2", "B3", "B4", "C1", "C2", "C3", "C4"}
	var wg sync.WaitGroup
	var held, refused, confirmed atomic.Int64
	for u := range 16 {
		c := as(t, env, fmt.Sprint("user", u), auth.RoleUser)
		wg.Go(func() {
			for i := range 12 {
				show := shows[(u+i)%len(shows)]
				if i%3 == 2 {
					if _, err := c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{
						ShowId: show, GaArea: "Floor", Quantity: new(int32(1))})); err == nil {
						held.Add(1)
					}
					continue
				}
				pick := seats[randN(len(seats))]
				resp, err := c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{pick}}))
				if err != nil {
					refused.Add(1)
					continue
				}
				held.Add(1)
				switch i % 4 {
				case 0, 2: // give half of them back at once: the seat changes twice in quick succession
					if _, err := c.holds.ReleaseHold(ctx, connect.NewRequest(&bookingv1.ReleaseHoldRequest{
						HoldId: resp.Msg.GetHold().GetHoldId()})); err != nil {
						t.Error(err)
					}
				case 1: // order and pay: held → booked
					o, err := c.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{
						HoldId: resp.Msg.GetHold().GetHoldId()}))
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
			}
		})
	}
	wg.Wait()
	t.Logf("holds %d, refused %d, confirmed %d", held.Load(), refused.Load(), confirmed.Load())
	require.Positive(t, held.Load())
	require.Positive(t, confirmed.Load())
	store := seatmap.NewStore(r.Client, r.Prefix, 0)
	requireConverged(t, env, store, shows)

	// Wipe the cache: reads fill it again from the shards.
	require.NoError(t, store.Reset(ctx))
	c := as(t, env, "reader", auth.RoleUser)
	for _, id := range shows {
		resp, err := c.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: id}))
		require.NoError(t, err)
		want, err := env.App.Booking.SeatMap(ctx, id)
		require.NoError(t, err)
		require.Equal(t, want.States, resp.Msg.GetAvailability())
		require.Equal(t, want.Version, resp.Msg.GetVersion())
	}
	requireConverged(t, env, store, shows)

	// seatghor rebuild seatmap: drop and replay.
	require.NoError(t, env.App.Projections.Rebuild(ctx, seatmap.Name))
	requireConverged(t, env, store, shows)
}

func randN(n int) int {
	v, _ := rand.Int(rand.Reader, big.NewInt(int64(n)))
	return int(v.Int64())
}

// countingLoader is booking's shard read, counted.
type countingLoader struct {
	next  seatmap.Loader
	loads atomic.Int64
}

func (l *countingLoader) SeatMap(ctx context.Context, showID int64) (booking.SeatMap, error) {
	l.loads.Add(1)
	time.Sleep(20 * time.Millisecond) // a slow shard widens the window for a stampede
	return l.next.SeatMap(ctx, showID)
}

// TestThousandMissesOneLoad: a thousand simultaneous reads of a
// show that is not in the cache cause one shard load.
func TestThousandMissesOneLoad(t *testing.T) {
	t.Parallel()
	env, r := newEnv(t, false, nil)
	show := createShow(t, env, "cold", 10, 10, 0)
	loader := &countingLoader{next: env.App.Booking}
	store := seatmap.NewStore(r.Client, r.Prefix, 0)
	reader, err := seatmap.NewReader(store, loader, time.Now, slog.New(slog.DiscardHandler), nil)
	require.NoError(t, err)

	start := make(chan struct{})
	var wg sync.WaitGroup
	var failed atomic.Int64
	for range 1000 {
		wg.Go(func() {
			<-start
			m, err := reader.SeatMap(context.Background(), show)
			if err != nil || m.SeatCount != 100 {
				failed.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	require.Zero(t, failed.Load())
	require.EqualValues(t, 1, loader.loads.Load(), "shard loads for 1,000 concurrent misses")

	// And through the API: a cold cache, many concurrent GetSeatMap calls.
	require.NoError(t, store.Reset(context.Background()))
	before := metric(t, env, "seatghor_seatmap_shard_loads_total", "")
	c := as(t, env, "reader", auth.RoleUser)
	for range 200 {
		wg.Go(func() {
			if _, err := c.seatmap.GetSeatMap(context.Background(), connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: show})); err != nil {
				failed.Add(1)
			}
		})
	}
	wg.Wait()
	require.Zero(t, failed.Load())
	require.LessOrEqual(t, metric(t, env, "seatghor_seatmap_shard_loads_total", "")-before, 1.0)
}

// metric returns the value of a counter of the platform, summed over the
// series whose labels include label (all of them when label is empty).
func metric(t *testing.T, env *apptest.Env, name, label string) float64 {
	t.Helper()
	mfs, err := env.App.Registry.Gather()
	require.NoError(t, err)
	v := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			match := label == ""
			for _, l := range m.GetLabel() {
				match = match || l.GetValue() == label
			}
			if match {
				v += m.GetCounter().GetValue()
			}
		}
	}
	return v
}

// TestRedisDownFallsBackToShard: with a Redis that refuses connections,
// GetSeatMap answers from the shard (metered as degraded) and holds work.
func TestRedisDownFallsBackToShard(t *testing.T) {
	t.Parallel()
	port, err := redistest.FreePort()
	require.NoError(t, err)
	env := apptest.New(t, apptest.Options{Shards: 1, RedisURL: fmt.Sprintf("redis://127.0.0.1:%d/0", port), Projectors: true})
	show := createShow(t, env, "no redis", 2, 4, 0)
	c := as(t, env, "rumana", auth.RoleUser)
	ctx := context.Background()
	_, err = c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"A1", "A2"}}))
	require.NoError(t, err)
	resp, err := c.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: show}))
	require.NoError(t, err)
	require.Equal(t, []byte{0b0101, 0}, resp.Msg.GetAvailability(), "A1 and A2 held")
	require.Equal(t, 1.0, metric(t, env, "seatghor_seatmap_reads_total", "degraded"))
}

// TestLapsedHoldIsNotServed: a hold that ran out changes no row and no
// version, yet the cached map stops showing it once its time is up.
func TestLapsedHoldIsNotServed(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(time.Now())
	env, _ := newEnv(t, true, clk)
	show := createShow(t, env, "lapse", 1, 4, 0)
	c := as(t, env, "rumana", auth.RoleUser)
	ctx := context.Background()
	_, err := c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"A1"}}))
	require.NoError(t, err)
	resp, err := c.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: show}))
	require.NoError(t, err)
	require.Equal(t, []byte{1}, resp.Msg.GetAvailability())
	v := resp.Msg.GetVersion()

	clk.Advance(11 * time.Minute)
	resp, err = c.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: show}))
	require.NoError(t, err)
	require.Equal(t, []byte{0}, resp.Msg.GetAvailability(), "the lapsed hold is free again")
	require.Equal(t, v, resp.Msg.GetVersion(), "no row changed")
}

// contractRedis is every Redis the store's contract runs on, each with its
// key prefix: redis-server, a Redis Cluster (every script's keys in one
// slot, decision 0200) and the in-process Redis of dev mode.
func contractRedis(t *testing.T) map[string]*redistest.Server {
	mini := miniredis.RunT(t)
	return map[string]*redistest.Server{
		"redis-server":  redistest.New(t),
		"redis-cluster": redistest.NewCluster(t),
		"miniredis":     {Prefix: "test:", Client: redis.NewClient(&redis.Options{Addr: mini.Addr()})},
	}
}

// TestStoreContract runs the store against the real redis-server, a Redis
// Cluster and the in-process Redis of dev mode: one script path serves all.
func TestStoreContract(t *testing.T) {
	t.Parallel()
	for name, r := range contractRedis(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			store := seatmap.NewStore(r.Client, r.Prefix, time.Hour)
			now := time.Now().UTC().Truncate(time.Microsecond)
			m := booking.SeatMap{ShowID: 7, Currency: "BDT", SeatCount: 5, States: []byte{0b10_01_00_01, 0b01},
				Sections: []booking.MapSection{{Name: "Main", PriceMinor: 100, Rows: []booking.MapRow{{Label: "A",
					Seats: []string{"A1", "A2", "A3", "A4", "A5"}}}}},
				GAAreas: []booking.MapArea{{Name: "Floor", Capacity: 10, Remaining: 4, PriceMinor: 50}},
				Version: 5, AsOf: now, ValidUntil: now.Add(time.Minute)}
			_, ok, err := store.Get(ctx, 7, now)
			require.NoError(t, err)
			require.False(t, ok)
			require.NoError(t, store.Put(ctx, m))
			got, ok, err := store.Get(ctx, 7, now)
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, m, got)

			older := m
			older.Version, older.States, older.AsOf = 4, []byte{0, 0}, now.Add(time.Second)
			written, err := store.PutAvailability(ctx, older)
			require.NoError(t, err)
			require.False(t, written, "an older version never overwrites a newer one")
			written, err = store.PutAvailability(ctx, m)
			require.NoError(t, err)
			require.False(t, written, "a repeat is a no-op")
			later := m
			later.AsOf, later.States, later.ValidUntil = now.Add(2*time.Minute), []byte{0b10_00_00_00, 0}, time.Time{}
			written, err = store.PutAvailability(ctx, later)
			require.NoError(t, err)
			require.True(t, written, "same version judged later (a lapsed hold) replaces it")
			newer := later
			newer.Version, newer.States = 6, []byte{0b10_00_00_01, 0}
			written, err = store.PutAvailability(ctx, newer)
			require.NoError(t, err)
			require.True(t, written)
			a, ok, err := store.Availability(ctx, 7)
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, int64(6), a.Version)
			require.Equal(t, []byte{0b10_00_00_01, 0}, a.States)
			require.Equal(t, []int{4}, a.GA)

			_, ok, err = store.Get(ctx, 7, now.Add(time.Hour))
			require.NoError(t, err)
			require.True(t, ok, "no live hold: never out of date")
			require.NoError(t, store.Reset(ctx))
			_, ok, err = store.Get(ctx, 7, now)
			require.NoError(t, err)
			require.False(t, ok)
		})
	}
}

// TestSeatMapIsAGetRequest: GetSeatMap has no side effects, so Connect
// clients may send it as GET, which the caller's cache keeps; the answer
// says for how long, and that it is the caller's alone (decision 0290).
func TestSeatMapIsAGetRequest(t *testing.T) {
	t.Parallel()
	env, _ := newEnv(t, false, nil)
	show := createShow(t, env, "get", 1, 4, 0)
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf(
		"%s/seatghor.seatmap.v1.SeatMapService/GetSeatMap?connect=v1&encoding=json&message=%%7B%%22showId%%22%%3A%%22%d%%22%%7D",
		env.URL, show), nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+env.Token(t, "u", auth.RoleUser))
	resp, err := env.HTTP.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "private, max-age=1", resp.Header.Get("Cache-Control"))
}

// TestLayoutIsCacheable: the static layout comes with an ETag and a
// long Cache-Control, over Connect GET and REST, and a revalidation with
// If-None-Match is answered 304 without a body.
func TestLayoutIsCacheable(t *testing.T) {
	t.Parallel()
	env, _ := newEnv(t, false, nil)
	show := createShow(t, env, "layout", 2, 4, 10)
	token := env.Token(t, "u", auth.RoleUser)
	get := func(path, inm string) *http.Response {
		req, err := http.NewRequest(http.MethodGet, env.URL+path, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		if inm != "" {
			req.Header.Set("If-None-Match", inm)
		}
		resp, err := env.HTTP.Do(req)
		require.NoError(t, err)
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	connectPath := fmt.Sprintf("/seatghor.seatmap.v1.SeatMapService/GetSeatLayout?connect=v1&encoding=json&message=%%7B%%22showId%%22%%3A%%22%d%%22%%7D", show)
	restPath := fmt.Sprintf("/v1/shows/%d/seatmap/layout", show)
	for _, path := range []string{connectPath, restPath} {
		resp := get(path, "")
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		etag := resp.Header.Get("ETag")
		require.NotEmpty(t, etag, path)
		require.Contains(t, resp.Header.Get("Cache-Control"), "public, max-age=3600")
		again := get(path, etag)
		require.Equal(t, http.StatusNotModified, again.StatusCode, path)
		require.Equal(t, http.StatusOK, get(path, `"other"`).StatusCode, path)
	}

	// The seat map names the same layout, and a hold does not change it.
	c := as(t, env, "u", auth.RoleUser)
	ctx := context.Background()
	layout, err := c.seatmap.GetSeatLayout(ctx, connect.NewRequest(&seatmapv1.GetSeatLayoutRequest{ShowId: show}))
	require.NoError(t, err)
	_, err = c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"B2"}}))
	require.NoError(t, err)
	m, err := c.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: show}))
	require.NoError(t, err)
	require.Equal(t, layout.Msg.GetEtag(), m.Msg.GetLayoutEtag())
	require.Equal(t, int32(8), layout.Msg.GetSeatCount())
	require.Len(t, layout.Msg.GetGaAreas(), 1)
}

// TestConflictVersionIsTheServedVersion: the version in CreateHold's
// aborted answer is the version the read model serves once it caught up.
func TestConflictVersionIsTheServedVersion(t *testing.T) {
	t.Parallel()
	env, r := newEnv(t, true, nil)
	show := createShow(t, env, "conflict", 1, 4, 0)
	ctx := context.Background()
	_, err := as(t, env, "rumana", auth.RoleUser).holds.CreateHold(ctx,
		connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"A1", "A2"}}))
	require.NoError(t, err)
	karim := as(t, env, "karim", auth.RoleUser)
	_, err = karim.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"A2", "A3"}}))
	var ce *connect.Error
	require.ErrorAs(t, err, &ce)
	require.Equal(t, connect.CodeAborted, ce.Code())
	var conflictVersion int64
	for _, d := range ce.Details() {
		if v, err := d.Value(); err == nil {
			if su, ok := v.(*bookingv1.SeatsUnavailable); ok {
				conflictVersion = su.GetSeatmapVersion()
			}
		}
	}
	require.Positive(t, conflictVersion)
	store := seatmap.NewStore(r.Client, r.Prefix, 0)
	requireConverged(t, env, store, []int64{show})
	m, err := karim.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: show}))
	require.NoError(t, err)
	require.Equal(t, conflictVersion, m.Msg.GetVersion())
	require.Equal(t, []byte{0b0101}, m.Msg.GetAvailability())
}

// TestRedisOutageCatchesUp: while Redis is down holds go on; when it is
// back, the projector (retrying from its checkpoint) brings the map up to
// date. Runs on the in-process Redis, which can be stopped and restarted on
// the same address.
func TestRedisOutageCatchesUp(t *testing.T) {
	t.Parallel()
	mini := miniredis.RunT(t)
	env := apptest.New(t, apptest.Options{Shards: 1, RedisURL: "redis://" + mini.Addr() + "/0", RedisPrefix: "t:", Projectors: true})
	show := createShow(t, env, "outage", 1, 4, 0)
	c := as(t, env, "rumana", auth.RoleUser)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: mini.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	store := seatmap.NewStore(rdb, "t:", 0)
	_, err := c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"A1"}}))
	require.NoError(t, err)
	requireConverged(t, env, store, []int64{show})

	mini.Close()
	_, err = c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"A2"}}))
	require.NoError(t, err, "holds do not need Redis")
	resp, err := c.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: show}))
	require.NoError(t, err, "the shard answers while Redis is down")
	require.Equal(t, []byte{0b0101}, resp.Msg.GetAvailability())

	require.NoError(t, mini.Restart())
	requireConverged(t, env, store, []int64{show})
}

// TestProjectorLagUnderHoldLoad measures how long a hold takes to show in
// the Redis seat map (R-1.1 allows a second or two; dev mode promises 2 s)
// while 16 buyers hold and release seats on shows of two shards, and
// reports p50/p99 of the projector's event delay.
func TestProjectorLagUnderHoldLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	t.Parallel()
	env, r := newEnv(t, true, nil)
	var shows []int64
	for i := range 4 {
		shows = append(shows, createShow(t, env, fmt.Sprint("lag ", i), 5, 8, 0))
	}
	store := seatmap.NewStore(r.Client, r.Prefix, 0)
	ctx := context.Background()
	var mu sync.Mutex
	var (
		visible []time.Duration
		lost    int
	)
	var wg sync.WaitGroup
	for u := range 16 {
		c := as(t, env, fmt.Sprint("buyer", u), auth.RoleUser)
		wg.Go(func() {
			for i := range 10 {
				show := shows[(u+i)%len(shows)]
				seat := fmt.Sprintf("%c%d", 'A'+randN(5), 1+randN(8))
				resp, err := c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{seat}}))
				if err != nil {
					continue
				}
				done := time.Now()
				// The hold is visible once Redis serves a version at least
				// the one right after it.
				want, err := env.App.Booking.SeatMap(ctx, show)
				if err != nil {
					t.Error(err)
					return
				}
				seen := false
				for !seen && time.Since(done) < 30*time.Second {
					a, ok, err := store.Availability(ctx, show)
					if seen = err == nil && ok && a.Version >= want.Version; !seen {
						time.Sleep(2 * time.Millisecond)
					}
				}
				mu.Lock()
				if seen {
					visible = append(visible, time.Since(done))
				} else {
					lost++
				}
				mu.Unlock()
				_, _ = c.holds.ReleaseHold(ctx, connect.NewRequest(&bookingv1.ReleaseHoldRequest{HoldId: resp.Msg.GetHold().GetHoldId()}))
			}
		})
	}
	wg.Wait()
	require.NotEmpty(t, visible)
	slices.Sort(visible)
	p := func(q float64) time.Duration { return visible[int(q*float64(len(visible)-1))] }
	// The lag is reported, not asserted (speed is measured, never a timed
	// assertion); what is asserted is that every hold reached Redis.
	t.Logf("hold → visible in Redis over %d holds: p50 %v, p99 %v, max %v", len(visible), p(.5), p(.99), visible[len(visible)-1])
	require.Zero(t, lost, "every hold reaches the Redis seat map")
}

// TestExpiryReachesTheMap: holds that run out are swept (HoldExpired) and
// the projector brings Redis back to the shard's seat rows.
func TestExpiryReachesTheMap(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(time.Now())
	env, r := newEnv(t, true, clk)
	shows := []int64{createShow(t, env, "expiry 1", 2, 4, 10), createShow(t, env, "expiry 2", 2, 4, 10)}
	ctx := context.Background()
	c := as(t, env, "rumana", auth.RoleUser)
	for _, show := range shows {
		_, err := c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"A1", "B4"}}))
		require.NoError(t, err)
		_, err = c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, GaArea: "Floor", Quantity: new(int32(3))}))
		require.NoError(t, err)
	}
	store := seatmap.NewStore(r.Client, r.Prefix, 0)
	requireConverged(t, env, store, shows)

	clk.Advance(11 * time.Minute)
	n, err := env.App.Booking.Sweep(ctx, 100)
	require.NoError(t, err)
	require.Equal(t, 4, n)
	requireConverged(t, env, store, shows)
	a, ok, err := store.Availability(ctx, shows[0])
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, []byte{0, 0}, a.States, "every seat free again")
	require.Equal(t, []int{10}, a.GA, "every GA place back")
}
