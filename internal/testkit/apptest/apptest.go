// Package apptest starts the whole platform for end-to-end tests: fresh
// PostgreSQL databases (a catalog and N shards) migrated from the embedded
// schema, the real wiring of package app, and a real HTTP server speaking
// HTTP/1.1 and h2c, so tests call the API as any client would.
package apptest

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seatghor/seatghor/internal/testkit/pgtest"
	"github.com/seatghor/seatghor/internal/testkit/schematest"
	"github.com/seatghor/seatghor/server/app"
	"github.com/seatghor/seatghor/server/audit"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/auth/idp"
	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/gateway/sandbox"
	"github.com/seatghor/seatghor/server/keyset"
	"github.com/seatghor/seatghor/server/migrations"
	"github.com/seatghor/seatghor/server/notify"
	"github.com/seatghor/seatghor/server/notify/smssandbox"
	"github.com/seatghor/seatghor/server/objstore"
	"github.com/seatghor/seatghor/server/partner"
	"github.com/seatghor/seatghor/server/payment"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/ratelimit"
	"github.com/seatghor/seatghor/server/signin"
	"github.com/seatghor/seatghor/server/waitingroom"

	"github.com/seatghor/seatghor/server/webhook"
	"go.opentelemetry.io/otel/trace"
)

// Secret signs the test tokens.
const Secret = "apptest-secret"

// Options tune an Env.
type Options struct {
	// Mail, when set, sends the notifications' e-mail (SMTP to a test's
	// mailpit); nil sends none.
	Mail notify.Mail
	// Shards is the number of fresh shard databases; default 4 (none
	// when ShardURLs are given).
	Shards int
	// CatalogURL and ShardURLs, when set, run the platform on these
	// databases of an earlier Env, as a process whose configuration lists
	// more shards would: Shards fresh shards join after them.
	CatalogURL string
	ShardURLs  []string
	// Clock drives hold expiry and token expiry; default the wall clock.
	Clock clock.Clock
	// MaxConns bounds each pool; default 6 (the tests' server allows 100
	// connections in all).
	MaxConns int32
	// RedisURL, when set, gives the platform the Redis seat map
	// under RedisPrefix (use redistest.New for both).
	RedisURL    string
	RedisPrefix string
	// Projectors runs the read side's projectors until the test ends.
	Projectors bool
	// WaitingRoom tunes the waiting rooms (they need RedisURL); the test
	// drives the admitter with App.WaitingRooms.Tick.
	WaitingRoom waitingroom.Config
	// RateLimits, with RedisURL, limits callers; default none.
	RateLimits ratelimit.Config
	// Tickets gives the platform a fresh read database, so "my tickets"
	// is served and projected, and e-ticket PDFs in the
	// bucket of S3: a real MinIO's (miniotest) when S3.Endpoint is set, else
	// an embedded in-memory S3 server's.
	Tickets bool
	S3      objstore.Config
	// ProjectorMaxBackoff caps the projectors' retry backoff; default 10 s.
	ProjectorMaxBackoff time.Duration
	// TripIndex gives the platform a trip search index: a real
	// Meilisearch with MeiliURL (meilitest), the embedded one with Dir
	// (tb.TempDir()); zero: SearchTrips answers unavailable.
	TripIndex app.TripIndexConfig
	// Sandbox configures the sandbox payment gateway the platform pays
	// through (fault injection); its Now, WebhookURL and secrets are set
	// here.
	Sandbox sandbox.Config
	// GatewayTimeout bounds each gateway request; default 2 s.
	GatewayTimeout time.Duration
	// Payments tunes the payment service.
	Payments payment.Config
	// CatalogPolicy bounds what organisations set on their shows.
	CatalogPolicy catalog.Policy
	// Log receives the platform's logs; default the test's log at WARN. A
	// fuzz target passes its own (testing.F may not log inside its fuzz
	// function).
	Log *slog.Logger
	// PaymentWorkers, when set, runs the payment jobs (webhook events,
	// recovery, reconciliation) until the test ends.
	PaymentWorkers *payment.WorkerConfig
	// Tracing receives the platform's spans (an SDK provider with an
	// in-memory recorder, in tests of the traces); nil records none.
	Tracing trace.TracerProvider
	// Webhooks, when set, tunes the webhook delivery workers and runs one
	// until the test ends (its AllowLoopback lets endpoints be httptest
	// servers).
	Webhooks *webhook.WorkerConfig
	// Partners tells which partners exist (allocations); default
	// booking.AnyPartner.
	Partners booking.Partners
	// TokenKeys, TicketKeys and QueueKeys are the platform's key sets
	// (decision 0085); when all three are given the shorthand Secret is not
	// used (but for the webhook secrets' sealing key), otherwise it derives
	// the keys of the others.
	TokenKeys, TicketKeys, QueueKeys *keyset.Set
	// OIDC configures an identity provider and the site's sign-in; an
	// empty RedirectURL becomes the test server's /auth/callback.
	OIDC idp.Config
	// CORSOrigins may call the API from their pages.
	CORSOrigins []string
}

