package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/seatghor/seatghor/internal/devenv/demo"
	"github.com/seatghor/seatghor/internal/devenv/pgcluster"
	"github.com/seatghor/seatghor/server/api"
	"github.com/seatghor/seatghor/server/app"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/objstore"
	"github.com/seatghor/seatghor/server/partner"
	"github.com/seatghor/seatghor/server/signin"
	"github.com/seatghor/seatghor/server/site"
	"github.com/seatghor/seatghor/server/tracing"
	"github.com/seatghor/seatghor/server/webhook"
	"github.com/spf13/pflag"
)

// tokenOptions are the flags of `seatghor token`.
type tokenOptions struct {
	sub, role string
	partnerID int64
	ttl       time.Duration
}

func (o *tokenOptions) register(fs *pflag.FlagSet) {
	fs.StringVar(&o.sub, "sub", "", "the user id (token subject); required")
	fs.StringVar(&o.role, "role", "user", "user, operator, admin or partner")
	fs.Int64Var(&o.partnerID, "partner", 0, "the partner id the caller acts for; required with --role partner, only with it")
	fs.DurationVar(&o.ttl, "ttl", 24*time.Hour, "how long the token is valid")
}

func runToken(cfg config, o tokenOptions, stdout io.Writer) error {
	if o.sub == "" {
		return fmt.Errorf("%w: token needs --sub", errUsage)
	}
	r, err := auth.ParseRole(o.role)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	// Decision 0326: a partner token acts for one partner, which the server
	// refuses to leave out; another role acts for none.
	if r == auth.RolePartner && o.partnerID <= 0 {
		return fmt.Errorf("%w: --role partner needs --partner ID, the partner's id (from CreatePartner)", errUsage)
	}
	if r != auth.RolePartner && o.partnerID != 0 {
		return fmt.Errorf("%w: --partner goes only with --role partner", errUsage)
	}
	keys, err := cfg.tokenKeys()
	if err != nil {
		return err
	}
	tokens, err := auth.NewTokens(keys, time.Now)
	if err != nil {
		return err
	}
	tok, err := tokens.MintPrincipal(auth.Principal{UserID: o.sub, Role: r, PartnerID: o.partnerID}, o.ttl)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, tok)
	return err
}

func runMigrate(ctx context.Context, cfg config, log *slog.Logger) error {
	if cfg.CatalogURL == "" {
		return errors.New("migrate needs SEATGHOR_CATALOG_URL and SEATGHOR_SHARD_URLS")
	}
	if err := migrateDatabases(ctx, cfg); err != nil {
		return err
	}
	log.Info("migrated", "shards", len(cfg.ShardURLs), "read", cfg.ReadURL != "")
	return nil
}

func runServe(ctx context.Context, cfg config, log *slog.Logger) error {
	if cfg.CatalogURL == "" {
		return errors.New("serve needs SEATGHOR_CATALOG_URL and SEATGHOR_SHARD_URLS (or use `seatghor dev`)")
	}
	if err := cfg.checkServeKeys(); err != nil {
		return err
	}
	if cfg.OIDC.Enabled() && cfg.OIDC.RedirectURL == "" {
		return errors.New("serve needs SEATGHOR_OIDC_REDIRECT_URL (https://<site>/auth/callback, as registered with the provider) with SEATGHOR_OIDC_ISSUER")
	}
	tp, err := openTracing(ctx, cfg, rolesOf(cfg), log)
	if err != nil {
		return err
	}
	defer closeTracing(ctx, tp, log)
	gw, err := cfg.Payment.gatewayClient(tp)
	if err != nil {
		return err
	}
	a, err := app.Open(ctx, app.Config{CatalogURL: cfg.CatalogURL, ShardURLs: cfg.ShardURLs,
		TokenKeys: cfg.TokenKeys, TicketKeys: cfg.TicketKeys, QueueKeys: cfg.QueueKeys, SealKeys: cfg.SealKeys,
		AuthSecret: cfg.AuthSecret, MaxConns: cfg.MaxConns, HoldBatchSize: cfg.HoldBatchSize, HoldBatchRunners: cfg.HoldBatchRunners, RedisURL: cfg.RedisURL, RedisPrefix: cfg.RedisPrefix, Log: log,
		ReadURL: cfg.ReadURL, S3: cfg.S3, TripIndex: cfg.TripIndex,
		WaitingRoom: cfg.OnSale.WaitingRoom, RateLimits: cfg.OnSale.Limits, CatalogPolicy: cfg.CatalogPolicy, Timetables: cfg.Timetables,
		Gateway: gw, PaymentWorkers: cfg.Payment.workers(), Payments: cfg.Payment.service(), APIKeyMode: cfg.APIKeyMode, PartnerShowHoldCap: cfg.PartnerShowHoldCap,
		OIDC: cfg.OIDC, CORSOrigins: cfg.CORSOrigins, Tracing: tp, Webhooks: cfg.Webhooks, Notify: cfg.Notify})
	if err != nil {
		return err
	}
	defer a.Close()
	return serve(ctx, cfg, a, site.Options{OIDCSignIn: cfg.OIDC.Enabled(), PhoneSignIn: cfg.Notify.SMS != nil}, log, nil)
}

