package site_test

import (
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// The console (issue 26, decisions 0446, 0447), its own bundle: a manager
// of the demo operator opens /console, sees the operator's trip among its
// shows and its live sales (a ticket sold while the panel is open shows
// within seconds),
// adds a gate member by user id, makes them counter staff and removes
// them, cancels the trip with a reason, and finds each step in the audit
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

	ctx := tab(t, browser)
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
	do(t, ctx, chromedp.Click(chromedp.CSS("#sales-close")), until(`!document.querySelector("#console-sales")`))
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
		chromedp.SendKeys(chromedp.CSS("#cancel-reason"), "Road closed by floods"),
		chromedp.Click(chromedp.CSS("#cancel-confirm")),
		hasText("#show-"+show+" .status", "Cancelled"),
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
