package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	seatmapv1 "github.com/seatghor/seatghor/gen/seatghor/seatmap/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/internal/testkit/redistest"
	"github.com/seatghor/seatghor/projections/seatmap"
	"github.com/seatghor/seatghor/server/api"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/clock"
)

// rpcMaps is the Redis reader as the RPC handler sees it, counting the
// reads the RPC makes: a request the fast path answered makes none.
type rpcMaps struct {
	r     *seatmap.Reader
	calls atomic.Int64
	// cached counts the fast path's reads of the cache.
	cached atomic.Int64
}

func (m *rpcMaps) SeatMap(ctx context.Context, id int64) (booking.SeatMap, error) {
	m.calls.Add(1)
	return m.r.SeatMap(ctx, id)
}

func (m *rpcMaps) Availability(ctx context.Context, id int64) (booking.MapAvailability, error) {
	m.calls.Add(1)
	return m.r.Availability(ctx, id)
}

// fastMaps adds the cache-only read that turns the fast path on.
type fastMaps struct{ *rpcMaps }

func (m fastMaps) CachedAvailability(ctx context.Context, id int64) (booking.MapAvailability, bool) {
	m.cached.Add(1)
	return m.r.CachedAvailability(ctx, id)
}

// seatmapServers are two API handlers on one platform: one with the fast
// path (as `seatghor serve` runs) and one without it (the RPC path only).
type seatmapServers struct {
	env        *apptest.Env
	fast, slow *httptest.Server
	fastRPC    *rpcMaps
	store      *seatmap.Store
	prefix     string
	// fastWrites counts the writes to the fast server's connections.
	fastWrites atomic.Int64
}

func newSeatmapServers(tb testing.TB) *seatmapServers { return newSeatmapServersSharing(tb, 0) }

// newSeatmapServersSharing is newSeatmapServers whose fast path shares a
// Redis read for share (decision 0232).
func newSeatmapServersSharing(tb testing.TB, share time.Duration) *seatmapServers {
	return newSeatmapServersOn(tb, share, clock.Real{})
}

// newSeatmapServersOn is newSeatmapServersSharing on clk.
func newSeatmapServersOn(tb testing.TB, share time.Duration, clk clock.Clock) *seatmapServers {
	r := redistest.New(tb)
	env := apptest.New(tb, apptest.Options{Shards: 1, RedisURL: r.URL, RedisPrefix: r.Prefix, Projectors: true, Clock: clk})
	s := &seatmapServers{env: env, store: seatmap.NewStore(env.App.Redis, r.Prefix, 0), prefix: r.Prefix}
	// Both served as `seatghor serve` serves: its server on its listener.
	handler := func(maps api.SeatMapReader, writes *atomic.Int64) *httptest.Server {
		h, err := api.NewHandler(api.Config{Credentials: auth.NewCredentials(env.App.Tokens, auth.WithAPIKeys(env.App.Partners)), Catalog: env.App.Catalog,
			Booking: env.App.Booking, Payments: env.App.Payments, Router: env.App.Router, Log: slog.New(slog.DiscardHandler),
			SeatMaps: maps, Registry: prometheus.NewRegistry(), SeatMapShare: share, Now: clk.Now})
		require.NoError(tb, err)
		srv := httptest.NewUnstartedServer(h)
		srv.Config = api.NewServer("", h)
		srv.Listener = api.Listener(api.WriteCounter{Listener: srv.Listener, N: writes})
		srv.Start()
		tb.Cleanup(srv.Close)
		return srv
	}
	s.fastRPC = &rpcMaps{r: env.App.SeatMaps}
	s.fast = handler(fastMaps{s.fastRPC}, &s.fastWrites)
	s.slow = handler(&rpcMaps{r: env.App.SeatMaps}, new(atomic.Int64))
	return s
}

// httpAnswer is one HTTP httpAnswer, its body compacted (the RPC path's JSON
// encoder may add insignificant spaces).
type httpAnswer struct {
	status  int
	headers map[string]string
	body    string
}

