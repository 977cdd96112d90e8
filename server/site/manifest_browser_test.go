package site_test

import (
	"net/http"
	"testing"
	"time"

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

// The coach's progress on the manifest (decision 0468): ten minutes before
// it leaves Tangail, the supervisor marks it gone; it reads departed, and
// a buyer can no longer hold a seat from Tangail (the timetable would
// still sell it); a passenger who did not come is marked a no-show, their
// seat's later leg the counters' first for a while (decision 0482); then
// arrived, in Bengali.
func TestBrowserTripMarks(t *testing.T) {
	s, browser := openSite(t)
	show := tripLeaving(t, s, "Tangail to Rajshahi, leaving", 10*time.Minute)
	a1 := journeyTicket(t, s, "web-marks-a1", show, "A1", "tangail", "rajshahi")
	hold := func() (int, string) {
		return post(t, s, s.devToken(t, "web-marks-late", "user"), "seatghor.booking.v1.HoldService/CreateHold", map[string]any{
			"showId": show, "seats": []string{"A2"}, "journey": map[string]any{"fromStopId": "tangail", "toStopId": "natore"}})
	}
	ctx := tab(t, browser)
	do(t, ctx,
		signIn(s, "demo-gate", "operator"),
		chromedp.Navigate(s.base+"/manifest/"+show),
		hasText("#trip-status", "boarding"),
		hasText("#trip-depart", "The coach has left its first stop"),
		chromedp.Click(chromedp.CSS("#trip-depart")),
		hasText("#trip-status", "departed"),
	)
	status, body := hold()
	require.Equal(t, http.StatusBadRequest, status, "a seat from Tangail after the coach left: %s", body)
	require.Contains(t, body, "BOOKING_NOT_ALLOWED")
	// A1's passenger did not come: the seat's later leg is the counters'
	// first until the coach leaves Natore (decision 0482).
	do(t, ctx,
		chromedp.Click(chromedp.CSS(`li[data-ticket="`+a1.id+`"] button ~ button`)),
		until(`document.querySelector('li[data-ticket="`+a1.id+`"]').classList.contains("status-no_show")`),
		hasText(`li[data-ticket="`+a1.id+`"] .counters-first`, "at the counters first until"),
		chromedp.Click(chromedp.CSS("#lang")),
		hasText(`li[data-ticket="`+a1.id+`"] .counters-first`, "পর্যন্ত কাউন্টারে আগে বিক্রি"),
		hasText("#trip-status", "ছেড়ে গেছে"),
		chromedp.Click(chromedp.CSS("#trip-arrive")),
		hasText("#trip-status", "পৌঁছেছে"),
		until(`!document.querySelector("#trip-depart") && !document.querySelector("#trip-arrive")`),
	)
	var got struct {
		Show struct {
			Status string `json:"status"`
		} `json:"show"`
	}
	s.call(t, s.devToken(t, "demo-gate", "operator"), "seatghor.catalog.v1.CatalogService/GetShow", map[string]any{"showId": show}, &got)
	require.Equal(t, "SHOW_STATUS_ARRIVED", got.Show.Status)
}
