package site_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
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
		// fare, not the whole route's ৳940 (the day coaches'; a night
		// coach, listed first late in the day, costs more).
		anyJourney("Fare ৳510"),
		until(`document.querySelector("#trips .journey").getAttribute("href").includes("from=cumilla&to=chattogram")`),
		chromedp.Click(chromedp.CSS("#lang")),
		until(`document.documentElement.lang === "bn"`),
		hasText("#trips .journey strong", "কুমিল্লা → চট্টগ্রাম"),
		hasText("#trips .journey .boards", "পদুয়ার বাজার"),
		anyJourney("ভাড়া ৳৫১০"),
		hasText("#trips .journey", "ঢাকা → চট্টগ্রাম কোচে"),
	)
	// The trips found; the events listed below them (the demo's and other
	// tests') have venues as their makers typed them: a venue has no
	// Bengali name yet.
	partInBengali(t, ctx, "the journeys found", "#trips")
}

// journeysFound waits until a search from Cumilla to Chattogram finds the
// demo network's coaches (the timetable job makes them once the workers
// start), or skips while CreateShow keeps no trip's stops.
func journeysFound(t *testing.T, s *devServer, token string) {
	t.Helper()
	deadline := time.Now().Add(3 * waitLong)
	for {
		var h struct {
			Trips []struct {
				ShowID string `json:"showId"`
			} `json:"trips"`
		}
		s.call(t, token, "seatghor.search.v1.TripSearchService/SearchTrips",
			map[string]any{"origin": "Cumilla", "destination": "Chattogram"}, &h)
		if len(h.Trips) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Skip("no journey from Cumilla: the demo network's trips have no stops")
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestBrowserBuysAJourney: a journey bought end to end (issue 24). A
// search from Cumilla to Chattogram opens the seat map of that journey:
// the coach drawn with its aisle, the journey named above it (in English
// and in Bengali) with Cumilla's boarding counter and its time, and the
// journey's fare, not the whole route's. A seat for women is refused
// without the declaration, by the page and by the API; an ordinary seat is
// held with the counters chosen, its passenger named and paid for in the
// sandbox; the ticket in My tickets names Cumilla's counter and its time,
// and the gate at Cumilla admits it. The seat is sold for Cumilla to
// Chattogram only: another buyer holds it for Dhaka to Cumilla.
func TestBrowserBuysAJourney(t *testing.T) {
	s, browser := openSite(t)
	buyer := "web-journey-buyer"
	token := s.devToken(t, buyer, "user")
	journeysFound(t, s, token)
	ctx := phone(t, browser)
	do(t, ctx,
		signIn(s, buyer, "user"),
		chromedp.Navigate(s.base+"/search?from=Cumilla&to=Chattogram"),
		chromedp.WaitVisible(chromedp.CSS("#trips .journey")),
		// The day's coaches at the ordinary fare (a night coach costs
		// more, and which comes first depends on the hour).
		anyJourney("Fare ৳510"),
		script(`[...document.querySelectorAll("#trips .journey")].find((j) => j.textContent.includes("Fare ৳510")).click()`),
		until(`location.pathname.startsWith("/show/") && location.search.includes("from=cumilla&to=chattogram")`),
		chromedp.WaitVisible(chromedp.CSS("#journey")),
		hasText("#journey strong", "Cumilla → Chattogram"),
		hasText("#journey", "Boards:"),
		hasText("#journey", "Padua Bazar"),
		// The coach as it is, its aisle drawn.
		chromedp.WaitVisible(chromedp.CSS("#aisle-0")),
		until(`document.querySelector("#aisle-0").getAttribute("aria-label") === "Aisle"`),
		until(`document.querySelector("#seat-A1").getAttribute("aria-label").includes("free")`),
	)
	show := eval[string](t, ctx, `location.pathname.split("/")[2]`)
	require.Less(t, eval[float64](t, ctx, centreX("#seat-A2")), eval[float64](t, ctx, centreX("#aisle-0")))
	require.Greater(t, eval[float64](t, ctx, centreX("#seat-C3")), eval[float64](t, ctx, centreX("#aisle-0")))
	// Cumilla's boarding counter (its only one) and Chattogram's dropping
	// counters to choose from.
	require.Equal(t, "padua-bazar", eval[string](t, ctx, `document.querySelector("#board").value`))
	require.Equal(t, []string{"ak-khan", "dampara"}, eval[[]string](t, ctx, `[...document.querySelectorAll("#drop option")].map((o) => o.value)`))

	// A seat for women, at the journey's fare (Cumilla to Chattogram's
	// ৳510, not the whole route's ৳940): refused without the declaration.
	do(t, ctx,
		chromedp.Click(chromedp.CSS("#seat-A1")),
		hasText("#chosen", "A1"),
		until(`document.querySelector("#total").textContent === "৳510"`),
		chromedp.Click(chromedp.CSS("#hold-seats")),
		hasText("#msg", "A1: a seat for women"),
		until(`document.activeElement?.id === "woman-A1"`),
	)
	require.False(t, eval[bool](t, ctx, `!!document.querySelector("#countdown")`), "nothing held")
	cumillaCtg := map[string]any{"fromStopId": "cumilla", "toStopId": "chattogram"}
	refused := refusal(t, s, s.devToken(t, "web-journey-api", "user"), "seatghor.booking.v1.HoldService/CreateHold",
		map[string]any{"showId": show, "seats": []string{"A1"}, "journey": cumillaCtg})
	require.Equal(t, "WOMEN_SEAT_UNDECLARED", refused.reason, refused.message)

	// An ordinary seat instead, dropping at Dampara; the journey in Bengali.
	do(t, ctx,
		chromedp.Click(chromedp.CSS("#seat-A1")),
		chromedp.Click(chromedp.CSS("#seat-C3")),
		until(`document.querySelector("#chosen")?.textContent === "C3"`),
		until(`document.querySelector("#total").textContent === "৳510"`),
		choose("#drop", "dampara"),
		until(`document.querySelector("#drop").value === "dampara"`),
		chromedp.Click(chromedp.CSS("#lang")),
		until(`document.documentElement.lang === "bn"`),
		hasText("#journey strong", "কুমিল্লা → চট্টগ্রাম"),
		hasText("#journey", "ওঠার সময়"),
		hasText("#journey", "পদুয়ার বাজার"),
		hasText("#journey", "ওঠার কাউন্টার"),
		hasText("#drop", "দামপাড়া"),
		until(`document.querySelector("#total").textContent === "৳৫১০"`),
	)
	partInBengali(t, ctx, "the show page of a journey", "main")
	shot(t, ctx, "journey")
	do(t, ctx,
		chromedp.Click(chromedp.CSS("#lang")),
		until(`document.documentElement.lang === "en"`),
		hasText("#journey", "Boards:"),
	)
	// "Boards: <Cumilla's counter's time> · Padua Bazar", as the ticket says it.
	boards := eval[string](t, ctx, `document.querySelector("#journey p").textContent`)
	boards = boards[strings.Index(boards, "Boards:"):]
	require.Contains(t, boards, "Padua Bazar")

	do(t, ctx,
		chromedp.Click(chromedp.CSS("#hold-seats")),
		chromedp.WaitVisible(chromedp.CSS("#countdown")),
		chromedp.Click(chromedp.CSS("#to-order")),
		fillPassengers([2]string{"Karim Ahmed", "01711-234567"}),
		chromedp.WaitVisible(chromedp.CSS("#pay-success")),
		hasText("main .lines", "Karim Ahmed"),
		hasText("main", "৳510"),
		chromedp.Click(chromedp.CSS("#pay-success")),
		chromedp.WaitVisible(chromedp.CSS("#paid")),
		chromedp.Navigate(s.base+"/tickets"),
		chromedp.WaitVisible(chromedp.CSS(".order .journey")),
		hasText(".order .journey", "Cumilla → Chattogram"),
		hasText(".order .journey", boards),
		hasText(".order .journey", "Drops at: Dampara"),
	)

	// The gate at Cumilla admits the ticket.
	var list struct {
		Tickets []struct {
			TicketID string `json:"ticketId"`
			ShowID   string `json:"showId"`
			Seat     string `json:"seat"`
		} `json:"tickets"`
	}
	s.call(t, token, "seatghor.tickets.v1.TicketService/ListMyTickets", map[string]any{}, &list)
	ticketID := ""
	for _, tk := range list.Tickets {
		if tk.ShowID == show {
			ticketID = tk.TicketID
		}
	}
	require.NotEmpty(t, ticketID, "the journey's ticket")
	var checked struct {
		Admitted bool `json:"admitted"`
	}
	s.call(t, s.devToken(t, "demo-counter", "operator"), "seatghor.tickets.v1.TicketService/CheckInTicket",
		map[string]any{"showId": show, "ticketId": ticketID, "gate": "cumilla-counter", "stopId": "cumilla"}, &checked)
	require.True(t, checked.Admitted, "the gate at Cumilla admits the ticket")

	// C3 is sold from Cumilla on: another buyer has it from Dhaka to
	// Cumilla, unless the coach has left Dhaka already (a journey's sale
	// ends when the coach leaves its boarding stop, decision 0442): the
	// trip found may be one under way between Dhaka and Cumilla.
	var trip struct {
		Show struct {
			StartsAt time.Time `json:"startsAt"`
		} `json:"show"`
	}
	s.call(t, token, "seatghor.catalog.v1.CatalogService/GetShow", map[string]any{"showId": show}, &trip)
	status, body := post(t, s, s.devToken(t, "web-journey-other", "user"), "seatghor.booking.v1.HoldService/CreateHold",
		map[string]any{"showId": show, "seats": []string{"C3"}, "journey": map[string]any{"fromStopId": "dhaka", "toStopId": "cumilla"}})
	if time.Now().Before(trip.Show.StartsAt.Add(-time.Minute)) {
		require.Equal(t, http.StatusOK, status, "%s", body)
		require.Contains(t, body, `"C3"`)
	} else if time.Now().After(trip.Show.StartsAt.Add(time.Minute)) {
		require.Equal(t, http.StatusBadRequest, status, "%s", body)
		require.Contains(t, body, "BOOKING_NOT_ALLOWED", "the coach has left Dhaka")
	}
}

// anyJourney waits until a journey of the results says text.
func anyJourney(text string) chromedp.Action[chromedp.Void] {
	return until(fmt.Sprintf(`[...document.querySelectorAll("#trips .journey")].some((j) => j.textContent.includes(%q))`, text))
}
