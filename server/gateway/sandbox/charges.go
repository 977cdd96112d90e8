package sandbox

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/seatghor/seatghor/server/gateway"
)

// Test tokens choose what a charge does. An empty token asks for the
// redirect flow; any other non-empty token behaves like TokenSuccess.
const (
	// TokenSuccess captures at once.
	TokenSuccess = "tok_success"
	// TokenDecline fails with failure code "declined".
	TokenDecline = "tok_decline"
	// TokenInsufficientFunds fails with failure code "insufficient_funds".
	TokenInsufficientFunds = "tok_insufficient_funds"
	// TokenTimeoutApplied captures, but the first request for the key gets
	// no answer (R-6.2: the caller must treat it as UNKNOWN). A retry with
	// the same key answers the captured charge.
	TokenTimeoutApplied = "tok_timeout_applied"
	// TokenTimeoutNotApplied: the first request for the key gets no answer
	// and nothing is recorded. A retry with the same key captures.
	TokenTimeoutNotApplied = "tok_timeout_not_applied"
	// TokenWebhookOnly answers pending; the charge succeeds after
	// Config.WebhookOnlyDelay and only the webhook (or a status query) tells.
	TokenWebhookOnly = "tok_webhook_only"
	// TokenDuplicateCapture is a gateway bug: it captures, and also records
	// a second captured charge with another id for the same reference, for
	// reconciliation to find and refund.
	TokenDuplicateCapture = "tok_duplicate_capture"
	// TokenWrongAmount is a gateway bug: it captures WrongAmountExtraMinor
	// more than was asked, for the payment service's handling of a capture
	// of another amount to be exercised.
	TokenWrongAmount = "tok_wrong_amount"
)

// WrongAmountExtraMinor is what a TokenWrongAmount charge captures beyond
// the amount asked (1 Tk).
const WrongAmountExtraMinor = 100

// Failure codes of a failed charge.
const (
	FailureDeclined          = "declined"
	FailureInsufficientFunds = "insufficient_funds"
	FailureCancelledByBuyer  = "cancelled_by_buyer"
)

// ErrNotPending means a charge was already decided: it cannot be approved or
// declined again.
var ErrNotPending = errors.New("sandbox: charge is not pending")

func (s *Server) handleCreateCharge(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get(IdempotencyKeyHeader)
	if key == "" {
		// no money operation without a key.
		writeError(w, http.StatusBadRequest, "idempotency_key_required", "the Idempotency-Key header is required")
		return
	}
	var req chargeRequestJSON
	if !decodeBody(w, r, &req) {
		return
	}
	if msg := validateCharge(req); msg != "" {
		writeError(w, http.StatusBadRequest, "invalid_request", msg)
		return
	}
	base := s.publicBase(r)

	s.mu.Lock()
	k := s.chargeKeys[key]
	if k == nil {
		k = &chargeKey{}
		s.chargeKeys[key] = k
	}
	if k.charge != nil && !sameCharge(k.charge, req) {
		s.mu.Unlock()
		writeError(w, http.StatusUnprocessableEntity, "idempotency_key_reused",
			"the Idempotency-Key was used for a charge with another reference, amount or currency")
		return
	}
	k.attempts++
	ordinal := s.ordinalLocked(req.Reference)
	fate := s.faults.chargeFate(key, k.attempts, ordinal)
	if k.attempts == 1 {
		switch req.Token {
		case TokenTimeoutApplied:
			fate = chargeFate{timeout: true, applied: true}
		case TokenTimeoutNotApplied:
			fate = chargeFate{timeout: true, applied: false}
		}
	}
	replayed := k.charge != nil
	if !replayed && (!fate.timeout || fate.applied) {
		k.charge = s.createChargeLocked(key, req, base)
	}
	var answer chargeJSON
	if k.charge != nil {
		answer = *k.charge
	}
	hangFor := s.faults.HangFor
	attempt := k.attempts
	s.mu.Unlock()

	if fate.timeout {
		// the caller hears nothing, whether or not the charge exists.
		// A replay can time out too; a later attempt answers the first
		// result.
		s.log.Info("injected charge timeout", slog.String("idempotency_key", key),
			slog.Int("attempt", attempt), slog.Int("reference_ordinal", ordinal),
			slog.Bool("applied", answer.ID != ""), slog.Duration("hang_for", hangFor))
		s.hang(r, hangFor)
	}
	if replayed {
		w.Header().Set(ReplayedHeader, "true")
	}
	writeJSON(w, http.StatusOK, answer)
}

