package api

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	counterv1 "github.com/seatghor/seatghor/gen/seatghor/counter/v1"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/counter"
	"github.com/seatghor/seatghor/server/display"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/ticket"
)

// counterHandler serves CounterService: an operator's counter selling for
// cash in its staff's shifts (decision 0443).
type counterHandler struct {
	svc *counter.Service
	// numbers reads a ticket number as its order; nil: order ids only.
	numbers OrderNumbers
	log     *slog.Logger
}

// OrderNumbers finds the orders of a ticket number (decision 0476).
type OrderNumbers interface {
	OrdersNumbered(ctx context.Context, number string) ([]string, error)
}

// orderOf is the order a counter's staff typed: its id, a ticket id of it
// (printed under each seat), or its ticket number (decision 0476), which
// names one order or is refused.
func (h *counterHandler) orderOf(ctx context.Context, typed string) (string, error) {
	typed = strings.TrimSpace(typed)
	if _, orderID, _, err := ticket.Parse(typed); err == nil {
		return orderID, nil
	}
	number, ok := ticket.ParseNumber(typed)
	if !ok || h.numbers == nil {
		return typed, nil // an order id, or refused as one by the service
	}
	ids, err := h.numbers.OrdersNumbered(ctx, number)
	switch {
	case err != nil:
		return "", err
	case len(ids) == 0:
		return "", fault.New(fault.BookingNotFound, "no order has ticket number %s", strings.ToUpper(number))
	case len(ids) > 1:
		return "", fault.OnField(fault.InvalidArgument, "order_id",
			"ticket number %s is two orders': type the order id printed with it", strings.ToUpper(number))
	}
	return ids[0], nil
}

func (h *counterHandler) error(ctx context.Context, err error) error {
	return toConnect(ctx, h.log, err)
}

// staff is the signed-in caller; nil service: unavailable.
func (h *counterHandler) staff(ctx context.Context) (auth.Principal, error) {
	p, ok := auth.FromContext(ctx)
	if !ok {
		return p, errNotSignedIn
	}
	if h.svc == nil {
		return p, h.error(ctx, fault.New(fault.NotServed, "counter sales are not served here"))
	}
	return p, nil
}

// OpenShift opens the caller's cash shift at a counter.
func (h *counterHandler) OpenShift(ctx context.Context, req *connect.Request[counterv1.OpenShiftRequest]) (*connect.Response[counterv1.OpenShiftResponse], error) {
	p, err := h.staff(ctx)
	if err != nil {
		return nil, err
	}
	f := req.Msg.GetOpeningFloat()
	sh, err := h.svc.OpenShift(ctx, p.UserID, req.Msg.GetOrganizationId(), req.Msg.GetCounterId(), f.GetAmountMinor(), f.GetCurrency())
	if err != nil {
		return nil, h.error(ctx, err)
	}
	return connect.NewResponse(&counterv1.OpenShiftResponse{Shift: shiftProto(sh)}), nil
}

// GetShift answers a shift's report so far.
func (h *counterHandler) GetShift(ctx context.Context, req *connect.Request[counterv1.GetShiftRequest]) (*connect.Response[counterv1.GetShiftResponse], error) {
	p, err := h.staff(ctx)
	if err != nil {
		return nil, err
	}
	r, err := h.svc.GetShift(ctx, p.UserID, p.Is(auth.RoleAdmin), req.Msg.GetShiftId())
	if err != nil {
		return nil, h.error(ctx, err)
	}
	res := connect.NewResponse(&counterv1.GetShiftResponse{Report: reportProto(r)})
	res.Header().Set("Cache-Control", "private, no-store")
	return res, nil
}

// CloseShift closes the caller's shift with the cash counted.
func (h *counterHandler) CloseShift(ctx context.Context, req *connect.Request[counterv1.CloseShiftRequest]) (*connect.Response[counterv1.CloseShiftResponse], error) {
	p, err := h.staff(ctx)
	if err != nil {
		return nil, err
	}
	c := req.Msg.GetCountedCash()
	r, err := h.svc.CloseShift(ctx, p.UserID, req.Msg.GetShiftId(), c.GetAmountMinor(), c.GetCurrency())
	if err != nil {
		return nil, h.error(ctx, err)
	}
	return connect.NewResponse(&counterv1.CloseShiftResponse{Report: reportProto(r)}), nil
}

// SellTickets sells seats for cash in the caller's shift.
func (h *counterHandler) SellTickets(ctx context.Context, req *connect.Request[counterv1.SellTicketsRequest]) (*connect.Response[counterv1.SellTicketsResponse], error) {
	p, err := h.staff(ctx)
	if err != nil {
		return nil, err
	}
	m := req.Msg
	j, ct := m.GetJourney(), m.GetContact()
	in := counter.SaleRequest{ShiftID: m.GetShiftId(), ShowID: m.GetShowId(), Seats: m.GetSeats(), GAArea: m.GetGaArea(),
		Quantity: int(m.GetQuantity()),
		Journey: booking.JourneyRequest{From: j.GetFromStopId(), To: j.GetToStopId(),
			Boarding: j.GetBoardingCounterId(), Dropping: j.GetDroppingCounterId()},
		Contact: booking.Contact{Phone: ct.GetPhone(), Email: ct.GetEmail(), Language: ct.GetLanguage()}}
	for _, ps := range m.GetPassengers() {
		in.Passengers = append(in.Passengers, booking.Passenger{Seat: ps.GetSeat(), Name: ps.GetName(), Phone: ps.GetPhone(), Woman: ps.GetWoman()})
	}
	o, e, err := h.svc.Sell(ctx, p.UserID, in)
	if err != nil {
		return nil, h.error(ctx, err)
	}
	resp := &counterv1.SellTicketsResponse{Order: orderProto(o)}
	if e.TxnID != "" {
		resp.Entry = entryProto(e)
	}
	return connect.NewResponse(resp), nil
}

