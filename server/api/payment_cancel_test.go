package api_test

import (
	"context"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/timestamppb"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	paymentv1 "github.com/seatghor/seatghor/gen/seatghor/payment/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/ledger"
	"github.com/seatghor/seatghor/server/payment"
)

// TestCancelAfterManualRefundKeepsTheFee (R-6.9, R-10, decision 0292): a
// cancellation gives back the total less the fee less what refunds of the
// charge gave or are giving back, so a goodwill refund R and a
// cancellation give back max(total − fee, R) in all, never the fee too.
// The order is 1,700 Tk with a 10 % fee: 1,530 Tk is owed on cancellation.
func TestCancelAfterManualRefundKeepsTheFee(t *testing.T) {
	const total, owed = 170000, 153000
	for _, tc := range []struct {
		name    string
		refund  int64 // the admin's goodwill refund before the cancellation
		approve bool  // the refund waits for a second admin (approved after the cancellation)
		cancel  int64 // what the cancellation gives back
	}{
		{name: "refund of 500 Tk, made", refund: 50000, cancel: owed - 50000},
		{name: "refund of 500 Tk, awaiting approval", refund: 50000, approve: true, cancel: owed - 50000},
		{name: "refund of the whole owed amount", refund: owed, cancel: 0},
		{name: "refund above the owed amount", refund: 160000, cancel: 0},
		{name: "refund above the owed amount, awaiting approval", refund: 160000, approve: true, cancel: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			start := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
			threshold := int64(total + 1) // every refund goes out at once
			if tc.approve {
				threshold = 1
			}
			env := apptest.New(t, apptest.Options{Clock: clock.NewFake(start), Shards: 1,
				Payments: payment.Config{RefundApprovalMinor: threshold}})
			req := seatedShow("Goodwill, then cancel", 1, 4)
			req.OnSaleAt = timestamppb.New(start.Add(-time.Hour))
			req.StartsAt = timestamppb.New(start.Add(48 * time.Hour))
			req.CancellationFeeBps = new(int32(1000))
			show := createShow(t, env, req)
			b := newBuyer(t, env, "buyer")
			o := b.order(show.GetShowId(), "A1", "A2")
			p, err := b.pay(o.GetOrderId(), "tok_success")
			require.NoError(t, err)
			require.EqualValues(t, total, p.GetAmount().GetAmountMinor())

			r, err := manualRefund(as(t, env, "ana", auth.RoleAdmin), p.GetPaymentId(), tc.refund)
			require.NoError(t, err)
			want := paymentv1.RefundStatus_REFUND_STATUS_SUCCEEDED
			if tc.approve {
				want = paymentv1.RefundStatus_REFUND_STATUS_AWAITING_APPROVAL
			}
			require.Equal(t, want, r.GetStatus())

			got, err := b.orders.CancelOrder(ctx, connect.NewRequest(&bookingv1.CancelOrderRequest{OrderId: o.GetOrderId()}))
			require.NoError(t, err, "the order is cancelled even when nothing is left to give back")
			require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_CANCELLED, got.Msg.GetOrder().GetStatus())
			if tc.approve {
				_, err := as(t, env, "bob", auth.RoleAdmin).pay.ApproveRefund(ctx,
					connect.NewRequest(&paymentv1.ApproveRefundRequest{RefundId: r.GetRefundId()}))
				require.NoError(t, err)
			}
			settle(t, env)

			var all int64
			for _, g := range env.Gateway.Refunds() {
				all += g.AmountMinor
			}
			require.Equal(t, max(owed, tc.refund), all, "refunded in all: max(total − fee, goodwill)")
			require.Equal(t, tc.refund+tc.cancel, all)
			require.EqualValues(t, all, b.getOrder(o.GetOrderId()).GetRefunded().GetAmountMinor())
			wantJournals := 2
			if tc.cancel == 0 {
				wantJournals = 1
			}
			require.Equal(t, wantJournals, journals(t, env, ledger.KindRefund, o.GetOrderId()))
			trialBalance(t, env) // sums to zero, no unbalanced journal
		})
	}
}
