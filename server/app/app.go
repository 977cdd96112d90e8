// Package app wires Seatghor's parts into one running platform: database
// pools, the shard router, the domain services and the API handler. The
// binary's subcommands and the end-to-end tests build it the same way.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/redis/go-redis/extra/redisotel/v9"
	"github.com/redis/go-redis/v9"

	"github.com/seatghor/seatghor/projections"
	"github.com/seatghor/seatghor/projections/auditlog"
	"github.com/seatghor/seatghor/projections/eticket"
	"github.com/seatghor/seatghor/projections/mytickets"
	"github.com/seatghor/seatghor/projections/notifications"
	"github.com/seatghor/seatghor/projections/seatmap"
	"github.com/seatghor/seatghor/projections/tripindex"
	"github.com/seatghor/seatghor/projections/webhookfeed"
	"github.com/seatghor/seatghor/server/api"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/auth/idp"
	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/counter"
	"github.com/seatghor/seatghor/server/display"
	"github.com/seatghor/seatghor/server/keyset"
	"github.com/seatghor/seatghor/server/ledger"
	"github.com/seatghor/seatghor/server/migrations"
	"github.com/seatghor/seatghor/server/network"
	"github.com/seatghor/seatghor/server/notify"
	"github.com/seatghor/seatghor/server/objstore"
	"github.com/seatghor/seatghor/server/partner"
	"github.com/seatghor/seatghor/server/payment"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/phonesignin"
	"github.com/seatghor/seatghor/server/ratelimit"
	"github.com/seatghor/seatghor/server/seal"
	"github.com/seatghor/seatghor/server/shard"
	"github.com/seatghor/seatghor/server/signin"
	"github.com/seatghor/seatghor/server/ticket"
	"github.com/seatghor/seatghor/server/waitingroom"
	"github.com/seatghor/seatghor/server/webhook"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// seatMapShare is how long one Redis read of a show's availability
// answers the availability-only reads of that show (decision 0232): on an
// on-sale morning thousands of buyers poll one map, and 5 ms is far inside
// the second allows a map to lag and the projector's own delay.
const seatMapShare = 5 * time.Millisecond

