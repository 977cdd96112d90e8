package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/seatghor/seatghor/server/gateway"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// ClientConfig configures a Client.
type ClientConfig struct {
	// BaseURL is where the sandbox gateway listens, e.g.
	// "http://127.0.0.1:8081". Required.
	BaseURL string
	// APIKey is sent as a bearer token when set.
	APIKey string
	// WebhookSecrets verify webhook signatures; every active secret while
	// rotating (gateway.VerifySignature accepts a match on any).
	WebhookSecrets []string
	// SignatureTolerance is how old (or how far in the future) a webhook
	// signature may be; 0 means gateway.DefaultSignatureTolerance.
	SignatureTolerance time.Duration
	// Timeout bounds each call, on top of the caller's context; 0 means 5 s.
	// When it fires, the outcome is unknown.
	Timeout time.Duration
	// HTTPClient makes the calls; nil means a keep-alive client of the
	// Client's own. Share one per gateway: connections are reused.
	HTTPClient *http.Client
	// Tracing, with no HTTPClient, traces every call (a client span that
	// carries the trace to the gateway); nil traces none.
	Tracing trace.TracerProvider
}

const defaultClientTimeout = 5 * time.Second

// Client is the gateway adapter for the sandbox: it speaks the sandbox's
// HTTP API and answers in the gateway port's types and errors. Safe for
// concurrent use.
//
// Errors follow: a timeout, a transport error, a dropped connection, a
// 5xx or an unreadable success answer wraps gateway.ErrOutcomeUnknown (the
// request may have been applied: ask again with the same key); a 404 wraps
// gateway.ErrNotFound; any other 4xx wraps gateway.ErrRejected, except the
// "not now" ones (408, 409, 425, 429), which are unknown too. Answers
// from the gateway are *APIError, for the code. A declined charge is not an
// error: it is a Charge with Status failed.
type Client struct {
	base      string
	apiKey    string
	secrets   []string
	tolerance time.Duration
	timeout   time.Duration
	hc        *http.Client
}

// NewClient returns a client of the sandbox at cfg.BaseURL.
func NewClient(cfg ClientConfig) (*Client, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("sandbox client: base URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("sandbox client: base URL %q: want http(s)://host[:port]", cfg.BaseURL)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = defaultClientTimeout
	}
	hc := cfg.HTTPClient
	if hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		// The payment workers call one host from many goroutines; the
		// default of 2 idle connections per host would churn TCP.
		tr.MaxIdleConnsPerHost = 64
		hc = &http.Client{Transport: tr}
		if cfg.Tracing != nil {
			hc.Transport = otelhttp.NewTransport(tr, otelhttp.WithTracerProvider(cfg.Tracing),
				otelhttp.WithPropagators(propagation.TraceContext{}), otelhttp.WithMeterProvider(metricnoop.NewMeterProvider()))
		}
	}
	return &Client{
		base:      strings.TrimRight(u.String(), "/"),
		apiKey:    cfg.APIKey,
		secrets:   append([]string(nil), cfg.WebhookSecrets...),
		tolerance: cfg.SignatureTolerance,
		timeout:   cfg.Timeout,
		hc:        hc,
	}, nil
}

// APIError is an error answer of the sandbox. It unwraps to
// gateway.ErrNotFound, gateway.ErrRejected or gateway.ErrOutcomeUnknown by
// status code.
type APIError struct {
	StatusCode int
	// Code is the sandbox's error code, e.g. "idempotency_key_reused",
	// "amount_exceeds_refundable".
	Code    string
	Message string
	kind    error
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%d %s: %s (%v)", e.StatusCode, e.Code, e.Message, e.kind)
}

// Unwrap returns the gateway error class of the answer.
func (e *APIError) Unwrap() error { return e.kind }

// Charge asks for a charge. The same IdempotencyKey always gets the same
// charge; after an ErrOutcomeUnknown call Charge again with the same
// key, or GetCharge.
func (c *Client) Charge(ctx context.Context, req gateway.ChargeRequest) (gateway.Charge, error) {
	if req.IdempotencyKey == "" {
		return gateway.Charge{}, fmt.Errorf("sandbox: charge %s: no idempotency key: %w", req.Reference, gateway.ErrRejected)
	}
	body := chargeRequestJSON{
		Reference:   req.Reference,
		AmountMinor: req.AmountMinor,
		Currency:    req.Currency,
		Method:      req.Method,
		Token:       req.Token,
		ReturnURL:   req.ReturnURL,
	}
	var out chargeJSON
	if err := c.do(ctx, http.MethodPost, "/v1/charges", nil, req.IdempotencyKey, body, &out); err != nil {
		return gateway.Charge{}, fmt.Errorf("sandbox: charge %s: %w", req.Reference, err)
	}
	return out.toGateway(), nil
}