func getREST(tb testing.TB, srv *httptest.Server, path string, header http.Header) httpAnswer {
	tb.Helper()
	req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	require.NoError(tb, err)
	req.Header = header.Clone()
	resp, err := srv.Client().Do(req)
	require.NoError(tb, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(tb, err)
	a := httpAnswer{status: resp.StatusCode, headers: map[string]string{}, body: string(b)}
	for _, h := range []string{"Content-Type", "Cache-Control", "ETag"} {
		a.headers[h] = resp.Header.Get(h)
	}
	if len(b) > 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		var c bytes.Buffer
		require.NoError(tb, json.Compact(&c, b), "%s", b)
		a.body = c.String()
	}
	return a
}

// fastCase is one request to both servers: answered without the RPC
// (fast) or not, with status (0: whatever the RPC answers).
type fastCase struct {
	name   string
	path   string
	header http.Header
	fast   bool
	status int
}

// answersAsTheRPC asks both servers tc's request: the fast server answers
// as the RPC path does (status, body, ETag, Cache-Control, Content-Type),
// a fast case without an RPC read (asked again: a whole map's first answer
// may read its layout, once per layout), and a 200 with an ETag is
// revalidated with 304 and no body on both.
func (s *seatmapServers) answersAsTheRPC(t *testing.T, tc fastCase) {
	t.Helper()
	fast := getREST(t, s.fast, tc.path, tc.header)
	slow := getREST(t, s.slow, tc.path, tc.header)
	before := s.fastRPC.calls.Load()
	require.Equal(t, fast, getREST(t, s.fast, tc.path, tc.header))
	require.Equal(t, slow, fast, "the fast path answers as the RPC path")
	if tc.status != 0 {
		require.Equal(t, tc.status, fast.status, "%s", fast.body)
	}
	if tc.fast {
		require.Equal(t, before, s.fastRPC.calls.Load(), "answered by the fast path")
	}
	if fast.status != 200 || fast.headers["ETag"] == "" {
		return
	}
	h := tc.header.Clone()
	h.Set("If-None-Match", `"stale", `+fast.headers["ETag"])
	before = s.fastRPC.calls.Load()
	fast304, slow304 := getREST(t, s.fast, tc.path, h), getREST(t, s.slow, tc.path, h)
	require.Equal(t, http.StatusNotModified, fast304.status)
	require.Empty(t, fast304.body)
	require.Equal(t, slow304, fast304)
	if tc.fast {
		require.Equal(t, before, s.fastRPC.calls.Load(), "revalidated by the fast path")
	}
}

