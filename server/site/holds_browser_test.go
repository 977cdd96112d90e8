package site_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// holdShow creates a show of one row of six seats whose accounts may hold
// or buy at most cap seats, and returns its id.
func holdShow(t *testing.T, s *devServer, title string, cap int) string {
	t.Helper()
	var created struct {
		Show struct {
			ShowID string `json:"showId"`
		} `json:"show"`
	}
	s.call(t, s.devToken(t, "web-admin", "admin"), "seatghor.catalog.v1.CatalogService/CreateShow", map[string]any{
		"kind": "SHOW_KIND_CONCERT", "title": title, "venue": "Hold Hall", "currency": "BDT",
		"startsAt":           time.Now().Add(30 * 24 * time.Hour).UTC().Format(time.RFC3339),
		"onSaleAt":           time.Now().Add(-time.Hour).UTC().Format(time.RFC3339),
		"sections":           []map[string]any{{"name": "Main", "rows": []string{"A"}, "seatsPerRow": 6, "priceMinor": "50000"}},
		"maxSeatsPerAccount": cap, "maxSeatsPerHold": cap,
	}, &created)
	return created.Show.ShowID
}

// mine waits until seat is drawn as the buyer's own hold.
func mine(seat string) chromedp.Action[chromedp.Void] {
	return until(`(() => { const s = document.querySelector("#seat-` + seat + `");
		return !!s && s.classList.contains("s3") && s.getAttribute("aria-label").includes("your hold") })()`)
}

// A hold survives a reload and is the buyer's in a second tab of the same
// session: the seats are drawn as theirs, with the countdown and the way
// on to the order (decision 0301). Fails before ListMyHolds: after the
// reload the page had no hold and drew the seats as held by someone else.
func TestBrowserHoldSurvivesAReload(t *testing.T) {
	s, browser := openSite(t)
	show := holdShow(t, s, "Reload Nights", 10)
	first := tab(t, browser)
	do(t, first,
		signIn(s, "web-reload", "user"),
		chromedp.Navigate(s.base+"/show/"+show),
		chromedp.WaitVisible(chromedp.CSS("#seat-A1")),
		until(`document.querySelector("#seat-A1").getAttribute("aria-label").includes("free")`),
		chromedp.Click(chromedp.CSS("#seat-A1")),
		chromedp.Click(chromedp.CSS("#seat-A2")),
		chromedp.Click(chromedp.CSS("#hold-seats")),
		chromedp.WaitVisible(chromedp.CSS("#countdown")),
		chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS("#countdown")),
		until(`/^\d+:\d\d$/.test(document.querySelector("#countdown").textContent)`),
		hasText("#hold", "A1, A2"),
		mine("A1"), mine("A2"),
		chromedp.WaitVisible(chromedp.CSS("#to-order")),
	)
	// The seats never turned "held" (someone else's) after the reload.
	require.False(t, eval[bool](t, first, `document.querySelector("#seat-A1").classList.contains("s1")`))

	// A second tab of the same session (window.open copies the tab's
	// sessionStorage; here it is copied by hand).
	token := eval[string](t, first, `sessionStorage.getItem("seatghor.token")`)
	second := tab(t, browser)
	do(t, second,
		chromedp.Navigate(s.base+"/"),
		script(`sessionStorage.setItem("seatghor.token", `+strconv.Quote(token)+`)`),
		chromedp.Navigate(s.base+"/show/"+show),
		chromedp.WaitVisible(chromedp.CSS("#countdown")),
		hasText("#hold", "A1, A2"),
		mine("A1"), mine("A2"),
		chromedp.Click(chromedp.CSS("#to-order")),
		until(`location.pathname.startsWith("/order/")`),
		chromedp.WaitVisible(chromedp.CSS("#pay-success")),
	)
	order := eval[string](t, second, `location.pathname`)

	// The first tab still shows the hold as it was: its way on leads to the
	// order the second tab made. Coming back later, the hold is that unpaid
	// order, with the time left to pay.
	do(t, first,
		chromedp.Click(chromedp.CSS("#to-order")),
		until(`location.pathname === `+strconv.Quote(order)),
		chromedp.WaitVisible(chromedp.CSS("#pay-success")),
		chromedp.Navigate(s.base+"/show/"+show),
		chromedp.WaitVisible(chromedp.CSS("#countdown")),
		hasText("#hold", "Pay within"),
		mine("A1"), mine("A2"),
		chromedp.Click(chromedp.CSS("#to-order")),
		until(`location.pathname === `+strconv.Quote(order)),
	)
}

