package api

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
	"connectrpc.com/otelconnect"
	"connectrpc.com/validate"
	"connectrpc.com/vanguard"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/seatghor/seatghor/gen/seatghor/booking/v1/bookingv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/catalog/v1/catalogv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/counter/v1/counterv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/ledger/v1/ledgerv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/network/v1/networkv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/notify/v1/notifyv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/partner/v1/partnerv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/payment/v1/paymentv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/search/v1/searchv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/seatmap/v1/seatmapv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/signin/v1/signinv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/tickets/v1/ticketsv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/waitingroom/v1/waitingroomv1connect"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/counter"
	"github.com/seatghor/seatghor/server/ledger"
	"github.com/seatghor/seatghor/server/network"
	"github.com/seatghor/seatghor/server/partner"
	"github.com/seatghor/seatghor/server/payment"
	"github.com/seatghor/seatghor/server/ratelimit"
	"github.com/seatghor/seatghor/server/shard"
	"github.com/seatghor/seatghor/server/signin"
	"github.com/seatghor/seatghor/server/ticket"
	"github.com/seatghor/seatghor/server/waitingroom"
	"github.com/seatghor/seatghor/server/webhook"
)

// Config is what the API edge needs.
type Config struct {
	// Credentials verifies bearer credentials (auth.NewCredentials).
	Credentials auth.Verifier
	Catalog     *catalog.Service
	Booking     *booking.Service
	// Network keeps the operators' routes and timetables (issue 24); nil:
	// NetworkService answers unavailable.
	Network *network.Service
	// Ledger serves the admins' ledger reads.
	Ledger *ledger.Service
	// Payments takes payments, cancels orders, receives the gateway's
	// webhooks and reconciles.
	Payments *payment.Service
	Router   *shard.Router
	// Partners serves PartnerService; nil: it answers unavailable.
	Partners *partner.Service
	Log      *slog.Logger
	// SeatMaps answers GetSeatMap: the Redis read model when
	// configured; nil reads the shards through Booking.
	SeatMaps SeatMapReader
	// TripSearch answers SearchTrips from the trip index; nil:
	// searches answer unavailable.
	TripSearch TripSearcher
	// Tickets answers ListMyTickets and GetTicketDownload from the "my
	// tickets" read model (R-8.3); nil: they answer unavailable.
	Tickets TicketReader
	// TicketFiles presigns e-ticket downloads; nil: unavailable.
	TicketFiles TicketFiles
	// SandboxSMS reads what the SMS sandbox received (ListSandboxSms);
	// nil where SMS go to a real gateway.
	SandboxSMS SandboxSMS
	// CheckIn admits tickets at the gate (a shard write).
	CheckIn *ticket.Service
	// ManifestPDF prints trips' manifests (ExportManifest as a PDF); nil:
	// CSV only.
	ManifestPDF ManifestPrinter
	// Counters sells for cash at operators' counters (decision 0443); nil:
	// CounterService answers unavailable.
	Counters *counter.Service
	// PhoneSignIn signs buyers in by SMS code (decision 0436) and starts
	// guests (decision 0437); nil: off.
	PhoneSignIn PhoneSignIn
	// TicketSMS sends a booking's SMS again on request (decision 0437);
	// nil: off.
	TicketSMS TicketSMS
	// Now is the time of reads (upcoming tickets); default time.Now.
	Now func() time.Time
	// SeatMapShare is how long one Redis read of a show's availability
	// answers every availability-only read of that show on the fast path
	// (decision 0232); 0: each read goes to Redis.
	SeatMapShare time.Duration
	// WaitingRooms runs the shows' waiting rooms and checks the
	// Queue-Token of CreateHold; nil (no Redis): no show may have one.
	WaitingRooms *waitingroom.Service
	// RateLimits, with Redis, limits holds, payments and joins per caller
	// nil: no limits.
	RateLimits *RateLimits
	// Health are the parts /readyz checks besides the databases of the
	// router (used when Readiness is nil).
	Health []HealthCheck
	// Readiness answers /readyz and the gRPC health service, and drains on
	// shutdown; nil: one built from Router and Health.
	Readiness *Readiness
	// Registry receives the API's metrics; the admin handler's /metrics
	// serves it.
	Registry *prometheus.Registry
	// Webhooks manages partners' webhook endpoints (issue 12); nil: its
	// RPCs answer unavailable.
	Webhooks *webhook.Service
	// MaxRequestBytes bounds a request message; default 1 MiB.
	MaxRequestBytes int
	// Tracing receives a span per request and per RPC; nil records none.
	Tracing trace.TracerProvider
	// SignIn serves the site's sign-in through the identity provider
	// (signin.LoginPath and signin.CallbackPath); nil: not mounted.
	SignIn http.Handler
	// CORSOrigins may call the API from a browser page of theirs
	// (SEATGHOR_CORS_ORIGINS, decision 0167); none: same origin only.
	CORSOrigins []string
}