// GetCharge is the status query for the charge made with idempotencyKey;
// gateway.ErrNotFound means no charge was ever applied for it.
func (c *Client) GetCharge(ctx context.Context, idempotencyKey string) (gateway.Charge, error) {
	var out chargeJSON
	q := url.Values{"idempotency_key": {idempotencyKey}}
	if err := c.do(ctx, http.MethodGet, "/v1/charges", q, "", nil, &out); err != nil {
		return gateway.Charge{}, fmt.Errorf("sandbox: get charge by key %s: %w", idempotencyKey, err)
	}
	return out.toGateway(), nil
}

// FindCharges returns every charge of a reference, oldest first; more than
// one means the gateway charged twice. None is an empty slice, not
// an error.
func (c *Client) FindCharges(ctx context.Context, reference string) ([]gateway.Charge, error) {
	var out chargeListJSON
	q := url.Values{"reference": {reference}}
	if err := c.do(ctx, http.MethodGet, "/v1/charges", q, "", nil, &out); err != nil {
		return nil, fmt.Errorf("sandbox: find charges of %s: %w", reference, err)
	}
	charges := make([]gateway.Charge, 0, len(out.Data))
	for _, ch := range out.Data {
		charges = append(charges, ch.toGateway())
	}
	return charges, nil
}

// Refund gives back part or all of a captured charge. A refund
// larger than what is left of the charge is gateway.ErrRejected.
func (c *Client) Refund(ctx context.Context, req gateway.RefundRequest) (gateway.Refund, error) {
	if req.IdempotencyKey == "" {
		return gateway.Refund{}, fmt.Errorf("sandbox: refund %s: no idempotency key: %w", req.Reference, gateway.ErrRejected)
	}
	body := refundRequestJSON{
		Reference:   req.Reference,
		ChargeID:    req.ChargeID,
		AmountMinor: req.AmountMinor,
		Currency:    req.Currency,
	}
	var out refundJSON
	if err := c.do(ctx, http.MethodPost, "/v1/refunds", nil, req.IdempotencyKey, body, &out); err != nil {
		return gateway.Refund{}, fmt.Errorf("sandbox: refund %s: %w", req.Reference, err)
	}
	return out.toGateway(), nil
}

// GetRefund is the status query for the refund made with idempotencyKey.
func (c *Client) GetRefund(ctx context.Context, idempotencyKey string) (gateway.Refund, error) {
	var out refundJSON
	q := url.Values{"idempotency_key": {idempotencyKey}}
	if err := c.do(ctx, http.MethodGet, "/v1/refunds", q, "", nil, &out); err != nil {
		return gateway.Refund{}, fmt.Errorf("sandbox: get refund by key %s: %w", idempotencyKey, err)
	}
	return out.toGateway(), nil
}

// Report fetches the settlement report of [from, to).
func (c *Client) Report(ctx context.Context, from, to time.Time) (gateway.Report, error) {
	var out reportJSON
	q := url.Values{
		"from": {from.UTC().Format(time.RFC3339Nano)},
		"to":   {to.UTC().Format(time.RFC3339Nano)},
	}
	if err := c.do(ctx, http.MethodGet, "/v1/settlements", q, "", nil, &out); err != nil {
		return gateway.Report{}, fmt.Errorf("sandbox: settlement report %s–%s: %w", from.Format(time.RFC3339), to.Format(time.RFC3339), err)
	}
	rep := gateway.Report{
		From:    out.From,
		To:      out.To,
		Charges: make([]gateway.Charge, 0, len(out.Charges)),
		Refunds: make([]gateway.Refund, 0, len(out.Refunds)),
	}
	for _, ch := range out.Charges {
		rep.Charges = append(rep.Charges, ch.toGateway())
	}
	for _, rf := range out.Refunds {
		rep.Refunds = append(rep.Refunds, rf.toGateway())
	}
	return rep, nil
}