// Config says where the databases are and how the platform behaves.
type Config struct {
	CatalogURL string
	ShardURLs  []string
	// TokenKeys sign the API's tokens, TicketKeys the tickets' codes,
	// QueueKeys the waiting rooms' tokens, SealKeys seal the partners'
	// webhook secrets at rest: one key set per purpose, so rotating one
	// voids nothing signed by another (decisions 0085, 0273).
	TokenKeys, TicketKeys, QueueKeys, SealKeys *keyset.Set
	// AuthSecret is the one-line shorthand of dev and tests: each purpose
	// also gets a key derived from it (id "shared"), listed after its own
	// keys. One of the two is needed for every purpose.
	AuthSecret string
	// MaxConns bounds each pool; 0 takes pgx's default.
	MaxConns int32
	// PoolIdle closes a pooled connection idle for that long (0: pgx's
	// half hour). The tests set a short one: many platforms at once share
	// one database server's connections, and idle ones need not wait.
	PoolIdle time.Duration
	// HoldBatchSize and HoldBatchRunners shape the batches of holds
	// (booking.Config; 0 takes its defaults).
	HoldBatchSize, HoldBatchRunners int
	// RedisURL locates the seat-map cache; empty: GetSeatMap reads
	// the shards and the seat-map projector does not run. A URL naming more
	// nodes with addr= parameters is a Redis Cluster (decision 0200).
	RedisURL string
	// RedisPrefix starts every Redis key of the platform; default "seatghor:".
	RedisPrefix string
	// WaitingRoom tunes the waiting rooms; they need Redis.
	WaitingRoom waitingroom.Config
	// RateLimits are the per-caller limits, counted in Redis;
	// the zero value limits nothing.
	RateLimits ratelimit.Config
	// ReadURL locates the read database of "my tickets"; empty:
	// TicketService's reads answer unavailable and neither the mytickets
	// nor the eticket projector runs.
	ReadURL string
	// S3 locates the bucket of the e-ticket PDFs; an empty Endpoint
	// makes no PDFs. Needs ReadURL.
	S3 objstore.Config
	// Notify sends the buyers' SMS and e-mail (issue 25): the notifications
	// projector runs when the read database is configured and either
	// channel is.
	Notify NotifyConfig
	// TicketURLTTL is how long a presigned e-ticket URL works; default 5 min.
	TicketURLTTL time.Duration
	// TripIndex locates the trip search index: Meilisearch, or the
	// embedded index of dev mode.
	TripIndex TripIndexConfig
	// ProjectorMaxBackoff caps the projectors' retry backoff; default 10 s.
	ProjectorMaxBackoff time.Duration
	// CatalogPolicy bounds what organisations set on their shows (decision
	// 0076); nil fields take the defaults.
	CatalogPolicy catalog.Policy
	// Timetables tunes the job that makes the timetables' trips (issue
	// 24): how many days ahead (default 30) and how often it runs
	// (default an hour).
	Timetables Timetables
	// Gateway is the payment provider's adapter: the sandbox client in
	// dev mode and tests.
	Gateway payment.Gateway
	// Partners tells which partners exist, for allocations (decision
	// 0185); default: the registered partners (the partner service).
	Partners booking.Partners
	// Payments tunes the payment service; PaymentWorkers its jobs.
	Payments       payment.Config
	PaymentWorkers payment.WorkerConfig
	// Webhooks tunes the delivery workers of partners' webhooks (issue 12);
	// its AllowLoopback also lets endpoints be plain http to a loopback
	// address (dev and tests).
	Webhooks webhook.WorkerConfig
	// APIKeyMode is the partner API keys this process accepts: live
	// (sk_live_…, the default) or test (sk_test_…, with the sandbox
	// gateway; decision 0180).
	APIKeyMode partner.Mode
	// PartnerShowHoldCap is the per-show cap of partners without their own
	// (decision 0286); 0: partner.DefaultShowHoldCap.
	PartnerShowHoldCap int
	// OIDC is the identity provider whose tokens the API accepts and
	// through which the site signs in (decisions 0086, 0165, 0166); no
	// Issuer: none.
	OIDC idp.Config
	// CORSOrigins may call the API from their pages (decision 0167).
	CORSOrigins []string
	Clock       clock.Clock
	Log         *slog.Logger
	// Tracing receives the spans of the API, the databases, Redis and the
	// projectors (server/tracing); nil records none.
	Tracing trace.TracerProvider
}

// NotifyConfig wires the notifications (issue 25, decisions 0431–0435).
type NotifyConfig struct {
	// SMS sends text messages (an HTTP gateway, or the sandbox's client);
	// Mail sends e-mail (SMTP). A nil one sends nothing on its channel.
	SMS  notify.SMS
	Mail notify.Mail
	// SandboxSMS, when SMS go to the sandbox, reads what it received
	// (ListSandboxSms, admins).
	SandboxSMS api.SandboxSMS
	// SiteURL is the site's public base: the messages link to
	// SiteURL/order/<order id>.
	SiteURL string
	// PhoneCodesPerClient bounds the sign-in codes sent for one client
	// address an hour; default phonesignin.ClientPerHour.
	PhoneCodesPerClient int
	// GuestsPerClient bounds the guests' tokens given to one client
	// address an hour; default phonesignin.GuestsPerHour.
	GuestsPerClient int
}

// Timetables tunes the timetable job.
type Timetables struct {
	// Days ahead, today included, the job makes trips for; 0: 30
	// (SEATGHOR_TIMETABLE_DAYS).
	Days int
	// Every is how often the job runs; 0: an hour
	// (SEATGHOR_TIMETABLE_INTERVAL).
	Every time.Duration
}

