package tripindex_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/internal/testkit/meilitest"
	"github.com/seatghor/seatghor/projections/tripindex"
	"github.com/seatghor/seatghor/server/search"
)

// BenchmarkMeiliClient measures one search of 100 hits over a keep-alive
// connection with Go's default HTTP client and with the adapter's
// (tripindex.NewHTTPClient). Decision 0050 has the numbers and the cause:
//
//	go test ./projections/tripindex -run '^$' -bench MeiliClient -benchtime 50x
func BenchmarkMeiliClient(b *testing.B) {
	s := meilitest.New(b)
	ctx := context.Background()
	loader, err := tripindex.NewMeili(tripindex.MeiliConfig{URL: s.URL, Key: s.Key, Index: s.Index})
	require.NoError(b, err)
	var trips []search.Trip
	for i := range 200 {
		t := fixture()[0]
		t.ShowID, t.Title = int64(i+1), fmt.Sprintf("Dhaka to Chattogram %02d:%02d", i/60, i%60)
		t.StartsAt = t.StartsAt.Add(time.Duration(i) * time.Minute)
		trips = append(trips, t)
	}
	require.NoError(b, loader.Put(ctx, trips))
	for _, c := range []struct {
		name   string
		client *http.Client
	}{
		{"default-client", &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}},
		{"adapter-client", tripindex.NewHTTPClient()},
	} {
		b.Run(c.name, func(b *testing.B) {
			idx, err := tripindex.NewMeili(tripindex.MeiliConfig{URL: s.URL, Key: s.Key, Index: s.Index, HTTPClient: c.client})
			require.NoError(b, err)
			defer idx.Close()
			q := search.Query{Text: "chatogram", Limit: 100}
			_, err = idx.Search(ctx, q) // connect and set up outside the timing
			require.NoError(b, err)
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				r, err := idx.Search(ctx, q)
				if err != nil || len(r.Trips) != 100 {
					b.Fatalf("search: %d trips, %v", len(r.Trips), err)
				}
			}
			b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/search")
		})
	}
}
