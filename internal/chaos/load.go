package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	paymentv1 "github.com/seatghor/seatghor/gen/seatghor/payment/v1"
	searchv1 "github.com/seatghor/seatghor/gen/seatghor/search/v1"
	seatmapv1 "github.com/seatghor/seatghor/gen/seatghor/seatmap/v1"
	ticketsv1 "github.com/seatghor/seatghor/gen/seatghor/tickets/v1"
)

// tokens are the sandbox tokens buyers pay with and how often (R-6.10's
// faults and the gateway's bugs; the sandbox adds its seeded timeouts,
// lost, duplicated, reordered and late webhooks on top).
var tokens = []struct {
	token  string
	weight int
}{
	{"tok_success", 58}, {"tok_webhook_only", 10}, {"tok_timeout_applied", 8}, {"tok_timeout_not_applied", 5},
	{"tok_decline", 7}, {"tok_insufficient_funds", 4}, {"tok_duplicate_capture", 4}, {"tok_wrong_amount", 4},
}

func pickToken(rnd *rand.Rand) string {
	total := 0
	for _, t := range tokens {
		total += t.weight
	}
	n := rnd.IntN(total)
	for _, t := range tokens {
		if n < t.weight {
			return t.token
		}
		n -= t.weight
	}
	return tokens[0].token
}

// buyer is one person of the crowd: a seated buyer (most), a general-
// admission buyer or a partner's customer holds 1 to 4 seats or places,
// then walks away, gives the hold back, or orders and pays; some of those
// who paid cancel, some go to the gate.
func (r *run) buyer(ctx context.Context, i int, rnd *rand.Rand) {
	user := fmt.Sprintf("chaos-%s-b%d", r.tag, i)
	kind := rnd.IntN(100)
	want := 1 + rnd.IntN(4)
	c, err := r.user(user, i)
	if err != nil {
		return
	}
	holder := c
	if kind < 10 {
		holder = r.partner.caller
	}
	var hold *bookingv1.Hold
	for try := 0; try < 3 && hold == nil && ctx.Err() == nil; try++ {
		var req *bookingv1.CreateHoldRequest
		switch {
		case kind < 10: // the partner's customer: its allocation, or general sale
			s := r.shows[0]
			free := r.freeSeats(ctx, holder, s.ID, s.Seats)
			if len(free) < want {
				continue
			}
			rnd.Shuffle(len(free), func(a, b int) { free[a], free[b] = free[b], free[a] })
			req = &bookingv1.CreateHoldRequest{ShowId: s.ID, Seats: free[:want]}
		case kind < 35: // general admission
			s := r.shows[len(r.shows)-1]
			req = &bookingv1.CreateHoldRequest{ShowId: s.ID, GaArea: s.GA, Quantity: proto.Int32(int32(want))}
		default:
			s := r.shows[rnd.IntN(len(r.shows))]
			free := r.freeSeats(ctx, holder, s.ID, s.Seats)
			if len(free) < want {
				continue
			}
			// Neighbours, as people choose: a run of free seats from a
			// random one, so buyers of one moment want the same seats.
			at := rnd.IntN(len(free) - want + 1)
			req = &bookingv1.CreateHoldRequest{ShowId: s.ID, Seats: slices.Clone(free[at : at+want])}
		}
		resp, err := call(ctx, r.rec, holder, "CreateHold", func(ctx context.Context, c clients) (*connect.Response[bookingv1.CreateHoldResponse], error) {
			return c.holds.CreateHold(ctx, connect.NewRequest(req))
		})
		if err == nil {
			hold = resp.Msg.GetHold()
		}
	}
	if hold == nil {
		r.mu.Lock()
		r.gaveUp++
		r.mu.Unlock()
		return
	}
	r.held(hold, holder, c)
	switch n := rnd.IntN(100); {
	case n < 10: // walks away: a ghost hold until its TTL (or the end)
		return
	case n < 18: // changes their mind
		_, _ = call(ctx, r.rec, holder, "ReleaseHold", func(ctx context.Context, c clients) (*connect.Response[bookingv1.ReleaseHoldResponse], error) {
			return c.holds.ReleaseHold(ctx, connect.NewRequest(&bookingv1.ReleaseHoldRequest{HoldId: hold.GetHoldId()}))
		})
		r.done(hold.GetHoldId())
		return
	}
	r.orderAndPay(ctx, holder, hold, rnd)
}

