package tripindex_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/internal/testkit/meilitest"
	"github.com/seatghor/seatghor/internal/testkit/pgtest"
	"github.com/seatghor/seatghor/internal/testkit/redistest"
	"github.com/seatghor/seatghor/projections/tripindex"
	"github.com/seatghor/seatghor/server/search"
)

func TestMain(m *testing.M) {
	code := m.Run()
	meilitest.Stop()
	redistest.Cleanup()
	pgtest.Cleanup()
	os.Exit(code)
}

// The implementations under contract: every TripIndex passes the same suite.
var implementations = map[string]func(t *testing.T) tripindex.TripIndex{
	"embedded": openEmbedded,
	"meilisearch": func(t *testing.T) tripindex.TripIndex {
		s := meilitest.New(t) // skips loudly when no server can be had
		idx, err := tripindex.NewMeili(tripindex.MeiliConfig{URL: s.URL, Key: s.Key, Index: s.Index})
		require.NoError(t, err)
		t.Cleanup(func() { _ = idx.Close() })
		return idx
	},
}

func openEmbedded(t *testing.T) tripindex.TripIndex {
	idx, created, err := tripindex.OpenEmbedded(t.TempDir())
	require.NoError(t, err)
	require.True(t, created)
	t.Cleanup(func() { _ = idx.Close() })
	return idx
}

func TestContract(t *testing.T) {
	for name, open := range implementations {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runContract(t, open(t))
		})
	}
}

var base = time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)

func day(d int, hour int) time.Time {
	return base.AddDate(0, 0, d).Add(time.Duration(hour) * time.Hour)
}

const (
	bus     = catalogv1.ShowKind_SHOW_KIND_BUS_TRIP
	concert = catalogv1.ShowKind_SHOW_KIND_CONCERT
	sport   = catalogv1.ShowKind_SHOW_KIND_SPORT
)

// fixture: in start order 1, 6, 2, 3, 4, 7, 5; in price order 6, 2, 3, 1, 7
// (1 and 7 cost the same; 1 starts first), 4, 5.
func fixture() []search.Trip {
	trip := func(id int64, kind catalogv1.ShowKind, title, op, from, to, venue string, at time.Time, price int64, seats, capacity int) search.Trip {
		return search.Trip{ShowID: id, Kind: kind, Title: title, Operator: op, Origin: from, Destination: to,
			Venue: venue, StartsAt: at, OnSaleAt: base.AddDate(0, 0, -10), Currency: "BDT", LowestPriceMinor: price,
			SeatsAvailable: seats, Capacity: capacity}
	}
	named := func(t search.Trip, title, venue, op string) search.Trip {
		t.TitleBn, t.VenueBn, t.OperatorBn = title, venue, op
		return t
	}
	return []search.Trip{
		trip(1, bus, "Dhaka to Chattogram 08:00", "Green Line", "Dhaka", "Chattogram", "", day(1, 8), 85000, 40, 40),
		named(trip(2, bus, "Dhaka to Chattogram 22:00", "Hanif", "Dhaka", "Chattogram", "", day(1, 22), 60000, 0, 40), "", "", "হানিফ"),
		trip(3, bus, "Dhaka to Sylhet 07:00", "Shyamoli", "Dhaka", "Sylhet", "", day(2, 7), 70000, 10, 40),
		trip(4, bus, "Chattogram to Dhaka 09:00", "Green Line", "Chattogram", "Dhaka", "", day(2, 9), 90000, 40, 40),
		trip(5, concert, "Rooftop Unplugged", "Live Nation BD", "", "", "Gulshan, Dhaka", day(3, 19), 150000, 3, 3),
		named(trip(6, sport, "Bangladesh v India, ODI", "BCB", "", "", "Sher-e-Bangla Stadium, Mirpur", day(1, 14), 20000, 2500, 2500),
			"বাংলাদেশ বনাম ভারত, ওয়ানডে", "শেরেবাংলা স্টেডিয়াম, মিরপুর", "বিসিবি"),
		named(trip(7, bus, "Dhaka to Cox's Bazar 10:00", "Hanif", "Dhaka", "Cox's Bazar", "", day(3, 10), 85000, 40, 40), "", "", "হানিফ"),
	}
}

func ids(r search.Result) []int64 {
	out := []int64{}
	for _, t := range r.Trips {
		out = append(out, t.ShowID)
	}
	return out
}

