package seatmap_test

import (
	"context"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/clock"
)

// eventsOfType is seatghor_projector_events_by_type_total for the seat-map
// projector and event type typ.
func eventsOfType(t *testing.T, env *apptest.Env, typ string) float64 {
	families, err := env.App.Registry.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != "seatghor_projector_events_by_type_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			if l["projector"] == "seatmap" && l["type"] == typ {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// TestHoldExpiryShareIsCounted: the projectors count the events they apply
// by type, so the share of holds that expire is HoldExpired over
// SeatsHeld: 3 holds, 2 of them run out and are swept.
func TestHoldExpiryShareIsCounted(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(time.Now())
	env, _ := newEnv(t, true, clk)
	show := createShow(t, env, "expiry share", 2, 4, 10)
	ctx := context.Background()
	c := as(t, env, "rumana", auth.RoleUser)
	_, err := c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"A1", "B4"}}))
	require.NoError(t, err)
	_, err = c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, GaArea: "Floor", Quantity: new(int32(3))}))
	require.NoError(t, err)
	clk.Advance(11 * time.Minute)
	n, err := env.App.Booking.Sweep(ctx, 100)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	_, err = c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"A2"}}))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		return eventsOfType(t, env, "seatghor.events.v1.SeatsHeld") == 3 &&
			eventsOfType(t, env, "seatghor.events.v1.HoldExpired") == 2
	}, 20*time.Second, 10*time.Millisecond, "held %v, expired %v",
		eventsOfType(t, env, "seatghor.events.v1.SeatsHeld"), eventsOfType(t, env, "seatghor.events.v1.HoldExpired"))
}
