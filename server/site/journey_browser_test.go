package site_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserSearchShowsTheJourney: a search from Cumilla to Chattogram
// lists the demo network's Dhaka → Chattogram coaches through Cumilla as
// that journey (issue 24): its boarding time and counter at Cumilla and
// that pair's fare, in English and in Bengali, linking to the seat map of
// the journey. The demo's timetables make their trips in the background;
// a search by an inner pair needs CreateShow to keep a trip's stops (the
// legs work of issue 24): until it does, this test is skipped.
func TestBrowserSearchShowsTheJourney(t *testing.T) {
	s, browser := openSite(t)
	token := s.devToken(t, "web-journey", "user")
	type hits struct {
		Trips []struct {
			ShowID  string `json:"showId"`
			Journey *struct {
				FromStopID string `json:"fromStopId"`
			} `json:"journey"`
		} `json:"trips"`
	}
	search := func(origin, destination string) hits {
		var h hits
		s.call(t, token, "seatghor.search.v1.TripSearchService/SearchTrips",
			map[string]any{"origin": origin, "destination": destination}, &h)
		return h
	}
	// The timetable job makes the network's trips once the workers start.
	deadline := time.Now().Add(3 * waitLong)
	for len(search("Dhaka", "Rajshahi").Trips) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the demo network's timetables made no trip to Rajshahi")
		}
		time.Sleep(500 * time.Millisecond)
	}
	for len(search("Cumilla", "Chattogram").Trips) == 0 {
		if time.Now().After(deadline) {
			t.Skip("no journey from Cumilla: CreateShow does not keep a trip's stops yet (issue 24, the legs work)")
		}
		time.Sleep(500 * time.Millisecond)
	}
	ctx := tab(t, browser)
	do(t, ctx,
		signIn(s, "web-journey", "user"),
		chromedp.Navigate(s.base+"/search?from=Comilla&to=Chittagong"),
		chromedp.WaitVisible(chromedp.CSS("#trips .journey")),
		hasText("#trips .journey strong", "Cumilla → Chattogram"),
		hasText("#trips .journey", "On the Dhaka → Chattogram coach"),
		hasText("#trips .journey .boards", "Boards:"),
		hasText("#trips .journey .boards", "Padua Bazar"),
		// 180 minutes at Hanif's 170 Tk an hour: Cumilla to Chattogram's
		// fare, not the whole route's ৳940.
		hasText("#trips .journey", "Fare ৳510"),
		until(`document.querySelector("#trips .journey").getAttribute("href").includes("from=cumilla&to=chattogram")`),
		chromedp.Click(chromedp.CSS("#lang")),
		until(`document.documentElement.lang === "bn"`),
		hasText("#trips .journey strong", "কুমিল্লা → চট্টগ্রাম"),
		hasText("#trips .journey .boards", "পদুয়ার বাজার"),
		hasText("#trips .journey", "ভাড়া ৳৫১০"),
		hasText("#trips .journey", "ঢাকা → চট্টগ্রাম কোচে"),
	)
	// The trips found; the events listed below them (the demo's and other
	// tests') have venues as their makers typed them: a venue has no
	// Bengali name yet.
	partInBengali(t, ctx, "the journeys found", "#trips")
}
