package payment

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/gateway"
	"github.com/seatghor/seatghor/server/ledger"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/shard"
)

// ReconcileRequest names the period to reconcile.
type ReconcileRequest struct {
	From, To time.Time
	// Shard limits the run to one shard; nil means all.
	Shard *int32
	// DryRun lists the mismatches and changes nothing.
	DryRun bool
}

// The kinds of mismatch (the API's MismatchKind).
const (
	MismatchMissingLocally   = "missing_locally"
	MismatchMissingAtGateway = "missing_at_gateway"
	MismatchAmountDiffers    = "amount_differs"
	MismatchDuplicateCapture = "duplicate_capture"
	MismatchStateDiffers     = "state_differs"
	MismatchLedgerDiffers    = "ledger_differs"
)

// The actions a run takes (the API's MismatchAction).
const (
	ActionAlerted       = "alerted"
	ActionRefundStarted = "refund_started"
	ActionStateResolved = "state_resolved"
	ActionDryRun        = "dry_run"
)

// Mismatch is one disagreement between our records and the gateway's.
type Mismatch struct {
	Kind          string
	PaymentID     string
	OrderID       string
	ShowID        int64
	ChargeID      string
	Currency      string
	LocalAmount   int64
	GatewayAmount int64
	LocalStatus   Status
	GatewayStatus string
	Action        string
	Detail        string
}

// ReconcileResult is what one run found and did.
type ReconcileResult struct {
	RunID                                  string
	From, To                               time.Time
	LocalPayments, GatewayRecords, Matched int
	RefundsStarted, Resolved               int
	Mismatches                             []Mismatch
	DryRun                                 bool
	StartedAt, FinishedAt                  time.Time
}

// Reconcile matches the gateway's settlement report for a period against
// our payments and ledger. Every mismatch is listed, logged and
// counted; where the rule is clear it is resolved: a capture we did not
// apply is applied (the booking is confirmed or the money refunded), a
// second capture is refunded, and an attempt left open is settled from the
// gateway's verified status. The rest waits for a person.
func (s *Service) Reconcile(ctx context.Context, req ReconcileRequest) (ReconcileResult, error) {
	res := ReconcileResult{RunID: shard.NewID("rec", 0), From: req.From, To: req.To, DryRun: req.DryRun, StartedAt: s.now()}
	report, err := observe(s.metrics, "report", func() (gateway.Report, error) { return s.gw.Report(ctx, req.From, req.To) })
	if err != nil {
		return res, fmt.Errorf("settlement report: %w", err)
	}
	res.GatewayRecords = len(report.Charges)
	byRef := map[string][]gateway.Charge{}
	var refs []string
	for _, c := range report.Charges {
		if c.Status != gateway.StatusSucceeded {
			continue
		}
		if _, seen := byRef[c.Reference]; !seen {
			refs = append(refs, c.Reference)
		}
		byRef[c.Reference] = append(byRef[c.Reference], c)
	}
	inReport := map[string]bool{}
	for _, ref := range refs {
		pool, index, err := s.router.ForID(ctx, ref)
		if req.Shard != nil && err == nil && int32(index) != *req.Shard {
			continue
		}
		for _, c := range byRef[ref] {
			inReport[c.ID] = true
		}
		if err != nil {
			res.add(s, Mismatch{Kind: MismatchMissingLocally, ChargeID: byRef[ref][0].ID, GatewayAmount: byRef[ref][0].AmountMinor,
				Currency: byRef[ref][0].Currency, Action: ActionAlerted, Detail: "the gateway captured money for " + ref + ", which is not ours"})
			continue
		}
		if err := s.reconcileCharges(ctx, pool, ref, byRef[ref], req.DryRun, &res); err != nil {
			return res, err
		}
	}
	for i, pool := range s.router.Shards() {
		if req.Shard != nil && int32(i) != *req.Shard {
			continue
		}
		if err := s.reconcileLocal(ctx, pool, req, inReport, &res); err != nil {
			return res, err
		}
	}
	res.FinishedAt = s.now()
	s.log.InfoContext(ctx, "reconciliation", "run", res.RunID, "from", req.From, "to", req.To, "local", res.LocalPayments,
		"gateway", res.GatewayRecords, "matched", res.Matched, "mismatches", len(res.Mismatches),
		"refunds_started", res.RefundsStarted, "resolved", res.Resolved, "dry_run", req.DryRun)
	return res, nil
}

func (r *ReconcileResult) add(s *Service, m Mismatch) {
	if r.DryRun {
		m.Action = ActionDryRun
	} else {
		s.metrics.mismatch(m.Kind)
	}
	r.Mismatches = append(r.Mismatches, m)
	s.log.Warn("reconciliation mismatch", "run", r.RunID, "kind", m.Kind, "payment", m.PaymentID, "charge", m.ChargeID,
		"action", m.Action, "detail", m.Detail)
}

