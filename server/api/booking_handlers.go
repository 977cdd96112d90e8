package api

import (
	"context"
	"log/slog"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/payment"
)

// caller returns the authenticated principal as booking sees it.
func caller(ctx context.Context) (booking.Caller, error) {
	p, ok := auth.FromContext(ctx)
	if !ok {
		return booking.Caller{}, errNotSignedIn
	}
	return booking.Caller{UserID: p.UserID, Admin: p.Is(auth.RoleAdmin), Operator: p.Is(auth.RoleOperator),
		PartnerID: channelOf(p)}, nil
}

// channelOf is the sales channel p acts in (decision 0185): its partner
// for the partner role, 0 (Seatghor's own) for everyone else.
func channelOf(p auth.Principal) int64 {
	if p.Is(auth.RolePartner) {
		return p.PartnerID
	}
	return 0
}

// answer runs a booking call for the authenticated caller and wraps its
// result: the one shape every booking handler has.
func answer[T, R any](ctx context.Context, log *slog.Logger, call func(booking.Caller) (T, error), wrap func(T) *R) (*connect.Response[R], error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	v, err := call(c)
	if err != nil {
		return nil, toConnect(ctx, log, err)
	}
	return connect.NewResponse(wrap(v)), nil
}

type holdHandler struct {
	svc *booking.Service
	log *slog.Logger
}

func (h *holdHandler) CreateHold(ctx context.Context, req *connect.Request[bookingv1.CreateHoldRequest]) (*connect.Response[bookingv1.CreateHoldResponse], error) {
	j := req.Msg.GetJourney()
	in := booking.HoldRequest{ShowID: req.Msg.GetShowId(), Seats: req.Msg.GetSeats(), GAArea: req.Msg.GetGaArea(),
		Quantity: int(req.Msg.GetQuantity()), WomenSeats: req.Msg.GetWomenSeats(),
		Journey: booking.JourneyRequest{From: j.GetFromStopId(), To: j.GetToStopId(),
			Boarding: j.GetBoardingCounterId(), Dropping: j.GetDroppingCounterId()}}
	if b := req.Msg.GetBestAvailable(); b != nil {
		in.Best = &booking.BestAvailable{Section: b.GetSection(), AllowSeparate: b.GetAllowSeparate(), Women: b.GetWomen()}
	}
	return answer(ctx, h.log, func(c booking.Caller) (booking.Hold, error) {
		in.PartnerID = c.PartnerID
		return h.svc.CreateHold(ctx, c.UserID, in)
	},
		func(v booking.Hold) *bookingv1.CreateHoldResponse {
			return &bookingv1.CreateHoldResponse{Hold: holdProto(v)}
		})
}

func (h *holdHandler) GetHold(ctx context.Context, req *connect.Request[bookingv1.GetHoldRequest]) (*connect.Response[bookingv1.GetHoldResponse], error) {
	return answer(ctx, h.log, func(c booking.Caller) (booking.Hold, error) { return h.svc.GetHold(ctx, c, req.Msg.GetHoldId()) },
		func(v booking.Hold) *bookingv1.GetHoldResponse { return &bookingv1.GetHoldResponse{Hold: holdProto(v)} })
}

func (h *holdHandler) ListMyHolds(ctx context.Context, req *connect.Request[bookingv1.ListMyHoldsRequest]) (*connect.Response[bookingv1.ListMyHoldsResponse], error) {
	return answer(ctx, h.log, func(c booking.Caller) ([]booking.Hold, error) {
		return h.svc.ListMyHolds(ctx, c.UserID, req.Msg.GetShowId())
	}, func(holds []booking.Hold) *bookingv1.ListMyHoldsResponse {
		resp := &bookingv1.ListMyHoldsResponse{}
		for _, v := range holds {
			resp.Holds = append(resp.Holds, holdProto(v))
		}
		return resp
	})
}

func (h *holdHandler) ReleaseHold(ctx context.Context, req *connect.Request[bookingv1.ReleaseHoldRequest]) (*connect.Response[bookingv1.ReleaseHoldResponse], error) {
	return answer(ctx, h.log, func(c booking.Caller) (booking.Hold, error) {
		return h.svc.ReleaseHold(ctx, c.UserID, req.Msg.GetHoldId())
	},
		func(v booking.Hold) *bookingv1.ReleaseHoldResponse {
			return &bookingv1.ReleaseHoldResponse{Hold: holdProto(v)}
		})
}

type orderHandler struct {
	svc *booking.Service
	// payments cancels orders: a confirmed one is refunded.
	payments *payment.Service
	log      *slog.Logger
}

