package api_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	ledgerv1 "github.com/seatghor/seatghor/gen/seatghor/ledger/v1"
	paymentv1 "github.com/seatghor/seatghor/gen/seatghor/payment/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/gateway/sandbox"
	"github.com/seatghor/seatghor/server/ledger"
	"github.com/seatghor/seatghor/server/payment"
)

// failingRefunds is a platform whose gateway fails every refund, and
// admins may refund up to 100,000 Tk without a second person.
func failingRefunds(t *testing.T) *apptest.Env {
	return apptest.New(t, apptest.Options{Shards: 2,
		Sandbox:  sandbox.Config{Faults: sandbox.Faults{RefundFailRate: 1}},
		Payments: payment.Config{RefundApprovalMinor: 10000000}})
}

// failedRefund refunds amount of a payment as an admin; the gateway fails it.
func failedRefund(t *testing.T, env *apptest.Env, admin clients, paymentID string, amount int64) *paymentv1.Refund {
	t.Helper()
	r, err := manualRefund(admin, paymentID, amount)
	require.NoError(t, err)
	settle(t, env)
	require.Equal(t, paymentv1.RefundStatus_REFUND_STATUS_FAILED, r.GetStatus())
	return r
}

func payoutOf(c clients, showID int64, id string, amount int64) (*ledgerv1.RecordPayoutResponse, error) {
	resp, err := c.ledger.RecordPayout(context.Background(), connect.NewRequest(&ledgerv1.RecordPayoutRequest{
		ShowId: showID, PayoutId: id, Amount: &commonv1.Money{AmountMinor: amount, Currency: "BDT"}}))
	if err != nil {
		return nil, err
	}
	return resp.Msg, nil
}

func settleFailed(c clients, refundID, key string) (*ledgerv1.SettleFailedRefundResponse, error) {
	req := connect.NewRequest(&ledgerv1.SettleFailedRefundRequest{RefundId: refundID,
		Method: ledgerv1.SettlementMethod_SETTLEMENT_METHOD_CASH, Reference: "RCPT-7", Note: "paid at the Gulshan counter"})
	if key != "" {
		req.Header().Set(keyHeader, key)
	}
	resp, err := c.ledger.SettleFailedRefund(context.Background(), req)
	if err != nil {
		return nil, err
	}
	return resp.Msg, nil
}

func unsettled(t *testing.T, c clients, showID int64) []string {
	t.Helper()
	resp, err := c.ledger.ListFailedRefunds(context.Background(), connect.NewRequest(&ledgerv1.ListFailedRefundsRequest{ShowId: showID}))
	require.NoError(t, err)
	var ids []string
	for _, f := range resp.Msg.GetRefunds() {
		ids = append(ids, f.GetRefund().GetRefundId())
	}
	return ids
}

// TestPayoutKeepsBackFailedRefunds (R-7, decision 0293): a refund the
// gateway failed is still owed to the buyer, so a payout keeps its
// operator share back and says so, until an admin settles it another way
// through SettleFailedRefund; the settlement is journalled, listed until
// then, admins only and recorded once.
func TestPayoutKeepsBackFailedRefunds(t *testing.T) {
	ctx := context.Background()
	env := failingRefunds(t)
	show := createShow(t, env, seatedShow("Refund fails", 1, 4)).GetShowId()
	p := paidOrder(t, env, show, "buyer", "A1", "A2") // 1,700 Tk: the operator is owed 1,530 Tk
	ana := as(t, env, "ana", auth.RoleAdmin)
	r := failedRefund(t, env, ana, p.GetPaymentId(), 50000)
	// The refund would take 153,000 − 108,000 (the operator's share of the
	// 120,000 left) = 45,000 from the operator: 108,000 is payable.
	_, err := payoutOf(ana, show, "trf-1", 108001)
	require.Equal(t, connect.CodeFailedPrecondition, connect.CodeOf(err), "the failed refund's share is kept back")
	require.Contains(t, err.Error(), "108000 payable")
	require.Contains(t, err.Error(), "1 failed refund(s) not settled yet")
	res, err := payoutOf(ana, show, "trf-1", 100000)
	require.NoError(t, err)
	require.EqualValues(t, 45000, res.GetHeldBackMinor())
	require.Equal(t, []string{r.GetRefundId()}, res.GetHeldBackFailedRefundIds())
	require.Empty(t, res.GetHeldBackPendingRefundIds())
	require.Contains(t, res.GetHeldBackReason(), "45000 kept back")

	require.Equal(t, []string{r.GetRefundId()}, unsettled(t, ana, show))
	require.Equal(t, []string{r.GetRefundId()}, unsettled(t, ana, 0), "every show")
	buyer := newBuyer(t, env, "buyer")
	_, err = buyer.ledger.ListFailedRefunds(ctx, connect.NewRequest(&ledgerv1.ListFailedRefundsRequest{}))
	require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err))
	_, err = settleFailed(as(t, env, "mallory", auth.RoleOperator), r.GetRefundId(), "")
	require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err))
	_, err = ana.ledger.SettleFailedRefund(ctx, connect.NewRequest(&ledgerv1.SettleFailedRefundRequest{
		RefundId: r.GetRefundId(), Reference: "RCPT-7"}))
	require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err), "a method is required")

	got, err := settleFailed(ana, r.GetRefundId(), "settle-1")
	require.NoError(t, err)
	st := got.GetRefund().GetSettlement()
	require.Equal(t, ledgerv1.SettlementMethod_SETTLEMENT_METHOD_CASH, st.GetMethod())
	require.Equal(t, "RCPT-7", st.GetReference())
	require.Equal(t, "ana", st.GetSettledBy())
	lines := map[string]int64{}
	for _, l := range got.GetTransaction().GetLines() {
		lines[l.GetAccount()] = l.GetAmount().GetAmountMinor()
	}
	require.Equal(t, map[string]int64{ledger.AccountOperatorPayable: 45000, ledger.AccountPlatformRevenue: 5000,
		ledger.AccountBank: -50000}, lines, "the refund's journal, paid from the bank")
	again, err := settleFailed(ana, r.GetRefundId(), "settle-1")
	require.NoError(t, err, "the same request answers the same")
	require.Equal(t, st.GetLedgerTxnId(), again.GetRefund().GetSettlement().GetLedgerTxnId())
	_, err = settleFailed(ana, r.GetRefundId(), "settle-2")
	require.Equal(t, connect.CodeFailedPrecondition, connect.CodeOf(err), "settled once")
	require.Empty(t, unsettled(t, ana, show))

	// The operator had 100,000 of 153,000 paid; the settlement took 45,000
	// back: the rest, 8,000, is payable, and nothing is kept back.
	_, err = payoutOf(ana, show, "trf-2", 8001)
	require.Equal(t, connect.CodeFailedPrecondition, connect.CodeOf(err))
	res, err = payoutOf(ana, show, "trf-2", 8000)
	require.NoError(t, err)
	require.Zero(t, res.GetHeldBackMinor())
	require.Empty(t, res.GetHeldBackFailedRefundIds())
	require.Empty(t, res.GetHeldBackReason())

	bal := trialBalance(t, env)
	require.Zero(t, bal[ledger.AccountOperatorPayable])
	require.EqualValues(t, -100000-8000-50000, bal[ledger.AccountBank])
	require.EqualValues(t, 50000, buyer.getOrder(p.GetOrderId()).GetRefunded().GetAmountMinor(),
		"the order shows the money given back")
}

