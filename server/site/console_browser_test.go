package site_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// desk opens a tab as wide as an operator's laptop: the console's tables
// read across, as its screenshots show them.
func desk(t *testing.T, browser context.Context) context.Context {
	t.Helper()
	ctx := tab(t, browser)
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)))
	return ctx
}

// download presses button on the page and reads the CSV file it saves as
// name (the browser saves into a directory of the test's), its byte-order
// mark checked and taken off.
func download(t *testing.T, ctx context.Context, button, name string) [][]string {
	t.Helper()
	dir := t.TempDir()
	allow := func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, tg, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
			Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dir,
			BrowserContextID: chromedp.FromContext(ctx).BrowserContextID})
		return chromedp.Void{}, err
	}
	do(t, ctx, allow, chromedp.Click(chromedp.CSS(button)))
	path := filepath.Join(dir, name)
	var file []byte
	require.Eventually(t, func() bool {
		var err error
		file, err = os.ReadFile(path)
		return err == nil && len(file) > 0
	}, waitLong, 100*time.Millisecond, "the browser saved %s", name)
	require.True(t, bytes.HasPrefix(file, []byte("\ufeff")), "a byte-order mark for spreadsheets")
	rows, err := csv.NewReader(bytes.NewReader(file[3:])).ReadAll()
	require.NoError(t, err)
	return rows
}

