package site_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// phone is a tab as a phone shows the site: 412×915, mobile, touch.
func phone(t *testing.T, browser context.Context) context.Context {
	t.Helper()
	ctx := tab(t, browser)
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(412, 915, chromedp.EmulateMobile, chromedp.EmulateTouch)))
	return ctx
}

// smallestSeat is the smallest width or height of a drawn seat's box, in
// CSS px (the seat is the tap target: a coach's <g> and square, a venue's
// grid cell over its seat).
const smallestSeat = `Math.min(...[...document.querySelectorAll(".seat")].flatMap((s) => {
	const r = s.getBoundingClientRect(); return [r.width, r.height] }))`

// legendMisses lists the seat states and kinds drawn that the legend has
// no key for.
const legendMisses = `[...new Set([...document.querySelectorAll(".seat")].flatMap((s) =>
	[...s.classList].filter((c) => c !== "seat" && c !== "vm-cell")))].filter((c) => !document.querySelector(".legend .key." + c))`

// blockSeatMap makes the page's seat-map refreshes fail (they are retried
// later), so what the page draws next comes from what the buyer does only.
var blockSeatMap = script(`const f = window.fetch; window.fetch = (u, o) =>
	String(u instanceof Request ? u.url : u).includes("GetSeatMap") ? Promise.reject(new TypeError("blocked by the test")) : f(u, o)`)

// The seat map on a phone: the largest demo stand (60 seats a row) drawn
// whole at first; a tap on a seat drawn smaller than a finger zooms in
// there to 44 px seats, a drag moves the map (not the page) and a tap then
// chooses the seat (decisions 0309, 0405); a small hall's seats are 44×44
// CSS px at once, and the legend has a key for every state drawn, the
// buyer's own hold included, also just after a release while the seats
// are still drawn as theirs. Fails before: seats were 30 px squares, and
// after a release the legend dropped "your hold" while the seats still
// showed it.
func TestBrowserSeatMapFitsAPhone(t *testing.T) {
	s, browser := openSite(t)
	ctx := phone(t, browser)
	do(t, ctx,
		signIn(s, "web-phone", "user"),
		chromedp.Navigate(s.base+"/show/3"),
		chromedp.WaitVisible(chromedp.CSS("canvas.vm-canvas")),
		chromedp.WaitVisible(chromedp.CSS("#seat-K1")),
		until(`document.querySelector("#seat-K1").getAttribute("aria-label").includes("free")`),
	)
	require.True(t, eval[bool](t, ctx, inStage("#seat-A1")) && eval[bool](t, ctx, inStage("#seat-K1")), "both stands in view")
	require.Less(t, eval[float64](t, ctx, smallestSeat), 44.0, "the whole map: seats smaller than a finger")
	do(t, ctx,
		tapOn("#seat-K1"),
		until(`Number(document.querySelector(".vm-box").dataset.scale) >= 4.7`),
		until(`!!document.querySelector("#seat-K2")`),
	)
	require.GreaterOrEqual(t, eval[float64](t, ctx, smallestSeat), 44.0, "zoomed in: 44 px targets")
	require.False(t, eval[bool](t, ctx, `!!document.querySelector("#chosen")`), "the tap that zoomed chose nothing")
	// The 60th seat of the row is off to the right: drag the map to it.
	for range 15 {
		if eval[bool](t, ctx, `!!document.querySelector("#seat-K60") && `+inStage("#seat-K60")) {
			break
		}
		do(t, ctx, touchDrag(360, 0, 60, 0))
	}
	do(t, ctx,
		until(inStage("#seat-K60")),
		tapOn("#seat-K60"),
		until(`document.querySelector("#seat-K60").getAttribute("aria-selected") === "true"`),
		hasText("#chosen", "K60"),
	)
	require.LessOrEqual(t, eval[int](t, ctx, `document.documentElement.scrollWidth`), 412, "the page itself does not scroll sideways")
	require.Empty(t, eval[[]string](t, ctx, legendMisses))

	show := holdShow(t, s, "Phone Hall", 6)
	do(t, ctx,
		chromedp.Navigate(s.base+"/show/"+show),
		chromedp.WaitVisible(chromedp.CSS("#seat-A6")),
		until(`document.querySelector("#seat-A6").getAttribute("aria-label").includes("free")`),
	)
	require.GreaterOrEqual(t, eval[float64](t, ctx, smallestSeat), 44.0)
	do(t, ctx,
		chromedp.Click(chromedp.CSS("#seat-A5")),
		chromedp.Click(chromedp.CSS("#seat-A6")),
		hasText("#chosen", "A5, A6"),
		chromedp.Click(chromedp.CSS("#hold-seats")),
		chromedp.WaitVisible(chromedp.CSS("#countdown")),
		mine("A5"), mine("A6"),
	)
	require.Empty(t, eval[[]string](t, ctx, legendMisses))
	do(t, ctx,
		blockSeatMap,
		chromedp.Click(chromedp.CSS(".hold button:not(.primary)")),
		until(`!document.querySelector("#countdown")`),
	)
	require.Empty(t, eval[[]string](t, ctx, legendMisses), "the legend after a release")

	// The seat map's focus ring is the site's focus colour, not an error's red.
	do(t, ctx, chromedp.Focus(chromedp.CSS("#seat-A1")))
	require.Equal(t, "rgb(26, 95, 180)", eval[string](t, ctx, `getComputedStyle(document.querySelector("#seat-A1")).outlineColor`))
}

