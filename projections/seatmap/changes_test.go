package seatmap_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	partnerv1 "github.com/seatghor/seatghor/gen/seatghor/partner/v1"
	paymentv1 "github.com/seatghor/seatghor/gen/seatghor/payment/v1"
	seatmapv1 "github.com/seatghor/seatghor/gen/seatghor/seatmap/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/projections"
	"github.com/seatghor/seatghor/projections/seatmap"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/clock"
)

// rowLabels returns n distinct row labels: A … Z, AA … ZZ, …
func rowLabels(from, n int) []string {
	var out []string
	for i := from; i < from+n; i++ {
		label := ""
		for v := i; ; v = v/26 - 1 {
			label = string(rune('A'+v%26)) + label
			if v < 26 {
				break
			}
		}
		out = append(out, label)
	}
	return out
}

// createSectionedShow makes a show of sections × rows × perRow seats, the
// sections named S1, S2, …
func createSectionedShow(t *testing.T, env *apptest.Env, title string, sections, rows, perRow int) int64 {
	t.Helper()
	req := &catalogv1.CreateShowRequest{
		Kind: catalogv1.ShowKind_SHOW_KIND_CONCERT, Title: title, Venue: "Stadium",
		StartsAt: timestamppb.New(time.Now().Add(30 * 24 * time.Hour)), Currency: "BDT",
		HoldTtl: durationpb.New(10 * time.Minute), MaxSeatsPerAccount: 10, MaxSeatsPerHold: 10,
	}
	for s := range sections {
		req.Sections = append(req.Sections, &catalogv1.Section{Name: fmt.Sprint("S", s+1), Rows: rowLabels(s*rows, rows),
			SeatsPerRow: int32(perRow), PriceMinor: int64(10000 * (s + 1))})
	}
	resp, err := as(t, env, "admin", auth.RoleAdmin).catalog.CreateShow(context.Background(), connect.NewRequest(req))
	require.NoError(t, err)
	return resp.Msg.GetShow().GetShowId()
}

// shardEvents reads a show's events from its shard's outbox in delivery
// order, as the consumer hands them to a projector.
func shardEvents(t *testing.T, env *apptest.Env, show int64) []projections.Event {
	t.Helper()
	var out []projections.Event
	for _, p := range env.App.Router.Shards() {
		rows, err := p.Query(context.Background(), `
			SELECT id, xid::text, show_id, event_id, event_type, payload FROM outbox
			WHERE show_id = $1 ORDER BY xid, id`, show)
		require.NoError(t, err)
		for rows.Next() {
			e := projections.Event{Source: p.Name}
			var xid string
			require.NoError(t, rows.Scan(&e.ID, &xid, &e.ShowID, &e.EventID, &e.Type, &e.Payload))
			e.XID, err = strconv.ParseUint(xid, 10, 64)
			require.NoError(t, err)
			out = append(out, e)
		}
		require.NoError(t, rows.Err())
	}
	return out
}

