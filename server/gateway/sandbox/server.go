// Package sandbox is a fake payment gateway that behaves like a real one over
// HTTP — idempotency keys, hosted approval pages, signed webhooks with
// retries, a settlement report — and can be told to misbehave the way real
// ones do (timeouts that were or were not applied, duplicated, lost and
// reordered webhooks, a duplicate capture). It also holds the Go adapter
// (Client) that turns its wire format into the gateway port's types.
//
// Seatghor runs it in-process in dev mode and in tests, and standalone as
// `seatghor gateway`; the payment service cannot tell it from a real
// provider, which is the point: are tested
// against the same failures production will see.
package sandbox

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"html/template"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/seatghor/seatghor/server/gateway"
)

// Config configures a sandbox gateway. The zero value works: no auth, no
// webhooks, no faults.
type Config struct {
	// APIKey, when set, is required as "Authorization: Bearer <APIKey>" on
	// every /v1 call. The hosted payment pages need no key (the buyer's
	// browser opens them).
	APIKey string
	// WebhookURL receives the webhook events; empty sends none (events are
	// still recorded, see Events).
	WebhookURL string
	// WebhookSecrets sign every event; each one yields a v1 entry, so
	// secrets can be rotated (gateway.Sign). A receiver verifies nothing
	// unless this is set.
	WebhookSecrets []string
	// WebhookRetries is how many times a delivery is retried after a non-2xx
	// answer or a transport error, with exponential backoff; 0 means 5, a
	// negative value means no retries.
	WebhookRetries int
	// WebhookBackoff is the wait before the first retry, doubled each time
	// up to 30 s; 0 means 100 ms.
	WebhookBackoff time.Duration
	// WebhookTimeout bounds one delivery attempt; 0 means 5 s.
	WebhookTimeout time.Duration
	// WebhookOnlyDelay is how long a tok_webhook_only charge stays pending
	// before it succeeds and its webhook is sent; 0 means 1 s.
	WebhookOnlyDelay time.Duration
	// FeeBps is the fee on a captured charge in basis points (rounded half
	// up); 0 means 175 (1.75 %), a negative value means none.
	FeeBps int64
	// FeeFixedMinor is added to the fee of every captured charge.
	FeeFixedMinor int64
	// Now stamps charges, refunds, events and signatures; nil means
	// time.Now. Inject a fake clock to test settlement windows and stale
	// signatures. Waits (hangs, backoff, delays) use real time.
	Now func() time.Time
	// PublicURL is the base of the hosted page URLs (redirect_url); empty
	// means the scheme and Host of the request that created the charge.
	PublicURL string
	// Faults are the initial faults; see SetFaults.
	Faults Faults
	// Logger logs deliveries and injected faults; nil discards.
	Logger *slog.Logger
	// HTTPClient delivers webhooks; nil means a client of its own.
	HTTPClient *http.Client
}

const (
	defaultWebhookRetries   = 5
	defaultWebhookBackoff   = 100 * time.Millisecond
	maxWebhookBackoff       = 30 * time.Second
	defaultWebhookTimeout   = 5 * time.Second
	defaultWebhookOnlyDelay = time.Second
	defaultFeeBps           = 175
	maxBodyBytes            = 1 << 20
)

func (c Config) withDefaults() Config {
	switch {
	case c.WebhookRetries == 0:
		c.WebhookRetries = defaultWebhookRetries
	case c.WebhookRetries < 0:
		c.WebhookRetries = 0
	}
	if c.WebhookBackoff <= 0 {
		c.WebhookBackoff = defaultWebhookBackoff
	}
	if c.WebhookTimeout <= 0 {
		c.WebhookTimeout = defaultWebhookTimeout
	}
	if c.WebhookOnlyDelay <= 0 {
		c.WebhookOnlyDelay = defaultWebhookOnlyDelay
	}
	switch {
	case c.FeeBps == 0:
		c.FeeBps = defaultFeeBps
	case c.FeeBps < 0:
		c.FeeBps = 0
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	c.PublicURL = strings.TrimRight(c.PublicURL, "/")
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.HTTPClient == nil {
		// A transport of its own: Close can drop its idle connections
		// without touching anyone else's.
		c.HTTPClient = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	c.WebhookSecrets = append([]string(nil), c.WebhookSecrets...)
	return c
}

// Server is a sandbox gateway: an http.Handler. Safe for concurrent use.
// Close it to stop webhook delivery. Its API (JSON, snake_case, money as
// amount_minor + currency; errors as {"error":{"code","message"}}):
//
//	POST /v1/charges            Idempotency-Key; {reference, amount_minor, currency, method, token, return_url}
//	GET  /v1/charges?idempotency_key=K   one charge, or 404
//	GET  /v1/charges?reference=R         {"data": [charges]}
//	GET  /v1/charges/{id}
//	POST /v1/refunds            Idempotency-Key; {reference, charge_id, amount_minor, currency}
//	GET  /v1/refunds?idempotency_key=K
//	GET  /v1/settlements?from=RFC3339&to=RFC3339
//	GET  /pay/{id}, POST /pay/{id}/approve, POST /pay/{id}/decline   the hosted page
//
// A repeated POST with a known key answers the charge or refund as it is
// now (a pending charge may have succeeded since), with header
// Idempotent-Replayed: true. Injected timeouts end the handler with
// panic(http.ErrAbortHandler); a recovering middleware in front of the
// Server must re-panic it.
type Server struct {
	cfg  Config
	mux  *http.ServeMux
	log  *slog.Logger
	page *template.Template
	// ownClient: cfg.HTTPClient was made here, so Close may close its
	// idle connections.
	ownClient bool

	// ctx ends at Close; it stops hangs, delayed work and deliveries.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once

	// mu guards everything below. One lock for the whole state: a sandbox
	// is about correctness under concurrency, not throughput, and a single
	// lock makes "same key → same charge" obviously true.
	mu     sync.Mutex
	closed bool
	faults Faults
	// charges in creation order, duplicates included.
	charges    []*chargeJSON
	chargeByID map[string]*chargeJSON
	// chargeKeys: idempotency key → what the sandbox knows of it.
	chargeKeys map[string]*chargeKey
	// ordinals: reference → the order in which it was first seen (1-based).
	ordinals    map[string]int
	refunds     []*refundJSON
	refundByKey map[string]*refundJSON
	events      []gateway.Event
	pending     int
	stats       WebhookStats
}

// chargeKey is one idempotency key of a charge.
type chargeKey struct {
	attempts int
	// charge is nil while nothing was applied (a timeout that was not).
	charge *chargeJSON
}

// New returns a sandbox gateway.
func New(cfg Config) *Server {
	ownClient := cfg.HTTPClient == nil
	cfg = cfg.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		cfg:         cfg,
		log:         cfg.Logger.With(slog.String("component", "sandbox-gateway")),
		ctx:         ctx,
		cancel:      cancel,
		faults:      cfg.Faults,
		chargeByID:  map[string]*chargeJSON{},
		chargeKeys:  map[string]*chargeKey{},
		ordinals:    map[string]int{},
		refundByKey: map[string]*refundJSON{},
		page:        template.Must(template.New("pay").Parse(payPageHTML)),
		ownClient:   ownClient,
	}
	mux := http.NewServeMux()
	mux.Handle("POST /v1/charges", s.auth(s.handleCreateCharge))
	mux.Handle("GET /v1/charges", s.auth(s.handleListCharges))
	mux.Handle("GET /v1/charges/{id}", s.auth(s.handleGetCharge))
	mux.Handle("POST /v1/refunds", s.auth(s.handleCreateRefund))
	mux.Handle("GET /v1/refunds", s.auth(s.handleGetRefund))
	mux.Handle("GET /v1/settlements", s.auth(s.handleSettlements))
	mux.HandleFunc("GET /pay/{id}", s.handlePayPage)
	mux.HandleFunc("POST /pay/{id}/approve", s.handlePayDecision(true))
	mux.HandleFunc("POST /pay/{id}/decline", s.handlePayDecision(false))
	s.mux = mux
	return s
}

// ServeHTTP serves the gateway API and the hosted payment pages.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mux.ServeHTTP(w, r)
}