// runRebuild drops a read model and its checkpoints; the projectors of the
// running `serve` processes replay it from the outbox.
func runRebuild(ctx context.Context, cfg config, args []string, log *slog.Logger) error {
	if len(args) != 1 {
		return fmt.Errorf("%w: rebuild needs one projector name, e.g. seatghor rebuild seatmap", errUsage)
	}
	a, err := openTool(ctx, cfg, "rebuild", log)
	if err != nil {
		return err
	}
	defer a.Close()
	if err := a.Projections.Rebuild(ctx, args[0]); err != nil {
		return err
	}
	log.Info("read model dropped; the running projectors replay it", "projector", args[0])
	return nil
}

// openTool opens the platform for an operator's command (rebuild, verify)
// on the configured databases and read side; it serves nothing.
func openTool(ctx context.Context, cfg config, command string, log *slog.Logger) (*app.App, error) {
	if cfg.CatalogURL == "" {
		return nil, fmt.Errorf("%s needs SEATGHOR_CATALOG_URL and SEATGHOR_SHARD_URLS (and SEATGHOR_REDIS_URL for seatmap, SEATGHOR_MEILI_URL for tripindex)", command)
	}
	secret := cfg.AuthSecret
	if secret == "" {
		secret = devSecret // the tools mint no tokens
	}
	gw, err := cfg.Payment.gatewayClient(nil) // the tools never call it
	if err != nil {
		return nil, err
	}
	return app.Open(ctx, app.Config{CatalogURL: cfg.CatalogURL, ShardURLs: cfg.ShardURLs,
		TokenKeys: cfg.TokenKeys, TicketKeys: cfg.TicketKeys, QueueKeys: cfg.QueueKeys, SealKeys: cfg.SealKeys,
		AuthSecret: secret, MaxConns: cfg.MaxConns, HoldBatchSize: cfg.HoldBatchSize, HoldBatchRunners: cfg.HoldBatchRunners, RedisURL: cfg.RedisURL, RedisPrefix: cfg.RedisPrefix, Log: log, Gateway: gw,
		ReadURL: cfg.ReadURL, S3: cfg.S3, TripIndex: cfg.TripIndex})
}

// devOptions are the flags of `seatghor dev`; empty ones take their
// variable's value (the help shows no default that the environment changes).
type devOptions struct{ dataDir, addr string }

func (o *devOptions) register(fs *pflag.FlagSet) {
	fs.StringVar(&o.dataDir, "data-dir", "", "where dev keeps its databases, S3 objects, index and Redis (default $SEATGHOR_DATA_DIR, else .seatghor)")
	fs.StringVar(&o.addr, "addr", "", "listen address (default $SEATGHOR_ADDR, else 127.0.0.1:8080)")
}

