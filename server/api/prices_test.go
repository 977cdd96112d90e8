package api_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/proto"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	paymentv1 "github.com/seatghor/seatghor/gen/seatghor/payment/v1"
	seatmapv1 "github.com/seatghor/seatghor/gen/seatghor/seatmap/v1"
	ticketsv1 "github.com/seatghor/seatghor/gen/seatghor/tickets/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/amount"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/ledger"
)

// shardCount counts rows of a show's shard table that match where.
func shardCount(t *testing.T, env *apptest.Env, showID int64, sql string, args ...any) int {
	t.Helper()
	ctx := context.Background()
	pool, err := env.App.Router.ForShow(ctx, showID)
	require.NoError(t, err)
	var n int
	require.NoError(t, pool.QueryRow(ctx, sql, args...).Scan(&n))
	return n
}

// allJournals counts every ledger transaction on every shard.
func allJournals(t *testing.T, env *apptest.Env) int {
	t.Helper()
	posted, _, err := env.App.Ledger.ListJournal(context.Background(), ledger.Filter{PageSize: 100})
	require.NoError(t, err)
	return len(posted)
}

// holdAndOrder holds what req asks for and orders it.
func holdAndOrder(t *testing.T, c clients, req *bookingv1.CreateHoldRequest) (*bookingv1.Hold, *bookingv1.Order) {
	t.Helper()
	ctx := context.Background()
	h, err := c.holds.CreateHold(ctx, connect.NewRequest(req))
	require.NoError(t, err)
	o, err := c.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: h.Msg.GetHold().GetHoldId()}))
	require.NoError(t, err)
	return h.Msg.GetHold(), o.Msg.GetOrder()
}

// TestFreeShowConfirmsWithoutCharge: a free show (price 0, seats and GA)
// goes hold → order → CONFIRMED in one step, its tickets are issued from
// the outbox, and no payment, gateway charge or journal exists; cancelling
// it frees the seats with no refund and no journal (decision 0070).
func TestFreeShowConfirmsWithoutCharge(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Shards: 2, Projectors: true, Tickets: true,
		ProjectorMaxBackoff: 500 * time.Millisecond})
	req := seatedShow("Free concert in the park", 1, 4)
	req.Sections[0].PriceMinor = 0
	req.GaAreas = []*catalogv1.GaArea{{Name: "Lawn", Capacity: 50, PriceMinor: 0}}
	show := createShow(t, env, req)
	id := show.GetShowId()
	rumana := newBuyer(t, env, "rumana")
	mine := ticketsAs(t, env, "rumana", auth.RoleUser)

	h, seated := holdAndOrder(t, rumana.clients, &bookingv1.CreateHoldRequest{ShowId: id, Seats: []string{"A1", "A2"}})
	require.Zero(t, h.GetAmount().GetAmountMinor())
	require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_CONFIRMED, seated.GetStatus(), "a free order is confirmed at once")
	require.Zero(t, seated.GetTotal().GetAmountMinor())
	require.Empty(t, seated.GetPaymentId(), "no payment confirmed it")
	_, ga := holdAndOrder(t, rumana.clients, &bookingv1.CreateHoldRequest{ShowId: id, GaArea: "Lawn", Quantity: proto.Int32(3)})
	require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_CONFIRMED, ga.GetStatus())
	require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_CONFIRMED, rumana.getOrder(seated.GetOrderId()).GetStatus())

	// There is nothing to pay: the gateway is never asked.
	_, err := rumana.pay(seated.GetOrderId(), "tok_success")
	require.Equal(t, connect.CodeFailedPrecondition, connect.CodeOf(err), "%v", err)
	require.Empty(t, env.Gateway.Charges(), "no charge at the gateway")
	require.Zero(t, shardCount(t, env, id, `SELECT count(*) FROM payments WHERE show_id = $1`, id))
	require.Zero(t, allJournals(t, env), "no journal: no money moved")
	trialBalance(t, env)

	// seats booked, and BookingConfirmed in the outbox with the order.
	require.Equal(t, 2, shardCount(t, env, id, `SELECT count(*) FROM seats WHERE show_id = $1 AND status = 'booked'`, id))
	require.Equal(t, []string{
		"SeatsHeld", "OrderCreated", "BookingConfirmed",
		"SeatsHeld", "OrderCreated", "BookingConfirmed",
	}, outboxTypes(t, env, id))

	// The projectors issue the tickets: two seats and three places, free.
	list := myTickets(t, mine, allReady(5))
	for _, tk := range list {
		require.Equal(t, ticketsv1.TicketStatus_TICKET_STATUS_VALID, tk.GetStatus())
		require.Zero(t, tk.GetPrice().GetAmountMinor())
		require.NotEmpty(t, tk.GetCode())
	}

	// Cancelling frees the seats; no refund is sent and no journal posted.
	c, err := rumana.orders.CancelOrder(ctx, connect.NewRequest(&bookingv1.CancelOrderRequest{OrderId: seated.GetOrderId()}))
	require.NoError(t, err)
	require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_CANCELLED, c.Msg.GetOrder().GetStatus())
	require.Zero(t, c.Msg.GetOrder().GetCancellationFee().GetAmountMinor())
	m, err := rumana.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: id}))
	require.NoError(t, err)
	require.Equal(t, []string{"A1", "A2", "A3", "A4"}, freeSeats(m.Msg))
	require.Empty(t, env.Gateway.Refunds(), "no refund call")
	require.Empty(t, env.Gateway.Charges())
	require.Zero(t, shardCount(t, env, id, `SELECT count(*) FROM refunds WHERE show_id = $1`, id))
	require.Zero(t, allJournals(t, env))
	types := outboxTypes(t, env, id)
	require.Equal(t, "OrderCancelled", types[len(types)-1])
	myTickets(t, mine, func(ts []*ticketsv1.Ticket) bool {
		cancelled := 0
		for _, tk := range ts {
			if tk.GetStatus() == ticketsv1.TicketStatus_TICKET_STATUS_CANCELLED {
				cancelled++
			}
		}
		return len(ts) == 5 && cancelled == 2
	})
	// The freed seats sell again.
	_, again := holdAndOrder(t, newBuyer(t, env, "karim").clients, &bookingv1.CreateHoldRequest{ShowId: id, Seats: []string{"A1"}})
	require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_CONFIRMED, again.GetStatus())
}