func runContract(t *testing.T, idx tripindex.TripIndex) {
	ctx := context.Background()
	require.NoError(t, idx.Put(ctx, nil))
	require.NoError(t, idx.Put(ctx, fixture()))

	find := func(t *testing.T, q search.Query) search.Result {
		t.Helper()
		r, err := idx.Search(ctx, q)
		require.NoError(t, err)
		return r
	}
	type tc struct {
		name    string
		q       search.Query
		want    []int64
		ordered bool
	}
	cases := []tc{
		{"everything, soonest first", search.Query{}, []int64{1, 6, 2, 3, 4, 7, 5}, true},
		{"typo in a long word", search.Query{Text: "chatogram"}, []int64{1, 2, 4}, false},
		{"typo in a short word", search.Query{Text: "Sylet"}, []int64{3}, false},
		{"two typos from nine letters", search.Query{Text: "chatogrem"}, []int64{1, 2, 4}, false},
		{"too many typos", search.Query{Text: "chtogrem"}, []int64{}, false},
		{"every word must match", search.Query{Text: "dhaka chattogram"}, []int64{1, 2, 4}, false},
		{"the last word is a prefix", search.Query{Text: "unplug"}, []int64{5}, false},
		{"operator", search.Query{Text: "green line"}, []int64{1, 4}, false},
		{"venue", search.Query{Text: "mirpur"}, []int64{6}, false},
		{"an operator's name in Bengali", search.Query{Text: "হানিফ"}, []int64{2, 7}, false},
		{"a venue's name in Bengali", search.Query{Text: "শেরেবাংলা"}, []int64{6}, false},
		{"a title in Bengali", search.Query{Text: "ভারত"}, []int64{6}, false},
		{"nothing matches", search.Query{Text: "xylophone"}, []int64{}, false},
		{"origin in any case", search.Query{Origin: "  DHAKA "}, []int64{1, 2, 3, 7}, false},
		{"destination", search.Query{Destination: "chattogram"}, []int64{1, 2}, false},
		{"destination with a quote", search.Query{Destination: "cox's bazar"}, []int64{7}, false},
		{"origin is a whole name", search.Query{Origin: "dhak"}, []int64{}, false},
		{"kind", search.Query{Kind: concert}, []int64{5}, false},
		{"bus trips", search.Query{Kind: bus}, []int64{1, 2, 3, 4, 7}, false},
		{"one day", search.Query{StartsAfter: day(1, 0), StartsBefore: day(2, 0)}, []int64{1, 6, 2}, true},
		{"starts after is inclusive", search.Query{StartsAfter: day(2, 9)}, []int64{4, 7, 5}, true},
		{"price range, inclusive", search.Query{MinPriceMinor: new(int64(60000)), MaxPriceMinor: new(int64(85000))}, []int64{1, 2, 3, 7}, true},
		{"free seats", search.Query{MinSeatsAvailable: 1}, []int64{1, 6, 3, 4, 7, 5}, true},
		{"a family of eleven", search.Query{MinSeatsAvailable: 11}, []int64{1, 6, 4, 7}, true},
		{"cheapest first", search.Query{Sort: search.SortPrice}, []int64{6, 2, 3, 1, 7, 4, 5}, true},
		{"text, filters and price order", search.Query{Text: "dhaka", Kind: bus, Origin: "Dhaka",
			MaxPriceMinor: new(int64(85000)), Sort: search.SortPrice}, []int64{2, 3, 1, 7}, true},
		{"text in start order", search.Query{Text: "dhaka", Sort: search.SortStartsAt}, []int64{1, 2, 3, 4, 7, 5}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := ids(find(t, c.q))
			if c.ordered {
				require.Equal(t, c.want, got)
			} else {
				require.ElementsMatch(t, c.want, got)
			}
		})
	}

	t.Run("best match first", func(t *testing.T) {
		r := find(t, search.Query{Text: "rooftop unplugged"})
		require.Equal(t, []int64{5}, ids(r))
		r = find(t, search.Query{Text: "dhaka sylhet"})
		require.Equal(t, []int64{3}, ids(r))
	})

	t.Run("documents round-trip", func(t *testing.T) {
		r := find(t, search.Query{Text: "cox"})
		require.Len(t, r.Trips, 1)
		require.Equal(t, fixture()[6], r.Trips[0])
	})

	t.Run("pages", func(t *testing.T) {
		var got []int64
		for offset := 0; offset < 9; offset += 3 {
			r := find(t, search.Query{Limit: 3, Offset: offset, Sort: search.SortStartsAt})
			require.EqualValues(t, 7, r.EstimatedTotal)
			require.LessOrEqual(t, len(r.Trips), 3)
			got = append(got, ids(r)...)
		}
		require.Equal(t, []int64{1, 6, 2, 3, 4, 7, 5}, got)
	})

	t.Run("a route query pages across the exact route and the rest", func(t *testing.T) {
		var got []int64
		for offset := range 4 {
			r := find(t, search.Query{Text: "dhaka ctg", Limit: 1, Offset: offset})
			require.EqualValues(t, 3, r.EstimatedTotal)
			got = append(got, ids(r)...)
		}
		require.Equal(t, []int64{1, 2, 4}, got)
		require.Equal(t, []int64{2, 4}, ids(find(t, search.Query{Text: "dhaka ctg", Limit: 5, Offset: 1})))
	})

	t.Run("put replaces whole documents", func(t *testing.T) {
		changed := fixture()[0]
		changed.Title, changed.SeatsAvailable = "Dhaka to Chattogram Express", 0
		require.NoError(t, idx.Put(ctx, []search.Trip{changed}))
		require.NoError(t, idx.Put(ctx, []search.Trip{changed})) // idempotent
		r := find(t, search.Query{Text: "express"})
		require.Equal(t, []search.Trip{changed}, r.Trips)
		require.Equal(t, []int64{6, 3, 4, 7, 5}, ids(find(t, search.Query{MinSeatsAvailable: 1})))
		require.EqualValues(t, 7, find(t, search.Query{}).EstimatedTotal)
	})

	t.Run("seats alone change", func(t *testing.T) {
		// A hold or a release changes a trip's count and nothing else
		// (the embedded index keeps it outside its documents, decision
		// 0272): the filter and the answer follow, both ways.
		sylhet := fixture()[2]
		for _, seats := range []int{3, 0, 12} {
			sylhet.SeatsAvailable = seats
			require.NoError(t, idx.Put(ctx, []search.Trip{sylhet}))
			require.Equal(t, []search.Trip{sylhet}, find(t, search.Query{Text: "sylhet"}).Trips)
			want := []int64{6, 4, 7} // trip 1 sold out above
			if seats >= 11 {
				want = []int64{6, 3, 4, 7}
			}
			r := find(t, search.Query{MinSeatsAvailable: 11})
			require.Equal(t, want, ids(r), "%d seats", seats)
			require.EqualValues(t, len(want), r.EstimatedTotal)
			require.Equal(t, seats > 0, slices.Contains(ids(find(t, search.Query{MinSeatsAvailable: 1, Kind: bus})), 3))
		}
		require.NoError(t, idx.Put(ctx, fixture()[2:3]))
	})

	t.Run("reset", func(t *testing.T) {
		require.NoError(t, idx.Reset(ctx))
		require.Empty(t, find(t, search.Query{}).Trips)
		require.NoError(t, idx.Put(ctx, fixture()[:1]))
		require.Equal(t, []int64{1}, ids(find(t, search.Query{Text: "chatogram"})))
	})
}