// TestEventsOutOfOrderAndTwiceConvergeToTheDatabase (docs/DESIGN.md,
// "Ordering of read-model updates"; decision 0130): the seat map follows
// each batch's seats with per-seat versions, so reads of a seat that
// arrive late, out of order or twice never undo a newer one, and events
// delivered backwards and again bring Redis to exactly the database.
func TestEventsOutOfOrderAndTwiceConvergeToTheDatabase(t *testing.T) {
	t.Parallel()
	env, r := newEnv(t, false, nil)
	ctx := context.Background()
	show := createShow(t, env, "out of order", 3, 4, 20)
	seats := []string{"A1", "A2", "A3", "A4", "B1", "B2", "B3", "B4", "C1", "C2", "C3", "C4"}
	store := seatmap.NewStore(r.Client, r.Prefix, 0)
	initial, err := env.App.Booking.SeatMap(ctx, show)
	require.NoError(t, err)
	require.NoError(t, store.Put(ctx, initial))

	// A history of changes; after each, what the projector would read of
	// the touched rows, and the version it would stamp.
	type step struct {
		version int64
		read    booking.SeatChanges
	}
	var history []step
	snap := func() {
		m, err := env.App.Booking.SeatMap(ctx, show)
		require.NoError(t, err)
		c, err := env.App.Booking.SeatChanges(ctx, show, seats, nil, true)
		require.NoError(t, err)
		history = append(history, step{m.Version, c})
	}
	rumana, karim := as(t, env, "rumana", auth.RoleUser), as(t, env, "karim", auth.RoleUser)
	hold := func(c caller, req *bookingv1.CreateHoldRequest) string {
		req.ShowId = show
		resp, err := c.holds.CreateHold(ctx, connect.NewRequest(req))
		require.NoError(t, err)
		snap()
		return resp.Msg.GetHold().GetHoldId()
	}
	release := func(c caller, id string) {
		_, err := c.holds.ReleaseHold(ctx, connect.NewRequest(&bookingv1.ReleaseHoldRequest{HoldId: id}))
		require.NoError(t, err)
		snap()
	}
	h1 := hold(rumana, &bookingv1.CreateHoldRequest{Seats: []string{"A1", "A2"}})
	g1 := hold(karim, &bookingv1.CreateHoldRequest{GaArea: "Floor", Quantity: new(int32(3))})
	release(rumana, h1)
	h2 := hold(karim, &bookingv1.CreateHoldRequest{Seats: []string{"A1", "B3"}})
	release(karim, g1)
	hold(rumana, &bookingv1.CreateHoldRequest{GaArea: "Floor", Quantity: new(int32(2))})
	o, err := karim.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: h2}))
	require.NoError(t, err)
	_, err = karim.pay.StartPayment(ctx, connect.NewRequest(&paymentv1.StartPaymentRequest{
		OrderId: o.Msg.GetOrder().GetOrderId(), Sandbox: &paymentv1.SandboxPayment{Token: "tok_success"}}))
	require.NoError(t, err)
	snap() // A1, B3 booked
	h3 := hold(rumana, &bookingv1.CreateHoldRequest{Seats: []string{"A2"}})
	release(rumana, h3)
	hold(karim, &bookingv1.CreateHoldRequest{Seats: []string{"A2", "C4"}})

	// Newest first, then every read again in a scrambled order.
	for i := len(history) - 1; i >= 0; i-- {
		_, err := store.ApplyChanges(ctx, show, history[i].version, history[i].read)
		require.NoError(t, err)
	}
	for _, i := range []int{3, 0, 7, 1, 9, 5, 2, 8, 4, 6} {
		i %= len(history)
		missing, err := store.ApplyChanges(ctx, show, history[i].version, history[i].read)
		require.NoError(t, err)
		require.False(t, missing)
	}
	requireConverged(t, env, store, []int64{show})

	// The projector, with the real events: one at a time backwards, then
	// the whole history twice, over a map that has seen none of them.
	require.NoError(t, store.Reset(ctx))
	require.NoError(t, store.Put(ctx, initial))
	p := seatmap.NewProjector(store, env.App.Booking, slog.New(slog.DiscardHandler))
	events := shardEvents(t, env, show)
	require.GreaterOrEqual(t, len(events), len(history))
	for i := len(events) - 1; i >= 0; i-- {
		require.NoError(t, p.Apply(ctx, events[i:i+1]))
	}
	require.NoError(t, p.Apply(ctx, events))
	require.NoError(t, p.Apply(ctx, events))
	requireConverged(t, env, store, []int64{show})
}

// TestAvailabilityOnlyAnswerAndNotModified: a caller that names
// the layout's etag gets availability only; an If-None-Match with the
// answer's ETag is 304 while nothing moved, and a hold moves it.
func TestAvailabilityOnlyAnswerAndNotModified(t *testing.T) {
	t.Parallel()
	env, _ := newEnv(t, true, nil)
	ctx := context.Background()
	show := createShow(t, env, "small answers", 4, 10, 30)
	c := as(t, env, "rumana", auth.RoleUser)
	layout, err := c.seatmap.GetSeatLayout(ctx, connect.NewRequest(&seatmapv1.GetSeatLayoutRequest{ShowId: show}))
	require.NoError(t, err)
	etag := layout.Msg.GetEtag()

	full, err := c.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: show}))
	require.NoError(t, err)
	require.False(t, full.Msg.GetAvailabilityOnly())
	require.Len(t, full.Msg.GetSections(), 1)
	small, err := c.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: show, LayoutEtag: etag}))
	require.NoError(t, err)
	require.True(t, small.Msg.GetAvailabilityOnly())
	require.Empty(t, small.Msg.GetSections())
	require.Equal(t, full.Msg.GetAvailability(), small.Msg.GetAvailability())
	require.Equal(t, full.Msg.GetVersion(), small.Msg.GetVersion())
	require.Equal(t, etag, small.Msg.GetLayoutEtag())
	require.Equal(t, int32(40), small.Msg.GetAvailabilityCount())
	require.Len(t, small.Msg.GetGaAreas(), 1)
	require.Equal(t, int32(30), small.Msg.GetGaAreas()[0].GetRemaining())
	stale, err := c.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: show, LayoutEtag: "stale"}))
	require.NoError(t, err)
	require.False(t, stale.Msg.GetAvailabilityOnly(), "an unknown etag gets the layout")
	require.Len(t, stale.Msg.GetSections(), 1)

	token := env.Token(t, "u", auth.RoleUser)
	get := func(inm string) (*http.Response, int) {
		msg := url.QueryEscape(fmt.Sprintf(`{"showId":"%d","layoutEtag":"%s"}`, show, etag))
		req, err := http.NewRequest(http.MethodGet, env.URL+
			"/seatghor.seatmap.v1.SeatMapService/GetSeatMap?connect=v1&encoding=json&message="+msg, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		if inm != "" {
			req.Header.Set("If-None-Match", inm)
		}
		resp, err := env.HTTP.Do(req)
		require.NoError(t, err)
		var n int
		buf := make([]byte, 4096)
		for {
			k, err := resp.Body.Read(buf)
			n += k
			if err != nil {
				break
			}
		}
		resp.Body.Close()
		return resp, n
	}
	first, n := get("")
	require.Equal(t, http.StatusOK, first.StatusCode)
	tag := first.Header.Get("ETag")
	require.NotEmpty(t, tag)
	again, n304 := get(tag)
	require.Equal(t, http.StatusNotModified, again.StatusCode, "nothing moved")
	require.Zero(t, n304)
	t.Logf("availability-only answer %d bytes (JSON), 304 answer %d bytes", n, n304)

	_, err = c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"B2"}}))
	require.NoError(t, err)
	// The hold reaches the map through the projector; until then the
	// answer is the same one.
	var moved *http.Response
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if resp, _ := get(tag); resp.StatusCode != http.StatusNotModified {
			moved = resp
			break
		}
	}
	require.NotNil(t, moved, "a hold moves the ETag")
	require.Equal(t, http.StatusOK, moved.StatusCode)
	require.NotEqual(t, tag, moved.Header.Get("ETag"))
}

