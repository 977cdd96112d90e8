package api_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/gateway"
)

// TestWebhookRouteAnswersWhatIsNotOurs: the gateway's webhook route
// answers a genuine event sent for another provider 404, a body over
// 64 KB 413, and a genuine event about nothing of ours 200 (so it is not
// sent again); none of them is stored.
func TestWebhookRouteAnswersWhatIsNotOurs(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 1})
	now := time.Now()
	stranger := gateway.Charge{ID: "ch_stranger", IdempotencyKey: "k", Reference: "not-ours", Status: gateway.StatusSucceeded,
		AmountMinor: 100, Currency: "BDT", CreatedAt: now, CapturedAt: now}
	body, sig := signedEvent(t, "evt_stranger", "charge.succeeded", now, stranger, apptest.WebhookSecret)

	post := func(provider string, body []byte, sig string) int {
		req, err := http.NewRequest(http.MethodPost, env.URL+"/webhooks/"+provider, bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Sandbox-Signature", sig)
		resp, err := env.HTTP.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusNotFound, post("another", body, sig), "another provider")
	huge := []byte(`{"id": "evt_huge", "pad": "` + strings.Repeat("x", 64<<10) + `"}`)
	require.Equal(t, http.StatusRequestEntityTooLarge,
		post("sandbox", huge, gateway.Sign([]string{apptest.WebhookSecret}, now, huge)), "over 64 KB")
	require.Equal(t, http.StatusOK, post("sandbox", body, sig), "about nothing of ours: acknowledged")

	var stored int
	require.NoError(t, env.App.Router.Shards()[0].QueryRow(context.Background(),
		`SELECT count(*) FROM payment_events`).Scan(&stored))
	require.Zero(t, stored)
}