// payer is one of the payments' stream (Config.Payers): they hold places
// of the Terrace, which never runs out, and order and pay as a buyer
// does.
func (r *run) payer(ctx context.Context, i int, rnd *rand.Rand) {
	c, err := r.user(fmt.Sprintf("chaos-%s-p%d", r.tag, i), i)
	if err != nil {
		return
	}
	s := r.shows[len(r.shows)-1]
	req := &bookingv1.CreateHoldRequest{ShowId: s.ID, GaArea: s.Payers, Quantity: proto.Int32(int32(1 + rnd.IntN(4)))}
	resp, err := call(ctx, r.rec, c, "CreateHold", func(ctx context.Context, c clients) (*connect.Response[bookingv1.CreateHoldResponse], error) {
		return c.holds.CreateHold(ctx, connect.NewRequest(req))
	})
	if err != nil {
		return
	}
	r.held(resp.Msg.GetHold(), c, c)
	r.orderAndPay(ctx, c, resp.Msg.GetHold(), rnd)
}

// held notes a hold the caller got for a buyer (the partner's key holds
// for its customer c).
func (r *run) held(hold *bookingv1.Hold, holder, c *caller) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.holds[hold.GetHoldId()] = &heldBy{user: hold.GetUserId(), show: hold.GetShowId()}
	if holder != c {
		r.buyers[hold.GetUserId()] = holder
	}
}

// orderAndPay orders a hold and pays for it (a double tap now and then,
// another card after a failure half the time); some of those confirmed
// cancel, some go to the gate.
func (r *run) orderAndPay(ctx context.Context, holder *caller, hold *bookingv1.Hold, rnd *rand.Rand) {
	o, err := call(ctx, r.rec, holder, "CreateOrder", func(ctx context.Context, c clients) (*connect.Response[bookingv1.CreateOrderResponse], error) {
		return c.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: hold.GetHoldId()}))
	})
	if err != nil {
		return
	}
	ord := &orderSeen{id: o.Msg.GetOrder().GetOrderId(), user: hold.GetUserId(), hold: hold.GetHoldId(), show: hold.GetShowId(), c: holder}
	r.mu.Lock()
	r.orders[ord.id] = ord
	r.holds[hold.GetHoldId()].ordered = true
	r.mu.Unlock()

	r.pay(ctx, ord, pickToken(rnd), rnd.Float64() < 0.05)
	if !r.confirmed(ord) && rnd.IntN(2) == 0 {
		r.pay(ctx, ord, "tok_success", false) // another card
	}
	if !r.confirmed(ord) {
		return
	}
	r.done(hold.GetHoldId())
	switch n := rnd.IntN(100); {
	case n < 10:
		r.cancel(ctx, ord)
	case n < 25:
		r.checkIn(ctx, ord)
	}
}

// freeSeats reads a show's seat map as the caller sees it and returns its
// free seats, in layout order.
func (r *run) freeSeats(ctx context.Context, c *caller, showID int64, layout []string) []string {
	m, err := call(ctx, r.rec, c, "GetSeatMap", func(ctx context.Context, c clients) (*connect.Response[seatmapv1.GetSeatMapResponse], error) {
		return c.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: showID}))
	})
	if err != nil {
		return nil
	}
	av := m.Msg.GetAvailability()
	var free []string
	for i, seat := range layout {
		if i/4 < len(av) && (av[i/4]>>(2*(i%4)))&3 == 0 {
			free = append(free, seat)
		}
	}
	return free
}

// done marks a hold as nothing to give back at the end.
func (r *run) done(holdID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if h := r.holds[holdID]; h != nil {
		h.done = true
	}
}

func (r *run) confirmed(o *orderSeen) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return o.confirmed
}