// The console (issue 26, decisions 0446, 0447), its own bundle: a manager
// of the demo operator opens /console, sees the operator's trip among its
// shows and its live sales (a ticket sold while the panel is open shows
// within seconds),
// adds a gate member by user id, makes them counter staff and removes
// them, cancels the trip with a reason (both buyers refunded in full,
// once; the trial balance 0), and finds each step in the audit
// log, newest first, then only the removals when searched by action; the
// same log reads in Bengali. Gate staff who open /console see their role
// and their pages, a buyer is told they run no organisation, and the API
// refuses both the calls the console's staff page makes.
func TestBrowserConsoleStaffAndAuditLog(t *testing.T) {
	s, browser := openSite(t)
	show := gateTrip(t, s, "Tangail to Rajshahi, console")
	admin := s.devToken(t, "web-admin", "admin")
	s.call(t, admin, "seatghor.catalog.v1.CatalogService/AddOrganizationMember",
		map[string]any{"organizationId": "demo-operator", "userId": "web-console-mgr", "role": "ORGANIZATION_ROLE_MANAGER"}, &struct{}{})

	ctx := desk(t, browser)
	do(t, ctx,
		signIn(s, "web-console-mgr", "operator"),
		chromedp.Navigate(s.base+"/console"),
		until(`location.pathname === "/console/demo-operator/shows"`),
		hasText("#show-"+show, "Tangail to Rajshahi, console"),
		hasText("#show-"+show+" .status", "On sale"),
	)
	shot(t, ctx, "console-shows")

	// The trip's live sales: a ticket sold before the panel opens, another
	// while it is open shows within its refresh (5 s).
	journeyTicket(t, s, "web-console-buyer", show, "A1", "tangail", "rajshahi")
	do(t, ctx,
		chromedp.Click(chromedp.CSS("#sales-"+show)),
		hasText("#sales-title", "Tangail to Rajshahi, console"),
		until(`document.querySelector("#sales-channels tr[data-channel=web] td")?.textContent === "1"`),
		until(`document.querySelector("#sales-sections tbody td")?.textContent.startsWith("2 ")`), // A1 on both legs
		until(`!!document.querySelector("#sales-chart canvas")`),
		until(`document.querySelectorAll("#sales-timeline tbody tr").length >= 1`),
	)
	require.NotEqual(t, "৳0", eval[string](t, ctx, `document.querySelector("#sales-taken").textContent`))
	journeyTicket(t, s, "web-console-buyer2", show, "A2", "tangail", "natore")
	do(t, ctx,
		until(`document.querySelector("#sales-channels tr[data-channel=web] td")?.textContent === "2"`),
		until(`document.querySelector("#sales-sections tbody td")?.textContent.startsWith("3 ")`),
	)
	shot(t, ctx, "console-sales")
	// The orders as a file, streamed: both buyers' orders, in English.
	orders := download(t, ctx, "#export-orders", "orders-"+show+"-en.csv")
	require.Len(t, orders, 3, "a header and both orders")
	require.Equal(t, "Order", orders[0][0])
	require.ElementsMatch(t, []string{"confirmed", "confirmed"}, []string{orders[1][2], orders[2][2]})
	require.ElementsMatch(t, []string{"A1", "A2"}, []string{orders[1][9], orders[2][9]})
	tickets := download(t, ctx, "#export-tickets", "manifest-"+show+"-en.csv")
	require.Len(t, tickets, 3, "a header and both tickets")
	do(t, ctx, chromedp.Click(chromedp.CSS("#sales-close")), until(`!document.querySelector("#console-sales")`))
	// The organisation's sales, show by show: the trip's three seat-legs
	// sold of eight, and the totals.
	do(t, ctx,
		chromedp.Click(chromedp.CSS("#org-sales")),
		hasText("#org-sales-"+show+" .sold", "3 / 8"),
		until(`document.querySelector("#org-sales-total .taken")?.textContent !== "৳0"`),
	)
	shot(t, ctx, "console-org-sales")
	do(t, ctx, chromedp.Click(chromedp.CSS("#org-sales")), until(`!document.querySelector("#org-sales-table")`))
	do(t, ctx,
		chromedp.Click(chromedp.CSS("#tab-staff")),
		hasText("#console-staff", "web-console-mgr (you)"),
		chromedp.SendKeys(chromedp.CSS("#staff-user"), "web-new-staff"),
		choose("#staff-role", "2"), // gate
		chromedp.Click(chromedp.CSS("#staff-save")),
		hasText("#member-web-new-staff", "Gate staff"),
		chromedp.SendKeys(chromedp.CSS("#staff-user"), "web-new-staff"),
		choose("#staff-role", "3"), // counter
		chromedp.Click(chromedp.CSS("#staff-save")),
		hasText("#member-web-new-staff", "Counter staff"),
	)
	require.False(t, eval[bool](t, ctx, `!!document.querySelector("#remove-web-console-mgr")`), "a manager is not offered their own removal")
	shot(t, ctx, "console-staff")
	do(t, ctx,
		chromedp.Click(chromedp.CSS("#remove-web-new-staff")),
		until(`!document.querySelector("#member-web-new-staff")`),
		chromedp.Click(chromedp.CSS("#tab-shows")),
		chromedp.WaitVisible(chromedp.CSS("#cancel-"+show)),
		chromedp.Click(chromedp.CSS("#cancel-"+show)),
		chromedp.SendKeys(chromedp.CSS("#show-reason"), "Road closed by floods"),
		chromedp.Click(chromedp.CSS("#cancel-confirm")),
		hasText("#show-"+show+" .status", "Cancelled"),
		// The mass refund's progress, read while the job runs (it keeps
		// looking for a minute, decision 0440): both buyers' orders
		// cancelled and refunded.
		chromedp.Click(chromedp.CSS("#progress-"+show)),
		hasText("#cancellation-"+show+" .orders-cancelled", "2"),
		hasText("#cancellation-"+show+" .refunds-done", "2"),
		hasText("#cancellation-"+show+" .orders-left", "0"),
	)
	shot(t, ctx, "console-cancellation")
	// Each buyer refunded once and in full, no fee; the books balance.
	type order struct {
		ShowID   string                       `json:"showId"`
		Status   string                       `json:"status"`
		Total    struct{ AmountMinor string } `json:"total"`
		Refunded struct{ AmountMinor string } `json:"refunded"`
	}
	for _, who := range []string{"web-console-buyer", "web-console-buyer2"} {
		var mine struct {
			Orders []order `json:"orders"`
		}
		s.call(t, s.devToken(t, who, "user"), "seatghor.booking.v1.OrderService/ListMyOrders", map[string]any{}, &mine)
		i := slices.IndexFunc(mine.Orders, func(o order) bool { return o.ShowID == show })
		require.GreaterOrEqual(t, i, 0, "%s's order of the trip", who)
		require.Equal(t, "ORDER_STATUS_CANCELLED", mine.Orders[i].Status, who)
		require.Equal(t, mine.Orders[i].Total.AmountMinor, mine.Orders[i].Refunded.AmountMinor, "%s refunded in full", who)
	}
	var books struct {
		Balanced bool `json:"balanced"`
	}
	s.call(t, admin, "seatghor.ledger.v1.LedgerService/GetTrialBalance", map[string]any{}, &books)
	require.True(t, books.Balanced, "the trial balance is 0")
	// The buyer's page of the trip says it was cancelled, and why, and
	// offers no seats (decision 0478), in both languages.
	told := tab(t, browser)
	do(t, told,
		signIn(s, "web-console-buyer", "user"),
		chromedp.Navigate(s.base+"/show/"+show),
		hasText("#show-status", "Cancelled by its operator. Paid tickets are refunded in full. Reason: Road closed by floods"),
		chromedp.Click(chromedp.CSS("#lang")),
		hasText("#show-status", "আয়োজক বাতিল করেছেন"),
	)
	shot(t, told, "bengali-show-cancelled")
	require.False(t, eval[bool](t, told, `!!document.querySelector("#seat-A1, #hold-seats")`), "no seats offered")
	do(t, ctx,
		chromedp.Click(chromedp.CSS("#tab-audit")),
		until(`location.pathname === "/console/demo-operator/audit"`),
		until(`document.querySelectorAll("#console-audit tbody tr").length >= 4`),
	)
	// Newest first: the cancellation, the removal, the two role changes.
	actions := eval[[]string](t, ctx, `[...document.querySelectorAll("#console-audit tbody tr")].slice(0, 4).map((r) => r.dataset.action)`)
	require.Equal(t, []string{"show.cancel", "member.remove", "member.set", "member.set"}, actions)
	rows := eval[[]string](t, ctx, `[...document.querySelectorAll("#console-audit tbody tr")].slice(0, 3).map((r) => r.textContent)`)
	require.Contains(t, rows[0], "“Road closed by floods”")
	require.Contains(t, rows[0], "show:"+show)
	require.Contains(t, rows[1], "Counter staff →")
	require.Contains(t, rows[2], "Gate staff → Counter staff")
	shot(t, ctx, "console-audit")
	do(t, ctx,
		choose("#audit-action", "member.remove"),
		chromedp.Click(chromedp.CSS("#audit-search")),
		until(`[...document.querySelectorAll("#console-audit tbody tr")].every((r) => r.dataset.action === "member.remove")`),
		hasText("#console-audit", "member:demo-operator:web-new-staff"),
		chromedp.Click(chromedp.CSS("#lang")),
		until(`document.documentElement.lang === "bn"`),
		hasText("#console-title", "কনসোল"),
		hasText("#console-audit", "কর্মী বাদ"),
		hasText("#console-audit", "কাউন্টার কর্মী →"),
	)
	shot(t, ctx, "bengali-console-audit")
	do(t, ctx,
		chromedp.Click(chromedp.CSS("#tab-staff")),
		hasText("#console-staff", "ম্যানেজার"),
		hasText("#staff-add", "যোগ বা বদল"),
	)
	shot(t, ctx, "bengali-console-staff")
	do(t, ctx,
		chromedp.Click(chromedp.CSS("#tab-shows")),
		hasText("#show-"+show+" .status", "বাতিল"),
	)
	shot(t, ctx, "bengali-console-shows")
	// The cancellation's refunds, the organisation's sales and the
	// trip's, in Bengali (digits too).
	do(t, ctx,
		script(`document.querySelector("#cancellation-`+show+`") || document.querySelector("#progress-`+show+`").click()`),
		hasText("#cancellation-"+show, "ফেরত দেওয়া হয়েছে"),
		hasText("#cancellation-"+show+" .refunds-done", "২"),
	)
	shot(t, ctx, "bengali-console-cancellation")
	do(t, ctx,
		chromedp.Click(chromedp.CSS("#org-sales")),
		hasText("#org-sales-table", "সব শো"),
	)
	shot(t, ctx, "bengali-console-org-sales")
	do(t, ctx,
		chromedp.Click(chromedp.CSS("#org-sales")), until(`!document.querySelector("#org-sales-table")`),
		chromedp.Click(chromedp.CSS("#sales-"+show)),
		hasText("#sales-title", "বিক্রি: Tangail to Rajshahi, console"),
		until(`document.querySelector("#console-sales")?.getAttribute("aria-busy") === "false"`),
		hasText("#console-sales", "মাধ্যম"),
	)
	shot(t, ctx, "bengali-console-sales")
	do(t, ctx, chromedp.Click(chromedp.CSS("#sales-close")), until(`!document.querySelector("#console-sales")`))

	// Gate staff: their role and pages, no staff or log.
	gateCtx := tab(t, browser)
	do(t, gateCtx,
		signIn(s, "demo-gate", "operator"),
		chromedp.Navigate(s.base+"/console"),
		hasText("#console-role", "Gate staff"),
	)
	require.False(t, eval[bool](t, gateCtx, `!!document.querySelector("#tab-staff")`))
	buyerCtx := tab(t, browser)
	do(t, buyerCtx,
		signIn(s, "web-console-buyer", "user"),
		chromedp.Navigate(s.base+"/console"),
		hasText("#console-none", "You run no organisation"),
	)
	// And the API refuses them what the page does not offer.
	for _, who := range []struct{ name, role string }{{"demo-gate", "operator"}, {"web-console-buyer", "user"}} {
		token := s.devToken(t, who.name, who.role)
		for _, call := range []struct {
			procedure string
			req       map[string]any
		}{
			{"seatghor.catalog.v1.CatalogService/ListOrganizationMembers", map[string]any{"organizationId": "demo-operator"}},
			{"seatghor.catalog.v1.CatalogService/ListAuditEntries", map[string]any{"organizationId": "demo-operator"}},
			{"seatghor.catalog.v1.CatalogService/AddOrganizationMember", map[string]any{"organizationId": "demo-operator",
				"userId": who.name, "role": "ORGANIZATION_ROLE_MANAGER"}},
		} {
			status, body := post(t, s, token, call.procedure, call.req)
			require.Equal(t, http.StatusForbidden, status, "%s by %s: %s", call.procedure, who.name, body)
			require.Contains(t, body, `"code":"permission_denied"`)
		}
	}
}