// reconcileCharges compares the captures of one reference with our payment.
func (s *Service) reconcileCharges(ctx context.Context, pool *pg.Pool, ref string, charges []gateway.Charge, dry bool, res *ReconcileResult) error {
	p, err := getPayment(ctx, pool, ref, false)
	if fault.ReasonOf(err) == fault.PaymentNotFound {
		c := charges[0]
		res.add(s, Mismatch{Kind: MismatchMissingLocally, ChargeID: c.ID, GatewayAmount: c.AmountMinor, Currency: c.Currency,
			Action: ActionAlerted, Detail: "the gateway captured money for payment " + ref + ", which we have no record of"})
		return nil
	}
	if err != nil {
		return err
	}
	res.LocalPayments++
	// Our own capture first (the one applied, else the one with our key),
	// so that any other is the one refunded.
	ordered := slices.Clone(charges)
	slices.SortStableFunc(ordered, func(a, b gateway.Charge) int { return rank(p, a) - rank(p, b) })
	for i, c := range ordered {
		m := Mismatch{PaymentID: p.ID, OrderID: p.OrderID, ShowID: p.ShowID, ChargeID: c.ID, Currency: c.Currency,
			LocalAmount: p.AmountMinor, GatewayAmount: c.AmountMinor, LocalStatus: p.Status, GatewayStatus: string(c.Status)}
		ours := i == 0 && rank(p, c) < 2
		refunding, err := refundRecorded(ctx, pool, c.ID)
		if err != nil {
			return err
		}
		switch {
		case !ours && refunding:
			res.Matched++ // a second capture already being given back
			continue
		case !ours:
			m.Kind, m.Action, m.Detail = MismatchDuplicateCapture, ActionRefundStarted, "a second capture for the same payment"
		case (c.AmountMinor != p.AmountMinor || c.Currency != p.Currency) && refunding:
			res.Matched++ // a capture of another amount already being given back (decision 0061)
			continue
		case c.AmountMinor != p.AmountMinor || c.Currency != p.Currency:
			m.Kind, m.Action, m.Detail = MismatchAmountDiffers, ActionRefundStarted, "the gateway captured another amount; it is given back"
		case p.Status != StatusSucceeded:
			m.Kind, m.Action, m.Detail = MismatchStateDiffers, ActionStateResolved, "captured at the gateway, "+string(p.Status)+" here"
		default:
			if ok, err := s.ledgerHas(ctx, pool, p, c); err != nil {
				return err
			} else if !ok {
				m.Kind, m.Action, m.Detail = MismatchLedgerDiffers, ActionAlerted, "the capture has no journal in the ledger"
				res.add(s, m)
				continue
			}
			res.Matched++
			continue
		}
		if !dry {
			if err := s.Apply(ctx, c); err != nil {
				return fmt.Errorf("apply charge %s: %w", c.ID, err)
			}
			after, err := getPayment(ctx, pool, p.ID, false)
			if err != nil {
				return err
			}
			if m.Kind == MismatchDuplicateCapture || m.Kind == MismatchAmountDiffers || after.Outcome == "refund" ||
				after.Status == StatusFailed {
				m.Action = ActionRefundStarted
				res.RefundsStarted++
			} else {
				res.Resolved++
			}
			p = after
		}
		res.add(s, m)
	}
	return nil
}

// rank orders the captures of a payment: the one applied, then the one sent
// with the payment's key, then the rest.
func rank(p Payment, c gateway.Charge) int {
	switch {
	case p.GatewayChargeID != "" && c.ID == p.GatewayChargeID:
		return 0
	case p.GatewayChargeID == "" && c.IdempotencyKey == p.GatewayKey:
		return 1
	default:
		return 2
	}
}

// refundRecorded tells whether a refund of the charge is recorded.
func refundRecorded(ctx context.Context, pool *pg.Pool, chargeID string) (bool, error) {
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM refunds WHERE gateway_charge_id = $1`, chargeID).Scan(&n); err != nil {
		return false, fmt.Errorf("refunds of charge %s: %w", chargeID, err)
	}
	return n > 0, nil
}

// ledgerHas tells whether a succeeded payment's capture is in the ledger:
// as a booking, or as money owed back.
func (s *Service) ledgerHas(ctx context.Context, pool *pg.Pool, p Payment, c gateway.Charge) (bool, error) {
	has, err := ledger.HasJournal(ctx, pool, "booking:"+p.OrderID, "capture:"+c.ID)
	if err != nil {
		return false, fmt.Errorf("ledger of payment %s: %w", p.ID, err)
	}
	return has, nil
}

// reconcileLocal looks at our side: captures the report does not list, and
// attempts still open, which are settled from the gateway's status.
func (s *Service) reconcileLocal(ctx context.Context, pool *pg.Pool, req ReconcileRequest, inReport map[string]bool, res *ReconcileResult) error {
	rows, err := pool.Query(ctx, `
		SELECT `+paymentColumns+` FROM payments
		WHERE (captured_at >= $1 AND captured_at < $2)
		   OR (status IN ('pending', 'unknown') AND created_at < $2)`, req.From, req.To)
	if err != nil {
		return fmt.Errorf("payments of the period on %s: %w", pool.Name, err)
	}
	local, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Payment, error) { return scanPayment(r) })
	if err != nil {
		return fmt.Errorf("payments of the period on %s: %w", pool.Name, err)
	}
	for _, p := range local {
		m := Mismatch{PaymentID: p.ID, OrderID: p.OrderID, ShowID: p.ShowID, ChargeID: p.GatewayChargeID,
			Currency: p.Currency, LocalAmount: p.AmountMinor, LocalStatus: p.Status}
		switch {
		case p.Status == StatusSucceeded && !inReport[p.GatewayChargeID]:
			res.LocalPayments++
			m.Kind, m.Action, m.Detail = MismatchMissingAtGateway, ActionAlerted, "succeeded here, not in the gateway's report"
			res.add(s, m)
		case p.open():
			res.LocalPayments++
			if req.DryRun {
				m.Kind, m.Detail = MismatchStateDiffers, "still "+string(p.Status)+" here"
				res.add(s, m)
				continue
			}
			if err := s.resolve(ctx, pool, p); err != nil {
				return err
			}
			after, err := getPayment(ctx, pool, p.ID, false)
			if err != nil {
				return err
			}
			if after.Status != p.Status {
				res.Resolved++
				m.Kind, m.Action, m.Detail = MismatchStateDiffers, ActionStateResolved, string(p.Status)+" resolved to "+string(after.Status)
				res.add(s, m)
			}
		}
	}
	return nil
}