// TestSectionAvailability: a caller asks for the section in view
// and gets that section's seats only, with where they start.
func TestSectionAvailability(t *testing.T) {
	t.Parallel()
	env, _ := newEnv(t, true, nil)
	ctx := context.Background()
	show := createSectionedShow(t, env, "sections", 3, 2, 5) // S1: seats 0-9, S2: 10-19, S3: 20-29
	c := as(t, env, "rumana", auth.RoleUser)
	// S2's rows are C and D: C1 is seat 10, D5 seat 19.
	_, err := c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"C1", "C3", "D5"}}))
	require.NoError(t, err)
	layout, err := c.seatmap.GetSeatLayout(ctx, connect.NewRequest(&seatmapv1.GetSeatLayoutRequest{ShowId: show}))
	require.NoError(t, err)

	for _, etag := range []string{"", layout.Msg.GetEtag()} {
		resp, err := c.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: show, Section: "S2", LayoutEtag: etag}))
		require.NoError(t, err)
		m := resp.Msg
		require.Equal(t, int32(10), m.GetAvailabilityOffset())
		require.Equal(t, int32(10), m.GetAvailabilityCount())
		require.Equal(t, int32(30), m.GetSeatCount())
		// C1 and C3 held (seats 0 and 2 of the section), D5 (seat 9).
		require.Equal(t, []byte{0b00_01_00_01, 0, 0b0100}, m.GetAvailability())
		if etag == "" {
			require.Len(t, m.GetSections(), 1)
			require.Equal(t, "S2", m.GetSections()[0].GetName())
		} else {
			require.True(t, m.GetAvailabilityOnly())
			require.Empty(t, m.GetSections())
		}
	}
	resp, err := c.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: show, Section: "S3"}))
	require.NoError(t, err)
	require.Equal(t, []byte{0, 0, 0}, resp.Msg.GetAvailability())
	_, err = c.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: show, Section: "S9"}))
	require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err))

	// The same over REST, the query naming the section and the layout.
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/v1/shows/%d/seatmap?section=S2&layout_etag=%s",
		env.URL, show, layout.Msg.GetEtag()), nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+env.Token(t, "u", auth.RoleUser))
	rest, err := env.HTTP.Do(req)
	require.NoError(t, err)
	defer rest.Body.Close()
	require.Equal(t, http.StatusOK, rest.StatusCode)
	var body map[string]any
	require.NoError(t, json.NewDecoder(rest.Body).Decode(&body))
	require.EqualValues(t, 10, body["availability_offset"])
	require.Equal(t, true, body["availability_only"])
	require.NotContains(t, body, "sections")
}