// The console's refund desk (decision 0448) and moving a show: admin ana
// refunds 550 of a buyer's 600 taka by hand, over the dev server's
// approval threshold (500 taka, SEATGHOR_REFUND_APPROVAL_MINOR in the
// harness), so it waits; ana is not offered its approval, admin bob is,
// approves it, and the gateway gives the money back once (the buyer's
// order says so). A manager moves another trip an hour later with a
// reason, and the log has it; its passenger declines the new time and is
// refunded in full. The desk reads in Bengali.
func TestBrowserConsoleRefundDesk(t *testing.T) {
	s, browser := openSite(t)
	show := gateTrip(t, s, "Tangail to Rajshahi, refund desk")
	journeyTicket(t, s, "web-refund-buyer", show, "A1", "tangail", "rajshahi") // 600 taka
	buyer := s.devToken(t, "web-refund-buyer", "user")
	var orders struct {
		Orders []struct {
			OrderID   string `json:"orderId"`
			PaymentID string `json:"paymentId"`
			Refunded  struct {
				AmountMinor string `json:"amountMinor"`
			} `json:"refunded"`
		} `json:"orders"`
	}
	s.call(t, buyer, "seatghor.booking.v1.OrderService/ListMyOrders", map[string]any{}, &orders)
	require.Len(t, orders.Orders, 1)
	payment := orders.Orders[0].PaymentID
	require.NotEmpty(t, payment)

	ana := desk(t, browser)
	do(t, ana,
		signIn(s, "web-refund-ana", "admin"),
		chromedp.Navigate(s.base+"/console/demo-operator/refunds"),
		chromedp.WaitVisible(chromedp.CSS("#manual-payment")),
		chromedp.SendKeys(chromedp.CSS("#manual-payment"), payment),
		chromedp.SendKeys(chromedp.CSS("#manual-amount"), "550"),
		chromedp.SendKeys(chromedp.CSS("#manual-note"), "Coach AC broke down"),
		chromedp.Click(chromedp.CSS("#manual-send")),
		hasText("#manual-done", "awaiting approval"),
		hasText("#refunds-waiting", "Coach AC broke down"),
		hasText("#refunds-waiting", "yours: another admin approves"),
	)
	require.False(t, eval[bool](t, ana, `!!document.querySelector("#refunds-waiting button")`), "the asker is offered no approval")
	refund := eval[string](t, ana, `document.querySelector("#refunds-waiting tbody th").textContent`)
	require.NotEmpty(t, refund)

	bob := desk(t, browser)
	do(t, bob,
		signIn(s, "web-refund-bob", "admin"),
		chromedp.Navigate(s.base+"/console/demo-operator/refunds"),
		hasText("#waiting-"+refund, "web-refund-ana"),
		hasText("#waiting-"+refund, "৳550"),
	)
	shot(t, bob, "console-refunds")
	do(t, bob,
		chromedp.Click(chromedp.CSS("#lang")),
		until(`document.documentElement.lang === "bn"`),
		hasText("#refunds-waiting", "দ্বিতীয় অ্যাডমিনের অনুমোদনের অপেক্ষায়"),
		hasText("#approve-"+refund, "অনুমোদন"),
	)
	shot(t, bob, "bengali-console-refunds")
	do(t, bob,
		chromedp.Click(chromedp.CSS("#approve-"+refund)),
		until(`!document.querySelector("#waiting-`+refund+`")`),
		hasText("#refunds-none-waiting", "কোনো ফেরত অনুমোদনের অপেক্ষায় নেই"),
	)
	// The money went back once: the order says 550 taka refunded.
	deadline := time.Now().Add(waitLong)
	for {
		s.call(t, buyer, "seatghor.booking.v1.OrderService/ListMyOrders", map[string]any{}, &orders)
		if orders.Orders[0].Refunded.AmountMinor == "55000" {
			break
		}
		require.True(t, time.Now().Before(deadline), "the approved refund reached the order: %+v", orders.Orders[0])
		time.Sleep(200 * time.Millisecond)
	}
	// Both steps are in the audit log, gathered from the show's shard.
	do(t, bob,
		chromedp.Click(chromedp.CSS("#tab-audit")),
		choose("#audit-action", "refund."),
		// Searched again until the projector has gathered both (about a
		// tenth of a second; a search a second at most).
		until(`(() => {
			const n = document.querySelectorAll("#console-audit tbody tr[data-action^='refund.']").length;
			const now = Date.now();
			if (n < 2 && !(window.lastSearch > now - 1000)) { window.lastSearch = now; document.querySelector("#audit-search").click(); }
			return n === 2;
		})()`),
		hasText("#console-audit tbody tr[data-action='refund.approve']", "ফেরত অনুমোদিত"),
		hasText("#console-audit tbody tr[data-action='refund.request']", "Coach AC broke down"),
	)
	// A manager is refused the desk by the API, not only by the page.
	admin := s.devToken(t, "web-admin", "admin")
	s.call(t, admin, "seatghor.catalog.v1.CatalogService/AddOrganizationMember",
		map[string]any{"organizationId": "demo-operator", "userId": "web-refund-mgr", "role": "ORGANIZATION_ROLE_MANAGER"}, &struct{}{})
	status, body := post(t, s, s.devToken(t, "web-refund-mgr", "operator"), "seatghor.ledger.v1.LedgerService/ListRefundsToApprove", map[string]any{})
	require.Equal(t, http.StatusForbidden, status, body)

	// The manager moves another trip an hour later, with a reason; a
	// passenger who paid before declines the new time and is refunded in
	// full (decision 0477).
	moved := gateTrip(t, s, "Tangail to Rajshahi, moved")
	journeyTicket(t, s, "web-moved-buyer", moved, "A1", "tangail", "rajshahi") // 600 taka
	mgr := desk(t, browser)
	do(t, mgr,
		signIn(s, "web-refund-mgr", "operator"),
		chromedp.Navigate(s.base+"/console/demo-operator/shows"),
		chromedp.WaitVisible(chromedp.CSS("#move-"+moved)),
		chromedp.Click(chromedp.CSS("#move-"+moved)),
	)
	later := time.Now().Add(3 * time.Hour).In(time.FixedZone("BDT", 6*3600)).Format("2006-01-02T15:04")
	do(t, mgr,
		chromedp.SetValue(chromedp.CSS("#move-to"), later),
		script(`document.querySelector("#move-to").dispatchEvent(new Event("input", { bubbles: true }))`),
		chromedp.SendKeys(chromedp.CSS("#show-reason"), "Ferry delayed at Aricha"),
		chromedp.Click(chromedp.CSS("#move-confirm")),
		hasText("#show-"+moved+" .status", "Delayed"),
		chromedp.Click(chromedp.CSS("#tab-audit")),
		until(`document.querySelector("#console-audit tbody tr")?.dataset.action === "show.reschedule"`),
		hasText("#console-audit tbody tr", "Ferry delayed at Aricha"),
	)
	passenger := tab(t, browser)
	do(t, passenger,
		signIn(s, "web-moved-buyer", "user"),
		chromedp.Navigate(s.base+"/show/"+moved),
		hasText("#show-status", "Delayed to the time above; it was"),
		hasText("#show-status", "Reason: Ferry delayed at Aricha"),
		chromedp.Navigate(s.base+"/tickets"),
		chromedp.WaitVisible(chromedp.CSS(".cancel button")),
		chromedp.Click(chromedp.CSS(".cancel button")),
		hasText(".confirm", "The show moved after you paid: you get all ৳600 back, no fee."),
		chromedp.Click(chromedp.CSS(".confirm .danger")),
		hasText(".order", "Cancelled. ৳600 is being refunded."),
	)
	// And renames it in both languages (decision 0454): the list and the
	// log say so.
	do(t, mgr,
		chromedp.Click(chromedp.CSS("#tab-shows")),
		chromedp.WaitVisible(chromedp.CSS("#edit-"+moved)),
		chromedp.Click(chromedp.CSS("#edit-"+moved)),
		hasText("#edit-heading", "Tangail to Rajshahi, moved"),
		hasText("#edit-opening-fixed", "its opening stays"),
		script(`const i = document.querySelector("#edit-title"); i.value = ""; i.dispatchEvent(new Event("input", { bubbles: true }))`),
		chromedp.SendKeys(chromedp.CSS("#edit-title"), "Tangail to Rajshahi, night coach"),
		chromedp.SendKeys(chromedp.CSS("#edit-titleBn"), "টাঙ্গাইল থেকে রাজশাহী, রাতের কোচ"),
		chromedp.SendKeys(chromedp.CSS("#edit-reason"), "new coach"),
		chromedp.Click(chromedp.CSS("#edit-save")),
		hasText("#edit-saved", "Saved"),
		hasText("#show-"+moved, "Tangail to Rajshahi, night coach"),
	)
	do(t, mgr, chromedp.EmulateViewport(1280, 1100), script(`document.querySelector("#console-edit").scrollIntoView()`))
	shot(t, mgr, "console-edit")
	do(t, mgr, chromedp.EmulateViewport(1280, 900))
	do(t, mgr,
		chromedp.Click(chromedp.CSS("#tab-audit")),
		until(`document.querySelector("#console-audit tbody tr")?.dataset.action === "show.update"`),
		hasText("#console-audit tbody tr", "title: Tangail to Rajshahi, moved"),
		hasText("#console-audit tbody tr", "→ title: Tangail to Rajshahi, night coach"),
		hasText("#console-audit tbody tr", "“new coach”"),
	)
}

