package booking_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/booking"
)

// packStates packs 2-bit seat states four a byte, the first in the low
// bits, as the seat map does.
func packStates(states ...byte) []byte {
	out := make([]byte, (len(states)+3)/4)
	for i, st := range states {
		out[i/4] |= st << (2 * (i % 4))
	}
	return out
}

// TestChannelViewApply (decision 0324): a channel's view laid over the
// public availability of six seats (0 and 1 allocated to the partner, so
// taken on the public map; 2 held, 3 sold, 4 and 5 free) and two GA areas.
func TestChannelViewApply(t *testing.T) {
	public := booking.MapAvailability{ShowID: 7, Version: 12, SeatCount: 6, LayoutETag: "abc",
		States:  packStates(2, 2, 1, 2, 0, 0),
		GAAreas: []booking.MapArea{{Name: "Field", Capacity: 40, Remaining: 30}, {Name: "Lawn", Capacity: 10, Remaining: 4}}}
	own := []booking.ChannelSeat{{Index: 0, State: booking.SeatAvailable}, {Index: 1, State: booking.SeatHeld}}
	for _, tc := range []struct {
		name   string
		view   booking.ChannelView
		states []byte
		ga     []int
	}{
		{"the public", booking.ChannelView{GeneralSale: true}, packStates(2, 2, 1, 2, 0, 0), []int{30, 4}},
		{"a partner without an allocation", booking.ChannelView{PartnerID: 3, GeneralSale: true},
			packStates(2, 2, 1, 2, 0, 0), []int{30, 4}},
		{"general sale closed: the rest is taken", booking.ChannelView{PartnerID: 3, Seats: own, Areas: []int{10, 0}},
			packStates(0, 1, 2, 2, 2, 2), []int{10, 0}},
		{"general sale open: both", booking.ChannelView{PartnerID: 3, GeneralSale: true, Seats: own, Areas: []int{10, 0}},
			packStates(0, 1, 1, 2, 0, 0), []int{40, 4}},
		{"a quota only, general sale closed", booking.ChannelView{PartnerID: 3, Areas: []int{0, 2}},
			packStates(2, 2, 2, 2, 2, 2), []int{0, 2}},
		{"a seat past the public layout is left out", booking.ChannelView{PartnerID: 3, GeneralSale: true,
			Seats: []booking.ChannelSeat{{Index: 6, State: booking.SeatAvailable}}}, packStates(2, 2, 1, 2, 0, 0), []int{30, 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := append([]byte(nil), public.States...)
			got := tc.view.Apply(public)
			require.Equal(t, tc.states, got.States)
			require.Len(t, got.GAAreas, len(tc.ga))
			for i, g := range got.GAAreas {
				require.Equal(t, tc.ga[i], g.Remaining, g.Name)
				require.Equal(t, public.GAAreas[i].Capacity, g.Capacity, "a view changes no capacity")
			}
			require.Equal(t, public.Version, got.Version)
			require.Equal(t, public.LayoutETag, got.LayoutETag)
			require.Equal(t, before, public.States, "the public availability is not changed")
			require.Equal(t, 30, public.GAAreas[0].Remaining, "nor its GA areas")
		})
	}
}