// createChargeLocked makes the charge a request asks for and emits its
// webhook. The caller holds s.mu.
func (s *Server) createChargeLocked(key string, req chargeRequestJSON, base string) *chargeJSON {
	c := &chargeJSON{
		ID:             newID("ch_", "charge", key),
		IdempotencyKey: key,
		Reference:      req.Reference,
		Status:         string(gateway.StatusPending),
		AmountMinor:    req.AmountMinor,
		Currency:       req.Currency,
		Method:         req.Method,
		ReturnURL:      req.ReturnURL,
		CreatedAt:      s.now(),
	}
	s.addChargeLocked(c)
	switch req.Token {
	case "":
		// the buyer approves on the gateway's own page.
		c.RedirectURL = base + "/pay/" + c.ID
	case TokenDecline:
		s.failLocked(c, FailureDeclined)
	case TokenInsufficientFunds:
		s.failLocked(c, FailureInsufficientFunds)
	case TokenWebhookOnly:
		s.goLocked(func() {
			if !s.sleep(s.cfg.WebhookOnlyDelay) {
				return
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			if c.Status == string(gateway.StatusPending) {
				s.captureLocked(c)
			}
		})
	case TokenWrongAmount:
		c.askedMinor = c.AmountMinor
		c.AmountMinor += WrongAmountExtraMinor
		s.captureLocked(c)
	case TokenDuplicateCapture:
		s.captureLocked(c)
		dup := *c
		dup.ID = newID("ch_", "charge-duplicate", key)
		dup.RefundedMinor = 0
		s.addChargeLocked(&dup)
		s.emitLocked(gateway.EventChargeSucceeded, dup.ID, &dup, nil)
	default:
		s.captureLocked(c)
	}
	return c
}

func (s *Server) addChargeLocked(c *chargeJSON) {
	s.charges = append(s.charges, c)
	s.chargeByID[c.ID] = c
}

// captureLocked moves a pending charge to succeeded and tells the webhook.
func (s *Server) captureLocked(c *chargeJSON) {
	c.Status = string(gateway.StatusSucceeded)
	c.CapturedAt = s.now()
	c.FeeMinor = s.fee(c.AmountMinor)
	s.emitLocked(gateway.EventChargeSucceeded, c.ID, c, nil)
}

// failLocked moves a pending charge to failed and tells the webhook.
func (s *Server) failLocked(c *chargeJSON, code string) {
	c.Status = string(gateway.StatusFailed)
	c.FailureCode = code
	s.emitLocked(gateway.EventChargeFailed, c.ID, c, nil)
}

// fee is FeeBps of amount, rounded half up, plus the fixed fee.
func (s *Server) fee(amount int64) int64 {
	return (amount*s.cfg.FeeBps+5000)/10000 + s.cfg.FeeFixedMinor
}

// ordinalLocked numbers references in the order they are first seen, for
// Faults.SlowWindow.
func (s *Server) ordinalLocked(reference string) int {
	n, ok := s.ordinals[reference]
	if !ok {
		n = len(s.ordinals) + 1
		s.ordinals[reference] = n
	}
	return n
}

func (s *Server) publicBase(r *http.Request) string {
	if s.cfg.PublicURL != "" {
		return s.cfg.PublicURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func (s *Server) handleListCharges(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	switch {
	case q.Get("idempotency_key") != "":
		key := q.Get("idempotency_key")
		s.mu.Lock()
		var c chargeJSON
		k := s.chargeKeys[key]
		found := k != nil && k.charge != nil
		if found {
			c = *k.charge
		}
		s.mu.Unlock()
		if !found {
			writeError(w, http.StatusNotFound, "charge_not_found", "no charge for this idempotency key")
			return
		}
		writeJSON(w, http.StatusOK, c)
	case q.Get("reference") != "":
		ref := q.Get("reference")
		list := chargeListJSON{Data: []chargeJSON{}}
		s.mu.Lock()
		for _, c := range s.charges {
			if c.Reference == ref {
				list.Data = append(list.Data, *c)
			}
		}
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, list)
	default:
		writeError(w, http.StatusBadRequest, "invalid_request", "give idempotency_key or reference")
	}
}

func (s *Server) handleGetCharge(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	var c chargeJSON
	p, found := s.chargeByID[r.PathValue("id")]
	if found {
		c = *p
	}
	s.mu.Unlock()
	if !found {
		writeError(w, http.StatusNotFound, "charge_not_found", "no such charge")
		return
	}
	writeJSON(w, http.StatusOK, c)
}

// Approve approves a pending charge as the buyer would on the hosted page:
// it is captured and its webhook sent. It fails with gateway.ErrNotFound or
// ErrNotPending.
func (s *Server) Approve(chargeID string) (gateway.Charge, error) {
	return s.decide(chargeID, true)
}

// Decline declines a pending charge as the buyer would on the hosted page:
// it fails with code "cancelled_by_buyer" and its webhook is sent.
func (s *Server) Decline(chargeID string) (gateway.Charge, error) {
	return s.decide(chargeID, false)
}

func (s *Server) decide(chargeID string, approve bool) (gateway.Charge, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chargeByID[chargeID]
	if c == nil {
		return gateway.Charge{}, fmt.Errorf("sandbox: decide charge %s: %w", chargeID, gateway.ErrNotFound)
	}
	if c.Status != string(gateway.StatusPending) {
		return c.toGateway(), fmt.Errorf("sandbox: decide charge %s (%s): %w", chargeID, c.Status, ErrNotPending)
	}
	if approve {
		s.captureLocked(c)
	} else {
		s.failLocked(c, FailureCancelledByBuyer)
	}
	return c.toGateway(), nil
}

func sameCharge(c *chargeJSON, req chargeRequestJSON) bool {
	asked := c.AmountMinor
	if c.askedMinor != 0 { // a TokenWrongAmount charge: a retry asks what the first asked
		asked = c.askedMinor
	}
	return c.Reference == req.Reference && asked == req.AmountMinor && c.Currency == req.Currency
}

func validateCharge(req chargeRequestJSON) string {
	switch {
	case req.Reference == "":
		return "reference is required"
	case req.AmountMinor <= 0:
		return "amount_minor must be positive"
	case !validCurrency(req.Currency):
		return "currency must be an ISO 4217 code such as BDT"
	}
	switch req.Method {
	case "", "card", "mfs", "internet_banking":
	default:
		return "method must be card, mfs or internet_banking"
	}
	return ""
}

func validCurrency(c string) bool {
	if len(c) != 3 {
		return false
	}
	for _, r := range c {
		if r < 'A' || r > 'Z' {
			return false
		}
	}
	return true
}
