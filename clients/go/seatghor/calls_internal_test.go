package seatghor

import (
	"context"
	"errors"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/emptypb"
)

// answers is a connect.UnaryFunc that fails with errs in turn, then
// succeeds, recording the Idempotency-Key of each attempt. It stands in for
// the transport so the retry loop's choices can be read without a server
// that rate-limits on demand (the real server's retries are in sdk_test.go).
type answers struct {
	errs []error
	keys []string
}

func (a *answers) call(_ context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
	a.keys = append(a.keys, req.Header().Get(IdempotencyKeyHeader))
	if n := len(a.keys); n <= len(a.errs) {
		return nil, a.errs[n-1]
	}
	return connect.NewResponse(&emptypb.Empty{}), nil
}

func TestRetries(t *testing.T) {
	rateLimited := func(delay time.Duration) error {
		return apiErr(t, connect.CodeResourceExhausted, ReasonRateLimited, &errdetails.RetryInfo{RetryDelay: durationpb.New(delay)})
	}
	tests := []struct {
		name       string
		errs       []error
		wantErr    bool
		wantDelays []time.Duration // the server's delays the retries waited
		attempts   int
	}{
		{"RATE_LIMITED waits the RetryInfo delay", []error{rateLimited(3 * time.Millisecond)}, false, []time.Duration{3 * time.Millisecond}, 2},
		{"still running, then done", []error{apiErr(t, connect.CodeAborted, ReasonStillRunning), apiErr(t, connect.CodeAborted, ReasonStillRunning)}, false, nil, 3},
		{"a wait over MaxDelay is the caller's", []error{rateLimited(time.Hour)}, true, nil, 1},
		{"SEATS_UNAVAILABLE is not retried", []error{apiErr(t, connect.CodeAborted, ReasonSeatsUnavailable)}, true, nil, 1},
		{"4 attempts at most", []error{
			connect.NewError(connect.CodeUnavailable, errors.New("1")), connect.NewError(connect.CodeUnavailable, errors.New("2")),
			connect.NewError(connect.CodeUnavailable, errors.New("3")), connect.NewError(connect.CodeUnavailable, errors.New("4")),
		}, true, nil, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &answers{errs: tt.errs}
			var events []RetryEvent
			policy := RetryPolicy{InitialDelay: time.Millisecond, MaxDelay: time.Second, OnRetry: func(e RetryEvent) { events = append(events, e) }}
			call := typedErrors.WrapUnary(idempotencyKeys.WrapUnary(retries(policy).WrapUnary(a.call)))
			_, err := call(t.Context(), connect.NewRequest(&emptypb.Empty{}))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err %v, want error: %v", err, tt.wantErr)
			}
			if len(a.keys) != tt.attempts || len(events) != tt.attempts-1 {
				t.Fatalf("%d attempts and %d retry events, want %d attempts", len(a.keys), len(events), tt.attempts)
			}
			for i, k := range a.keys {
				if k == "" || k != a.keys[0] {
					t.Fatalf("attempt %d sent key %q, the first %q", i+1, k, a.keys[0])
				}
			}
			var fromServer []time.Duration
			for _, e := range events {
				if e.FromServer {
					fromServer = append(fromServer, e.Delay)
				} else if e.Delay < time.Millisecond/2 || e.Delay > time.Second {
					t.Fatalf("backoff %v outside [initial/2, max]", e.Delay)
				}
			}
			if len(fromServer) != len(tt.wantDelays) || (len(fromServer) > 0 && fromServer[0] != tt.wantDelays[0]) {
				t.Fatalf("server delays %v, want %v", fromServer, tt.wantDelays)
			}
			var api APIError
			if tt.wantErr && errors.As(err, &api) && api.Reason == ReasonRateLimited && api.RetryDelay != time.Hour {
				t.Fatalf("RetryDelay %v, want the server's hour", api.RetryDelay)
			}
		})
	}
}

// TestCallersKeyIsKept: a key the caller set is sent as it is.
func TestCallersKeyIsKept(t *testing.T) {
	a := &answers{}
	req := connect.NewRequest(&emptypb.Empty{})
	req.Header().Set(IdempotencyKeyHeader, "my-key")
	if _, err := idempotencyKeys.WrapUnary(a.call)(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if len(a.keys) != 1 || a.keys[0] != "my-key" {
		t.Fatalf("keys %q, want my-key", a.keys)
	}
}
