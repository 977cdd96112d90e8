package api

import (
	"context"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	ledgerv1 "github.com/seatghor/seatghor/gen/seatghor/ledger/v1"
	"github.com/seatghor/seatghor/server/payment"
)

var mismatchKinds = map[string]ledgerv1.MismatchKind{
	payment.MismatchMissingLocally:   ledgerv1.MismatchKind_MISMATCH_KIND_MISSING_LOCALLY,
	payment.MismatchMissingAtGateway: ledgerv1.MismatchKind_MISMATCH_KIND_MISSING_AT_GATEWAY,
	payment.MismatchAmountDiffers:    ledgerv1.MismatchKind_MISMATCH_KIND_AMOUNT_DIFFERS,
	payment.MismatchDuplicateCapture: ledgerv1.MismatchKind_MISMATCH_KIND_DUPLICATE_CAPTURE,
	payment.MismatchStateDiffers:     ledgerv1.MismatchKind_MISMATCH_KIND_STATE_DIFFERS,
	payment.MismatchLedgerDiffers:    ledgerv1.MismatchKind_MISMATCH_KIND_LEDGER_DIFFERS,
}

var mismatchActions = map[string]ledgerv1.MismatchAction{
	payment.ActionAlerted:       ledgerv1.MismatchAction_MISMATCH_ACTION_ALERTED,
	payment.ActionRefundStarted: ledgerv1.MismatchAction_MISMATCH_ACTION_REFUND_STARTED,
	payment.ActionStateResolved: ledgerv1.MismatchAction_MISMATCH_ACTION_STATE_RESOLVED,
	payment.ActionDryRun:        ledgerv1.MismatchAction_MISMATCH_ACTION_DRY_RUN,
}

// RunReconciliation runs R-6.8's reconciliation for a period (admins only).
// Running it again is safe: every resolution is a conditional write and a
// charge is refunded at most once.
func (h *ledgerHandler) RunReconciliation(ctx context.Context, req *connect.Request[ledgerv1.RunReconciliationRequest]) (*connect.Response[ledgerv1.RunReconciliationResponse], error) {
	if err := ledgerAdminOnly(ctx); err != nil {
		return nil, err
	}
	m := req.Msg
	if m.GetProvider() != "" && m.GetProvider() != h.payments.Provider() {
		return nil, invalidField("provider", "no such payment provider: this platform pays through %s", h.payments.Provider())
	}
	res, err := h.payments.Reconcile(ctx, payment.ReconcileRequest{
		From: m.GetPeriodStart().AsTime(), To: m.GetPeriodEnd().AsTime(), Shard: m.Shard, DryRun: m.GetDryRun(),
	})
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	out := &ledgerv1.RunReconciliationResponse{
		RunId: res.RunID, PeriodStart: timestamppb.New(res.From), PeriodEnd: timestamppb.New(res.To),
		LocalPayments: int64(res.LocalPayments), GatewayRecords: int64(res.GatewayRecords), Matched: int64(res.Matched),
		RefundsStarted: int64(res.RefundsStarted), Resolved: int64(res.Resolved), DryRun: res.DryRun,
		StartedAt: timestamppb.New(res.StartedAt), FinishedAt: timestamppb.New(res.FinishedAt),
	}
	for _, mm := range res.Mismatches {
		x := &ledgerv1.Mismatch{
			Kind: mismatchKinds[mm.Kind], PaymentId: mm.PaymentID, OrderId: mm.OrderID, ShowId: mm.ShowID,
			Provider: h.payments.Provider(), GatewayReference: mm.ChargeID, LocalState: payment.States[mm.LocalStatus],
			GatewayState: mm.GatewayStatus, Action: mismatchActions[mm.Action], Detail: mm.Detail,
		}
		if mm.LocalAmount != 0 {
			x.LocalAmount = money(mm.LocalAmount, mm.Currency)
		}
		if mm.GatewayAmount != 0 {
			x.GatewayAmount = money(mm.GatewayAmount, mm.Currency)
		}
		out.Mismatches = append(out.Mismatches, x)
	}
	return connect.NewResponse(out), nil
}