// TestMixedShowFreeAndPaid: on a show with free and paid sections, a hold
// of free seats only is confirmed at once; a hold with a paid seat is paid
// through the gateway for its total and journaled as usual; cancelling
// either refunds exactly what was paid, less the fee.
func TestMixedShowFreeAndPaid(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Shards: 1})
	req := seatedShow("Family day", 1, 4)
	req.Sections = []*catalogv1.Section{
		{Name: "Children", Rows: []string{"A"}, SeatsPerRow: 4, PriceMinor: 0},
		{Name: "Main", Rows: []string{"B"}, SeatsPerRow: 4, PriceMinor: 85000},
	}
	req.GaAreas = []*catalogv1.GaArea{
		{Name: "Lawn", Capacity: 20, PriceMinor: 0},
		{Name: "Floor", Capacity: 20, PriceMinor: 40000},
	}
	show := createShow(t, env, req)
	id := show.GetShowId()
	b := newBuyer(t, env, "sumi")

	_, free := holdAndOrder(t, b.clients, &bookingv1.CreateHoldRequest{ShowId: id, Seats: []string{"A1"}})
	require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_CONFIRMED, free.GetStatus())
	_, lawn := holdAndOrder(t, b.clients, &bookingv1.CreateHoldRequest{ShowId: id, GaArea: "Lawn", Quantity: proto.Int32(2)})
	require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_CONFIRMED, lawn.GetStatus())

	_, mixed := holdAndOrder(t, b.clients, &bookingv1.CreateHoldRequest{ShowId: id, Seats: []string{"A2", "B1"}})
	require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_PENDING_PAYMENT, mixed.GetStatus())
	require.EqualValues(t, 85000, mixed.GetTotal().GetAmountMinor())
	prices := map[string]int64{}
	for _, l := range mixed.GetLines() {
		prices[l.GetSeat()] = l.GetAmount().GetAmountMinor()
	}
	require.Equal(t, map[string]int64{"A2": 0, "B1": 85000}, prices)
	p, err := b.pay(mixed.GetOrderId(), "tok_success")
	require.NoError(t, err)
	require.Equal(t, paymentv1.PaymentState_PAYMENT_STATE_SUCCEEDED, p.GetStatus())
	require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_CONFIRMED, b.getOrder(mixed.GetOrderId()).GetStatus())
	_, floor := holdAndOrder(t, b.clients, &bookingv1.CreateHoldRequest{ShowId: id, GaArea: "Floor", Quantity: proto.Int32(2)})
	require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_PENDING_PAYMENT, floor.GetStatus())
	require.EqualValues(t, 80000, floor.GetTotal().GetAmountMinor())

	charges := env.Gateway.Charges()
	require.Len(t, charges, 1, "only the paid order was charged")
	require.EqualValues(t, 85000, charges[0].AmountMinor)
	require.Equal(t, 1, journals(t, env, ledger.KindBooking, mixed.GetOrderId()))
	require.Zero(t, journals(t, env, ledger.KindBooking, free.GetOrderId()))
	require.Zero(t, journals(t, env, ledger.KindBooking, lawn.GetOrderId()))

	// Cancel the confirmed ones: the paid one is refunded its total less
	// 10 %, the free ones nothing.
	for _, o := range []*bookingv1.Order{free, mixed, lawn} {
		c, err := b.orders.CancelOrder(ctx, connect.NewRequest(&bookingv1.CancelOrderRequest{OrderId: o.GetOrderId()}))
		require.NoError(t, err)
		require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_CANCELLED, c.Msg.GetOrder().GetStatus())
	}
	settle(t, env)
	refunds := env.Gateway.Refunds()
	require.Len(t, refunds, 1)
	require.EqualValues(t, 85000-8500, refunds[0].AmountMinor)
	require.Equal(t, 4, shardCount(t, env, id,
		`SELECT count(*) FROM seats WHERE show_id = $1 AND status = 'available' AND section = 'Children'`, id))
	bal := trialBalance(t, env)
	require.EqualValues(t, -(8500 - 850), bal[ledger.AccountOperatorPayable], "the fee kept, split as the booking was")
	require.EqualValues(t, -850, bal[ledger.AccountPlatformRevenue])
}