func (c *Config) validate() error {
	switch {
	case c.CatalogURL == "":
		return errors.New("no catalog database URL")
	case len(c.ShardURLs) == 0:
		return errors.New("no shard database URLs")
	case c.Gateway == nil:
		return errors.New("no payment gateway")
	case c.S3.Endpoint != "" && c.ReadURL == "":
		return errors.New("e-tickets (S3) need the read database (SEATGHOR_READ_URL)")
	}
	var err error
	if c.TokenKeys, err = keyset.Resolve(c.TokenKeys, c.AuthSecret, keyset.Tokens); err != nil {
		return err
	}
	if c.TicketKeys, err = keyset.Resolve(c.TicketKeys, c.AuthSecret, keyset.TicketCodes); err != nil {
		return err
	}
	if c.QueueKeys, err = keyset.Resolve(c.QueueKeys, c.AuthSecret, keyset.QueueTokens); err != nil {
		return err
	}
	if c.SealKeys, err = keyset.Resolve(c.SealKeys, c.AuthSecret, keyset.WebhookSecrets); err != nil {
		return err
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	if c.RedisPrefix == "" {
		c.RedisPrefix = "seatghor:"
	}
	if c.APIKeyMode == "" {
		c.APIKeyMode = partner.ModeLive
	}
	return nil
}

// App is the wired platform.
type App struct {
	Router   *shard.Router
	Catalog  *catalog.Service
	Booking  *booking.Service
	Ledger   *ledger.Service
	Payments *payment.Service
	// Partners keeps the partner resellers and authenticates their API keys.
	Partners *partner.Service
	Tokens   *auth.Tokens
	Registry *prometheus.Registry
	// Handler is the public port's surface: the API, /livez and /readyz.
	Handler http.Handler
	// Admin is the admin listener's surface: /metrics, gRPC reflection,
	// pprof, /livez and /readyz (decision 0081). Never the public port.
	Admin http.Handler
	// Readiness answers /readyz and the gRPC health service on both; Drain
	// it first on shutdown (decision 0080).
	Readiness *api.Readiness
	// Redis is the seat-map cache's client, a single Redis or a Redis
	// Cluster; nil without SEATGHOR_REDIS_URL.
	Redis redis.UniversalClient
	// SeatMaps is the Redis seat map's reader; nil without Redis.
	SeatMaps *seatmap.Reader
	// Projections runs the read side's projectors (the projectors role).
	Projections *projections.Consumer
	// WaitingRooms runs the shows' waiting rooms; nil without Redis.
	WaitingRooms *waitingroom.Service
	// Read is the read database's pool; nil without ReadURL.
	Read *pg.Pool
	// MyTickets is the "my tickets" read model; nil without ReadURL.
	MyTickets *mytickets.Store
	// Objects is the e-ticket bucket; nil without S3.
	Objects *objstore.Bucket
	// ETickets makes the e-ticket PDFs; nil without S3. Beside its
	// projector, the projectors role runs its reprints (decision 0484).
	ETickets *eticket.Projector
	// CheckIn admits tickets at the gate.
	CheckIn *ticket.Service
	// Trips is the trip search index; nil when none is configured.
	Trips tripindex.TripIndex
	// IdP is the identity provider; nil when none is configured.
	IdP *idp.Provider
	// Webhooks manages partners' webhook endpoints and deliveries;
	// WebhookWorker sends the deliveries (the webhooks role).
	Webhooks      *webhook.Service
	WebhookWorker *webhook.Worker
	// Seal seals and opens the secrets the catalog keeps (decision 0273).
	Seal *seal.Box
	// Network keeps the operators' routes and timetables and makes their
	// trips (the workers' timetable job).
	Network *network.Service
	// timetablesEvery is how often the timetable job runs.
	timetablesEvery time.Duration
	log             *slog.Logger
	// paymentWorkers says how often the payment jobs run.
	paymentWorkers payment.WorkerConfig
	// stopWatch ends the router's watch of the directory; watching is
	// closed once it has.
	stopWatch context.CancelFunc
	watching  chan struct{}
}

// Open connects to every database and wires the services. It does not
// migrate: that is Migrate's job (and `seatghor migrate`'s).
func Open(ctx context.Context, cfg Config) (*App, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if cfg.Tracing == nil {
		cfg.Tracing = noop.NewTracerProvider()
	}
	// The application runs as seatghor_app, which may only read and append
	// to the ledger; migrations run as the login role.
	cat, err := pg.Open(ctx, "catalog", cfg.CatalogURL, cfg.MaxConns, pg.WithRole(pg.AppRole), pg.WithTracing(cfg.Tracing), pg.WithIdle(cfg.PoolIdle))
	if err != nil {
		return nil, err
	}
	shards := make([]*pg.Pool, 0, len(cfg.ShardURLs))
	closeAll := func() {
		cat.Close()
		for _, s := range shards {
			s.Close()
		}
	}
	for i, url := range cfg.ShardURLs {
		p, err := pg.Open(ctx, fmt.Sprintf("shard-%d", i), url, cfg.MaxConns, pg.WithRole(pg.AppRole), pg.WithTracing(cfg.Tracing), pg.WithIdle(cfg.PoolIdle))
		if err != nil {
			closeAll()
			return nil, err
		}
		shards = append(shards, p)
	}
	tokens, err := auth.NewTokens(cfg.TokenKeys, cfg.Clock.Now)
	if err != nil {
		closeAll()
		return nil, err
	}
	a := &App{
		Router:   shard.NewRouter(cat, shards),
		Tokens:   tokens,
		Registry: prometheus.NewRegistry(),
		log:      cfg.Log,
	}
	a.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), api.BuildInfo())
	a.Catalog = catalog.NewService(a.Router, cfg.Clock, booking.Inventory{}, catalog.WithPolicy(cfg.CatalogPolicy))
	a.Payments = payment.NewService(a.Router, cfg.Gateway, cfg.Clock, cfg.Log, cfg.Payments)
	if a.Partners, err = partner.NewService(a.Router, a.Catalog, a.Payments, cfg.Clock, cfg.APIKeyMode, cfg.Log,
		partner.WithDefaultShowHoldCap(cfg.PartnerShowHoldCap)); err != nil {
		closeAll()
		return nil, err
	}
	partners := cfg.Partners
	if partners == nil {
		partners = a.Partners // allocations name registered partners
	}
	a.Booking = booking.NewService(a.Router, a.Catalog, cfg.Clock, booking.Config{Partners: partners, PartnerCaps: a.Partners,
		HoldBatchSize: cfg.HoldBatchSize, HoldBatchRunners: cfg.HoldBatchRunners})
	a.Ledger = ledger.NewService(a.Router, cfg.Clock, ledger.WithHoldback(a.Payments.HeldBack))
	a.Registry.MustRegister(a.Ledger.Collector())
	a.Registry.MustRegister(a.Payments.Collector())
	a.Registry.MustRegister(a.Booking.Collector())
	a.paymentWorkers = cfg.PaymentWorkers
	if a.Network, err = network.NewService(cat, a.Catalog, cfg.Clock, network.Config{Days: cfg.Timetables.Days,
		Registerer: a.Registry, Log: cfg.Log}); err != nil {
		closeAll()
		return nil, err
	}
	a.timetablesEvery = cfg.Timetables.Every
	if a.timetablesEvery <= 0 {
		a.timetablesEvery = time.Hour
	}
	a.CheckIn = ticket.NewService(a.Router, ticket.NewCodes(cfg.TicketKeys), a.Catalog, cfg.Clock)
	if a.Seal, err = seal.New(cfg.SealKeys, webhook.SealLabel); err != nil {
		closeAll()
		return nil, err
	}
	a.Webhooks = webhook.NewService(cat, cfg.Clock, a.Seal, cfg.Webhooks.AllowLoopback,
		webhook.WithMaxEndpoints(cfg.Webhooks.MaxEndpoints), webhook.WithRegisterer(a.Registry))
	hooks := cfg.Webhooks
	hooks.Registerer, hooks.Log = a.Registry, cfg.Log
	if a.WebhookWorker, err = webhook.NewWorker(cat, cfg.Clock, a.Seal, hooks); err != nil {
		closeAll()
		return nil, err
	}
	apiCfg := api.Config{
		Partners: a.Partners, Webhooks: a.Webhooks, Catalog: a.Catalog, Booking: a.Booking, Network: a.Network, Ledger: a.Ledger, Payments: a.Payments, Router: a.Router,
		Log: cfg.Log, Registry: a.Registry, CheckIn: a.CheckIn, Now: cfg.Clock.Now, CORSOrigins: cfg.CORSOrigins, Tracing: cfg.Tracing,
		SeatMapShare: seatMapShare, SandboxSMS: cfg.Notify.SandboxSMS,
		ManifestPDF: func(ctx context.Context, m ticket.Manifest, lang display.Lang) ([]byte, error) {
			show, err := a.Catalog.GetShow(ctx, m.ShowID)
			if err != nil {
				return nil, err
			}
			return eticket.RenderManifest(show, m, lang)
		},
		Counters: counter.NewService(counter.Config{Router: a.Router, Sales: a.Booking, Members: a.Catalog,
			Admitted: ticket.OrderAdmitted, Clock: cfg.Clock, Shows: a.Catalog, Codes: ticket.NewCodes(cfg.TicketKeys),
			Print: func(show catalog.Show, buyer, counter string, tickets []ticket.Ticket, lang display.Lang) ([]byte, error) {
				return eticket.RenderReceipt(show, eticket.Receipt{Buyer: buyer, Counter: counter}, tickets, lang)
			}}),
	}
	if cfg.Notify.SMS != nil {
		// Phone sign-in sends its codes by the buyers' SMS (decision 0436).
		apiCfg.PhoneSignIn = phonesignin.New(phonesignin.Config{DB: cat, SMS: cfg.Notify.SMS, Tokens: tokens,
			Keys: cfg.TokenKeys, Clock: cfg.Clock, ClientPerHour: cfg.Notify.PhoneCodesPerClient,
			GuestsPerHour: cfg.Notify.GuestsPerClient})
	}
	if err := a.openIdP(cfg, tokens, &apiCfg); err != nil {
		closeAll()
		return nil, err
	}
	if err := a.openReadSide(cfg, &apiCfg); err != nil {
		closeAll()
		return nil, err
	}
	a.Readiness = api.NewReadiness(a.Router, apiCfg.Health, 0)
	apiCfg.Readiness = a.Readiness
	a.Handler, err = api.NewHandler(apiCfg)
	if err != nil {
		a.closeRedis()
		a.closeRead()
		a.closeTrips()
		closeAll()
		return nil, err
	}
	a.Admin = api.NewAdminHandler(apiCfg)
	watchCtx, stopWatch := context.WithCancel(context.WithoutCancel(ctx))
	a.stopWatch, a.watching = stopWatch, make(chan struct{})
	go func() { a.Router.Watch(watchCtx); close(a.watching) }()
	return a, nil
}

