package api

import (
	"testing"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// wrapped is a provider embedding another, as server/tracing's does.
type wrapped struct{ trace.TracerProvider }

// TestTracingOffIsRecognised: the HTTP tracing middleware is left out
// for the no-op provider, also when it is wrapped, and kept for an SDK.
func TestTracingOffIsRecognised(t *testing.T) {
	for _, tc := range []struct {
		tp  trace.TracerProvider
		off bool
	}{
		{noop.NewTracerProvider(), true},
		{wrapped{noop.NewTracerProvider()}, true},
		{sdktrace.NewTracerProvider(), false},
	} {
		require.Equal(t, tc.off, tracingOff(tc.tp))
	}
}