// TestSeatMapFastPathAnswersAsTheRPC (decision 0230): every request the
// availability-only REST read may get is answered by the fast path
// exactly as by the RPC path (status, body, ETag, Cache-Control,
// Content-Type), and the fast path answers the ones it should without the
// RPC: availability only, of the whole show or a section, and 304.
func TestSeatMapFastPathAnswersAsTheRPC(t *testing.T) {
	s := newSeatmapServers(t)
	ctx := context.Background()
	req := seatedShow("fast", 4, 10) // Main: rows A–D
	req.Sections = append(req.Sections, &catalogv1.Section{Name: `Upper "Deck" ঢাকা`, Rows: []string{"E", "F"}, SeatsPerRow: 7, PriceMinor: 50000})
	req.GaAreas = []*catalogv1.GaArea{{Name: `Standing "front" ঢাকা`, Capacity: 30, PriceMinor: 20000}, {Name: "Lawn", Capacity: 2, PriceMinor: 10000}}
	show := createShow(t, s.env, req).GetShowId()
	user := as(t, s.env, "rumana", auth.RoleUser)
	// Seats held across byte boundaries and in both sections; the lawn
	// sold out (remaining 0 is left out of the JSON).
	_, err := user.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"A2", "B5", "E3", "F7"}}))
	require.NoError(t, err)
	two := int32(2)
	_, err = as(t, s.env, "nadia", auth.RoleUser).holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, GaArea: "Lawn", Quantity: &two}))
	require.NoError(t, err)
	layout, err := user.seatmap.GetSeatLayout(ctx, connect.NewRequest(&seatmapv1.GetSeatLayoutRequest{ShowId: show}))
	require.NoError(t, err)
	etag := layout.Msg.GetEtag()
	waitForMapVersion(t, s, show, user)

	signedIn := http.Header{"Authorization": {"Bearer " + s.env.Token(t, "reader", auth.RoleUser)}}
	base := fmt.Sprintf("/v1/shows/%d/seatmap", show)
	upper := url.QueryEscape(`Upper "Deck" ঢাকা`)
	for _, tc := range []fastCase{
		{"availability only", base + "?layout_etag=" + etag, signedIn, true, 200},
		{"availability only, JSON name", base + "?layoutEtag=" + etag, signedIn, true, 200},
		{"a section", base + "?layout_etag=" + etag + "&section=Main", signedIn, true, 200},
		{"the second section", base + "?section=" + upper + "&layout_etag=" + etag, signedIn, true, 200},
		{"no such section", base + "?layout_etag=" + etag + "&section=S9", signedIn, false, 400},
		{"whole map", base, signedIn, true, 200},
		{"a section with its layout", base + "?section=Main", signedIn, true, 200},
		{"stale layout etag: the layout too", base + "?layout_etag=0123456789abcdef01234567", signedIn, true, 200},
		{"empty layout etag", base + "?layout_etag=", signedIn, true, 200},
		{"layout etag too long", base + "?layout_etag=" + strings.Repeat("a", 65), signedIn, false, 400},
		{"section name too long", base + "?layout_etag=" + etag + "&section=" + strings.Repeat("ঢ", 201), signedIn, false, 400},
		{"NUL in the section", base + "?layout_etag=" + etag + "&section=a%00b", signedIn, false, 400},
		{"two layout etags", base + "?layout_etag=" + etag + "&layoutEtag=" + etag, signedIn, false, 0},
		{"unknown parameter", base + "?layout_etag=" + etag + "&seats=1", signedIn, false, 400},
		{"unknown show", "/v1/shows/999999/seatmap?layout_etag=" + etag, signedIn, false, 404},
		{"show 0", "/v1/shows/0/seatmap?layout_etag=" + etag, signedIn, false, 400},
		{"show id not a number", "/v1/shows/abc/seatmap?layout_etag=" + etag, signedIn, false, 400},
		{"show id with a leading zero", fmt.Sprintf("/v1/shows/0%d/seatmap?layout_etag=%s", show, etag), signedIn, false, 400},
		{"not signed in", base + "?layout_etag=" + etag, http.Header{}, false, 401},
		{"a bad token", base + "?layout_etag=" + etag, http.Header{"Authorization": {"Bearer nonsense"}}, false, 401},
		{"not a bearer", base + "?layout_etag=" + etag, http.Header{"Authorization": {"Basic abc"}}, false, 401},
	} {
		t.Run(tc.name, func(t *testing.T) { s.answersAsTheRPC(t, tc) })
	}

	// The availability-only httpAnswer's content, read back as the message.
	var msg seatmapv1.GetSeatMapResponse
	a := getREST(t, s.fast, base+"?layout_etag="+etag+"&section="+upper, signedIn)
	require.NoError(t, protojson.Unmarshal([]byte(a.body), &msg))
	require.True(t, proto.Equal(&seatmapv1.GetSeatMapResponse{ShowId: show, Currency: "BDT", Availability: []byte{0b0001_0000, 0, 0, 0b0000_0100},
		SeatCount: 54, Version: msg.GetVersion(), LayoutEtag: etag, AvailabilityOffset: 40, AvailabilityCount: 14, AvailabilityOnly: true,
		GaAreas: []*seatmapv1.GaArea{{Name: `Standing "front" ঢাকা`, Remaining: 30}, {Name: "Lawn"}}}, &msg), "%s", a.body)

	// A hold moves the version: the old ETag no longer matches, and both
	// paths agree on the new httpAnswer.
	path := base + "?layout_etag=" + etag
	old := getREST(t, s.fast, path, signedIn)
	_, err = user.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"C9"}}))
	require.NoError(t, err)
	waitForMapVersion(t, s, show, user)
	h := signedIn.Clone()
	h.Set("If-None-Match", old.headers["ETag"])
	moved := getREST(t, s.fast, path, h)
	require.Equal(t, http.StatusOK, moved.status)
	require.NotEqual(t, old.headers["ETag"], moved.headers["ETag"])
	require.Equal(t, getREST(t, s.slow, path, h), moved)

	// With the Redis map gone the fast path hands over, the RPC path
	// rebuilds it, and the fast path answers again.
	require.NoError(t, s.store.Drop(ctx, show))
	before := s.fastRPC.calls.Load()
	rebuilt := getREST(t, s.fast, path, signedIn)
	require.Equal(t, moved.body, rebuilt.body)
	require.Greater(t, s.fastRPC.calls.Load(), before, "a miss takes the RPC path")
	before = s.fastRPC.calls.Load()
	require.Equal(t, rebuilt, getREST(t, s.fast, path, signedIn))
	require.Equal(t, before, s.fastRPC.calls.Load(), "the rebuilt map is answered by the fast path")
}

