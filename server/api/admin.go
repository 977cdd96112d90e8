package api

import (
	"net/http"
	"net/http/pprof"

	"connectrpc.com/grpcreflect"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// NewAdminHandler returns the admin listener's surface (decision 0081):
// /metrics (it shows ledger balances and money flows, R-11), gRPC server
// reflection, the Go profiler under /debug/pprof/, and /livez and /readyz
// for processes that run no public port. It must never be served on the
// public port: bind it to a private address.
func NewAdminHandler(cfg Config) http.Handler {
	if cfg.Readiness == nil {
		cfg.Readiness = NewReadiness(cfg.Router, cfg.Health, 0)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(cfg.Registry, promhttp.HandlerOpts{}))
	reflector := grpcreflect.NewStaticReflector(ServiceNames()...)
	mux.Handle(grpcreflect.NewHandlerV1(reflector))
	mux.Handle(grpcreflect.NewHandlerV1Alpha(reflector))
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.Handle("GET /livez", livez())
	mux.Handle("GET /readyz", cfg.Readiness.ReadyHandler())
	return mux
}

// ServiceNames are the names of the API's services, as the health service
// and reflection know them.
func ServiceNames() []string {
	var names []string
	for _, s := range services(Config{}, nil) {
		names = append(names, s.name)
	}
	return names
}