func runDev(ctx context.Context, cfg config, o devOptions, stdout io.Writer, log *slog.Logger) error {
	dataDir := cmp.Or(o.dataDir, cfg.DataDir)
	cfg.Addr = cmp.Or(o.addr, cfg.Addr)
	if cfg.OIDC.Enabled() && cfg.OIDC.RedirectURL == "" {
		cfg.OIDC.RedirectURL = "http://" + cfg.Addr + signin.CallbackPath
	}
	if cfg.AuthSecret == "" {
		cfg.AuthSecret = devSecret
	}
	// Decision 0081: dev's admin listener takes a free port (printed in the
	// banner) unless SEATGHOR_ADMIN_ADDR names one; Ctrl-C stops at once.
	if !cfg.adminAddrSet {
		cfg.AdminAddr = "127.0.0.1:0"
	}
	if !cfg.drainDelaySet {
		cfg.DrainDelay = 0
	}
	if cfg.APIKeyMode == "" {
		cfg.APIKeyMode = partner.ModeTest // dev pays through the sandbox
	}
	if cfg.CatalogURL == "" {
		dir, err := filepath.Abs(filepath.Join(dataDir, "postgres"))
		if err != nil {
			return err
		}
		log.Info("starting embedded PostgreSQL", "dir", dir)
		cluster, err := pgcluster.Start(ctx, pgcluster.Config{Dir: dir, Log: log})
		if err != nil {
			return fmt.Errorf("embedded PostgreSQL: %w", err)
		}
		defer func() {
			if err := cluster.Stop(context.WithoutCancel(ctx)); err != nil {
				log.Error("stop embedded PostgreSQL", "err", err)
			}
		}()
		names := []string{"seatghor_catalog"}
		for i := range cfg.Shards {
			names = append(names, fmt.Sprintf("seatghor_shard_%d", i))
		}
		for _, n := range append(names, "seatghor_read") {
			if err := cluster.CreateDatabase(ctx, n); err != nil {
				return err
			}
		}
		if cfg.ReadURL == "" {
			cfg.ReadURL = cluster.URL("seatghor_read")
		}
		cfg.CatalogURL = cluster.URL(names[0])
		for _, n := range names[1:] {
			cfg.ShardURLs = append(cfg.ShardURLs, cluster.URL(n))
		}
	}
	if err := migrateDatabases(ctx, cfg); err != nil {
		return err
	}
	// without SEATGHOR_S3_ENDPOINT the PDFs go to an embedded
	// S3-compatible server, kept under the data directory (they need the
	// read database: none when dev runs on given databases without one).
	if cfg.S3.Endpoint == "" && cfg.ReadURL != "" {
		dir, err := filepath.Abs(filepath.Join(dataDir, "s3"))
		if err != nil {
			return err
		}
		s3, err := objstore.StartEmbedded(dir, log)
		if err != nil {
			return err
		}
		defer func() { _ = s3.Close() }()
		cfg.S3 = s3.Config(cfg.S3.Bucket)
	}
	// without SEATGHOR_MEILI_URL trip search runs on an embedded
	// index kept under the data directory.
	if cfg.TripIndex.MeiliURL == "" {
		dir, err := filepath.Abs(filepath.Join(dataDir, "tripindex"))
		if err != nil {
			return err
		}
		cfg.TripIndex.Dir = dir
	}
	if cfg.RedisURL == "" {
		dir, err := filepath.Abs(filepath.Join(dataDir, "redis"))
		if err != nil {
			return err
		}
		url, stop, err := startDevRedis(ctx, dir, log)
		if err != nil {
			return err
		}
		defer stop()
		cfg.RedisURL = url
	}
	// The sandbox gateway runs in-process, over HTTP like a real one; the
	// payment jobs run every few seconds, so every outcome settles fast.
	if cfg.Payment.GatewayURL == "" {
		cfg.Payment.WebhookSecrets = []string{devWebhookSecret}
		url, stop, err := startSandbox(ctx, cfg.Payment.SandboxAddr, "http://"+cfg.Addr+"/webhooks/sandbox",
			cfg.Payment.WebhookSecrets, cfg.Payment.SandboxFaults, log)
		if err != nil {
			return err
		}
		defer stop()
		cfg.Payment.GatewayURL = url
	}
	// Issue 25: buyers' SMS go to the SMS sandbox, their e-mail to mailpit.
	mailDir, err := filepath.Abs(filepath.Join(dataDir, "mailpit"))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(mailDir, 0o755); err != nil {
		return err
	}
	messages, stopMessages, err := startDevNotify(ctx, mailDir, "http://"+cfg.Addr, log)
	if err != nil {
		return err
	}
	defer stopMessages()
	tp, err := openTracing(ctx, cfg, "dev", log)
	if err != nil {
		return err
	}
	defer closeTracing(ctx, tp, log)
	gw, err := cfg.Payment.gatewayClient(tp)
	if err != nil {
		return err
	}
	workers := cfg.Payment.workers()
	if workers.RecoverEvery == 0 {
		workers.RecoverEvery = 2 * time.Second
	}
	workers.Poll, workers.ReconcileEvery = 500*time.Millisecond, 5*time.Minute
	a, err := app.Open(ctx, app.Config{CatalogURL: cfg.CatalogURL, ShardURLs: cfg.ShardURLs,
		TokenKeys: cfg.TokenKeys, TicketKeys: cfg.TicketKeys, QueueKeys: cfg.QueueKeys, SealKeys: cfg.SealKeys,
		AuthSecret: cfg.AuthSecret, MaxConns: cfg.MaxConns, HoldBatchSize: cfg.HoldBatchSize, HoldBatchRunners: cfg.HoldBatchRunners, RedisURL: cfg.RedisURL, RedisPrefix: cfg.RedisPrefix, Log: log,
		ReadURL: cfg.ReadURL, S3: cfg.S3, ProjectorMaxBackoff: 2 * time.Second, TripIndex: cfg.TripIndex,
		WaitingRoom: cfg.OnSale.WaitingRoom, RateLimits: cfg.OnSale.Limits, CatalogPolicy: cfg.CatalogPolicy, Timetables: cfg.Timetables,
		Gateway: gw, PaymentWorkers: workers, APIKeyMode: cfg.APIKeyMode, PartnerShowHoldCap: cfg.PartnerShowHoldCap, Webhooks: devWebhooks(cfg.Webhooks),
		Payments: devPayments(cfg.Payment.service()), OIDC: cfg.OIDC, CORSOrigins: cfg.CORSOrigins, Tracing: tp,
		Notify: messages.cfg})
	if err != nil {
		return err
	}
	defer a.Close()
	if err := loadDemo(ctx, a, log); err != nil {
		return err
	}
	// The site's dev sign-in and the sandbox's test tokens: dev only.
	siteOpts := site.Options{DevSignIn: true, OIDCSignIn: cfg.OIDC.Enabled(), TestPayments: true, Tokens: a.Tokens,
		PhoneSignIn: messages.cfg.SMS != nil}
	return serve(ctx, cfg, a, siteOpts, log, func(listenAddr, adminAddr string) error {
		if err := printTour(stdout, a, listenAddr, adminAddr, cfg.Payment.GatewayURL); err != nil {
			return err
		}
		return printMessages(stdout, messages)
	})
}