// TestSeatMapFastAnswerLeavesInOneWrite (decision 0256): an
// availability-only answer larger than net/http's 4 KiB write buffer (a
// 30,000-seat show: 5 kB of base64) leaves in one write, headers and
// body, on a kept-alive connection, and is the RPC path's answer; so
// does the whole map, answered by the fast path too since decision 0275.
func TestSeatMapFastAnswerLeavesInOneWrite(t *testing.T) {
	s := newSeatmapServers(t)
	show := createShow(t, s.env, seatedShow("big", 60, 500)).GetShowId()
	user := as(t, s.env, "rumana", auth.RoleUser)
	layout, err := user.seatmap.GetSeatLayout(context.Background(), connect.NewRequest(&seatmapv1.GetSeatLayoutRequest{ShowId: show}))
	require.NoError(t, err)
	waitForMapVersion(t, s, show, user)
	signedIn := http.Header{"Authorization": {"Bearer " + s.env.Token(t, "reader", auth.RoleUser)}}
	path := fmt.Sprintf("/v1/shows/%d/seatmap?layout_etag=%s", show, layout.Msg.GetEtag())

	getREST(t, s.fast, path, signedIn) // the connection made and the answer remembered
	for range 3 {
		before, calls := s.fastWrites.Load(), s.fastRPC.calls.Load()
		fast := getREST(t, s.fast, path, signedIn)
		require.Equal(t, http.StatusOK, fast.status)
		require.Greater(t, len(fast.body), 5000)
		require.Equal(t, calls, s.fastRPC.calls.Load(), "answered by the fast path")
		require.Equal(t, int64(1), s.fastWrites.Load()-before, "one write")
		require.Equal(t, getREST(t, s.slow, path, signedIn), fast)
	}
	// The whole map (decision 0275): one write too, once its layout is
	// remembered.
	wholePath := fmt.Sprintf("/v1/shows/%d/seatmap", show)
	getREST(t, s.fast, wholePath, signedIn)
	before, calls := s.fastWrites.Load(), s.fastRPC.calls.Load()
	whole := getREST(t, s.fast, wholePath, signedIn)
	require.Equal(t, http.StatusOK, whole.status)
	require.Equal(t, calls, s.fastRPC.calls.Load(), "answered by the fast path")
	require.Equal(t, int64(1), s.fastWrites.Load()-before, "one write")
	require.Equal(t, getREST(t, s.slow, wholePath, signedIn), whole)
}