// RateLimits is the rate limiter's configuration and store.
type RateLimits struct {
	Redis  redis.UniversalClient
	Prefix string
	Config ratelimit.Config
}

// compressMinBytes is the smallest answer compressed for a caller who
// accepts it.
const compressMinBytes = 1024

// publicProcedures are the RPCs anyone may call, without a credential
// search answers and static seat layouts are the same for every
// caller, so the edge may cache them; the public keys of tickets' codes
// are public, decision 0390). The OpenAPI description marks the
// same routes' security optional (tools/openapipost; a test keeps the two
// equal).
func publicProcedures() []string {
	return []string{searchv1connect.TripSearchServiceSearchTripsProcedure, seatmapv1connect.SeatMapServiceGetSeatLayoutProcedure,
		ticketsv1connect.TicketServiceGetTicketKeysProcedure,
		// A phone sign-in, or a guest's start, is how a buyer with no
		// credential gets one (decisions 0436, 0437).
		signinv1connect.PhoneSignInServiceSendCodeProcedure, signinv1connect.PhoneSignInServiceVerifyCodeProcedure,
		signinv1connect.PhoneSignInServiceStartGuestProcedure,
		// A guest finds the tickets by ticket number and phone (decision 0437).
		ticketsv1connect.TicketServiceFindTicketsProcedure, ticketsv1connect.TicketServiceResendTicketSmsProcedure}
}

// keyGrants are the procedures with side effects that an API key's grant
// opens to it although it is otherwise read-only: a webhooks-scoped key
// manages its partner's webhook endpoints (decision 0276).
func keyGrants() map[string][]string {
	return map[string][]string{string(partner.ScopeWebhooks): {
		partnerv1connect.WebhookServiceCreateEndpointProcedure, partnerv1connect.WebhookServiceRotateEndpointSecretProcedure,
		partnerv1connect.WebhookServiceEnableEndpointProcedure, partnerv1connect.WebhookServiceDisableEndpointProcedure,
		partnerv1connect.WebhookServiceDeleteEndpointProcedure, partnerv1connect.WebhookServiceReplayDeliveriesProcedure,
	}}
}

