// Package ticket owns tickets: their ids, the signed codes of their QR
// codes, and check-in at the gate. A ticket is one seat, or one
// general-admission place, of a confirmed order. It is not a row of its own:
// its id names its order and its place in the order, so it leads to the
// show's shard and confirming a booking writes nothing more.
// The one write of a ticket is its check-in: a conditional insert on the
// shard, so a ticket is admitted once.
package ticket

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	eventsv1 "github.com/seatghor/seatghor/gen/seatghor/events/v1"
	"github.com/seatghor/seatghor/server/shard"
)

// Ticket is one seat or general-admission place of a confirmed order.
type Ticket struct {
	ID      string
	OrderID string
	ShowID  int64
	UserID  string
	// Position is the ticket's place in its order, from 1: the index in
	// the booking's seats (layout order), or the GA place number.
	Position int
	Seat     string
	GAArea   string
	// PriceMinor is this ticket's share of the order's total; Currency its
	// currency.
	PriceMinor int64
	Currency   string
	// Code is the signed payload of the ticket's QR code.
	Code     string
	IssuedAt time.Time
	// Passenger is who travels on the seat (bus trips, decision 0381);
	// zero when the order named none.
	Passenger Passenger `json:"passenger,omitzero"`
	// Journey is the stretch of a bus trip with stops the seat is for, with
	// its stops' and counters' names and times (decision 0384); nil on a
	// show without stops. A check-in's recorded answer leaves it out.
	Journey *commonv1.Journey `json:"-"`
}

// Passenger is who travels on a ticket's seat. Phone is in E.164; the
// gate's answer leaves it out (decision 0381).
type Passenger struct {
	Name  string `json:"name,omitempty"`
	Phone string `json:"phone,omitempty"`
	Woman bool   `json:"woman,omitempty"`
}

// Place is the seat or the GA area of the ticket, as printed.
func (t Ticket) Place() string {
	if t.Seat != "" {
		return t.Seat
	}
	return t.GAArea
}

// ID returns the id of the ticket at position (from 1) of order orderID:
// "tkt_<show>_<the order id's random part>_<position, 3 digits>". It is the
// same every time, so every projector and the check-in agree on it without
// storing it, and it is as unguessable as the order id.
func ID(orderID string, position int) (string, error) {
	showID, err := shard.ShowOf(orderID)
	if err != nil {
		return "", err
	}
	parts := strings.Split(orderID, "_")
	return fmt.Sprintf("tkt_%d_%s_%03d", showID, parts[2], position), nil
}

// Parse returns the show, the order id and the position a ticket id names.
// Only the spelling ID writes is a ticket id (decision 0066): "…_001", not
// "…_0001", "…_+01" or "…_1", so one ticket is one string wherever it is
// stored or compared.
func Parse(ticketID string) (showID int64, orderID string, position int, err error) {
	parts := strings.Split(ticketID, "_")
	if len(parts) != 4 || parts[0] != "tkt" {
		return 0, "", 0, fmt.Errorf("ticket %q: %w", ticketID, shard.ErrBadID)
	}
	orderID = "ord_" + parts[1] + "_" + parts[2]
	if showID, err = shard.ShowOf(orderID); err != nil {
		return 0, "", 0, fmt.Errorf("ticket %q: %w", ticketID, shard.ErrBadID)
	}
	position, err = strconv.Atoi(parts[3])
	if err != nil || position < 1 || parts[3] != fmt.Sprintf("%03d", position) {
		return 0, "", 0, fmt.Errorf("ticket %q: %w", ticketID, shard.ErrBadID)
	}
	return showID, orderID, position, nil
}

// FromBooking returns the tickets of a confirmed booking, with their signed
// codes: one per seat in the booking's order, or one per GA place. A seat's
// ticket carries its seat's price; GA places (and bookings recorded before
// seat prices were in the event) share the total evenly, the first tickets
// carrying the remainder.
func FromBooking(ev *eventsv1.BookingConfirmed, codes *Codes) ([]Ticket, error) {
	n := len(ev.GetSeats())
	if n == 0 {
		n = int(ev.GetQuantity())
	}
	if n <= 0 {
		return nil, nil
	}
	total := ev.GetTotal().GetAmountMinor()
	passengers := map[string]Passenger{}
	for _, p := range ev.GetPassengers() {
		passengers[p.GetSeat()] = Passenger{Name: p.GetName(), Phone: p.GetPhone(), Woman: p.GetWoman()}
	}
	out := make([]Ticket, 0, n)
	for i := range n {
		id, err := ID(ev.GetOrderId(), i+1)
		if err != nil {
			return nil, err
		}
		t := Ticket{ID: id, OrderID: ev.GetOrderId(), ShowID: ev.GetShowId(), UserID: ev.GetUserId(),
			Position: i + 1, PriceMinor: total / int64(n), Currency: ev.GetTotal().GetCurrency(),
			IssuedAt: ev.GetOccurredAt().AsTime(), Journey: ev.GetJourney()}
		if int64(i) < total%int64(n) {
			t.PriceMinor++
		}
		if prices := ev.GetSeatPricesMinor(); len(prices) == n {
			t.PriceMinor = prices[i]
		}
		if len(ev.GetSeats()) > 0 {
			t.Seat = ev.GetSeats()[i]
			t.Passenger = passengers[t.Seat]
		} else {
			t.GAArea = ev.GetGaArea()
		}
		t.Code = codes.Sign(t.ID, t.Place())
		out = append(out, t)
	}
	return out, nil
}
