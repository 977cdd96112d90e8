package tripindex_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/internal/testkit/meilitest"
	"github.com/seatghor/seatghor/projections/tripindex"
	"github.com/seatghor/seatghor/server/search"
)

// latencyTrips: n bus trips between 24 places, under their official names,
// some under former names and some in Bengali, over 60 days.
func latencyTrips(n int) []search.Trip {
	places := []string{"Dhaka", "Chattogram", "Chittagong", "Cox's Bazar", "Sylhet", "Cumilla", "Comilla",
		"Barishal", "Barisal", "Jashore", "Bogura", "Rajshahi", "Khulna", "Rangpur", "Mymensingh", "Dinajpur",
		"Kushtia", "Feni", "Noakhali", "Gabtoli", "Sayedabad", "ঢাকা", "চট্টগ্রাম", "সিলেট"}
	operators := []string{"Green Line", "Hanif", "Shyamoli", "Ena", "Tisha", "Sakura", "Desh Travels", "Soudia"}
	r := rand.New(rand.NewPCG(14, 14))
	out := make([]search.Trip, n)
	for i := range out {
		from := places[r.IntN(len(places))]
		to := places[r.IntN(len(places))]
		for to == from {
			to = places[r.IntN(len(places))]
		}
		at := base.Add(time.Duration(r.IntN(60*24*60)) * time.Minute)
		out[i] = search.Trip{ShowID: int64(i + 1), Kind: bus, Title: fmt.Sprintf("%s to %s %s", from, to, at.Format("15:04")),
			Operator: operators[r.IntN(len(operators))], Origin: from, Destination: to, StartsAt: at,
			OnSaleAt: base.AddDate(0, 0, -10), Currency: "BDT", LowestPriceMinor: int64(40000 + 1000*r.IntN(60)),
			SeatsAvailable: r.IntN(41), Capacity: 40}
	}
	return out
}

// BenchmarkSearchLatency measures one search on 10,000 trips in each
// implementation: the plain filter query (origin and destination, by
// departure) next to text searches through the place normalisation (old
// names, joined words, Bengali, two-place routes). It reports p50 and p99
// per query kind; docs/performance.md "Trip search" has one run:
//
//	go test ./projections/tripindex -run '^$' -bench SearchLatency -benchtime 400x
func BenchmarkSearchLatency(b *testing.B) {
	trips := latencyTrips(10_000)
	kinds := []struct {
		name    string
		queries []search.Query
	}{
		{"filter", []search.Query{
			{Origin: "Dhaka", Destination: "Chattogram", Sort: search.SortStartsAt},
			{Origin: "Sylhet", Destination: "Dhaka", Sort: search.SortStartsAt},
			{Origin: "Khulna", Sort: search.SortStartsAt},
		}},
		{"text", []search.Query{
			{Text: "chittagong"}, {Text: "coxs bazar"}, {Text: "ঢাকা"}, {Text: "green line barisal"},
			{Text: "chatogram"}, {Text: "sylhet hanif"},
		}},
		{"route", []search.Query{
			{Text: "dhaka ctg"}, {Text: "ঢাকা থেকে চট্টগ্রাম"}, {Text: "comilla dhaka"}, {Text: "barisal to khulna"},
		}},
	}
	for name, open := range map[string]func(tb testing.TB) tripindex.TripIndex{
		"embedded": func(tb testing.TB) tripindex.TripIndex {
			idx, _, err := tripindex.OpenEmbedded(tb.TempDir())
			require.NoError(tb, err)
			tb.Cleanup(func() { _ = idx.Close() })
			return idx
		},
		"meilisearch": openMeili,
	} {
		b.Run(name, func(b *testing.B) {
			idx := open(b)
			ctx := context.Background()
			for i := 0; i < len(trips); i += 1000 {
				require.NoError(b, idx.Put(ctx, trips[i:i+1000]))
			}
			for _, k := range kinds {
				b.Run(k.name, func(b *testing.B) {
					for _, q := range k.queries { // warm up outside the timing
						_, err := idx.Search(ctx, q)
						require.NoError(b, err)
					}
					took := make([]time.Duration, 0, b.N)
					b.ResetTimer()
					for i := range b.N {
						start := time.Now()
						if _, err := idx.Search(ctx, k.queries[i%len(k.queries)]); err != nil {
							b.Fatal(err)
						}
						took = append(took, time.Since(start))
					}
					b.StopTimer()
					slices.Sort(took)
					ms := func(p float64) float64 {
						return float64(took[min(len(took)-1, int(p*float64(len(took))))].Microseconds()) / 1000
					}
					b.ReportMetric(ms(0.50), "p50-ms")
					b.ReportMetric(ms(0.99), "p99-ms")
				})
			}
		})
	}
}

func openMeili(tb testing.TB) tripindex.TripIndex {
	s := meilitest.New(tb)
	idx, err := tripindex.NewMeili(tripindex.MeiliConfig{URL: s.URL, Key: s.Key, Index: s.Index, WriteTimeout: 2 * time.Minute})
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = idx.Close() })
	return idx
}

// BenchmarkEmbeddedPut measures the projector's write of 50 trips of 3,000
// in the embedded index, as in an on-sale of many buses: "seats" changes
// their counts alone (a batch of holds; decision 0272: the bolt file
// only), "listing" their titles too (bleve rewrites the documents). The
// ratio of the two is what keeping the counts outside bleve saves:
//
//	go test ./projections/tripindex -run '^$' -bench EmbeddedPut
func BenchmarkEmbeddedPut(b *testing.B) {
	for _, change := range []string{"seats", "listing"} {
		b.Run(change, func(b *testing.B) {
			idx, _, err := tripindex.OpenEmbedded(b.TempDir())
			require.NoError(b, err)
			b.Cleanup(func() { _ = idx.Close() })
			ctx := context.Background()
			trips := latencyTrips(3_000)
			for i := 0; i < len(trips); i += 1000 {
				require.NoError(b, idx.Put(ctx, trips[i:i+1000]))
			}
			b.ResetTimer()
			for i := range b.N {
				batch := make([]search.Trip, 50)
				for j := range batch {
					t := trips[(i*50+j)%len(trips)]
					t.SeatsAvailable = (t.SeatsAvailable + i + 1) % 41
					if change == "listing" {
						t.Title = fmt.Sprintf("%s #%d", t.Title, i)
					}
					batch[j] = t
				}
				if err := idx.Put(ctx, batch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