// pay starts paying an order with token (twice at once, with two keys, on
// a double tap), then follows the order until it is decided or 20 s have
// passed (the payment jobs settle the rest).
func (r *run) pay(ctx context.Context, o *orderSeen, token string, doubleTap bool) {
	taps := 1
	if doubleTap {
		taps = 2
	}
	var wg sync.WaitGroup
	for range taps {
		wg.Go(func() {
			r.mu.Lock()
			r.payments++
			r.mu.Unlock()
			p, err := call(ctx, r.rec, o.c, "StartPayment", func(ctx context.Context, c clients) (*connect.Response[paymentv1.StartPaymentResponse], error) {
				return c.pay.StartPayment(ctx, connect.NewRequest(&paymentv1.StartPaymentRequest{OrderId: o.id,
					Sandbox: &paymentv1.SandboxPayment{Token: token}}))
			})
			if err != nil {
				return
			}
			r.mu.Lock()
			o.payments = append(o.payments, p.Msg.GetPayment().GetPaymentId())
			if p.Msg.GetPayment().GetStatus() == paymentv1.PaymentState_PAYMENT_STATE_SUCCEEDED {
				o.confirmed = true
			}
			r.mu.Unlock()
		})
	}
	wg.Wait()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && ctx.Err() == nil; {
		st, ok := r.observe(ctx, o)
		if ok && st != bookingv1.OrderStatus_ORDER_STATUS_PENDING_PAYMENT {
			return
		}
		time.Sleep(time.Second)
	}
}

// observe reads an order as its buyer and notes its status (one goroutine
// per order, in order: a status that goes back is a violation).
func (r *run) observe(ctx context.Context, o *orderSeen) (bookingv1.OrderStatus, bool) {
	resp, err := call(ctx, r.rec, o.c, "GetOrder", func(ctx context.Context, c clients) (*connect.Response[bookingv1.GetOrderResponse], error) {
		return c.orders.GetOrder(ctx, connect.NewRequest(&bookingv1.GetOrderRequest{OrderId: o.id}))
	})
	if err != nil {
		return 0, false
	}
	st := resp.Msg.GetOrder().GetStatus()
	r.mu.Lock()
	o.statuses = append(o.statuses, st.String())
	if st == bookingv1.OrderStatus_ORDER_STATUS_CONFIRMED {
		o.confirmed = true
	}
	r.mu.Unlock()
	return st, true
}

// cancel cancels a confirmed order (R-6.9: refunded less the fee).
func (r *run) cancel(ctx context.Context, o *orderSeen) {
	r.mu.Lock()
	o.cancelTried = true
	r.mu.Unlock()
	_, _ = call(ctx, r.rec, o.c, "CancelOrder", func(ctx context.Context, c clients) (*connect.Response[bookingv1.CancelOrderResponse], error) {
		return c.orders.CancelOrder(ctx, connect.NewRequest(&bookingv1.CancelOrderRequest{OrderId: o.id, Reason: "chaos"}))
	})
	r.observe(ctx, o)
}

// checkIn waits for the order's tickets in "my tickets" and has the gate
// staff scan the first one's code.
func (r *run) checkIn(ctx context.Context, o *orderSeen) {
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && ctx.Err() == nil; time.Sleep(time.Second) {
		resp, err := call(ctx, r.rec, o.c, "ListMyTickets", func(ctx context.Context, c clients) (*connect.Response[ticketsv1.ListMyTicketsResponse], error) {
			return c.tickets.ListMyTickets(ctx, connect.NewRequest(&ticketsv1.ListMyTicketsRequest{ShowId: o.show}))
		})
		if err != nil {
			continue
		}
		for _, t := range resp.Msg.GetTickets() {
			if t.GetOrderId() != o.id || t.GetCode() == "" {
				continue
			}
			in, err := call(ctx, r.rec, r.gate, "CheckInTicket", func(ctx context.Context, c clients) (*connect.Response[ticketsv1.CheckInTicketResponse], error) {
				return c.tickets.CheckInTicket(ctx, connect.NewRequest(&ticketsv1.CheckInTicketRequest{ShowId: o.show,
					Ticket: &ticketsv1.CheckInTicketRequest_Code{Code: t.GetCode()}, Gate: "chaos"}))
			})
			if err == nil && in.Msg.GetAdmitted() {
				r.mu.Lock()
				o.checkedIn = true
				r.mu.Unlock()
			}
			return
		}
	}
}

