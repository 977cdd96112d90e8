package site_test

import (
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// BenchmarkSite reports what a buyer's phone downloads on the first visit
// (gzip) and how long headless Chromium takes to draw a seat map: a
// 50,000-seat stadium next to the 40-seat demo bus, in the same run. The
// page measures from building the map to the first frame after it
// (performance.measure "seatmap-draw", pages/show.tsx): the stadium draws
// its first section (5,000 seats; a show over 2,000 seats is drawn a
// section at a time). make bench-web.
func BenchmarkSite(b *testing.B) {
	s, browser := openSite(b)

	admin := s.devToken(b, "bench-admin", "admin")
	var sections []map[string]any
	row := 0
	for sec := range 10 {
		var rows []string
		for range 50 {
			rows = append(rows, string(rune('A'+row/26))+string(rune('A'+row%26)))
			row++
		}
		sections = append(sections, map[string]any{"name": fmt.Sprintf("Block %d", sec+1), "rows": rows,
			"seatsPerRow": 100, "priceMinor": fmt.Sprint(50000 + 10000*sec)})
	}
	var created struct {
		Show struct {
			ShowID    string `json:"showId"`
			SeatCount int    `json:"seatCount"`
		} `json:"show"`
	}
	s.call(b, admin, "seatghor.catalog.v1.CatalogService/CreateShow", map[string]any{
		"kind": "SHOW_KIND_SPORT", "title": "Bench stadium", "venue": "Mirpur", "currency": "BDT",
		"startsAt": time.Now().Add(60 * 24 * time.Hour).UTC().Format(time.RFC3339), "sections": sections,
	}, &created)
	require.Equal(b, 50_000, created.Show.SeatCount)

	ctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	defer cancel()
	user := s.devToken(b, "bench-user", "user")
	require.NoError(b, chromedp.Do(ctx, chromedp.EmulateViewport(412, 915), chromedp.Navigate(s.base+"/signin")))
	_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf(`(sessionStorage.setItem("seatghor.token", %q), true)`, user)))
	require.NoError(b, err)

	draw := func(show string) float64 {
		err := chromedp.Do(ctx, chromedp.Navigate(s.base+"/show/"+show),
			until(`performance.getEntriesByName("seatmap-draw").length > 0`))
		require.NoError(b, err)
		ms, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`performance.getEntriesByName("seatmap-draw")[0].duration`))
		require.NoError(b, err)
		return ms
	}
	var bus, stadium float64
	b.ResetTimer()
	for range b.N {
		bus += draw("7")
		stadium += draw(created.Show.ShowID)
	}
	b.ReportMetric(float64(firstLoadGzip(b, s.base)), "first-load-B-gzip")
	b.ReportMetric(bus/float64(b.N), "draw-40-seats-ms")
	b.ReportMetric(stadium/float64(b.N), "draw-50000-seats-ms")
}

// firstLoadGzip is the bytes of index.html, app.js and app.css as served
// to a browser that takes gzip.
func firstLoadGzip(b *testing.B, base string) int {
	total := 0
	for _, p := range []string{"/", "/assets/app.js", "/assets/app.css"} {
		req, err := http.NewRequest(http.MethodGet, base+p, nil)
		require.NoError(b, err)
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := http.DefaultTransport.RoundTrip(req)
		require.NoError(b, err)
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		require.NoError(b, err)
		require.Equal(b, "gzip", resp.Header.Get("Content-Encoding"), p)
		total += len(body)
	}
	return total
}