// TestProjectorLagWhileHoldsRunOnALargeShow reports how long a hold takes
// to show in the Redis map of a 50,000-seat show while 32 buyers hold
// distinct seats as fast as they can (issue 10 targets p99 under 100 ms;
// reported, never asserted). What is asserted: every hold reached Redis
// and the map ends equal to the database.
func TestProjectorLagWhileHoldsRunOnALargeShow(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	env, r := newEnv(t, true, nil)
	ctx := context.Background()
	show := createSectionedShow(t, env, "stadium", 10, 10, 500)
	store := seatmap.NewStore(r.Client, r.Prefix, 0)
	c0 := as(t, env, "reader", auth.RoleUser)
	_, err := c0.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: show}))
	require.NoError(t, err)
	labels := rowLabels(0, 100)

	const buyers, perBuyer = 32, 10
	var mu sync.Mutex
	var lags []time.Duration
	lost := 0
	start := time.Now()
	var wg sync.WaitGroup
	for u := range buyers {
		c := as(t, env, fmt.Sprint("fan", u), auth.RoleUser)
		wg.Go(func() {
			for i := range perBuyer {
				seat := fmt.Sprintf("%s%d", labels[(u*perBuyer+i)%100], 1+(u*perBuyer+i)/100*7%500)
				if _, err := c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{seat}})); err != nil {
					t.Error(err)
					return
				}
				done := time.Now()
				idx := seatIndex(seat, labels)
				seen := false
				for !seen && time.Since(done) < 30*time.Second {
					a, ok, err := store.Availability(ctx, show)
					if seen = err == nil && ok && a.States[idx/4]>>(2*(idx%4))&3 == booking.SeatHeld; !seen {
						time.Sleep(time.Millisecond)
					}
				}
				mu.Lock()
				if seen {
					lags = append(lags, time.Since(done))
				} else {
					lost++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	require.Zero(t, lost, "every hold reaches the Redis seat map")
	slices.Sort(lags)
	p := func(q float64) time.Duration { return lags[int(q*float64(len(lags)-1))] }
	t.Logf("50,000-seat show, %d buyers, %d holds in %v (%.0f holds/s incl. polling): hold → visible in Redis p50 %v, p95 %v, p99 %v, max %v",
		buyers, len(lags), elapsed.Round(time.Millisecond), float64(len(lags))/elapsed.Seconds(), p(.5), p(.95), p(.99), lags[len(lags)-1])
	requireConverged(t, env, store, []int64{show})
}

// seatIndex is a seat's place in layout order in a createSectionedShow
// show of 500 seats a row.
func seatIndex(seat string, labels []string) int {
	for i, l := range labels {
		if n, err := strconv.Atoi(seat[len(l):]); err == nil && seat[:len(l)] == l {
			return i*500 + n - 1
		}
	}
	return -1
}

// TestFullRebuildOfALargeShow reports how long the repair path takes for
// a 50,000-seat show: one snapshot read of the shard and the Redis write
// (Recompute), and the reader's fill (layout too). Reported, not asserted;
// asserted is that the result equals the database.
func TestFullRebuildOfALargeShow(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	env, r := newEnv(t, false, nil)
	ctx := context.Background()
	show := createSectionedShow(t, env, "stadium rebuild", 10, 10, 500)
	store := seatmap.NewStore(r.Client, r.Prefix, 0)
	p := seatmap.NewProjector(store, env.App.Booking, slog.New(slog.DiscardHandler))
	var runs []time.Duration
	for range 5 {
		require.NoError(t, store.Reset(ctx))
		start := time.Now()
		require.NoError(t, p.Recompute(ctx, show))
		runs = append(runs, time.Since(start))
	}
	requireConverged(t, env, store, []int64{show})
	reader, err := seatmap.NewReader(store, env.App.Booking, time.Now, slog.New(slog.DiscardHandler), nil)
	require.NoError(t, err)
	require.NoError(t, store.Reset(ctx))
	start := time.Now()
	m, err := reader.SeatMap(ctx, show)
	require.NoError(t, err)
	fill := time.Since(start)
	require.Equal(t, 50_000, m.SeatCount)
	// And the incremental path for comparison: batches of one hold's event.
	c := as(t, env, "one", auth.RoleUser)
	var ones []time.Duration
	for i := range 9 {
		_, err := c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{fmt.Sprint("A", i+1)}}))
		require.NoError(t, err)
		events := shardEvents(t, env, show)
		start = time.Now()
		require.NoError(t, p.Apply(ctx, events[len(events)-1:]))
		ones = append(ones, time.Since(start))
	}
	requireConverged(t, env, store, []int64{show})
	slices.Sort(runs)
	slices.Sort(ones)
	t.Logf("50,000-seat show: full recompute (shard snapshot + Redis write) median %v, min %v over %d runs; reader fill with layout %v; a batch of one hold: median %v, min %v over %d",
		runs[len(runs)/2], runs[0], len(runs), fill, ones[len(ones)/2], ones[0], len(ones))
}

