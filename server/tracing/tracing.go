// Package tracing gives the process its OpenTelemetry tracer provider: an
// OTLP/HTTP exporter when the standard OTEL_EXPORTER_OTLP_ENDPOINT (or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) names a collector, and a provider
// that records nothing otherwise. The exporter, sampler and resource read
// the other standard OTEL_* variables themselves (headers, timeout,
// OTEL_TRACES_SAMPLER, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES).
package tracing

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Config says whether to export and what this process is.
type Config struct {
	// Export turns the OTLP exporter on (the endpoint variable is set).
	Export bool
	// Roles are the process's roles (SEATGHOR_ROLES, or "dev"), an
	// attribute of every span so a trace shows which process did what.
	Roles string
}

// Enabled tells, from the environment, whether traces are to be exported.
func Enabled(getenv func(string) string) bool {
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Provider is a tracer provider and how to flush it at exit.
type Provider struct {
	trace.TracerProvider
	shutdown func(context.Context) error
}

// Shutdown sends the spans still buffered and stops the exporter.
func (p *Provider) Shutdown(ctx context.Context) error { return p.shutdown(ctx) }

// New returns the process's provider: exporting spans in batches over
// OTLP/HTTP when cfg.Export, else recording nothing at no cost.
func New(ctx context.Context, cfg Config) (*Provider, error) {
	if !cfg.Export {
		return &Provider{TracerProvider: noop.NewTracerProvider(), shutdown: func(context.Context) error { return nil }}, nil
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("tracing: OTLP exporter: %w", err)
	}
	return newSDK(ctx, cfg, sdktrace.WithBatcher(exp))
}

// newSDK is a real SDK provider over the given span processing (tests
// pass an in-memory exporter here).
func newSDK(ctx context.Context, cfg Config, opts ...sdktrace.TracerProviderOption) (*Provider, error) {
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "seatghor"), attribute.String("seatghor.roles", cfg.Roles)),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win
		resource.WithTelemetrySDK(),
	)
	if err != nil {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(append([]sdktrace.TracerProviderOption{sdktrace.WithResource(res)}, opts...)...)
	return &Provider{TracerProvider: tp, shutdown: tp.Shutdown}, nil
}