// WebhookSecret signs the sandbox's webhooks in tests.
const WebhookSecret = "whsec_apptest"

// Env is a running platform.
type Env struct {
	App *app.App
	// URL is the server's base URL (the public port).
	URL string
	// AdminURL is the admin listener's base URL: /metrics, reflection,
	// pprof (decision 0081).
	AdminURL string
	// HTTP is a client for Connect and REST (HTTP/1.1, many connections).
	HTTP *http.Client
	// H2C is a client that speaks HTTP/2 without TLS, for gRPC.
	H2C *http.Client
	// Gateway is the sandbox payment gateway, over HTTP at GatewayURL.
	Gateway    *sandbox.Server
	GatewayURL string
	// SMS reads what the platform's SMS sandbox received.
	SMS *smssandbox.Client
	// CatalogURL, ShardURLs and ReadURL are the databases the platform
	// runs on (ReadURL only with Options.Tickets).
	CatalogURL string
	ShardURLs  []string
	ReadURL    string
	// cfg opens Peer's processes on the same databases.
	cfg app.Config
}

// New starts a platform on fresh databases; everything stops at cleanup.
func New(tb testing.TB, opts Options) *Env {
	tb.Helper()
	if opts.Shards == 0 && len(opts.ShardURLs) == 0 {
		opts.Shards = 4
	}
	if opts.MaxConns == 0 {
		opts.MaxConns = 6
	}
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.NewTextHandler(testWriter{tb}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	admin := pgtest.Server(tb)
	catalogTpl := schematest.Template(tb, admin, migrations.Catalog)
	shardTpl := schematest.Template(tb, admin, migrations.Shard)
	cfg := app.Config{
		CatalogURL:  opts.CatalogURL,
		ShardURLs:   slices.Clone(opts.ShardURLs),
		AuthSecret:  Secret,
		MaxConns:    opts.MaxConns,
		PoolIdle:    2 * time.Second, // the test server's 100 connections are shared by every test at once
		RedisURL:    opts.RedisURL,
		RedisPrefix: opts.RedisPrefix,
		WaitingRoom: opts.WaitingRoom,
		RateLimits:  opts.RateLimits,
		APIKeyMode:  partner.ModeTest, // payments go to the sandbox
		Clock:       opts.Clock,
		Log:         opts.Log,
		Tracing:     opts.Tracing,
	}
	if cfg.CatalogURL == "" {
		cfg.CatalogURL = admin.Fresh(tb, catalogTpl)
	}
	cfg.TokenKeys, cfg.TicketKeys, cfg.QueueKeys = opts.TokenKeys, opts.TicketKeys, opts.QueueKeys
	if opts.TokenKeys != nil && opts.TicketKeys != nil && opts.QueueKeys != nil {
		cfg.AuthSecret = ""
		// The webhook secrets' sealing is no test's subject here: the
		// key the shorthand would derive.
		cfg.SealKeys = keyset.FromSecret(Secret, keyset.WebhookSecrets)
	}
	for range opts.Shards {
		cfg.ShardURLs = append(cfg.ShardURLs, admin.Fresh(tb, shardTpl))
	}
	cfg.ProjectorMaxBackoff = opts.ProjectorMaxBackoff
	cfg.CatalogPolicy = opts.CatalogPolicy
	cfg.Partners = opts.Partners
	cfg.TripIndex = opts.TripIndex
	// Every platform texts through a sandbox of its own (issue 25): the
	// notifications projector runs with the read database (Tickets).
	smsBox := httptest.NewServer(smssandbox.New(nil))
	tb.Cleanup(smsBox.Close)
	sms := smssandbox.NewClient(smsBox.URL, nil)
	// Every test caller comes from 127.0.0.1: the per-address limit of
	// phone sign-in codes is the phonesignin package tests' subject.
	cfg.Notify = app.NotifyConfig{SMS: sms, SandboxSMS: sms, Mail: opts.Mail, SiteURL: "http://seatghor.test", PhoneCodesPerClient: 10000,
		GuestsPerClient: 10000}
	if opts.Tickets {
		cfg.ReadURL = admin.Fresh(tb, schematest.Template(tb, admin, migrations.Read))
		cfg.S3 = opts.S3
		if cfg.S3.Endpoint == "" {
			e, err := objstore.StartEmbedded("", nil)
			if err != nil {
				tb.Fatalf("embedded S3: %v", err)
			}
			tb.Cleanup(func() { _ = e.Close() })
			cfg.S3 = e.Config("tickets")
		}
	}
	// The platform's server starts first, so the sandbox knows where to
	// send webhooks; it serves the platform once that is open.
	var handler atomic.Pointer[http.Handler]
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		(*handler.Load()).ServeHTTP(w, r)
	}))
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	srv.Config.Protocols = &p
	srv.Start()
	sb := opts.Sandbox
	sb.Now = opts.Clock.Now
	sb.WebhookURL = srv.URL + "/webhooks/sandbox"
	sb.WebhookSecrets = []string{WebhookSecret}
	gw := sandbox.New(sb)
	gwSrv := httptest.NewServer(gw)
	if opts.GatewayTimeout == 0 {
		opts.GatewayTimeout = 2 * time.Second
	}
	client, err := sandbox.NewClient(sandbox.ClientConfig{
		BaseURL: gwSrv.URL, WebhookSecrets: []string{WebhookSecret}, Timeout: opts.GatewayTimeout,
	})
	if err != nil {
		tb.Fatalf("sandbox client: %v", err)
	}
	cfg.Gateway, cfg.Payments = client, opts.Payments
	cfg.OIDC, cfg.CORSOrigins = opts.OIDC, opts.CORSOrigins
	if cfg.OIDC.Enabled() && cfg.OIDC.RedirectURL == "" {
		cfg.OIDC.RedirectURL = srv.URL + signin.CallbackPath
	}
	if opts.Webhooks != nil {
		cfg.Webhooks = *opts.Webhooks
	}
	a, err := app.Open(context.Background(), cfg)
	if err != nil {
		tb.Fatalf("open platform: %v", err)
	}
	handler.Store(&a.Handler)
	adminSrv := httptest.NewUnstartedServer(a.Admin)
	adminSrv.Config.Protocols = &p
	adminSrv.Start()
	// Cleanups run last-in first-out: the gateway stops sending, then the
	// server stops, before the pools close, and all before the databases
	// are dropped.
	tb.Cleanup(a.Close)
	tb.Cleanup(srv.Close)
	tb.Cleanup(adminSrv.Close)
	tb.Cleanup(gwSrv.Close)
	tb.Cleanup(gw.Close)
	if opts.PaymentWorkers != nil {
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { a.Payments.RunWorkers(ctx, *opts.PaymentWorkers); close(done) }()
		tb.Cleanup(func() { stop(); <-done })
	}
	if opts.Webhooks != nil {
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { a.RunWebhooks(ctx); close(done) }()
		tb.Cleanup(func() { stop(); <-done })
	}
	if opts.Projectors {
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { a.RunProjectors(ctx); close(done) }()
		tb.Cleanup(func() { stop(); <-done })
	}
	var h2 http.Protocols
	h2.SetUnencryptedHTTP2(true)
	return &Env{
		App:      a,
		URL:      srv.URL,
		AdminURL: adminSrv.URL,
		HTTP: &http.Client{Transport: &http.Transport{
			MaxIdleConnsPerHost: 512,
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		}},
		H2C:        &http.Client{Transport: &http.Transport{Protocols: &h2, TLSClientConfig: &tls.Config{}}},
		Gateway:    gw,
		GatewayURL: gwSrv.URL,
		SMS:        sms,
		CatalogURL: cfg.CatalogURL,
		ShardURLs:  cfg.ShardURLs,
		ReadURL:    cfg.ReadURL,
		cfg:        cfg,
	}
}