// TestSmallAnswersOfALargeShow reports the size and rate of GetSeatMap
// answers of a 50,000-seat show (Connect, protobuf, 8 concurrent callers):
// whole, availability only, and one section. Reported, not asserted.
func TestSmallAnswersOfALargeShow(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	env, _ := newEnv(t, false, nil)
	ctx := context.Background()
	show := createSectionedShow(t, env, "stadium answers", 10, 10, 500)
	c := as(t, env, "reader", auth.RoleUser)
	layout, err := c.seatmap.GetSeatLayout(ctx, connect.NewRequest(&seatmapv1.GetSeatLayoutRequest{ShowId: show}))
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		req  *seatmapv1.GetSeatMapRequest
	}{
		{"whole map", &seatmapv1.GetSeatMapRequest{ShowId: show}},
		{"availability only", &seatmapv1.GetSeatMapRequest{ShowId: show, LayoutEtag: layout.Msg.GetEtag()}},
		{"one section", &seatmapv1.GetSeatMapRequest{ShowId: show, LayoutEtag: layout.Msg.GetEtag(), Section: "S4"}},
	} {
		resp, err := c.seatmap.GetSeatMap(ctx, connect.NewRequest(tc.req))
		require.NoError(t, err)
		size := proto.Size(resp.Msg)
		const callers, each = 8, 50
		start := time.Now()
		var wg sync.WaitGroup
		for range callers {
			wg.Go(func() {
				for range each {
					if _, err := c.seatmap.GetSeatMap(ctx, connect.NewRequest(tc.req)); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		el := time.Since(start)
		t.Logf("%s: %d bytes, %.0f answers/s", tc.name, size, float64(callers*each)/el.Seconds())
	}
}

// TestApplyChangesContract runs the per-seat update against the real
// redis-server and the in-process Redis of dev mode (decision 0130): a read
// older than the stored one changes nothing, a newer one changes just its
// seat, and a map that is missing or does not fit asks for a recompute.
func TestApplyChangesContract(t *testing.T) {
	t.Parallel()
	for name, r := range contractRedis(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			store := seatmap.NewStore(r.Client, r.Prefix, time.Hour)
			now := time.Now().UTC().Truncate(time.Microsecond)
			m := booking.SeatMap{ShowID: 9, Currency: "BDT", SeatCount: 5, States: []byte{0b00_00_01_00, 0b10}, // A2 held, A5 booked
				Sections: []booking.MapSection{{Name: "Main", PriceMinor: 100, Rows: []booking.MapRow{{Label: "A",
					Seats: []string{"A1", "A2", "A3", "A4", "A5"}}}}},
				GAAreas: []booking.MapArea{{Name: "Floor", Capacity: 10, Remaining: 4, PriceMinor: 50}},
				Version: 100, AsOf: now, SeatVersions: []int64{0, 3, 0, 0, 7}, GAVersions: []int64{6}}
			missing, err := store.ApplyChanges(ctx, 9, 101, booking.SeatChanges{AsOf: now})
			require.NoError(t, err)
			require.True(t, missing, "no map: recompute")
			require.NoError(t, store.Put(ctx, m))

			apply := func(v int64, c booking.SeatChanges) {
				t.Helper()
				c.AsOf = now.Add(time.Second)
				missing, err := store.ApplyChanges(ctx, 9, v, c)
				require.NoError(t, err)
				require.False(t, missing)
			}
			until := now.Add(time.Minute)
			// A2 held at version 3 in the map: a read at version 2 (older)
			// says available and is ignored; A1's read at version 1 holds it.
			apply(103, booking.SeatChanges{Seats: []booking.SeatChange{
				{Index: 1, State: booking.SeatAvailable, Version: 2},
				{Index: 0, State: booking.SeatHeld, Version: 1, HeldUntil: until},
			}, Areas: []booking.AreaChange{{Index: 0, Remaining: 9, Version: 5}}})
			a, ok, err := store.Availability(ctx, 9)
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, []byte{0b00_00_01_01, 0b10}, a.States)
			require.Equal(t, []int{4}, a.GA, "an older GA read is ignored")
			require.Equal(t, int64(103), a.Version)
			require.Equal(t, until, a.ValidUntil, "the held seat's expiry")

			// An older batch (version 102) with newer reads: seats change,
			// the version stays; then A5 booked → available at version 8,
			// applied twice; GA at version 7.
			for range 2 {
				apply(102, booking.SeatChanges{Seats: []booking.SeatChange{{Index: 4, State: booking.SeatAvailable, Version: 8}},
					Areas: []booking.AreaChange{{Index: 0, Remaining: 2, Version: 7}}})
			}
			a, _, err = store.Availability(ctx, 9)
			require.NoError(t, err)
			require.Equal(t, []byte{0b00_00_01_01, 0}, a.States)
			require.Equal(t, []int{2}, a.GA)
			require.Equal(t, int64(103), a.Version)
			// The same read of A5 at version 7 (older) cannot bring it back.
			apply(104, booking.SeatChanges{Seats: []booking.SeatChange{{Index: 4, State: booking.SeatBooked, Version: 7}}})
			a, _, err = store.Availability(ctx, 9)
			require.NoError(t, err)
			require.Equal(t, []byte{0b00_00_01_01, 0}, a.States)
			require.Equal(t, int64(104), a.Version)

			missing, err = store.ApplyChanges(ctx, 9, 105, booking.SeatChanges{AsOf: now,
				Seats: []booking.SeatChange{{Index: 40, State: booking.SeatHeld, Version: 1}}})
			require.NoError(t, err)
			require.True(t, missing, "a seat the map does not have: recompute")
			got, ok, err := store.Get(ctx, 9, now)
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, []byte{0b00_00_01_01, 0}, got.States, "a refused change writes nothing")

			// Holds that run out are let go in Redis, in expiry order.
			held := m
			held.Version, held.AsOf = 200, now.Add(time.Second)
			held.States, held.ValidUntil = []byte{0b01_00_01_01, 0}, now.Add(time.Minute)
			held.Held = []booking.HeldSeat{{Index: 0, Until: now.Add(time.Minute)}, {Index: 1, Until: now.Add(3 * time.Minute)},
				{Index: 3, Until: now.Add(2 * time.Minute)}}
			require.NoError(t, store.Put(ctx, held))
			got, ok, err = store.Get(ctx, 9, now.Add(150*time.Second))
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, []byte{0b00_00_01_00, 0}, got.States, "A1 and A4 ran out, A2 is held")
			require.Equal(t, int64(200), got.Version)
			require.Equal(t, now.Add(3*time.Minute), got.ValidUntil)
		})
	}
}

