package tripindex_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/timestamppb"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	"github.com/seatghor/seatghor/gen/seatghor/booking/v1/bookingv1connect"
	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/gen/seatghor/catalog/v1/catalogv1connect"
	searchv1 "github.com/seatghor/seatghor/gen/seatghor/search/v1"
	"github.com/seatghor/seatghor/gen/seatghor/search/v1/searchv1connect"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/internal/testkit/meilitest"
	"github.com/seatghor/seatghor/projections/tripindex"
	"github.com/seatghor/seatghor/server/app"
	"github.com/seatghor/seatghor/server/auth"
)

// authAs adds a caller's token, and a fresh idempotency key to writes.
func authAs(tb testing.TB, env *apptest.Env, sub string, role auth.Role) connect.ClientOption {
	token := env.Token(tb, sub, role)
	n := 0
	var mu sync.Mutex
	return connect.WithInterceptors(connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			req.Header().Set("Authorization", "Bearer "+token)
			if req.Spec().IdempotencyLevel != connect.IdempotencyNoSideEffects {
				mu.Lock()
				n++
				req.Header().Set("Idempotency-Key", fmt.Sprintf("%s-%d-%d", sub, time.Now().UnixNano(), n))
				mu.Unlock()
			}
			return next(ctx, req)
		}
	}))
}

// TestSearchThroughTheAPI runs the trip index end to end on each
// implementation: shows created through CatalogService reach the index
// through the outbox and the projector, SearchTrips finds them by
// misspelled words, filters, sorts and pages them (Connect, gRPC and REST),
// availability follows a burst of holds with far fewer index writes than
// holds (debouncing), and a rebuild refills the index.
func TestSearchThroughTheAPI(t *testing.T) {
	for name, index := range map[string]func(t *testing.T) app.TripIndexConfig{
		"embedded": func(t *testing.T) app.TripIndexConfig { return app.TripIndexConfig{Dir: t.TempDir()} },
		"meilisearch": func(t *testing.T) app.TripIndexConfig {
			s := meilitest.New(t)
			return app.TripIndexConfig{MeiliURL: s.URL, MeiliKey: s.Key, MeiliIndex: s.Index}
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runSearchThroughTheAPI(t, index(t))
		})
	}
}

