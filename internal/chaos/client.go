package chaos

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"sort"
	"sync"
	"syscall"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"github.com/seatghor/seatghor/gen/seatghor/booking/v1/bookingv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/catalog/v1/catalogv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/counter/v1/counterv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/ledger/v1/ledgerv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/partner/v1/partnerv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/payment/v1/paymentv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/search/v1/searchv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/seatmap/v1/seatmapv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/tickets/v1/ticketsv1connect"
)

// clients are one caller's clients of one API process.
type clients struct {
	catalog  catalogv1connect.CatalogServiceClient
	holds    bookingv1connect.HoldServiceClient
	orders   bookingv1connect.OrderServiceClient
	seatmap  seatmapv1connect.SeatMapServiceClient
	pay      paymentv1connect.PaymentServiceClient
	tickets  ticketsv1connect.TicketServiceClient
	search   searchv1connect.TripSearchServiceClient
	partner  partnerv1connect.PartnerServiceClient
	alloc    partnerv1connect.AllocationServiceClient
	webhooks partnerv1connect.WebhookServiceClient
	ledger   ledgerv1connect.LedgerServiceClient
	counter  counterv1connect.CounterServiceClient
}

// caller is one credential's clients of every API process and the one it
// uses now: as in `seatghor loadtest onsale`, a call whose process is gone
// goes to the next with the same idempotency key (decision 0216).
type caller struct {
	byURL []clients
	mu    sync.Mutex
	home  int
}

func newCaller(hc *http.Client, urls []string, credential string, home int) *caller {
	opts := connect.WithInterceptors(withCredential(credential))
	c := &caller{home: home % len(urls)}
	for _, url := range urls {
		c.byURL = append(c.byURL, clients{
			catalog:  catalogv1connect.NewCatalogServiceClient(hc, url, opts),
			holds:    bookingv1connect.NewHoldServiceClient(hc, url, opts),
			orders:   bookingv1connect.NewOrderServiceClient(hc, url, opts),
			seatmap:  seatmapv1connect.NewSeatMapServiceClient(hc, url, opts),
			pay:      paymentv1connect.NewPaymentServiceClient(hc, url, opts),
			tickets:  ticketsv1connect.NewTicketServiceClient(hc, url, opts),
			search:   searchv1connect.NewTripSearchServiceClient(hc, url, opts),
			partner:  partnerv1connect.NewPartnerServiceClient(hc, url, opts),
			alloc:    partnerv1connect.NewAllocationServiceClient(hc, url, opts),
			webhooks: partnerv1connect.NewWebhookServiceClient(hc, url, opts),
			ledger:   ledgerv1connect.NewLedgerServiceClient(hc, url, opts),
			counter:  counterv1connect.NewCounterServiceClient(hc, url, opts),
		})
	}
	return c
}

// idempotencyKey carries a call's Idempotency-Key in its context, so that
// its retries through the other process send the same.
type idempotencyKey struct{}

// withCredential adds the token or API key, and an Idempotency-Key to every
// write: the call's, else a fresh one.
func withCredential(credential string) connect.UnaryInterceptorFunc {
	return func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			if credential != "" {
				req.Header().Set("Authorization", "Bearer "+credential)
			}
			if req.Spec().IdempotencyLevel != connect.IdempotencyNoSideEffects {
				key, ok := ctx.Value(idempotencyKey{}).(string)
				if !ok {
					key = randomID()
				}
				req.Header().Set("Idempotency-Key", key)
			}
			return next(ctx, req)
		}
	}
}

// call makes one call through the caller's API process and, when that
// process is gone or unavailable, the same call with the same idempotency
// key through the other (each twice: a process that answers "in progress"
// for a key its gone peer had begun answers once the peer's transaction is
// rolled back). Every attempt is recorded.
func call[T any](ctx context.Context, r *recorder, c *caller, rpc string, fn func(context.Context, clients) (*connect.Response[T], error)) (*connect.Response[T], error) {
	ctx = context.WithValue(ctx, idempotencyKey{}, randomID())
	c.mu.Lock()
	home := c.home
	c.mu.Unlock()
	n := len(c.byURL)
	var err error
	for try := range 2 * n {
		i := (home + try) % n
		start := time.Now()
		var resp *connect.Response[T]
		resp, err = fn(ctx, c.byURL[i])
		r.add(rpc, start, time.Since(start), codeOf(err))
		if err == nil || !(gone(err) || try > 0 && inProgress(err)) || ctx.Err() != nil {
			if try > 0 {
				c.mu.Lock()
				c.home = i
				c.mu.Unlock()
			}
			return resp, err
		}
		r.failover()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(try+1) * 50 * time.Millisecond):
		}
	}
	return nil, err
}

