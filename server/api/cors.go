package api

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/rs/cors"
)

// corsAllowedHeaders are the request headers the TypeScript SDK (and any
// Connect, gRPC-Web or REST client) sends from a page of another origin:
// the credential, the idempotency key and queue token (clients/ts/src/
// calls.ts), the request id, ETag revalidation, and Connect's and
// gRPC-Web's own protocol headers.
var corsAllowedHeaders = []string{
	"Authorization", "Content-Type", "Idempotency-Key", "Queue-Token", RequestIDHeader, "If-None-Match",
	"Connect-Protocol-Version", "Connect-Timeout-Ms", "Connect-Accept-Encoding", "Connect-Content-Encoding",
	"Grpc-Timeout", "X-Grpc-Web", "X-User-Agent",
}

// corsExposedHeaders are the response headers such a page may read: the
// seat map's ETag, Retry-After (the SDK's backoff), the request id, the
// gRPC-Web status trailers-in-headers and Connect's stream encodings.
var corsExposedHeaders = []string{
	"ETag", "Retry-After", RequestIDHeader,
	"Grpc-Status", "Grpc-Message", "Grpc-Status-Details-Bin",
	"Connect-Content-Encoding", "Connect-Accept-Encoding",
}

// withCORS lets pages of the allowed origins call the API from a browser
// (decision 0167): preflights are answered, and answers to an allowed
// origin carry the CORS headers; any other origin gets none, so its page
// cannot read the answer. No origins: next unchanged (same origin only).
// Credentials are bearer tokens, never cookies, so none are allowed.
func withCORS(origins []string, next http.Handler) http.Handler {
	if len(origins) == 0 {
		return next
	}
	return cors.New(cors.Options{
		AllowedOrigins: origins,
		AllowedMethods: []string{http.MethodGet, http.MethodPost},
		AllowedHeaders: corsAllowedHeaders,
		ExposedHeaders: corsExposedHeaders,
		MaxAge:         7200, // seconds: browsers cap it at 2 h (Chromium)
	}).Handler(next)
}

// ParseCORSOrigins reads SEATGHOR_CORS_ORIGINS: comma-separated origins,
// each scheme://host[:port] with nothing after it, such as
// https://shop.example; empty is none.
func ParseCORSOrigins(s string) ([]string, error) {
	var out []string
	for _, o := range strings.Split(s, ",") {
		if o = strings.TrimSpace(o); o == "" {
			continue
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil ||
			u.Path != "" || u.RawQuery != "" || u.Fragment != "" || strings.Contains(u.Host, "*") {
			return nil, fmt.Errorf("SEATGHOR_CORS_ORIGINS: %q is not an origin (want scheme://host[:port], such as https://shop.example)", o)
		}
		out = append(out, strings.ToLower(u.Scheme+"://"+u.Host))
	}
	return out, nil
}