// TestLapsedHoldIsLetGoInRedis: a hold that ran out, not yet swept,
// is shown available from Redis alone, without rereading the show (the
// map keeps its held seats by expiry), and the version does not move.
func TestLapsedHoldIsLetGoInRedis(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(time.Now())
	env, r := newEnv(t, true, clk)
	ctx := context.Background()
	show := createShow(t, env, "lapse in redis", 1, 4, 0)
	c := as(t, env, "rumana", auth.RoleUser)
	_, err := c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"A1"}}))
	require.NoError(t, err)
	store := seatmap.NewStore(r.Client, r.Prefix, 0)
	requireConverged(t, env, store, []int64{show})
	clk.Advance(2 * time.Minute)
	_, err = c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"A3"}}))
	require.NoError(t, err)
	requireConverged(t, env, store, []int64{show})
	resp, err := c.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: show}))
	require.NoError(t, err)
	require.Equal(t, []byte{0b01_00_01}, resp.Msg.GetAvailability())
	v := resp.Msg.GetVersion()
	// The projector done with both holds' events: a late write of its
	// would be a change of the map, not a lapse.
	env.WaitProjected(t, seatmap.Name)

	loads := metric(t, env, "seatghor_seatmap_shard_loads_total", "")
	clk.Advance(9 * time.Minute) // A1's hold (10 minutes) ran out, A3's has a minute left
	for range 3 {
		resp, err = c.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: show}))
		require.NoError(t, err)
		require.Equal(t, []byte{0b01_00_00}, resp.Msg.GetAvailability(), "A1 free again, A3 still held")
		require.Equal(t, v, resp.Msg.GetVersion(), "no row changed")
	}
	require.Equal(t, loads, metric(t, env, "seatghor_seatmap_shard_loads_total", ""), "no reread of the show")
	a, ok, err := store.Availability(ctx, show)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, clk.Now().Add(time.Minute).UnixMicro()/1000, a.ValidUntil.UnixMicro()/1000, "exp: A3's hold")

	// The last hold lapses too, at once: the fast path shares a read for a
	// few milliseconds (decision 0232), but not one showing a hold that has
	// run out since (the clock here jumps within those milliseconds).
	clk.Advance(2 * time.Minute)
	resp, err = c.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: show}))
	require.NoError(t, err)
	require.Equal(t, []byte{0}, resp.Msg.GetAvailability(), "A3 free again")
	require.Equal(t, loads, metric(t, env, "seatghor_seatmap_shard_loads_total", ""), "no reread of the show")
}

// TestPaymentKeepsItsSeatsHeldInTheMap: a payment that
// starts extends its order's hold without a new row version; the map
// follows (PaymentStateChanged names the order), so the seats are not let
// go at the hold's first expiry.
func TestPaymentKeepsItsSeatsHeldInTheMap(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(time.Now())
	env, r := newEnv(t, true, clk)
	ctx := context.Background()
	show := createShow(t, env, "extension", 1, 4, 0)
	c := as(t, env, "rumana", auth.RoleUser)
	h, err := c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"A2"}}))
	require.NoError(t, err)
	store := seatmap.NewStore(r.Client, r.Prefix, 0)
	_, err = c.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: show}))
	require.NoError(t, err)
	clk.Advance(8 * time.Minute)
	o, err := c.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: h.Msg.GetHold().GetHoldId()}))
	require.NoError(t, err)
	requireConverged(t, env, store, []int64{show}) // the order's own event is applied first
	_, err = c.pay.StartPayment(ctx, connect.NewRequest(&paymentv1.StartPaymentRequest{
		OrderId: o.Msg.GetOrder().GetOrderId(), Sandbox: &paymentv1.SandboxPayment{Token: "tok_webhook_only"}}))
	require.NoError(t, err)
	requireConverged(t, env, store, []int64{show})
	// Converged on states and version; the extension itself is in exp.
	want := clk.Now().Add(5 * time.Minute).Truncate(time.Millisecond)
	extended := false
	for deadline := time.Now().Add(15 * time.Second); !extended && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		a, ok, err := store.Availability(ctx, show)
		extended = err == nil && ok && !a.ValidUntil.Before(want)
	}
	require.True(t, extended, "the map knows the hold's new expiry")
	// Every event taken (the show's own from the catalog among them): a
	// late one would change the map, and the count below is of lapses.
	env.WaitProjected(t, seatmap.Name)
	_, err = c.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: show})) // the layout is cached
	require.NoError(t, err)
	loads := metric(t, env, "seatghor_seatmap_shard_loads_total", "")

	clk.Advance(4 * time.Minute) // past the hold's first expiry, before the extended one
	resp, err := c.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: show}))
	require.NoError(t, err)
	require.Equal(t, []byte{0b01_00}, resp.Msg.GetAvailability(), "A2 is still held: its payment is under way")
	require.Equal(t, loads, metric(t, env, "seatghor_seatmap_shard_loads_total", ""), "from Redis, no reread")
}