func runSearchThroughTheAPI(t *testing.T, index app.TripIndexConfig) {
	ctx := context.Background()
	index.Debounce = time.Second
	env := apptest.New(t, apptest.Options{Shards: 2, Projectors: true, TripIndex: index})
	admin := catalogv1connect.NewCatalogServiceClient(env.HTTP, env.URL, authAs(t, env, "admin", auth.RoleAdmin))
	user := searchv1connect.NewTripSearchServiceClient(env.HTTP, env.URL, authAs(t, env, "rumana", auth.RoleUser))

	// Times are Dhaka's wall clock (the shows' default zone, decision 0170).
	dhaka, err := time.LoadLocation("Asia/Dhaka")
	require.NoError(t, err)
	y, m, d := time.Now().In(dhaka).AddDate(0, 0, 30).Date()
	at := func(hour, minute int) time.Time { return time.Date(y, m, d, hour, minute, 0, 0, dhaka) }
	day := at(0, 0)
	rows := []string{"A", "B", "C", "D", "E", "F", "G", "H", "I", "J"}
	create := func(req *catalogv1.CreateShowRequest) int64 {
		req.Currency = "BDT"
		resp, err := admin.CreateShow(ctx, connect.NewRequest(req))
		require.NoError(t, err)
		return resp.Msg.GetShow().GetShowId()
	}
	bus := func(title, from, to string, at time.Time, price int64) *catalogv1.CreateShowRequest {
		return &catalogv1.CreateShowRequest{Kind: catalogv1.ShowKind_SHOW_KIND_BUS_TRIP, Title: title, Operator: "Green Line",
			Origin: from, Destination: to, StartsAt: timestamppb.New(at),
			Sections: []*catalogv1.Section{{Name: "Main", Rows: rows, SeatsPerRow: 10, PriceMinor: price}}}
	}
	ctg := create(bus("Dhaka to Chattogram 08:00", "Dhaka", "Chattogram", at(8, 0), 85000))
	// 02:00 in Dhaka the next day: 20:00 UTC on the day before.
	syl := create(bus("Dhaka to Sylhet 02:00", "Dhaka", "Sylhet", at(26, 0), 70000))
	back := create(bus("Chattogram to Dhaka 09:00", "Chattogram", "Dhaka", at(33, 0), 90000))
	gig := create(&catalogv1.CreateShowRequest{Kind: catalogv1.ShowKind_SHOW_KIND_CONCERT, Title: "Rooftop Unplugged",
		Venue: "Gulshan, Dhaka", StartsAt: timestamppb.New(at(43, 0)),
		GaAreas: []*catalogv1.GaArea{{Name: "General", Capacity: 3, PriceMinor: 150000}}})

	searchIDs := func(req *searchv1.SearchTripsRequest) ([]int64, *searchv1.SearchTripsResponse) {
		t.Helper()
		resp, err := user.SearchTrips(ctx, connect.NewRequest(req))
		require.NoError(t, err)
		ids := []int64{}
		for _, h := range resp.Msg.GetTrips() {
			ids = append(ids, h.GetShowId())
		}
		return ids, resp.Msg
	}
	// The index is a read model: it catches up within about a second.
	eventually := func(what string, req *searchv1.SearchTripsRequest, want []int64) {
		t.Helper()
		var got []int64
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(25 * time.Millisecond) {
			if got, _ = searchIDs(req); fmt.Sprint(got) == fmt.Sprint(want) {
				return
			}
		}
		t.Fatalf("%s: search answered %v, want %v", what, got, want)
	}
	byTime := searchv1.TripSort_TRIP_SORT_STARTS_AT
	eventually("all four listed", &searchv1.SearchTripsRequest{Sort: byTime}, []int64{ctg, syl, back, gig})

	date := day.Format(time.DateOnly)
	cases := []struct {
		name string
		req  *searchv1.SearchTripsRequest
		want []int64
	}{
		{"misspelled destination", &searchv1.SearchTripsRequest{Query: "chatogram", Sort: byTime}, []int64{ctg, back}},
		{"misspelled title word", &searchv1.SearchTripsRequest{Query: "Unpluged"}, []int64{gig}},
		{"misspelled origin and destination", &searchv1.SearchTripsRequest{Query: "dhakka silhet"}, []int64{syl}},
		{"origin and date", &searchv1.SearchTripsRequest{Origin: "dhaka", Date: date, Sort: byTime}, []int64{ctg}},
		// The date is the local day of departure (decision 0172): the
		// 02:00 bus is the next day's, though it is the day before in UTC.
		{"the local day", &searchv1.SearchTripsRequest{Origin: "dhaka", Date: day.AddDate(0, 0, 1).Format(time.DateOnly), Sort: byTime}, []int64{syl}},
		{"destination", &searchv1.SearchTripsRequest{Destination: "Dhaka"}, []int64{back}},
		{"kind", &searchv1.SearchTripsRequest{Kind: catalogv1.ShowKind_SHOW_KIND_CONCERT}, []int64{gig}},
		{"price range", &searchv1.SearchTripsRequest{MinPriceMinor: new(int64(80000)), MaxPriceMinor: new(int64(90000)), Sort: byTime}, []int64{ctg, back}},
		{"cheapest first", &searchv1.SearchTripsRequest{Sort: searchv1.TripSort_TRIP_SORT_PRICE}, []int64{syl, ctg, back, gig}},
		{"a date with nothing", &searchv1.SearchTripsRequest{Date: day.AddDate(0, 0, 5).Format(time.DateOnly)}, []int64{}},
	}
	for _, c := range cases {
		got, _ := searchIDs(c.req)
		require.Equal(t, c.want, got, c.name)
	}

	for _, bad := range []*searchv1.SearchTripsRequest{{Date: "2026-13-45"}, {Date: "24/12/2026"}, {PageToken: "nope"},
		{MinPriceMinor: new(int64(5)), MaxPriceMinor: new(int64(4))}} {
		_, err := user.SearchTrips(ctx, connect.NewRequest(bad))
		require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err), "%v: %v", bad, err)
	}

	// Pages of two, in start order, through next_page_token.
	var paged []int64
	req := &searchv1.SearchTripsRequest{Sort: byTime, PageSize: 2}
	for {
		ids, resp := searchIDs(req)
		require.EqualValues(t, 4, resp.GetEstimatedTotalHits())
		paged = append(paged, ids...)
		if resp.GetNextPageToken() == "" {
			break
		}
		req.PageToken = resp.GetNextPageToken()
	}
	require.Equal(t, []int64{ctg, syl, back, gig}, paged)

	// The hit carries the listing and the availability.
	_, resp := searchIDs(&searchv1.SearchTripsRequest{Query: "sylhet"})
	require.Len(t, resp.GetTrips(), 1)
	hit := resp.GetTrips()[0]
	require.Equal(t, "Dhaka to Sylhet 02:00", hit.GetTitle())
	require.Equal(t, "Green Line", hit.GetOperator())
	require.Equal(t, "BDT", hit.GetLowestPrice().GetCurrency())
	require.EqualValues(t, 70000, hit.GetLowestPrice().GetAmountMinor())
	require.EqualValues(t, 100, hit.GetSeatsAvailable())
	require.EqualValues(t, 100, hit.GetCapacity())
	require.True(t, hit.GetStartsAt().AsTime().Equal(at(26, 0)))
	require.Equal(t, "Asia/Dhaka", hit.GetStartsAtLocal().GetTimeZone())
	require.Equal(t, at(26, 0).Format("Mon 2 Jan 2006, 15:04")+" (Asia/Dhaka, +06)", hit.GetStartsAtLocal().GetEn())

	// gRPC answers the same.
	grpc := searchv1connect.NewTripSearchServiceClient(env.H2C, env.URL, connect.WithGRPC(), authAs(t, env, "karim", auth.RoleUser))
	gresp, err := grpc.SearchTrips(ctx, connect.NewRequest(&searchv1.SearchTripsRequest{Query: "chatogram", Origin: "Dhaka"}))
	require.NoError(t, err)
	require.Len(t, gresp.Msg.GetTrips(), 1)
	require.Equal(t, ctg, gresp.Msg.GetTrips()[0].GetShowId())

	// REST: GET /v1/trips:search with the filters as query parameters.
	q := url.Values{"query": {"chatogram"}, "origin": {"Dhaka"}, "date": {date}}
	hreq, err := http.NewRequest(http.MethodGet, env.URL+"/v1/trips:search?"+q.Encode(), nil)
	require.NoError(t, err)
	hreq.Header.Set("Authorization", "Bearer "+env.Token(t, "rumana", auth.RoleUser))
	hresp, err := env.HTTP.Do(hreq)
	require.NoError(t, err)
	body, _ := io.ReadAll(hresp.Body)
	_ = hresp.Body.Close()
	require.Equal(t, http.StatusOK, hresp.StatusCode, string(body))
	var rest struct {
		Trips []struct {
			ShowID string `json:"show_id"`
		} `json:"trips"`
	}
	require.NoError(t, json.Unmarshal(body, &rest), string(body))
	require.Len(t, rest.Trips, 1, string(body))
	require.Equal(t, fmt.Sprint(ctg), rest.Trips[0].ShowID)

	// A burst of 100 one-seat holds on one show: the availability in the
	// index falls to 0 eventually, in far fewer index writes than holds.
	before := counter(t, env, "seatghor_tripindex_documents_written_total")
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for w := range 10 {
		wg.Go(func() {
			for i := range 10 {
				buyer := fmt.Sprintf("buyer-%d-%d", w, i)
				holds := bookingv1connect.NewHoldServiceClient(env.HTTP, env.URL, authAs(t, env, buyer, auth.RoleUser))
				seat := fmt.Sprintf("%s%d", rows[w], i+1)
				if _, err := holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: ctg, Seats: []string{seat}})); err != nil {
					errs <- fmt.Errorf("hold %s: %w", seat, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	eventually("sold out after 100 holds", &searchv1.SearchTripsRequest{Query: "chatogram", MinSeatsAvailable: 1}, []int64{back})
	_, resp = searchIDs(&searchv1.SearchTripsRequest{Query: "chatogram", Origin: "Dhaka"})
	require.EqualValues(t, 0, resp.GetTrips()[0].GetSeatsAvailable())
	writes := counter(t, env, "seatghor_tripindex_documents_written_total") - before
	t.Logf("100 holds on one show cost %.0f trip index writes (debounce %s)", writes, index.Debounce)
	require.Less(t, writes, 25.0, "availability updates are debounced per show")

	// `seatghor rebuild tripindex`: the index is dropped and replayed.
	require.NoError(t, env.App.Projections.Rebuild(ctx, tripindex.Name))
	eventually("rebuilt", &searchv1.SearchTripsRequest{Sort: byTime, MinSeatsAvailable: 1}, []int64{syl, back, gig})
}

// counter reads a counter of the platform's registry.
func counter(t *testing.T, env *apptest.Env, name string) float64 {
	t.Helper()
	mfs, err := env.App.Registry.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == name {
			sum := 0.0
			for _, m := range mf.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
			return sum
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// TestSearchUnavailableWhileIndexDown: with Meilisearch unreachable,
// SearchTrips answers UNAVAILABLE while shows are created and seats
// held as usual.
func TestSearchUnavailableWhileIndexDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	down := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close())
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Shards: 1, Projectors: true, ProjectorMaxBackoff: 200 * time.Millisecond,
		TripIndex: app.TripIndexConfig{MeiliURL: down, MeiliKey: "k"}})
	admin := catalogv1connect.NewCatalogServiceClient(env.HTTP, env.URL, authAs(t, env, "admin", auth.RoleAdmin))
	show, err := admin.CreateShow(ctx, connect.NewRequest(&catalogv1.CreateShowRequest{
		Kind: catalogv1.ShowKind_SHOW_KIND_BUS_TRIP, Title: "Dhaka to Khulna", Origin: "Dhaka", Destination: "Khulna",
		StartsAt: timestamppb.New(time.Now().Add(48 * time.Hour)), Currency: "BDT",
		Sections: []*catalogv1.Section{{Name: "Main", Rows: []string{"A"}, SeatsPerRow: 4, PriceMinor: 60000}}}))
	require.NoError(t, err)

	user := searchv1connect.NewTripSearchServiceClient(env.HTTP, env.URL, authAs(t, env, "rumana", auth.RoleUser))
	start := time.Now()
	_, err = user.SearchTrips(ctx, connect.NewRequest(&searchv1.SearchTripsRequest{Query: "khulna"}))
	require.Equal(t, connect.CodeUnavailable, connect.CodeOf(err), "%v", err)
	t.Logf("SearchTrips answered %v in %v with the index down", connect.CodeOf(err), time.Since(start))

	holds := bookingv1connect.NewHoldServiceClient(env.HTTP, env.URL, authAs(t, env, "rumana", auth.RoleUser))
	_, err = holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show.Msg.GetShow().GetShowId(), Seats: []string{"A1"}}))
	require.NoError(t, err, "booking does not depend on the index")
}