// openIdP wires the credentials: our tokens, and the identity provider's
// with the site's sign-in when one is configured. Its discovery waits for
// the first request or readiness probe and is retried on demand, so a
// provider that is down does not keep the platform from starting (decision
// 0165); until it answers, /readyz reports it degraded.
func (a *App) openIdP(cfg Config, tokens *auth.Tokens, apiCfg *api.Config) error {
	keys := auth.WithAPIKeys(a.Partners)
	if !cfg.OIDC.Enabled() {
		apiCfg.Credentials = auth.NewCredentials(tokens, keys)
		return nil
	}
	oc := cfg.OIDC
	if oc.Now == nil {
		oc.Now = cfg.Clock.Now
	}
	p, err := idp.New(oc)
	if err != nil {
		return err
	}
	if apiCfg.SignIn, err = signin.New(signin.Config{Provider: p, Keys: cfg.TokenKeys, Now: cfg.Clock.Now, Log: cfg.Log}); err != nil {
		return err
	}
	a.IdP = p
	apiCfg.Credentials = auth.NewCredentials(tokens, keys, auth.WithIssuer(p.Issuer(), p))
	apiCfg.Health = append(apiCfg.Health, api.HealthCheck{Name: "oidc", Check: p.Check})
	return nil
}

// openReadSide wires the read models: the Redis seat map when Redis
// is configured, and the consumer of every database's outbox.
func (a *App) openReadSide(cfg Config, apiCfg *api.Config) error {
	var projectors []projections.Projector
	if cfg.RedisURL != "" {
		var err error
		if a.Redis, err = OpenRedis(cfg.RedisURL, cfg.RedisPrefix, 0); err != nil {
			return fmt.Errorf("SEATGHOR_REDIS_URL: %w", err)
		}
		if err := redisotel.InstrumentTracing(a.Redis, redisotel.WithTracerProvider(cfg.Tracing)); err != nil {
			a.closeRedis()
			return fmt.Errorf("redis tracing: %w", err)
		}
		store := seatmap.NewStore(a.Redis, cfg.RedisPrefix, 0)
		a.SeatMaps, err = seatmap.NewReader(store, a.Booking, cfg.Clock.Now, cfg.Log, a.Registry)
		if err != nil {
			a.closeRedis()
			return err
		}
		apiCfg.SeatMaps = a.SeatMaps
		a.WaitingRooms = waitingroom.NewService(a.Redis, cfg.RedisPrefix, a.Catalog, a.Booking, a.Catalog,
			a.Catalog, cfg.QueueKeys, cfg.Clock, cfg.Log, cfg.WaitingRoom)
		apiCfg.WaitingRooms = a.WaitingRooms
		a.Registry.MustRegister(a.WaitingRooms.Collectors()...)
		apiCfg.RateLimits = &api.RateLimits{Redis: a.Redis, Prefix: cfg.RedisPrefix, Config: cfg.RateLimits}
		projectors = append(projectors, seatmap.NewProjector(store, a.Booking, cfg.Log))
		// Without Redis seat maps come from the shards: degraded, not down.
		apiCfg.Health = append(apiCfg.Health, api.HealthCheck{Name: "redis",
			Check: func(ctx context.Context) error { return a.Redis.Ping(ctx).Err() }})
	}
	tickets, err := a.openTickets(cfg, apiCfg)
	if err != nil {
		a.closeRedis()
		return err
	}
	projectors = append(projectors, tickets...)
	trips, replayTrips, err := a.openTripIndex(cfg, apiCfg)
	if err != nil {
		a.closeRedis()
		a.closeRead()
		return err
	}
	if trips != nil {
		projectors = append(projectors, trips)
	}
	// Partners' webhooks: the projector only enqueues (decision 0190).
	projectors = append(projectors, webhookfeed.NewProjector(a.Webhooks, a.Booking))
	// The shards' audit entries, gathered into the catalog's log (decision 0452).
	projectors = append(projectors, auditlog.NewProjector(a.Router.Catalog(), a.Catalog))
	var sources []projections.Source
	for _, p := range append([]*pg.Pool{a.Router.Catalog()}, a.Router.Shards()...) {
		sources = append(sources, projections.Source{Name: p.Name, Pool: p.Pool, NextCommit: p.NextCommit})
	}
	a.Projections, err = projections.NewConsumer(sources, projectors,
		projections.Config{Registerer: a.Registry, Log: cfg.Log, MaxBackoff: cfg.ProjectorMaxBackoff, Tracing: cfg.Tracing})
	if err == nil && replayTrips {
		err = a.replayTripIndex(context.Background())
	}
	if err != nil {
		a.closeRedis()
		a.closeRead()
		a.closeTrips()
	}
	return err
}