// codeOf names an answer: "ok", a Connect code, or "no answer" when the
// process did not answer at all.
func codeOf(err error) string {
	switch {
	case err == nil:
		return "ok"
	case noAnswer(err):
		return "no answer"
	default:
		return connect.CodeOf(err).String()
	}
}

// noAnswer tells whether err says the process never answered: it is down
// or went down during the call.
func noAnswer(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed)
}

// gone tells whether err says the API process did not answer, or is
// unavailable.
func gone(err error) bool {
	return connect.CodeOf(err) == connect.CodeUnavailable || noAnswer(err)
}

// inProgress tells whether err says another request with the same key runs.
func inProgress(err error) bool {
	var ce *connect.Error
	if !errors.As(err, &ce) || ce.Code() != connect.CodeAborted {
		return false
	}
	return reasonOf(err) == "IDEMPOTENCY_KEY_IN_PROGRESS"
}

// reasonOf is the ErrorInfo reason of a Connect error, or "".
func reasonOf(err error) string {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return ""
	}
	for _, d := range ce.Details() {
		if v, err := d.Value(); err == nil {
			if info, ok := v.(*errdetails.ErrorInfo); ok {
				return info.GetReason()
			}
		}
	}
	return ""
}

func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// recorder keeps every request: its RPC, when it started, how long it took
// and how it was answered.
type recorder struct {
	mu        sync.Mutex
	calls     []record
	failovers int
}

type record struct {
	rpc  string
	at   time.Time
	took time.Duration
	code string
}

func (r *recorder) add(rpc string, at time.Time, took time.Duration, code string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, record{rpc: rpc, at: at, took: took, code: code})
}

func (r *recorder) failover() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failovers++
}

func (r *recorder) snapshot() []record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// RPCStats is one RPC's requests over the run.
type RPCStats struct {
	Requests  int            `json:"requests"`
	PerSecond float64        `json:"per_second"`
	P50ms     float64        `json:"p50_ms"`
	P99ms     float64        `json:"p99_ms"`
	Codes     map[string]int `json:"codes"`
}

// stats sums the records of [from, to) by RPC; latencies are of the
// answered ones.
func stats(calls []record, from, to time.Time) (map[string]RPCStats, int) {
	byRPC := map[string][]record{}
	total := 0
	for _, c := range calls {
		if c.at.Before(from) || !c.at.Before(to) {
			continue
		}
		byRPC[c.rpc] = append(byRPC[c.rpc], c)
		total++
	}
	secs := max(to.Sub(from).Seconds(), 0.001)
	out := map[string]RPCStats{}
	for rpc, cs := range byRPC {
		s := RPCStats{Requests: len(cs), PerSecond: float64(len(cs)) / secs, Codes: map[string]int{}}
		var answered []time.Duration
		for _, c := range cs {
			s.Codes[c.code]++
			if c.code != "no answer" {
				answered = append(answered, c.took)
			}
		}
		sort.Slice(answered, func(a, b int) bool { return answered[a] < answered[b] })
		s.P50ms, s.P99ms = percentile(answered, 0.50), percentile(answered, 0.99)
		out[rpc] = s
	}
	return out, total
}

func percentile(sorted []time.Duration, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted)-1) + 0.5)
	return float64(sorted[i].Microseconds()) / 1000
}

// serverError tells whether an answer blames the platform rather than the
// request: no answer, or a code a well-formed request should never get.
func serverError(code string) bool {
	switch code {
	case "no answer", "unavailable", "internal", "unknown", "deadline_exceeded", "data_loss":
		return true
	}
	return false
}
