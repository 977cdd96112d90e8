package site_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// phoneProfile is a phone's connection as Chromium's DevTools throttles
// it (its presets' numbers: latency to the response's headers, bytes a
// second each way).
type phoneProfile struct {
	name         string
	latencyMs    float64
	down, up     float64 // bytes per second
	connectionTy network.ConnectionType
}

var phoneProfiles = []phoneProfile{
	// DevTools' "Slow 4G" (called "Fast 3G" before Chrome 119).
	{"Slow 4G", 562.5, 1.6e6 / 8 * 0.9, 750e3 / 8 * 0.9, network.ConnectionTypeCellular4g},
	// DevTools' "3G" ("Slow 3G" before Chrome 119).
	{"3G", 2000, 500e3 / 8 * 0.8, 500e3 / 8 * 0.8, network.ConnectionTypeCellular3g},
}

// wire adds up the bytes of the API's requests a tab sends and receives
// (Chromium's own counts: headers, bodies as sent, gzip included).
type wire struct {
	mu       sync.Mutex
	sent     map[network.RequestID]int
	got      map[network.RequestID]int
	finished map[network.RequestID]bool
}

func (w *wire) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sent, w.got, w.finished = map[network.RequestID]int{}, map[network.RequestID]int{}, map[network.RequestID]bool{}
}

func (w *wire) listen(ev any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		if !strings.Contains(ev.Request.URL, "/seatghor.") {
			return
		}
		// The request line and the body; the headers come with ExtraInfo.
		n := len(ev.Request.Method) + len(ev.Request.URL) + len(" HTTP/1.1\r\n")
		for _, e := range ev.Request.PostDataEntries {
			n += len(e.Bytes)
		}
		w.sent[ev.RequestID] += n
		w.finished[ev.RequestID] = false
	case *network.EventRequestWillBeSentExtraInfo:
		n := 2
		for k, v := range ev.Headers {
			n += len(k) + len(fmt.Sprint(v)) + 4
		}
		w.sent[ev.RequestID] += n
	case *network.EventLoadingFinished:
		if _, ours := w.finished[ev.RequestID]; ours {
			w.got[ev.RequestID] += int(ev.EncodedDataLength)
			w.finished[ev.RequestID] = true
		}
	case *network.EventLoadingFailed:
		if _, ours := w.finished[ev.RequestID]; ours {
			w.finished[ev.RequestID] = true
		}
	}
}

// totals waits until every request seen has finished and returns the
// bytes sent and received and how many requests.
func (w *wire) totals(b *testing.B) (sent, got, requests int) {
	deadline := time.Now().Add(waitLong)
	for {
		w.mu.Lock()
		done := true
		for _, f := range w.finished {
			done = done && f
		}
		if done {
			for _, n := range w.sent {
				sent += n
			}
			for _, n := range w.got {
				got += n
			}
			requests = len(w.finished)
			w.mu.Unlock()
			return sent, got, requests
		}
		w.mu.Unlock()
		require.True(b, time.Now().Before(deadline), "requests still running")
		time.Sleep(50 * time.Millisecond)
	}
}

// sdkBundle builds the TypeScript SDK's browser entry (clients/ts) into a
// script that defines SG, with clients/web's esbuild (make web installs
// it): the same client the site uses, JSON or binary.
func sdkBundle(b *testing.B) string {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	esbuild := filepath.Join(root, "clients/web/node_modules/.bin/esbuild")
	if _, err := os.Stat(esbuild); err != nil {
		b.Skipf("%s is missing: run make web first", esbuild)
	}
	cmd := exec.Command(esbuild, "--bundle", "--format=iife", "--global-name=SG", "--minify", "--log-level=warning",
		"--alias:@seatghor/client="+filepath.Join(root, "clients/ts/src/browser.ts"))
	cmd.Dir = filepath.Join(root, "clients/web") // stdin's imports resolve from here
	cmd.Stdin = strings.NewReader(`export { createSeatghorClient } from "@seatghor/client";`)
	out, err := cmd.Output()
	require.NoError(b, err)
	return string(out)
}