// openTickets wires "my tickets" when a read database is
// configured, and the e-ticket PDFs when a bucket is too. It
// returns their projectors.
func (a *App) openTickets(cfg Config, apiCfg *api.Config) ([]projections.Projector, error) {
	if cfg.ReadURL == "" {
		return nil, nil
	}
	read, err := pg.Open(context.Background(), "read", cfg.ReadURL, cfg.MaxConns, pg.WithRole(pg.AppRole), pg.WithTracing(cfg.Tracing), pg.WithIdle(cfg.PoolIdle))
	if err != nil {
		return nil, err
	}
	a.Read = read
	apiCfg.Health = append(apiCfg.Health, api.HealthCheck{Name: "read", Required: true, Check: read.Ping})
	codes := a.CheckIn.Codes()
	a.MyTickets = mytickets.NewStore(read.Pool)
	apiCfg.Tickets = a.MyTickets
	out := []projections.Projector{mytickets.NewProjector(a.MyTickets, a.Catalog, codes)}
	if n := cfg.Notify; n.SMS != nil || n.Mail != nil {
		told := notifications.NewProjector(read.Pool, notifications.Config{SMS: n.SMS, Mail: n.Mail,
			SiteURL: n.SiteURL, Shows: a.Catalog, Now: cfg.Clock.Now, Log: cfg.Log})
		out = append(out, told)
		if n.SMS != nil {
			apiCfg.TicketSMS = told // a lost booking SMS sent again (decision 0437)
		}
	}
	if cfg.S3.Endpoint == "" {
		return out, nil
	}
	if a.Objects, err = objstore.Open(cfg.S3); err != nil {
		a.closeRead()
		return nil, err
	}
	apiCfg.TicketFiles = eticket.NewDownloads(a.Objects, cfg.TicketURLTTL, cfg.Clock.Now)
	// Without the store, PDFs wait to be rendered: degraded, not down.
	apiCfg.Health = append(apiCfg.Health, api.HealthCheck{Name: "objects", Check: func(ctx context.Context) error {
		_, err := a.Objects.Exists(ctx, "healthz")
		return err
	}})
	a.ETickets = eticket.NewProjector(a.Objects, a.MyTickets, a.Catalog, a.Booking, codes, read, cfg.Clock.Now)
	return append(out, a.ETickets), nil
}

