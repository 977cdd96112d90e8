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

// ErrUnroutable means an event names no payment or refund of ours.
var ErrUnroutable = fault.Sentinel(fault.WebhookUnroutable, "event is about nothing of ours")

// WebhookVerdict is how one delivery of the gateway's webhook was taken;
// the API edge answers the gateway by it (server/api).
type WebhookVerdict int

// The verdicts.
const (
	// WebhookRecorded: the event is stored, now or by an earlier delivery.
	WebhookRecorded WebhookVerdict = iota
	// WebhookIgnored: genuine (the signature held) but of a type we do not
	// act on, or about nothing of ours; acknowledged so it is not sent
	// again, and not stored.
	WebhookIgnored
	// WebhookWrongProvider: sent for a provider that is not ours.
	WebhookWrongProvider
	// WebhookUnreadable: the body could not be read (too large).
	WebhookUnreadable
	// WebhookForged: the signature is missing, wrong or stale.
	WebhookForged
	// WebhookMalformed: the body is not an event we can read.
	WebhookMalformed
)

// ReceiveWebhook takes one delivery of provider's webhook. Webhooks only
// record: the signature and timestamp are checked on the raw body,
// the event is stored once (event_id is the key), and nothing is applied
// here; the processor does that. A forged, stale or malformed event
// is refused and nothing is stored. An error means a genuine event was not
// stored (the verdict then means nothing): the gateway should deliver it
// again.
func (s *Service) ReceiveWebhook(ctx context.Context, provider string, header http.Header, body io.Reader) (WebhookVerdict, error) {
	if provider != s.cfg.Provider {
		s.metrics.webhooks.WithLabelValues("rejected").Inc()
		return WebhookWrongProvider, nil
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		s.metrics.webhooks.WithLabelValues("rejected").Inc()
		return WebhookUnreadable, nil
	}
	now := s.now()
	ev, err := s.gw.ParseWebhook(header, raw, now)
	if errors.Is(err, gateway.ErrEventTypeUnknown) {
		s.metrics.webhooks.WithLabelValues("ignored").Inc()
		return WebhookIgnored, nil
	}
	if err != nil {
		s.metrics.webhooks.WithLabelValues("rejected").Inc()
		s.log.WarnContext(ctx, "webhook refused", "err", err)
		if errors.Is(err, gateway.ErrSignatureMismatch) || errors.Is(err, gateway.ErrSignatureStale) ||
			errors.Is(err, gateway.ErrSignatureMissing) {
			return WebhookForged, nil
		}
		return WebhookMalformed, nil
	}
	result, err := s.storeEvent(ctx, ev, raw, now)
	switch {
	case errors.Is(err, ErrUnroutable):
		// Signed by the gateway but about nothing of ours: acknowledged,
		// so it is not redelivered forever, and counted.
		s.metrics.webhooks.WithLabelValues("ignored").Inc()
		return WebhookIgnored, nil
	case err != nil:
		s.log.ErrorContext(ctx, "webhook not stored", "event", ev.ID, "err", err)
		return 0, err
	}
	s.metrics.webhooks.WithLabelValues(result).Inc()
	s.metrics.delay.Observe(now.Sub(ev.CreatedAt).Seconds())
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return WebhookRecorded, nil
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
		storedEventID(ev.ID), s.cfg.Provider, string(ev.Type), ref, raw, parsed, ev.CreatedAt, now)
	if err != nil {
		return "", fmt.Errorf("store event %s: %w", ev.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return "duplicate", nil
	}
	return "stored", nil
}
