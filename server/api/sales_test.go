package api_test

import (
	"context"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	ledgerv1 "github.com/seatghor/seatghor/gen/seatghor/ledger/v1"
	paymentv1 "github.com/seatghor/seatghor/gen/seatghor/payment/v1"
	ticketsv1 "github.com/seatghor/seatghor/gen/seatghor/tickets/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/catalog"
)

// TestShowSalesAddUp (issue 26 §4, decision 0447): a show's sales as the
// console's dashboard reads them agree with what was sold. Two buyers pay
// (three seats), a third holds a seat unpaid, the second cancels and is
// refunded: the section shows two seats sold and one held; the web
// channel one confirmed order of its amount; the ledger's sales are both
// orders, its refunds the second's refund, and commission and the
// operator's share add up to sales less refunds; the timeline's bars hold
// both sales. Only the show's managers and admins read it.
func TestShowSalesAddUp(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 2})
	ctx := context.Background()
	env.Member(t, "sales-org", "sales-mgr", catalog.RoleManager)
	env.Member(t, "sales-org", "sales-gate", catalog.RoleGate)
	env.Member(t, "other-org", "other-mgr", catalog.RoleManager)
	req := seatedShow("Sales", 1, 10)
	req.OrganizationId = "sales-org"
	req.CommissionBps = proto.Int32(500)
	show := createShow(t, env, req).GetShowId()

	first, second := newBuyer(t, env, "first"), newBuyer(t, env, "second")
	o1 := first.order(show, "A1", "A2")
	_, err := first.pay(o1.GetOrderId(), "tok_success")
	require.NoError(t, err)
	o2 := second.order(show, "A3")
	p2, err := second.pay(o2.GetOrderId(), "tok_success")
	require.NoError(t, err)
	require.Equal(t, paymentv1.PaymentState_PAYMENT_STATE_SUCCEEDED, p2.GetStatus())
	_, err = newBuyer(t, env, "third").holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"A4"}}))
	require.NoError(t, err)
	_, err = second.orders.CancelOrder(ctx, connect.NewRequest(&bookingv1.CancelOrderRequest{OrderId: o2.GetOrderId()}))
	require.NoError(t, err)

	mgr := as(t, env, "sales-mgr", auth.RoleOperator)
	read := func() *ledgerv1.GetShowSalesResponse {
		t.Helper()
		resp, err := mgr.ledger.GetShowSales(ctx, connect.NewRequest(&ledgerv1.GetShowSalesRequest{ShowId: show,
			Bucket: durationpb.New(time.Minute)}))
		require.NoError(t, err)
		return resp.Msg
	}
	var s *ledgerv1.GetShowSalesResponse
	require.Eventually(t, func() bool { s = read(); return s.GetMoney().GetRefundsMinor() > 0 }, 10*time.Second, 50*time.Millisecond,
		"the refund reaches the ledger")
	require.Equal(t, "BDT", s.GetCurrency())
	require.Len(t, s.GetSections(), 1)
	sec := s.GetSections()[0]
	require.Equal(t, "Main", sec.GetSection())
	require.EqualValues(t, 10, sec.GetPlaces())
	require.EqualValues(t, 2, sec.GetSold())
	require.EqualValues(t, 1, sec.GetHeld())
	require.Len(t, s.GetChannels(), 1)
	require.Equal(t, ticketsv1.SalesChannel_SALES_CHANNEL_WEB, s.GetChannels()[0].GetChannel())
	require.EqualValues(t, 1, s.GetChannels()[0].GetOrders())
	require.Equal(t, o1.GetTotal().GetAmountMinor(), s.GetChannels()[0].GetAmountMinor())

	m := s.GetMoney()
	require.Equal(t, o1.GetTotal().GetAmountMinor()+o2.GetTotal().GetAmountMinor(), m.GetSalesMinor())
	require.LessOrEqual(t, m.GetRefundsMinor(), o2.GetTotal().GetAmountMinor())
	require.Equal(t, m.GetSalesMinor()-m.GetRefundsMinor(), m.GetCommissionMinor()+m.GetOperatorMinor(), "the split adds up")
	require.Positive(t, m.GetCommissionMinor())
	var orders int32
	var amount int64
	for _, b := range s.GetTimeline() {
		orders += b.GetOrders()
		amount += b.GetAmountMinor()
		require.Zero(t, b.GetStart().AsTime().Unix()%60, "bars start on the minute")
	}
	require.EqualValues(t, 2, orders)
	require.Equal(t, m.GetSalesMinor(), amount)

	for name, c := range map[string]clients{
		"gate staff":           as(t, env, "sales-gate", auth.RoleOperator),
		"another organisation": as(t, env, "other-mgr", auth.RoleOperator),
		"a buyer of the show":  first.clients,
	} {
		_, err := c.ledger.GetShowSales(ctx, connect.NewRequest(&ledgerv1.GetShowSalesRequest{ShowId: show}))
		require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err), "%s: %v", name, err)
	}
	admin := as(t, env, "admin", auth.RoleAdmin)
	_, err = admin.ledger.GetShowSales(ctx, connect.NewRequest(&ledgerv1.GetShowSalesRequest{ShowId: show}))
	require.NoError(t, err)
	_, err = admin.ledger.GetShowSales(ctx, connect.NewRequest(&ledgerv1.GetShowSalesRequest{ShowId: show + 1000}))
	require.Equal(t, connect.CodeNotFound, connect.CodeOf(err), "%v", err)
	_, err = admin.ledger.GetShowSales(ctx, connect.NewRequest(&ledgerv1.GetShowSalesRequest{ShowId: show, Bucket: durationpb.New(time.Second)}))
	require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err), "%v", err)

	// The organisation's sales (decision 0451): this show and a
	// general-admission one of the organisation (two shards, each asked
	// once for its shows), each as its own report says, and their totals;
	// another organisation's show is not in it.
	ga := seatedShow("Sales, open air", 0, 0)
	ga.Sections, ga.GaAreas = nil, []*catalogv1.GaArea{{Name: "Floor", Capacity: 30, PriceMinor: 50000, Buckets: 2}}
	ga.OrganizationId = "sales-org"
	gaShow := createShow(t, env, ga).GetShowId()
	fan := newBuyer(t, env, "fan")
	gaHold, err := fan.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: gaShow, Quantity: proto.Int32(3)}))
	require.NoError(t, err)
	gaOrder, err := fan.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: gaHold.Msg.GetHold().GetHoldId()}))
	require.NoError(t, err)
	_, err = fan.pay(gaOrder.Msg.GetOrder().GetOrderId(), "tok_success")
	require.NoError(t, err)
	elsewhere := seatedShow("Sales, elsewhere", 1, 4)
	elsewhere.OrganizationId = "other-org"
	createShow(t, env, elsewhere)

	org, err := mgr.ledger.GetOrganizationSales(ctx, connect.NewRequest(&ledgerv1.GetOrganizationSalesRequest{OrganizationId: "sales-org"}))
	require.NoError(t, err)
	lines := map[int64]*ledgerv1.ShowSalesLine{}
	for _, l := range org.Msg.GetShows() {
		lines[l.GetShowId()] = l
	}
	require.Len(t, lines, 2, "the organisation's two shows, not the other's")
	seated := lines[show]
	require.Equal(t, "Sales", seated.GetTitle())
	require.EqualValues(t, 10, seated.GetPlaces())
	require.EqualValues(t, 2, seated.GetSold())
	require.EqualValues(t, 1, seated.GetHeld())
	require.True(t, proto.Equal(read().GetMoney(), seated.GetMoney()), "the show's money as its own report says")
	open := lines[gaShow]
	require.EqualValues(t, 30, open.GetPlaces())
	require.EqualValues(t, 3, open.GetSold())
	require.EqualValues(t, 0, open.GetHeld())
	require.Equal(t, gaOrder.Msg.GetOrder().GetTotal().GetAmountMinor(), open.GetMoney().GetSalesMinor())
	total := org.Msg.GetTotal()
	require.EqualValues(t, 40, total.GetPlaces())
	require.EqualValues(t, 5, total.GetSold())
	require.Equal(t, seated.GetMoney().GetSalesMinor()+open.GetMoney().GetSalesMinor(), total.GetMoney().GetSalesMinor())
	require.Equal(t, seated.GetMoney().GetOperatorMinor()+open.GetMoney().GetOperatorMinor(), total.GetMoney().GetOperatorMinor())
	for name, c := range map[string]clients{
		"gate staff":           as(t, env, "sales-gate", auth.RoleOperator),
		"another organisation": as(t, env, "other-mgr", auth.RoleOperator),
		"a buyer":              first.clients,
	} {
		_, err := c.ledger.GetOrganizationSales(ctx, connect.NewRequest(&ledgerv1.GetOrganizationSalesRequest{OrganizationId: "sales-org"}))
		require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err), "%s: %v", name, err)
	}
}