// RefundTickets takes a cash ticket back in the caller's shift.
func (h *counterHandler) RefundTickets(ctx context.Context, req *connect.Request[counterv1.RefundTicketsRequest]) (*connect.Response[counterv1.RefundTicketsResponse], error) {
	p, err := h.staff(ctx)
	if err != nil {
		return nil, err
	}
	orderID, err := h.orderOf(ctx, req.Msg.GetOrderId())
	if err != nil {
		return nil, h.error(ctx, err)
	}
	o, e, err := h.svc.RefundTickets(ctx, p.UserID, req.Msg.GetShiftId(), orderID)
	if err != nil {
		return nil, h.error(ctx, err)
	}
	resp := &counterv1.RefundTicketsResponse{Order: orderProto(o)}
	if e.TxnID != "" {
		resp.Entry = entryProto(e)
	}
	return connect.NewResponse(resp), nil
}

// PayOwed pays out a cancelled trip's cash in the caller's shift.
func (h *counterHandler) PayOwed(ctx context.Context, req *connect.Request[counterv1.PayOwedRequest]) (*connect.Response[counterv1.PayOwedResponse], error) {
	p, err := h.staff(ctx)
	if err != nil {
		return nil, err
	}
	orderID, err := h.orderOf(ctx, req.Msg.GetOrderId())
	if err != nil {
		return nil, h.error(ctx, err)
	}
	e, err := h.svc.PayOwed(ctx, p.UserID, req.Msg.GetShiftId(), orderID)
	if err != nil {
		return nil, h.error(ctx, err)
	}
	return connect.NewResponse(&counterv1.PayOwedResponse{Entry: entryProto(e)}), nil
}

func shiftProto(sh counter.Shift) *counterv1.Shift {
	p := &counterv1.Shift{ShiftId: sh.ID, OrganizationId: sh.OrganizationID, CounterId: sh.CounterID, UserId: sh.UserID,
		Status: counterv1.ShiftStatus_SHIFT_STATUS_OPEN, OpeningFloat: money(sh.OpeningFloatMinor, sh.Currency),
		OpenedAt: timestamppb.New(sh.OpenedAt)}
	if !sh.Open() {
		p.Status = counterv1.ShiftStatus_SHIFT_STATUS_CLOSED
		p.ClosedAt = timestamppb.New(sh.ClosedAt)
		p.CountedCash = money(sh.CountedMinor, sh.Currency)
	}
	return p
}

var entryKinds = map[counter.EntryKind]counterv1.CashEntryKind{
	counter.Sale:   counterv1.CashEntryKind_CASH_ENTRY_KIND_SALE,
	counter.Refund: counterv1.CashEntryKind_CASH_ENTRY_KIND_REFUND,
	counter.Payout: counterv1.CashEntryKind_CASH_ENTRY_KIND_PAYOUT,
}

func entryProto(e counter.Entry) *counterv1.CashEntry {
	return &counterv1.CashEntry{Kind: entryKinds[e.Kind], OrderId: e.OrderID, ShowId: e.ShowID,
		Amount: money(e.AmountMinor, e.Currency), LedgerTxnId: e.TxnID, At: timestamppb.New(e.At)}
}

func reportProto(r counter.Report) *counterv1.ShiftReport {
	cur := r.Shift.Currency
	p := &counterv1.ShiftReport{Shift: shiftProto(r.Shift), Sales: int32(r.Sales), SalesTotal: money(r.SalesMinor, cur),
		Refunds: int32(r.Refunds), RefundsTotal: money(r.RefundsMinor, cur), Payouts: int32(r.Payouts),
		PayoutsTotal: money(r.PayoutsMinor, cur), ExpectedCash: money(r.ExpectedMinor, cur),
		LedgerNet: money(r.LedgerNetMinor, cur)}
	if !r.Shift.Open() {
		p.Difference = money(r.DifferenceMinor, cur)
	}
	for _, e := range r.Entries {
		p.Entries = append(p.Entries, entryProto(e))
	}
	return p
}

// GetCounterTicket answers an order's tickets as an 80 mm PDF.
func (h *counterHandler) GetCounterTicket(ctx context.Context, req *connect.Request[counterv1.GetCounterTicketRequest]) (*connect.Response[counterv1.GetCounterTicketResponse], error) {
	p, err := h.staff(ctx)
	if err != nil {
		return nil, err
	}
	lang := display.ParseLang(req.Msg.GetLanguage())
	data, err := h.svc.Receipt(ctx, p.UserID, p.Is(auth.RoleAdmin), req.Msg.GetOrderId(), lang)
	if err != nil {
		return nil, h.error(ctx, err)
	}
	res := connect.NewResponse(&counterv1.GetCounterTicketResponse{Filename: fmt.Sprintf("ticket-%s-%s.pdf", req.Msg.GetOrderId(), lang),
		ContentType: "application/pdf", Data: data})
	res.Header().Set("Cache-Control", "private, no-store") // signed codes
	return res, nil
}
