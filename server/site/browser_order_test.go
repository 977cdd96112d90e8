package site_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// Errors in words (decision 0303): a refusal the API documents reads as
// the site's sentence for its reason, in the page's language, never as the
// server's message (meant for developers: ids, field names, rules). At the
// gate, a ticket of another organisation's show (no detail to switch by),
// and a printed id mistyped; for a buyer, an order that is not there.
func TestBrowserErrorsInWords(t *testing.T) {
	s, browser := openSite(t)
	admin := s.devToken(t, "web-words-admin", "admin")
	s.call(t, admin, "seatghor.catalog.v1.CatalogService/CreateOrganization",
		map[string]any{"organizationId": "web-words-org", "name": "Words Lines"}, nil)
	var created struct {
		Show struct {
			ShowID string `json:"showId"`
		} `json:"show"`
	}
	now := time.Now()
	s.call(t, admin, "seatghor.catalog.v1.CatalogService/CreateShow", map[string]any{
		"kind": "SHOW_KIND_CONCERT", "title": "Another company's night", "venue": "Far Hall", "currency": "BDT",
		"organizationId": "web-words-org",
		"startsAt":       now.Add(48 * time.Hour).UTC().Format(time.RFC3339),
		"onSaleAt":       now.Add(-time.Hour).UTC().Format(time.RFC3339),
		"sections":       []map[string]any{{"name": "Main", "rows": []string{"A"}, "seatsPerRow": 4, "priceMinor": "50000"}},
	}, &created)
	foreign := boughtTicket(t, s, "web-words-buyer", created.Show.ShowID, "A1")

	// What the server says, for developers: the page must not show it.
	gateTok := s.devToken(t, "demo-gate", "operator")
	raw := refusal(t, s, gateTok, "seatghor.tickets.v1.TicketService/CheckInTicket",
		map[string]any{"showId": 13, "gate": "gate-1", "code": foreign.code})
	require.Equal(t, "TICKET_NOT_ADMISSIBLE", raw.reason)
	rawID := refusal(t, s, gateTok, "seatghor.tickets.v1.TicketService/CheckInTicket",
		map[string]any{"showId": 13, "gate": "gate-1", "ticketId": "tkt_13_nope_1"})
	require.Equal(t, "TICKET_ID_INVALID", rawID.reason)

	ctx := tab(t, browser)
	do(t, ctx,
		signIn(s, "demo-gate", "operator"),
		chromedp.Navigate(s.base+"/gate?show=13"),
		chromedp.WaitVisible(chromedp.CSS("#gate-code")),
		until(`document.querySelector("#gate-show").value === "13"`),
		chromedp.SendKeys(chromedp.CSS("#gate-code"), foreign.code),
		chromedp.Click(chromedp.CSS("#gate-check")),
		hasText("#verdict", "NOT VALID"),
		hasText("#verdict", "This ticket is not valid for this show."),
	)
	require.NotContains(t, eval[string](t, ctx, `document.querySelector("#verdict").textContent`), raw.message)
	do(t, ctx,
		chromedp.SendKeys(chromedp.CSS("#gate-code"), "tkt_13_nope_1"),
		chromedp.Click(chromedp.CSS("#gate-check")),
		hasText("#verdict", "Check the ticket number and try again"),
	)
	require.NotContains(t, eval[string](t, ctx, `document.querySelector("#verdict").textContent`), rawID.message)
	// In Bengali, the Bengali sentence.
	do(t, ctx,
		chromedp.Click(chromedp.CSS("#lang")),
		until(`document.documentElement.lang === "bn"`),
		chromedp.SendKeys(chromedp.CSS("#gate-code"), foreign.code),
		chromedp.Click(chromedp.CSS("#gate-check")),
		hasText("#verdict", "এই টিকিট এই অনুষ্ঠান বা যাত্রার জন্য বৈধ নয়।"),
		chromedp.Click(chromedp.CSS("#lang")),
		until(`document.documentElement.lang === "en"`),
	)

	// A buyer's order that is not there: words, not the id or the rule.
	missing := "ord_13_0000000000000000"
	buyer := tab(t, browser)
	do(t, buyer,
		signIn(s, "web-words-lost", "user"),
		chromedp.Navigate(s.base+"/order/"+missing),
		hasText("main [role=alert]", "could not find"),
	)
	said := eval[string](t, buyer, `document.querySelector("main [role=alert]").textContent`)
	require.NotContains(t, said, missing)
	require.NotContains(t, said, "R-")
}