// TestSearchWithoutIndex: a platform without a trip index answers
// UNAVAILABLE, not an error.
func TestSearchWithoutIndex(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 1})
	user := searchv1connect.NewTripSearchServiceClient(env.HTTP, env.URL, authAs(t, env, "rumana", auth.RoleUser))
	_, err := user.SearchTrips(context.Background(), connect.NewRequest(&searchv1.SearchTripsRequest{}))
	require.Equal(t, connect.CodeUnavailable, connect.CodeOf(err))
	anonymous := searchv1connect.NewTripSearchServiceClient(env.HTTP, env.URL)
	_, err = anonymous.SearchTrips(context.Background(), connect.NewRequest(&searchv1.SearchTripsRequest{}))
	require.Equal(t, connect.CodeUnavailable, connect.CodeOf(err), "search is public (R-9.1), and here unavailable")
}

// TestIndexOutageAndCatchUp: with Meilisearch stopped, shows are created and
// seats held as usual while SearchTrips answers UNAVAILABLE; when it
// is back, the projector catches up from its checkpoint and the index shows
// everything that happened meanwhile.
func TestIndexOutageAndCatchUp(t *testing.T) {
	meili := meilitest.Own(t)
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Shards: 1, Projectors: true, ProjectorMaxBackoff: 300 * time.Millisecond,
		TripIndex: app.TripIndexConfig{MeiliURL: meili.URL, MeiliKey: meili.Key, MeiliIndex: meili.Index, Debounce: 200 * time.Millisecond}})
	admin := catalogv1connect.NewCatalogServiceClient(env.HTTP, env.URL, authAs(t, env, "admin", auth.RoleAdmin))
	user := searchv1connect.NewTripSearchServiceClient(env.HTTP, env.URL, authAs(t, env, "rumana", auth.RoleUser))
	holds := bookingv1connect.NewHoldServiceClient(env.HTTP, env.URL, authAs(t, env, "rumana", auth.RoleUser))
	create := func(title, to string) int64 {
		resp, err := admin.CreateShow(ctx, connect.NewRequest(&catalogv1.CreateShowRequest{
			Kind: catalogv1.ShowKind_SHOW_KIND_BUS_TRIP, Title: title, Origin: "Dhaka", Destination: to,
			StartsAt: timestamppb.New(time.Now().Add(72 * time.Hour)), Currency: "BDT",
			Sections: []*catalogv1.Section{{Name: "Main", Rows: []string{"A"}, SeatsPerRow: 4, PriceMinor: 60000}}}))
		require.NoError(t, err)
		return resp.Msg.GetShow().GetShowId()
	}
	// seats answers each listed show's seats available, once the index answers.
	seats := func() (map[int64]int32, error) {
		resp, err := user.SearchTrips(ctx, connect.NewRequest(&searchv1.SearchTripsRequest{Origin: "dhaka"}))
		if err != nil {
			return nil, err
		}
		out := map[int64]int32{}
		for _, h := range resp.Msg.GetTrips() {
			out[h.GetShowId()] = h.GetSeatsAvailable()
		}
		return out, nil
	}
	eventually := func(want map[int64]int32) {
		t.Helper()
		var got map[int64]int32
		var err error
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if got, err = seats(); err == nil && fmt.Sprint(got) == fmt.Sprint(want) {
				return
			}
		}
		t.Fatalf("index shows %v (%v), want %v", got, err, want)
	}

	khulna := create("Dhaka to Khulna", "Khulna")
	eventually(map[int64]int32{khulna: 4})

	meili.Stop(t)
	_, err := holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: khulna, Seats: []string{"A1", "A2"}}))
	require.NoError(t, err, "holds do not need the index")
	barishal := create("Dhaka to Barishal", "Barishal")
	_, err = seats()
	require.Equal(t, connect.CodeUnavailable, connect.CodeOf(err), "%v", err)

	meili.Start(t)
	eventually(map[int64]int32{khulna: 2, barishal: 4})
}

