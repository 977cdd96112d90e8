package site_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// The installable web app (decisions 0397–0399) with the network cut by
// Chromium's own offline emulation: for the page and for its service
// worker, and navigator.onLine false as on a phone that lost its signal.

// offline cuts (or restores) the network of a tab (tab's context), and
// of its service worker (a target of its own, whose fetches the tab's
// emulation does not cover), as on a phone that lost its signal:
// navigator.onLine false too. The worker's session stays attached while
// the tab lives (the emulation lasts as long as the session, which also
// keeps the worker running).
func offline(t *testing.T, tab context.Context, cut bool) {
	t.Helper()
	do(t, tab, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error { return cutNetwork(ctx, tg, cut) }))
	infos, err := chromedp.Targets(tab)
	require.NoError(t, err)
	var browserContext cdp.BrowserContextID
	self := chromedp.FromContext(tab).Target.TargetID
	for _, in := range infos {
		if in.TargetID == self {
			browserContext = in.BrowserContextID
		}
	}
	workers := 0
	for _, in := range infos {
		if in.Type != "service_worker" || in.BrowserContextID != browserContext {
			continue
		}
		workers++
		wctx, cancel := context.WithTimeout(workerTab(t, tab, in.TargetID), waitLong)
		err := chromedp.Do(wctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			return cutNetwork(ctx, tg, cut)
		}))
		cancel()
		require.NoError(t, err, "the service worker's network (%s %s)", in.TargetID, in.URL)
	}
	require.Positive(t, workers, "the tab's service worker runs")
}

var (
	workersMu sync.Mutex
	workers   = map[target.ID]context.Context{}
)

// workerTab is a context attached to a service worker, made once. It is
// attached with its own context (a target runs with the context of its
// first action), which ends with the tab's.
func workerTab(t *testing.T, tab context.Context, id target.ID) context.Context {
	workersMu.Lock()
	defer workersMu.Unlock()
	if w, ok := workers[id]; ok {
		return w
	}
	w, _ := chromedp.NewContext(tab, chromedp.WithTargetID(id))
	require.NoError(t, chromedp.Do(w))
	workers[id] = w
	return w
}

// cutNetwork sets one target's network conditions.
func cutNetwork(ctx context.Context, tg *chromedp.Target, cut bool) error {
	rule := &network.Conditions{Offline: cut, DownloadThroughput: -1, UploadThroughput: -1}
	if _, err := cdp.Call(ctx, tg, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{
		EmulateOfflineServiceWorker: &cut, MatchedNetworkConditions: []*network.Conditions{rule}}); err != nil {
		return err
	}
	_, err := cdp.Call(ctx, tg, network.OverrideNetworkState, network.OverrideNetworkStateParams{
		Offline: cut, DownloadThroughput: -1, UploadThroughput: -1})
	return err
}

// awaited evaluates a promise on the page and returns what it resolves to.
func awaited[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	require.NoError(t, err, expr)
	return v
}

// workerActive waits until the site's service worker is installed (the
// shell precached) and active: the next page load is its. (The page that
// registered it may stay uncontrolled: a worker that activates while a
// navigation is under way claims the pages that were there, not the new
// one.)
var workerActive = until(`navigator.serviceWorker.getRegistration().then((r) => r?.active?.state === "activated")`)

// workerControls checks that the worker controls the page.
var workerControls = until(`navigator.serviceWorker?.controller?.scriptURL.endsWith("/sw.js") ?? false`)

// theNetworkIsGone checks that the page really cannot reach the server: a
// request the worker does not answer fails.
func theNetworkIsGone(t *testing.T, ctx context.Context) {
	t.Helper()
	got := awaited[string](t, ctx, `fetch("/livez", { cache: "no-store" }).then(() => "reached", () => "failed")`)
	require.Equal(t, "failed", got, "the network is cut")
}

