package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/seatghor/seatghor/server/gateway"
)

// WebhookStats counts what became of webhook events, for tests that check
// fault injection is deterministic and for the standalone sandbox's logs.
type WebhookStats struct {
	// Events is how many events were emitted.
	Events int
	// Dropped is how many events the DropRate fault never delivered.
	Dropped int
	// Duplicated is how many events the DuplicateRate fault delivered
	// more than once, and ExtraCopies how many copies beyond the first it
	// sent of them (Duplicated, when each went twice).
	Duplicated  int
	ExtraCopies int
	// Reordered is how many events the ReorderRate fault held back.
	Reordered int
	// Attempts is how many POSTs were made, retries included.
	Attempts int
	// Delivered is how many deliveries (copies of events) got a 2xx.
	Delivered int
	// GivenUp is how many deliveries ran out of retries or were cut short
	// by Close.
	GivenUp int
}

// WebhookStats returns the delivery counters so far.
func (s *Server) WebhookStats() WebhookStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// emitLocked records an event about a charge or a refund and starts its
// delivery. The data is a snapshot taken now, as a real gateway sends the
// object as it was when the event happened; receivers must not assume events
// arrive in order or once. The caller holds s.mu.
func (s *Server) emitLocked(typ gateway.EventType, objectID string, c *chargeJSON, rf *refundJSON) {
	now := s.now()
	// One id per (object, type): every retry and duplicate of the event
	// carries it, so the receiver's UNIQUE(event_id) dedupes.
	ev := gateway.Event{ID: newID("evt_", "event", objectID, string(typ)), Type: typ, CreatedAt: now.Truncate(time.Second)}
	wire := eventJSON{ID: ev.ID, Type: string(typ), Created: now.Unix()}
	if c != nil {
		snap := c.toGateway()
		ev.Charge = &snap
		wire.Data = *c
	} else {
		snap := rf.toGateway()
		ev.Refund = &snap
		wire.Data = *rf
	}
	s.events = append(s.events, ev)
	s.stats.Events++
	if s.cfg.WebhookURL == "" || s.closed {
		return
	}
	body, err := json.Marshal(wire)
	if err != nil {
		// Cannot happen for these types; log rather than panic a request.
		s.log.Error("marshal webhook event", slog.String("event_id", ev.ID), slog.Any("error", err))
		return
	}
	fate := s.faults.deliveryFate(ev.ID)
	if fate.drop {
		s.stats.Dropped++
		s.log.Info("injected webhook drop", slog.String("event_id", ev.ID), slog.String("type", string(typ)))
		return
	}
	if fate.copies > 1 {
		s.stats.Duplicated++
		s.stats.ExtraCopies += fate.copies - 1
		s.log.Info("injected webhook duplicate", slog.String("event_id", ev.ID), slog.String("type", string(typ)),
			slog.Int("copies", fate.copies))
	}
	if fate.reordered {
		s.stats.Reordered++
		s.log.Info("injected webhook reorder", slog.String("event_id", ev.ID), slog.String("type", string(typ)))
	}
	for _, delay := range fate.delays {
		s.pending++
		if !s.goLocked(func() { s.deliver(ev.ID, body, delay) }) {
			s.pending--
		}
	}
}

// EventBody is the body the sandbox POSTs for ev (sign it with
// gateway.Sign into the SignatureHeader): for `seatghor chaos`, which
// sends forged and stale events among the real ones, and tests.
func EventBody(ev gateway.Event) ([]byte, error) {
	wire := eventJSON{ID: ev.ID, Type: string(ev.Type), Created: ev.CreatedAt.Unix()}
	switch {
	case ev.Charge != nil:
		wire.Data = chargeFromGateway(*ev.Charge)
	case ev.Refund != nil:
		wire.Data = refundFromGateway(*ev.Refund)
	default:
		return nil, fmt.Errorf("event %s: neither a charge nor a refund", ev.ID)
	}
	return json.Marshal(wire)
}

// deliver sends one copy of an event after delay, retrying with exponential
// backoff until a 2xx or until the retries run out.
func (s *Server) deliver(eventID string, body []byte, delay time.Duration) {
	delivered := false
	defer func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.pending--
		if delivered {
			s.stats.Delivered++
		} else {
			s.stats.GivenUp++
		}
	}()
	if !s.sleep(delay) {
		return
	}
	backoff := s.cfg.WebhookBackoff
	for attempt := 0; attempt <= s.cfg.WebhookRetries; attempt++ {
		if attempt > 0 {
			if !s.sleep(backoff) {
				return
			}
			backoff = min(2*backoff, maxWebhookBackoff)
		}
		err := s.post(eventID, body)
		s.mu.Lock()
		s.stats.Attempts++
		s.mu.Unlock()
		if err == nil {
			delivered = true
			return
		}
		s.log.Warn("webhook delivery failed", slog.String("event_id", eventID),
			slog.Int("attempt", attempt+1), slog.Any("error", err))
	}
	s.log.Error("webhook delivery given up", slog.String("event_id", eventID),
		slog.Int("attempts", s.cfg.WebhookRetries+1))
}

// post makes one delivery attempt. The signature is computed now, at send
// time, so a retry an hour later is not refused as stale.
func (s *Server) post(eventID string, body []byte) error {
	ctx, cancel := context.WithTimeout(s.ctx, s.cfg.WebhookTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.cfg.WebhookURL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("build webhook request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(SignatureHeader, gateway.Sign(s.cfg.WebhookSecrets, s.cfg.Now(), body))
	resp, err := s.cfg.HTTPClient.Do(req)
	if err != nil {
		return fmt.Errorf("post webhook %s: %w", eventID, err)
	}
	// Drain so the connection goes back to the pool.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("post webhook %s: receiver answered %s", eventID, resp.Status)
	}
	return nil
}