// devWebhooks lets dev's partners receive webhooks on their own machine
// (http://127.0.0.1:…).
func devWebhooks(w webhook.WorkerConfig) webhook.WorkerConfig {
	w.AllowLoopback = true
	return w
}

// serve runs the admin listener, and the API and the workers as cfg.Roles
// says, until ctx ends, then shuts down gracefully: not ready first, then
// closed (decision 0080). ready is called once the listeners are up. The
// api role serves the site too (siteOpts says which sign-ins it offers).
func serve(ctx context.Context, cfg config, a *app.App, siteOpts site.Options, log *slog.Logger, ready func(addr, adminAddr string) error) error {
	workers, stopWorkers := context.WithCancel(ctx)
	defer stopWorkers()
	if cfg.Roles["projectors"] {
		done := make(chan struct{})
		go func() { a.RunProjectors(workers); close(done) }()
		// Stop them before the pools close (deferred earlier, runs later).
		defer func() { stopWorkers(); <-done }()
		log.Info("projectors running", "seat_map", a.SeatMaps != nil, "my_tickets", a.MyTickets != nil,
			"e_tickets", a.Objects != nil, "trip_index", a.Trips != nil)
	}
	if cfg.Roles["webhooks"] {
		done := make(chan struct{})
		go func() { a.RunWebhooks(workers); close(done) }()
		defer func() { stopWorkers(); <-done }()
		log.Info("webhook delivery running")
	}
	if cfg.Roles["workers"] {
		go a.RunWorkers(workers, cfg.SweepInterval)
		log.Info("workers running", "sweep_interval", cfg.SweepInterval)
	}
	errc := make(chan error, 2)
	// One admin listener per process, whatever its roles: /metrics (ledger
	// balances: never the public port), reflection, pprof and the probes.
	adminLn, err := net.Listen("tcp", cfg.AdminAddr)
	if err != nil {
		return fmt.Errorf("admin listener on %s: %w", cfg.AdminAddr, err)
	}
	adminSrv := api.NewServer(cfg.AdminAddr, a.Admin)
	go func() { errc <- adminSrv.Serve(adminLn) }()
	servers := []*http.Server{adminSrv}
	adminAddr := adminLn.Addr().String()
	var addr string
	if cfg.Roles["api"] {
		h, err := site.Wrap(a.Handler, siteOpts)
		if err != nil {
			_ = adminSrv.Close()
			return err
		}
		ln, err := net.Listen("tcp", cfg.Addr)
		if err != nil {
			_ = adminSrv.Close()
			return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
		}
		srv := api.NewServer(cfg.Addr, h)
		go func() { errc <- srv.Serve(api.Listener(ln)) }()
		servers = append(servers, srv)
		addr = ln.Addr().String()
	}
	log.Info("serving", "addr", addr, "admin", "http://"+adminAddr)
	if ready != nil {
		if err := ready(addr, adminAddr); err != nil {
			return err
		}
	}
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	// R-11: /readyz and gRPC health turn NOT_SERVING first, so the load
	// balancer stops sending requests; the listeners close after the delay
	// and the requests in flight finish.
	a.Readiness.Drain()
	log.Info("draining", "delay", cfg.DrainDelay)
	time.Sleep(cfg.DrainDelay)
	log.Info("shutting down")
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	for i := len(servers) - 1; i >= 0; i-- { // the public port first, the admin listener last
		if err := servers[i].Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("shutdown: %w", err)
		}
	}
	return nil
}