func (a *App) closeRead() {
	if a.Read != nil {
		a.Read.Close()
	}
}

// OpenRedis connects to the Redis of url: a Redis Cluster when the URL
// names further nodes with addr= parameters (go-redis's cluster URL, e.g.
// redis://h1:7000?addr=h2:7000&addr=h3:7000; decision 0200), else a single
// Redis. Timeouts are short: when Redis is down, GetSeatMap falls back to
// the shard quickly instead of waiting. poolSize bounds the
// connections per node (0: go-redis's default); `loadtest holds` opens its
// baseline's client here too, so it reads the same URLs as the server.
func OpenRedis(url, prefix string, poolSize int) (redis.UniversalClient, error) {
	const dial, read, write = 300 * time.Millisecond, 500 * time.Millisecond, 500 * time.Millisecond
	if !strings.Contains(url, "addr=") {
		opts, err := redis.ParseURL(url)
		if err != nil {
			return nil, err
		}
		opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout = dial, read, write
		opts.PoolSize = poolSize
		opts.MaxRetries = 1
		return redis.NewClient(opts), nil
	}
	// Multi-key scripts stay in one slot only through the hash tag of the
	// key names ({show id}, {sale id}); a brace in the prefix would
	// become the tag instead.
	if strings.ContainsAny(prefix, "{}") {
		return nil, fmt.Errorf("a Redis Cluster's key prefix (SEATGHOR_REDIS_PREFIX %q) may not contain { or }", prefix)
	}
	opts, err := redis.ParseClusterURL(url)
	if err != nil {
		return nil, err
	}
	opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout = dial, read, write
	opts.PoolSize = poolSize
	// Fail fast as on a single Redis: the reader answers from the shard
	// meanwhile. Redirects (MOVED, ASK) are followed apart from this
	// (MaxRedirects, 3).
	opts.MaxRetries = 1
	// go-redis relearns the slot map on a redirect (MOVED), but a primary
	// that died answers nothing: ask again after every failed call, or the
	// client keeps dialing the dead node until its next periodic reload.
	opts.ClusterStateReloadInterval = 10 * time.Second
	c := redis.NewClusterClient(opts)
	c.AddHook(reloadOnFailure{c})
	return c, nil
}

