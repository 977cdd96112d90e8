package payment

import (
	"context"
	"encoding/base64"

	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/audit"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/idempotency"
	"github.com/seatghor/seatghor/server/ledger"
)

// Ways a failed refund is paid to the buyer outside the gateway (decision
// 0293); the refunds table's CHECK lists the same words.
const (
	SettleCash         = "cash"
	SettleBankTransfer = "bank_transfer"
	SettleMFS          = "mfs"
)

// FailedRefund is a refund the gateway failed, as admins see it: owed to
// the buyer until it is settled another way.
type FailedRefund struct {
	Refund
	ShowID    int64
	LastError string
	FailedAt  time.Time
	// Settlement is nil until an admin settles it.
	Settlement *Settlement
}

// Settlement is how a failed refund was paid to the buyer.
type Settlement struct {
	Method, Reference, Note, By, TxnID string
	At                                 time.Time
}

const failedColumns = refundColumns + `, last_error, updated_at, settled_at, settled_by, settle_method,
	settle_reference, settle_note`

func scanFailed(row pgx.Row) (FailedRefund, error) {
	var f FailedRefund
	var settledAt *time.Time
	var st Settlement
	r, err := scanRefund(row, &f.LastError, &f.FailedAt, &settledAt, &st.By, &st.Method, &st.Reference, &st.Note)
	if err != nil {
		return FailedRefund{}, err
	}
	f.Refund, f.ShowID, f.FailedAt = r.view(), r.ShowID, f.FailedAt.UTC()
	if settledAt != nil {
		st.At, st.TxnID = settledAt.UTC(), settledTxnID(r.ID)
		f.Settlement = &st
	}
	return f, nil
}

// settledTxnID names the journal of a settled failed refund; the refund's
// own "refund:<id>" is never posted for it, the gateway having made nothing.
func settledTxnID(refundID string) string { return "refund-settled:" + refundID }

// SettleFailedRefund records that the money of a refund the gateway failed
// was paid to the buyer another way (decision 0293): the refund row keeps
// how, the reference and who; the ledger gets the refund's journal paid
// from the bank; the payment's and order's refunded amounts and the
// RefundIssued event follow as for a refund the gateway made; payouts stop
// keeping it back. It takes the show's payout lock shared, as recording a
// refund does, so a payout at the same time sees both the journal and the
// settled mark, or neither. Admins only (the API checks the role).
func (s *Service) SettleFailedRefund(ctx context.Context, adminID, refundID, method, reference, note string) (FailedRefund, error) {
	if !slices.Contains([]string{SettleCash, SettleBankTransfer, SettleMFS}, method) {
		return FailedRefund{}, &fault.Error{Reason: fault.PaymentInvalid, Field: "method", Message: "cash, bank transfer or MFS"}
	}
	pool, err := s.shardOfID(ctx, "refund", refundID)
	if err != nil {
		return FailedRefund{}, err
	}
	now := s.now()
	return idempotency.Do(ctx, pool, codec, idempotency.Options{Now: now, Wait: s.cfg.IdempotencyWait, Target: refundID},
		func(tx pgx.Tx) (FailedRefund, error) {
			r, err := getRefund(ctx, tx, refundID, false)
			if err != nil {
				return FailedRefund{}, err
			}
			if err := ledger.LockPayoutsShared(ctx, tx, r.ShowID); err != nil {
				return FailedRefund{}, err
			}
			f, err := scanFailed(tx.QueryRow(ctx, `SELECT `+failedColumns+` FROM refunds WHERE refund_id = $1 FOR UPDATE`, refundID))
			if err != nil {
				return FailedRefund{}, fmt.Errorf("read refund %s: %w", refundID, err)
			}
			switch {
			case f.Status != "failed":
				return FailedRefund{}, fault.New(fault.PaymentNotAllowed, "refund %s is %s, not failed", refundID, f.Status)
			case f.Settlement != nil:
				return FailedRefund{}, fault.New(fault.PaymentNotAllowed, "refund %s was settled already (%s %s)", refundID,
					f.Settlement.Method, f.Settlement.Reference)
			}
			j, err := settledJournal(ctx, tx, r)
			if err != nil {
				return FailedRefund{}, err
			}
			if _, err := tx.Exec(ctx, `
				UPDATE refunds SET settled_at = $2, settled_by = $3, settle_method = $4, settle_reference = $5,
				                   settle_note = $6, updated_at = $2
				WHERE refund_id = $1 AND status = 'failed' AND settled_at IS NULL`,
				refundID, now, adminID, method, reference, note); err != nil {
				return FailedRefund{}, fmt.Errorf("settle refund %s: %w", refundID, err)
			}
			if err := givenBack(ctx, tx, r, j, method+":"+reference, now); err != nil {
				return FailedRefund{}, err
			}
			if err := audit.RecordOnShard(ctx, tx, r.ShowID, audit.Entry{At: now,
				Actor: audit.Actor{Kind: audit.ActorAdmin, ID: adminID}, Action: "refund.settle", Target: "refund:" + refundID,
				Detail: map[string]any{"reason": note, "order_id": r.OrderID, "before": map[string]any{"status": "failed"},
					"after": map[string]any{"status": "settled", "settle_method": method, "reference": reference,
						"amount_minor": r.AmountMinor}}}); err != nil {
				return FailedRefund{}, err
			}
			f.Settlement = &Settlement{Method: method, Reference: reference, Note: note, By: adminID, TxnID: j.TxnID, At: now}
			return f, nil
		})
}

