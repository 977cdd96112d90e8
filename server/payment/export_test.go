package payment

import (
	"context"
	"time"

	"github.com/seatghor/seatghor/server/gateway"
)

// StoreEvent stores a verified webhook event as the webhook does, for the
// tests of the event processor (the webhook's HTTP side is the API's).
func (s *Service) StoreEvent(ctx context.Context, ev gateway.Event, raw []byte, now time.Time) (string, error) {
	return s.storeEvent(ctx, ev, raw, now)
}
