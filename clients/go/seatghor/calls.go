package seatghor

import (
	"context"
	cryptorand "crypto/rand"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"connectrpc.com/connect"
)

// The interceptors every Client runs, outermost first:
//
//	typedErrors → idempotencyKeys → retries → (WithInterceptors) → auth → transport
//
// so a logical call gets one Idempotency-Key, every retry of it sends that
// same key (the server answers a repeat with its first answer), and the
// caller sees the typed error of the last attempt. The TypeScript client
// runs the same chain (clients/ts/src/calls.ts, decision 0140).

// IdempotencyKeyHeader is the header every write RPC needs. The Client adds
// one by itself; set your own on the request only to repeat a logical call
// across restarts of your program.
const IdempotencyKeyHeader = "Idempotency-Key"

// QueueTokenHeader carries a waiting room's admitted token to CreateHold.
const QueueTokenHeader = "Queue-Token"

// NewIdempotencyKey returns a fresh idempotency key (a random UUID).
func NewIdempotencyKey() string {
	var b [16]byte
	_, _ = cryptorand.Read(b[:]) // never fails (crypto/rand, Go ≥ 1.24)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// needsIdempotencyKey is the server's own rule: every method that is neither
// NO_SIDE_EFFECTS nor IDEMPOTENT in its proto changes state once per key.
func needsIdempotencyKey(spec connect.Spec) bool {
	return spec.IdempotencyLevel != connect.IdempotencyNoSideEffects &&
		spec.IdempotencyLevel != connect.IdempotencyIdempotent
}

// interceptor is a unary-only connect.Interceptor: streams pass through.
type interceptor func(connect.UnaryFunc) connect.UnaryFunc

func (f interceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc { return f(next) }
func (interceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}
func (interceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}

// typedErrors turns every error with a seatghor.com reason into its type.
var typedErrors = interceptor(func(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		res, err := next(ctx, req)
		if err != nil {
			return nil, Typed(err)
		}
		return res, nil
	}
})

// idempotencyKeys gives every write that has none an Idempotency-Key, once
// per logical call: it runs outside the retries, so they all send that key.
var idempotencyKeys = interceptor(func(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		if needsIdempotencyKey(req.Spec()) && req.Header().Get(IdempotencyKeyHeader) == "" {
			req.Header().Set(IdempotencyKeyHeader, NewIdempotencyKey())
		}
		return next(ctx, req)
	}
})

// RetryPolicy says how the Client retries (decision 0140, as the TypeScript
// client does): what IsRetryable accepts, waiting the server's RetryInfo
// delay, else its Retry-After, else backing off exponentially with jitter.
type RetryPolicy struct {
	// MaxAttempts counts every attempt, the first included (default 4); 1
	// turns retries off.
	MaxAttempts int
	// InitialDelay is the first backoff when the server names no delay
	// (default 250 ms); it doubles with each retry.
	InitialDelay time.Duration
	// MaxDelay is the longest wait between attempts (default 10 s). A server
	// that asks for more is not retried: its error reaches the caller with
	// RetryDelay set, so a screen can say "try again in a minute".
	MaxDelay time.Duration
	// OnRetry, if set, is called before each wait; for logs and tests.
	OnRetry func(RetryEvent)
}

// RetryEvent is one retry about to happen.
type RetryEvent struct {
	// Attempt is the attempt that failed, from 1.
	Attempt int
	// Delay is how long the client waits before the next one.
	Delay time.Duration
	// FromServer says whether Delay is the server's (RetryInfo, Retry-After).
	FromServer bool
	// Err is the failed attempt's error.
	Err *connect.Error
	// Procedure is the RPC, e.g. /seatghor.booking.v1.HoldService/CreateHold.
	Procedure string
	// IdempotencyKey is the key the retry sends again, if the method takes one.
	IdempotencyKey string
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 4
	}
	if p.InitialDelay <= 0 {
		p.InitialDelay = 250 * time.Millisecond
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 10 * time.Second
	}
	return p
}

// IsRetryable reports whether a failed call may be sent again as it is: the
// server or the network was unavailable (but not NOT_SERVED, which a retry
// cannot fix), the same call is still running (IDEMPOTENCY_KEY_IN_PROGRESS),
// the connection broke mid-call (aborted with no reason), or a rate limit
// said when to come back (RATE_LIMITED). Safe for every method: reads have
// no side effects and writes carry their key. Never SEATS_UNAVAILABLE (the
// buyer must choose again), internal or deadline_exceeded.
func IsRetryable(err error) bool {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return false
	}
	reason := ""
	if e, ok := apiError(ce); ok {
		reason = e.Reason
	}
	switch ce.Code() {
	case connect.CodeUnavailable:
		return reason != ReasonNotServed
	case connect.CodeAborted:
		return reason == "" || reason == ReasonStillRunning
	case connect.CodeResourceExhausted:
		return reason == ReasonRateLimited
	}
	return false
}

// retries retries unary calls by IsRetryable.
func retries(p RetryPolicy) interceptor {
	p = p.withDefaults()
	return func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			for attempt := 1; ; attempt++ {
				res, err := next(ctx, req)
				if err == nil || attempt >= p.MaxAttempts || ctx.Err() != nil || !IsRetryable(err) {
					return res, err
				}
				var ce *connect.Error
				errors.As(err, &ce) // IsRetryable found one
				delay, fromServer := serverRetryDelay(ce, time.Now())
				if fromServer && delay > p.MaxDelay {
					return res, err
				}
				if !fromServer {
					delay = backoff(p.InitialDelay, p.MaxDelay, attempt)
				}
				if p.OnRetry != nil {
					p.OnRetry(RetryEvent{
						Attempt: attempt, Delay: delay, FromServer: fromServer, Err: ce,
						Procedure: req.Spec().Procedure, IdempotencyKey: req.Header().Get(IdempotencyKeyHeader),
					})
				}
				t := time.NewTimer(delay)
				select {
				case <-ctx.Done():
					t.Stop()
					return res, err // cancelled while waiting: the last answer stands
				case <-t.C:
				}
			}
		}
	}
}

// backoff is exponential with jitter: between half and all of
// initial·2^(attempt-1), capped at maxDelay.
func backoff(initial, maxDelay time.Duration, attempt int) time.Duration {
	ceiling := min(maxDelay, initial<<(attempt-1))
	return ceiling/2 + rand.N(ceiling/2+1)
}

// bearer adds "Authorization: Bearer <secret>" to every call, streams too.
type bearer string

func (b bearer) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		req.Header().Set("Authorization", "Bearer "+string(b))
		return next(ctx, req)
	}
}

func (b bearer) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		conn := next(ctx, spec)
		conn.RequestHeader().Set("Authorization", "Bearer "+string(b))
		return conn
	}
}

func (bearer) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}
