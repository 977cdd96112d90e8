package api

import (
	"context"
	"errors"
	"log/slog"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/booking"
)

// caller returns the authenticated principal as booking sees it.
func caller(ctx context.Context) (booking.Caller, error) {
	p, ok := auth.FromContext(ctx)
	if !ok {
		return booking.Caller{}, connect.NewError(connect.CodeUnauthenticated, errors.New("not signed in"))
	}
	return booking.Caller{UserID: p.UserID, Admin: p.Is(auth.RoleAdmin), Operator: p.Is(auth.RoleOperator)}, nil
}

type holdHandler struct {
	svc *booking.Service
	log *slog.Logger
}

func (h *holdHandler) CreateHold(ctx context.Context, req *connect.Request[bookingv1.CreateHoldRequest]) (*connect.Response[bookingv1.CreateHoldResponse], error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	in := booking.HoldRequest{ShowID: req.Msg.GetShowId(), Seats: req.Msg.GetSeats(), GAArea: req.Msg.GetGaArea(),
		Quantity: int(req.Msg.GetQuantity())}
	hold, err := h.svc.CreateHold(ctx, c.UserID, in)
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&bookingv1.CreateHoldResponse{Hold: holdProto(hold)}), nil
}

func (h *holdHandler) GetHold(ctx context.Context, req *connect.Request[bookingv1.GetHoldRequest]) (*connect.Response[bookingv1.GetHoldResponse], error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	hold, err := h.svc.GetHold(ctx, c, req.Msg.GetHoldId())
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&bookingv1.GetHoldResponse{Hold: holdProto(hold)}), nil
}

func (h *holdHandler) ReleaseHold(ctx context.Context, req *connect.Request[bookingv1.ReleaseHoldRequest]) (*connect.Response[bookingv1.ReleaseHoldResponse], error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	hold, err := h.svc.ReleaseHold(ctx, c.UserID, req.Msg.GetHoldId())
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&bookingv1.ReleaseHoldResponse{Hold: holdProto(hold)}), nil
}

type orderHandler struct {
	svc *booking.Service
	log *slog.Logger
}

func (h *orderHandler) CreateOrder(ctx context.Context, req *connect.Request[bookingv1.CreateOrderRequest]) (*connect.Response[bookingv1.CreateOrderResponse], error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	o, err := h.svc.CreateOrder(ctx, c.UserID, req.Msg.GetHoldId())
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&bookingv1.CreateOrderResponse{Order: orderProto(o)}), nil
}

func (h *orderHandler) GetOrder(ctx context.Context, req *connect.Request[bookingv1.GetOrderRequest]) (*connect.Response[bookingv1.GetOrderResponse], error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	o, err := h.svc.GetOrder(ctx, c, req.Msg.GetOrderId())
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&bookingv1.GetOrderResponse{Order: orderProto(o)}), nil
}

func (h *orderHandler) ListMyOrders(ctx context.Context, req *connect.Request[bookingv1.ListMyOrdersRequest]) (*connect.Response[bookingv1.ListMyOrdersResponse], error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	orders, next, err := h.svc.ListMyOrders(ctx, c.UserID, int(req.Msg.GetPageSize()), req.Msg.GetPageToken())
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	resp := &bookingv1.ListMyOrdersResponse{NextPageToken: next}
	for _, o := range orders {
		resp.Orders = append(resp.Orders, orderProto(o))
	}
	return connect.NewResponse(resp), nil
}

func (h *orderHandler) CancelOrder(ctx context.Context, req *connect.Request[bookingv1.CancelOrderRequest]) (*connect.Response[bookingv1.CancelOrderResponse], error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	o, err := h.svc.CancelOrder(ctx, c.UserID, req.Msg.GetOrderId())
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&bookingv1.CancelOrderResponse{Order: orderProto(o)}), nil
}

func money(amount int64, currency string) *commonv1.Money {
	return &commonv1.Money{AmountMinor: amount, Currency: currency}
}

var holdStatuses = map[booking.HoldStatus]bookingv1.HoldStatus{
	booking.HoldActive:    bookingv1.HoldStatus_HOLD_STATUS_ACTIVE,
	booking.HoldOrdered:   bookingv1.HoldStatus_HOLD_STATUS_ORDERED,
	booking.HoldConfirmed: bookingv1.HoldStatus_HOLD_STATUS_CONFIRMED,
	booking.HoldReleased:  bookingv1.HoldStatus_HOLD_STATUS_RELEASED,
	booking.HoldExpired:   bookingv1.HoldStatus_HOLD_STATUS_EXPIRED,
}

func holdProto(h booking.Hold) *bookingv1.Hold {
	return &bookingv1.Hold{
		HoldId: h.ID, ShowId: h.ShowID, Seats: h.Seats, GaArea: h.GAArea, Quantity: int32(h.Quantity),
		ExpiresAt: timestamppb.New(h.ExpiresAt), Amount: money(h.AmountMinor, h.Currency),
		Status: holdStatuses[h.Status], UserId: h.UserID, CreatedAt: timestamppb.New(h.CreatedAt), OrderId: h.OrderID,
	}
}

var orderStatuses = map[booking.OrderStatus]bookingv1.OrderStatus{
	booking.OrderPendingPayment: bookingv1.OrderStatus_ORDER_STATUS_PENDING_PAYMENT,
	booking.OrderConfirmed:      bookingv1.OrderStatus_ORDER_STATUS_CONFIRMED,
	booking.OrderCancelled:      bookingv1.OrderStatus_ORDER_STATUS_CANCELLED,
	booking.OrderExpired:        bookingv1.OrderStatus_ORDER_STATUS_EXPIRED,
}

func orderProto(o booking.Order) *bookingv1.Order {
	p := &bookingv1.Order{
		OrderId: o.ID, HoldId: o.HoldID, ShowId: o.ShowID, UserId: o.UserID, Status: orderStatuses[o.Status],
		Total: money(o.TotalMinor, o.Currency), PayBy: timestamppb.New(o.PayBy),
		CreatedAt: timestamppb.New(o.CreatedAt), UpdatedAt: timestamppb.New(o.UpdatedAt),
	}
	for _, l := range o.Lines {
		p.Lines = append(p.Lines, &bookingv1.OrderLine{Seat: l.Seat, GaArea: l.GAArea, Quantity: int32(l.Quantity),
			Amount: money(l.AmountMinor, o.Currency)})
	}
	return p
}