// NewHandler returns the public HTTP surface: every service over Connect,
// gRPC and gRPC-Web at its RPC paths, the REST routes (vanguard), the gRPC
// health service, /livez and /readyz, the site's sign-in when configured,
// all behind the CORS allow-list. Metrics, reflection and pprof are on
// the admin listener only (NewAdminHandler, decision 0081).
func NewHandler(cfg Config) (http.Handler, error) {
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = 1 << 20
	}
	if cfg.Tracing == nil {
		cfg.Tracing = noop.NewTracerProvider()
	}
	// A span per RPC, named by its procedure, inside the request's span;
	// metrics stay Prometheus's (rpcMetrics).
	rpcSpans, err := otelconnect.NewInterceptor(otelconnect.WithTracerProvider(cfg.Tracing),
		otelconnect.WithPropagator(propagation.TraceContext{}), otelconnect.WithoutMetrics())
	if err != nil {
		return nil, fmt.Errorf("RPC tracing: %w", err)
	}
	if cfg.Readiness == nil {
		cfg.Readiness = NewReadiness(cfg.Router, cfg.Health, 0)
	}
	metrics := newRPCMetrics(cfg.Registry, cfg.Router, cfg.Booking)
	// Every line logged with a request's context carries its id.
	log := slog.New(LogHandler(cfg.Log.Handler()))
	cfg.Log = log
	// Order matters: who (auth), how often (rate limit), what (validation),
	// whether a partner may sell the show, the idempotency key, then the waiting room's Queue-Token, so rejected
	// requests are never recorded and a refused bot costs one Redis call.
	// publicProcedures may be called without a credential.
	// The edge interceptor, right inside metrics, answers every error below
	// it by the one error table (errors.go): the interceptors return their
	// packages' errors, never Connect's.
	chain := []connect.Interceptor{metrics, rpcSpans, edgeInterceptor{cfg.Log}, newAuthInterceptor(cfg.Credentials, keyGrants(), publicProcedures()...)}
	if rl := cfg.RateLimits; rl != nil {
		var sales ratelimit.Sales // a nil *waitingroom.Service must stay a nil interface
		if cfg.WaitingRooms != nil {
			sales = cfg.WaitingRooms
		}
		chain = append(chain, rateLimited(ratelimit.New(rl.Redis, rl.Prefix, rl.Config, sales, cfg.Log, cfg.Registry)))
	}
	chain = append(chain, validate.NewInterceptor(), textInterceptor{})
	if cfg.Partners != nil {
		chain = append(chain, partnerShows(cfg.Partners))
	}
	chain = append(chain, idempotencyKeys(publicProcedures()...))
	if cfg.WaitingRooms != nil {
		chain = append(chain, &queueTokenInterceptor{rooms: cfg.WaitingRooms, log: cfg.Log})
	}
	opts := []connect.HandlerOption{
		connect.WithInterceptors(chain...),
		connect.WithReadMaxBytes(cfg.MaxRequestBytes),
		// An answer under a kilobyte (a hold, an order) is sent as it is:
		// gzip costs more CPU than it saves bytes, and a REST answer was
		// compressed by the handler only for the transcoder to inflate it
		// again (decision 0227). Seat maps and lists are still compressed.
		connect.WithCompressMinBytes(compressMinBytes),
	}
	mux := http.NewServeMux()
	var names []string
	var seatmapRPC http.Handler
	for _, s := range services(cfg, opts) {
		mux.Handle(s.path, s.h)
		names = append(names, s.name)
		if s.name == seatmapv1connect.SeatMapServiceName {
			seatmapRPC = s.h
		}
	}
	// REST answers use the proto field names ({"hold_id": …}) as the seed's
	// HTTP examples do, while Connect JSON keeps the standard
	// lowerCamelCase: vanguard passes JSON through from the handler, so the
	// REST routes get handlers of their own whose JSON codec uses proto names.
	var rest []*vanguard.Service
	for _, s := range services(cfg, append(opts, connect.WithCodec(protoNamesJSON{}))) {
		rest = append(rest, vanguard.NewService(s.path, s.h))
	}
	transcoder, err := vanguard.NewTranscoder(rest, vanguard.WithCodec(func(res vanguard.TypeResolver) vanguard.Codec {
		c := vanguard.NewJSONCodec(res)
		c.MarshalOptions.UseProtoNames = true
		c.MarshalOptions.EmitUnpopulated = false
		return c
	}))
	if err != nil {
		return nil, fmt.Errorf("REST transcoder: %w", err)
	}
	// Text that is not UTF-8 in a REST path or query is the caller's
	// mistake, answered before the transcoder calls it internal.
	restHandler := restInput(restTemplates(names), jsonByDefault(transcoder))
	mux.Handle("/v1/", restHandler)
	// The availability of a show whose layout the caller has, straight
	// from Redis (decision 0230), read over REST or as Connect's GET (the
	// site, decision 0274); whatever it cannot answer goes to the REST
	// route or the RPC.
	fast := newSeatmapFastPath(cfg, metrics)
	mux.Handle("GET /v1/shows/{show_id}/seatmap", fast.route(parseFastQuery, restHandler))
	mux.Handle("GET "+getSeatMapProcedure, fast.route(parseConnectGet, seatmapRPC))
	// The binary encoding's POST too (the Go SDK's, and a phone's that
	// takes binary: decision 0400).
	mux.Handle("POST "+getSeatMapProcedure, fast.route(parseConnectPost, seatmapRPC))
	// the health service reports the readiness /readyz reports.
	mux.Handle(grpchealth.NewHandler(cfg.Readiness))
	// the gateway's webhooks are plain HTTP; they only record.
	mux.Handle("POST /webhooks/{provider}", gatewayWebhook(cfg.Payments))
	mux.Handle("GET /livez", livez())
	// The REST routes' OpenAPI description, generated from proto/ (decision 0197).
	mux.Handle("GET /openapi.yaml", openAPI())
	mux.Handle("GET /readyz", cfg.Readiness.ReadyHandler())
	if cfg.SignIn != nil {
		mux.Handle("GET "+signin.LoginPath, cfg.SignIn)
		mux.Handle("GET "+signin.CallbackPath, cfg.SignIn)
	}
	// The request's span is outermost, so the access log line carries its
	// trace id. The port is public: a caller's traceparent is linked, not
	// adopted, so no caller decides our sampling or joins our traces.
	h := accessLog(log, withCORS(cfg.CORSOrigins, notModified(mux)))
	if tracingOff(cfg.Tracing) {
		// No tracing (the no-op provider, however wrapped): the middleware
		// would record nothing, at about a tenth of a seat-map read's CPU
		// (decision 0230).
		return h, nil
	}
	return otelhttp.NewHandler(h, "seatghor",
		otelhttp.WithTracerProvider(cfg.Tracing), otelhttp.WithPropagators(propagation.TraceContext{}),
		otelhttp.WithPublicEndpointFn(func(*http.Request) bool { return true }), otelhttp.WithMeterProvider(metricnoop.NewMeterProvider()),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method + " " + routeOf(r) }),
		otelhttp.WithFilter(func(r *http.Request) bool { return r.URL.Path != "/livez" && r.URL.Path != "/readyz" }),
	), nil
}

