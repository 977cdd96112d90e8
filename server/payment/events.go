package payment

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/types/known/timestamppb"

	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	eventsv1 "github.com/seatghor/seatghor/gen/seatghor/events/v1"
	paymentv1 "github.com/seatghor/seatghor/gen/seatghor/payment/v1"
	"github.com/seatghor/seatghor/server/outbox"
)

// States maps stored statuses to the API's.
var States = map[Status]paymentv1.PaymentState{
	StatusPending:                paymentv1.PaymentState_PAYMENT_STATE_PENDING,
	StatusSucceeded:              paymentv1.PaymentState_PAYMENT_STATE_SUCCEEDED,
	StatusFailed:                 paymentv1.PaymentState_PAYMENT_STATE_FAILED,
	StatusUnknown:                paymentv1.PaymentState_PAYMENT_STATE_UNKNOWN,
	StatusReconciliationRequired: paymentv1.PaymentState_PAYMENT_STATE_RECONCILIATION_REQUIRED,
}

// Methods maps stored methods to the API's.
var Methods = map[string]paymentv1.PaymentMethod{
	"card":             paymentv1.PaymentMethod_PAYMENT_METHOD_CARD,
	"mfs":              paymentv1.PaymentMethod_PAYMENT_METHOD_MFS,
	"internet_banking": paymentv1.PaymentMethod_PAYMENT_METHOD_INTERNET_BANKING,
}

// FailureReasons maps stored failure reasons to the API's.
var FailureReasons = map[string]paymentv1.FailureReason{
	"declined":           paymentv1.FailureReason_FAILURE_REASON_DECLINED,
	"insufficient_funds": paymentv1.FailureReason_FAILURE_REASON_INSUFFICIENT_FUNDS,
	"cancelled_by_buyer": paymentv1.FailureReason_FAILURE_REASON_CANCELLED_BY_BUYER,
	"timed_out":          paymentv1.FailureReason_FAILURE_REASON_TIMED_OUT,
	"gateway_error":      paymentv1.FailureReason_FAILURE_REASON_GATEWAY_ERROR,
	"risk_rejected":      paymentv1.FailureReason_FAILURE_REASON_RISK_REJECTED,
}

var refundReasons = map[string]eventsv1.RefundReason{
	"late_payment":           eventsv1.RefundReason_REFUND_REASON_LATE_PAYMENT,
	"failed_attempt_capture": eventsv1.RefundReason_REFUND_REASON_LATE_PAYMENT,
	"duplicate_capture":      eventsv1.RefundReason_REFUND_REASON_DUPLICATE_CAPTURE,
	"cancellation":           eventsv1.RefundReason_REFUND_REASON_CANCELLATION,
	"manual":                 eventsv1.RefundReason_REFUND_REASON_MANUAL,
	"show_cancelled":         eventsv1.RefundReason_REFUND_REASON_SHOW_CANCELLED,
}

func money(amount int64, currency string) *commonv1.Money {
	return &commonv1.Money{AmountMinor: amount, Currency: currency}
}

// appendStateChanged writes PaymentStateChanged to the outbox in the
// transaction of the change; from is empty for a new attempt.
func appendStateChanged(ctx context.Context, tx pgx.Tx, p Payment, from Status, now time.Time) error {
	return outbox.Append(ctx, tx, p.ShowID, now, &eventsv1.PaymentStateChanged{
		ShowId: p.ShowID, PaymentId: p.ID, OrderId: p.OrderID, UserId: p.UserID, FromState: States[from],
		ToState: States[p.Status], Method: Methods[p.Method], Provider: p.Provider,
		Amount: money(p.AmountMinor, p.Currency), Attempt: int32(p.Attempt), GatewayReference: p.GatewayChargeID,
		FailureReason: FailureReasons[p.FailureReason], OccurredAt: timestamppb.New(now),
	})
}

func appendRefundIssued(ctx context.Context, tx pgx.Tx, r refund, fee int64, gatewayRefundID, txnID string, now time.Time) error {
	return outbox.Append(ctx, tx, r.ShowID, now, &eventsv1.RefundIssued{
		ShowId: r.ShowID, RefundId: r.ID, PaymentId: r.PaymentID, OrderId: r.OrderID, UserId: r.UserID,
		Amount: money(r.AmountMinor, r.Currency), Fee: money(fee, r.Currency),
		Reason: refundReasons[r.Reason], GatewayReference: gatewayRefundID, LedgerTxnId: txnID,
		OccurredAt: timestamppb.New(now),
	})
}