// reloadOnFailure makes a cluster client reload the slot map after a call
// failed for a reason other than Redis's answer (a dead or unreachable
// node) or because the cluster is down (a failover in progress). Reloads
// are lazy and coalesced by go-redis, so a burst of failures costs one.
type reloadOnFailure struct{ c *redis.ClusterClient }

func (h reloadOnFailure) failed(ctx context.Context, err error) {
	var reply redis.Error
	if err == nil || errors.Is(err, redis.Nil) {
		return
	}
	if !errors.As(err, &reply) || strings.HasPrefix(err.Error(), "CLUSTERDOWN") || strings.HasPrefix(err.Error(), "TRYAGAIN") {
		h.c.ReloadState(ctx)
	}
}

func (reloadOnFailure) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h reloadOnFailure) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.failed(ctx, err)
		return err
	}
}

func (h reloadOnFailure) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		h.failed(ctx, err)
		return err
	}
}

func (a *App) closeRedis() {
	if a.Redis != nil {
		_ = a.Redis.Close()
	}
}

// RunProjectors runs the read side's projectors until ctx ends (the
// projectors role), and the e-tickets' reprints. Several processes may
// run it: each (projector, database) pair is active in one of them at a
// time.
func (a *App) RunProjectors(ctx context.Context) {
	if a.ETickets == nil {
		a.Projections.Run(ctx)
		return
	}
	// A show moved or renamed has its e-tickets made again a page at a
	// time (decision 0484); several processes share the queue.
	reprinting := make(chan struct{})
	go func() { a.ETickets.RunReprints(ctx, time.Second, a.log); close(reprinting) }()
	a.Projections.Run(ctx)
	<-reprinting
}

