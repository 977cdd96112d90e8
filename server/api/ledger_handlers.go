package api

import (
	"context"
	"log/slog"
	"math"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	ledgerv1 "github.com/seatghor/seatghor/gen/seatghor/ledger/v1"
	"github.com/seatghor/seatghor/server/audit"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/ledger"
	"github.com/seatghor/seatghor/server/payment"
)

// ledgerHandler serves the ledger and reconciliation to admins.
type ledgerHandler struct {
	svc *ledger.Service
	// payments runs reconciliation against the gateway.
	payments *payment.Service
	// booking and manager answer a show's sales (GetShowSales): its places
	// and channels, and who may read them (the show's managers and admins).
	booking *booking.Service
	manager func(ctx context.Context, showID int64, verb string) (audit.Actor, error)
	// catalog and orgManager answer an organisation's sales: its shows,
	// and who may read them (its managers and admins).
	catalog    *catalog.Service
	orgManager func(ctx context.Context, orgID string, refused error) (audit.Actor, error)
	log        *slog.Logger
}

// ledgerAdminOnly refuses everyone but admins: the ledger is finance data.
func ledgerAdminOnly(ctx context.Context) error {
	p, ok := auth.FromContext(ctx)
	if !ok {
		return errNotSignedIn
	}
	if !p.Is(auth.RoleAdmin) {
		return fault.New(fault.PermissionDenied, "only admins read the ledger")
	}
	return nil
}

// ledgerErr answers the ledger's errors by the error table.
func (h *ledgerHandler) ledgerErr(ctx context.Context, err error) error {
	return toConnect(ctx, h.log, err)
}

func (h *ledgerHandler) GetTrialBalance(ctx context.Context, req *connect.Request[ledgerv1.GetTrialBalanceRequest]) (*connect.Response[ledgerv1.GetTrialBalanceResponse], error) {
	if err := ledgerAdminOnly(ctx); err != nil {
		return nil, err
	}
	tb, err := h.svc.TrialBalance(ctx, req.Msg.Shard, ledgerTime(req.Msg.GetAsOf()))
	if err != nil {
		return nil, h.ledgerErr(ctx, err)
	}
	resp := &ledgerv1.GetTrialBalanceResponse{
		SumMinor:           proto.Int64(tb.SumMinor),
		UnbalancedJournals: proto.Int32(int32(min(tb.UnbalancedJournals, math.MaxInt32))),
		Balanced:           tb.Balanced(),
		AsOf:               timestamppb.New(tb.AsOf),
	}
	for _, a := range tb.Accounts {
		resp.Accounts = append(resp.Accounts, &ledgerv1.AccountBalance{
			Account: a.Account, Currency: a.Currency, BalanceMinor: proto.Int64(a.BalanceMinor),
			DebitMinor: a.DebitMinor, CreditMinor: a.CreditMinor, LineCount: a.LineCount,
		})
	}
	for _, t := range tb.Totals {
		resp.Totals = append(resp.Totals, &commonv1.Money{Currency: t.Currency, AmountMinor: t.SumMinor})
	}
	for _, s := range tb.Shards {
		resp.Shards = append(resp.Shards, int32(s))
	}
	return connect.NewResponse(resp), nil
}

func (h *ledgerHandler) ListJournal(ctx context.Context, req *connect.Request[ledgerv1.ListJournalRequest]) (*connect.Response[ledgerv1.ListJournalResponse], error) {
	if err := ledgerAdminOnly(ctx); err != nil {
		return nil, err
	}
	m := req.Msg
	f := ledger.Filter{Shard: m.Shard, ShowID: m.GetShowId(), Account: m.GetAccount(), Reference: m.GetReference(),
		Kind: ledgerKindOf[m.GetKind()], PageSize: int(m.GetPageSize()), PageToken: m.GetPageToken()}
	f.CreatedAfter, f.CreatedBefore = ledgerTime(m.GetCreatedAfter()), ledgerTime(m.GetCreatedBefore())
	txns, next, err := h.svc.ListJournal(ctx, f)
	if err != nil {
		return nil, h.ledgerErr(ctx, err)
	}
	resp := &ledgerv1.ListJournalResponse{NextPageToken: next}
	for _, p := range txns {
		resp.Transactions = append(resp.Transactions, journalProto(p))
	}
	return connect.NewResponse(resp), nil
}