// The order page says what is being bought (issue 23 item 5): the show's
// title as the heading, not the order's id; its route, operator and time;
// the seats. The sandbox's test tokens are there because this is dev.
func TestBrowserOrderSaysWhatIsBought(t *testing.T) {
	s, browser := openSite(t)
	tok := s.devToken(t, "web-order-words", "user")
	orderID := ordered(t, s, tok, "2", "H3", "H4")
	var got struct {
		Show struct {
			Title       string `json:"title"`
			Origin      string `json:"origin"`
			Destination string `json:"destination"`
			Operator    string `json:"operator"`
		} `json:"show"`
	}
	s.call(t, tok, "seatghor.catalog.v1.CatalogService/GetShow", map[string]any{"showId": 2}, &got)
	show := got.Show
	require.NotEmpty(t, show.Operator, "the demo show names its operator")

	ctx := tab(t, browser)
	do(t, ctx,
		signIn(s, "web-order-words", "user"),
		chromedp.Navigate(s.base+"/order/"+orderID),
		chromedp.WaitVisible(chromedp.CSS("#pay-success")),
		hasText("main h1", show.Title),
		hasText("#order-show", show.Origin+" → "+show.Destination),
		hasText("#order-show", show.Operator),
		// The time as people read it, the zone in words (decision 0307).
		hasText("#order-show", "M (Bangladesh time)"),
		hasText(".lines", "Seat H3"),
		hasText(".lines", "Seat H4"),
		hasText("#order-total", "৳"),
	)
	require.NotContains(t, eval[string](t, ctx, `document.querySelector("main h1").textContent`), orderID,
		"the heading is the show, not an internal id")
}

// One tap to the PDF of the whole order (issue 23 item 6, decision 0305):
// one link per order, not a button per ticket, its file named for the
// order; and the link stays good while the page is open: when its
// presigned URL nears its expiry (here: the page's clock moved on 10
// minutes) the page asks for a new one, which works.
func TestBrowserOrderPDF(t *testing.T) {
	s, browser := openSite(t)
	tok := s.devToken(t, "web-order-pdf", "user")
	orderID := ordered(t, s, tok, "11", "H1", "H2")
	s.call(t, tok, "seatghor.payment.v1.PaymentService/StartPayment",
		map[string]any{"orderId": orderID, "sandbox": map[string]any{"token": "tok_success"}}, nil)

	ctx := tab(t, browser)
	do(t, ctx,
		signIn(s, "web-order-pdf", "user"),
		chromedp.Navigate(s.base+"/tickets"),
		until(`document.querySelectorAll(".ticket .qr svg").length === 2`),
		chromedp.WaitVisible(chromedp.CSS("a[data-pdf]")),
		hasText("a[data-pdf]", "PDF of this order (2 tickets)"),
	)
	require.Equal(t, 1, eval[int](t, ctx, `document.querySelectorAll("a[data-pdf], .order button:not(.danger-outline)").length`),
		"one way to the PDF for the order, and nothing to tap first")
	name := eval[string](t, ctx, `document.querySelector("a[data-pdf]").getAttribute("download")`)
	require.Equal(t, "seatghor-"+orderID+".pdf", name)
	first := eval[string](t, ctx, `document.querySelector("a[data-pdf]").href`)
	requireOrderPDF(t, first, orderID)

	do(t, ctx,
		script(`const real = Date.now; Date.now = () => real() + 10 * 60 * 1000`),
		until(`document.querySelector("a[data-pdf]").href !== `+strconv.Quote(first)),
	)
	requireOrderPDF(t, eval[string](t, ctx, `document.querySelector("a[data-pdf]").href`), orderID)
}

// requireOrderPDF fetches a PDF link and checks it saves under the order's name.
func requireOrderPDF(t *testing.T, href, orderID string) {
	t.Helper()
	resp, err := http.Get(href)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	require.True(t, bytes.HasPrefix(body, []byte("%PDF")), "a PDF")
	require.Contains(t, resp.Header.Get("Content-Disposition"), "seatghor-"+orderID+".pdf")
}

// refused is what the API answered a refused call: its reason and message.
type refused struct{ reason, message string }

// refusal makes a Connect JSON call that must be refused and returns what
// the server said.
func refusal(t *testing.T, s *devServer, token, procedure string, req any) refused {
	t.Helper()
	body, err := json.Marshal(req)
	require.NoError(t, err)
	r, err := http.NewRequest(http.MethodPost, s.base+"/"+procedure, bytes.NewReader(body))
	require.NoError(t, err)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer "+token)
	r.Header.Set("Idempotency-Key", strconv.FormatInt(time.Now().UnixNano(), 36))
	res, err := http.DefaultClient.Do(r)
	require.NoError(t, err)
	defer res.Body.Close()
	var out struct {
		Message string `json:"message"`
		Details []struct {
			Type  string `json:"type"`
			Debug struct {
				Reason string `json:"reason"`
			} `json:"debug"`
		} `json:"details"`
	}
	require.NoError(t, json.NewDecoder(res.Body).Decode(&out))
	require.NotEqual(t, http.StatusOK, res.StatusCode)
	got := refused{message: out.Message}
	for _, d := range out.Details {
		if strings.HasSuffix(d.Type, "google.rpc.ErrorInfo") {
			got.reason = d.Debug.Reason
		}
	}
	require.NotEmpty(t, got.message)
	return got
}
