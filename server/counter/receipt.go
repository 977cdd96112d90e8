package counter

import (
	"context"
	"fmt"

	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/display"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/ticket"
)

// PrintFunc lays an order's tickets out for a counter's 80 mm printer
// (eticket.RenderReceipt): the show, the buyer's phone, the counter that
// sold it ("" for none) and the tickets, in lang.
type PrintFunc func(show catalog.Show, buyer, counter string, tickets []ticket.Ticket, lang display.Lang) ([]byte, error)

// Receipt is a confirmed order's tickets as a counter prints them, for
// counter staff and managers of the show's organisation and admins: the
// same tickets, numbers and signed codes as the e-tickets (the hold's
// seats in its order, ticket.FromBooking).
func (s *Service) Receipt(ctx context.Context, userID string, admin bool, orderID string, lang display.Lang) ([]byte, error) {
	if s.print == nil || s.codes == nil || s.shows == nil {
		return nil, fault.New(fault.NotServed, "counter tickets are not printed here")
	}
	o, err := s.sales.GetOrder(ctx, booking.Caller{Admin: true}, orderID)
	if err != nil {
		return nil, err
	}
	show, err := s.shows.GetShow(ctx, o.ShowID)
	if err != nil {
		return nil, err
	}
	if !admin {
		ok, err := s.members.HasRole(ctx, show.OrganizationID, userID, catalog.RoleCounter, catalog.RoleManager)
		if err != nil {
			return nil, err
		}
		if !ok || show.OrganizationID == "" {
			return nil, fault.New(fault.CounterForbidden, "order %s is not of a show of yours to print", orderID)
		}
	}
	if o.Status != booking.OrderConfirmed {
		return nil, fault.New(fault.BookingNotAllowed, "order %s is %s: only a confirmed order's tickets print", orderID, o.Status)
	}
	pool, err := s.shardOf(ctx, o.ShowID)
	if err != nil {
		return nil, err
	}
	// The manifest's line of the order has its hold's seats in the hold's
	// order, which numbers the tickets.
	m, err := booking.ListManifest(ctx, pool, o.ShowID, orderID)
	if err != nil {
		return nil, err
	}
	if len(m) != 1 {
		return nil, fmt.Errorf("order %s of show %d is confirmed but not in its manifest", orderID, o.ShowID)
	}
	tickets, err := ticket.FromBooking(booking.ConfirmedEvent(o, m[0]), s.codes)
	if err != nil {
		return nil, err
	}
	counter := ""
	if o.CounterShiftID != "" {
		if sale, found, err := entryOf(ctx, pool, orderID, Sale); err != nil {
			return nil, err
		} else if found {
			counter = show.Trip().CounterName(sale.CounterID, lang)
		}
	}
	return s.print(show, o.Contact.Phone, counter, tickets, lang)
}
