package sandbox_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/gateway"
	"github.com/seatghor/seatghor/server/gateway/sandbox"
)

// Everything here runs over real HTTP: the sandbox behind httptest, the
// client's own transport, and a webhook receiver that verifies with the
// client's ParseWebhook, as the webhook endpoint will.

const secret = "whsec_test"

// receiver is a webhook endpoint that records every verified delivery.
type receiver struct {
	t      *testing.T
	parser *sandbox.Client
	srv    *httptest.Server

	mu         sync.Mutex
	deliveries []gateway.Event // every accepted delivery, duplicates included
	rejected   []error
	// failFirst answers 500 to this many deliveries before accepting.
	failFirst int
	calls     int
}

func newReceiver(t *testing.T, secrets ...string) *receiver {
	t.Helper()
	if len(secrets) == 0 {
		secrets = []string{secret}
	}
	// ParseWebhook needs no network: the base URL is never called.
	parser, err := sandbox.NewClient(sandbox.ClientConfig{BaseURL: "http://sandbox.invalid", WebhookSecrets: secrets})
	require.NoError(t, err)
	rc := &receiver{t: t, parser: parser}
	rc.srv = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "read", http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.calls++
	if rc.calls <= rc.failFirst {
		http.Error(w, "receiver down", http.StatusInternalServerError)
		return
	}
	ev, err := rc.parser.ParseWebhook(r.Header, body, time.Now())
	if err != nil {
		rc.rejected = append(rc.rejected, err)
		http.Error(w, "bad webhook", http.StatusBadRequest)
		return
	}
	rc.deliveries = append(rc.deliveries, ev)
	w.WriteHeader(http.StatusNoContent)
}

func (rc *receiver) events() []gateway.Event {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]gateway.Event(nil), rc.deliveries...)
}

func (rc *receiver) setFailFirst(n int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.failFirst = n
}

// env is a sandbox on real HTTP with a client and a webhook receiver.
type env struct {
	gw     *sandbox.Server
	url    string
	client *sandbox.Client
	hook   *receiver
}

type envOpts struct {
	cfg    sandbox.Config
	client sandbox.ClientConfig
	// noWebhooks leaves Config.WebhookURL empty.
	noWebhooks bool
}

func newEnv(t *testing.T, o envOpts) *env {
	t.Helper()
	e := &env{}
	if !o.noWebhooks {
		e.hook = newReceiver(t)
		if o.cfg.WebhookURL == "" {
			o.cfg.WebhookURL = e.hook.srv.URL
		}
	}
	if o.cfg.WebhookSecrets == nil {
		o.cfg.WebhookSecrets = []string{secret}
	}
	if o.cfg.WebhookBackoff == 0 {
		o.cfg.WebhookBackoff = 5 * time.Millisecond
	}
	if o.cfg.WebhookOnlyDelay == 0 {
		o.cfg.WebhookOnlyDelay = 50 * time.Millisecond
	}
	e.gw = sandbox.New(o.cfg)
	hs := httptest.NewServer(e.gw)
	// Close the sandbox first: it stops deliveries and hanging handlers, so
	// the HTTP servers close without waiting.
	t.Cleanup(hs.Close)
	t.Cleanup(e.gw.Close)
	e.url = hs.URL

	o.client.BaseURL = hs.URL
	if o.client.WebhookSecrets == nil {
		o.client.WebhookSecrets = []string{secret}
	}
	c, err := sandbox.NewClient(o.client)
	require.NoError(t, err)
	e.client = c
	return e
}

// settle waits until no webhook delivery is under way.
func (e *env) settle(t *testing.T) {
	t.Helper()
	require.Eventually(t, func() bool { return e.gw.Pending() == 0 }, 5*time.Second, 2*time.Millisecond,
		"webhook deliveries still pending")
}

func chargeReq(key, ref string, amount int64, token string) gateway.ChargeRequest {
	return gateway.ChargeRequest{
		IdempotencyKey: key,
		Reference:      ref,
		AmountMinor:    amount,
		Currency:       "BDT",
		Method:         "card",
		Token:          token,
	}
}

func ctx(t *testing.T) context.Context { return t.Context() }