// A seat taken between drawing and holding: the message never contradicts
// the panel below it. With nothing else chosen it does not say the other
// seats are still chosen; a seat the buyer holds in another tab is said to
// be theirs and shown in the panel, not taken by someone else (decision
// 0310). The map's refresh is blocked so the refused hold is what tells.
// Fails before: "Your other seats are still chosen." over "No seats
// chosen", and the buyer's own seat said taken by someone else.
func TestBrowserConflictAgreesWithThePanel(t *testing.T) {
	s, browser := openSite(t)
	show := holdShow(t, s, "Conflict Hall", 6)
	first, second := phone(t, browser), phone(t, browser)
	do(t, first, signIn(s, "web-conflict-first", "user"))
	do(t, second, signIn(s, "web-conflict-second", "user"))
	for _, ctx := range []context.Context{first, second} {
		do(t, ctx,
			chromedp.Navigate(s.base+"/show/"+show),
			chromedp.WaitVisible(chromedp.CSS("#seat-A1")),
			until(`document.querySelector("#seat-A1").getAttribute("aria-label").includes("free")`),
		)
	}
	do(t, second, blockSeatMap, chromedp.Click(chromedp.CSS("#seat-A1")), hasText("#chosen", "A1"))
	do(t, first,
		chromedp.Click(chromedp.CSS("#seat-A1")),
		chromedp.Click(chromedp.CSS("#hold-seats")),
		chromedp.WaitVisible(chromedp.CSS("#countdown")),
	)
	do(t, second,
		chromedp.Click(chromedp.CSS("#hold-seats")),
		hasText("#msg", "A1"),
		until(`document.querySelector("#seat-A1").classList.contains("s1")`),
	)
	msg := eval[string](t, second, `document.querySelector("#msg").textContent`)
	require.False(t, eval[bool](t, second, `!!document.querySelector("#chosen")`), "nothing is chosen now")
	require.NotContains(t, msg, "still chosen")
	require.Contains(t, msg, "Choose another seat")

	// The same buyer in a second tab holds A2 of the choice A2, A3 this tab
	// still shows as free.
	token := eval[string](t, second, `sessionStorage.getItem("seatghor.token")`)
	other := phone(t, browser)
	do(t, second,
		chromedp.Click(chromedp.CSS("#seat-A2")),
		chromedp.Click(chromedp.CSS("#seat-A3")),
		hasText("#chosen", "A2, A3"),
	)
	do(t, other,
		chromedp.Navigate(s.base+"/"),
		script(`sessionStorage.setItem("seatghor.token", `+strconv.Quote(token)+`)`),
		chromedp.Navigate(s.base+"/show/"+show),
		chromedp.WaitVisible(chromedp.CSS("#seat-A2")),
		until(`document.querySelector("#seat-A2").getAttribute("aria-label").includes("free")`),
		chromedp.Click(chromedp.CSS("#seat-A2")),
		chromedp.Click(chromedp.CSS("#hold-seats")),
		chromedp.WaitVisible(chromedp.CSS("#countdown")),
	)
	do(t, second,
		chromedp.Click(chromedp.CSS("#hold-seats")),
		hasText("#msg", "A2"),
		hasText("#hold", "A2"),
		mine("A2"),
		hasText("#chosen", "A3"),
	)
	msg = eval[string](t, second, `document.querySelector("#msg").textContent`)
	require.NotContains(t, msg, "someone else")
	require.Contains(t, msg, "your hold")
	require.Empty(t, eval[[]string](t, second, legendMisses))
}
