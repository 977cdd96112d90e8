package site_test

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/require"
)

// fillPassengers names the passengers of a bus trip's held seats, in seat
// order (name, then mobile number), and goes on to payment (decision 0380).
func fillPassengers(people ...[2]string) chromedp.Action[chromedp.Void] {
	steps := []chromedp.Action[chromedp.Void]{chromedp.WaitVisible(chromedp.CSS("#passengers"))}
	for i, p := range people {
		steps = append(steps,
			chromedp.SendKeys(chromedp.CSS(fmt.Sprintf("#p%d-name", i)), p[0]),
			chromedp.SendKeys(chromedp.CSS(fmt.Sprintf("#p%d-phone", i)), p[1]))
	}
	return chromedp.Steps(append(steps, chromedp.Click(chromedp.CSS("#to-pay")))...)
}

// TestBrowserPassengers: a bus trip's hold goes on to a form of its
// passengers, a fieldset per seat, before the order. The page refuses a
// missing name and a number that is not a Bangladeshi mobile, says so on
// the field (aria-invalid, the words tied to it) and in a summary, and
// moves the focus to the first; fixed, by keyboard alone, the order names
// the passengers (the number as typed, with dashes, accepted), and so do
// the tickets.
func TestBrowserPassengers(t *testing.T) {
	s, browser := openSite(t)
	ctx := tab(t, browser)
	do(t, ctx,
		signIn(s, "web-passengers", "user"),
		chromedp.Navigate(s.base+"/show/7"),
		chromedp.WaitVisible(chromedp.CSS("#seat-B1")),
		until(`document.querySelector("#seat-B1").getAttribute("aria-label").includes("free")`),
		chromedp.Click(chromedp.CSS("#seat-B1")),
		chromedp.Click(chromedp.CSS("#seat-B2")),
		chromedp.Click(chromedp.CSS("#hold-seats")),
		chromedp.WaitVisible(chromedp.CSS("#to-order")),
		chromedp.Click(chromedp.CSS("#to-order")),
		chromedp.WaitVisible(chromedp.CSS("#passengers")),
		hasText("main h1", "Who is travelling"),
		hasText(`fieldset[data-seat="B1"] legend`, "Seat B1"),
		hasText(`fieldset[data-seat="B2"] legend`, "Seat B2"),
		chromedp.SendKeys(chromedp.CSS("#p0-name"), "Rahim Uddin"),
		chromedp.SendKeys(chromedp.CSS("#p0-phone"), "01211-234567"), // 012: no operator's
		chromedp.Click(chromedp.CSS("#to-pay")),
		hasText("#passengers-problems", "Please correct the 3 fields marked below."),
		until(`document.activeElement?.id === "p0-phone"`),
		until(`document.querySelector("#p0-phone").getAttribute("aria-invalid") === "true"`),
		until(`document.querySelector("#p1-name").getAttribute("aria-invalid") === "true"`),
		until(`document.querySelector("#p0-name").getAttribute("aria-invalid") === null`),
		hasText("#p0-phone-err", "Bangladeshi mobile number"),
		until(`document.querySelector("#p0-phone").getAttribute("aria-describedby").includes("p0-phone-err")`),
	)
	require.Contains(t, eval[string](t, ctx, `location.pathname`), "/passengers/", "nothing was ordered")
	shot(t, ctx, "passengers")
	do(t, ctx,
		// By keyboard: the number again, the second passenger, a woman.
		tabTo("#p0-phone"), key(kb.End), key("\b\b\b\b\b\b\b\b\b\b\b\b"), key("+880 1711-234567"),
		tabTo("#p1-name"), key("সুন্দরী খাতুন"),
		tabTo("#p1-phone"), key("০১৮১৯-০০০০০০"),
		tabTo("#p1-woman"), key(" "),
		tabTo("#to-pay"), key(kb.Enter),
		chromedp.WaitVisible(chromedp.CSS("#pay-success")),
		hasText("main .lines", "Rahim Uddin"),
		hasText("main .lines", "সুন্দরী খাতুন"),
		chromedp.Click(chromedp.CSS("#pay-success")),
		chromedp.WaitVisible(chromedp.CSS("#paid")),
		chromedp.Navigate(s.base+"/tickets"),
		until(`document.querySelectorAll(".ticket .passenger").length === 2`),
		hasText("main", "Passenger: Rahim Uddin"),
		hasText("main", "Passenger: সুন্দরী খাতুন"),
	)
}
