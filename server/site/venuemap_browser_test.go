package site_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/require"
)

// The venue map (clients/web/src/venuemap.ts, decisions 0403–0405): a
// canvas draws every seat; the grids hold the rows in view only.

// inStage is a condition: the centre of the element lies in the map's
// box (drawn there, not clipped away).
func inStage(sel string) string {
	return fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) return false;
		const r = e.getBoundingClientRect(), s = document.querySelector(".vm-stage").getBoundingClientRect();
		const x = r.left + r.width / 2, y = r.top + r.height / 2;
		return x > s.left && x < s.right && y > s.top && y < s.bottom })()`, sel)
}

// viewOf reads the map's view: scale, x and y (data-* of .vm-box).
const viewOf = `(() => { const d = document.querySelector(".vm-box").dataset; return [Number(d.scale), Number(d.x), Number(d.y)] })()`

// pixelUnder is the canvas's colour [r, g, b] under the centre of an
// element, or under a point of the page given as [x, y].
func pixelUnder(target string) string {
	return fmt.Sprintf(`(() => { const t = %s; let x, y;
		if (Array.isArray(t)) { [x, y] = t } else { const r = document.querySelector(t).getBoundingClientRect(); x = r.left + r.width / 2; y = r.top + r.height / 2 }
		const c = document.querySelector("canvas.vm-canvas"), b = c.getBoundingClientRect(), k = c.width / b.width;
		return [...c.getContext("2d").getImageData(Math.floor((x - b.left) * k), Math.floor((y - b.top) * k), 1, 1).data.slice(0, 3)] })()`, target)
}

// centreOf is the page coordinates of the centre of an element.
func centreOf(ctx context.Context, tg *chromedp.Target, sel string) (float64, float64, error) {
	p, err := chromedp.Evaluate[[]float64](fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.scrollIntoView({ block: "nearest" });
		const r = e.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2] })()`, sel))(ctx, tg)
	if err != nil {
		return 0, 0, err
	}
	return p[0], p[1], nil
}

// tapOn taps the centre of an element with a finger.
func tapOn(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		x, y, err := centreOf(ctx, tg, sel)
		if err != nil {
			return err
		}
		_, err = chromedp.TapXY(x, y)(ctx, tg)
		return err
	})
}

func finger(id, x, y float64) *input.TouchPoint {
	one := 1.0
	return &input.TouchPoint{X: x, Y: y, RadiusX: &one, RadiusY: &one, Force: &one, ID: &id}
}

// touches moves fingers on the map from where they start to where they
// end, in steps (x from the map's left, y from its middle): one finger
// drags, two pinch.
func touches(from, to [][2]float64) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, y, err := centreOf(ctx, tg, ".vm-stage")
		if err != nil {
			return err
		}
		left, err := chromedp.Evaluate[float64](`document.querySelector(".vm-stage").getBoundingClientRect().left`)(ctx, tg)
		if err != nil {
			return err
		}
		at := func(k float64) []*input.TouchPoint {
			var pts []*input.TouchPoint
			for i := range from {
				pts = append(pts, finger(float64(i), left+from[i][0]+(to[i][0]-from[i][0])*k, y+from[i][1]+(to[i][1]-from[i][1])*k))
			}
			return pts
		}
		send := func(typ input.DispatchTouchEventType, pts []*input.TouchPoint) error {
			_, err := cdp.Call(ctx, tg, input.DispatchTouchEvent, input.DispatchTouchEventParams{Type: typ, TouchPoints: pts})
			return err
		}
		if err := send(input.DispatchTouchEventTypeTouchStart, at(0)); err != nil {
			return err
		}
		for step := 1; step <= 6; step++ {
			if err := send(input.DispatchTouchEventTypeTouchMove, at(float64(step)/6)); err != nil {
				return err
			}
		}
		return send(input.DispatchTouchEventTypeTouchEnd, []*input.TouchPoint{})
	})
}

// touchDrag drags the map with one finger.
func touchDrag(x0, y0, x1, y1 float64) chromedp.Action[chromedp.Void] {
	return touches([][2]float64{{x0, y0}}, [][2]float64{{x1, y1}})
}

