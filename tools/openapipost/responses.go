package main

import (
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Which errors an operation declares. Every code maps to one HTTP status
// on the REST routes (docs/errors.md's table); an operation lists a status
// when some rule of the server can answer it there:
//
//   - 400, 401 and 403 on every route: every request is validated, a bad
//     credential is refused even where none is needed, and an API key's
//     scope or a read-only key can refuse any call;
//   - 404 on a route that names something: a path parameter, or a required
//     field whose name ends in _id (the hold's show, the order's hold);
//   - 409 on a route with an Idempotency-Key (a request with the same key
//     still running; the seats of a hold taken meanwhile and an
//     organisation that exists are writes too);
//   - 429 on the routes the rate limiter counts (rateLimited);
//   - default for the rest (unavailable, internal), with Retry-After.

// rateLimited are the operations the rate limiter counts (server/ratelimit's
// rules, which a test there keeps equal to the 429 answers).
func rateLimited() []string {
	return []string{"HoldService_CreateHold", "PaymentService_StartPayment", "WaitingRoomService_Join"}
}

// queueTokenOps are the operations that take a waiting room's Queue-Token
// (server/api's queueTokenInterceptor, which a test there keeps equal).
func queueTokenOps() []string {
	return []string{"HoldService_CreateHold"}
}

// errorResponses returns the responses an operation declares besides 200,
// in order: the $refs of components/responses by status, then default.
func errorResponses(id string, o operation, hasPathParam bool, required []string) *yaml.Node {
	statuses := []string{"400", "401", "403"}
	if hasPathParam || slices.ContainsFunc(required, func(f string) bool { return strings.HasSuffix(f, "_id") }) {
		statuses = append(statuses, "404")
	}
	if o.needsKey {
		statuses = append(statuses, "409")
	}
	if slices.Contains(rateLimited(), id) {
		statuses = append(statuses, "429")
	}
	m := &yaml.Node{Kind: yaml.MappingNode}
	for _, s := range statuses {
		m.Content = append(m.Content,
			&yaml.Node{Kind: yaml.ScalarNode, Value: s, Style: yaml.DoubleQuotedStyle},
			node("$ref: '#/components/responses/"+errorNames[s]+"'\n"))
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "default"}, node("$ref: '#/components/responses/Error'\n"))
	return m
}

// errorNames names the components/responses of each status.
var errorNames = map[string]string{
	"400": "BadRequest",
	"401": "Unauthenticated",
	"403": "PermissionDenied",
	"404": "NotFound",
	"409": "Conflict",
	"429": "RateLimited",
}

const responses = `
BadRequest:
  description: |-
    invalid_argument or failed_precondition: a field breaks its rule (a
    BadRequest detail names each field at fault), the Idempotency-Key is missing
    or was used for another request, or what is asked is not possible now
    (reasons such as INVALID_ARGUMENT, BOOKING_INVALID, IDEMPOTENCY_KEY_MISSING,
    BOOKING_NOT_ALLOWED). Fix the request; do not repeat it as it is.
  content:
    application/json:
      schema:
        $ref: '#/components/schemas/google.rpc.Status'
Unauthenticated:
  description: |-
    unauthenticated: no credential where one is needed, or one the server does
    not accept (reasons such as UNAUTHENTICATED, TOKEN_INVALID). Send a valid API
    key or token.
  content:
    application/json:
      schema:
        $ref: '#/components/schemas/google.rpc.Status'
PermissionDenied:
  description: |-
    permission_denied: the caller may not do this: its role, its API key's scope,
    a show its partner may not sell, or a waiting room's Queue-Token that is
    missing or not admitted (reasons such as PERMISSION_DENIED,
    PARTNER_SHOW_FORBIDDEN, API_KEY_READ_ONLY, QUEUE_TOKEN_REQUIRED).
  content:
    application/json:
      schema:
        $ref: '#/components/schemas/google.rpc.Status'
NotFound:
  description: |-
    not_found: what the request names does not exist, or is not the caller's
    (reasons such as SHOW_NOT_FOUND, BOOKING_NOT_FOUND, PAYMENT_NOT_FOUND).
  content:
    application/json:
      schema:
        $ref: '#/components/schemas/google.rpc.Status'
Conflict:
  description: |-
    aborted or already_exists: the seats were taken meanwhile (SEATS_UNAVAILABLE,
    with a SeatsUnavailable detail: reload the seat map at least at its version
    and choose again), or a request with the same Idempotency-Key is still
    running (IDEMPOTENCY_KEY_IN_PROGRESS: repeat it with the same key shortly).
  content:
    application/json:
      schema:
        $ref: '#/components/schemas/google.rpc.Status'
RateLimited:
  description: |-
    resource_exhausted: too many of these calls from this caller (RATE_LIMITED,
    with RetryInfo and QuotaFailure details), or too many payment attempts for
    one order (PAYMENT_ATTEMPTS_EXHAUSTED). Wait Retry-After, then repeat.
  headers:
    Retry-After:
      $ref: '#/components/headers/RetryAfter'
  content:
    application/json:
      schema:
        $ref: '#/components/schemas/google.rpc.Status'
Error:
  description: |-
    Any other error: unavailable (503; retry after Retry-After or with backoff),
    internal (500), deadline_exceeded (504). The body is a google.rpc.Status
    with an ErrorInfo as above.
  headers:
    Retry-After:
      $ref: '#/components/headers/RetryAfter'
  content:
    application/json:
      schema:
        $ref: '#/components/schemas/google.rpc.Status'
`