// RunWebhooks sends partners' webhook deliveries until ctx ends (the
// webhooks role). Any number of processes may run it. It first seals the
// secrets stored in the clear or under a rotated-out key (decision 0273);
// a failure there is logged, and the deliveries still go out (a secret
// that does not open fails only its own endpoint's).
func (a *App) RunWebhooks(ctx context.Context) {
	if n, err := a.Webhooks.Reseal(ctx); err != nil {
		a.log.Error("webhook secrets not all resealed", "resealed", n, "err", err)
	} else if n > 0 {
		a.log.Info("webhook secrets resealed under the sealing key", "endpoints", n)
	}
	go a.WebhookWorker.RunPruner(ctx, time.Hour)
	a.WebhookWorker.Run(ctx)
}

// Close closes every pool and the Redis client.
func (a *App) Close() {
	a.stopWatch()
	<-a.watching
	a.closeRedis()
	a.closeRead()
	a.closeTrips()
	a.Router.Catalog().Close()
	for _, s := range a.Router.Shards() {
		s.Close()
	}
}

// Migrate applies the embedded migrations to the catalog and every shard.
func Migrate(ctx context.Context, catalogURL string, shardURLs []string) error {
	run := func(name, url string, kind migrations.Kind) error {
		p, err := pg.Open(ctx, name, url, 2)
		if err != nil {
			return err
		}
		defer p.Close()
		return migrations.Up(ctx, p.Pool, kind)
	}
	if err := run("catalog", catalogURL, migrations.Catalog); err != nil {
		return err
	}
	for i, url := range shardURLs {
		if err := run(fmt.Sprintf("shard-%d", i), url, migrations.Shard); err != nil {
			return err
		}
	}
	return nil
}

// MigrateRead applies the read database's migrations.
func MigrateRead(ctx context.Context, readURL string) error {
	p, err := pg.Open(ctx, "read", readURL, 2)
	if err != nil {
		return err
	}
	defer p.Close()
	return migrations.Up(ctx, p.Pool, migrations.Read)
}

// outboxPruneEvery and outboxRetention: a daily prune keeping a week of
// events, enough to rebuild the event-fed read models after a fix.
const (
	outboxPruneEvery = 24 * time.Hour
	outboxRetention  = 7 * 24 * time.Hour
)

// ledgerCheckEvery is how often the workers take the trial balance and
// look for unbalanced transactions, and for seats booked twice.
const ledgerCheckEvery = 5 * time.Minute

// RunWorkers runs the background work of the platform until ctx ends: the
// hold sweeper, the allocations' returns (decision 0185), the ledger check, the payment jobs
// webhook events, recovery, reconciliation), the waiting rooms'
// admitter and the timetable job (issue 24: at once, then every
// Timetables.Every).
func (a *App) RunWorkers(ctx context.Context, sweepEvery time.Duration) {
	go a.Network.RunJob(ctx, a.timetablesEvery)
	go a.Ledger.RunChecker(ctx, ledgerCheckEvery, a.log)
	go a.Booking.RunSeatCheck(ctx, ledgerCheckEvery, a.log)
	go a.Payments.RunWorkers(ctx, a.paymentWorkers)
	go a.Booking.RunReturns(ctx, sweepEvery, a.log)
	if a.WaitingRooms != nil {
		// one admitter moves every waiting room (a lease in Redis).
		go a.WaitingRooms.RunAdmitter(ctx)
	}
	// outbox rows go once every projector has passed them and they
	// are older than the retention (projections/README.md).
	go a.Projections.RunPruner(ctx, outboxPruneEvery, outboxRetention)
	a.Booking.RunSweeper(ctx, sweepEvery, a.log)
}