// mouse sends mouse events at points of the map (from its left, middle).
func mouse(events ...input.DispatchMouseEventParams) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, y, err := centreOf(ctx, tg, ".vm-stage")
		if err != nil {
			return err
		}
		left, err := chromedp.Evaluate[float64](`document.querySelector(".vm-stage").getBoundingClientRect().left`)(ctx, tg)
		if err != nil {
			return err
		}
		for _, e := range events {
			e.X += left
			e.Y += y
			if _, err := cdp.Call(ctx, tg, input.DispatchMouseEvent, e); err != nil {
				return err
			}
		}
		return nil
	})
}

// The benchmark's 50,000-seat stadium is drawn whole at once, on a
// canvas: every section's seats on it (each section's first seat drawn
// where its grid's cell says, and more seat-coloured pixels than 40,000
// seats would fill), and no element a seat: the grids hold one cell a
// section (its tab stop) while the seats are drawn too small to read.
// Fails before: the stadium was drawn a section at a time, as 10,000 SVG
// elements.
func TestBrowserStadiumDrawnWhole(t *testing.T) {
	s, browser := openSite(t)
	stadium := benchStadium(t, s)
	ctx := phone(t, browser)
	do(t, ctx,
		signIn(s, "web-stadium", "user"),
		chromedp.Navigate(s.base+"/show/"+stadium),
		chromedp.WaitVisible(chromedp.CSS("canvas.vm-canvas")),
		until(`performance.getEntriesByName("seatmap-draw").length > 0`),
		until(`document.querySelectorAll(".vm-grid").length === 10`),
	)
	require.LessOrEqual(t, eval[int](t, ctx, `document.querySelectorAll("[role=gridcell]").length`), 10, "a cell a section")
	require.Less(t, eval[int](t, ctx, `document.getElementsByTagName("*").length`), 1500, "no element a seat")
	require.Equal(t, "50", eval[string](t, ctx, `document.querySelector(".vm-grid").getAttribute("aria-rowcount")`))
	require.Equal(t, "100", eval[string](t, ctx, `document.querySelector(".vm-grid").getAttribute("aria-colcount")`))
	// Free seats are drawn green while they are dots (venuepaint.ts DOT).
	free := []int{0x52, 0xb7, 0x88}
	for _, cell := range eval[[]string](t, ctx, `[...document.querySelectorAll("[role=gridcell]")].map((c) => c.id)`) {
		require.True(t, eval[bool](t, ctx, inStage("#"+cell)), "%s is in view", cell)
		require.Equal(t, free, eval[[]int](t, ctx, pixelUnder(`"#`+cell+`"`)), "%s is drawn", cell)
	}
	drawn := eval[int](t, ctx, `(() => { const c = document.querySelector("canvas.vm-canvas");
		const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data; let n = 0;
		for (let i = 0; i < d.length; i += 4) if (d[i] === 0x52 && d[i + 1] === 0xb7 && d[i + 2] === 0x88) n++;
		return n })()`)
	require.Greater(t, drawn, 40_000, "the seats' pixels")
	t.Logf("drawn in %.0f ms, %d seat pixels", eval[float64](t, ctx, `performance.getEntriesByName("seatmap-draw")[0].duration`), drawn)
}