func printTour(w io.Writer, a *app.App, addr, adminAddr, gatewayURL string) error {
	user, err := a.Tokens.Mint("rumana", auth.RoleUser, 7*24*time.Hour)
	if err != nil {
		return err
	}
	other, err := a.Tokens.Mint("karim", auth.RoleUser, 7*24*time.Hour)
	if err != nil {
		return err
	}
	admin, err := a.Tokens.Mint("admin", auth.RoleAdmin, 7*24*time.Hour)
	if err != nil {
		return err
	}
	gate, err := a.Tokens.Mint(demo.Gate, auth.RoleOperator, 7*24*time.Hour)
	if err != nil {
		return err
	}
	base := "http://" + addr
	_, err = fmt.Fprintf(w, `
Seatghor is running at %[1]s  (Connect, gRPC, gRPC-Web and REST on one port; Ctrl-C stops it)
Open the site:          %[1]s/  (dev sign-in: pick a name and a role; the gate page: %[1]s/gate)
Operator's console:     %[1]s/console  (sign in as demo-manager, role operator: shows, staff, audit log)
Admin listener:         %[8]s  (/metrics, gRPC reflection, /debug/pprof/; never the public port)
Partners start at:      docs/partners.md, "Your first sale, step by step" (the demo shows' organisation: %[9]s)

  user token (rumana):  %[2]s
  user token (karim):   %[3]s
  admin token:          %[4]s
  gate staff token:     %[6]s  (%[7]s, who only scans the demo shows' tickets)

Try it:
  export U=%[2]s K=%[3]s A=%[4]s G=%[6]s
  # search trips, typo tolerant, with filters (R-8.4; the demo trips are 30 days ahead)
  curl -s '%[1]s/v1/trips:search?query=chatogram' -H "Authorization: Bearer $U"
  curl -s %[1]s/seatghor.search.v1.TripSearchService/SearchTrips -H "Authorization: Bearer $U" -H 'Content-Type: application/json' -d '{"origin": "Dhaka", "sort": "TRIP_SORT_PRICE"}'
  # the seat map of show 7 (seats A1…J4, all free)
  curl -s %[1]s/v1/shows/7/seatmap -H "Authorization: Bearer $U"
  # Rumana holds A1 and A2
  curl -s %[1]s/v1/holds -H "Authorization: Bearer $U" -H "Idempotency-Key: $(date +%%s%%N)" -d '{"show_id": 7, "seats": ["A1", "A2"]}'
  # Karim asks for A2 and A3 together: 409, all or nothing (R-3.2)
  curl -si %[1]s/v1/holds -H "Authorization: Bearer $K" -H "Idempotency-Key: $(date +%%s%%N)" -d '{"show_id": 7, "seats": ["A2", "A3"]}'
  # two of the 3 places of the general-admission show 9
  curl -s %[1]s/v1/holds -H "Authorization: Bearer $U" -H "Idempotency-Key: $(date +%%s%%N)" -d '{"show_id": 9, "quantity": 2}'
  # an order from a hold (put the hold_id in)
  curl -s %[1]s/v1/orders -H "Authorization: Bearer $U" -H "Idempotency-Key: $(date +%%s%%N)" -d '{"hold_id": "HOLD_ID"}'
  # pay it through the sandbox gateway (%[5]s); other test tokens: tok_decline,
  # tok_timeout_applied, tok_timeout_not_applied, tok_webhook_only; no token: an approval page
  curl -s %[1]s/v1/payments -H "Authorization: Bearer $U" -H "Idempotency-Key: $(date +%%s%%N)" -d '{"order_id": "ORDER_ID", "sandbox": {"token": "tok_success"}}'
  curl -s %[1]s/v1/orders/ORDER_ID -H "Authorization: Bearer $U"
  # my tickets (R-8.3; a moment after the payment), then the e-ticket PDF through a short-lived URL (R-8.5)
  curl -s %[1]s/v1/tickets -H "Authorization: Bearer $U"
  curl -s %[1]s/v1/tickets/TICKET_ID/download -H "Authorization: Bearer $U"
  # the gate (an admin, or a manager or gate staff of the show's organisation) scans the ticket's code: admitted once, a second scan says when
  curl -s %[1]s/v1/shows/7/checkins -H "Authorization: Bearer $A" -H "Idempotency-Key: $(date +%%s%%N)" -d '{"code": "CODE", "gate": "north-1"}'
  curl -s %[1]s/v1/shows/7/checkins -H "Authorization: Bearer $G" -H "Idempotency-Key: $(date +%%s%%N)" -d '{"code": "CODE", "gate": "north-2"}'
  # the ledger's trial balance over every shard (admins): sums to zero (R-7.6)
  curl -s %[1]s/seatghor.ledger.v1.LedgerService/GetTrialBalance -H "Authorization: Bearer $A" -H 'Content-Type: application/json' -d '{}'
  # admins create shows (Connect JSON)
  curl -s %[1]s/seatghor.catalog.v1.CatalogService/CreateShow -H "Authorization: Bearer $A" -H "Idempotency-Key: $(date +%%s%%N)" -H 'Content-Type: application/json' \
    -d '{"kind": "SHOW_KIND_BUS_TRIP", "title": "Dhaka to Rajshahi", "origin": "Dhaka", "destination": "Rajshahi", "startsAt": "2027-01-10T07:00:00Z", "currency": "BDT", "sections": [{"name": "Main", "rows": ["A","B","C"], "seatsPerRow": 4, "priceMinor": "90000"}]}'
  # a partner reseller (docs/partners.md): an admin registers it, allowed to sell the demo shows;
  # its staff then sign in with a token naming it (put the partner_id in) and make API keys
  curl -s %[1]s/v1/partners -H "Authorization: Bearer $A" -H "Idempotency-Key: $(date +%%s%%N)" -d '{"name": "Shohoz Travels", "commission_bps": 500, "allowed_organization_ids": ["%[9]s"]}'
  P=$(bin/seatghor token --sub nadia --role partner --partner PARTNER_ID)
  curl -s %[1]s/v1/partners/PARTNER_ID/api-keys -H "Authorization: Bearer $P" -H "Idempotency-Key: $(date +%%s%%N)" -d '{"name": "booking server"}'
  # an on-sale behind a waiting room (R-9), opening in a minute: who joins before gets a random place then
  S=$(curl -s %[1]s/seatghor.catalog.v1.CatalogService/CreateShow -H "Authorization: Bearer $A" -H "Idempotency-Key: $(date +%%s%%N)" -H 'Content-Type: application/json' \
    -d "{\"kind\": \"SHOW_KIND_CONCERT\", \"title\": \"Arnob live\", \"venue\": \"ICCB\", \"startsAt\": \"2027-01-10T14:00:00Z\", \"currency\": \"BDT\", \"sections\": [{\"name\": \"Main\", \"rows\": [\"A\",\"B\"], \"seatsPerRow\": 4, \"priceMinor\": \"150000\"}], \"onSaleAt\": \"$(date -u -d '+1 min' +%%Y-%%m-%%dT%%H:%%M:%%SZ)\", \"waitingRoom\": {\"enabled\": true}}" | sed -E 's/.*"showId":"([0-9]+)".*/\1/')
  Q=$(curl -s %[1]s/seatghor.waitingroom.v1.WaitingRoomService/Join -H "Authorization: Bearer $U" -H 'Content-Type: application/json' -d "{\"showId\": \"$S\"}" | sed -E 's/.*"token":"([^"]+)".*/\1/')
  # poll it (a minute later: place, pollAfter, estimatedWait, then admittedToken)
  curl -s %[1]s/seatghor.waitingroom.v1.WaitingRoomService/GetStatus -H "Authorization: Bearer $U" -H 'Content-Type: application/json' -d "{\"token\": \"$Q\"}"
  # while the room is open a hold needs the admitted token: 403 without it, 200 with QT=<admittedToken>
  curl -si %[1]s/v1/holds -H "Authorization: Bearer $U" -H "Idempotency-Key: $(date +%%s%%N)" -d "{\"show_id\": $S, \"seats\": [\"A1\"]}"
  curl -s %[1]s/v1/holds -H "Authorization: Bearer $U" -H "Queue-Token: $QT" -H "Idempotency-Key: $(date +%%s%%N)" -d "{\"show_id\": $S, \"seats\": [\"A1\"]}"
  # the operator's view and controls: waiting, admitted, admission rate, estimated wait; pause, rate limits, end
  curl -s %[1]s/v1/shows/$S/sale -H "Authorization: Bearer $A"
  curl -s %[1]s/v1/shows/$S/sale -H "Authorization: Bearer $A" -H "Idempotency-Key: $(date +%%s%%N)" -d '{"paused": true, "max_admission_rate": 100}'
  # health (alive; ready: every database answers) and, on the admin listener, metrics
  curl -s %[1]s/livez; curl -s %[1]s/readyz; curl -s %[8]s/metrics | grep seatghor_

`, base, user, other, admin, gatewayURL, gate, demo.Gate, "http://"+adminAddr, demo.Organization)
	return err
}