// TestEmbeddedReopens: the embedded index is on disk; reopening it keeps
// the trips, their seat counts (written beside bleve, decision 0272) and
// says it was not created. An index whose seat file is gone starts empty
// and says so, to be filled again from the outbox.
func TestEmbeddedReopens(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	idx, created, err := tripindex.OpenEmbedded(dir)
	require.NoError(t, err)
	require.True(t, created)
	require.NoError(t, idx.Put(ctx, fixture()))
	sylhet := fixture()[2]
	sylhet.SeatsAvailable = 1 // a hold: the count alone changes
	require.NoError(t, idx.Put(ctx, []search.Trip{sylhet}))
	require.NoError(t, idx.Close())

	idx, created, err = tripindex.OpenEmbedded(dir)
	require.NoError(t, err)
	require.False(t, created)
	r, err := idx.Search(ctx, search.Query{Text: "sylhet"})
	require.NoError(t, err)
	require.Equal(t, []search.Trip{sylhet}, r.Trips)
	r, err = idx.Search(ctx, search.Query{MinSeatsAvailable: 2, Kind: bus})
	require.NoError(t, err)
	require.Equal(t, []int64{1, 4, 7}, ids(r))
	require.NoError(t, idx.Close())

	seats, err := filepath.Glob(filepath.Join(dir, "*.seats"))
	require.NoError(t, err)
	require.Len(t, seats, 1)
	require.NoError(t, os.Remove(seats[0]))
	idx, created, err = tripindex.OpenEmbedded(dir)
	require.NoError(t, err)
	defer idx.Close()
	require.True(t, created, "without its counts the index starts again")
	r, err = idx.Search(ctx, search.Query{})
	require.NoError(t, err)
	require.Empty(t, r.Trips)
}

