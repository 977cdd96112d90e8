package site_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/internal/testkit/mailpittest"
	"github.com/seatghor/seatghor/server/ticket"
)

// TestBrowserAccountBuyerGivesAContact (decision 0472): a buyer with an
// account, in Bengali, is offered the order's contact too, both fields
// optional; a malformed e-mail address is refused in the page with nothing
// ordered; then the booking's e-mail reaches the address (dev's mailpit)
// and its SMS the number, both in Bengali, naming the ticket number and
// its short link. Fails before: only a guest was asked, for a number.
func TestBrowserAccountBuyerGivesAContact(t *testing.T) {
	s, browser := openSite(t)
	inbox := regexp.MustCompile(`e-mail inbox:\s+(http://\S+)`).FindStringSubmatch(s.log())
	require.NotNil(t, inbox, "dev prints its mailpit inbox")
	mail := &mailpittest.Server{API: inbox[1]}
	const address, typed, number = "nasima.contact@example.com", "01712-404404", "+8801712404404"

	ctx := tab(t, browser)
	do(t, ctx,
		signIn(s, "web-contact", "user"),
		chromedp.Navigate(s.base+"/show/3"),
		chromedp.Click(chromedp.CSS("#lang")),
		until(`document.documentElement.lang === "bn"`),
		chromedp.WaitVisible(chromedp.CSS(".ga input[type=number]")),
		chromedp.SetValue(chromedp.CSS(".ga input[type=number]"), ""),
		chromedp.SendKeys(chromedp.CSS(".ga input[type=number]"), "1"),
		chromedp.Click(chromedp.CSS(".ga button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS("#countdown")),
		chromedp.WaitVisible(chromedp.CSS("#contact-email")),
		hasText(".contact", "ঐচ্ছিক"),
	)
	require.False(t, eval[bool](t, ctx, `document.querySelector("#contact-phone").required`), "an account's number is optional")
	do(t, ctx,
		chromedp.SendKeys(chromedp.CSS("#contact-email"), "nasima@"),
		chromedp.Click(chromedp.CSS("#to-order")),
		hasText("#contact-email-err", "ই-মেইল ঠিকানা"),
		until(`document.activeElement.id === "contact-email"`),
	)
	require.True(t, strings.HasPrefix(eval[string](t, ctx, `location.pathname`), "/show/"), "nothing was ordered")
	do(t, ctx,
		typeIn("#contact-email", address),
		chromedp.SendKeys(chromedp.CSS("#contact-phone"), typed),
		script(`document.querySelector(".contact").scrollIntoView()`),
	)
	shot(t, ctx, "bengali-checkout-contact")
	do(t, ctx,
		chromedp.Click(chromedp.CSS("#to-order")),
		chromedp.WaitVisible(chromedp.CSS("#pay-success")),
		chromedp.Click(chromedp.CSS("#pay-success")),
		chromedp.WaitVisible(chromedp.CSS("#paid")),
	)
	tn := ticket.Number(strings.TrimPrefix(eval[string](t, ctx, `location.pathname`), "/order/"))
	require.NotEmpty(t, tn)

	// The e-mail, in Bengali, to the address given.
	var text string
	require.Eventually(t, func() bool {
		msgs, err := mail.Messages(context.Background())
		require.NoError(t, err)
		for _, m := range msgs {
			if len(m.To) == 1 && m.To[0].Address == address {
				require.Contains(t, m.Subject, "বুকিং নিশ্চিত")
				text, err = mail.Text(context.Background(), m.ID)
				require.NoError(t, err)
				return true
			}
		}
		return false
	}, 30*time.Second, 200*time.Millisecond, "the booking's e-mail")
	require.Contains(t, text, "টিকিট নম্বর: "+tn)
	require.Contains(t, text, "/t/"+tn)

	// And the SMS, in Bengali, to the number given.
	require.Eventually(t, func() bool {
		for _, m := range sandboxSMS(t, s, number) {
			if strings.Contains(m, "বুকিং নিশ্চিত, টিকিট "+tn) {
				return true
			}
		}
		return false
	}, 30*time.Second, 200*time.Millisecond, "the booking's SMS")
}