// Close stops webhook delivery, delayed work and hanging requests, and waits
// for them to end. Events not yet delivered are given up. Safe to call more
// than once.
func (s *Server) Close() {
	s.once.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		s.cancel()
		s.wg.Wait()
		if s.ownClient {
			s.cfg.HTTPClient.CloseIdleConnections()
		}
	})
}

// SetFaults replaces the faults for every request from now on.
func (s *Server) SetFaults(f Faults) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = f
}

// Charges returns every charge in creation order, duplicate captures
// included.
func (s *Server) Charges() []gateway.Charge {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]gateway.Charge, 0, len(s.charges))
	for _, c := range s.charges {
		out = append(out, c.toGateway())
	}
	return out
}

// ChargesFor returns the charges of one reference in creation order.
func (s *Server) ChargesFor(reference string) []gateway.Charge {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []gateway.Charge
	for _, c := range s.charges {
		if c.Reference == reference {
			out = append(out, c.toGateway())
		}
	}
	return out
}

// Refunds returns every refund in creation order.
func (s *Server) Refunds() []gateway.Refund {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]gateway.Refund, 0, len(s.refunds))
	for _, r := range s.refunds {
		out = append(out, r.toGateway())
	}
	return out
}

// Events returns every webhook event emitted, in order, whatever became of
// its delivery.
func (s *Server) Events() []gateway.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]gateway.Event(nil), s.events...)
}

// Pending is how many webhook deliveries are still under way: neither
// delivered nor given up. Tests wait for 0 before looking at what arrived.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pending
}

// auth checks the bearer API key, in constant time.
func (s *Server) auth(h http.HandlerFunc) http.Handler {
	if s.cfg.APIKey == "" {
		return h
	}
	want := []byte("Bearer " + s.cfg.APIKey)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			writeError(w, http.StatusUnauthorized, "unauthorized", "missing or wrong API key")
			return
		}
		h(w, r)
	})
}

// hang simulates a request that times out: it waits HangFor (or
// until the caller gives up, or the sandbox closes), then drops the
// connection without writing a response. ErrAbortHandler makes net/http
// close the connection and log nothing.
func (s *Server) hang(r *http.Request, d time.Duration) {
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
		case <-s.ctx.Done():
		}
	}
	panic(http.ErrAbortHandler)
}

// goLocked runs fn in a goroutine that Close waits for; it reports false,
// and runs nothing, once the sandbox is closed. The caller holds s.mu, which
// orders every wg.Add before Close's wg.Wait.
func (s *Server) goLocked(fn func()) bool {
	if s.closed {
		return false
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		fn()
	}()
	return true
}

// sleep waits d; false means the sandbox closed meanwhile.
func (s *Server) sleep(d time.Duration) bool {
	if d <= 0 {
		return s.ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.ctx.Done():
		return false
	}
}

// newID derives an id from what the object is, so ids are stable for a
// given key (reproducible runs) and unique across keys.
func newID(prefix string, parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return prefix + hex.EncodeToString(h[:12])
}

func (s *Server) now() time.Time { return s.cfg.Now().UTC() }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, errorJSON{Error: errorBodyJSON{Code: code, Message: message}})
}

// decodeBody reads a JSON request body; false means an error was written.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_json", "request body: "+err.Error())
		return false
	}
	return true
}