// readers read seat maps, search trips and download e-tickets throughout
// the load, as the crowd's browsers and the partners' servers do.
func (r *run) readers(ctx context.Context) {
	var wg sync.WaitGroup
	reader, err := r.user("chaos-"+r.tag+"-reader", 0)
	if err != nil {
		return
	}
	reading := func(d time.Duration, fn func(i int)) { wg.Go(func() { every(ctx, d, fn) }) }
	reading(200*time.Millisecond, func(i int) {
		s := r.shows[i%len(r.shows)]
		_, _ = call(ctx, r.rec, reader, "GetSeatMap", func(ctx context.Context, c clients) (*connect.Response[seatmapv1.GetSeatMapResponse], error) {
			return c.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: s.ID}))
		})
	})
	reading(500*time.Millisecond, func(i int) {
		req := &searchv1.SearchTripsRequest{Origin: "Dhaka", Destination: "Chattogram"}
		if i%2 == 1 {
			req = &searchv1.SearchTripsRequest{Query: "Chaos " + r.tag}
		}
		_, _ = call(ctx, r.rec, reader, "SearchTrips", func(ctx context.Context, c clients) (*connect.Response[searchv1.SearchTripsResponse], error) {
			return c.search.SearchTrips(ctx, connect.NewRequest(req))
		})
	})
	reading(700*time.Millisecond, func(i int) {
		o := r.someConfirmed(i)
		if o == nil {
			return
		}
		t, err := call(ctx, r.rec, o.c, "ListMyTickets", func(ctx context.Context, c clients) (*connect.Response[ticketsv1.ListMyTicketsResponse], error) {
			return c.tickets.ListMyTickets(ctx, connect.NewRequest(&ticketsv1.ListMyTicketsRequest{ShowId: o.show}))
		})
		if err != nil || len(t.Msg.GetTickets()) == 0 {
			return
		}
		id := t.Msg.GetTickets()[0].GetTicketId()
		_, _ = call(ctx, r.rec, o.c, "GetTicketDownload", func(ctx context.Context, c clients) (*connect.Response[ticketsv1.GetTicketDownloadResponse], error) {
			return c.tickets.GetTicketDownload(ctx, connect.NewRequest(&ticketsv1.GetTicketDownloadRequest{TicketId: id}))
		})
	})
	wg.Wait()
}

// someConfirmed returns the i-th confirmed order, round the ones there are.
func (r *run) someConfirmed(i int) *orderSeen {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ids []string
	for id, o := range r.orders {
		if o.confirmed {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	slices.Sort(ids)
	return r.orders[ids[i%len(ids)]]
}

// releaseLeftovers gives back every hold the run knows that was neither
// confirmed nor released, so that the read models can be compared without
// holds running out under them; holds whose answer was lost run out.
func (r *run) releaseLeftovers(ctx context.Context) {
	r.mu.Lock()
	type left struct {
		id string
		c  *caller
	}
	var todo []left
	for id, h := range r.holds {
		if !h.done {
			if c, ok := r.buyers[h.user]; ok {
				todo = append(todo, left{id, c})
			}
		}
	}
	r.mu.Unlock()
	for _, h := range todo {
		_, _ = call(ctx, r.rec, h.c, "ReleaseHold", func(ctx context.Context, c clients) (*connect.Response[bookingv1.ReleaseHoldResponse], error) {
			return c.holds.ReleaseHold(ctx, connect.NewRequest(&bookingv1.ReleaseHoldRequest{HoldId: h.id}))
		})
	}
	r.say("released %d holds left over", len(todo))
}

// monitorHolds runs the hold check every few seconds while the load goes,
// keeping the worst it saw: two holds of one seat found later may have
// lapsed by the end.
func (r *run) monitorHolds(ctx context.Context) {
	t := time.NewTicker(3 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		c, err := r.d.App.Booking.CheckHolds(ctx, time.Now())
		twice, err2 := r.d.App.Booking.CheckSeats(ctx)
		load := loadAverage()[0]
		r.mu.Lock()
		r.maxLoad = max(r.maxLoad, load)
		if err == nil {
			r.monitor.SeatsTwice = max(r.monitor.SeatsTwice, c.SeatsTwice)
			r.monitor.Partial = max(r.monitor.Partial, c.Partial)
			r.monitor.GAOver = max(r.monitor.GAOver, c.GAOver)
			r.monitor.GABuckets = max(r.monitor.GABuckets, c.GABuckets)
			r.monitor.Holds++
		}
		if err2 == nil {
			r.twice = max(r.twice, twice)
		}
		r.mu.Unlock()
	}
}

// every calls fn with 0, 1, 2, … every d until ctx ends: an actor of the
// load that does one thing at a steady pace.
func every(ctx context.Context, d time.Duration, fn func(i int)) {
	t := time.NewTicker(d)
	defer t.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		fn(i)
	}
}
