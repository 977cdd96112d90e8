package site_test

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// The trip supervisor's manifest page (decision 0442), its own bundle: the
// gate staff sign in and open /manifest/<show>; both paid passengers are
// listed by seat with their names and journeys; "Boarded" checks one in
// and the counts follow; the stop selector keeps those boarding at Natore;
// the page reads in Bengali. The server's manifest agrees.
func TestBrowserManifest(t *testing.T) {
	s, browser := openSite(t)
	show := gateTrip(t, s, "Tangail to Rajshahi, manifest")
	a1 := journeyTicket(t, s, "web-manifest-a1", show, "A1", "tangail", "rajshahi")
	journeyTicket(t, s, "web-manifest-a2", show, "A2", "natore", "rajshahi")
	ctx := tab(t, browser)
	do(t, ctx,
		signIn(s, "demo-gate", "operator"),
		chromedp.Navigate(s.base+"/manifest/"+show),
		hasText("#manifest-title", "Tangail to Rajshahi, manifest"),
		hasText("#manifest-counts", "2 expected · 0 boarded · 0 no-show"),
		hasText("#manifest-list", "Passenger A1"),
		hasText("#manifest-list", "Tangail → Rajshahi"),
		hasText("#manifest-list", "Natore → Rajshahi"),
		chromedp.Click(chromedp.CSS(`li[data-ticket="`+a1.id+`"] button`)),
		hasText("#manifest-counts", "1 expected · 1 boarded · 0 no-show"),
		until(`document.querySelector('li[data-ticket="`+a1.id+`"]').classList.contains("status-boarded")`),
		choose("#manifest-stop", "natore"),
		until(`document.querySelectorAll("#manifest-list li").length === 1`),
		hasText("#manifest-list", "Passenger A2"),
		chromedp.Click(chromedp.CSS("#lang")),
		hasText("#manifest-title", "যাত্রী তালিকা"),
		hasText("#manifest-list", "নাটোর → রাজশাহী"),
	)
	var m struct {
		Boarded  int `json:"boarded"`
		Expected int `json:"expected"`
	}
	s.call(t, s.devToken(t, "demo-gate", "operator"), "seatghor.tickets.v1.ManifestService/GetManifest", map[string]any{"showId": show}, &m)
	require.Equal(t, 1, m.Boarded)
	require.Equal(t, 1, m.Expected)
}