// TestMeiliDown: a Meilisearch that does not answer makes Search and Put
// fail with ErrUnavailable, and the next searches fail at once
// without trying the server again.
func TestMeiliDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now

	idx, err := tripindex.NewMeili(tripindex.MeiliConfig{URL: "http://" + addr, Key: "k"})
	require.NoError(t, err)
	_, err = idx.Search(context.Background(), search.Query{Text: "dhaka"})
	require.ErrorIs(t, err, search.ErrUnavailable)
	_, err = idx.Search(context.Background(), search.Query{Text: "dhaka"})
	require.ErrorIs(t, err, search.ErrUnavailable)
	require.ErrorContains(t, err, "less than a second ago")
	require.ErrorIs(t, idx.Put(context.Background(), fixture()), search.ErrUnavailable)
}

// TestMeiliClientDoesNotAskForGzip pins the cause of the 44 ms searches
// (decision 0050): Go's default transport asks for gzip, which makes
// Meilisearch stream the answer in two segments into Nagle's algorithm and
// the client's delayed ACK. The adapter's client must not ask for it.
func TestMeiliClientDoesNotAskForGzip(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Accept-Encoding"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"hits":[],"estimatedTotalHits":0}`))
	}))
	defer srv.Close()
	for _, c := range []*http.Client{{}, tripindex.NewHTTPClient()} {
		idx, err := tripindex.NewMeili(tripindex.MeiliConfig{URL: srv.URL, HTTPClient: c})
		require.NoError(t, err)
		_, _ = idx.Search(context.Background(), search.Query{Text: "x"})
	}
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, seen)
	require.Equal(t, "gzip", seen[0], "Go's default client asks for gzip")
	require.Empty(t, seen[len(seen)-1], "the adapter's client must not")
}

// TestMeiliIndexDeletedBehindItsBack: an index deleted on the server is
// created again, with its settings, by the next search or write.
func TestMeiliIndexDeletedBehindItsBack(t *testing.T) {
	s := meilitest.New(t)
	ctx := context.Background()
	idx, err := tripindex.NewMeili(tripindex.MeiliConfig{URL: s.URL, Key: s.Key, Index: s.Index})
	require.NoError(t, err)
	defer idx.Close()
	require.NoError(t, idx.Put(ctx, fixture()))
	req, err := http.NewRequest(http.MethodDelete, s.URL+"/indexes/"+s.Index, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+s.Key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	// The deletion is a task too: search until it has run. A search that
	// finds the index gone makes it again; on a loaded machine that may
	// outlast one search's timeout (1 s), and the search says unavailable
	// while the next one waits on the same tasks (ensure keeps them).
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		r, err := idx.Search(ctx, search.Query{})
		if errors.Is(err, search.ErrUnavailable) {
			require.True(t, time.Now().Before(deadline), "the index was not made again: %v", err)
			continue
		}
		require.NoError(t, err)
		if len(r.Trips) == 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "the index was not deleted")
	}
	require.NoError(t, idx.Put(ctx, fixture()))
	r, err := idx.Search(ctx, search.Query{Text: "chatogram", Sort: search.SortPrice})
	require.NoError(t, err)
	require.Equal(t, []int64{2, 1, 4}, ids(r), "the settings are back: filters and sorts work")
}