// ParseWebhook verifies a webhook's signature on the raw body, then parses
// it (R-6.4: nothing is trusted before the signature). Errors wrap
// gateway.ErrSignatureMissing, …Malformed, …Mismatch, …Stale,
// gateway.ErrEventMalformed, or gateway.ErrEventTypeUnknown; with the last
// the Event (ID, Type, CreatedAt) is returned too, so the endpoint may
// store and ignore it.
func (c *Client) ParseWebhook(header http.Header, body []byte, now time.Time) (gateway.Event, error) {
	if err := gateway.VerifySignature(header.Get(SignatureHeader), body, c.secrets, now, c.tolerance); err != nil {
		return gateway.Event{}, fmt.Errorf("sandbox: webhook: %w", err)
	}
	var raw struct {
		ID      string          `json:"id"`
		Type    string          `json:"type"`
		Created int64           `json:"created"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return gateway.Event{}, fmt.Errorf("sandbox: webhook: %w: %v", gateway.ErrEventMalformed, err)
	}
	if raw.ID == "" || raw.Type == "" {
		return gateway.Event{}, fmt.Errorf("sandbox: webhook: %w: no id or type", gateway.ErrEventMalformed)
	}
	ev := gateway.Event{ID: raw.ID, Type: gateway.EventType(raw.Type), CreatedAt: time.Unix(raw.Created, 0).UTC()}
	switch ev.Type {
	case gateway.EventChargeSucceeded, gateway.EventChargeFailed, gateway.EventChargePending:
		var ch chargeJSON
		if err := json.Unmarshal(raw.Data, &ch); err != nil || ch.ID == "" {
			return gateway.Event{}, fmt.Errorf("sandbox: webhook %s: %w: data is not a charge", raw.ID, gateway.ErrEventMalformed)
		}
		g := ch.toGateway()
		ev.Charge = &g
	case gateway.EventRefundSucceeded, gateway.EventRefundFailed:
		var rf refundJSON
		if err := json.Unmarshal(raw.Data, &rf); err != nil || rf.ID == "" {
			return gateway.Event{}, fmt.Errorf("sandbox: webhook %s: %w: data is not a refund", raw.ID, gateway.ErrEventMalformed)
		}
		g := rf.toGateway()
		ev.Refund = &g
	default:
		return ev, fmt.Errorf("sandbox: webhook %s: type %q: %w", raw.ID, raw.Type, gateway.ErrEventTypeUnknown)
	}
	return ev, nil
}

// do makes one call and decodes a 2xx answer into out, classifying every
// failure as asks.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, key string, in, out any) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()

	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("%s %s: encode: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	// net/http silently resends a request carrying an Idempotency-Key when
	// a reused connection drops before the answer. That hidden retry is
	// safe but would hide the timeout from the caller, who must record
	// UNKNOWN and decide the retry itself. Without GetBody
	// the request is not replayable.
	req.GetBody = nil
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set(IdempotencyKeyHeader, key)
	}
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}

	resp, err := c.hc.Do(req)
	if err != nil {
		// Timeout, refused, reset, dropped: the request may have arrived.
		return fmt.Errorf("%s %s: %w: %w", method, path, gateway.ErrOutcomeUnknown, err)
	}
	defer func() {
		// Drain so the keep-alive connection is reused.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
	}()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return fmt.Errorf("%s %s: read answer: %w: %w", method, path, gateway.ErrOutcomeUnknown, err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%s %s: decode answer: %w: %w", method, path, gateway.ErrOutcomeUnknown, err)
		}
		return nil
	}
	apiErr := &APIError{StatusCode: resp.StatusCode}
	var e errorJSON
	if json.Unmarshal(data, &e) == nil && e.Error.Code != "" {
		apiErr.Code, apiErr.Message = e.Error.Code, e.Error.Message
	} else {
		msg := strings.TrimSpace(string(data))
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		apiErr.Code, apiErr.Message = "http_"+strconv.Itoa(resp.StatusCode), msg
	}
	apiErr.kind = classify(resp.StatusCode)
	return fmt.Errorf("%s %s: %w", method, path, apiErr)
}

// classify maps a non-2xx status to the gateway error class.
func classify(status int) error {
	switch {
	case status == http.StatusNotFound:
		return gateway.ErrNotFound
	case status == http.StatusRequestTimeout, status == http.StatusConflict,
		status == http.StatusTooEarly, status == http.StatusTooManyRequests:
		// "Not now", not "no": calling these FAILED would fail a payment
		// that a retry with the same key completes. The sandbox never sends
		// them; real providers do.
		return gateway.ErrOutcomeUnknown
	case status >= 400 && status <= 499:
		return gateway.ErrRejected
	default:
		// 5xx, or an answer no client expects: the request may have been
		// applied.
		return gateway.ErrOutcomeUnknown
	}
}