// "My tickets" shows an abandoned hold and an unpaid order with their time
// left; release gives the hold back and Pay leads to the order page. The
// per-account cap is said in words, in English and in Bengali, with the
// way to My tickets (decisions 0301, 0302).
func TestBrowserMyTicketsHoldsAndUnpaidOrders(t *testing.T) {
	s, browser := openSite(t)
	show := holdShow(t, s, "Abandoned Evenings", 4)
	showID, err := strconv.ParseInt(show, 10, 64)
	require.NoError(t, err)
	tok := s.devToken(t, "web-abandoned", "user")
	var hold, ordered struct {
		Hold struct {
			HoldID string `json:"holdId"`
		} `json:"hold"`
	}
	s.call(t, tok, "seatghor.booking.v1.HoldService/CreateHold", map[string]any{"showId": showID, "seats": []string{"A1"}}, &hold)
	s.call(t, tok, "seatghor.booking.v1.HoldService/CreateHold", map[string]any{"showId": showID, "seats": []string{"A2", "A3"}}, &ordered)
	var order struct {
		Order struct {
			OrderID string `json:"orderId"`
		} `json:"order"`
	}
	s.call(t, tok, "seatghor.booking.v1.OrderService/CreateOrder", map[string]any{"holdId": ordered.Hold.HoldID}, &order)

	ctx := tab(t, browser)
	timer := `/^\d+:\d\d$/`
	do(t, ctx,
		signIn(s, "web-abandoned", "user"),
		chromedp.Navigate(s.base+"/tickets"),
		until(`document.querySelectorAll("#holds .live-hold").length === 2`),
		hasText(`#holds [data-hold="`+hold.Hold.HoldID+`"]`, "Abandoned Evenings"),
		hasText(`#holds [data-hold="`+hold.Hold.HoldID+`"] .left`, "Held for "),
		until(timer+`.test(document.querySelector('#holds [data-hold="`+hold.Hold.HoldID+`"] .left').textContent.replace("Held for ", "").replace(" more", ""))`),
		hasText(`#holds [data-order="`+order.Order.OrderID+`"]`, "A2, A3"),
		hasText(`#holds [data-order="`+order.Order.OrderID+`"] .left`, "Unpaid order: pay within "),
	)
	shot(t, ctx, "tickets-holds")

	// A fourth and fifth seat: over the cap of 4, said in words.
	do(t, ctx,
		chromedp.Navigate(s.base+"/show/"+show),
		chromedp.WaitVisible(chromedp.CSS("#seat-A4")),
		mine("A1"), mine("A3"),
		until(`document.querySelector("#seat-A4").getAttribute("aria-label").includes("free")`),
		chromedp.Click(chromedp.CSS("#seat-A4")),
		chromedp.Click(chromedp.CSS("#seat-A5")),
		chromedp.Click(chromedp.CSS("#hold-seats")),
		hasText("#cap", "You already hold or bought 3 of the 4 seats one account may have for this show. Release a hold or finish an order in My tickets."),
		until(`!document.querySelector("main").textContent.includes("R-3.8")`),
		chromedp.Click(chromedp.CSS("#lang")),
		chromedp.Click(chromedp.CSS("#hold-seats")),
		hasText("#cap", "একটি অ্যাকাউন্ট এই অনুষ্ঠান বা যাত্রার সর্বোচ্চ ৪টি আসন রাখতে পারে; আপনি ইতিমধ্যে ৩টি আটকেছেন বা কিনেছেন।"),
		chromedp.Click(chromedp.CSS("#lang")),
		chromedp.Click(chromedp.CSS(`#cap a[href="/tickets"]`)),
		until(`document.querySelectorAll("#holds .live-hold").length === 2`),
		// Each way on reads: its words are drawn in another colour than
		// its background (a card's style once painted "Pay" white on white).
		until(`[...document.querySelectorAll("#holds .pay-now")].every(b => {
			const s = getComputedStyle(b);
			return b.textContent.trim() !== "" && s.color !== s.backgroundColor;
		})`),
	)

	// Release the abandoned hold; pay the unpaid order.
	do(t, ctx,
		chromedp.Click(chromedp.CSS(`#holds [data-hold="`+hold.Hold.HoldID+`"] .release`)),
		hasText("#holds", "Released. The seats are free again."),
		until(`document.querySelectorAll("#holds .live-hold").length === 1`),
		chromedp.Click(chromedp.CSS(`#holds [data-order="`+order.Order.OrderID+`"] .pay-now`)),
		until(`location.pathname === "/order/`+order.Order.OrderID+`"`),
		chromedp.WaitVisible(chromedp.CSS("#pay-success")),
	)
	// The released seat is free again.
	var got struct {
		Hold struct {
			Status string `json:"status"`
		} `json:"hold"`
	}
	s.call(t, tok, "seatghor.booking.v1.HoldService/GetHold", map[string]any{"holdId": hold.Hold.HoldID}, &got)
	require.Equal(t, "HOLD_STATUS_RELEASED", got.Hold.Status)
}
