package api_test

import (
	"context"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	seatmapv1 "github.com/seatghor/seatghor/gen/seatghor/seatmap/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/clock"
)

// TestTimeline replays the worked timeline of up to the payment steps,
// with an injected clock: holds last 10 minutes.
func TestTimeline(t *testing.T) {
	ctx := context.Background()
	tenAM := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	clk := clock.NewFake(tenAM.Add(-time.Hour))
	env := apptest.New(t, apptest.Options{Clock: clk})
	at := func(hhmm string) {
		d, err := time.Parse("15:04", hhmm)
		require.NoError(t, err)
		clk.Set(tenAM.Add(time.Duration(d.Hour()-10)*time.Hour + time.Duration(d.Minute())*time.Minute))
	}
	req := seatedShow("Dhaka to Cox's Bazar", 1, 4) // A1..A4, all free
	req.OnSaleAt = timestamppb.New(tenAM.Add(-30 * time.Minute))
	req.StartsAt = timestamppb.New(tenAM.Add(24 * time.Hour))
	show := createShow(t, env, req)
	ga := proto.CloneOf(req)
	ga.Title, ga.Sections = "Rooftop", nil
	ga.GaAreas = []*catalogv1.GaArea{{Name: "General", Capacity: 3, PriceMinor: 150000}}
	gaShow := createShow(t, env, ga)
	id := show.GetShowId()

	rumana := as(t, env, "rumana", auth.RoleUser)
	karim := as(t, env, "karim", auth.RoleUser)
	sumi := as(t, env, "sumi", auth.RoleUser)
	hold := func(c clients, seats ...string) (*bookingv1.Hold, error) {
		resp, err := c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: id, Seats: seats}))
		if err != nil {
			return nil, err
		}
		return resp.Msg.GetHold(), nil
	}

	at("10:00") // Rumana holds A1, A2.
	h1, err := hold(rumana, "A1", "A2")
	require.NoError(t, err)
	require.Equal(t, tenAM.Add(10*time.Minute), h1.GetExpiresAt().AsTime())
	require.EqualValues(t, 170000, h1.GetAmount().GetAmountMinor())

	at("10:03") // Karim asks for A2, A3 together: nothing (all or nothing).
	_, err = hold(karim, "A2", "A3")
	require.Equal(t, []string{"A2"}, unavailable(t, err).GetSeats())
	m, err := karim.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: id}))
	require.NoError(t, err)
	require.Equal(t, []string{"A3", "A4"}, freeSeats(m.Msg), "A3 must still be free after the refusal")

	h2, err := hold(karim, "A3", "A4") // 10:03 Karim takes A3, A4 instead.
	require.NoError(t, err)

	// 10:08 Rumana orders (her payment is issue "Payments"); the order is made
	// from her own unexpired hold only.
	at("10:08")
	o1, err := rumana.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: h1.GetHoldId()}))
	require.NoError(t, err)
	require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_PENDING_PAYMENT, o1.Msg.GetOrder().GetStatus())
	_, err = karim.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: h1.GetHoldId()}))
	require.Equal(t, connect.CodeNotFound, connect.CodeOf(err), "someone else's hold is not found")

	// 10:15 Karim's hold has expired: 0 rows, no order.
	at("10:15")
	_, err = karim.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: h2.GetHoldId()}))
	require.Equal(t, connect.CodeFailedPrecondition, connect.CodeOf(err), "expired hold: %v", err)
	got, err := karim.holds.GetHold(ctx, connect.NewRequest(&bookingv1.GetHoldRequest{HoldId: h2.GetHoldId()}))
	require.NoError(t, err)
	require.Equal(t, bookingv1.HoldStatus_HOLD_STATUS_EXPIRED, got.Msg.GetHold().GetStatus())

	// 10:16 Sumi takes A4: the expired hold is reclaimed by the same WHERE,
	// with no sweeper having run.
	at("10:16")
	h3, err := hold(sumi, "A4")
	require.NoError(t, err)
	require.Equal(t, []string{"A4"}, h3.GetSeats())

	// Only now does the sweeper run: it ends Karim's hold and frees A3, but
	// leaves A4 (Sumi's now) and Rumana's ordered seats alone.
	n, err := env.App.Booking.Sweep(ctx, 100)
	require.NoError(t, err)
	// Rumana's ordered hold ran out at 10:10 too (without a payment).
	require.Equal(t, 2, n, "Karim's and Rumana's holds")
	m, err = sumi.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: id}))
	require.NoError(t, err)
	require.Equal(t, []string{"A1", "A2", "A3"}, freeSeats(m.Msg))
	ord, err := rumana.orders.GetOrder(ctx, connect.NewRequest(&bookingv1.GetOrderRequest{OrderId: o1.Msg.GetOrder().GetOrderId()}))
	require.NoError(t, err)
	require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_EXPIRED, ord.Msg.GetOrder().GetStatus())

	// General admission with 3 left: 2 succeeds, the next 2 fails.
	gaHold := func(c clients) error {
		_, err := c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{
			ShowId: gaShow.GetShowId(), Quantity: proto.Int32(2)}))
		return err
	}
	require.NoError(t, gaHold(rumana))
	su := unavailable(t, gaHold(karim))
	require.EqualValues(t, 1, su.GetRemaining())
	require.Equal(t, "General", su.GetGaArea())
	// Ten minutes later the first GA hold has run out; the next hold reclaims
	// its places without the sweeper.
	clk.Advance(11 * time.Minute)
	require.NoError(t, gaHold(karim))
}