// tracingOff tells whether tp is the no-op provider, however wrapped
// (server/tracing embeds it): its tracers are no-op tracers.
func tracingOff(tp trace.TracerProvider) bool {
	_, off := tp.Tracer("").(noop.Tracer)
	return off
}

// routeOf names a request's span without its ids: an RPC path as it is,
// a REST or other path by its first segment.
func routeOf(r *http.Request) string {
	p := r.URL.Path
	if strings.HasPrefix(p, "/seatghor.") || strings.HasPrefix(p, "/grpc.") {
		return p
	}
	if first, _, ok := strings.Cut(strings.TrimPrefix(p, "/"), "/"); ok {
		return "/" + first + "/…"
	}
	return p
}

type service struct {
	name string
	path string
	h    http.Handler
}

// services builds the Connect handler of every service with opts.
func services(cfg Config, opts []connect.HandlerOption) []service {
	var out []service
	add := func(name string) func(string, http.Handler) {
		return func(path string, h http.Handler) { out = append(out, service{name, path, h}) }
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	catalogH := &catalogHandler{svc: cfg.Catalog, log: cfg.Log, waitingRooms: cfg.WaitingRooms != nil, now: now}
	if cfg.Payments != nil {
		catalogH.cancels = cfg.Payments
	}
	add(catalogv1connect.CatalogServiceName)(catalogv1connect.NewCatalogServiceHandler(catalogH, opts...))
	add(bookingv1connect.HoldServiceName)(bookingv1connect.NewHoldServiceHandler(&holdHandler{cfg.Booking, cfg.Log}, opts...))
	add(bookingv1connect.OrderServiceName)(bookingv1connect.NewOrderServiceHandler(&orderHandler{cfg.Booking, cfg.Payments, cfg.Log}, opts...))
	add(seatmapv1connect.SeatMapServiceName)(seatmapv1connect.NewSeatMapServiceHandler(newSeatmapHandler(cfg), opts...))
	// Declared now, implemented by later work: they answer unimplemented.
	add(paymentv1connect.PaymentServiceName)(paymentv1connect.NewPaymentServiceHandler(&paymentHandler{cfg.Payments, cfg.Log}, opts...))
	add(ticketsv1connect.TicketServiceName)(ticketsv1connect.NewTicketServiceHandler(&ticketHandler{
		tickets: cfg.Tickets, files: cfg.TicketFiles, phones: cfg.PhoneSignIn, sms: cfg.TicketSMS, checkIn: cfg.CheckIn, now: now, log: cfg.Log}, opts...))
	add(signinv1connect.PhoneSignInServiceName)(signinv1connect.NewPhoneSignInServiceHandler(&phoneSignInHandler{cfg.PhoneSignIn, cfg.Log}, opts...))
	add(counterv1connect.CounterServiceName)(counterv1connect.NewCounterServiceHandler(&counterHandler{svc: cfg.Counters, numbers: cfg.Tickets, log: cfg.Log}, opts...))
	add(ticketsv1connect.ManifestServiceName)(ticketsv1connect.NewManifestServiceHandler(&manifestHandler{checkIn: cfg.CheckIn, pdf: cfg.ManifestPDF, log: cfg.Log}, opts...))
	add(searchv1connect.TripSearchServiceName)(searchv1connect.NewTripSearchServiceHandler(&searchHandler{cfg.TripSearch, now, cfg.Log}, opts...))
	add(waitingroomv1connect.WaitingRoomServiceName)(waitingroomv1connect.NewWaitingRoomServiceHandler(&waitingRoomHandler{cfg.WaitingRooms, cfg.Log}, opts...))
	add(partnerv1connect.AllocationServiceName)(partnerv1connect.NewAllocationServiceHandler(&allocationHandler{cfg.Booking, cfg.Log}, opts...))
	add(ledgerv1connect.LedgerServiceName)(ledgerv1connect.NewLedgerServiceHandler(&ledgerHandler{svc: cfg.Ledger, payments: cfg.Payments,
		booking: cfg.Booking, manager: catalogH.manager, catalog: catalogH.svc, orgManager: catalogH.orgManager, log: cfg.Log}, opts...))
	add(partnerv1connect.PartnerServiceName)(partnerv1connect.NewPartnerServiceHandler(&partnerHandler{svc: cfg.Partners, hooks: cfg.Webhooks, log: cfg.Log}, opts...))
	add(partnerv1connect.WebhookServiceName)(partnerv1connect.NewWebhookServiceHandler(&webhookHandler{cfg.Webhooks, cfg.Log}, opts...))
	add(networkv1connect.NetworkServiceName)(networkv1connect.NewNetworkServiceHandler(&networkHandler{cfg.Network, cfg.Log}, opts...))
	add(notifyv1connect.NotificationServiceName)(notifyv1connect.NewNotificationServiceHandler(&notifyHandler{cfg.SandboxSMS, cfg.Log}, opts...))
	return out
}

// jsonByDefault treats a REST request body without a JSON content type
// (curl -d sends application/x-www-form-urlencoded) as JSON: the REST
// routes take nothing else.
func jsonByDefault(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ct := r.Header.Get("Content-Type")
		if ct == "" || strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
			r.Header.Set("Content-Type", "application/json")
		}
		next.ServeHTTP(w, r)
	})
}

// NewServer returns the HTTP server: HTTP/1.1 and unencrypted HTTP/2 (h2c)
// on one port, so gRPC clients connect without TLS in dev and behind a
// TLS-terminating proxy in production. Serve it on Listener's listener:
// its handlers may then send an answer in one write (decision 0256).
func NewServer(addr string, h http.Handler) *http.Server {
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return &http.Server{Addr: addr, Handler: h, Protocols: &p, ReadHeaderTimeout: 10 * time.Second, ConnContext: withOneWriteConn}
}
