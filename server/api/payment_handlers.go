package api

import (
	"context"
	"log/slog"
	"strings"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	paymentv1 "github.com/seatghor/seatghor/gen/seatghor/payment/v1"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/payment"
)

type paymentHandler struct {
	svc *payment.Service
	log *slog.Logger
}

func (h *paymentHandler) StartPayment(ctx context.Context, req *connect.Request[paymentv1.StartPaymentRequest]) (*connect.Response[paymentv1.StartPaymentResponse], error) {
	m := req.Msg
	method := m.GetMethod()
	if method == paymentv1.PaymentMethod_PAYMENT_METHOD_UNSPECIFIED {
		method = paymentv1.PaymentMethod_PAYMENT_METHOD_CARD
	}
	token := m.GetPaymentToken()
	if m.GetSandbox() != nil {
		token = m.GetSandbox().GetToken()
	}
	in := payment.StartRequest{
		OrderID: m.GetOrderId(), Method: methodName(method), Token: token, ReturnURL: m.GetReturnUrl(),
	}
	return answer(ctx, h.log, func(c booking.Caller) (payment.Payment, error) { return h.svc.StartPayment(ctx, c.UserID, in) },
		func(p payment.Payment) *paymentv1.StartPaymentResponse {
			return &paymentv1.StartPaymentResponse{Payment: paymentProto(p)}
		})
}

func (h *paymentHandler) GetPayment(ctx context.Context, req *connect.Request[paymentv1.GetPaymentRequest]) (*connect.Response[paymentv1.GetPaymentResponse], error) {
	return answer(ctx, h.log, func(c booking.Caller) (payment.Payment, error) {
		return h.svc.GetPayment(ctx, c.UserID, c.Admin, req.Msg.GetPaymentId())
	}, func(p payment.Payment) *paymentv1.GetPaymentResponse {
		return &paymentv1.GetPaymentResponse{Payment: paymentProto(p)}
	})
}

// methodName is the stored name of a method: "card", "mfs", ….
func methodName(m paymentv1.PaymentMethod) string {
	return strings.ToLower(strings.TrimPrefix(m.String(), "PAYMENT_METHOD_"))
}

func paymentProto(p payment.Payment) *paymentv1.Payment {
	out := &paymentv1.Payment{
		PaymentId: p.ID, OrderId: p.OrderID, ShowId: p.ShowID, UserId: p.UserID, Method: payment.Methods[p.Method],
		Provider: p.Provider, Status: payment.States[p.Status], Amount: money(p.AmountMinor, p.Currency),
		Attempt: int32(p.Attempt), RedirectUrl: p.RedirectURL, PayBy: timestamppb.New(p.PayBy),
		FailureReason: payment.FailureReasons[p.FailureReason], FailureMessage: p.FailureMessage,
		GatewayReference: p.GatewayChargeID, CreatedAt: timestamppb.New(p.CreatedAt), UpdatedAt: timestamppb.New(p.UpdatedAt),
	}
	if p.RefundedMinor > 0 {
		out.Refunded = money(p.RefundedMinor, p.Currency)
	}
	return out
}

// refundRights is R-10's least privilege: only admins give money back by
// hand.
func refundRights(ctx context.Context) (string, error) {
	p, ok := auth.FromContext(ctx)
	if !ok {
		return "", errNotSignedIn
	}
	if !p.Is(auth.RoleAdmin) {
		return "", fault.New(fault.PermissionDenied, "only admins refund payments")
	}
	return p.UserID, nil
}

func (h *paymentHandler) RefundPayment(ctx context.Context, req *connect.Request[paymentv1.RefundPaymentRequest]) (*connect.Response[paymentv1.RefundPaymentResponse], error) {
	admin, err := refundRights(ctx)
	if err != nil {
		return nil, err
	}
	r, err := h.svc.RefundPayment(ctx, admin, req.Msg.GetPaymentId(), req.Msg.GetAmountMinor(), req.Msg.GetNote())
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&paymentv1.RefundPaymentResponse{Refund: refundProto(r)}), nil
}

func (h *paymentHandler) ApproveRefund(ctx context.Context, req *connect.Request[paymentv1.ApproveRefundRequest]) (*connect.Response[paymentv1.ApproveRefundResponse], error) {
	admin, err := refundRights(ctx)
	if err != nil {
		return nil, err
	}
	r, err := h.svc.ApproveRefund(ctx, admin, req.Msg.GetRefundId())
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&paymentv1.ApproveRefundResponse{Refund: refundProto(r)}), nil
}

var refundStatuses = map[string]paymentv1.RefundStatus{
	"awaiting_approval": paymentv1.RefundStatus_REFUND_STATUS_AWAITING_APPROVAL,
	"pending":           paymentv1.RefundStatus_REFUND_STATUS_PENDING,
	"succeeded":         paymentv1.RefundStatus_REFUND_STATUS_SUCCEEDED,
	"failed":            paymentv1.RefundStatus_REFUND_STATUS_FAILED,
	"unknown":           paymentv1.RefundStatus_REFUND_STATUS_UNKNOWN,
}

func refundProto(r payment.Refund) *paymentv1.Refund {
	return &paymentv1.Refund{
		RefundId: r.ID, PaymentId: r.PaymentID, OrderId: r.OrderID, Amount: money(r.AmountMinor, r.Currency),
		Reason: r.Reason, Status: refundStatuses[r.Status], RequestedBy: r.RequestedBy, ApprovedBy: r.ApprovedBy,
		Note: r.Note, CreatedAt: timestamppb.New(r.CreatedAt),
	}
}