func journalProto(p ledger.Posted) *ledgerv1.JournalTransaction {
	t := &ledgerv1.JournalTransaction{
		TxnId: p.TxnID, Kind: ledgerKindProto[p.Kind], Reference: p.Reference, ShowId: p.ShowID, Shard: int32(p.Shard),
		Description: p.Description, ReversesTxnId: p.ReversesTxnID, CreatedAt: timestamppb.New(p.CreatedAt),
	}
	for _, l := range p.Lines {
		t.Lines = append(t.Lines, &ledgerv1.JournalLine{Account: l.Account, Amount: money(l.AmountMinor, p.Currency)})
	}
	return t
}

// ledgerTime is an optional timestamp as the ledger takes it: the zero
// time when unset.
func ledgerTime(ts *timestamppb.Timestamp) time.Time {
	if ts == nil {
		return time.Time{}
	}
	return ts.AsTime()
}

var ledgerKindProto = map[ledger.Kind]ledgerv1.TransactionKind{
	ledger.KindBooking:         ledgerv1.TransactionKind_TRANSACTION_KIND_BOOKING,
	ledger.KindGatewayFee:      ledgerv1.TransactionKind_TRANSACTION_KIND_GATEWAY_FEE,
	ledger.KindRefund:          ledgerv1.TransactionKind_TRANSACTION_KIND_REFUND,
	ledger.KindCancellationFee: ledgerv1.TransactionKind_TRANSACTION_KIND_CANCELLATION_FEE,
	ledger.KindPayout:          ledgerv1.TransactionKind_TRANSACTION_KIND_PAYOUT,
	ledger.KindReversal:        ledgerv1.TransactionKind_TRANSACTION_KIND_REVERSAL,
	ledger.KindSettlement:      ledgerv1.TransactionKind_TRANSACTION_KIND_SETTLEMENT,
}

// ledgerKindOf is ledgerKindProto inverted; UNSPECIFIED maps to "" (any kind).
var ledgerKindOf = func() map[ledgerv1.TransactionKind]ledger.Kind {
	m := make(map[ledgerv1.TransactionKind]ledger.Kind, len(ledgerKindProto))
	for k, v := range ledgerKindProto {
		m[v] = k
	}
	return m
}()

// RecordPayout records a payout to a show's operator (admins only); the
// answer says what was kept back for refunds and why (decision 0293).
func (h *ledgerHandler) RecordPayout(ctx context.Context, req *connect.Request[ledgerv1.RecordPayoutRequest]) (*connect.Response[ledgerv1.RecordPayoutResponse], error) {
	if err := ledgerAdminOnly(ctx); err != nil {
		return nil, err
	}
	m := req.Msg
	p, err := h.svc.RecordPayout(ctx, m.GetShowId(), m.GetPayoutId(), m.GetAmount().GetCurrency(), m.GetAmount().GetAmountMinor())
	if err != nil {
		return nil, h.ledgerErr(ctx, err)
	}
	return connect.NewResponse(&ledgerv1.RecordPayoutResponse{
		Transaction: journalProto(p.Posted), Duplicate: p.Duplicate,
		HeldBackMinor: proto.Int64(p.Held.Minor), HeldBackFailedRefundIds: p.Held.Failed,
		HeldBackPendingRefundIds: p.Held.Pending, HeldBackReason: p.Held.Reason(),
	}), nil
}

var settleMethods = map[ledgerv1.SettlementMethod]string{
	ledgerv1.SettlementMethod_SETTLEMENT_METHOD_CASH:          payment.SettleCash,
	ledgerv1.SettlementMethod_SETTLEMENT_METHOD_BANK_TRANSFER: payment.SettleBankTransfer,
	ledgerv1.SettlementMethod_SETTLEMENT_METHOD_MFS:           payment.SettleMFS,
}

