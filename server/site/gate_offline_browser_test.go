package site_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// The gate with no network (docs/gate-offline.md): Chromium's offline
// emulation cuts a gate page off; it admits from the show's list it keeps
// in IndexedDB, verifies codes with the published Ed25519 keys, and syncs
// when the network returns.

// networkConditions are the parameters of Network.emulateNetworkConditions,
// Chromium's offline emulation (it sets navigator.onLine too; cdproto
// dropped the command as deprecated, Chromium still runs it).
type networkConditions struct {
	Offline            bool    `json:"offline"`
	Latency            float64 `json:"latency"`
	DownloadThroughput float64 `json:"downloadThroughput"`
	UploadThroughput   float64 `json:"uploadThroughput"`
}

var emulateNetworkConditions = cdp.Command[networkConditions, cdp.Empty]{Method: "Network.emulateNetworkConditions"}

// setOffline takes the tab off the network (offline true) or back on.
func setOffline(offline bool) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		if _, err := cdp.Call(ctx, tg, network.Enable, network.EnableParams{}); err != nil {
			return chromedp.Void{}, err
		}
		_, err := cdp.Call(ctx, tg, emulateNetworkConditions,
			networkConditions{Offline: offline, DownloadThroughput: -1, UploadThroughput: -1})
		return chromedp.Void{}, err
	}
}

// gateShow creates a show of demo-operator (whose gate staff is demo-gate)
// starting in two hours, with seats A1–A4, and returns its id.
func gateShow(t *testing.T, s *devServer, title string) string {
	t.Helper()
	admin := s.devToken(t, "web-admin", "admin")
	var created struct {
		Show struct {
			ShowID string `json:"showId"`
		} `json:"show"`
	}
	now := time.Now()
	s.call(t, admin, "seatghor.catalog.v1.CatalogService/CreateShow", map[string]any{
		"kind": "SHOW_KIND_CONCERT", "title": title, "venue": "Gate Hall", "currency": "BDT",
		"organizationId": "demo-operator",
		"startsAt":       now.Add(2 * time.Hour).UTC().Format(time.RFC3339),
		"onSaleAt":       now.Add(-72 * time.Hour).UTC().Format(time.RFC3339),
		"sections":       []map[string]any{{"name": "Main", "rows": []string{"A"}, "seatsPerRow": 4, "priceMinor": "50000"}},
	}, &created)
	return created.Show.ShowID
}

// openGate signs in as gate staff, opens the gate of show under the gate
// name, and waits until the show's list of tickets is kept for offline use.
func openGate(s *devServer, show, gate string, tickets int) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		signIn(s, "demo-gate", "operator"),
		chromedp.Navigate(s.base+"/gate?show="+show),
		chromedp.WaitVisible(chromedp.CSS("#gate-code")),
		until(`document.querySelector("#gate-show").value === "`+show+`"`),
		script(`const i = document.querySelector("#gate-name"); i.value = "`+gate+`";
			i.dispatchEvent(new Event("input", { bubbles: true }))`),
		hasText("#gate-ready", fmt.Sprintf("Ready offline: %d tickets", tickets)),
	)
}

// scanCode types a code into the gate and checks it; the gate empties the
// field once it has answered.
func scanCode(code string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.SendKeys(chromedp.CSS("#gate-code"), code),
		until(`document.querySelector("#gate-code").value !== ""`),
		chromedp.Click(chromedp.CSS("#gate-check")),
		until(`document.querySelector("#gate-code").value === ""`),
	)
}

// orderOf is the order a ticket id names: tkt_<show>_<random>_<n> is of
// ord_<show>_<random>.
func orderOf(ticketID string) string {
	parts := strings.Split(ticketID, "_")
	return "ord_" + parts[1] + "_" + parts[2]
}