// TestDeepSearchOff: with deep search switched off the text is
// ignored, the filters answer, and the answer says it is degraded.
func TestDeepSearchOff(t *testing.T) {
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Shards: 1, Projectors: true,
		TripIndex: app.TripIndexConfig{Dir: t.TempDir(), DeepSearchOff: true}})
	admin := catalogv1connect.NewCatalogServiceClient(env.HTTP, env.URL, authAs(t, env, "admin", auth.RoleAdmin))
	user := searchv1connect.NewTripSearchServiceClient(env.HTTP, env.URL, authAs(t, env, "rumana", auth.RoleUser))
	show, err := admin.CreateShow(ctx, connect.NewRequest(&catalogv1.CreateShowRequest{
		Kind: catalogv1.ShowKind_SHOW_KIND_BUS_TRIP, Title: "Dhaka to Rangpur", Origin: "Dhaka", Destination: "Rangpur",
		StartsAt: timestamppb.New(time.Now().Add(48 * time.Hour)), Currency: "BDT",
		Sections: []*catalogv1.Section{{Name: "Main", Rows: []string{"A"}, SeatsPerRow: 4, PriceMinor: 60000}}}))
	require.NoError(t, err)
	var resp *connect.Response[searchv1.SearchTripsResponse]
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(25 * time.Millisecond) {
		resp, err = user.SearchTrips(ctx, connect.NewRequest(&searchv1.SearchTripsRequest{Query: "no such words", Destination: "rangpur"}))
		require.NoError(t, err)
		if len(resp.Msg.GetTrips()) == 1 || time.Now().After(deadline) {
			break
		}
	}
	require.Len(t, resp.Msg.GetTrips(), 1)
	require.Equal(t, show.Msg.GetShow().GetShowId(), resp.Msg.GetTrips()[0].GetShowId())
	require.True(t, resp.Msg.GetDegraded())
	resp, err = user.SearchTrips(ctx, connect.NewRequest(&searchv1.SearchTripsRequest{Destination: "rangpur"}))
	require.NoError(t, err)
	require.False(t, resp.Msg.GetDegraded(), "without text nothing was left out")
}

