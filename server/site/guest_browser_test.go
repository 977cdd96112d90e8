package site_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/ticket"
)

// sandboxSMS is what the dev server's SMS sandbox received for a number,
// newest first, read as an admin (ListSandboxSms).
func sandboxSMS(t *testing.T, s *devServer, number string) []string {
	t.Helper()
	var got struct {
		Messages []struct {
			Text string `json:"text"`
		} `json:"messages"`
	}
	s.call(t, s.devToken(t, "web-sms-admin", "admin"), "seatghor.notify.v1.NotificationService/ListSandboxSms",
		map[string]any{"phone": number, "pageSize": 50}, &got)
	out := make([]string, 0, len(got.Messages))
	for _, m := range got.Messages {
		out = append(out, m.Text)
	}
	return out
}

// TestBrowserGuestCheckoutToCheckIn: issue 25's walk in a real browser
// (decision 0437). A buyer with no account continues as a guest on a
// coach, names the passenger, must give the mobile number the tickets go
// to, and pays. The booking SMS names the ticket number. In another
// browser with no session, the SMS's link asks for the number and shows
// the ticket's QR code; "send the SMS again" sends it once more. The gate
// admits the code the page shows. Then the number signs in by SMS code on
// the sign-in page, and "my tickets" lists the guest's ticket, checked in
// (status 2).
func TestBrowserGuestCheckoutToCheckIn(t *testing.T) {
	s, browser := openSite(t)
	const number, typed = "+8801755123987", "01755-123987"
	ctx := tab(t, browser)
	do(t, ctx,
		chromedp.Navigate(s.base+"/show/12"),
		chromedp.WaitVisible(chromedp.CSS("#guest-start")),
		chromedp.Click(chromedp.CSS("#guest-start")),
		chromedp.WaitVisible(chromedp.CSS("#seat-E3")),
		until(`document.querySelector("#seat-E3").getAttribute("aria-label").includes("free")`),
		chromedp.Click(chromedp.CSS("#seat-E3")),
		chromedp.Click(chromedp.CSS("#hold-seats")),
		chromedp.WaitVisible(chromedp.CSS("#to-order")),
		chromedp.Click(chromedp.CSS("#to-order")),
		chromedp.WaitVisible(chromedp.CSS("#contact-phone")),
		// No number: the page says where it is needed and orders nothing.
		chromedp.SendKeys(chromedp.CSS("#p0-name"), "Nasima Akter"),
		chromedp.SendKeys(chromedp.CSS("#p0-phone"), "01819-000111"),
		chromedp.Click(chromedp.CSS("#to-pay")),
		until(`document.querySelector("#contact-phone").getAttribute("aria-invalid") === "true"`),
	)
	require.Contains(t, eval[string](t, ctx, `location.pathname`), "/passengers/", "nothing was ordered")
	do(t, ctx,
		chromedp.SendKeys(chromedp.CSS("#contact-phone"), typed),
		chromedp.Click(chromedp.CSS("#to-pay")),
		chromedp.WaitVisible(chromedp.CSS("#pay-success")),
		chromedp.Click(chromedp.CSS("#pay-success")),
		chromedp.WaitVisible(chromedp.CSS("#paid")),
	)
	orderID := strings.TrimPrefix(eval[string](t, ctx, `location.pathname`), "/order/")
	require.True(t, strings.HasPrefix(orderID, "ord_"), orderID)

	// The booking SMS, to the guest's number, names the ticket number
	// and links to it (decision 0471).
	ticketNumber := ticket.Number(orderID)
	var booking string
	require.Eventually(t, func() bool {
		for _, m := range sandboxSMS(t, s, number) {
			if strings.Contains(m, ticketNumber) {
				booking = m
			}
		}
		return booking != ""
	}, 30*time.Second, 200*time.Millisecond, "the booking SMS")
	link := regexp.MustCompile(`https?://\S+/t/\S+`).FindString(booking)
	require.NotEmpty(t, link, booking)
	path := link[strings.Index(link, "/t/"):]
	require.Equal(t, "/t/"+ticketNumber, path)
	// In the guest's own browser the link opens the order itself.
	do(t, ctx,
		chromedp.Navigate(s.base+path),
		until(`location.pathname === "/order/`+orderID+`"`),
		chromedp.WaitVisible(chromedp.CSS("#paid")),
		hasText("#ticket-number", ticketNumber),
	)

	// Another browser, no session: the SMS's link finds the ticket.
	other := tab(t, browser)
	do(t, other,
		chromedp.Navigate(s.base+path),
		chromedp.WaitVisible(chromedp.CSS("#find-phone")),
		until(`document.querySelector("#find-order").value === `+jsString(ticketNumber)),
		chromedp.SendKeys(chromedp.CSS("#find-phone"), "01755-123988"),
		chromedp.Click(chromedp.CSS("#find-submit")),
		chromedp.WaitVisible(chromedp.CSS("#find-missed")),
		chromedp.SendKeys(chromedp.CSS("#find-phone"), strings.Repeat("\b", 20)+typed),
		chromedp.Click(chromedp.CSS("#find-submit")),
		until(`document.querySelectorAll("[data-ticket-id] .qr svg").length === 1`),
		hasText("main", "Nasima Akter"),
		hasText("main", "E3"),
	)
	shot(t, other, "guest-find")
	ticketID := eval[string](t, other, `document.querySelector("[data-ticket-id]").getAttribute("data-ticket-id")`)
	before := len(sandboxSMS(t, s, number))
	do(t, other,
		chromedp.Click(chromedp.CSS("#find-resend")),
		hasText("#find-resent", "+880"),
	)
	require.Len(t, sandboxSMS(t, s, number), before+1, "the SMS went once more")

	// The gate admits the ticket (its id, printed under the QR code).
	var checked struct {
		Admitted bool `json:"admitted"`
	}
	s.call(t, s.devToken(t, "web-guest-gate", "admin"), "seatghor.tickets.v1.TicketService/CheckInTicket",
		map[string]any{"showId": 12, "gate": "gabtoli", "ticketId": ticketID}, &checked)
	require.True(t, checked.Admitted)

	// The number signs in by SMS code; its tickets are the guest's.
	signedIn := tab(t, browser)
	do(t, signedIn,
		chromedp.Navigate(s.base+"/signin?next=/tickets"),
		chromedp.WaitVisible(chromedp.CSS("#phone-number")),
		chromedp.SendKeys(chromedp.CSS("#phone-number"), typed),
		chromedp.Click(chromedp.CSS("#phone-send")),
		chromedp.WaitVisible(chromedp.CSS("#phone-code")),
	)
	var otp string
	require.Eventually(t, func() bool {
		msgs := sandboxSMS(t, s, number)
		otp = regexp.MustCompile(`[0-9]{6}`).FindString(msgs[0])
		return otp != "" && !strings.Contains(msgs[0], ticketNumber)
	}, 10*time.Second, 100*time.Millisecond)
	do(t, signedIn,
		chromedp.SendKeys(chromedp.CSS("#phone-code"), otp),
		chromedp.Click(chromedp.CSS("#phone-verify")),
		until(`location.pathname === "/tickets"`),
		until(`document.querySelectorAll(".ticket .qr svg").length >= 1`),
		hasText("main", "Nasima Akter"),
		until(`document.querySelector('[data-ticket-id="`+ticketID+`"]')?.className.includes("st2")`),
	)
	shot(t, signedIn, "guest-my-tickets")
}