// Two gate pages with no network both admit the same ticket, and one of
// them a ticket its buyer cancelled (and was refunded for) meanwhile. The
// later scan's gate comes back online first and syncs first; when the
// earlier one syncs, its scan takes the admission: one admission stands
// (north's), south's is reported a duplicate with both gates and times, and
// the refunded ticket is reported, on both gates' panels and by the API.
func TestBrowserGateOfflineSettlesDuplicatesAndRefunds(t *testing.T) {
	s, browser := openSite(t)
	show := gateShow(t, s, "Offline at two gates")
	both := boughtTicket(t, s, "web-offline-both", show, "A1")
	refunded := boughtTicket(t, s, "web-offline-refunded", show, "A2")
	north, south := tab(t, browser), tab(t, browser)
	do(t, north, openGate(s, show, "north", 2))
	do(t, south, openGate(s, show, "south", 2))
	for _, ctx := range []context.Context{north, south} {
		do(t, ctx,
			setOffline(true),
			until(`navigator.onLine === false`),
			hasText("#gate-net", "No network"),
		)
	}
	// Cancelled by its buyer, and refunded, while the gates are offline.
	s.call(t, s.devToken(t, "web-offline-refunded", "user"), "seatghor.booking.v1.OrderService/CancelOrder",
		map[string]any{"orderId": orderOf(refunded.id)}, nil)

	do(t, north,
		scanCode(both.code),
		hasText("#verdict", "ADMITTED"),
		hasText("#verdict", "A1"),
		hasText("#verdict-offline", "no network"),
		hasText("#gate-pending", "waiting to sync on this device: 1"),
	)
	time.Sleep(1100 * time.Millisecond) // the scans a second or more apart, on any clock
	do(t, south,
		scanCode(both.code),
		hasText("#verdict", "ADMITTED"),
		scanCode(refunded.code),
		hasText("#verdict", "ADMITTED"),
		hasText("#verdict", "A2"),
		// The same device refuses its own second scan.
		scanCode(both.code),
		hasText("#verdict", "ALREADY CHECKED IN"),
		hasText("#verdict", "south"),
		hasText("#gate-pending", "waiting to sync on this device: 2"),
	)
	shot(t, south, "gate-offline")

	// South first: its scan is the first the server hears of.
	do(t, south,
		setOffline(false),
		hasText("#gate-net", "Online"),
		hasText("#gate-pending", "waiting to sync on this device: 0"),
	)
	do(t, north,
		setOffline(false),
		hasText("#gate-pending", "waiting to sync on this device: 0"),
	)
	for _, ctx := range []context.Context{south, north} {
		do(t, ctx,
			until(`[...document.querySelectorAll("#gate-conflicts li")].some((li) =>
				li.textContent.includes("DUPLICATE") && li.textContent.includes("south at") &&
				li.textContent.includes("admitted first at north at") && li.dataset.ticket === `+fmt.Sprintf("%q", both.id)+`)`),
			until(`[...document.querySelectorAll("#gate-conflicts li")].some((li) =>
				li.textContent.includes("CANCELLED OR REFUNDED") && li.dataset.ticket === `+fmt.Sprintf("%q", refunded.id)+`)`),
			hasText("#gate-devices", "north"),
			hasText("#gate-devices", "south"),
		)
	}
	shot(t, south, "gate-conflicts")

	// The server agrees: one admission, north's; south's a duplicate of it.
	var status struct {
		Conflicts []struct {
			Gate         string `json:"gate"`
			TicketID     string `json:"ticketId"`
			Outcome      string `json:"outcome"`
			AdmittedGate string `json:"admittedGate"`
			AdmittedAt   string `json:"admittedAt"`
			SettledTime  string `json:"settledTime"`
		} `json:"conflicts"`
		AdmittedCount string `json:"admittedCount"`
	}
	gate := s.devToken(t, "demo-gate", "operator")
	s.call(t, gate, "seatghor.tickets.v1.TicketService/GetGateStatus", map[string]any{"showId": show}, &status)
	require.Equal(t, "1", status.AdmittedCount, "one admission stands")
	require.Len(t, status.Conflicts, 2)
	byOutcome := map[string]int{}
	for i, c := range status.Conflicts {
		byOutcome[c.Outcome] = i
	}
	dup := status.Conflicts[byOutcome["SCAN_OUTCOME_DUPLICATE"]]
	require.Equal(t, both.id, dup.TicketID)
	require.Equal(t, "south", dup.Gate)
	require.Equal(t, "north", dup.AdmittedGate)
	require.Less(t, dup.AdmittedAt, dup.SettledTime, "north scanned first")
	ref := status.Conflicts[byOutcome["SCAN_OUTCOME_REFUNDED"]]
	require.Equal(t, refunded.id, ref.TicketID)
	require.Equal(t, "south", ref.Gate)

	// Online again: a scan is answered by the server, north's admission.
	do(t, south,
		scanCode(both.code),
		hasText("#verdict", "ALREADY CHECKED IN"),
		hasText("#verdict", "north"),
		until(`document.querySelector("#verdict-offline") === null`),
	)
}

