package api_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/seatghor/seatghor/gen/seatghor/booking/v1/bookingv1connect"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/internal/testkit/redistest"
	"github.com/seatghor/seatghor/server/api"
	"github.com/seatghor/seatghor/server/auth"
)

// TestTracesFollowARequest: with a tracer provider (the OpenTelemetry SDK,
// recording in memory instead of exporting), a REST hold makes one trace:
// the request's span, the RPC's span under it, and the database
// statements under that; the caller's traceparent is only linked (the
// port is public); the request's log lines carry the trace id; seat-map
// reads trace their Redis calls, and the projectors trace each batch.
func TestTracesFollowARequest(t *testing.T) {
	recorder := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	logs := &syncBuffer{}
	r := redistest.New(t)
	env := apptest.New(t, apptest.Options{Shards: 1, RedisURL: r.URL, RedisPrefix: r.Prefix, Projectors: true, Tracing: tp,
		Log: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	show := createShow(t, env, seatedShow("Traced", 1, 4))

	const remoteTrace, remoteSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	req, err := http.NewRequest(http.MethodPost, env.URL+"/v1/holds",
		strings.NewReader(fmt.Sprintf(`{"show_id": %d, "seats": ["A1"]}`, show.GetShowId())))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+env.Token(t, "rumana", auth.RoleUser))
	req.Header.Set("Idempotency-Key", newKey())
	req.Header.Set("traceparent", "00-"+remoteTrace+"-"+remoteSpan+"-01")
	req.Header.Set(api.RequestIDHeader, "traced-hold")
	resp, err := env.HTTP.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	var request, rpc sdktrace.ReadOnlySpan
	require.Eventually(t, func() bool {
		request, rpc = nil, nil
		for _, s := range recorder.Ended() {
			switch {
			case s.SpanKind() == trace.SpanKindServer && s.Name() == "POST /v1/…":
				request = s
			case s.Name() == bookingv1connect.HoldServiceCreateHoldProcedure[1:]:
				rpc = s
			}
		}
		return request != nil && rpc != nil
	}, 5*time.Second, 10*time.Millisecond, "the request's and the RPC's spans end")
	require.NotEqual(t, remoteTrace, request.SpanContext().TraceID().String(), "a caller does not choose our trace")
	require.Len(t, request.Links(), 1)
	require.Equal(t, remoteTrace, request.Links()[0].SpanContext.TraceID().String(), "the caller's trace is linked")
	require.Equal(t, request.SpanContext().SpanID(), rpc.Parent().SpanID(), "the RPC's span is the request's child")

	traceID := request.SpanContext().TraceID()
	statements := 0
	for _, s := range recorder.Ended() {
		if s.SpanContext().TraceID() == traceID && strings.Contains(s.InstrumentationScope().Name, "otelpgx") {
			statements++
		}
	}
	require.Positive(t, statements, "the hold's statements are spans of the same trace")

	access, _ := accessLine(t, logs, "traced-hold")
	require.Equal(t, traceID.String(), access["trace_id"], "the access log line carries the trace id")

	// A seat-map read traces its Redis calls; the projectors their batches.
	resp, err = env.HTTP.Get(fmt.Sprintf("%s/v1/shows/%d/seatmap", env.URL, show.GetShowId()))
	require.NoError(t, err)
	resp.Body.Close()
	require.Eventually(t, func() bool {
		var redisCall, batch bool
		for _, s := range recorder.Ended() {
			redisCall = redisCall || strings.Contains(s.InstrumentationScope().Name, "redisotel")
			batch = batch || s.Name() == "project seatmap"
		}
		return redisCall && batch
	}, 30*time.Second, 20*time.Millisecond, "Redis calls and projector batches are traced")
}
