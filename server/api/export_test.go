package api_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/timestamppb"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	ledgerv1 "github.com/seatghor/seatghor/gen/seatghor/ledger/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/catalog"
)

// exported reads a whole export as c: its file name and its rows, the
// byte-order mark checked and taken off.
func exported(t *testing.T, c clients, req *ledgerv1.ExportSalesRequest) (string, [][]string, error) {
	t.Helper()
	stream, err := c.ledger.ExportSales(context.Background(), connect.NewRequest(req))
	if err != nil {
		return "", nil, err
	}
	defer stream.Close()
	var name string
	var file bytes.Buffer
	for stream.Receive() {
		if name == "" {
			name = stream.Msg().GetFilename()
			require.Equal(t, "text/csv; charset=utf-8", stream.Msg().GetContentType())
		}
		file.Write(stream.Msg().GetData())
	}
	if err := stream.Err(); err != nil {
		return "", nil, err
	}
	require.True(t, bytes.HasPrefix(file.Bytes(), []byte("\ufeff")), "a byte-order mark for spreadsheets")
	rows, err := csv.NewReader(bytes.NewReader(file.Bytes()[3:])).ReadAll()
	require.NoError(t, err, "a well-formed CSV file")
	return name, rows, nil
}

// TestExportSales (issue 26 §7, decision 0449): a trip's managers export
// its orders and its ledger statement as CSV, streamed. In Bengali the
// columns, statuses and stops are Bengali and a Bengali passenger's name
// is intact; a name that starts like a formula is quoted; a cancelled
// order shows its refund. The ledger statement's debits equal its
// credits. An admin exports every show's ledger of a period; a manager may
// not, nor may another organisation's manager or a buyer export the trip.
func TestExportSales(t *testing.T) {
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Shards: 1})
	env.Member(t, "export-org", "export-mgr", catalog.RoleManager)
	env.Member(t, "other-org", "other-mgr", catalog.RoleManager)
	req := tripShow("Export 08:00", 2, 40000, "Dhaka", "Cumilla", "Chattogram")
	req.OrganizationId = "export-org"
	trip := createShow(t, env, req).GetShowId()

	buy := func(b buyer, seat, name string) *bookingv1.Order {
		hold, err := b.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: trip, Seats: []string{seat},
			Journey: journey("dhaka", "cumilla")}))
		require.NoError(t, err)
		o, err := b.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: hold.Msg.GetHold().GetHoldId(),
			Passengers: []*commonv1.Passenger{{Seat: seat, Name: name, Phone: "01711-234567"}}}))
		require.NoError(t, err)
		_, err = b.pay(o.Msg.GetOrder().GetOrderId(), "tok_success")
		require.NoError(t, err)
		return o.Msg.GetOrder()
	}
	rumana, karim := newBuyer(t, env, "rumana"), newBuyer(t, env, "karim")
	kept := buy(rumana, "A1", "সুন্দরী খাতুন")
	gone := buy(karim, "A2", "@Karim")
	_, err := karim.orders.CancelOrder(ctx, connect.NewRequest(&bookingv1.CancelOrderRequest{OrderId: gone.GetOrderId()}))
	require.NoError(t, err)

	mgr := as(t, env, "export-mgr", auth.RoleOperator)
	var rows [][]string
	require.Eventually(t, func() bool {
		_, rows, err = exported(t, mgr, &ledgerv1.ExportSalesRequest{ShowId: trip, Kind: ledgerv1.ExportKind_EXPORT_KIND_ORDERS, Language: "bn"})
		require.NoError(t, err)
		return len(rows) == 3 && rows[1][12] != "0.00" || len(rows) == 3 && rows[2][12] != "0.00"
	}, 10*time.Second, 100*time.Millisecond, "the cancelled order's refund shows")
	require.Equal(t, "অর্ডার", rows[0][0])
	byID := map[string][]string{rows[1][0]: rows[1], rows[2][0]: rows[2]}
	k := byID[kept.GetOrderId()]
	require.NotNil(t, k)
	require.Equal(t, "নিশ্চিত", k[2], "confirmed, in Bengali")
	require.Equal(t, "ওয়েব", k[3])
	require.Equal(t, "সুন্দরী খাতুন", k[10], "the Bengali name intact")
	require.Equal(t, "ঢাকা", k[7], "the stops in Bengali")
	require.Equal(t, "কুমিল্লা", k[8])
	require.Equal(t, "A1", k[9])
	require.Equal(t, amountText(kept.GetTotal().GetAmountMinor()), k[11])
	g := byID[gone.GetOrderId()]
	require.NotNil(t, g)
	require.Equal(t, "'@Karim", g[10], "a name that starts like a formula is quoted")
	require.NotEqual(t, "0.00", g[12], "refunded")

	// A page at a time: one order a page reads both, in order id order.
	var pages [][]string
	require.NoError(t, env.App.Booking.EachOrderPage(ctx, trip, 1, func(page []booking.ExportedOrder) error {
		require.Len(t, page, 1)
		pages = append(pages, []string{page[0].ID})
		return nil
	}))
	require.Len(t, pages, 2)
	require.Less(t, pages[0][0], pages[1][0])

	name, ledgerRows, err := exported(t, mgr, &ledgerv1.ExportSalesRequest{ShowId: trip, Kind: ledgerv1.ExportKind_EXPORT_KIND_LEDGER})
	require.NoError(t, err)
	require.Equal(t, "ledger-"+itoa(trip)+"-en.csv", name)
	require.Equal(t, []string{"Journal", "Posted", "Kind", "Reference", "Show", "Account", "Debit", "Credit", "Currency", "Description"}, ledgerRows[0])
	var debits, credits int64
	kinds := map[string]bool{}
	for _, r := range ledgerRows[1:] {
		debits += minorOf(t, r[6])
		credits += minorOf(t, r[7])
		kinds[r[2]] = true
	}
	require.Positive(t, debits)
	require.Equal(t, debits, credits, "a ledger statement balances")
	require.True(t, kinds["booking"] && kinds["refund"], "sales and the refund: %v", kinds)

	admin := as(t, env, "admin", auth.RoleAdmin)
	period := &ledgerv1.ExportSalesRequest{Kind: ledgerv1.ExportKind_EXPORT_KIND_LEDGER,
		PeriodStart: timestamppb.New(time.Now().Add(-time.Hour)), PeriodEnd: timestamppb.New(time.Now().Add(time.Hour))}
	_, all, err := exported(t, admin, period)
	require.NoError(t, err)
	require.Equal(t, len(ledgerRows), len(all), "the period holds the trip's journals, the only ones")
	for _, tc := range []struct {
		name string
		c    clients
		req  *ledgerv1.ExportSalesRequest
		code connect.Code
	}{
		{"a manager's period of every show", mgr, period, connect.CodePermissionDenied},
		{"another organisation's manager", as(t, env, "other-mgr", auth.RoleOperator),
			&ledgerv1.ExportSalesRequest{ShowId: trip, Kind: ledgerv1.ExportKind_EXPORT_KIND_ORDERS}, connect.CodePermissionDenied},
		{"a buyer", rumana.clients, &ledgerv1.ExportSalesRequest{ShowId: trip, Kind: ledgerv1.ExportKind_EXPORT_KIND_ORDERS}, connect.CodePermissionDenied},
		{"orders of no show", admin, &ledgerv1.ExportSalesRequest{Kind: ledgerv1.ExportKind_EXPORT_KIND_ORDERS}, connect.CodeInvalidArgument},
		{"no kind", admin, &ledgerv1.ExportSalesRequest{ShowId: trip}, connect.CodeInvalidArgument},
		{"a show that is not", admin, &ledgerv1.ExportSalesRequest{ShowId: 999999, Kind: ledgerv1.ExportKind_EXPORT_KIND_ORDERS}, connect.CodeNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := exported(t, tc.c, tc.req)
			require.Equal(t, tc.code, connect.CodeOf(err), "%v", err)
		})
	}
}