// TestSettleOnlyFailedRefunds: a refund the gateway made, or one not
// known, is not settled by hand.
func TestSettleOnlyFailedRefunds(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 1, Payments: payment.Config{RefundApprovalMinor: 10000000}})
	show := createShow(t, env, seatedShow("Refund made", 1, 4)).GetShowId()
	p := paidOrder(t, env, show, "buyer", "A1")
	ana := as(t, env, "ana", auth.RoleAdmin)
	r, err := manualRefund(ana, p.GetPaymentId(), 1000)
	require.NoError(t, err)
	settle(t, env)
	_, err = settleFailed(ana, r.GetRefundId(), "")
	require.Equal(t, connect.CodeFailedPrecondition, connect.CodeOf(err), "only a failed refund is settled")
	_, err = settleFailed(ana, "rfd_1000_nosuchrefund00", "")
	require.Equal(t, connect.CodeNotFound, connect.CodeOf(err))
	trialBalance(t, env)
}

// TestPayoutAndSettlementAtOnce (decision 0293): settlements and payouts
// of one show at the same time never pay out what a failed refund still
// takes back. Whatever their order, 126,000 is payable throughout (each
// settlement takes from the operator exactly the share it stops keeping
// back), so a larger payout is always refused and one of that size passes
// once.
func TestPayoutAndSettlementAtOnce(t *testing.T) {
	env := failingRefunds(t)
	show := createShow(t, env, seatedShow("Refunds fail", 1, 4)).GetShowId()
	ana := as(t, env, "ana", auth.RoleAdmin)
	var refunds []string
	for i, seat := range []string{"A1", "A2", "A3", "A4"} {
		p := paidOrder(t, env, show, fmt.Sprintf("buyer-%d", i), seat) // 850 Tk, the operator's 765 Tk
		// Each takes 76,500 − 31,500 = 45,000 from the operator.
		refunds = append(refunds, failedRefund(t, env, ana, p.GetPaymentId(), 50000).GetRefundId())
	}
	const payable = 4*76500 - 4*45000
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for _, id := range refunds {
		wg.Go(func() {
			_, err := settleFailed(ana, id, "")
			errs <- err
		})
	}
	var paid sync.Map
	for i := range 8 {
		wg.Go(func() {
			_, err := payoutOf(ana, show, fmt.Sprintf("big-%d", i), payable+1)
			if connect.CodeOf(err) != connect.CodeFailedPrecondition {
				errs <- fmt.Errorf("a payout above %d: %v", payable, err)
			}
			if _, err := payoutOf(ana, show, fmt.Sprintf("fit-%d", i), payable); err == nil {
				paid.Store(i, true)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	n := 0
	paid.Range(func(any, any) bool { n++; return true })
	require.Equal(t, 1, n, "one payout of everything payable")
	require.Empty(t, unsettled(t, ana, show))
	bal := trialBalance(t, env)
	require.Zero(t, bal[ledger.AccountOperatorPayable], "nothing paid out that the buyers were owed")
}
