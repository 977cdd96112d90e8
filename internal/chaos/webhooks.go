package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/seatghor/seatghor/server/gateway"
	"github.com/seatghor/seatghor/server/gateway/sandbox"
)

// receiver is the partner's webhook endpoint: it verifies every POST with
// the Standard Webhooks library and keeps the orders of the bookings
// confirmed it was told of.
type receiver struct {
	url string
	srv *http.Server

	mu        sync.Mutex
	wh        *standardwebhooks.Webhook
	confirmed map[string]int // order id → deliveries
	rejected  int
}

func newReceiver() (*receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("chaos: webhook receiver: %w", err)
	}
	rc := &receiver{url: "http://" + ln.Addr().String() + "/hooks", confirmed: map[string]int{}}
	rc.srv = &http.Server{Handler: rc, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = rc.srv.Serve(ln) }()
	return rc, nil
}

func (rc *receiver) setSecret(secret string) error {
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return fmt.Errorf("chaos: webhook secret: %w", err)
	}
	rc.mu.Lock()
	rc.wh = wh
	rc.mu.Unlock()
	return nil
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.wh == nil || rc.wh.Verify(body, r.Header) != nil {
		rc.rejected++
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var env struct {
		Type string `json:"type"`
		Data struct {
			OrderID string `json:"order_id"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &env) == nil && env.Type == "booking.confirmed" && env.Data.OrderID != "" {
		rc.confirmed[env.Data.OrderID]++
	}
	w.WriteHeader(http.StatusNoContent)
}

// has tells which of orders the endpoint was told were confirmed.
func (rc *receiver) missing(orders []string) []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []string
	for _, o := range orders {
		if rc.confirmed[o] == 0 {
			out = append(out, o)
		}
	}
	return out
}

func (rc *receiver) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = rc.srv.Shutdown(ctx)
}

// gatewayHooks are the forged and stale gateway webhooks the run sent
// none may be accepted or stored.
type gatewayHooks struct {
	ids              []string
	forged, stale    int
	accepted         int
	refusedForged    int
	refusedStale     int
	unanswered       int
	reconciled       reconciliation
	forgedStatusSeen map[int]int
}

// reconciliation is what the admin's reconciliation run after the load
// found and did.
type reconciliation struct {
	Mismatches     int   `json:"mismatches"`
	Resolved       int64 `json:"resolved"`
	RefundsStarted int64 `json:"refunds_started"`
}

// forge sends the forged and stale gateway webhooks, spread over the load,
// to either API process's POST /webhooks/sandbox: a forged one claims a
// real payment succeeded, signed with a secret that is not ours; a stale
// one is signed with ours ten minutes ago, as a replay would be. Each must
// be refused (401) and never stored.
func (r *run) forge(ctx context.Context) {
	n := r.cfg.Forged + r.cfg.Stale
	if n == 0 {
		return
	}
	rnd := rand.New(rand.NewPCG(r.cfg.Seed, 0xf0e9ed))
	kinds := make([]bool, n) // true: stale
	for i := range r.cfg.Stale {
		kinds[i] = true
	}
	rnd.Shuffle(n, func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	every := r.cfg.Arrival / time.Duration(n+1)
	r.mu.Lock()
	r.hooks.forgedStatusSeen = map[int]int{}
	r.mu.Unlock()
	for i := range n {
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
		stale := kinds[i]
		kind := "forged"
		if stale {
			kind = "stale"
		}
		id := fmt.Sprintf("evt_chaos_%s_%s_%d", r.tag, kind, i)
		ev := gateway.Event{ID: id, Type: gateway.EventChargeSucceeded, CreatedAt: time.Now().Truncate(time.Second),
			Charge: &gateway.Charge{ID: "ch_chaos_" + id, IdempotencyKey: "gk_" + id, Reference: r.somePayment(rnd),
				Status: gateway.StatusSucceeded, AmountMinor: 85000, Currency: "BDT", CreatedAt: time.Now(), CapturedAt: time.Now()}}
		body, err := sandbox.EventBody(ev)
		if err != nil {
			continue
		}
		sig := gateway.Sign([]string{"whsec_chaos_not_the_gateway_" + r.tag}, time.Now(), body)
		if stale {
			sig = gateway.Sign([]string{r.d.WebhookSecret}, time.Now().Add(-10*time.Minute), body)
		}
		status, err := r.postWebhook(ctx, rnd.IntN(len(r.d.Cluster.APIs())), body, sig)
		r.mu.Lock()
		r.hooks.ids = append(r.hooks.ids, id)
		if stale {
			r.hooks.stale++
		} else {
			r.hooks.forged++
		}
		switch {
		case err != nil:
			r.hooks.unanswered++
		case status >= 200 && status < 300:
			r.hooks.accepted++
		case status == http.StatusUnauthorized && stale:
			r.hooks.refusedStale++
		case status == http.StatusUnauthorized:
			r.hooks.refusedForged++
		}
		r.hooks.forgedStatusSeen[status]++
		r.mu.Unlock()
	}
}

// postWebhook posts a gateway webhook to an API process, and to the other
// when that one does not answer.
func (r *run) postWebhook(ctx context.Context, home int, body []byte, signature string) (int, error) {
	apis := r.d.Cluster.APIs()
	var last error
	for try := range 2 * len(apis) {
		url := apis[(home+try)%len(apis)] + "/webhooks/sandbox"
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(sandbox.SignatureHeader, signature)
		start := time.Now()
		resp, err := r.hc.Do(req)
		if err != nil {
			r.rec.add("gateway webhook (forged or stale)", start, time.Since(start), "no answer")
			last = err
			time.Sleep(100 * time.Millisecond)
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		r.rec.add("gateway webhook (forged or stale)", start, time.Since(start), strings.ToLower(http.StatusText(resp.StatusCode)))
		if resp.StatusCode == http.StatusServiceUnavailable {
			last = errors.New(resp.Status)
			continue
		}
		return resp.StatusCode, nil
	}
	return 0, last
}

// somePayment is a payment of the run, chosen at random, or a made-up id
// of one of its shows before there is any.
func (r *run) somePayment(rnd *rand.Rand) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, o := range r.orders {
		if len(o.payments) > 0 && rnd.IntN(4) == 0 {
			return o.payments[0]
		}
	}
	return fmt.Sprintf("pay_%d_chaos%s", r.shows[0].ID, r.tag)
}