// TestMeiliSynonymsFromGazetteer: the Meilisearch index carries the
// gazetteer's spellings as synonyms of the place tokens (its synonyms
// setting), for a query that reaches the server unnormalised (decision 0110).
func TestMeiliSynonymsFromGazetteer(t *testing.T) {
	s := meilitest.New(t)
	ctx := context.Background()
	idx, err := tripindex.NewMeili(tripindex.MeiliConfig{URL: s.URL, Key: s.Key, Index: s.Index})
	require.NoError(t, err)
	defer idx.Close()
	require.NoError(t, idx.Put(ctx, fixture()))
	req, err := http.NewRequest(http.MethodGet, s.URL+"/indexes/"+s.Index+"/settings/synonyms", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+s.Key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var synonyms map[string][]string
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&synonyms))
	for spelling, token := range map[string]string{"chittagong": "chattogram", "ctg": "chattogram",
		"comilla": "cumilla", "চট্টগ্রাম": "chattogram", "moulvi bazar": "moulvibazar", "cox s bazar": "coxsbazar"} {
		require.Equal(t, []string{token}, synonyms[spelling], spelling)
	}
}

// TestEmbeddedTakesCountsAlone (decision 0272): PutSeats changes the counts
// of the trips the index holds, which the filter, the answer and a reopen
// follow, and returns the ids it does not hold, which it leaves out.
func TestEmbeddedTakesCountsAlone(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	idx, _, err := tripindex.OpenEmbedded(dir)
	require.NoError(t, err)
	require.NoError(t, idx.Put(ctx, fixture()))
	unknown, err := idx.PutSeats(ctx, map[int64]int{3: 0, 4: 5, 99: 7})
	require.NoError(t, err)
	require.Equal(t, []int64{99}, unknown)
	for round := range 2 {
		r, err := idx.Search(ctx, search.Query{Kind: bus})
		require.NoError(t, err)
		seats := map[int64]int{}
		for _, trip := range r.Trips {
			seats[trip.ShowID] = trip.SeatsAvailable
		}
		require.Equal(t, map[int64]int{1: 40, 2: 0, 3: 0, 4: 5, 7: 40}, seats, "round %d", round)
		r, err = idx.Search(ctx, search.Query{Kind: bus, MinSeatsAvailable: 6})
		require.NoError(t, err)
		require.Equal(t, []int64{1, 7}, ids(r), "round %d", round)
		require.NoError(t, idx.Close())
		if idx, _, err = tripindex.OpenEmbedded(dir); err != nil {
			t.Fatal(err)
		}
	}
	require.NoError(t, idx.Close())
}

// TestMeiliSetupIsNotSubmittedAgain: a setup cut short by its caller's
// deadline — a search's second while a restarted server is slow — waits for
// the tasks it submitted on the next call instead of submitting them again,
// so a slow server is not flooded with index creations and settings
// updates, each re-indexing every trip (what `seatghor chaos` found after a
// Meilisearch outage, decision 0413).
func TestMeiliSetupIsNotSubmittedAgain(t *testing.T) {
	s := meilitest.New(t)
	target, err := url.Parse(s.URL)
	require.NoError(t, err)
	var mu sync.Mutex
	slow := true
	submitted := map[string]int{}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ErrorLog = log.New(io.Discard, "", 0) // the cut-short waits
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if r.Method != http.MethodGet {
			submitted[r.Method+" "+r.URL.Path]++
		}
		delay := slow && strings.HasPrefix(r.URL.Path, "/tasks/")
		mu.Unlock()
		if delay { // a busy server: its tasks take longer than the caller waits
			select {
			case <-time.After(3 * time.Second):
			case <-r.Context().Done():
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	defer srv.Close()
	idx, err := tripindex.NewMeili(tripindex.MeiliConfig{URL: srv.URL, Key: s.Key, Index: s.Index, WriteTimeout: 2 * time.Second})
	require.NoError(t, err)
	defer idx.Close()
	ctx := context.Background()
	count := func(what string) int {
		mu.Lock()
		defer mu.Unlock()
		return submitted[what]
	}
	for range 3 {
		require.ErrorIs(t, idx.Put(ctx, fixture()), search.ErrUnavailable)
	}
	require.Equal(t, 1, count("POST /indexes"), "the index is asked for once")
	require.LessOrEqual(t, count("PATCH /indexes/"+s.Index+"/settings"), 1, "the settings at most once")
	mu.Lock()
	slow = false
	mu.Unlock()
	// Searches (a second each) finish the same setup once the server keeps
	// up; however long that takes here, nothing is submitted twice.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		_, err := idx.Search(ctx, search.Query{Text: "dhaka"})
		if err == nil {
			break
		}
		require.True(t, time.Now().Before(deadline), "the server is quick again, and still: %v", err)
	}
	require.Equal(t, 1, count("POST /indexes"))
	require.Equal(t, 1, count("PATCH /indexes/"+s.Index+"/settings"))
}