// The console's on-sale panel (decision 0450): a manager watches a
// waiting room before its opening (the lottery) while three buyers join,
// opens it now, pauses and resumes admission, sets the rate's limits and
// ends the queue; the figures and the chart follow every 2 s, in English
// and Bengali. Gate staff are refused the controls by the API.
func TestBrowserConsoleOnSale(t *testing.T) {
	s, browser := openSite(t)
	admin := s.devToken(t, "web-admin", "admin")
	s.call(t, admin, "seatghor.catalog.v1.CatalogService/AddOrganizationMember",
		map[string]any{"organizationId": "demo-operator", "userId": "web-onsale-mgr", "role": "ORGANIZATION_ROLE_MANAGER"}, &struct{}{})
	var created struct {
		Show struct {
			ShowID string `json:"showId"`
		} `json:"show"`
	}
	s.call(t, admin, "seatghor.catalog.v1.CatalogService/CreateShow", map[string]any{
		"kind": "SHOW_KIND_CONCERT", "title": "Chirkutt live", "venue": "ICCB", "currency": "BDT",
		"organizationId": "demo-operator",
		"startsAt":       time.Now().Add(30 * 24 * time.Hour).UTC().Format(time.RFC3339),
		"onSaleAt":       time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
		"sections":       []map[string]any{{"name": "Main", "rows": []string{"A", "B"}, "seatsPerRow": 4, "priceMinor": "150000"}},
		"waitingRoom":    map[string]any{"enabled": true},
	}, &created)
	show := created.Show.ShowID
	for _, fan := range []string{"web-onsale-fan1", "web-onsale-fan2", "web-onsale-fan3"} {
		s.call(t, s.devToken(t, fan, "user"), "seatghor.waitingroom.v1.WaitingRoomService/Join", map[string]any{"showId": show}, nil)
	}

	ctx := desk(t, browser)
	do(t, ctx,
		signIn(s, "web-onsale-mgr", "operator"),
		chromedp.Navigate(s.base+"/console/demo-operator/shows"),
		chromedp.WaitVisible(chromedp.CSS("#onsale-"+show)),
		chromedp.Click(chromedp.CSS("#onsale-"+show)),
		hasText("#onsale-title", "Chirkutt live"),
		hasText("#onsale-state", "before the opening"),
		hasText("#onsale-joined", "3"),
		chromedp.Click(chromedp.CSS("#onsale-open-now")),
		hasText("#onsale-state", "letting people in"),
		chromedp.Click(chromedp.CSS("#onsale-pause")),
		hasText("#onsale-state", "paused"),
		chromedp.Click(chromedp.CSS("#onsale-resume")),
		until(`document.querySelector("#onsale-state").textContent !== "paused"`),
		chromedp.SendKeys(chromedp.CSS("#onsale-min"), "5"),
		chromedp.SendKeys(chromedp.CSS("#onsale-max"), "50"),
		chromedp.Click(chromedp.CSS("#onsale-limits")),
		hasText("#onsale-rate", "(5–50)"),
		until(`!!document.querySelector("#onsale-chart canvas")`),
	)
	// A few readings for the chart; the whole panel in the picture.
	time.Sleep(5 * time.Second)
	do(t, ctx, chromedp.EmulateViewport(1280, 1300), script(`document.querySelector("#console-onsale").scrollIntoView()`))
	shot(t, ctx, "console-onsale")
	do(t, ctx,
		chromedp.Click(chromedp.CSS("#lang")),
		until(`document.documentElement.lang === "bn"`),
		chromedp.WaitVisible(chromedp.CSS("#onsale-"+show)),
		chromedp.Click(chromedp.CSS("#onsale-"+show)),
		hasText("#onsale-rate", "(৫–৫০)"),
		hasText("#onsale-figures", "ঢোকার হার"),
	)
	do(t, ctx, script(`document.querySelector("#console-onsale").scrollIntoView()`))
	shot(t, ctx, "bengali-console-onsale")
	do(t, ctx,
		chromedp.Click(chromedp.CSS("#onsale-end")),
		hasText("#onsale-state", "সারি শেষ"),
	)
	// Gate staff may not steer the sale, whatever a page shows.
	status, body := post(t, s, s.devToken(t, "demo-gate", "operator"), "seatghor.waitingroom.v1.WaitingRoomService/UpdateSale",
		map[string]any{"showId": show, "paused": true})
	require.Equal(t, http.StatusForbidden, status, body)
}

