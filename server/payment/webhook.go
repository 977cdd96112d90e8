package payment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/gateway"
)

// maxWebhookBytes bounds a webhook body; real events are a few KB.
const maxWebhookBytes = 64 << 10

// ErrUnroutable means an event names no payment or refund of ours.
var ErrUnroutable = fault.Sentinel(fault.WebhookUnroutable, "event is about nothing of ours")

// WebhookHandler is POST /webhooks/{provider}. Webhooks only record:
// the signature and timestamp are checked on the raw body, the event is
// stored once (event_id is the key), and the answer is 200. Nothing is
// applied here; the processor does that. A forged, stale or
// malformed event is refused with 4xx and nothing is stored.
func (s *Service) WebhookHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("provider") != s.cfg.Provider {
			s.metrics.webhooks.WithLabelValues("rejected").Inc()
			http.Error(w, "unknown provider", http.StatusNotFound)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxWebhookBytes))
		if err != nil {
			s.metrics.webhooks.WithLabelValues("rejected").Inc()
			http.Error(w, "body too large or unreadable", http.StatusRequestEntityTooLarge)
			return
		}
		now := s.now()
		ev, err := s.gw.ParseWebhook(r.Header, body, now)
		if errors.Is(err, gateway.ErrEventTypeUnknown) {
			// Genuine (the signature held) but of a kind we do not act on:
			// acknowledged so it is not sent again, and not stored.
			s.metrics.webhooks.WithLabelValues("ignored").Inc()
			w.WriteHeader(http.StatusOK)
			return
		}
		if err != nil {
			s.metrics.webhooks.WithLabelValues("rejected").Inc()
			s.log.WarnContext(r.Context(), "webhook refused", "err", err)
			http.Error(w, "webhook refused: "+webhookProblem(err), webhookStatus(err))
			return
		}
		result, err := s.storeEvent(r.Context(), ev, body, now)
		switch {
		case errors.Is(err, ErrUnroutable):
			// Signed by the gateway but about nothing of ours: acknowledged,
			// so it is not redelivered forever, and counted.
			s.metrics.webhooks.WithLabelValues("ignored").Inc()
			w.WriteHeader(http.StatusOK)
			return
		case err != nil:
			// Not stored: a 5xx makes the gateway deliver it again.
			s.log.ErrorContext(r.Context(), "webhook not stored", "event", ev.ID, "err", err)
			http.Error(w, "try again", http.StatusServiceUnavailable)
			return
		}
		s.metrics.webhooks.WithLabelValues(result).Inc()
		s.metrics.delay.Observe(now.Sub(ev.CreatedAt).Seconds())
		select {
		case s.wake <- struct{}{}:
		default:
		}
		w.WriteHeader(http.StatusOK)
	})
}

// webhookStatus tells the sender what was wrong: a bad or stale signature
// is 401, anything else about the body 400.
func webhookStatus(err error) int {
	if errors.Is(err, gateway.ErrSignatureMismatch) || errors.Is(err, gateway.ErrSignatureStale) ||
		errors.Is(err, gateway.ErrSignatureMissing) {
		return http.StatusUnauthorized
	}
	return http.StatusBadRequest
}

func webhookProblem(err error) string {
	switch webhookStatus(err) {
	case http.StatusUnauthorized:
		return "signature"
	default:
		return "payload"
	}
}

// reference is our id an event is about.
func reference(ev gateway.Event) string {
	switch {
	case ev.Charge != nil:
		return ev.Charge.Reference
	case ev.Refund != nil:
		return ev.Refund.Reference
	}
	return ""
}

// storeEvent stores a verified event on the shard of the payment or refund
// it is about; a second delivery of the same event id is a no-op.
func (s *Service) storeEvent(ctx context.Context, ev gateway.Event, raw []byte, now time.Time) (string, error) {
	ref := reference(ev)
	pool, _, err := s.router.ForID(ctx, ref)
	if err != nil {
		return "", fmt.Errorf("event %s about %q: %w", ev.ID, ref, ErrUnroutable)
	}
	parsed, err := json.Marshal(ev)
	if err != nil {
		return "", fmt.Errorf("encode event %s: %w", ev.ID, err)
	}
	tag, err := pool.Exec(ctx, `
		INSERT INTO payment_events (event_id, provider, event_type, reference, raw, event, occurred_at, received_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (event_id) DO NOTHING`,
		ev.ID, s.cfg.Provider, string(ev.Type), ref, raw, parsed, ev.CreatedAt, now)
	if err != nil {
		return "", fmt.Errorf("store event %s: %w", ev.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return "duplicate", nil
	}
	return "stored", nil
}