// requireInvalidField asserts an invalid_argument error that names field,
// in its message or in a BadRequest field violation.
func requireInvalidField(t *testing.T, err error, field string) {
	t.Helper()
	var ce *connect.Error
	require.True(t, errors.As(err, &ce), "want a connect error, got %v", err)
	require.Equal(t, connect.CodeInvalidArgument, ce.Code(), "%v", err)
	if strings.Contains(ce.Message(), field) {
		return
	}
	for _, d := range ce.Details() {
		if v, derr := d.Value(); derr == nil {
			if br, ok := v.(*errdetails.BadRequest); ok {
				for _, fv := range br.GetFieldViolations() {
					if fv.GetField() == field {
						return
					}
				}
			}
		}
	}
	t.Fatalf("invalid_argument does not name %s: %v", field, err)
}

// TestExtremePricesRefused: prices outside 0 … 10,000,000 Tk and seat caps
// above 100 are refused as invalid_argument naming the field, through the
// API and through the catalog itself; at the bound, totals are exact
// (decision 0071).
func TestExtremePricesRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Shards: 1})
	admin := as(t, env, "admin", auth.RoleAdmin)

	for _, tc := range []struct {
		name  string
		edit  func(*catalogv1.CreateShowRequest)
		field string
	}{
		{"a seat price above the bound", func(r *catalogv1.CreateShowRequest) {
			r.Sections[0].PriceMinor = amount.MaxPriceMinor + 1
		}, "sections[0].price_minor"},
		{"a seat price that overflows three seats", func(r *catalogv1.CreateShowRequest) {
			r.Sections[0].PriceMinor = math.MaxInt64/3 + 1
		}, "sections[0].price_minor"},
		{"the largest price", func(r *catalogv1.CreateShowRequest) {
			r.Sections = append(r.Sections, &catalogv1.Section{Name: "Box", Rows: []string{"Z"}, SeatsPerRow: 1,
				PriceMinor: math.MaxInt64})
		}, "sections[1].price_minor"},
		{"a negative price", func(r *catalogv1.CreateShowRequest) { r.Sections[0].PriceMinor = -1 }, "sections[0].price_minor"},
		{"a GA price above the bound", func(r *catalogv1.CreateShowRequest) {
			r.GaAreas = []*catalogv1.GaArea{{Name: "Floor", Capacity: 10, PriceMinor: math.MaxInt64 / 2}}
		}, "ga_areas[0].price_minor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := seatedShow(tc.name, 1, 4)
			tc.edit(req)
			_, err := admin.catalog.CreateShow(ctx, connect.NewRequest(req))
			requireInvalidField(t, err, tc.field)
		})
	}

	// The catalog refuses them too, whoever calls it.
	for _, tc := range []struct {
		name  string
		edit  func(*catalog.Show)
		field string
	}{
		{"seat price", func(s *catalog.Show) { s.Sections[0].PriceMinor = 1 << 62 }, "sections[0].price_minor"},
		{"negative seat price", func(s *catalog.Show) { s.Sections[0].PriceMinor = -5 }, "sections[0].price_minor"},
		{"GA price", func(s *catalog.Show) {
			s.GAAreas = []catalog.GAArea{{Name: "Floor", Capacity: 10, PriceMinor: amount.MaxPriceMinor + 1}}
		}, "ga_areas[0].price_minor"},
		{"seats per hold", func(s *catalog.Show) { s.MaxSeatsPerHold = 1000 }, "max_seats_per_hold"},
		{"seats per account", func(s *catalog.Show) { s.MaxSeatsPerAccount = 1 << 20 }, "max_seats_per_account"},
	} {
		t.Run("catalog "+tc.name, func(t *testing.T) {
			s := catalog.Show{Kind: catalogv1.ShowKind_SHOW_KIND_CONCERT, Title: tc.name, Venue: "Hall",
				StartsAt: time.Now().Add(24 * time.Hour), Currency: "BDT",
				Sections: []catalog.Section{{Name: "Main", Rows: []string{"A"}, SeatsPerRow: 4, PriceMinor: 85000}}}
			tc.edit(&s)
			_, err := env.App.Catalog.CreateShow(ctx, "admin", catalog.NewShow{Show: s, Admin: true})
			var ie *fault.Error
			require.ErrorAs(t, err, &ie)
			require.Equal(t, fault.ShowInvalid, ie.Reason)
			require.Equal(t, tc.field, ie.Field)
		})
	}

	// At the bound a full hold's total is exact, and it is paid as such.
	req := seatedShow("The dearest seats", 1, 10)
	req.Sections[0].PriceMinor = amount.MaxPriceMinor
	req.GaAreas = []*catalogv1.GaArea{{Name: "Floor", Capacity: 100, PriceMinor: amount.MaxPriceMinor}}
	req.MaxSeatsPerHold, req.MaxSeatsPerAccount = 100, 100
	show := createShow(t, env, req)
	b := newBuyer(t, env, "rich")
	seats := []string{"A1", "A2", "A3", "A4", "A5", "A6", "A7", "A8", "A9", "A10"}
	_, o := holdAndOrder(t, b.clients, &bookingv1.CreateHoldRequest{ShowId: show.GetShowId(), Seats: seats})
	require.EqualValues(t, 10*amount.MaxPriceMinor, o.GetTotal().GetAmountMinor())
	_, g := holdAndOrder(t, b.clients, &bookingv1.CreateHoldRequest{ShowId: show.GetShowId(), Quantity: proto.Int32(90)})
	require.EqualValues(t, 90*amount.MaxPriceMinor, g.GetTotal().GetAmountMinor())
}
