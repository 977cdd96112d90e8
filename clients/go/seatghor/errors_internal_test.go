package seatghor

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
)

// TestReasonsMatchDocs: the SDK knows every reason of docs/errors.md and no
// other, each once (as the TypeScript client's test checks its own list).
func TestReasonsMatchDocs(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/errors.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("^\\| `[a-z_]+` \\| \\d+ \\| `([A-Z0-9_]+)` \\|")
	var documented []string
	for _, line := range strings.Split(string(doc), "\n") {
		if m := row.FindStringSubmatch(line); m != nil {
			documented = append(documented, m[1])
		}
	}
	if len(documented) < 40 {
		t.Fatalf("read only %d reasons from docs/errors.md", len(documented))
	}
	slices.Sort(documented)
	documented = slices.Compact(documented)
	ours := slices.Sorted(slices.Values(Reasons()))
	if len(slices.Compact(slices.Clone(ours))) != len(ours) {
		t.Errorf("Reasons() names a reason twice: %v", ours)
	}
	for _, r := range documented {
		if !slices.Contains(ours, r) {
			t.Errorf("docs/errors.md has %s; add it to errors.go", r)
		}
	}
	for _, r := range ours {
		if !slices.Contains(documented, r) {
			t.Errorf("errors.go has %s, docs/errors.md does not", r)
		}
	}
}

func apiErr(t *testing.T, code connect.Code, reason string, more ...proto.Message) *connect.Error {
	t.Helper()
	ce := connect.NewError(code, errors.New("test"))
	for _, m := range append([]proto.Message{&errdetails.ErrorInfo{Domain: ErrorDomain, Reason: reason}}, more...) {
		d, err := connect.NewErrorDetail(m)
		if err != nil {
			t.Fatal(err)
		}
		ce.AddDetail(d)
	}
	return ce
}

func TestServerRetryDelay(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	withHeader := func(ce *connect.Error, v string) *connect.Error {
		ce.Meta().Set("Retry-After", v)
		return ce
	}
	tests := []struct {
		name   string
		err    *connect.Error
		want   time.Duration
		wantOK bool
	}{
		{"nothing", apiErr(t, connect.CodeResourceExhausted, ReasonRateLimited), 0, false},
		{"RetryInfo", apiErr(t, connect.CodeResourceExhausted, ReasonRateLimited,
			&errdetails.RetryInfo{RetryDelay: durationpb.New(1500 * time.Millisecond)}), 1500 * time.Millisecond, true},
		{"RetryInfo before Retry-After", withHeader(apiErr(t, connect.CodeResourceExhausted, ReasonRateLimited,
			&errdetails.RetryInfo{RetryDelay: durationpb.New(time.Second)}), "30"), time.Second, true},
		{"Retry-After seconds", withHeader(apiErr(t, connect.CodeUnavailable, "QUEUE_UNAVAILABLE"), "3"), 3 * time.Second, true},
		{"Retry-After date", withHeader(apiErr(t, connect.CodeUnavailable, ""), now.Add(2*time.Minute).Format(http.TimeFormat)), 2 * time.Minute, true},
		{"Retry-After date past", withHeader(apiErr(t, connect.CodeUnavailable, ""), now.Add(-time.Minute).Format(http.TimeFormat)), 0, true},
		{"Retry-After nonsense", withHeader(apiErr(t, connect.CodeUnavailable, ""), "soon"), 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := serverRetryDelay(tt.err, now)
			if got != tt.want || ok != tt.wantOK {
				t.Fatalf("serverRetryDelay = %v, %v; want %v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestIsRetryable(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"unavailable, no reason (network)", connect.NewError(connect.CodeUnavailable, errors.New("reset")), true},
		{"QUEUE_UNAVAILABLE", apiErr(t, connect.CodeUnavailable, "QUEUE_UNAVAILABLE"), true},
		{"NOT_SERVED", apiErr(t, connect.CodeUnavailable, ReasonNotServed), false},
		{"still running", apiErr(t, connect.CodeAborted, ReasonStillRunning), true},
		{"aborted, no reason", connect.NewError(connect.CodeAborted, errors.New("reset")), true},
		{"SEATS_UNAVAILABLE", apiErr(t, connect.CodeAborted, ReasonSeatsUnavailable), false},
		{"RATE_LIMITED", apiErr(t, connect.CodeResourceExhausted, ReasonRateLimited), true},
		{"PAYMENT_ATTEMPTS_EXHAUSTED", apiErr(t, connect.CodeResourceExhausted, "PAYMENT_ATTEMPTS_EXHAUSTED"), false},
		{"internal", apiErr(t, connect.CodeInternal, "INTERNAL"), false},
		{"deadline", connect.NewError(connect.CodeDeadlineExceeded, errors.New("late")), false},
		{"typed", Typed(apiErr(t, connect.CodeResourceExhausted, ReasonRateLimited)), true},
		{"not a Connect error", errors.New("plain"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsRetryable(tt.err); got != tt.want {
				t.Fatalf("IsRetryable = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestTypedClasses: each group of reasons gets its type.
func TestTypedClasses(t *testing.T) {
	tests := []struct {
		err  error
		want any
	}{
		{apiErr(t, connect.CodeInvalidArgument, "BOOKING_INVALID"), InvalidRequestError{}},
		{apiErr(t, connect.CodeInvalidArgument, "A_REASON_NEWER_THAN_THIS_SDK"), InvalidRequestError{}},
		{apiErr(t, connect.CodePermissionDenied, "QUEUE_TOKEN_EXPIRED"), QueueTokenError{}},
		{apiErr(t, connect.CodeUnauthenticated, "TOKEN_INVALID"), UnauthenticatedError{}},
		{apiErr(t, connect.CodeAborted, ReasonStillRunning), StillRunningError{}},
		{apiErr(t, connect.CodeAborted, ReasonSeatsUnavailable), SeatsUnavailableError{}},
		{apiErr(t, connect.CodeResourceExhausted, ReasonRateLimited, &errdetails.QuotaFailure{
			Violations: []*errdetails.QuotaFailure_Violation{{Subject: "user:u1", Description: "holds"}}}), RateLimitedError{}},
		{apiErr(t, connect.CodeNotFound, "SHOW_NOT_FOUND"), APIError{}},
	}
	for _, tt := range tests {
		got := Typed(tt.err)
		if gotT, wantT := typeName(got), typeName(tt.want); gotT != wantT {
			t.Errorf("Typed(%v) is %s, want %s", tt.err, gotT, wantT)
		}
		var base APIError
		if !errors.As(got, &base) || base.Reason == "" {
			t.Errorf("Typed(%v) does not unwrap to an APIError with a reason", tt.err)
		}
		if rl, ok := got.(RateLimitedError); ok && (len(rl.QuotaViolations) != 1 || rl.QuotaViolations[0].Subject != "user:u1") {
			t.Errorf("quota violations %+v", rl.QuotaViolations)
		}
	}
	plain := connect.NewError(connect.CodeUnavailable, errors.New("no ErrorInfo"))
	if Typed(plain) != error(plain) {
		t.Errorf("Typed changed an error without a seatghor.com ErrorInfo")
	}
}

func typeName(v any) string { return fmt.Sprintf("%T", v) }