// Zoom and pan by keyboard (+ and −, arrows, 0 for the whole map), mouse
// (wheel, drag) and touch (pinch, drag) change the view.
func TestBrowserVenueMapZoomAndPan(t *testing.T) {
	s, browser := openSite(t)
	stadium := benchStadium(t, s)
	ctx := phone(t, browser)
	do(t, ctx,
		signIn(s, "web-zoom", "user"),
		chromedp.Navigate(s.base+"/show/"+stadium),
		chromedp.WaitVisible(chromedp.CSS("canvas.vm-canvas")),
	)
	whole := eval[[]float64](t, ctx, viewOf)
	do(t, ctx, tabTo(".vm-box"), key("+"), key("+"))
	zoomed := eval[[]float64](t, ctx, viewOf)
	require.Greater(t, zoomed[0], whole[0]*2, "+ zooms in")
	do(t, ctx, key(kb.ArrowRight), key(kb.ArrowDown))
	moved := eval[[]float64](t, ctx, viewOf)
	require.Less(t, moved[1], zoomed[1], "→ shows what is right")
	require.Less(t, moved[2], zoomed[2], "↓ shows what is below")
	do(t, ctx, key("-"))
	require.Less(t, eval[[]float64](t, ctx, viewOf)[0], zoomed[0], "− zooms out")
	do(t, ctx, key("0"))
	require.Equal(t, whole, eval[[]float64](t, ctx, viewOf), "0: the whole map again")

	// The mouse: the wheel zooms around the pointer, a drag moves.
	do(t, ctx, mouse(input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseWheel, X: 190, DeltaX: 0.01, DeltaY: -400}))
	wheeled := eval[[]float64](t, ctx, viewOf)
	require.Greater(t, wheeled[0], whole[0]*1.5, "the wheel zooms in")
	do(t, ctx, mouse(
		input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMousePressed, X: 300, Button: input.MouseButtonLeft, Buttons: 1, ClickCount: 1},
		input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved, X: 200, Button: input.MouseButtonLeft, Buttons: 1},
		input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved, X: 100, Button: input.MouseButtonLeft, Buttons: 1},
		input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseReleased, X: 100, Button: input.MouseButtonLeft, ClickCount: 1},
	))
	dragged := eval[[]float64](t, ctx, viewOf)
	require.InDelta(t, wheeled[1]-200, dragged[1], 1, "a drag moves the map with the pointer")
	require.Equal(t, wheeled[0], dragged[0], "a drag does not zoom")
	require.False(t, eval[bool](t, ctx, `!!document.querySelector("#chosen")`), "a drag chooses nothing")

	// Touch: two fingers apart zoom in, one finger drags.
	do(t, ctx, chromedp.Click(chromedp.CSS(".vm-whole")))
	do(t, ctx, touches([][2]float64{{150, 0}, {230, 0}}, [][2]float64{{70, 0}, {310, 0}}))
	pinched := eval[[]float64](t, ctx, viewOf)
	require.Greater(t, pinched[0], whole[0]*2, "a pinch zooms in")
	do(t, ctx, touchDrag(300, 0, 100, 0))
	require.InDelta(t, pinched[1]-200, eval[[]float64](t, ctx, viewOf)[1], 1, "a finger drags the map")
}