// throttle sets a tab's network to p (nil: unthrottled).
func throttle(p *phoneProfile) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		rule := &network.Conditions{DownloadThroughput: -1, UploadThroughput: -1}
		if p != nil {
			rule = &network.Conditions{Latency: p.latencyMs, DownloadThroughput: p.down, UploadThroughput: p.up, ConnectionType: p.connectionTy}
		}
		_, err := cdp.Call(ctx, tg, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{
			MatchedNetworkConditions: []*network.Conditions{rule}})
		return err
	})
}

// BenchmarkPhoneBytes measures what a phone sends and receives, and how
// long it takes, for a seat-map refresh and a purchase (hold, order, start
// of the payment; the sign-in is not counted) with the TypeScript SDK in
// headless Chromium throttled to DevTools' "Slow 4G" and "3G", in Connect
// JSON and in Connect's binary encoding (docs/performance.md, "A phone's
// bytes"). Reads are GETs (the SDK's), so the seat map's are answered by
// the fast path in either encoding; the browser's cache is off, so every
// refresh is a whole 200 (a map that moved). Each figure is the median of
// b.N runs. make bench-web.
func BenchmarkPhoneBytes(b *testing.B) {
	s, browser := openSite(b)
	bundle := sdkBundle(b)
	admin := s.devToken(b, "phone-admin", "admin")
	var created struct {
		Show struct {
			ShowID string `json:"showId"`
		} `json:"show"`
	}
	// The stadium of BenchmarkSite's size and a coach of 40 seats.
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
	s.call(b, admin, "seatghor.catalog.v1.CatalogService/CreateShow", map[string]any{
		"kind": "SHOW_KIND_SPORT", "title": "Phone stadium", "venue": "Mirpur", "currency": "BDT",
		"startsAt": time.Now().Add(60 * 24 * time.Hour).UTC().Format(time.RFC3339), "sections": sections,
	}, &created)
	stadium := created.Show.ShowID
	s.call(b, admin, "seatghor.catalog.v1.CatalogService/CreateShow", map[string]any{
		"kind": "SHOW_KIND_BUS_TRIP", "title": "Phone coach", "origin": "Dhaka", "destination": "Sylhet", "currency": "BDT",
		"startsAt": time.Now().Add(30 * 24 * time.Hour).UTC().Format(time.RFC3339),
		"sections": []map[string]any{{"name": "Main", "rows": []string{"A", "B", "C", "D", "E", "F", "G", "H", "I", "J"},
			"seatsPerRow": 4, "priceMinor": "85000"}},
	}, &created)
	coach := created.Show.ShowID
	// Some of the stadium taken, so its availability is not all zeros:
	// 1,000 seats in 100 holds at random places (seeded: the same every
	// run), which compress worse than the blocks buyers really take.
	rnd := rand.New(rand.NewPCG(27, 397))
	taken := map[string]bool{}
	for h := range 100 {
		holder := s.devToken(b, fmt.Sprintf("phone-holder-%d", h), "user") // the account cap is 10 seats
		var seats []string
		for len(seats) < 10 {
			r := rnd.IntN(500)
			seat := fmt.Sprintf("%c%c%d", 'A'+r/26, 'A'+r%26, 1+rnd.IntN(100))
			if !taken[seat] {
				taken[seat] = true
				seats = append(seats, seat)
			}
		}
		s.call(b, holder, "seatghor.booking.v1.HoldService/CreateHold", map[string]any{"showId": stadium, "seats": seats}, nil)
	}

	ctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	defer cancel()
	w := &wire{}
	w.reset()
	require.NoError(b, chromedp.Listen(ctx, w.listen))
	// A page of the site's origin without the site (no service worker, no
	// polls of its own): the SDK alone, as a phone's app would run it.
	require.NoError(b, chromedp.Do(ctx, chromedp.Navigate(s.base+"/livez"),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			if _, err := cdp.Call(ctx, tg, network.Enable, network.EnableParams{}); err != nil {
				return err
			}
			_, err := cdp.Call(ctx, tg, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true})
			return err
		})))
	_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](bundle+";true"))
	require.NoError(b, err)

	type cell struct{ sent, got, requests, ms []int }
	results := map[string]*cell{}
	measure := func(key, js string) {
		w.reset()
		ms, err := chromedp.Run(ctx, chromedp.Evaluate[float64](js, chromedp.EvalAwaitPromise))
		require.NoError(b, err, key)
		sent, got, n := w.totals(b)
		c := results[key]
		if c == nil {
			c = &cell{}
			results[key] = c
		}
		c.sent, c.got, c.requests, c.ms = append(c.sent, sent), append(c.got, got), append(c.requests, n), append(c.ms, int(ms))
	}
	// client is the SDK's client of one buyer in one encoding.
	client := func(token string, binary bool) string {
		return fmt.Sprintf(`SG.createSeatghorClient({ baseUrl: location.origin, token: %q, binary: %t, retry: false })`, token, binary)
	}
	layoutETag := func(show string) string {
		var l struct {
			Etag string `json:"etag"`
		}
		s.call(b, admin, "seatghor.seatmap.v1.SeatMapService/GetSeatLayout", map[string]any{"showId": show}, &l)
		return l.Etag
	}
	stadiumETag, coachETag := layoutETag(stadium), layoutETag(coach)
	reader := s.devToken(b, "phone-reader", "user")
	seat := 0
	b.ResetTimer()
	for range b.N {
		for _, p := range phoneProfiles {
			require.NoError(b, chromedp.Do(ctx, throttle(&p)))
			for _, binary := range []bool{false, true} {
				enc := map[bool]string{false: "JSON", true: "binary"}[binary]
				timed := func(body string) string {
					return `(async () => { const sg = ` + client(reader, binary) + `; const t0 = performance.now(); ` + body +
						`; return performance.now() - t0 })()`
				}
				measure(p.name+"|"+enc+"|coach refresh", timed(fmt.Sprintf(`await sg.seatMap.getSeatMap({ showId: %sn, layoutEtag: %q })`, coach, coachETag)))
				measure(p.name+"|"+enc+"|stadium section refresh", timed(fmt.Sprintf(`await sg.seatMap.getSeatMap({ showId: %sn, layoutEtag: %q, section: "Block 1" })`, stadium, stadiumETag)))
				measure(p.name+"|"+enc+"|stadium refresh, whole", timed(fmt.Sprintf(`await sg.seatMap.getSeatMap({ showId: %sn, layoutEtag: %q })`, stadium, stadiumETag)))
				measure(p.name+"|"+enc+"|stadium map with layout", timed(fmt.Sprintf(`await sg.seatMap.getSeatMap({ showId: %sn })`, stadium)))
				// A purchase: a new buyer (signed in beforehand, not
				// counted), one seat of the coach.
				seat++
				buyer := s.devToken(b, fmt.Sprintf("phone-buyer-%d", seat), "user")
				require.Less(b, seat, 40, "the coach has 40 seats")
				measure(p.name+"|"+enc+"|purchase: hold, order, pay start", `(async () => { const sg = `+client(buyer, binary)+`;
					const t0 = performance.now();
					const { hold } = await sg.holds.createHold({ showId: `+coach+`n, seats: ["`+fmt.Sprintf("%c%d", 'A'+(seat-1)/4, (seat-1)%4+1)+`"] });
					const { order } = await sg.orders.createOrder({ holdId: hold.holdId });
					await sg.payments.startPayment({ orderId: order.orderId, sandbox: { token: "tok_success" } });
					return performance.now() - t0 })()`)
			}
		}
	}
	b.StopTimer()
	require.NoError(b, chromedp.Do(ctx, throttle(nil)))
	median := func(xs []int) int {
		xs = slices.Clone(xs)
		slices.Sort(xs)
		return xs[len(xs)/2]
	}
	keys := make([]string, 0, len(results))
	for k := range results {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out strings.Builder
	fmt.Fprintf(&out, "\n| profile | encoding | what | requests | sent B | received B | time ms |\n|---|---|---|---|---|---|---|\n")
	for _, k := range keys {
		c := results[k]
		parts := strings.SplitN(k, "|", 3)
		fmt.Fprintf(&out, "| %s | %s | %s | %d | %d | %d | %d |\n", parts[0], parts[1], parts[2], median(c.requests), median(c.sent), median(c.got), median(c.ms))
	}
	// Printed, not logged: a benchmark's log is cut to a few lines.
	fmt.Print(out.String())
}