// The console's partners (decision 0453): an admin finds a partner in the
// list, opens it, makes a read-only key (its secret shown once) and
// revokes it; the key is refused at once; the partner has no endpoints
// and sold nothing this month. In Bengali too. A manager is refused the
// list by the API.
func TestBrowserConsolePartners(t *testing.T) {
	s, browser := openSite(t)
	admin := s.devToken(t, "web-admin", "admin")
	var created struct {
		Partner struct {
			PartnerID string `json:"partnerId"`
		} `json:"partner"`
	}
	s.call(t, admin, "seatghor.partner.v1.PartnerService/CreatePartner", map[string]any{"name": "Paribahan Tickets",
		"commissionBps": 450, "contact": map[string]any{"name": "Nadia", "email": "api@paribahan.example"},
		"allowedOrganizationIds": []string{"demo-operator"}}, &created)
	partner := created.Partner.PartnerID

	ctx := desk(t, browser)
	do(t, ctx,
		signIn(s, "web-partners-admin", "admin"),
		chromedp.Navigate(s.base+"/console/demo-operator/partners"),
		hasText("#partner-"+partner, "Paribahan Tickets"),
		hasText("#partner-"+partner, "4.50%"),
		chromedp.Click(chromedp.CSS("#open-partner-"+partner)),
		hasText("#partner-title", "Paribahan Tickets"),
		hasText("#partner-no-endpoints", "No endpoints"),
		chromedp.SendKeys(chromedp.CSS("#key-name"), "console test"),
		chromedp.Click(chromedp.CSS("#key-make")),
		hasText("#key-secret", "shown this once"),
		until(`document.querySelectorAll("#partner-keys tbody tr").length === 1`),
	)
	secret := eval[string](t, ctx, `document.querySelector("#key-secret code").textContent`)
	require.NotEmpty(t, secret)
	status, body := post(t, s, secret, "seatghor.partner.v1.PartnerService/GetPartner", map[string]any{"partnerId": partner})
	require.Equal(t, http.StatusOK, status, "the new key works: %s", body)
	shot(t, ctx, "console-partners")
	do(t, ctx,
		chromedp.Click(chromedp.CSS("#partner-keys button.danger")),
		until(`!document.querySelector("#partner-keys button.danger")`),
	)
	status, _ = post(t, s, secret, "seatghor.partner.v1.PartnerService/GetPartner", map[string]any{"partnerId": partner})
	require.Equal(t, http.StatusUnauthorized, status, "a revoked key is refused at once")
	do(t, ctx,
		chromedp.Click(chromedp.CSS("#lang")),
		until(`document.documentElement.lang === "bn"`),
		chromedp.WaitVisible(chromedp.CSS("#open-partner-"+partner)),
		chromedp.Click(chromedp.CSS("#open-partner-"+partner)),
		hasText("#partner-keys", "শুধু পড়া"),
		hasText("#partner-panel", "এই মাসের হিসাব"),
	)
	shot(t, ctx, "bengali-console-partners")
	status, _ = post(t, s, s.devToken(t, "demo-gate", "operator"), "seatghor.partner.v1.PartnerService/ListPartners", map[string]any{})
	require.Equal(t, http.StatusForbidden, status)
}

