package site_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// BenchmarkSite reports what a buyer's phone downloads on the first visit
// (gzip) and how long headless Chromium takes to draw a seat map and to
// refresh its availability: a 50,000-seat stadium next to the 40-seat demo
// bus, in the same run, the median of the runs (make bench-web: 5), with
// the machine's load average when it started (a shared machine: the times
// follow the load).
//
//   - draw: the page's performance.measure "seatmap-draw", from building
//     the map to the first frame after it (pages/show.tsx).
//   - refresh: "seatmap-refresh", a refresh that changed the map: from
//     the start of the frame the new availability is applied in to the
//     end of that frame's rendering. The change is a hold of four seats by
//     another buyer through the API, released afterwards.
func BenchmarkSite(b *testing.B) {
	s, browser := openSite(b)
	stadium := benchStadium(b, s)
	other := s.devToken(b, "bench-other", "user")

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
	// refresh holds seats as another buyer, waits for the page's refresh
	// that draws them, and gives the hold back.
	refresh := func(show string, seats []string) float64 {
		// The page's first refresh (every seat's state after the draw) is
		// not the one measured.
		time.Sleep(2500 * time.Millisecond)
		since, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`performance.now()`))
		require.NoError(b, err)
		var held struct {
			Hold struct {
				HoldID string `json:"holdId"`
			} `json:"hold"`
		}
		s.call(b, other, "seatghor.booking.v1.HoldService/CreateHold", map[string]any{"showId": show, "seats": seats}, &held)
		defer s.call(b, other, "seatghor.booking.v1.HoldService/ReleaseHold", map[string]any{"holdId": held.Hold.HoldID}, nil)
		after := fmt.Sprintf(`performance.getEntriesByName("seatmap-refresh").filter((e) => e.startTime > %f)`, since)
		err = chromedp.Do(ctx, until(after+`.length > 0`))
		require.NoError(b, err)
		ms, err := chromedp.Run(ctx, chromedp.Evaluate[float64](after+`[0].duration`))
		require.NoError(b, err)
		return ms
	}
	load := loadAverage()
	var busDraw, busRefresh, bigDraw, bigRefresh []float64
	b.ResetTimer()
	for run := range b.N {
		busDraw = append(busDraw, draw("7"))
		busRefresh = append(busRefresh, refresh("7", []string{fmt.Sprintf("J%d", run%4+1)}))
		bigDraw = append(bigDraw, draw(stadium))
		// Seats of four sections far apart: the first rows of the 1st, 2nd,
		// 5th and 9th (rows are named AA, AB, … 50 to a section).
		col := strconv.Itoa(run%100 + 1)
		bigRefresh = append(bigRefresh, refresh(stadium, []string{"AA" + col, "BY" + col, "HS" + col, "PK" + col}))
	}
	b.StopTimer()
	b.ReportMetric(float64(firstLoadGzip(b, s.base)), "first-load-B-gzip")
	b.ReportMetric(median(busDraw), "draw-40-seats-ms")
	b.ReportMetric(median(busRefresh), "refresh-40-seats-ms")
	b.ReportMetric(median(bigDraw), "draw-50000-seats-ms")
	b.ReportMetric(median(bigRefresh), "refresh-50000-seats-ms")
	b.ReportMetric(load, "load-avg-1m")
	b.Logf("runs %d, load average %.2f at the start, %.2f at the end; draw 40: %v; refresh 40: %v; draw 50,000: %v; refresh 50,000: %v",
		b.N, load, loadAverage(), rounded(busDraw), rounded(busRefresh), rounded(bigDraw), rounded(bigRefresh))
}

var (
	stadiumOnce sync.Once
	stadiumID   string
)

// benchStadium is the benchmark's 50,000-seat stadium, made once per test
// binary: 10 sections of 50 rows × 100 seats, rows named AA, AB, … SR.
func benchStadium(t testing.TB, s *devServer) string {
	stadiumOnce.Do(func() {
		admin := s.devToken(t, "bench-admin", "admin")
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
		s.call(t, admin, "seatghor.catalog.v1.CatalogService/CreateShow", map[string]any{
			"kind": "SHOW_KIND_SPORT", "title": "Bench stadium", "venue": "Mirpur", "currency": "BDT",
			"startsAt": time.Now().Add(60 * 24 * time.Hour).UTC().Format(time.RFC3339),
			"onSaleAt": time.Now().Add(-time.Hour).UTC().Format(time.RFC3339), "sections": sections,
		}, &created)
		require.Equal(t, 50_000, created.Show.SeatCount)
		stadiumID = created.Show.ShowID
	})
	require.NotEmpty(t, stadiumID, "the stadium was not made")
	return stadiumID
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func rounded(xs []float64) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = strconv.FormatFloat(x, 'f', 1, 64)
	}
	return out
}

// loadAverage is the machine's load average over the last minute (Linux;
// 0 where /proc/loadavg is missing).
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f, _ := strconv.ParseFloat(strings.Fields(string(b))[0], 64)
	return f
}

// firstLoadGzip is the bytes of index.html, app.js with the chunks it
// imports statically (followed through the chunks, as the build counts
// them: a chunk shared with a lazy page loads with app.js) and app.css,
// as served to a browser that takes gzip.
func firstLoadGzip(b *testing.B, base string) int {
	// The chunks a bundle imports statically (`from"./x.js"`,
	// `import"./x.js"`), not those it loads later (`import("./x.js")`).
	staticImport := regexp.MustCompile(`(?:from|import)\s*"\./([A-Za-z0-9_-]+\.js)"`)
	total := 0
	todo, seen := []string{"/", "/assets/app.js", "/assets/app.css"}, map[string]bool{}
	for len(todo) > 0 {
		p := todo[0]
		todo = todo[1:]
		if seen[p] {
			continue
		}
		seen[p] = true
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
		if strings.HasSuffix(p, ".js") {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			require.NoError(b, err)
			js, err := io.ReadAll(zr)
			require.NoError(b, err)
			for _, m := range staticImport.FindAllStringSubmatch(string(js), -1) {
				todo = append(todo, "/assets/"+m[1])
			}
		}
	}
	return total
}
