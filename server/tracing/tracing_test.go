package tracing

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// collector is an OTLP/HTTP trace receiver: it decodes what the exporter
// sends, as an OpenTelemetry Collector would.
type collector struct {
	mu    sync.Mutex
	spans map[string]map[string]string // span name → resource attributes
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req collectortrace.ExportTraceServiceRequest
	if r.URL.Path != "/v1/traces" || proto.Unmarshal(body, &req) != nil {
		http.Error(w, "not an OTLP trace export", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		attrs := map[string]string{}
		for _, kv := range rs.GetResource().GetAttributes() {
			attrs[kv.GetKey()] = kv.GetValue().GetStringValue()
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				c.spans[s.GetName()] = attrs
			}
		}
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	_, _ = w.Write(out)
}

// TestExportsOverOTLP: with OTEL_EXPORTER_OTLP_ENDPOINT set, the provider
// sends its spans over OTLP/HTTP, named and with the process's resource;
// Shutdown flushes what is buffered. Without it, nothing is recorded.
func TestExportsOverOTLP(t *testing.T) {
	c := &collector{spans: map[string]map[string]string{}}
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	require.True(t, Enabled(func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL}[k]
	}))

	ctx := context.Background()
	tp, err := New(ctx, Config{Export: true, Roles: "api,workers"})
	require.NoError(t, err)
	_, span := tp.Tracer("test").Start(ctx, "CreateHold")
	span.End()
	require.NoError(t, tp.Shutdown(ctx))

	c.mu.Lock()
	defer c.mu.Unlock()
	require.Contains(t, c.spans, "CreateHold")
	require.Equal(t, "seatghor", c.spans["CreateHold"]["service.name"])
	require.Equal(t, "api,workers", c.spans["CreateHold"]["seatghor.roles"])

	off, err := New(ctx, Config{})
	require.NoError(t, err)
	_, span = off.Tracer("test").Start(ctx, "nothing")
	require.False(t, span.SpanContext().IsValid(), "without an endpoint no span is recorded")
	require.False(t, Enabled(func(string) string { return "" }))
}