func failedRefundProto(f payment.FailedRefund) *ledgerv1.FailedRefund {
	out := &ledgerv1.FailedRefund{Refund: refundProto(f.Refund), ShowId: f.ShowID, LastError: f.LastError,
		FailedAt: timestamppb.New(f.FailedAt)}
	if st := f.Settlement; st != nil {
		out.Settlement = &ledgerv1.Settlement{Reference: st.Reference, Note: st.Note, SettledBy: st.By,
			SettledAt: timestamppb.New(st.At), LedgerTxnId: st.TxnID}
		for k, v := range settleMethods {
			if v == st.Method {
				out.Settlement.Method = k
			}
		}
	}
	return out
}

// ListFailedRefunds lists the failed refunds not settled yet (admins only).
func (h *ledgerHandler) ListFailedRefunds(ctx context.Context, req *connect.Request[ledgerv1.ListFailedRefundsRequest]) (*connect.Response[ledgerv1.ListFailedRefundsResponse], error) {
	if err := ledgerAdminOnly(ctx); err != nil {
		return nil, err
	}
	m := req.Msg
	got, next, err := h.payments.ListFailedRefunds(ctx, m.GetShowId(), int(m.GetPageSize()), m.GetPageToken())
	if err != nil {
		return nil, h.ledgerErr(ctx, err)
	}
	resp := &ledgerv1.ListFailedRefundsResponse{NextPageToken: next}
	for _, f := range got {
		resp.Refunds = append(resp.Refunds, failedRefundProto(f))
	}
	return connect.NewResponse(resp), nil
}

// ListRefundsToApprove lists the refunds awaiting a second admin (admins
// only: only they may approve one, R-10).
func (h *ledgerHandler) ListRefundsToApprove(ctx context.Context, req *connect.Request[ledgerv1.ListRefundsToApproveRequest]) (*connect.Response[ledgerv1.ListRefundsToApproveResponse], error) {
	if _, err := refundRights(ctx); err != nil {
		return nil, err
	}
	m := req.Msg
	got, next, err := h.payments.ListAwaitingApproval(ctx, m.GetShowId(), int(m.GetPageSize()), m.GetPageToken())
	if err != nil {
		return nil, h.ledgerErr(ctx, err)
	}
	resp := &ledgerv1.ListRefundsToApproveResponse{NextPageToken: next}
	for _, r := range got {
		resp.Refunds = append(resp.Refunds, &ledgerv1.RefundToApprove{Refund: refundProto(r.Refund), ShowId: r.ShowID})
	}
	return connect.NewResponse(resp), nil
}

// SettleFailedRefund records a failed refund paid to the buyer another way
// (admins only, decision 0293).
func (h *ledgerHandler) SettleFailedRefund(ctx context.Context, req *connect.Request[ledgerv1.SettleFailedRefundRequest]) (*connect.Response[ledgerv1.SettleFailedRefundResponse], error) {
	admin, err := refundRights(ctx)
	if err != nil {
		return nil, err
	}
	m := req.Msg
	f, err := h.payments.SettleFailedRefund(ctx, admin, m.GetRefundId(), settleMethods[m.GetMethod()], m.GetReference(), m.GetNote())
	if err != nil {
		return nil, h.ledgerErr(ctx, err)
	}
	posted, _, err := h.svc.ListJournal(ctx, ledger.Filter{ShowID: f.ShowID, Kind: ledger.KindRefund,
		Reference: f.ID, PageSize: 1})
	if err != nil {
		return nil, h.ledgerErr(ctx, err)
	}
	resp := &ledgerv1.SettleFailedRefundResponse{Refund: failedRefundProto(f)}
	if len(posted) == 1 {
		resp.Transaction = journalProto(posted[0])
	}
	return connect.NewResponse(resp), nil
}
