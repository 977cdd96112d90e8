package sandbox

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/seatghor/seatghor/server/gateway"
)

// handleCreateRefund gives back part or all of a captured charge. A refund
// is a new operation with its own idempotency key; it succeeds at
// once and sends refund.succeeded, unless Faults.RefundFailRate makes it
// fail (refund.failed; no money moves, and a retry with the key answers the
// same failure).
func (s *Server) handleCreateRefund(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get(IdempotencyKeyHeader)
	if key == "" {
		writeError(w, http.StatusBadRequest, "idempotency_key_required", "the Idempotency-Key header is required")
		return
	}
	var req refundRequestJSON
	if !decodeBody(w, r, &req) {
		return
	}
	switch {
	case req.Reference == "":
		writeError(w, http.StatusBadRequest, "invalid_request", "reference is required")
		return
	case req.ChargeID == "":
		writeError(w, http.StatusBadRequest, "invalid_request", "charge_id is required")
		return
	case req.AmountMinor <= 0:
		writeError(w, http.StatusBadRequest, "invalid_request", "amount_minor must be positive")
		return
	case !validCurrency(req.Currency):
		writeError(w, http.StatusBadRequest, "invalid_request", "currency must be an ISO 4217 code such as BDT")
		return
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if prev := s.refundByKey[key]; prev != nil {
		if prev.Reference != req.Reference || prev.ChargeID != req.ChargeID ||
			prev.AmountMinor != req.AmountMinor || prev.Currency != req.Currency {
			writeError(w, http.StatusUnprocessableEntity, "idempotency_key_reused",
				"the Idempotency-Key was used for another refund")
			return
		}
		w.Header().Set(ReplayedHeader, "true")
		writeJSON(w, http.StatusOK, *prev)
		return
	}
	c := s.chargeByID[req.ChargeID]
	switch {
	case c == nil:
		writeError(w, http.StatusNotFound, "charge_not_found", "no such charge")
		return
	case c.Status != string(gateway.StatusSucceeded):
		writeError(w, http.StatusUnprocessableEntity, "charge_not_captured", "only a captured charge can be refunded")
		return
	case c.Currency != req.Currency:
		writeError(w, http.StatusUnprocessableEntity, "currency_mismatch", "the refund's currency differs from the charge's")
		return
	case req.AmountMinor > c.AmountMinor-c.RefundedMinor:
		writeError(w, http.StatusUnprocessableEntity, "amount_exceeds_refundable",
			fmt.Sprintf("only %d of the charge is left to refund", c.AmountMinor-c.RefundedMinor))
		return
	}
	rf := &refundJSON{
		ID:             newID("re_", "refund", key),
		IdempotencyKey: key,
		Reference:      req.Reference,
		ChargeID:       c.ID,
		Status:         string(gateway.StatusSucceeded),
		AmountMinor:    req.AmountMinor,
		Currency:       req.Currency,
		CreatedAt:      s.now(),
	}
	s.refundByKey[key] = rf
	if s.faults.refundFails(key) {
		rf.Status = string(gateway.StatusFailed)
		s.log.Info("injected refund failure", slog.String("idempotency_key", key))
		s.emitLocked(gateway.EventRefundFailed, rf.ID, nil, rf)
		writeJSON(w, http.StatusOK, *rf)
		return
	}
	c.RefundedMinor += rf.AmountMinor
	s.refunds = append(s.refunds, rf)
	s.emitLocked(gateway.EventRefundSucceeded, rf.ID, nil, rf)
	writeJSON(w, http.StatusOK, *rf)
}

func (s *Server) handleGetRefund(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Query().Get("idempotency_key")
	if key == "" {
		writeError(w, http.StatusBadRequest, "invalid_request", "give idempotency_key")
		return
	}
	s.mu.Lock()
	var rf refundJSON
	p, found := s.refundByKey[key]
	if found {
		rf = *p
	}
	s.mu.Unlock()
	if !found {
		writeError(w, http.StatusNotFound, "refund_not_found", "no refund for this idempotency key")
		return
	}
	writeJSON(w, http.StatusOK, rf)
}

// handleSettlements is the settlement report: every charge captured
// and every refund made in [from, to), with fees, for reconciliation.
func (s *Server) handleSettlements(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	from, err := time.Parse(time.RFC3339, q.Get("from"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", "from must be an RFC 3339 time")
		return
	}
	to, err := time.Parse(time.RFC3339, q.Get("to"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", "to must be an RFC 3339 time")
		return
	}
	if to.Before(from) {
		writeError(w, http.StatusBadRequest, "invalid_request", "to is before from")
		return
	}
	in := func(t time.Time) bool { return !t.Before(from) && t.Before(to) }
	rep := reportJSON{From: from, To: to, Charges: []chargeJSON{}, Refunds: []refundJSON{}}
	s.mu.Lock()
	for _, c := range s.charges {
		if c.Status == string(gateway.StatusSucceeded) && in(c.CapturedAt) {
			rep.Charges = append(rep.Charges, *c)
		}
	}
	for _, rf := range s.refunds {
		if in(rf.CreatedAt) {
			rep.Refunds = append(rep.Refunds, *rf)
		}
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, rep)
}
