package ledger

import (
	"fmt"
	"math/bits"
)

// Commission is the platform's share of amountMinor at bps basis points
// (1 bps = 0.01 %), by the written rounding rule (R-7.5,
// docs/decisions/0008-commission-rounding.md): floor(amount × bps / 10000).
// The platform never rounds in its own favour; the paisa a split leaves
// over goes to the operator, whose share is always amount − commission, so
// the parts add up to the whole exactly.
//
// bps is clamped to 0…10000 (0 % … 100 %). A negative amount gets the
// negated commission of its absolute value, so the rule is symmetric.
func Commission(amountMinor, bps int64) int64 {
	bps = min(max(bps, 0), 10000)
	abs := uint64(amountMinor)
	if amountMinor < 0 {
		abs = -abs // two's complement: right for math.MinInt64 too
	}
	// abs × bps fits 128 bits; the quotient fits 64 because bps ≤ 10000.
	hi, lo := bits.Mul64(abs, uint64(bps))
	q, _ := bits.Div64(hi, lo, 10000)
	if amountMinor < 0 {
		return -int64(q)
	}
	return int64(q)
}

// operatorShare is what the operator gets of amountMinor: the rest after
// the commission, so the two never differ from the whole.
func operatorShare(amountMinor, bps int64) int64 { return amountMinor - Commission(amountMinor, bps) }

// lines drops zero lines: a zero line means nothing and the database
// refuses it (e.g. the commission line at 0 bps).
func lines(ls ...Line) []Line {
	out := make([]Line, 0, len(ls))
	for _, l := range ls {
		if l.AmountMinor != 0 {
			out = append(out, l)
		}
	}
	return out
}

// BookingJournal records a confirmed booking of amountMinor: the
// gateway clearing account is debited with the whole amount, the operator
// is credited with its share and the platform with its commission.
func BookingJournal(txnID, ref string, showID int64, currency string, amountMinor, commissionBps int64) Journal {
	c := Commission(amountMinor, commissionBps)
	return Journal{
		TxnID: txnID, Kind: KindBooking, Reference: ref, ShowID: showID, Currency: currency,
		Description: fmt.Sprintf("booking %s", ref),
		Lines: lines(
			Line{AccountGatewayClearing, amountMinor},
			Line{AccountOperatorPayable, -(amountMinor - c)},
			Line{AccountPlatformRevenue, -c},
		),
	}
}

// FeeJournal records the gateway's fee for a capture: the fee is an expense,
// taken out of what the gateway holds for us. A zero fee gives a journal
// without lines, which Post refuses: post no fee journal then.
func FeeJournal(txnID, ref string, showID int64, currency string, feeMinor int64) Journal {
	return Journal{
		TxnID: txnID, Kind: KindGatewayFee, Reference: ref, ShowID: showID, Currency: currency,
		Description: fmt.Sprintf("gateway fee %s", ref),
		Lines: lines(
			Line{AccountGatewayFees, feeMinor},
			Line{AccountGatewayClearing, -feeMinor},
		),
	}
}

// RefundJournal mirrors a booking for a refund of refundMinor out of
// totalMinor, the amount still captured before this refund (the booking's
// amount less earlier refunds). Operator and platform give back the
// difference of their shares before and after the refund, e.g. the
// operator opShare(total) − opShare(total − refund), never a share of the
// refund rounded on its own: so partial refunds telescope, and refunding
// everything, in one go or in parts, returns every account of the booking
// exactly to zero.
func RefundJournal(txnID, ref string, showID int64, currency string, totalMinor, refundMinor, commissionBps int64) Journal {
	rest := totalMinor - refundMinor
	return Journal{
		TxnID: txnID, Kind: KindRefund, Reference: ref, ShowID: showID, Currency: currency,
		Description: fmt.Sprintf("refund %s", ref),
		Lines: lines(
			Line{AccountOperatorPayable, operatorShare(totalMinor, commissionBps) - operatorShare(rest, commissionBps)},
			Line{AccountPlatformRevenue, Commission(totalMinor, commissionBps) - Commission(rest, commissionBps)},
			Line{AccountGatewayClearing, -refundMinor},
		),
	}
}

// Reverse returns the journal that undoes j line by line, under txnID: the
// only way to fix a posted mistake.
func Reverse(j Journal, txnID string) Journal {
	r := Journal{
		TxnID: txnID, Kind: KindReversal, Reference: j.Reference, ShowID: j.ShowID, Currency: j.Currency,
		Description: fmt.Sprintf("reverses %s", j.TxnID), ReversesTxnID: j.TxnID,
		Lines: make([]Line, len(j.Lines)),
	}
	for i, l := range j.Lines {
		r.Lines[i] = Line{l.Account, -l.AmountMinor}
	}
	return r
}

// SettledRefundJournal records a refund the gateway failed that was paid
// to the buyer another way (decision 0293): the booking mirrored for the
// refunded part, like RefundJournal, paid from the bank, since the captured
// money stays with the gateway and reaches the bank with its settlement.
func SettledRefundJournal(txnID, ref string, showID int64, currency string, totalMinor, refundMinor, commissionBps int64) Journal {
	j := RefundJournal(txnID, ref, showID, currency, totalMinor, refundMinor, commissionBps)
	j.Description = fmt.Sprintf("failed refund of %s paid another way", ref)
	for i := range j.Lines {
		if j.Lines[i].Account == AccountGatewayClearing {
			j.Lines[i].Account = AccountBank
		}
	}
	return j
}

// CounterCash is the cash account of an organisation's counter (decision
// 0443): debited with its cash sales, credited with the cash its staff give
// back. A shift's report is this account's movement over the shift's
// journals.
func CounterCash(organizationID, counterID string) string {
	return "counter_cash:" + organizationID + ":" + counterID
}

// CounterOwed is the cash an organisation's counter owes buyers of trips
// the operator cancelled (a liability: credited when the trip is
// cancelled, debited when the cash is paid out at the counter).
func CounterOwed(organizationID, counterID string) string {
	return "counter_owed:" + organizationID + ":" + counterID
}

// OnAccount is j with the money side moved from the gateway's clearing
// account to account: a booking or refund journal of cash paid at a
// counter rather than through the gateway, split the same way.
func OnAccount(j Journal, account string) Journal {
	lines := make([]Line, len(j.Lines))
	for i, l := range j.Lines {
		if l.Account == AccountGatewayClearing {
			l.Account = account
		}
		lines[i] = l
	}
	j.Lines = lines
	return j
}

// CashPayoutJournal records cash owed for a cancelled trip paid out of a
// counter's drawer: the debt is settled with cash.
func CashPayoutJournal(txnID, ref string, showID int64, currency, owed, cash string, amountMinor int64) Journal {
	return Journal{
		TxnID: txnID, Kind: KindSettlement, Reference: ref, ShowID: showID, Currency: currency,
		Description: fmt.Sprintf("cash owed for %s paid out at the counter", ref),
		Lines:       lines(Line{owed, amountMinor}, Line{cash, -amountMinor}),
	}
}
