package api

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"connectrpc.com/grpchealth"

	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/shard"
)

// HealthCheck is one more part /readyz reports besides the catalog and
// the shards. A Required part that fails makes the answer 503; any other is
// reported "degraded" while the platform goes on selling without it (a
// cache, a read model's store: ).
type HealthCheck struct {
	Name     string
	Required bool
	Check    func(ctx context.Context) error
}

// DefaultReadyTimeout bounds one readiness check: a database that has not
// answered its ping by then counts as unreachable.
const DefaultReadyTimeout = 2 * time.Second

// Readiness is whether the process should be sent traffic: every
// required part (the catalog, every shard, the read database) answers a
// ping within the deadline and the process is not draining. /readyz and
// the gRPC health service answer from it; /livez does not (decision 0080).
//
// Its checks are fixed at construction, so each answer pings every part
// exactly once, however many probes came before or run at the same time.
type Readiness struct {
	checks   []HealthCheck
	timeout  time.Duration
	services map[string]bool
	draining atomic.Bool
}

// NewReadiness returns the readiness of a process whose required parts are
// the router's databases and the required ones among extra. A timeout of 0
// takes DefaultReadyTimeout. The gRPC health service reports the same
// state for the whole process ("") and for each of the API's services.
func NewReadiness(router *shard.Router, extra []HealthCheck, timeout time.Duration) *Readiness {
	if timeout <= 0 {
		timeout = DefaultReadyTimeout
	}
	var checks []HealthCheck
	if router != nil {
		for _, pool := range append([]*pg.Pool{router.Catalog()}, router.Shards()...) {
			checks = append(checks, HealthCheck{Name: pool.Name, Required: true, Check: pool.Ping})
		}
	}
	checks = append(checks, extra...)
	r := &Readiness{checks: checks, timeout: timeout, services: map[string]bool{}}
	for _, s := range ServiceNames() {
		r.services[s] = true
	}
	return r
}

// Drain marks the process as shutting down: from now on it is not ready,
// so load balancers stop sending it requests while those in flight finish.
func (r *Readiness) Drain() { r.draining.Store(true) }

// Draining tells whether Drain was called.
func (r *Readiness) Draining() bool { return r.draining.Load() }

// State pings every part, concurrently and within the deadline, and says
// whether the process is ready and how each part is: "ok", "unreachable"
// (a required part) or "degraded". A draining process is not ready and
// pings nothing.
func (r *Readiness) State(ctx context.Context) (ready bool, parts map[string]string) {
	if r.draining.Load() {
		return false, map[string]string{"process": "draining"}
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	errs := make([]error, len(r.checks))
	var wg sync.WaitGroup
	for i, c := range r.checks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.Check(ctx)
		}()
	}
	wg.Wait()
	ready, parts = true, make(map[string]string, len(r.checks))
	for i, c := range r.checks {
		switch {
		case errs[i] == nil:
			parts[c.Name] = "ok"
		case c.Required:
			parts[c.Name], ready = "unreachable", false
		default:
			parts[c.Name] = "degraded"
		}
	}
	// A drain that began while we pinged wins.
	if r.draining.Load() {
		return false, map[string]string{"process": "draining"}
	}
	return ready, parts
}

// Check is the gRPC health service's answer (grpchealth.Checker): SERVING
// when ready, NOT_SERVING otherwise, for the whole process ("") and for
// each of its services alike.
func (r *Readiness) Check(ctx context.Context, req *grpchealth.CheckRequest) (*grpchealth.CheckResponse, error) {
	if req.Service != "" && !r.services[req.Service] {
		return nil, refusal(fault.ServiceNotFound, "unknown service %s", req.Service)
	}
	if ready, _ := r.State(ctx); !ready {
		return &grpchealth.CheckResponse{Status: grpchealth.StatusNotServing}, nil
	}
	return &grpchealth.CheckResponse{Status: grpchealth.StatusServing}, nil
}

// ReadyHandler answers /readyz: 200 when ready, 503 otherwise, with each
// part's state as a JSON object.
func (r *Readiness) ReadyHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		ready, parts := r.State(req.Context())
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		code := http.StatusOK
		if !ready {
			code = http.StatusServiceUnavailable
		}
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(parts)
	})
}

// livez answers /livez: the process is up and serving HTTP. It touches no
// database, so an outage of one never makes an orchestrator restart every
// process (that is what /readyz is for).
func livez() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write([]byte("{\"process\":\"ok\"}\n"))
	})
}
