package seatghor

import (
	seatmapv1 "github.com/seatghor/seatghor/clients/go/seatghor/gen/seatghor/seatmap/v1"
)

// SeatStates decodes the availability of a seat map: seat id → state
// (available, held or booked) for the seats of its sections, as the
// TypeScript SDK's seatStates. A map read for one section (the request's
// section) has that section's seats.
//
// A map read with the layout's etag (GetSeatMapRequest.layout_etag) comes
// without sections (AvailabilityOnly): decode it with the sections you kept,
// SeatStatesOf.
func SeatStates(m *seatmapv1.GetSeatMapResponse) map[string]seatmapv1.SeatState {
	return SeatStatesOf(m.GetSections(), m)
}

// SeatStatesOf decodes m's availability over sections: the show's whole
// layout (GetSeatLayout's sections, or those of an earlier GetSeatMap), or
// the sections m came with. Availability is 2 bits a seat in layout order,
// four seats a byte, the first seat in the lowest bits; it covers
// AvailabilityCount seats from AvailabilityOffset, and seats outside it are
// left out.
func SeatStatesOf(sections []*seatmapv1.Section, m *seatmapv1.GetSeatMapResponse) map[string]seatmapv1.SeatState {
	seats := 0
	for _, s := range sections {
		for _, r := range s.GetRows() {
			seats += len(r.GetSeats())
		}
	}
	count := int(m.GetAvailabilityCount())
	// The whole layout is indexed from the show's first seat; the sections
	// a one-section map came with, from the first seat availability covers.
	offset := 0
	if seats == int(m.GetSeatCount()) {
		offset = int(m.GetAvailabilityOffset())
	}
	states := make(map[string]seatmapv1.SeatState, min(seats, count))
	i := 0
	for _, s := range sections {
		for _, r := range s.GetRows() {
			for _, seat := range r.GetSeats() {
				if j := i - offset; j >= 0 && j < count && j/4 < len(m.GetAvailability()) {
					states[seat] = seatmapv1.SeatState((m.GetAvailability()[j/4] >> (2 * (j % 4))) & 3)
				}
				i++
			}
		}
	}
	return states
}