// TestManyShowsInOneBatch (decision 0210): a batch that names many shows on
// two shards, as the buses' on-sale does, is read with one query per shard
// and written with one Redis pipeline; shows with a map converge to the
// database, a show without one is recomputed whole, and the same events
// again change nothing.
func TestManyShowsInOneBatch(t *testing.T) {
	t.Parallel()
	env, r := newEnv(t, false, nil)
	ctx := context.Background()
	store := seatmap.NewStore(r.Client, r.Prefix, 0)
	rumana, karim := as(t, env, "rumana", auth.RoleUser), as(t, env, "karim", auth.RoleUser)
	var shows []int64
	for i := range 10 {
		show := createShow(t, env, fmt.Sprintf("bus %d", i), 3, 4, 0)
		shows = append(shows, show)
		if i > 0 { // the first has no map in Redis yet
			m, err := env.App.Booking.SeatMap(ctx, show)
			require.NoError(t, err)
			require.NoError(t, store.Put(ctx, m))
		}
		for _, h := range []struct {
			c     caller
			seats []string
		}{{rumana, []string{"A1", "B2"}}, {karim, []string{fmt.Sprintf("C%d", i%4+1)}}} {
			resp, err := h.c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: h.seats}))
			require.NoError(t, err)
			if i%3 == 0 { // and some released again
				_, err = h.c.holds.ReleaseHold(ctx, connect.NewRequest(&bookingv1.ReleaseHoldRequest{HoldId: resp.Msg.GetHold().GetHoldId()}))
				require.NoError(t, err)
			}
		}
	}
	var events []projections.Event
	for _, show := range shows {
		events = append(events, shardEvents(t, env, show)...)
	}
	p := seatmap.NewProjector(store, env.App.Booking, slog.New(slog.DiscardHandler))
	require.NoError(t, p.Apply(ctx, events))
	requireConverged(t, env, store, shows)
	require.NoError(t, p.Apply(ctx, events))
	requireConverged(t, env, store, shows)
}

// TestPreviewShowsSeatsButKeepsTheVersion (decision 0248): previewed events
// put their seats' states in the map, but the show's version moves only
// when the events are delivered in order (a conflict answer compares it,
//
func TestPreviewShowsSeatsButKeepsTheVersion(t *testing.T) {
	t.Parallel()
	env, r := newEnv(t, false, nil)
	ctx := context.Background()
	store := seatmap.NewStore(r.Client, r.Prefix, 0)
	rumana := as(t, env, "rumana", auth.RoleUser)
	var shows []int64
	before := map[int64]int64{}
	for i := range 3 {
		show := createShow(t, env, fmt.Sprintf("bus %d", i), 3, 4, 0)
		shows = append(shows, show)
		m, err := env.App.Booking.SeatMap(ctx, show)
		require.NoError(t, err)
		require.NoError(t, store.Put(ctx, m))
		before[show] = m.Version
		_, err = rumana.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"A1", "B2"}}))
		require.NoError(t, err)
	}
	var events []projections.Event
	for _, show := range shows {
		events = append(events, shardEvents(t, env, show)...)
	}
	p := seatmap.NewProjector(store, env.App.Booking, slog.New(slog.DiscardHandler))
	shown, err := p.ApplyPreview(ctx, nil, events)
	require.NoError(t, err)
	require.Len(t, shown, len(events), "every show has a map and its events name seats")
	for _, show := range shows {
		want, err := env.App.Booking.SeatMap(ctx, show)
		require.NoError(t, err)
		got, ok, err := store.Availability(ctx, show)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, string(want.States), string(got.States), "show %d: the held seats show", show)
		require.Equal(t, before[show], got.Version, "show %d: the version waits for delivery", show)
		require.Less(t, got.Version, want.Version)
	}
	require.NoError(t, p.Apply(ctx, events))
	requireConverged(t, env, store, shows)
}

