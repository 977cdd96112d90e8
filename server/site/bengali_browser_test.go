package site_test

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// Bengali all the way (issue 23 item 7): in the Bengali UI a buyer walks
// search → seat map → order → tickets and reads every place in Bengali,
// times as "সকাল ৮:০০" with the zone in words and no AM/PM, and the
// Bengali comes in the site's own web font (decision 0308): this machine
// has no Bengali system font, so Bengali text could only be drawn by it.
func TestBrowserBengaliAllTheWay(t *testing.T) {
	if out, err := exec.Command("fc-list", ":lang=bn").Output(); err == nil && len(strings.TrimSpace(string(out))) > 0 {
		t.Logf("this machine has a Bengali system font; the web font is still asserted loaded: %s", out)
	}
	s, browser := openSite(t)
	ctx := tab(t, browser)
	do(t, ctx,
		signIn(s, "web-bn-all", "user"),
		chromedp.Navigate(s.base+"/"),
		chromedp.WaitVisible(chromedp.CSS("#from")),
	)
	do(t, ctx,
		chromedp.Click(chromedp.CSS("#lang")),
		until(`document.documentElement.lang === "bn"`),
		// The date field follows the page's language.
		until(`document.querySelector("#date").lang === "bn"`),
		chromedp.SendKeys(chromedp.CSS("#from"), "Dhaka"),
		chromedp.SendKeys(chromedp.CSS("#to"), "Chattogram"),
		onDemoDay(), // the demo shows' day, after the demo network's trips
		chromedp.Click(chromedp.CSS("form.search button[type=submit]")),
		hasText("#trips", "চট্টগ্রাম"),
		chromedp.Click(chromedp.CSS(`#trips a[href="/show/1"]`)),
		chromedp.WaitVisible(chromedp.CSS("#seat-J3")),
		hasText("main h1", "ঢাকা → চট্টগ্রাম"),
	)
	inBengali(t, ctx, "the seat map")
	// The section's Bengali name (Section.name_bn), on the map too.
	do(t, ctx, hasText(".sm-section h3", "প্রধান"))
	require.NotContains(t, mainText(t, ctx), "Main")
	// Show 1 leaves at 08:00 in Dhaka.
	require.Contains(t, mainText(t, ctx), "সকাল ৮:০০")
	require.Contains(t, mainText(t, ctx), "বাংলাদেশ সময়")
	usesTheWebFont(t, ctx)
	shot(t, ctx, "bengali-seatmap")

	do(t, ctx,
		chromedp.Click(chromedp.CSS("#seat-J3")),
		until(`document.querySelector("#seat-J3").getAttribute("aria-selected") === "true"`),
		chromedp.Click(chromedp.CSS("#hold-seats")),
		chromedp.WaitVisible(chromedp.CSS("#to-order")),
		chromedp.Click(chromedp.CSS("#to-order")),
		chromedp.WaitVisible(chromedp.CSS("#passengers")),
		hasText("main h1", "কে কে যাচ্ছেন"),
	)
	inBengali(t, ctx, "the passengers")
	do(t, ctx,
		// A Bengali name, the number in Bengali digits (decision 0382).
		fillPassengers([2]string{"রহিমা খাতুন", "০১৭১১-২৩৪৫৬৭"}),
		chromedp.WaitVisible(chromedp.CSS("#pay-success")),
		hasText("#order-show", "ঢাকা → চট্টগ্রাম"),
		hasText("main .lines", "রহিমা খাতুন"),
	)
	inBengali(t, ctx, "the order")
	require.Contains(t, mainText(t, ctx), "সকাল ৮:০০")
	require.Contains(t, eval[string](t, ctx, `getComputedStyle(document.querySelector("main .id")).fontFamily`), "monospace",
		"the order id in the one Latin typeface of ids")

	do(t, ctx,
		chromedp.Click(chromedp.CSS("#pay-success")),
		chromedp.WaitVisible(chromedp.CSS("#paid")),
		chromedp.Navigate(s.base+"/tickets"),
		until(`document.querySelectorAll(".ticket").length === 1`),
		hasText("main", "ঢাকা → চট্টগ্রাম"),
	)
	inBengali(t, ctx, "my tickets")
	require.Contains(t, mainText(t, ctx), "সকাল ৮:০০")
	usesTheWebFont(t, ctx)
	shot(t, ctx, "bengali-tickets")
}

// fontFetched: whether the page fetched the Bengali web font.
const fontFetched = `performance.getEntriesByType("resource").some((e) => e.name.includes("noto-sans-bengali"))`

func mainText(t *testing.T, ctx context.Context) string {
	t.Helper()
	return eval[string](t, ctx, `document.querySelector("main").innerText`)
}

// inBengali: no place in English letters and no AM/PM on the page.
func inBengali(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	textInBengali(t, page, mainText(t, ctx))
}

// partInBengali is inBengali for the part of the page selector names.
func partInBengali(t *testing.T, ctx context.Context, page, selector string) {
	t.Helper()
	textInBengali(t, page, eval[string](t, ctx, `document.querySelector(`+strconv.Quote(selector)+`).innerText`))
}

func textInBengali(t *testing.T, page, text string) {
	t.Helper()
	for _, english := range []string{"Dhaka", "Chattogram", "Chittagong"} {
		require.NotContains(t, text, english, "%s names a place in English in the Bengali UI:\n%s", page, text)
	}
	require.NotRegexp(t, `\b(AM|PM|am|pm)\b`, text, "%s writes a time with AM/PM in the Bengali UI", page)
	require.Contains(t, text, "ঢাকা", page)
}

// usesTheWebFont: the site's Noto Sans Bengali is loaded, answers for
// Bengali text, and is the family the heading's Bengali is set in.
func usesTheWebFont(t *testing.T, ctx context.Context) {
	t.Helper()
	do(t, ctx, until(`document.fonts.status === "loaded"`))
	loaded := eval[bool](t, ctx, `[...document.fonts].some((f) => f.family.replace(/"/g, "") === "Noto Sans Bengali" && f.status === "loaded")`)
	require.True(t, loaded, "the web font Noto Sans Bengali is loaded")
	require.True(t, eval[bool](t, ctx, fontFetched), "the font came from the site")
	require.True(t, eval[bool](t, ctx, `document.fonts.check('16px "Noto Sans Bengali"', "ঢাকা")`))
	family := eval[string](t, ctx, `getComputedStyle(document.querySelector("main h1, main h2")).fontFamily`)
	require.True(t, strings.HasPrefix(family, `"Noto Sans Bengali"`), fmt.Sprintf("font-family %s", family))
}