// Seats are chosen by keyboard through the grids and by click; the grids
// hold only the rows in view (and each section's tab stop), and follow
// the focus; a refresh repaints the seat another buyer took, alone, and
// while one section is in view reads that section only.
func TestBrowserVenueMapPicksSeats(t *testing.T) {
	s, browser := openSite(t)
	stadium := benchStadium(t, s)
	ctx := phone(t, browser)
	do(t, ctx,
		signIn(s, "web-pick", "user"),
		chromedp.Navigate(s.base+"/show/"+stadium),
		chromedp.WaitVisible(chromedp.CSS("canvas.vm-canvas")),
		until(`document.querySelector("#seat-AA1")?.getAttribute("aria-label").includes("free")`),
	)
	// A click on a seat drawn too small to hit zooms in, choosing nothing.
	scale := eval[[]float64](t, ctx, viewOf)[0]
	do(t, ctx, chromedp.Click(chromedp.CSS("#seat-AA1")), until(fmt.Sprintf(`Number(document.querySelector(".vm-box").dataset.scale) > %f`, scale*4)))
	require.False(t, eval[bool](t, ctx, `!!document.querySelector("#chosen")`))
	do(t, ctx, chromedp.Click(chromedp.CSS(".vm-whole")))

	// The keyboard: the first grid's one tab stop is its first seat, and
	// the map zooms to it; arrows move, Enter chooses.
	do(t, ctx,
		tabTo("#seat-AA1"),
		until(`Number(document.querySelector(".vm-box").dataset.scale) >= 3`),
		until(`document.querySelectorAll(".vm-grid")[0].querySelectorAll("[role=row]").length > 3`),
		key(kb.ArrowDown), key(kb.ArrowDown), key(kb.ArrowRight),
		until(`document.activeElement?.id === "seat-AC2"`),
		key(kb.Enter),
		hasText("#chosen", "AC2"),
		until(`document.querySelector("#seat-AC2").getAttribute("aria-selected") === "true"`),
		until(`document.activeElement.getAttribute("aria-label").startsWith("Seat AC2, selected")`),
	)
	// Only rows in view: every row held is in the map's box, but for the
	// other sections' tab stops, a lone cell each.
	rowsInView := `(() => { const s = document.querySelector(".vm-stage").getBoundingClientRect(); let out = 0, lone = 0;
		for (const r of document.querySelectorAll(".vm-grid [role=row]")) {
			const cells = [...r.children];
			const seen = cells.some((c) => { const b = c.getBoundingClientRect(); return b.right > s.left && b.left < s.right && b.bottom > s.top && b.top < s.bottom });
			if (cells.length === 1 && cells[0].tabIndex === 0) lone++; else if (!seen) out++;
		}
		return [out, lone, document.querySelectorAll("[role=gridcell]").length] })()`
	// (The grids follow the view once it rests.)
	do(t, ctx, until(rowsInView+`[0] === 0`))
	held := eval[[]int](t, ctx, rowsInView)
	require.Zero(t, held[0], "no row out of view in the grids")
	require.Equal(t, 9, held[1], "the other sections' tab stops")
	require.Less(t, held[2], 1600)
	// Down the section: the rows left behind leave the DOM.
	for range 20 {
		do(t, ctx, key(kb.ArrowDown))
	}
	do(t, ctx,
		until(`document.activeElement?.id === "seat-AW2"`),
		until(`!document.querySelector("#seat-AA5")`),
		until(rowsInView+`[0] === 0`),
	)

	// A click on a seat drawn large enough chooses it.
	do(t, ctx,
		until(`!!document.querySelector("#seat-AW4")`),
		chromedp.Click(chromedp.CSS("#seat-AW4")),
		hasText("#chosen", "AC2, AW4"),
	)
	// Another buyer holds a seat in view: the refresh repaints that one.
	since := eval[float64](t, ctx, `performance.now()`)
	var hold struct {
		Hold struct {
			HoldID string `json:"holdId"`
		} `json:"hold"`
	}
	other := s.devToken(t, "web-pick-other", "user")
	s.call(t, other, "seatghor.booking.v1.HoldService/CreateHold", map[string]any{"showId": stadium, "seats": []string{"AW6"}}, &hold)
	t.Cleanup(func() {
		s.call(t, other, "seatghor.booking.v1.HoldService/ReleaseHold", map[string]any{"holdId": hold.Hold.HoldID}, nil)
	})
	do(t, ctx,
		until(`document.querySelector("#seat-AW6").classList.contains("s1")`),
		until(fmt.Sprintf(`performance.getEntriesByName("seatmap-refresh").some((e) => e.startTime > %f && e.detail.changed === 1)`, since)),
	)
	// A quarter into the seat, clear of its number: white while free.
	quarter := func(seat string) []int {
		return eval[[]int](t, ctx, pixelUnder(fmt.Sprintf(`(() => { const r = document.querySelector("#seat-%s").getBoundingClientRect();
			return [r.left + r.width / 4, r.top + r.height / 4] })()`, seat)))
	}
	require.Equal(t, []int{255, 255, 255}, quarter("AW5"), "a free seat")
	require.NotEqual(t, []int{255, 255, 255}, quarter("AW6"), "drawn held, not free")
	require.True(t, eval[bool](t, ctx, `performance.getEntriesByType("resource").some((e) =>
		decodeURIComponent(e.name).includes("GetSeatMap") && decodeURIComponent(e.name).includes('"section":"Block 1"'))`),
		"zoomed into one section, the refresh reads that section")
}