// amountText is minor units as the export writes them: 60000 → "600.00".
func amountText(minor int64) string { return fmt.Sprintf("%d.%02d", minor/100, minor%100) }

// minorOf reads an export's amount back ("" is none).
func minorOf(t *testing.T, s string) int64 {
	t.Helper()
	if s == "" {
		return 0
	}
	var whole, cents int64
	_, err := fmt.Sscanf(s, "%d.%02d", &whole, &cents)
	require.NoError(t, err, "amount %q", s)
	return whole*100 + cents
}

// TestExportOrganizationPeriod (issue 26 §7, decision 0460): a manager
// exports the orders of her organisation's shows that start in a period,
// show by show, soonest first, each row naming its show and when it
// starts; a show after the period, a draft and another organisation's
// show are not in it. Another organisation's manager and a buyer may not.
func TestExportOrganizationPeriod(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 2})
	env.Member(t, "period-org", "period-mgr", catalog.RoleManager)
	env.Member(t, "other-org", "other-mgr", catalog.RoleManager)
	start := time.Now().Add(10 * 24 * time.Hour).Truncate(time.Hour)
	show := func(org, title, titleBn string, startsIn time.Duration, draft bool) int64 {
		req := seatedShow(title, 1, 4)
		req.OrganizationId, req.TitleBn, req.Draft = org, titleBn, draft
		req.StartsAt = timestamppb.New(start.Add(startsIn))
		return createShow(t, env, req).GetShowId()
	}
	later := show("period-org", "Baul night", "বাউল রাত", 48*time.Hour, false)
	sooner := show("period-org", "Folk night", "লোকগানের রাত", 24*time.Hour, false)
	after := show("period-org", "After the period", "", 40*24*time.Hour, false)
	show("period-org", "A draft", "", 36*time.Hour, true)
	other := show("other-org", "Another's night", "", 24*time.Hour, false)
	var orders []string
	for i, s := range []int64{sooner, later, later, after, other} {
		b := newBuyer(t, env, fmt.Sprintf("period-fan-%d", i))
		o := b.orderWith(s, nil, fmt.Sprintf("A%d", i%4+1))
		orders = append(orders, o.GetOrderId())
		if i != 2 { // one of the later show's unpaid: no journal
			_, err := b.pay(o.GetOrderId(), "tok_success")
			require.NoError(t, err)
		}
	}
	req := &ledgerv1.ExportSalesRequest{OrganizationId: "period-org", Kind: ledgerv1.ExportKind_EXPORT_KIND_ORDERS, Language: "bn",
		PeriodStart: timestamppb.New(start), PeriodEnd: timestamppb.New(start.Add(7 * 24 * time.Hour))}
	name, rows, err := exported(t, as(t, env, "period-mgr", auth.RoleOperator), req)
	require.NoError(t, err)
	dhaka := time.FixedZone("BDT", 6*3600)
	require.Equal(t, "orders-period-org-"+start.In(dhaka).Format("20060102")+"-"+start.Add(7*24*time.Hour).In(dhaka).Format("20060102")+"-bn.csv",
		name, "the period's days in Bangladesh time")
	require.Equal(t, []string{"শো", "শো শুরু"}, rows[0][16:], "the show's columns")
	require.Len(t, rows, 4, "a header and the three orders of the two shows in the period")
	require.Equal(t, orders[0], rows[1][0], "the sooner show first")
	require.Equal(t, "লোকগানের রাত", rows[1][16], "its Bengali title")
	require.Equal(t, start.Add(24*time.Hour).In(dhaka).Format("2006-01-02 15:04"), rows[1][17],
		"when it starts, Bangladesh time")
	require.ElementsMatch(t, orders[1:3], []string{rows[2][0], rows[3][0]})
	require.Equal(t, "বাউল রাত", rows[2][16])

	// The organisation's ledger statement of the days the sales were posted
	// (decision 0464): the journals of all four of its sold shows, whenever
	// they start, none of another organisation's.
	now := time.Now()
	ledgerReq := &ledgerv1.ExportSalesRequest{OrganizationId: "period-org", Kind: ledgerv1.ExportKind_EXPORT_KIND_LEDGER,
		PeriodStart: timestamppb.New(now.Add(-time.Hour)), PeriodEnd: timestamppb.New(now.Add(time.Hour))}
	name, rows, err = exported(t, as(t, env, "period-mgr", auth.RoleOperator), ledgerReq)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(name, "ledger-period-org-"), name)
	shows := map[string]bool{}
	for _, r := range rows[1:] {
		shows[r[4]] = true
	}
	require.Equal(t, map[string]bool{fmt.Sprint(sooner): true, fmt.Sprint(later): true, fmt.Sprint(after): true}, shows,
		"its shows' journals, whenever they start; not another organisation's")
	// Its journals are the admin's whole statement's, less another's.
	_, all, err := exported(t, as(t, env, "period-admin", auth.RoleAdmin), &ledgerv1.ExportSalesRequest{
		Kind: ledgerv1.ExportKind_EXPORT_KIND_LEDGER, PeriodStart: ledgerReq.PeriodStart, PeriodEnd: ledgerReq.PeriodEnd})
	require.NoError(t, err)
	theirs := 0
	for _, r := range all[1:] {
		if r[4] == fmt.Sprint(other) {
			theirs++
		}
	}
	require.Positive(t, theirs)
	require.Len(t, rows, len(all)-theirs, "the organisation's lines are every line but another's")

	for _, c := range []clients{as(t, env, "other-mgr", auth.RoleOperator), as(t, env, "period-fan-0", auth.RoleUser)} {
		for _, r := range []*ledgerv1.ExportSalesRequest{req, ledgerReq} {
			_, _, err := exported(t, c, r)
			require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err), "%v", err)
		}
	}
	_, _, err = exported(t, as(t, env, "period-mgr", auth.RoleOperator), &ledgerv1.ExportSalesRequest{
		Kind: ledgerv1.ExportKind_EXPORT_KIND_ORDERS, PeriodStart: req.PeriodStart, PeriodEnd: req.PeriodEnd})
	require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err), "orders of a period name their organisation: %v", err)
}