func (h *orderHandler) CreateOrder(ctx context.Context, req *connect.Request[bookingv1.CreateOrderRequest]) (*connect.Response[bookingv1.CreateOrderResponse], error) {
	passengers := make([]booking.Passenger, 0, len(req.Msg.GetPassengers()))
	for _, p := range req.Msg.GetPassengers() {
		passengers = append(passengers, booking.Passenger{Seat: p.GetSeat(), Name: p.GetName(), Phone: p.GetPhone(), Woman: p.GetWoman()})
	}
	p, _ := auth.FromContext(ctx)
	return answer(ctx, h.log, func(c booking.Caller) (booking.Order, error) {
		ct := req.Msg.GetContact()
		return h.svc.Checkout(ctx, c.UserID, req.Msg.GetHoldId(), booking.Checkout{Passengers: passengers,
			Contact: booking.Contact{Phone: ct.GetPhone(), Email: ct.GetEmail(), Language: ct.GetLanguage()}, Guest: p.Guest()})
	},
		func(v booking.Order) *bookingv1.CreateOrderResponse {
			return &bookingv1.CreateOrderResponse{Order: orderProto(v)}
		})
}

func (h *orderHandler) GetOrder(ctx context.Context, req *connect.Request[bookingv1.GetOrderRequest]) (*connect.Response[bookingv1.GetOrderResponse], error) {
	return answer(ctx, h.log, func(c booking.Caller) (booking.Order, error) { return h.svc.GetOrder(ctx, c, req.Msg.GetOrderId()) },
		func(v booking.Order) *bookingv1.GetOrderResponse {
			return &bookingv1.GetOrderResponse{Order: orderProto(v)}
		})
}

func (h *orderHandler) CancelOrder(ctx context.Context, req *connect.Request[bookingv1.CancelOrderRequest]) (*connect.Response[bookingv1.CancelOrderResponse], error) {
	return answer(ctx, h.log, func(c booking.Caller) (booking.Order, error) {
		return h.payments.CancelOrder(ctx, c.UserID, req.Msg.GetOrderId())
	},
		func(v booking.Order) *bookingv1.CancelOrderResponse {
			return &bookingv1.CancelOrderResponse{Order: orderProto(v)}
		})
}

type orderPage struct {
	orders []booking.Order
	next   string
}

func (h *orderHandler) ListMyOrders(ctx context.Context, req *connect.Request[bookingv1.ListMyOrdersRequest]) (*connect.Response[bookingv1.ListMyOrdersResponse], error) {
	return answer(ctx, h.log, func(c booking.Caller) (orderPage, error) {
		orders, next, err := h.svc.ListMyOrders(ctx, c.UserID, int(req.Msg.GetPageSize()), req.Msg.GetPageToken())
		return orderPage{orders, next}, err
	}, func(p orderPage) *bookingv1.ListMyOrdersResponse {
		resp := &bookingv1.ListMyOrdersResponse{NextPageToken: p.next}
		for _, o := range p.orders {
			resp.Orders = append(resp.Orders, orderProto(o))
		}
		return resp
	})
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
		WomenSeats: h.WomenSeats, Journey: h.View,
	}
}

var orderStatuses = map[booking.OrderStatus]bookingv1.OrderStatus{
	booking.OrderPendingPayment: bookingv1.OrderStatus_ORDER_STATUS_PENDING_PAYMENT,
	booking.OrderConfirmed:      bookingv1.OrderStatus_ORDER_STATUS_CONFIRMED,
	booking.OrderCancelled:      bookingv1.OrderStatus_ORDER_STATUS_CANCELLED,
	booking.OrderExpired:        bookingv1.OrderStatus_ORDER_STATUS_EXPIRED,
	booking.OrderRefunded:       bookingv1.OrderStatus_ORDER_STATUS_REFUNDED,
}

func orderProto(o booking.Order) *bookingv1.Order {
	p := &bookingv1.Order{
		OrderId: o.ID, HoldId: o.HoldID, ShowId: o.ShowID, UserId: o.UserID, Status: orderStatuses[o.Status],
		Total: money(o.TotalMinor, o.Currency), PayBy: timestamppb.New(o.PayBy),
		CreatedAt: timestamppb.New(o.CreatedAt), UpdatedAt: timestamppb.New(o.UpdatedAt), PaymentId: o.PaymentID,
		Journey: o.View,
		// Read by the callers who may read the order: the buyer, the
		// show's organisation, admins (decision 0430, like 0381).
		Contact: bookingContactProto(o.Contact),
	}
	if o.RefundedMinor > 0 {
		p.Refunded = money(o.RefundedMinor, o.Currency)
	}
	if o.CancellationFeeMinor > 0 {
		p.CancellationFee = money(o.CancellationFeeMinor, o.Currency)
	}
	if o.MovedAt != nil {
		p.MovedAt = timestamppb.New(*o.MovedAt)
	}
	for _, l := range o.Lines {
		p.Lines = append(p.Lines, &bookingv1.OrderLine{Seat: l.Seat, GaArea: l.GAArea, Quantity: int32(l.Quantity),
			Amount: money(l.AmountMinor, o.Currency)})
	}
	// Filled by booking only for a caller who may read them (decision 0381).
	for _, x := range o.Passengers {
		p.Passengers = append(p.Passengers, &commonv1.Passenger{Seat: x.Seat, Name: x.Name, Phone: x.Phone, Woman: x.Woman})
	}
	return p
}

func bookingContactProto(c booking.Contact) *commonv1.Contact {
	if !c.Given() {
		return nil
	}
	return &commonv1.Contact{Phone: c.Phone, Email: c.Email, Language: c.Language}
}