// Peer starts another API process on the same databases, as a deployment
// runs several, for proofs that what one process writes every other
// obeys at once. It shares e's gateway; it runs no workers or projectors.
func (e *Env) Peer(tb testing.TB) *Env {
	tb.Helper()
	a, err := app.Open(context.Background(), e.cfg)
	if err != nil {
		tb.Fatalf("open peer platform: %v", err)
	}
	srv := httptest.NewUnstartedServer(a.Handler)
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	srv.Config.Protocols = &p
	srv.Start()
	tb.Cleanup(a.Close)
	tb.Cleanup(srv.Close)
	peer := *e
	peer.App, peer.URL, peer.AdminURL = a, srv.URL, ""
	return &peer
}

// testWriter sends the platform's warnings and errors to the test's log,
// so an "internal" answer comes with its cause.
type testWriter struct{ tb testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.tb.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// Token mints a token for sub with role.
func (e *Env) Token(tb testing.TB, sub string, role auth.Role) string {
	tb.Helper()
	tok, err := e.App.Tokens.Mint(sub, role, 24*time.Hour)
	if err != nil {
		tb.Fatal(err)
	}
	return tok
}

// PartnerToken mints a token of the partner role acting for partnerID.
func (e *Env) PartnerToken(tb testing.TB, sub string, partnerID int64) string {
	tb.Helper()
	tok, err := e.App.Tokens.MintPrincipal(auth.Principal{UserID: sub, Role: auth.RolePartner, PartnerID: partnerID}, 24*time.Hour)
	if err != nil {
		tb.Fatal(err)
	}
	return tok
}

// WaitProjected waits until projector has taken every event the platform's
// databases hold now: in the catalog and each shard, its checkpoint is at
// or past the newest row of the outbox. A test that reads a read model
// after the writes it made uses it, so that a late event (a catalog
// event, delivered by the catalog's consumer on its own time) does not
// change the model under the reads. The checkpoint is saved with the
// consumer's next read, at most a poll after the events are applied.
func (e *Env) WaitProjected(tb testing.TB, projector string) {
	tb.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(15 * time.Second)
	for _, p := range append([]*pg.Pool{e.App.Router.Catalog()}, e.App.Router.Shards()...) {
		for {
			var done bool
			if err := p.QueryRow(ctx, `
				SELECT NOT EXISTS (
					SELECT FROM outbox o
					WHERE NOT EXISTS (SELECT FROM projection_checkpoints c
					                  WHERE c.projector = $1 AND (c.xid, c.id) >= (o.xid, o.id)))`, projector).Scan(&done); err != nil {
				tb.Fatalf("apptest: projector %s in %s: %v", projector, p.Name, err)
			}
			if done {
				break
			}
			if time.Now().After(deadline) {
				tb.Fatalf("apptest: projector %s did not take the events of %s within 15 s", projector, p.Name)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// Member makes user a member of organisation org with role, creating the
// organisation (named after its id) when it does not exist.
func (e *Env) Member(tb testing.TB, org, user string, role catalog.Role) {
	tb.Helper()
	ctx := context.Background()
	if _, err := e.App.Catalog.CreateOrganization(ctx, "apptest", org, org, ""); err != nil {
		tb.Fatalf("organization %s: %v", org, err)
	}
	if _, err := e.App.Catalog.SetMember(ctx, audit.Actor{Kind: audit.ActorAdmin, ID: "apptest"}, org, user, role); err != nil {
		tb.Fatalf("member %s of %s: %v", user, org, err)
	}
}
