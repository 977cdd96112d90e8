package api

import (
	"net/http"

	"github.com/seatghor/seatghor/server/payment"
)

// maxWebhookBytes bounds a webhook body; real events are a few KB.
const maxWebhookBytes = 64 << 10

// gatewayWebhook is POST /webhooks/{provider}: the payment gateway's
// webhooks, plain HTTP, which only record (R-6.4,
// payment.Service.ReceiveWebhook). A recorded or ignored event is answered
// 200; a forged, stale or malformed one 4xx, and nothing is stored; one
// that could not be stored 503, so the gateway delivers it again.
func gatewayWebhook(payments *payment.Service) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		verdict, err := payments.ReceiveWebhook(r.Context(), r.PathValue("provider"), r.Header,
			http.MaxBytesReader(w, r.Body, maxWebhookBytes))
		if err != nil {
			http.Error(w, "try again", http.StatusServiceUnavailable)
			return
		}
		switch verdict {
		case payment.WebhookWrongProvider:
			http.Error(w, "unknown provider", http.StatusNotFound)
		case payment.WebhookUnreadable:
			http.Error(w, "body too large or unreadable", http.StatusRequestEntityTooLarge)
		case payment.WebhookForged:
			// A bad or stale signature is 401, anything else about the body 400.
			http.Error(w, "webhook refused: signature", http.StatusUnauthorized)
		case payment.WebhookMalformed:
			http.Error(w, "webhook refused: payload", http.StatusBadRequest)
		case payment.WebhookRecorded, payment.WebhookIgnored:
			w.WriteHeader(http.StatusOK)
		}
	})
}