// A gate page that holds no secret verifies a code the server signed, with
// no network: a ticket bought after the page downloaded its list (so only
// its signature speaks for it) is admitted; a code whose signature is
// another's, or whose key the server never published, is refused. The same
// where the browser has no Ed25519 of its own and the page falls back to
// its library.
func TestBrowserGateVerifiesCodesOffline(t *testing.T) {
	s, browser := openSite(t)
	show := gateShow(t, s, "Signed codes")
	listed := boughtTicket(t, s, "web-signed-listed", show, "A1")

	builtIn, library := tab(t, browser), tab(t, browser)
	// No Ed25519 in this tab's WebCrypto, as in an older browser.
	_, err := chromedp.Call(library, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `
		(() => {
			const importKey = crypto.subtle.importKey.bind(crypto.subtle);
			crypto.subtle.importKey = (format, key, alg, ...rest) =>
				((alg && alg.name) || alg) === "Ed25519"
					? Promise.reject(new DOMException("Ed25519 is not supported", "NotSupportedError"))
					: importKey(format, key, alg, ...rest);
		})();`})
	require.NoError(t, err)
	do(t, builtIn, openGate(s, show, "north", 1), hasText("#gate-verifier", "the browser's"))
	do(t, library, openGate(s, show, "south", 1), hasText("#gate-verifier", "a library"))

	// Bought after both pages downloaded the list.
	fresh := boughtTicket(t, s, "web-signed-fresh", show, "A2")
	listedParts, freshParts := strings.Split(listed.code, "."), strings.Split(fresh.code, ".")
	require.Equal(t, "SGT3", listedParts[0], "the server signs with Ed25519: %s", listed.code)
	// listed's ticket under fresh's signature; and a key nobody published.
	swapped := strings.Join([]string{listedParts[0], listedParts[1], listedParts[2], freshParts[3]}, ".")
	unknownKey := strings.Join([]string{listedParts[0], "not-published", listedParts[2], listedParts[3]}, ".")
	otherSeat := strings.Join([]string{listedParts[0], listedParts[1],
		base64.RawURLEncoding.EncodeToString([]byte(listed.id + "|A3")), listedParts[3]}, ".")

	for _, ctx := range []context.Context{builtIn, library} {
		do(t, ctx,
			setOffline(true),
			until(`navigator.onLine === false`),
			scanCode(swapped),
			hasText("#verdict", "NOT VALID"),
			hasText("#verdict", "signature is wrong"),
			scanCode(otherSeat),
			hasText("#verdict", "NOT VALID"),
			hasText("#verdict", "signature is wrong"),
			scanCode(unknownKey),
			hasText("#verdict", "NOT VALID"),
			hasText("#verdict", "key is not on this device"),
			scanCode(fresh.code),
			hasText("#verdict", "ADMITTED"),
			hasText("#verdict", "A2"),
			hasText("#verdict-offline", "no network"),
		)
	}
	// What the page keeps to verify: public keys (32 bytes each), no secret.
	keys, err := chromedp.Run(builtIn, chromedp.Evaluate[[]int](`new Promise((ok, fail) => {
		const r = indexedDB.open("seatghor-gate");
		r.onerror = fail;
		r.onsuccess = () => {
			const g = r.result.transaction("meta").objectStore("meta").get("ticketKeys");
			g.onsuccess = () => ok(g.result.map((k) => k.raw.length));
		};
	})`, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	require.NotEmpty(t, keys)
	for _, n := range keys {
		require.Equal(t, 32, n)
	}
}

// gateTrip creates a bus trip of demo-operator starting in two hours, Tangail
// → Natore → Rajshahi, with seats A1–A4, and returns its id. Places no
// other browser test searches: the tests share one dev server, and a trip
// leaving in two hours would come first in their searches.
func gateTrip(t *testing.T, s *devServer, title string) string {
	t.Helper()
	return tripLeaving(t, s, title, 2*time.Hour)
}

// tripLeaving is gateTrip leaving its first stop after in.
func tripLeaving(t *testing.T, s *devServer, title string, in time.Duration) string {
	t.Helper()
	admin := s.devToken(t, "web-admin", "admin")
	var created struct {
		Show struct {
			ShowID string `json:"showId"`
		} `json:"show"`
	}
	now := time.Now()
	stops := []string{"tangail", "natore", "rajshahi"}
	var fares []map[string]any
	for i := range stops {
		for j := i + 1; j < len(stops); j++ {
			fares = append(fares, map[string]any{"fromStopId": stops[i], "toStopId": stops[j], "priceMinor": fmt.Sprint(30000 * (j - i))})
		}
	}
	s.call(t, admin, "seatghor.catalog.v1.CatalogService/CreateShow", map[string]any{
		"kind": "SHOW_KIND_BUS_TRIP", "title": title, "currency": "BDT", "organizationId": "demo-operator",
		"startsAt": now.Add(in).UTC().Format(time.RFC3339),
		"onSaleAt": now.Add(-72 * time.Hour).UTC().Format(time.RFC3339),
		"sections": []map[string]any{{"name": "Coach", "rows": []string{"A"}, "seatsPerRow": 4}},
		"stops": []map[string]any{{"place": "Tangail", "minutesFromStart": 0}, {"place": "Natore", "minutesFromStart": 60},
			{"place": "Rajshahi", "minutesFromStart": 120}},
		"fares": fares,
	}, &created)
	return created.Show.ShowID
}

// journeyTicket is user's paid ticket for seat on trip show from stop from
// to stop to.
func journeyTicket(t *testing.T, s *devServer, user, show, seat, from, to string) bought {
	t.Helper()
	tok := s.devToken(t, user, "user")
	var hold struct {
		Hold struct {
			HoldID string `json:"holdId"`
		} `json:"hold"`
	}
	s.call(t, tok, "seatghor.booking.v1.HoldService/CreateHold", map[string]any{"showId": show, "seats": []string{seat},
		"journey": map[string]any{"fromStopId": from, "toStopId": to}}, &hold)
	var order struct {
		Order struct {
			OrderID string `json:"orderId"`
		} `json:"order"`
	}
	s.call(t, tok, "seatghor.booking.v1.OrderService/CreateOrder", map[string]any{"holdId": hold.Hold.HoldID,
		"passengers": []map[string]any{{"seat": seat, "name": "Passenger " + seat, "phone": "01711-234567"}}}, &order)
	return paidTicket(t, s, tok, order.Order.OrderID)
}

// A gate page at a stop of a bus trip (decisions 0384, 0408): the page
// offers the trip's stops and remembers the one chosen; cut off from the
// network at Tangail, it refuses a ticket boarding at Natore, naming
// Natore in English and Bengali, and admits the one boarding at Tangail. A
// ticket sold after its list was made, boarding at Natore, is admitted on
// its signature and, synced with the device's stop, reported by the
// supervisor's panel as boarding at another stop. Online, the server's
// refusal names Natore too.
func TestBrowserGateAtAStop(t *testing.T) {
	s, browser := openSite(t)
	show := gateTrip(t, s, "Tangail to Rajshahi, gate at a stop")
	atTangail := journeyTicket(t, s, "web-stop-tangail", show, "A1", "tangail", "rajshahi")
	atNatore := journeyTicket(t, s, "web-stop-natore", show, "A2", "natore", "rajshahi")
	ctx := tab(t, browser)
	do(t, ctx,
		openGate(s, show, "coach door", 2),
		hasText("#gate-stop", "Natore"),
		until(`document.querySelector("#gate-stop").value === ""`),
		script(`const sel = document.querySelector("#gate-stop"); sel.value = "tangail";
			sel.dispatchEvent(new Event("change", { bubbles: true }))`),
		until(`localStorage.getItem("seatghor.gate.stop.`+show+`") === "tangail"`),
		// Remembered for the show.
		chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS("#gate-stop")),
		until(`document.querySelector("#gate-stop").value === "tangail"`),
		hasText("#gate-ready", "Ready offline: 2 tickets"),
		setOffline(true),
		until(`navigator.onLine === false`),
	)
	// Sold after the device's list was made: only its signature vouches.
	late := journeyTicket(t, s, "web-stop-late", show, "A3", "natore", "rajshahi")
	do(t, ctx,
		scanCode(atNatore.code),
		hasText("#verdict", "NOT VALID"),
		hasText("#verdict", "This ticket's journey starts at Natore — not here."),
		chromedp.Click(chromedp.CSS("#lang")),
		hasText("#verdict", "এই টিকিটের যাত্রা শুরু নাটোর থেকে — এখানে নয়।"),
		chromedp.Click(chromedp.CSS("#lang")),
		hasText("#gate-pending", "waiting to sync on this device: 0"),
		scanCode(atTangail.code),
		hasText("#verdict", "ADMITTED"),
		hasText("#verdict", "A1"),
		scanCode(late.code),
		hasText("#verdict", "ADMITTED"),
		hasText("#verdict", "A3"),
		hasText("#gate-pending", "waiting to sync on this device: 2"),
	)
	do(t, ctx,
		setOffline(false),
		hasText("#gate-pending", "waiting to sync on this device: 0"),
		until(`[...document.querySelectorAll("#gate-conflicts li")].some((li) =>
			li.textContent.includes("BOARDS AT ANOTHER STOP") && li.textContent.includes("boards at Natore") &&
			li.dataset.ticket === `+fmt.Sprintf("%q", late.id)+`)`),
		hasText("#gate-devices .boards-elsewhere", "1"),
		// Online, the server refuses it and the page names where it boards.
		scanCode(atNatore.code),
		hasText("#boards-elsewhere", "This ticket's journey starts at Natore — not here."),
	)
	// The server settled the two scans as the device did: A1 admitted at
	// the coach door, A3 not admitted.
	var status struct {
		AdmittedCount string `json:"admittedCount"`
		Devices       []struct {
			BoardsElsewhere string `json:"boardsElsewhere"`
		} `json:"devices"`
	}
	s.call(t, s.devToken(t, "demo-gate", "operator"), "seatghor.tickets.v1.TicketService/GetGateStatus", map[string]any{"showId": show}, &status)
	require.Equal(t, "1", status.AdmittedCount)
	require.Len(t, status.Devices, 1)
	require.Equal(t, "1", status.Devices[0].BoardsElsewhere)
}
