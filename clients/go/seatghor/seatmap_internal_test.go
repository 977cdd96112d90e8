package seatghor

import (
	"maps"
	"testing"

	seatmapv1 "github.com/seatghor/seatghor/clients/go/seatghor/gen/seatghor/seatmap/v1"
)

// TestSeatStates decodes availability as the server packs it: the whole
// map, one section's map with its own sections, and an availability-only
// map over the layout kept from before.
func TestSeatStates(t *testing.T) {
	const (
		free   = seatmapv1.SeatState_SEAT_STATE_AVAILABLE_UNSPECIFIED
		held   = seatmapv1.SeatState_SEAT_STATE_HELD
		booked = seatmapv1.SeatState_SEAT_STATE_BOOKED
	)
	stalls := &seatmapv1.Section{Name: "Stalls", Rows: []*seatmapv1.Row{{Label: "A", Seats: []string{"A1", "A2", "A3"}}}}
	balcony := &seatmapv1.Section{Name: "Balcony", Rows: []*seatmapv1.Row{{Label: "B", Seats: []string{"B1", "B2"}}}}
	layout := []*seatmapv1.Section{stalls, balcony}
	// A1 free, A2 held, A3 booked, B1 booked, B2 held: 2 bits a seat, the
	// first seat in the lowest bits.
	whole := &seatmapv1.GetSeatMapResponse{Sections: layout, SeatCount: 5, AvailabilityCount: 5,
		Availability: []byte{0b10_10_01_00, 0b01}}
	want := map[string]seatmapv1.SeatState{"A1": free, "A2": held, "A3": booked, "B1": booked, "B2": held}
	if got := SeatStates(whole); !maps.Equal(got, want) {
		t.Errorf("whole map: %v, want %v", got, want)
	}

	// The balcony alone: its seats from index 3, and the map lists only it.
	section := &seatmapv1.GetSeatMapResponse{Sections: []*seatmapv1.Section{balcony}, SeatCount: 5,
		AvailabilityOffset: 3, AvailabilityCount: 2, Availability: []byte{0b01_10}}
	wantBalcony := map[string]seatmapv1.SeatState{"B1": booked, "B2": held}
	if got := SeatStates(section); !maps.Equal(got, wantBalcony) {
		t.Errorf("one section: %v, want %v", got, wantBalcony)
	}

	// Availability only (the layout's etag matched): no sections in the map.
	only := &seatmapv1.GetSeatMapResponse{SeatCount: 5, AvailabilityOffset: 3, AvailabilityCount: 2,
		Availability: []byte{0b01_10}, AvailabilityOnly: true}
	if got := SeatStates(only); len(got) != 0 {
		t.Errorf("no sections, no seats: %v", got)
	}
	if got := SeatStatesOf(layout, only); !maps.Equal(got, wantBalcony) {
		t.Errorf("over the kept layout: %v, want %v", got, wantBalcony)
	}
}