// A partner's webhook deliveries in the console (decision 0461): the
// partner's endpoint (a real HTTP server on this machine) fails a show's
// move with 503; the admin reads the failure in the endpoint's log, the
// endpoint is mended, and "Send again" delivers the event with the
// webhook-id it had; an endpoint an admin disabled is enabled again from
// the panel. In Bengali too. A manager may not read the log (the API).
func TestBrowserConsoleWebhookDeliveries(t *testing.T) {
	s, browser := openSite(t)
	admin := s.devToken(t, "web-admin", "admin")
	var healthy atomic.Bool
	var mu sync.Mutex
	answered := map[string][]int{} // webhook-id → the statuses answered, for our show's event
	var show string
	hooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		code := http.StatusServiceUnavailable
		if healthy.Load() {
			code = http.StatusNoContent
		}
		mu.Lock()
		if show != "" && strings.Contains(string(body), show) {
			answered[r.Header.Get("webhook-id")] = append(answered[r.Header.Get("webhook-id")], code)
		}
		mu.Unlock()
		w.WriteHeader(code)
	}))
	t.Cleanup(hooks.Close)
	ours := func() (string, []int) {
		mu.Lock()
		defer mu.Unlock()
		for id, codes := range answered {
			return id, slices.Clone(codes)
		}
		return "", nil
	}

	var partner struct {
		Partner struct {
			PartnerID string `json:"partnerId"`
		} `json:"partner"`
	}
	s.call(t, admin, "seatghor.partner.v1.PartnerService/CreatePartner", map[string]any{"name": "Hooked Tickets",
		"commissionBps": 300, "contact": map[string]any{"name": "Tanvir", "email": "ops@hooked.example"},
		"allowedOrganizationIds": []string{"demo-operator"}}, &partner)
	var endpoint struct {
		Endpoint struct {
			EndpointID string `json:"endpointId"`
		} `json:"endpoint"`
	}
	s.call(t, admin, "seatghor.partner.v1.WebhookService/CreateEndpoint", map[string]any{"partnerId": partner.Partner.PartnerID,
		"url": hooks.URL + "/seatghor", "eventTypes": []string{"show.rescheduled"}}, &endpoint)
	ep := endpoint.Endpoint.EndpointID
	var created struct {
		Show struct {
			ShowID string `json:"showId"`
		} `json:"show"`
	}
	starts := time.Now().Add(40 * 24 * time.Hour).UTC().Truncate(time.Minute)
	s.call(t, admin, "seatghor.catalog.v1.CatalogService/CreateShow", map[string]any{
		"kind": "SHOW_KIND_CONCERT", "title": "Arbovirus live", "venue": "Bashundhara", "currency": "BDT",
		"organizationId": "demo-operator", "startsAt": starts.Format(time.RFC3339),
		"sections": []map[string]any{{"name": "Floor", "rows": []string{"A"}, "seatsPerRow": 4, "priceMinor": "100000"}},
	}, &created)
	mu.Lock()
	show = `"` + created.Show.ShowID + `"`
	mu.Unlock()
	s.call(t, admin, "seatghor.catalog.v1.CatalogService/RescheduleShow", map[string]any{"showId": created.Show.ShowID,
		"startsAt": starts.Add(24 * time.Hour).Format(time.RFC3339), "reason": "the venue's power is out"}, nil)
	require.Eventually(t, func() bool { id, _ := ours(); return id != "" }, waitLong, 50*time.Millisecond,
		"the partner's endpoint is sent the show's move")
	webhookID, codes := ours()
	require.Equal(t, http.StatusServiceUnavailable, codes[0])
	row := fmt.Sprintf(`#deliveries tr[data-webhook-id=%q]`, webhookID)

	ctx := desk(t, browser)
	do(t, ctx,
		signIn(s, "web-hooks-admin", "admin"),
		chromedp.Navigate(s.base+"/console/demo-operator/partners"),
		chromedp.WaitVisible(chromedp.CSS("#open-partner-"+partner.Partner.PartnerID)),
		chromedp.Click(chromedp.CSS("#open-partner-"+partner.Partner.PartnerID)),
		hasText("#endpoint-"+ep, hooks.URL),
		chromedp.Click(chromedp.CSS("#deliveries-"+ep)),
		hasText(row, "show.rescheduled"),
		hasText(row+" .answer", "HTTP 503"),
		script(`document.querySelector("#endpoint-deliveries").scrollIntoView()`),
	)
	shot(t, ctx, "console-webhook-deliveries")
	healthy.Store(true)
	before := len(codes)
	do(t, ctx,
		script(fmt.Sprintf(`document.querySelector(%q).click()`, row+" button")),
		hasText("#deliveries-replayed", "Sent again"),
		hasText(row+" .status", "delivered"),
	)
	_, codes = ours()
	require.Greater(t, len(codes), before)
	require.Equal(t, http.StatusNoContent, codes[len(codes)-1], "sent again with the webhook-id it had, and taken")

	// Disabled by an admin, enabled again from the panel.
	s.call(t, admin, "seatghor.partner.v1.WebhookService/DisableEndpoint", map[string]any{"endpointId": ep, "reason": "partner asked"}, nil)
	do(t, ctx,
		chromedp.Click(chromedp.CSS("#partner-close")),
		chromedp.Click(chromedp.CSS("#open-partner-"+partner.Partner.PartnerID)),
		hasText("#endpoint-"+ep+" .health", "disabled"),
		chromedp.Click(chromedp.CSS("#enable-"+ep)),
		hasText("#endpoint-"+ep+" .health", "delivering"),
		until(`!document.querySelector("#enable-`+ep+`")`),
		chromedp.Click(chromedp.CSS("#lang")),
		until(`document.documentElement.lang === "bn"`),
		chromedp.WaitVisible(chromedp.CSS("#open-partner-"+partner.Partner.PartnerID)),
		chromedp.Click(chromedp.CSS("#open-partner-"+partner.Partner.PartnerID)),
		chromedp.Click(chromedp.CSS("#deliveries-"+ep)),
		hasText(row+" .status", "পৌঁছেছে"),
		hasText("#deliveries-title", "পাঠানোর খতিয়ান"),
		script(`document.querySelector("#endpoint-deliveries").scrollIntoView()`),
	)
	shot(t, ctx, "bengali-console-webhook-deliveries")

	// Every event of the last hour sent again at once (decision 0475), as
	// after a partner's outage: ours among them, with its webhook-id.
	_, codes = ours()
	before = len(codes)
	do(t, ctx,
		chromedp.Click(chromedp.CSS("#replay-range")),
		hasText("#range-replayed", "আবার পাঠানো হলো"),
	)
	require.Eventually(t, func() bool { _, codes = ours(); return len(codes) > before }, waitLong, 50*time.Millisecond,
		"the range's replay reaches the endpoint")
	require.Equal(t, http.StatusNoContent, codes[len(codes)-1])
	require.False(t, strings.HasPrefix(eval[string](t, ctx, `document.querySelector("#range-replayed").textContent`), "০টি"),
		"ours was in the range")

	// The log is the partner's and the admins': a manager is refused it.
	status, body := post(t, s, s.devToken(t, "demo-manager", "operator"), "seatghor.partner.v1.WebhookService/ListDeliveries",
		map[string]any{"endpointId": ep})
	require.Equal(t, http.StatusForbidden, status, body)
}

