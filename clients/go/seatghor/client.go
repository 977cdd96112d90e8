package seatghor

import (
	"net/http"
	"strings"

	"connectrpc.com/connect"
)

// Option configures NewClient.
type Option func(*config)

type config struct {
	secret       string
	protocol     []connect.ClientOption // Connect (the default), gRPC or gRPC-Web
	json         bool
	httpClient   connect.HTTPClient
	retry        RetryPolicy
	interceptors []connect.Interceptor
	grpc         bool
}

// WithAPIKey authenticates every call with a partner's API key (sk_live_…
// or sk_test_…), sent as "Authorization: Bearer <key>".
func WithAPIKey(key string) Option { return func(c *config) { c.secret = key } }

// WithToken authenticates every call with a Seatghor access token (a JWT),
// sent the same way as an API key.
func WithToken(token string) Option { return func(c *config) { c.secret = token } }

// WithGRPC speaks gRPC instead of the Connect protocol. Over http:// it uses
// unencrypted HTTP/2 (h2c), which the server accepts.
func WithGRPC() Option {
	return func(c *config) { c.protocol, c.grpc = []connect.ClientOption{connect.WithGRPC()}, true }
}

// WithGRPCWeb speaks gRPC-Web instead of the Connect protocol.
func WithGRPCWeb() Option {
	return func(c *config) { c.protocol, c.grpc = []connect.ClientOption{connect.WithGRPCWeb()}, false }
}

// WithJSON sends JSON instead of binary protobuf (easier to read in a proxy's
// log; slower).
func WithJSON() Option { return func(c *config) { c.json = true } }

// WithHTTPClient sends the calls through h (timeouts, proxies, TLS, tests).
// For gRPC over http:// it must speak unencrypted HTTP/2.
func WithHTTPClient(h connect.HTTPClient) Option { return func(c *config) { c.httpClient = h } }

// WithRetry replaces the default RetryPolicy.
func WithRetry(p RetryPolicy) Option { return func(c *config) { c.retry = p } }

// WithoutRetries sends every call once.
func WithoutRetries() Option { return func(c *config) { c.retry = RetryPolicy{MaxAttempts: 1} } }

// WithInterceptors adds Connect interceptors (logs, tracing). They run
// inside the retries, once per attempt, and see the Idempotency-Key.
func WithInterceptors(i ...connect.Interceptor) Option {
	return func(c *config) { c.interceptors = append(c.interceptors, i...) }
}

// NewClient returns a client of the Seatghor API at baseURL (e.g.
// "https://api.seatghor.com" or "http://127.0.0.1:8080"), over the Connect
// protocol unless WithGRPC or WithGRPCWeb says otherwise.
func NewClient(baseURL string, opts ...Option) *Client {
	var c config
	for _, o := range opts {
		o(&c)
	}
	baseURL = strings.TrimSuffix(baseURL, "/")
	h := c.httpClient
	if h == nil {
		h = defaultHTTPClient(c.grpc && strings.HasPrefix(baseURL, "http://"))
	}
	chain := []connect.Interceptor{typedErrors, idempotencyKeys, retries(c.retry)}
	chain = append(chain, c.interceptors...)
	if c.secret != "" {
		chain = append(chain, bearer(c.secret))
	}
	copts := append([]connect.ClientOption{connect.WithInterceptors(chain...)}, c.protocol...)
	if c.json {
		copts = append(copts, connect.WithProtoJSON())
	}
	return newClient(h, baseURL, copts...)
}

// defaultHTTPClient is a client of its own (not http.DefaultClient, which
// others may change); for gRPC over http:// it speaks h2c only.
func defaultHTTPClient(h2c bool) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	if h2c {
		var p http.Protocols
		p.SetUnencryptedHTTP2(true)
		t.Protocols = &p
	}
	return &http.Client{Transport: t}
}
