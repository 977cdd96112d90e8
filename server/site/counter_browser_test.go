package site_test

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// The operator's counter page (decision 0443), its own bundle: a clerk of
// the operator signs in, opens a shift with 500 Tk in the drawer, picks the
// trip and the journey, presses two free seats (the keyboard reaches
// them), types the passengers' Bengali names (one a seat, decision 0463)
// and the phone, takes the cash; the 80 mm ticket (a PDF) is made as the
// sale ends, with no press of "Print"; she closes the shift with 1,700 Tk
// counted: the report says the drawer matches the ledger. The seats are
// sold on the server, through the counter's channel, to their passengers.
func TestBrowserCounterSale(t *testing.T) {
	s, browser := openSite(t)
	show := gateTrip(t, s, "Tangail to Rajshahi, counter")
	s.call(t, s.devToken(t, "web-admin", "admin"), "seatghor.catalog.v1.CatalogService/AddOrganizationMember",
		map[string]any{"organizationId": "demo-operator", "userId": "web-clerk", "role": "ORGANIZATION_ROLE_COUNTER"}, &struct{}{})
	ctx := tab(t, browser)
	do(t, ctx,
		signIn(s, "web-clerk", "operator"),
		chromedp.Navigate(s.base+"/counter"),
		chromedp.WaitVisible(chromedp.CSS("#counter-org")),
		chromedp.SendKeys(chromedp.CSS("#counter-org"), "demo-operator"),
		chromedp.SendKeys(chromedp.CSS("#counter-id"), "tangail-main"),
		script(`document.querySelector("#counter-float").value = ""`),
		chromedp.SendKeys(chromedp.CSS("#counter-float"), "500"),
		chromedp.Click(chromedp.CSS("#counter-open")),
		hasText("#counter-report", "tangail-main"),
		until(`[...document.querySelectorAll("#sell-show option")].some((o) => o.value === "`+show+`")`),
		choose("#sell-show", show),
		choose("#sell-from", "tangail"),
		choose("#sell-to", "rajshahi"),
		hasText("#sell-free", "A3"),
		tabTo(`#sell-free button:nth-child(3)`),
		chromedp.KeyEvent(" "),
		until(`document.querySelector("#sell-seats").value === "A3"`),
		tabTo(`#sell-free button:nth-child(4)`),
		chromedp.KeyEvent(" "),
		until(`document.querySelector("#sell-seats").value === "A3 A4"`),
		chromedp.SendKeys(chromedp.CSS("#sell-name"), "রহিমা খাতুন"),
		chromedp.SendKeys(chromedp.CSS("#sell-name-A4"), "করিম মিয়া"),
		chromedp.SendKeys(chromedp.CSS("#sell-phone"), "01711-555000"),
		until(`document.querySelector("#sell-autoprint").checked`),
		chromedp.Click(chromedp.CSS("#sell-submit")),
		hasText("#sell-done", "Sold"),
		hasText("#sell-done", "৳1,200.00"),
		hasText("#report-sales", "1 · ৳1,200.00"),
		until(`document.querySelector("#sell-pdf")?.href.startsWith("blob:") ?? false`),
		chromedp.SendKeys(chromedp.CSS("#counter-counted"), "1700"),
		chromedp.Click(chromedp.CSS("#counter-close")),
		until(`document.querySelector("#counter-report")?.dataset.status === "closed"`),
		hasText("#report-expected", "৳1,700.00"),
		hasText("#report-ledger", "৳1,200.00"),
		hasText("#report-difference", "৳0.00"),
	)
	var m struct {
		Entries []struct {
			Seat    string `json:"seat"`
			Channel string `json:"channel"`
			Name    string `json:"passengerName"`
		} `json:"entries"`
	}
	s.call(t, s.devToken(t, "demo-gate", "operator"), "seatghor.tickets.v1.ManifestService/GetManifest", map[string]any{"showId": show}, &m)
	names := map[string]string{}
	for _, e := range m.Entries {
		require.Equal(t, "SALES_CHANNEL_COUNTER", e.Channel)
		names[e.Seat] = e.Name
	}
	require.Equal(t, map[string]string{"A3": "রহিমা খাতুন", "A4": "করিম মিয়া"}, names)
}