// A general-admission area's places allocated to a partner from the
// console (decision 0467): the manager picks the area and a number; the
// allocation lists its places; general sale has that many fewer.
func TestBrowserConsoleGAAllocation(t *testing.T) {
	s, browser := openSite(t)
	admin := s.devToken(t, "web-admin", "admin")
	s.call(t, admin, "seatghor.catalog.v1.CatalogService/AddOrganizationMember",
		map[string]any{"organizationId": "demo-operator", "userId": "web-ga-mgr", "role": "ORGANIZATION_ROLE_MANAGER"}, &struct{}{})
	var created struct {
		Show struct {
			ShowID string `json:"showId"`
		} `json:"show"`
	}
	s.call(t, admin, "seatghor.catalog.v1.CatalogService/CreateShow", map[string]any{
		"kind": "SHOW_KIND_CONCERT", "title": "Open-air night", "venue": "Army Stadium", "currency": "BDT",
		"organizationId": "demo-operator", "startsAt": time.Now().Add(25 * 24 * time.Hour).UTC().Format(time.RFC3339),
		"gaAreas":            []map[string]any{{"name": "Field", "capacity": 100, "priceMinor": "50000"}},
		"maxSeatsPerAccount": 100, "maxSeatsPerHold": 100,
	}, &created)
	show := created.Show.ShowID
	var partner struct {
		Partner struct {
			PartnerID string `json:"partnerId"`
		} `json:"partner"`
	}
	s.call(t, admin, "seatghor.partner.v1.PartnerService/CreatePartner", map[string]any{"name": "Field Resellers",
		"commissionBps": 300, "contact": map[string]any{"name": "Sumi", "email": "api@field.example"},
		"allowedOrganizationIds": []string{"demo-operator"}}, &partner)

	ctx := desk(t, browser)
	do(t, ctx,
		signIn(s, "web-ga-mgr", "operator"),
		chromedp.Navigate(s.base+"/console/demo-operator/shows"),
		chromedp.WaitVisible(chromedp.CSS("#allocations-"+show)),
		chromedp.Click(chromedp.CSS("#allocations-"+show)),
		hasText("#allocations-none", "No allocations"),
		typeIn("#alloc-partner", partner.Partner.PartnerID),
		choose("#alloc-area", "Field"),
		chromedp.WaitVisible(chromedp.CSS("#alloc-quantity")),
		typeIn("#alloc-quantity", "20"),
		typeIn("#alloc-return", time.Now().Add(7*24*time.Hour).In(time.FixedZone("BDT", 6*3600)).Format("2006-01-02T15:04")),
		chromedp.Click(chromedp.CSS("#alloc-make")),
		hasText("#allocations tbody tr", "20 places"),
		hasText("#allocations tbody tr .left", "20"),
		hasText("#allocations tbody tr .status", "active"),
	)
	// The area's price, while none of its places is held or sold
	// (decision 0474): 500 taka to 650.
	do(t, ctx,
		chromedp.Click(chromedp.CSS("#edit-"+show)),
		until(`document.querySelector("#edit-area-price-0")?.value === "500"`),
		typeIn("#edit-area-price-0", "650"),
		chromedp.Click(chromedp.CSS("#edit-save")),
		chromedp.WaitVisible(chromedp.CSS("#edit-saved")),
	)
	buyer := s.devToken(t, "web-ga-buyer", "user")
	hold := func(n int) (int, string) {
		return post(t, s, buyer, "seatghor.booking.v1.HoldService/CreateHold", map[string]any{"showId": show, "gaArea": "Field", "quantity": n})
	}
	status, body := hold(81)
	require.NotEqual(t, http.StatusOK, status, "81 of the 80 left to general sale: %s", body)
	status, body = hold(80)
	require.Equal(t, http.StatusOK, status, "the 80 left to general sale: %s", body)
	require.Contains(t, body, `"amountMinor":"5200000"`, "80 places at the new 650 taka")
	// Now places are held: the price stays, and the console says why.
	do(t, ctx,
		typeIn("#edit-area-price-0", "700"),
		chromedp.Click(chromedp.CSS("#edit-save")),
		hasText("#console-error", "held or sold"),
	)
}
