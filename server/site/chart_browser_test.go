package site_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// A venue's manager designs its chart in the console (decisions 0455,
// 0456): one block of three curved rows of nine, two wheelchair places in
// front, drawn as she types; she saves it, makes a show on it as a draft
// at a price of its own (buyers are told there is no such show), and
// publishes it. The buyer's seat map draws the curve and says which places
// are for wheelchairs; a buyer buys a seat; the manager sees the sale on
// the show's dashboard, exports it as CSV (the show's, and the
// organisation's of a period), is told the block's price stays now that a
// seat of it is sold, and finds the chart, the draft and its publication
// in the audit log, newest first; she allocates two seats to a partner
// and gives them back, deletes a second draft that will never run, and
// edits the chart (its show keeps its seats).
func TestBrowserConsoleChartDraftAndPublish(t *testing.T) {
	s, browser := openSite(t)
	admin := s.devToken(t, "web-admin", "admin")
	s.call(t, admin, "seatghor.catalog.v1.CatalogService/CreateOrganization",
		map[string]any{"organizationId": "web-arc-venue", "name": "Arc Venue"}, nil)
	s.call(t, admin, "seatghor.catalog.v1.CatalogService/AddOrganizationMember",
		map[string]any{"organizationId": "web-arc-venue", "userId": "web-chart-mgr", "role": "ORGANIZATION_ROLE_MANAGER"}, &struct{}{})

	ctx := desk(t, browser)
	do(t, ctx,
		signIn(s, "web-chart-mgr", "operator"),
		chromedp.Navigate(s.base+"/console/web-arc-venue/charts"),
		chromedp.WaitVisible(chromedp.CSS("#chart-form")),
		typeIn("#chart-id", "arc-hall"),
		typeIn("#chart-name", "Arc Hall"),
		typeIn("#chart-name-bn", "আর্ক হল"),
		typeIn("#block-0-name", "Stalls"),
		typeIn("#block-0-rows", "3"),
		typeIn("#block-0-seatsPerRow", "9"),
		typeIn("#block-0-priceTaka", "600"),
		typeIn("#block-0-bend", "4"),
		typeIn("#block-0-wheelchair", "2"),
		hasText("#chart-summary", "27 seats in 1 block, 2 wheelchair places"),
	)
	cy := func(seat string) float64 {
		v := eval[string](t, ctx, `document.querySelector("#chart-preview [data-seat=`+seat+`]").getAttribute("cy")`)
		f, err := strconv.ParseFloat(v, 64)
		require.NoError(t, err, "seat %s drawn as a circle", seat)
		return f
	}
	require.Less(t, cy("A5"), cy("A3"), "the preview's row curves: its middle nearer the stage")
	require.Equal(t, []string{"A1", "A9"}, eval[[]string](t, ctx, `[...document.querySelectorAll("#chart-preview .wheelchair")].map((e) => e.dataset.seat)`))
	do(t, ctx, script(`document.querySelector("#block-0").scrollIntoView()`))
	shot(t, ctx, "console-chart-designer")
	do(t, ctx,
		chromedp.Click(chromedp.CSS("#chart-save")),
		hasText("#chart-saved", "arc-hall"),
		hasText("#chart-arc-hall", "27"),
		chromedp.Click(chromedp.CSS("#use-arc-hall")),
		typeIn("#new-title", "Arc Nights"),
		typeIn("#new-titleBn", "আর্ক রাত"),
		typeIn("#new-venue", "Arc Hall"),
		typeIn("#new-starts", time.Now().Add(30*24*time.Hour).In(time.FixedZone("BDT", 6*3600)).Format("2006-01-02T15:04")),
		until(`document.querySelector("#new-price-0").value === "600"`), // the chart's price, to begin with
		typeIn("#new-price-0", "650"),
		chromedp.Click(chromedp.CSS("#new-create")),
		chromedp.WaitVisible(chromedp.CSS("#new-drafted")),
		chromedp.Click(chromedp.CSS("#tab-shows")),
		until(`[...document.querySelectorAll("#console-shows tbody tr")].some((r) => r.textContent.includes("Arc Nights"))`),
	)
	show := eval[string](t, ctx, `[...document.querySelectorAll("#console-shows tbody tr")].find((r) => r.textContent.includes("Arc Nights")).id.slice(5)`)
	do(t, ctx, hasText("#show-"+show+" .status", "Draft"))
	shot(t, ctx, "console-draft")
	showID, err := strconv.ParseInt(show, 10, 64)
	require.NoError(t, err)
	buyer := s.devToken(t, "web-arc-buyer", "user")
	status, body := post(t, s, buyer, "seatghor.catalog.v1.CatalogService/GetShow", map[string]any{"showId": showID})
	require.Equal(t, http.StatusNotFound, status, "a buyer reads the draft: %s", body)

	do(t, ctx,
		chromedp.Click(chromedp.CSS("#publish-"+show)),
		hasText("#show-"+show+" .status", "On sale"),
	)
	// The buyer's seat map, drawn from the chart's positions.
	phoneCtx := phone(t, browser)
	top := func(seat string) float64 {
		return eval[float64](t, phoneCtx, `document.querySelector("#seat-`+seat+`").getBoundingClientRect().top`)
	}
	do(t, phoneCtx,
		signIn(s, "web-arc-buyer", "user"),
		chromedp.Navigate(s.base+"/show/"+show),
		chromedp.WaitVisible(chromedp.CSS("#seat-A5")),
		until(`document.querySelector("#seat-A5").getAttribute("aria-label").includes("free")`),
	)
	require.Less(t, top("A5"), top("A1"), "the buyer's map draws the curve")
	require.Contains(t, eval[string](t, phoneCtx, `document.querySelector("#seat-A1").getAttribute("aria-label")`), "wheelchair")
	boughtTicket(t, s, "web-arc-buyer", show, "B5")

	do(t, ctx,
		chromedp.Click(chromedp.CSS("#sales-"+show)),
		until(`document.querySelector("#sales-channels tr[data-channel=web] td")?.textContent === "1"`),
	)
	orders := download(t, ctx, "#export-orders", "orders-"+show+"-en.csv")
	require.Len(t, orders, 2, "a header and the order")
	require.Equal(t, "confirmed", orders[1][2])
	require.Equal(t, "B5", orders[1][9])
	require.Equal(t, "650.00", orders[1][11], "the show's price of the block, not the chart's")
	// The organisation's orders of the shows starting in the next 31 days,
	// as one file naming each order's show.
	dhaka := time.FixedZone("BDT", 6*3600)
	from, to := time.Now().In(dhaka), time.Now().In(dhaka).Add(31*24*time.Hour)
	do(t, ctx,
		chromedp.Click(chromedp.CSS("#org-sales")),
		chromedp.WaitVisible(chromedp.CSS("#period-export")),
		typeIn("#period-from", from.Format("2006-01-02")),
		typeIn("#period-to", to.Format("2006-01-02")),
	)
	period := download(t, ctx, "#export-period", "orders-web-arc-venue-"+from.Format("20060102")+"-"+to.AddDate(0, 0, 1).Format("20060102")+"-en.csv")
	require.Len(t, period, 2, "a header and the order")
	require.Equal(t, []string{"Show", "Show starts"}, period[0][16:])
	require.Equal(t, []string{"B5", "Arc Nights"}, []string{period[1][9], period[1][16]})
	// The same days' ledger of the organisation's shows (decision 0464):
	// the sale's journal, posted today.
	ledgerRows := download(t, ctx, "#export-period-ledger", "ledger-web-arc-venue-"+from.Format("20060102")+"-"+to.AddDate(0, 0, 1).Format("20060102")+"-en.csv")
	require.Greater(t, len(ledgerRows), 1, "a header and the sale's lines")
	for _, r := range ledgerRows[1:] {
		require.Equal(t, show, r[4], "only the organisation's show: %v", r)
	}
	do(t, ctx, chromedp.Click(chromedp.CSS("#org-sales")), until(`!document.querySelector("#period-export")`))
	// The block has a seat sold: its price stays, and the console says why.
	do(t, ctx,
		chromedp.Click(chromedp.CSS("#edit-"+show)),
		until(`document.querySelector("#edit-price-0")?.value === "650"`),
		typeIn("#edit-price-0", "700"),
		chromedp.Click(chromedp.CSS("#edit-save")),
		hasText("#console-error", "held or sold"),
	)
	do(t, ctx,
		chromedp.Click(chromedp.CSS("#tab-audit")),
		until(`document.querySelectorAll("#console-audit tbody tr").length >= 3`),
	)
	actions := eval[[]string](t, ctx, `[...document.querySelectorAll("#console-audit tbody tr")].slice(0, 3).map((r) => r.dataset.action)`)
	require.Equal(t, []string{"show.publish", "show.create", "layout_template.create"}, actions)
	require.Contains(t, eval[string](t, ctx, `document.querySelector("#console-audit tbody tr").textContent`), "Show published")

	// Two seats ring-fenced for a partner (decision 0457): a buyer cannot
	// hold them while they are the partner's, and can once given back.
	var created struct {
		Partner struct {
			PartnerID string `json:"partnerId"`
		} `json:"partner"`
	}
	s.call(t, admin, "seatghor.partner.v1.PartnerService/CreatePartner", map[string]any{"name": "Arc Resellers",
		"commissionBps": 300, "contact": map[string]any{"name": "Mita", "email": "api@arc.example"},
		"allowedOrganizationIds": []string{"web-arc-venue"}}, &created)
	hold := func(seat string) (int, string) {
		return post(t, s, buyer, "seatghor.booking.v1.HoldService/CreateHold", map[string]any{"showId": showID, "seats": []string{seat}})
	}
	do(t, ctx,
		chromedp.Click(chromedp.CSS("#tab-shows")),
		chromedp.WaitVisible(chromedp.CSS("#allocations-"+show)),
		chromedp.Click(chromedp.CSS("#allocations-"+show)),
		hasText("#allocations-none", "No allocations"),
		typeIn("#alloc-partner", created.Partner.PartnerID),
		typeIn("#alloc-seats", "c1, c2"),
		typeIn("#alloc-return", time.Now().Add(7*24*time.Hour).In(time.FixedZone("BDT", 6*3600)).Format("2006-01-02T15:04")),
		chromedp.Click(chromedp.CSS("#alloc-make")),
		hasText("#allocations tbody tr .status", "active"),
		hasText("#allocations tbody tr", "C1 C2"),
		hasText("#allocations tbody tr .left", "2"),
	)
	shot(t, ctx, "console-allocations")
	status, body = hold("C1")
	require.Equal(t, http.StatusForbidden, status, "a buyer holds a seat allocated to a partner: %s", body)
	require.Contains(t, body, "SEATS_NOT_IN_CHANNEL")
	do(t, ctx,
		chromedp.Click(chromedp.CSS("#allocations tbody tr button.danger")),
		hasText("#allocations tbody tr .status", "given back"),
	)
	status, body = hold("C1")
	require.Equal(t, http.StatusOK, status, "the seat given back sells: %s", body)
	// Both in the audit log, newest first (the shard's entries, gathered).
	do(t, ctx,
		chromedp.Click(chromedp.CSS("#tab-audit")),
		until(`document.querySelector("#console-audit tbody tr")?.dataset.action === "allocation.release"`),
		hasText("#console-audit", "Seats allocated to a partner"),
	)

	// A draft that will never run is deleted (decision 0462), after a
	// second click, and the log says so; a published show never is.
	var dropped struct {
		Show struct {
			ShowID string `json:"showId"`
		} `json:"show"`
	}
	mgr := s.devToken(t, "web-chart-mgr", "operator")
	s.call(t, mgr, "seatghor.catalog.v1.CatalogService/CreateShow", map[string]any{
		"kind": "SHOW_KIND_CONCERT", "title": "Arc Matinee", "venue": "Arc Hall", "currency": "BDT", "draft": true,
		"organizationId": "web-arc-venue", "startsAt": time.Now().Add(20 * 24 * time.Hour).UTC().Format(time.RFC3339),
		"layoutTemplateId": "arc-hall",
	}, &dropped)
	do(t, ctx,
		chromedp.Click(chromedp.CSS("#tab-shows")),
		chromedp.WaitVisible(chromedp.CSS("#delete-"+dropped.Show.ShowID)),
		chromedp.Click(chromedp.CSS("#delete-"+dropped.Show.ShowID)),
		chromedp.Click(chromedp.CSS("#delete-confirm-"+dropped.Show.ShowID)),
		until(`!document.querySelector("#show-`+dropped.Show.ShowID+`")`),
		chromedp.Click(chromedp.CSS("#tab-audit")),
		until(`document.querySelector("#console-audit tbody tr")?.dataset.action === "show.delete"`),
		hasText("#console-audit tbody tr", "Draft deleted"),
	)
	status, body = post(t, s, mgr, "seatghor.catalog.v1.CatalogService/GetShow", map[string]any{"showId": dropped.Show.ShowID})
	require.Equal(t, http.StatusNotFound, status, "the deleted draft is read: %s", body)
	status, body = post(t, s, mgr, "seatghor.catalog.v1.CatalogService/DeleteShow", map[string]any{"showId": showID})
	require.Equal(t, http.StatusBadRequest, status, "a published show deleted: %s", body)
	require.Contains(t, body, "SHOW_KEPT")

	// The charts in Bengali: the tab, the saved chart's Bengali name, the
	// designer's words and its summary in Bengali digits.
	do(t, ctx,
		chromedp.Click(chromedp.CSS("#lang")),
		until(`document.documentElement.lang === "bn"`),
		chromedp.WaitVisible(chromedp.CSS("#tab-charts")),
		chromedp.Click(chromedp.CSS("#tab-charts")),
		hasText("#tab-charts", "আসন-নকশা"),
		hasText("#chart-arc-hall", "আর্ক হল"),
		hasText("#chart-arc-hall", "২৭"),
		hasText("#design-heading", "নকশা আঁকুন"),
		hasText("#chart-summary", "১টি ব্লকে ৫০টি আসন"),
	)
	shot(t, ctx, "bengali-console-charts")

	// The chart edited (decision 0466), in Bengali: a fourth row. Its
	// existing show keeps its 27 seats; the chart now has 36.
	do(t, ctx,
		chromedp.Click(chromedp.CSS("#edit-chart-arc-hall")),
		hasText("#design-heading", "arc-hall"),
		until(`document.querySelector("#block-0-rows").value === "3" && document.querySelector("#block-0-bend").value === "4"`),
		until(`document.querySelector("#block-0-wheelchair").value === "2" && document.querySelector("#block-0-priceTaka").value === "600"`),
		typeIn("#block-0-rows", "4"),
		hasText("#chart-summary", "৩৬টি আসন"),
		script(`document.querySelector("#chart-form").scrollIntoView()`),
	)
	shot(t, ctx, "bengali-console-chart-edit")
	do(t, ctx,
		chromedp.Click(chromedp.CSS("#chart-save")),
		hasText("#chart-arc-hall", "৩৬"),
		chromedp.Click(chromedp.CSS("#tab-audit")),
		until(`document.querySelector("#console-audit tbody tr")?.dataset.action === "layout_template.update"`),
		hasText("#console-audit tbody tr", "আসন-নকশা বদল"),
	)
	var kept struct {
		Show struct {
			SeatCount int `json:"seatCount"`
		} `json:"show"`
	}
	s.call(t, mgr, "seatghor.catalog.v1.CatalogService/GetShow", map[string]any{"showId": show}, &kept)
	require.Equal(t, 27, kept.Show.SeatCount, "the show made on the chart keeps its seats")

	// The shows in Bengali: a new draft on the chart, the published
	// show's allocations (the one given back) and its edit form.
	var draft struct {
		Show struct {
			ShowID string `json:"showId"`
		} `json:"show"`
	}
	s.call(t, mgr, "seatghor.catalog.v1.CatalogService/CreateShow", map[string]any{
		"kind": "SHOW_KIND_CONCERT", "title": "Arc Evening", "titleBn": "আর্ক সন্ধ্যা", "venue": "Arc Hall", "currency": "BDT",
		"draft": true, "organizationId": "web-arc-venue", "startsAt": time.Now().Add(40 * 24 * time.Hour).UTC().Format(time.RFC3339),
		"layoutTemplateId": "arc-hall",
	}, &draft)
	do(t, ctx,
		chromedp.Click(chromedp.CSS("#tab-shows")),
		hasText("#show-"+draft.Show.ShowID, "আর্ক সন্ধ্যা"),
		hasText("#show-"+draft.Show.ShowID+" .status", "খসড়া"),
		hasText("#publish-"+draft.Show.ShowID, "প্রকাশ করুন"),
	)
	shot(t, ctx, "bengali-console-draft")
	do(t, ctx,
		chromedp.Click(chromedp.CSS("#allocations-"+show)),
		hasText("#allocations tbody tr .status", "ফেরত দেওয়া"),
	)
	shot(t, ctx, "bengali-console-allocations")
	do(t, ctx,
		chromedp.Click(chromedp.CSS("#edit-"+show)),
		hasText("#edit-heading", "সম্পাদনা: আর্ক রাত"),
		until(`document.querySelector("#edit-titleBn")?.value === "আর্ক রাত"`),
		script(`document.querySelector("#console-edit").scrollIntoView()`),
	)
	shot(t, ctx, "bengali-console-edit")
}