// TestSeatMapFastPathSharesOneRead (decision 0232): readers of one show
// within the share window are answered from one Redis read, and a change
// is answered once the window has passed.
func TestSeatMapFastPathSharesOneRead(t *testing.T) {
	const share = 50 * time.Millisecond
	s := newSeatmapServersSharing(t, share)
	ctx := context.Background()
	show := createShow(t, s.env, seatedShow("shared", 4, 10)).GetShowId()
	user := as(t, s.env, "shirin", auth.RoleUser)
	layout, err := user.seatmap.GetSeatLayout(ctx, connect.NewRequest(&seatmapv1.GetSeatLayoutRequest{ShowId: show}))
	require.NoError(t, err)
	waitForMapVersion(t, s, show, user)
	signedIn := http.Header{"Authorization": {"Bearer " + s.env.Token(t, "reader", auth.RoleUser)}}
	path := fmt.Sprintf("/v1/shows/%d/seatmap?layout_etag=%s", show, layout.Msg.GetEtag())

	// Many readers at once: a handful of Redis reads, not one each (the
	// window may pass once on a slow machine, so not exactly one).
	const readers = 64
	before := s.fastRPC.cached.Load()
	answers := make([]httpAnswer, readers)
	var wg sync.WaitGroup
	for i := range readers {
		wg.Go(func() { answers[i] = getREST(t, s.fast, path, signedIn) })
	}
	wg.Wait()
	for _, a := range answers {
		require.Equal(t, http.StatusOK, a.status)
		require.Equal(t, answers[0].body, a.body)
	}
	reads := s.fastRPC.cached.Load() - before
	require.Less(t, reads, int64(readers/2), "readers share Redis reads")
	require.Equal(t, int64(0), s.fastRPC.calls.Load(), "the RPC path was not asked")

	// A hold moves the map; after the window the fast path answers it,
	// as the RPC path does.
	_, err = user.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"B3"}}))
	require.NoError(t, err)
	waitForMapVersion(t, s, show, user)
	time.Sleep(share)
	moved := getREST(t, s.fast, path, signedIn)
	require.NotEqual(t, answers[0].headers["ETag"], moved.headers["ETag"])
	require.Equal(t, getREST(t, s.slow, path, signedIn), moved)
}

// TestSharedReadShowsNoLapsedHold (R-3.3, decision 0232): a read shared
// within the window is not shared once a hold it shows has run out: the
// seat is answered free at once, as the RPC path answers it. The window
// is an hour here and the clock jumps, so a shared answer would show it.
func TestSharedReadShowsNoLapsedHold(t *testing.T) {
	clk := clock.NewFake(time.Now())
	s := newSeatmapServersOn(t, time.Hour, clk)
	ctx := context.Background()
	show := createShow(t, s.env, seatedShow("lapse shared", 1, 4)).GetShowId()
	user := as(t, s.env, "shirin", auth.RoleUser)
	_, err := user.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"A2"}}))
	require.NoError(t, err)
	waitForMapVersion(t, s, show, user)
	layout, err := user.seatmap.GetSeatLayout(ctx, connect.NewRequest(&seatmapv1.GetSeatLayoutRequest{ShowId: show}))
	require.NoError(t, err)
	signedIn := http.Header{"Authorization": {"Bearer " + s.env.Token(t, "reader", auth.RoleUser)}}
	path := fmt.Sprintf("/v1/shows/%d/seatmap?layout_etag=%s", show, layout.Msg.GetEtag())

	held := getREST(t, s.fast, path, signedIn)
	require.Equal(t, http.StatusOK, held.status)
	require.Contains(t, held.body, `"availability":"BA=="`, "A2 held: %s", held.body)
	require.Equal(t, held, getREST(t, s.fast, path, signedIn), "within the window: the shared read")

	clk.Advance(11 * time.Minute) // the hold (10 minutes) ran out
	free := getREST(t, s.fast, path, signedIn)
	require.Equal(t, http.StatusOK, free.status)
	require.Contains(t, free.body, `"availability":"AA=="`, "A2 free again: %s", free.body)
	require.Equal(t, getREST(t, s.slow, path, signedIn), free)
}

