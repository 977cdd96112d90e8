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
	seatmapv1 "github.com/seatghor/seatghor/gen/seatghor/seatmap/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/clock"
)

// outboxTypes returns the event types in a show's outbox, in commit order.
func outboxTypes(t *testing.T, env *apptest.Env, showID int64) []string {
	t.Helper()
	ctx := context.Background()
	pool, err := env.App.Router.ForShow(ctx, showID)
	require.NoError(t, err)
	rows, err := pool.Query(ctx, `SELECT event_type FROM outbox WHERE show_id = $1 ORDER BY xid, id`, showID)
	require.NoError(t, err)
	defer rows.Close()
	var types []string
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		types = append(types, s[len("seatghor.events.v1."):])
	}
	require.NoError(t, rows.Err())
	return types
}

// TestLifecycle: release, order, cancel, expiry and the sweeper, with the
// event each writes to the outbox in the same transaction, and who
// may read what.
func TestLifecycle(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewFake(time.Now().UTC().Truncate(time.Second))
	env := apptest.New(t, apptest.Options{Clock: clk})
	req := seatedShow("lifecycle", 2, 5)
	req.GaAreas = []*catalogv1.GaArea{{Name: "Floor", Capacity: 20, PriceMinor: 40000, Buckets: 4}}
	req.HoldTtl = durationpb.New(5 * time.Minute)
	operatorReq := proto.CloneOf(req)
	env.Member(t, "op-1-lines", "op-1", catalog.RoleManager)
	operatorReq.OrganizationId = "op-1-lines"
	opShow, err := as(t, env, "op-1", auth.RoleOperator).catalog.CreateShow(ctx, connect.NewRequest(operatorReq))
	require.NoError(t, err)
	id := opShow.Msg.GetShow().GetShowId()

	rumana := as(t, env, "rumana", auth.RoleUser)
	karim := as(t, env, "karim", auth.RoleUser)
	hold := func(c clients, r *bookingv1.CreateHoldRequest) *bookingv1.Hold {
		resp, err := c.holds.CreateHold(ctx, connect.NewRequest(r))
		require.NoError(t, err)
		return resp.Msg.GetHold()
	}
	seats := func() []string {
		m, err := rumana.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: id}))
		require.NoError(t, err)
		return freeSeats(m.Msg)
	}

	// Release gives seats back at once.
	h1 := hold(rumana, &bookingv1.CreateHoldRequest{ShowId: id, Seats: []string{"A1", "A2"}})
	_, err = karim.holds.ReleaseHold(ctx, connect.NewRequest(&bookingv1.ReleaseHoldRequest{HoldId: h1.GetHoldId()}))
	require.Equal(t, connect.CodeNotFound, connect.CodeOf(err), "only the owner releases")
	rel, err := rumana.holds.ReleaseHold(ctx, connect.NewRequest(&bookingv1.ReleaseHoldRequest{HoldId: h1.GetHoldId()}))
	require.NoError(t, err)
	require.Equal(t, bookingv1.HoldStatus_HOLD_STATUS_RELEASED, rel.Msg.GetHold().GetStatus())
	require.Len(t, seats(), 10)
	_, err = rumana.holds.ReleaseHold(ctx, connect.NewRequest(&bookingv1.ReleaseHoldRequest{HoldId: h1.GetHoldId()}))
	require.Equal(t, connect.CodeFailedPrecondition, connect.CodeOf(err))

	// Order, then cancel: seats and GA places come back.
	h2 := hold(rumana, &bookingv1.CreateHoldRequest{ShowId: id, Seats: []string{"B1"}})
	g1 := hold(rumana, &bookingv1.CreateHoldRequest{ShowId: id, Quantity: proto.Int32(3)})
	require.Equal(t, "Floor", g1.GetGaArea())
	require.EqualValues(t, 120000, g1.GetAmount().GetAmountMinor())
	o2, err := rumana.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: h2.GetHoldId()}))
	require.NoError(t, err)
	_, err = rumana.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: h2.GetHoldId()}))
	require.Equal(t, connect.CodeFailedPrecondition, connect.CodeOf(err), "one order per hold")
	og, err := rumana.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: g1.GetHoldId()}))
	require.NoError(t, err)
	require.Equal(t, "Floor", og.Msg.GetOrder().GetLines()[0].GetGaArea())
	_, err = rumana.holds.ReleaseHold(ctx, connect.NewRequest(&bookingv1.ReleaseHoldRequest{HoldId: h2.GetHoldId()}))
	require.Equal(t, connect.CodeFailedPrecondition, connect.CodeOf(err), "an ordered hold is cancelled through its order")
	cancelled, err := rumana.orders.CancelOrder(ctx, connect.NewRequest(&bookingv1.CancelOrderRequest{OrderId: og.Msg.GetOrder().GetOrderId()}))
	require.NoError(t, err)
	require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_CANCELLED, cancelled.Msg.GetOrder().GetStatus())
	m, err := rumana.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: id}))
	require.NoError(t, err)
	require.EqualValues(t, 20, m.Msg.GetGaAreas()[0].GetRemaining(), "cancelled GA places are back")

	// Owner-only reads; the show's operator and admins see everything of it.
	oid := o2.Msg.GetOrder().GetOrderId()
	for who, c := range map[string]clients{
		"owner":    rumana,
		"operator": as(t, env, "op-1", auth.RoleOperator),
		"admin":    as(t, env, "root", auth.RoleAdmin),
	} {
		_, err := c.orders.GetOrder(ctx, connect.NewRequest(&bookingv1.GetOrderRequest{OrderId: oid}))
		require.NoError(t, err, who)
	}
	for who, c := range map[string]clients{
		"other user":     karim,
		"other operator": as(t, env, "op-2", auth.RoleOperator),
	} {
		_, err := c.orders.GetOrder(ctx, connect.NewRequest(&bookingv1.GetOrderRequest{OrderId: oid}))
		require.Equal(t, connect.CodeNotFound, connect.CodeOf(err), who)
		_, err = c.holds.GetHold(ctx, connect.NewRequest(&bookingv1.GetHoldRequest{HoldId: h2.GetHoldId()}))
		require.Equal(t, connect.CodeNotFound, connect.CodeOf(err), who)
	}
	_, err = rumana.orders.GetOrder(ctx, connect.NewRequest(&bookingv1.GetOrderRequest{OrderId: "ord_1_not-an-id"}))
	require.Equal(t, connect.CodeNotFound, connect.CodeOf(err))

	list, err := rumana.orders.ListMyOrders(ctx, connect.NewRequest(&bookingv1.ListMyOrdersRequest{PageSize: 1}))
	require.NoError(t, err)
	require.Len(t, list.Msg.GetOrders(), 1)
	require.NotEmpty(t, list.Msg.GetNextPageToken())
	next, err := rumana.orders.ListMyOrders(ctx, connect.NewRequest(&bookingv1.ListMyOrdersRequest{PageSize: 1, PageToken: list.Msg.GetNextPageToken()}))
	require.NoError(t, err)
	require.Len(t, next.Msg.GetOrders(), 1)
	require.NotEqual(t, list.Msg.GetOrders()[0].GetOrderId(), next.Msg.GetOrders()[0].GetOrderId())

	// Expiry: after the TTL the sweeper ends the ordered hold and its order.
	clk.Advance(6 * time.Minute)
	n, err := env.App.Booking.Sweep(ctx, 100)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	got, err := rumana.orders.GetOrder(ctx, connect.NewRequest(&bookingv1.GetOrderRequest{OrderId: oid}))
	require.NoError(t, err)
	require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_EXPIRED, got.Msg.GetOrder().GetStatus())
	require.Len(t, seats(), 10)
	n, err = env.App.Booking.Sweep(ctx, 100)
	require.NoError(t, err)
	require.Zero(t, n, "a second sweep finds nothing")

	// A refused hold writes nothing, not even an event.
	hold(rumana, &bookingv1.CreateHoldRequest{ShowId: id, Seats: []string{"A5"}})
	_, err = karim.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: id, Seats: []string{"A4", "A5"}}))
	unavailable(t, err)

	require.Equal(t, []string{
		"SeatsHeld", "HoldReleased", // h1
		"SeatsHeld", "SeatsHeld", // h2, g1
		"OrderCreated", "OrderCreated", // o2, og
		"HoldReleased", "OrderCancelled", // og cancelled
		"HoldExpired", "OrderExpired", // h2 swept
		"SeatsHeld", // A5
	}, outboxTypes(t, env, id))

	// Every outbox row carries its transaction id; the events of one
	// transaction share it.
	pool, err := env.App.Router.ForShow(ctx, id)
	require.NoError(t, err)
	var txns, rows int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(DISTINCT xid), count(*) FROM outbox WHERE show_id = $1`, id).Scan(&txns, &rows))
	require.Equal(t, 11, rows)
	require.Equal(t, 9, txns, "cancel and expiry each wrote two events in one transaction")
}