// The shell loads with no network once the worker has been installed by
// one visit: the search page, and a page that needs the network says so,
// in English and Bengali, instead of failing.
func TestBrowserOfflineShellLoads(t *testing.T) {
	s, browser := openSite(t)
	ctx := tab(t, browser)
	do(t, ctx,
		chromedp.Navigate(s.base+"/signin"),
		script(`sessionStorage.setItem("seatghor.token", `+jsString(s.devToken(t, "offline-shell", "user"))+`)`),
		chromedp.Navigate(s.base+"/"),
		chromedp.WaitVisible(chromedp.CSS("#from")),
		workerActive,
	)
	// The web app's manifest, as the browser reads it to install the app.
	require.Equal(t, "Seatghor|সিটঘর|standalone|3", awaited[string](t, ctx, `fetch("/manifest.webmanifest").then((r) => r.json()).then((m) =>
		[m.short_name, m.translations.bn.short_name, m.display, m.icons.length].join("|"))`))

	offline(t, ctx, true)
	theNetworkIsGone(t, ctx)
	do(t, ctx,
		chromedp.Navigate(s.base+"/"),
		chromedp.WaitVisible(chromedp.CSS("#from")),
		hasText("#offline", "You are offline"),
		hasText("header .brand", "Seatghor"),
	)
	shot(t, ctx, "offline-search")
	// Every page of the app, its query string too, is the shell: a search
	// (which needs the network, and says so), the gate.
	do(t, ctx,
		chromedp.Navigate(s.base+"/search?from=Dhaka&to=Sylhet"),
		chromedp.WaitVisible(chromedp.CSS("#from")),
		hasText("main", "No connection: this needs the network."),
		chromedp.Navigate(s.base+"/gate?show=1"),
		hasText("#offline", "You are offline"),
		until(`document.querySelector("main").textContent.length > 0`),
	)
	// A show's seat map, holds and payment need the network: said, not a
	// blank page or a failure.
	do(t, ctx,
		chromedp.Navigate(s.base+"/show/1"),
		hasText("#needs-network", "This page needs the network"),
		hasText("main .error", "No connection: this needs the network."),
	)
	shot(t, ctx, "offline-show")
	do(t, ctx,
		script(`localStorage.setItem("seatghor.lang", "bn")`),
		chromedp.Navigate(s.base+"/order/ord_offline"),
		hasText("#needs-network", "এই পাতার জন্য ইন্টারনেট লাগবে"),
		hasText("#offline", "আপনি অফলাইনে আছেন"),
	)
	// The network back, the page works as before.
	offline(t, ctx, false)
	do(t, ctx,
		script(`localStorage.setItem("seatghor.lang", "en")`),
		chromedp.Navigate(s.base+"/"),
		chromedp.WaitVisible(chromedp.CSS("#from")),
		until(`!document.querySelector("#offline")`),
	)
}

// "My tickets" seen once stays readable with no network: the tickets with
// their QR codes (the worker's copy of ListMyTickets, said to be a saved
// copy) and the order's PDF (the page's copy, a local link). The copies
// are keyed by the user, never by the token: nothing stored carries it.
// Signing out forgets them.
func TestBrowserOfflineTicketsShowTheQR(t *testing.T) {
	s, browser := openSite(t)
	show := holdShow(t, s, "Offline Nights", 4)
	user := fmt.Sprintf("offline-buyer-%d", time.Now().UnixNano()) // its own tickets only, run after run
	ticket := boughtTicket(t, s, user, show, "A3")
	ctx := tab(t, browser)
	token := s.devToken(t, user, "user")
	do(t, ctx,
		chromedp.Navigate(s.base+"/signin"),
		script(`sessionStorage.setItem("seatghor.token", `+jsString(token)+`)`),
		workerActive,
		chromedp.Navigate(s.base+"/tickets"),
		workerControls,
		until(`document.querySelectorAll(".ticket .qr svg").length === 1`),
		chromedp.WaitVisible(chromedp.CSS("a[data-pdf]")),
		until(`caches.open("seatghor-saved-v1").then((c) => c.keys()).then((ks) =>
			ks.some((r) => r.url.includes("/pdf/")) && ks.some((r) => r.url.includes("ListMyTickets")))`),
	)
	require.Empty(t, eval[string](t, ctx, `document.querySelector("#saved-copy")?.textContent ?? ""`), "online: the server's answer")
	// Nothing kept names the token, in its address or headers.
	kept := awaited[string](t, ctx, `caches.open("seatghor-saved-v1").then((c) => c.keys()).then((ks) =>
		ks.map((r) => r.url + " " + [...r.headers].join(",")).join("\n"))`)
	require.NotContains(t, kept, token)
	require.NotContains(t, kept, "Bearer")

	offline(t, ctx, true)
	theNetworkIsGone(t, ctx)
	do(t, ctx,
		chromedp.Navigate(s.base+"/tickets"),
		until(`document.querySelectorAll(".ticket .qr svg").length === 1`),
		hasText(".ticket .code", ticket.id),
		hasText("#saved-copy", "Offline: your tickets as saved on this phone"),
		hasText("#offline", "You are offline"),
		until(`document.querySelector("a[data-pdf][data-saved]")?.href.startsWith("blob:") ?? false`),
	)
	require.Empty(t, eval[string](t, ctx, `document.querySelector("main .error")?.textContent ?? ""`), "no error on the tickets page")
	shot(t, ctx, "offline-tickets")
	pdf := awaited[string](t, ctx, `fetch(document.querySelector("a[data-pdf]").href).then((r) => r.text()).then((s) => s.slice(0, 4))`)
	require.Equal(t, "%PDF", pdf, "the saved PDF opens offline")

	// Back online, signing out forgets this user's copies.
	offline(t, ctx, false)
	do(t, ctx,
		chromedp.Navigate(s.base+"/tickets"),
		chromedp.WaitVisible(chromedp.CSS("a[data-pdf]")),
		chromedp.Click(chromedp.CSS(".who button")),
		until(`caches.open("seatghor-saved-v1").then((c) => c.keys()).then((ks) => ks.length === 0)`),
	)
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	return "`" + s + "`"
}