// settledJournal is the journal of a failed refund paid from the bank: a
// booked refund mirrors the booking for its part, like the gateway's would
// have (decision 0008), taking what is still captured after the journalled
// refunds; an automatic one pays what was owed back (refunds_payable).
func settledJournal(ctx context.Context, tx pgx.Tx, r refund) (ledger.Journal, error) {
	txnID := settledTxnID(r.ID)
	if !booked(r.Reason) {
		return ledger.Journal{
			TxnID: txnID, Kind: ledger.KindRefund, Reference: r.ID, ShowID: r.ShowID, Currency: r.Currency,
			Description: "failed refund of a capture without a booking (" + r.Reason + ") paid another way",
			Lines: []ledger.Line{
				{Account: ledger.AccountRefundsPayable, AmountMinor: r.AmountMinor},
				{Account: ledger.AccountBank, AmountMinor: -r.AmountMinor},
			},
		}, nil
	}
	commissionBps, before, err := sharesBefore(ctx, tx, r)
	if err != nil {
		return ledger.Journal{}, err
	}
	return ledger.SettledRefundJournal(txnID, r.ID, r.ShowID, r.Currency, before, r.AmountMinor, commissionBps), nil
}

// ListFailedRefunds pages through the failed refunds not settled yet, of
// one show or all (showID 0), over every shard, by refund id.
func (s *Service) ListFailedRefunds(ctx context.Context, showID int64, pageSize int, pageToken string) ([]FailedRefund, string, error) {
	return pageRefunds(ctx, s, `SELECT `+failedColumns+` FROM refunds WHERE status = 'failed' AND settled_at IS NULL`,
		showID, pageSize, pageToken, scanFailed, func(f FailedRefund) string { return f.ID })
}

// AwaitingRefund is a manual refund waiting for a second admin, with
// the show whose takings would pay it.
type AwaitingRefund struct {
	Refund
	ShowID int64
}

// ListAwaitingApproval pages through the refunds awaiting a second admin's
// approval, of one show or all (showID 0), over every shard, by refund id:
// the four-eyes queue of the console.
func (s *Service) ListAwaitingApproval(ctx context.Context, showID int64, pageSize int, pageToken string) ([]AwaitingRefund, string, error) {
	return pageRefunds(ctx, s, `SELECT `+refundColumns+` FROM refunds WHERE status = 'awaiting_approval'`,
		showID, pageSize, pageToken, func(row pgx.Row) (AwaitingRefund, error) {
			r, err := scanRefund(row)
			return AwaitingRefund{Refund: r.view(), ShowID: r.ShowID}, err
		}, func(a AwaitingRefund) string { return a.ID })
}

// pageRefunds pages through the refunds selectSQL picks (a SELECT … FROM
// refunds WHERE …, of one show or all when showID is 0), over every shard,
// by refund id. The page token is the last refund id of the page.
func pageRefunds[T any](ctx context.Context, s *Service, selectSQL string, showID int64, pageSize int, pageToken string,
	scan func(pgx.Row) (T, error), id func(T) string) ([]T, string, error) {
	if pageSize <= 0 {
		pageSize = 50
	}
	after := ""
	if pageToken != "" {
		b, err := base64.RawURLEncoding.DecodeString(pageToken)
		if err != nil || !strings.HasPrefix(string(b), "rfd") {
			return nil, "", &fault.Error{Reason: fault.PaymentInvalid, Field: "page_token", Message: "not a token of this list"}
		}
		after = string(b)
	}
	var out []T
	for _, pool := range s.router.Shards() {
		rows, err := pool.Query(ctx, selectSQL+`
			  AND ($1 = 0 OR show_id = $1) AND refund_id COLLATE "C" > $2
			ORDER BY refund_id COLLATE "C" LIMIT $3`, showID, after, pageSize+1)
		if err != nil {
			return nil, "", fmt.Errorf("list refunds on %s: %w", pool.Name, err)
		}
		got, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (T, error) { return scan(row) })
		if err != nil {
			return nil, "", fmt.Errorf("list refunds on %s: %w", pool.Name, err)
		}
		out = append(out, got...)
	}
	// Byte order, as COLLATE "C" sorts.
	slices.SortFunc(out, func(a, b T) int { return strings.Compare(id(a), id(b)) })
	if len(out) <= pageSize {
		return out, "", nil
	}
	out = out[:pageSize]
	return out, base64.RawURLEncoding.EncodeToString([]byte(id(out[pageSize-1]))), nil
}