// openTracing gives the process its tracer provider: exporting over OTLP
// when OTEL_EXPORTER_OTLP_ENDPOINT is set (docs/operations.md), else none.
func openTracing(ctx context.Context, cfg config, roles string, log *slog.Logger) (*tracing.Provider, error) {
	tp, err := tracing.New(ctx, tracing.Config{Export: cfg.Tracing, Roles: roles})
	if err != nil {
		return nil, err
	}
	if cfg.Tracing {
		log.Info("exporting traces over OTLP")
	}
	return tp, nil
}

// closeTracing sends the spans still buffered, for at most 5 seconds.
func closeTracing(ctx context.Context, tp *tracing.Provider, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := tp.Shutdown(ctx); err != nil {
		log.Warn("flushing traces", "err", err)
	}
}

// rolesOf names the process's roles, sorted: "api,projectors,workers".
func rolesOf(cfg config) string {
	return strings.Join(slices.Sorted(maps.Keys(cfg.Roles)), ",")
}

// printMessages tells where dev's SMS and e-mail to buyers can be read.
func printMessages(w io.Writer, m devNotify) error {
	inbox := m.inboxURL
	if inbox == "" {
		inbox = "none (no mailpit; scripts/ensure-deps.sh run installs it)"
	}
	_, err := fmt.Fprintf(w, `
Messages to buyers (issue 25):
  SMS sandbox:          %s/  (every SMS, its encoding and parts; admins: ListSandboxSms)
  e-mail inbox:         %s  (mailpit)
`, m.smsURL, inbox)
	return err
}