// TestApplyPreviewOfOneShowKeepsTheBatchsVersion (decision 0260): when a
// show has events both in the batch delivered in order and ahead of it,
// one read and one write show the seats of both, and the show's version
// is the batch's newest xid, not the preview's.
func TestApplyPreviewOfOneShowKeepsTheBatchsVersion(t *testing.T) {
	t.Parallel()
	env, r := newEnv(t, false, nil)
	ctx := context.Background()
	store := seatmap.NewStore(r.Client, r.Prefix, 0)
	rumana, karim := as(t, env, "rumana", auth.RoleUser), as(t, env, "karim", auth.RoleUser)
	show := createShow(t, env, "bus", 3, 4, 0)
	m, err := env.App.Booking.SeatMap(ctx, show)
	require.NoError(t, err)
	require.NoError(t, store.Put(ctx, m))
	for _, h := range []struct {
		c    caller
		seat string
	}{{rumana, "A1"}, {karim, "B2"}} {
		_, err := h.c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{h.seat}}))
		require.NoError(t, err)
	}
	events := shardEvents(t, env, show)
	require.Len(t, events, 2)
	p := seatmap.NewProjector(store, env.App.Booking, slog.New(slog.DiscardHandler))
	shown, err := p.ApplyPreview(ctx, events[:1], events[1:])
	require.NoError(t, err)
	require.Equal(t, events[1:], shown)
	want, err := env.App.Booking.SeatMap(ctx, show)
	require.NoError(t, err)
	got, ok, err := store.Availability(ctx, show)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, string(want.States), string(got.States), "both holds show")
	require.Equal(t, int64(events[0].XID), got.Version, "the version is the delivered event's")
	require.NoError(t, p.Apply(ctx, events[1:]))
	requireConverged(t, env, store, []int64{show})
}

// TestAllocatedSeatsAreTakenOnEveryRead (decision 0185): a seat ring-fenced
// for a partner is taken on the public map, held by the partner or not.
// The whole-map read, the one-show read and the many-show read (the
// projector's path for events that name seats only) agree on every seat,
// and the projector applying the allocation's events brings Redis to the
// database. The many-show read once had its own copy of the state and
// showed the allocated seats free, until an unrelated event recomputed
// the show.
func TestAllocatedSeatsAreTakenOnEveryRead(t *testing.T) {
	t.Parallel()
	env, r := newEnv(t, false, nil)
	ctx := context.Background()
	store := seatmap.NewStore(r.Client, r.Prefix, 0)
	show := createShow(t, env, "ring-fenced", 2, 4, 0) // A1…B4
	initial, err := env.App.Booking.SeatMap(ctx, show)
	require.NoError(t, err)
	require.NoError(t, store.Put(ctx, initial))

	admin := as(t, env, "admin", auth.RoleAdmin)
	agency, err := admin.partners.CreatePartner(ctx, connect.NewRequest(&partnerv1.CreatePartnerRequest{
		Name: "Agency", CommissionBps: 500, Contact: &partnerv1.Contact{Name: "Nadia", Email: "api@example.com"},
		AllowedShowIds: []int64{show}}))
	require.NoError(t, err)
	partnerID := agency.Msg.GetPartner().GetPartnerId()
	_, err = admin.alloc.AllocateSeats(ctx, connect.NewRequest(&partnerv1.AllocateSeatsRequest{
		ShowId: show, PartnerId: partnerID, Seats: []string{"A1", "A2", "A3"}, ReturnAt: timestamppb.New(time.Now().Add(2 * time.Hour))}))
	require.NoError(t, err)
	partner := withToken(env, env.PartnerToken(t, "agency", partnerID))
	_, err = partner.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"A1"}}))
	require.NoError(t, err)
	_, err = as(t, env, "rumana", auth.RoleUser).holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"B1"}}))
	require.NoError(t, err)

	seats := []string{"A1", "A2", "A3", "A4", "B1", "B2", "B3", "B4"}
	want := map[string]byte{"A1": booking.SeatBooked, "A2": booking.SeatBooked, "A3": booking.SeatBooked, "A4": booking.SeatAvailable,
		"B1": booking.SeatHeld, "B2": booking.SeatAvailable, "B3": booking.SeatAvailable, "B4": booking.SeatAvailable}
	whole, err := env.App.Booking.SeatMap(ctx, show)
	require.NoError(t, err)
	one, err := env.App.Booking.SeatChanges(ctx, show, seats, nil, false)
	require.NoError(t, err)
	many, err := env.App.Booking.ShowSeatChanges(ctx, map[int64][]string{show: seats})
	require.NoError(t, err)
	for i, seat := range seats {
		require.Equal(t, want[seat], whole.States[i/4]>>(2*(i%4))&3, "whole map, %s", seat)
	}
	byIndex := func(c booking.SeatChanges) map[int]booking.SeatChange {
		out := map[int]booking.SeatChange{}
		for _, sc := range c.Seats {
			out[sc.Index] = sc
		}
		return out
	}
	require.Equal(t, byIndex(one), byIndex(many[show]), "the one-show and many-show reads agree")
	for i, seat := range seats {
		sc := byIndex(one)[i]
		require.Equal(t, want[seat], sc.State, "seat changes, %s", seat)
		require.Equal(t, seat == "B1", !sc.HeldUntil.IsZero(), "only the public hold runs out on the map, %s", seat)
	}

	p := seatmap.NewProjector(store, env.App.Booking, slog.New(slog.DiscardHandler))
	require.NoError(t, p.Apply(ctx, shardEvents(t, env, show)))
	requireConverged(t, env, store, []int64{show})
}