// TestBatchReadsEqualShowByShow (decision 0246): the trip index's batched
// reads, one catalog query for the listings and one query per shard for
// the seats available, give each show's document as the per-show reads do,
// for seated and GA shows on two shards with holds, and leave out a show
// that does not exist.
func TestBatchReadsEqualShowByShow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Shards: 2})
	admin := catalogv1connect.NewCatalogServiceClient(env.HTTP, env.URL, authAs(t, env, "admin", auth.RoleAdmin))
	holds := bookingv1connect.NewHoldServiceClient(env.HTTP, env.URL, authAs(t, env, "rumana", auth.RoleUser))
	var shows []int64
	for i := range 4 {
		req := &catalogv1.CreateShowRequest{Kind: catalogv1.ShowKind_SHOW_KIND_BUS_TRIP, Title: fmt.Sprint("bus ", i),
			Operator: "Hanif", Origin: "Dhaka", Destination: "Sylhet", Currency: "BDT",
			StartsAt: timestamppb.New(time.Now().Add(48 * time.Hour)),
			Sections: []*catalogv1.Section{{Name: "Main", Rows: []string{"A", "B"}, SeatsPerRow: 4, PriceMinor: 70000}}}
		if i == 3 {
			req = &catalogv1.CreateShowRequest{Kind: catalogv1.ShowKind_SHOW_KIND_CONCERT, Title: "gig", Venue: "Dhaka",
				Currency: "BDT", StartsAt: timestamppb.New(time.Now().Add(48 * time.Hour)),
				GaAreas: []*catalogv1.GaArea{{Name: "Floor", Capacity: 20, PriceMinor: 100000}}}
		}
		resp, err := admin.CreateShow(ctx, connect.NewRequest(req))
		require.NoError(t, err)
		shows = append(shows, resp.Msg.GetShow().GetShowId())
	}
	for i, show := range shows[:2] {
		_, err := holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"A1", "B" + fmt.Sprint(i+1)}}))
		require.NoError(t, err)
	}
	_, err := holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: shows[3], GaArea: "Floor", Quantity: new(int32(3))}))
	require.NoError(t, err)

	ids := append(slices.Clone(shows), 999_999_999)
	listed, err := env.App.Catalog.ShowListings(ctx, ids)
	require.NoError(t, err)
	counts, err := env.App.Booking.AvailableMany(ctx, ids)
	require.NoError(t, err)
	require.Len(t, listed, len(shows), "the unknown show is left out")
	require.Len(t, counts, len(shows), "the unknown show is left out")
	for _, id := range shows {
		show, err := env.App.Catalog.GetShow(ctx, id)
		require.NoError(t, err)
		n, err := env.App.Booking.Available(ctx, id)
		require.NoError(t, err)
		require.Equal(t, tripindex.FromShow(show), tripindex.FromShow(listed[id]), "show %d", id)
		require.Equal(t, n, counts[id], "show %d", id)
	}
	require.EqualValues(t, []int64{6, 6, 8, 17}, []int64{counts[shows[0]], counts[shows[1]], counts[shows[2]], counts[shows[3]]})
}