// waitForMapVersion waits until the Redis map serves the shard's version
// of the show (the projector has applied every change).
func waitForMapVersion(tb testing.TB, s *seatmapServers, show int64, c clients) {
	tb.Helper()
	// The show's publication comes through the catalog's outbox on its own
	// time, and drops the layout it may find in Redis: wait for it, so the
	// map does not go while the test reads it.
	s.env.WaitProjected(tb, seatmap.Name)
	want, err := s.env.App.Booking.SeatMap(context.Background(), show)
	require.NoError(tb, err)
	deadline := time.Now().Add(15 * time.Second)
	for {
		a, ok := s.env.App.SeatMaps.CachedAvailability(context.Background(), show)
		if ok && a.Version >= want.Version && bytes.Equal(a.States, want.States) {
			return
		}
		if !ok {
			// Nothing in Redis yet: one read fills it.
			_, err := c.seatmap.GetSeatMap(context.Background(), connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: show}))
			require.NoError(tb, err)
		}
		if time.Now().After(deadline) {
			tb.Fatalf("the Redis map of show %d did not reach version %d", show, want.Version)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// BenchmarkSeatMapAvailability (issue 10, goal 3): the availability-only
// REST read of a 50,000-seat show through the fast path and through the
// RPC path, next to go-redis GETs of a value as large as the answer, each
// at 32 concurrent callers in the same process, one after the other;
// reported as throughput ratios (fast/redis, rpc/redis: answers per
// second over GETs per second), which mean more than the times on a
// shared machine:
//
//	go test -run '^$' -bench SeatMapAvailability -benchtime 20000x ./server/api
func BenchmarkSeatMapAvailability(b *testing.B) {
	s := newSeatmapServers(b)
	ctx := context.Background()
	req := seatedShow("stadium", 100, 500)
	show := createShow(b, s.env, req).GetShowId()
	user := as(b, s.env, "reader", auth.RoleUser)
	layout, err := user.seatmap.GetSeatLayout(ctx, connect.NewRequest(&seatmapv1.GetSeatLayoutRequest{ShowId: show}))
	require.NoError(b, err)
	waitForMapVersion(b, s, show, user)
	path := fmt.Sprintf("/v1/shows/%d/seatmap?layout_etag=%s", show, layout.Msg.GetEtag())
	token := "Bearer " + s.env.Token(b, "reader", auth.RoleUser)
	const callers = 32
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * callers, DisableCompression: true}}
	answer := func(base string) (int, error) {
		req, err := http.NewRequest(http.MethodGet, base+path, nil)
		if err != nil {
			return 0, err
		}
		req.Header.Set("Authorization", token)
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		n, err := io.Copy(io.Discard, resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("HTTP %d", resp.StatusCode)
		}
		return int(n), err
	}
	size, err := answer(s.fast.URL)
	require.NoError(b, err)
	rdb := redis.NewClient(&redis.Options{Addr: s.env.App.Redis.(*redis.Client).Options().Addr, PoolSize: 2 * callers})
	b.Cleanup(func() { _ = rdb.Close() })
	key := s.prefix + "bench:answer-sized"
	require.NoError(b, rdb.Set(ctx, key, bytes.Repeat([]byte{'x'}, size), time.Hour).Err())
	b.Cleanup(func() { rdb.Del(context.Background(), key) })

	// run makes n calls of op from callers goroutines and returns how long
	// they took.
	run := func(n int, op func() error) time.Duration {
		var next atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		for range callers {
			wg.Go(func() {
				for next.Add(1) <= int64(n) {
					if err := op(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		return time.Since(start)
	}
	fastOp := func() error { _, err := answer(s.fast.URL); return err }
	rpcOp := func() error { _, err := answer(s.slow.URL); return err }
	getOp := func() error { return rdb.Get(ctx, key).Err() }
	for _, op := range []func() error{fastOp, rpcOp, getOp} {
		run(10*callers, op) // connections opened, code warm
	}
	fastCalls := s.fastRPC.calls.Load()
	b.ResetTimer()
	// Interleaved in rounds, so the load of the machine's other work falls
	// on the three alike.
	var fast, rpc, get time.Duration
	for done := 0; done < b.N; {
		n := min(b.N-done, 20*callers)
		fast += run(n, fastOp)
		rpc += run(n, rpcOp)
		get += run(n, getOp)
		done += n
	}
	b.StopTimer()
	require.Equal(b, fastCalls, s.fastRPC.calls.Load(), "every fast answer came from the fast path")
	b.ReportMetric(float64(size), "answer-bytes")
	b.ReportMetric(float64(get)/float64(fast), "fast/redis")
	b.ReportMetric(float64(get)/float64(rpc), "rpc/redis")
	b.ReportMetric(float64(fast.Microseconds())/float64(b.N), "fast-µs/op")
	b.ReportMetric(float64(rpc.Microseconds())/float64(b.N), "rpc-µs/op")
	b.ReportMetric(float64(get.Microseconds())/float64(b.N), "redis-µs/op")
}

// TestSeatMapAnswersArePrivate (decision 0290): GetSeatMap needs a
// credential, so every answer of it, by the fast path or the RPC path, as
// REST, Connect GET, Connect POST or a 304, tells caches it is the
// caller's (private, for a second) and that it depends on the
// Authorization header: never public, which an edge would hand to
// callers without a credential. The layout, which anyone may read, stays
// public.
func TestSeatMapAnswersArePrivate(t *testing.T) {
	s := newSeatmapServers(t)
	ctx := context.Background()
	show := createShow(t, s.env, seatedShow("private", 2, 4)).GetShowId()
	user := as(t, s.env, "rumana", auth.RoleUser)
	layout, err := user.seatmap.GetSeatLayout(ctx, connect.NewRequest(&seatmapv1.GetSeatLayoutRequest{ShowId: show}))
	require.NoError(t, err)
	etag := layout.Msg.GetEtag()
	waitForMapVersion(t, s, show, user)
	token := "Bearer " + s.env.Token(t, "reader", auth.RoleUser)

	ask := func(srv *httptest.Server, method, path, body, ifNoneMatch string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", token)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if ifNoneMatch != "" {
			req.Header.Set("If-None-Match", ifNoneMatch)
		}
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		require.NoError(t, resp.Body.Close())
		return resp
	}
	rest := fmt.Sprintf("/v1/shows/%d/seatmap", show)
	connectGet := func(msg string) string {
		return "/seatghor.seatmap.v1.SeatMapService/GetSeatMap?connect=v1&encoding=json&message=" + url.QueryEscape(msg)
	}
	availabilityOnly := fmt.Sprintf(`{"showId":"%d","layoutEtag":%q}`, show, etag)
	for _, tc := range []struct {
		name               string
		srv                *httptest.Server
		method, path, body string
		answeredByFastPath bool
	}{
		{"REST availability only, fast path", s.fast, http.MethodGet, rest + "?layout_etag=" + etag, "", true},
		{"REST whole map, fast path", s.fast, http.MethodGet, rest, "", true},
		{"Connect GET, fast path", s.fast, http.MethodGet, connectGet(availabilityOnly), "", true},
		{"REST availability only, RPC path", s.slow, http.MethodGet, rest + "?layout_etag=" + etag, "", false},
		{"REST whole map, RPC path", s.slow, http.MethodGet, rest, "", false},
		{"Connect GET, RPC path", s.slow, http.MethodGet, connectGet(availabilityOnly), "", false},
		{"Connect POST", s.fast, http.MethodPost, "/seatghor.seatmap.v1.SeatMapService/GetSeatMap", availabilityOnly, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ask(tc.srv, tc.method, tc.path, tc.body, "") // a whole map's first answer may read its layout
			before := s.fastRPC.calls.Load()
			resp := ask(tc.srv, tc.method, tc.path, tc.body, "")
			require.Equal(t, http.StatusOK, resp.StatusCode)
			if tc.answeredByFastPath {
				require.Equal(t, before, s.fastRPC.calls.Load(), "answered by the fast path")
			}
			checkPrivate := func(resp *http.Response) {
				t.Helper()
				require.Equal(t, "private, max-age=1", resp.Header.Get("Cache-Control"))
				var vary []string
				for v := range strings.SplitSeq(strings.Join(resp.Header.Values("Vary"), ","), ",") {
					vary = append(vary, strings.TrimSpace(v))
				}
				require.Contains(t, vary, "Authorization")
			}
			checkPrivate(resp)
			if tc.method == http.MethodGet {
				revalidated := ask(tc.srv, tc.method, tc.path, "", resp.Header.Get("ETag"))
				require.Equal(t, http.StatusNotModified, revalidated.StatusCode)
				checkPrivate(revalidated)
			}
		})
	}

	// The layout is the same for everyone and needs no credential: public.
	resp, err := http.Get(s.fast.URL + rest + "/layout")
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, resp.Header.Get("Cache-Control"), "public")
}