// A layout with positions (a curved row, a stage, seat kinds), as the
// layout model gives it, is drawn from them: the seats where their x and
// y say, the stage, each kind by its shape, its mark and its words, and
// the legend has a key for each kind drawn. The layout is the server's
// with positions added in the page (the server fills them on another
// branch).
func TestBrowserVenueMapFromPositions(t *testing.T) {
	s, browser := openSite(t)
	var created struct {
		Show struct {
			ShowID string `json:"showId"`
		} `json:"show"`
	}
	s.call(t, s.devToken(t, "web-admin", "admin"), "seatghor.catalog.v1.CatalogService/CreateShow", map[string]any{
		"kind": "SHOW_KIND_CONCERT", "title": "Curved Hall", "venue": "Shilpakala", "currency": "BDT",
		"startsAt": time.Now().Add(30 * 24 * time.Hour).UTC().Format(time.RFC3339),
		"onSaleAt": time.Now().Add(-time.Hour).UTC().Format(time.RFC3339),
		"sections": []map[string]any{{"name": "Main", "rows": []string{"A", "B"}, "seatsPerRow": 6, "priceMinor": "80000"}},
	}, &created)
	ctx := phone(t, browser)
	do(t, ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `(() => {
			const f = window.fetch;
			window.fetch = async (u, o) => {
				const r = await f(u, o);
				if (!String(u instanceof Request ? u.url : u).includes("GetSeatLayout")) return r;
				const j = await r.clone().json();
				for (const sec of j.sections ?? []) (sec.rows ?? []).forEach((row, k) => {
					row.x = row.seats.map((_, c) => 40 + 14 * c);
					row.y = row.seats.map((_, c) => 50 + 12 * k + Math.round(2 * (c - 2.5) ** 2));
					row.kinds = row.seats.map((_, c) => k > 0 ? "SEAT_KIND_ORDINARY_UNSPECIFIED" : c === 0 ? "SEAT_KIND_WHEELCHAIR" : c === 5 ? "SEAT_KIND_WOMEN" : "SEAT_KIND_ORDINARY_UNSPECIFIED");
				});
				j.decks = [{ width: 160, height: 100 }];
				j.features = [{ kind: "FEATURE_KIND_STAGE", x: 75, y: 15, width: 110, height: 16, label: "Stage", labelBn: "মঞ্চ" }];
				return new Response(JSON.stringify(j), { status: r.status, headers: r.headers });
			};
		})()`})
		return err
	}))
	do(t, ctx,
		signIn(s, "web-curve", "user"),
		chromedp.Navigate(s.base+"/show/"+created.Show.ShowID),
		chromedp.WaitVisible(chromedp.CSS("#seat-B6")),
		until(`document.querySelector("#seat-A1").getAttribute("aria-label").includes("free")`),
	)
	top := func(seat string) float64 {
		return eval[float64](t, ctx, `document.querySelector("#seat-`+seat+`").getBoundingClientRect().top`)
	}
	left := func(seat string) float64 {
		return eval[float64](t, ctx, `document.querySelector("#seat-`+seat+`").getBoundingClientRect().left`)
	}
	size := eval[float64](t, ctx, `document.querySelector("#seat-A1").getBoundingClientRect().width`)
	unit := size / 9.2 // CSS px a layout unit
	require.InDelta(t, 12*unit, top("A1")-top("A3"), 1, "the row curves: its ends further from the stage")
	require.InDelta(t, top("A1"), top("A6"), 0.5)
	require.InDelta(t, 12*unit, top("B1")-top("A1"), 1, "the next row behind")
	require.InDelta(t, 14*unit, left("A2")-left("A1"), 1, "the places as far apart as their x say")
	// Each place drawn under its cell; the stage in front of the row.
	for _, seat := range []string{"A1", "A3", "A6", "B4"} {
		require.NotEqual(t, []int{0xf1, 0xf3, 0xf5}, eval[[]int](t, ctx, pixelUnder(`"#seat-`+seat+`"`)), "%s is drawn", seat)
	}
	stage := eval[[]int](t, ctx, pixelUnder(fmt.Sprintf(`(() => { const r = document.querySelector("#seat-A1").getBoundingClientRect();
		return [r.left + r.width / 2 + %f, r.top + r.height / 2 - %f] })()`, (75-40-40)*unit, (63-15)*unit)))
	require.Equal(t, []int{0x2b, 0x2f, 0x36}, stage, "the stage")
	// Kinds: a mark and words as well as a shape, and a key in the legend.
	require.Contains(t, eval[string](t, ctx, `document.querySelector("#seat-A1").getAttribute("aria-label")`), "wheelchair place")
	require.Contains(t, eval[string](t, ctx, `document.querySelector("#seat-A6").getAttribute("aria-label")`), "for women")
	require.True(t, eval[bool](t, ctx, `document.querySelector("#seat-A1").classList.contains("k4")`))
	do(t, ctx, hasText(".legend", "wheelchair place"), hasText(".legend", "for women"))
	require.Empty(t, eval[[]string](t, ctx, legendMisses))
	// The diamond of a wheelchair place leaves its square's corner empty;
	// an ordinary seat's square fills it.
	corner := func(seat string) []int {
		return eval[[]int](t, ctx, pixelUnder(fmt.Sprintf(`(() => { const r = document.querySelector("#seat-%s").getBoundingClientRect();
			return [r.left + r.width * 0.15, r.top + r.height * 0.15] })()`, seat)))
	}
	require.Equal(t, []int{0xf1, 0xf3, 0xf5}, corner("A1"), "a wheelchair place is a diamond")
	require.NotEqual(t, []int{0xf1, 0xf3, 0xf5}, corner("A2"), "an ordinary seat is a square")
	do(t, ctx,
		chromedp.Click(chromedp.CSS("#seat-A2")),
		hasText("#chosen", "A2"),
		until(`document.querySelector("#seat-A2").getAttribute("aria-selected") === "true"`),
	)
	shot(t, ctx, "venue-positions")
}
