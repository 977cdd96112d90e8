package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/seatghor/seatghor/server/api"
	"github.com/seatghor/seatghor/server/app"
	"github.com/seatghor/seatghor/server/auth/idp"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/keyset"
	"github.com/seatghor/seatghor/server/network"
	"github.com/seatghor/seatghor/server/objstore"
	"github.com/seatghor/seatghor/server/partner"
	"github.com/seatghor/seatghor/server/tracing"
	"github.com/seatghor/seatghor/server/webhook"
)

// devSecret is the shorthand secret when SEATGHOR_AUTH_SECRET is unset. Only
// `dev`, `token`, `loadtest` and `rebuild` accept it; `serve` refuses it.
const devSecret = "seatghor-dev-secret-not-for-production"

// config is every setting of the binary, from SEATGHOR_* variables.
type config struct {
	// Addr is the listen address (SEATGHOR_ADDR, default 127.0.0.1:8080).
	Addr string
	// AdminAddr is the admin listener's address: /metrics, gRPC reflection,
	// pprof, /livez, /readyz (SEATGHOR_ADMIN_ADDR, default 127.0.0.1:9090;
	// in dev, unset: a free port, printed). One per process, whatever its
	// roles; never the public port (decision 0081).
	AdminAddr string
	// adminAddrSet says SEATGHOR_ADMIN_ADDR was given (dev keeps it then).
	adminAddrSet bool
	// DrainDelay is how long a process that is told to stop stays up, not
	// ready, before it closes its listeners, so load balancers stop sending
	// it requests first (SEATGHOR_DRAIN_DELAY, default 5s; dev 0; decision 0080).
	DrainDelay time.Duration
	// drainDelaySet says SEATGHOR_DRAIN_DELAY was given (dev keeps it then).
	drainDelaySet bool
	// AuthSecret is the one-line shorthand for the keys (SEATGHOR_AUTH_SECRET,
	// dev and tests): each purpose gets a key derived from it (id "shared").
	AuthSecret string
	// TokenKeys, TicketKeys and QueueKeys sign the API's tokens, the
	// tickets' codes and the waiting rooms' tokens, SealKeys seal the
	// partners' webhook secrets in the catalog (SEATGHOR_TOKEN_KEYS,
	// SEATGHOR_TICKET_KEYS, SEATGHOR_QUEUE_KEYS, SEATGHOR_SEAL_KEYS, or a
	// file named by the same variable with _FILE): "kid:secret,…", the
	// first signs, every one verifies (decisions 0085, 0273). nil: only the
	// key derived from AuthSecret.
	TokenKeys, TicketKeys, QueueKeys, SealKeys *keyset.Set
	// CatalogURL and ShardURLs locate the databases (SEATGHOR_CATALOG_URL,
	// SEATGHOR_SHARD_URLS comma-separated). Unset in dev: an embedded cluster.
	CatalogURL string
	ShardURLs  []string
	// Shards is how many shard databases dev creates (SEATGHOR_SHARDS, 4).
	Shards int
	// DataDir is where dev keeps its state (SEATGHOR_DATA_DIR, .seatghor).
	DataDir string
	// SweepInterval is how often expired holds are swept (SEATGHOR_SWEEP_INTERVAL, 5s).
	SweepInterval time.Duration
	// Timetables is how many days ahead the timetables' trips are made
	// and how often (SEATGHOR_TIMETABLE_DAYS, 30; SEATGHOR_TIMETABLE_INTERVAL, 1h).
	Timetables app.Timetables
	// MaxConns bounds each database pool (SEATGHOR_DB_MAX_CONNS, 20).
	MaxConns int32
	// HoldBatchSize and HoldBatchRunners shape the batches of holds
	// (SEATGHOR_HOLD_BATCH_SIZE, 32; SEATGHOR_HOLD_BATCH_RUNNERS, 4;
	// decision 0270).
	HoldBatchSize, HoldBatchRunners int
	// Roles are what `serve` runs (SEATGHOR_ROLES,
	// "api,workers,projectors,webhooks"): the API server, the background
	// workers (hold sweeper, payment jobs, ledger check), the read side's
	// projectors, the senders of partners' webhook deliveries, in
	// any combination.
	Roles map[string]bool
	// Tracing says spans are exported: the standard
	// OTEL_EXPORTER_OTLP_ENDPOINT (or …_TRACES_ENDPOINT) is set.
	Tracing bool
	// RedisURL is the seat-map cache (SEATGHOR_REDIS_URL, redis://…; ),
	// a Redis Cluster when it names more nodes with addr= (decision 0200).
	// Unset in serve: seat maps are read from the shards. Unset in dev:
	// redis-server if installed, else an in-process Redis.
	RedisURL string
	// RedisPrefix starts every Redis key (SEATGHOR_REDIS_PREFIX, "seatghor:"),
	// so several deployments can share one Redis.
	RedisPrefix string
	// ReadURL is the read database of "my tickets" (SEATGHOR_READ_URL,
	// Unset in serve: TicketService's reads answer unavailable.
	// Unset in dev: a database of the embedded cluster.
	ReadURL string
	// S3 is the bucket of the e-ticket PDFs (SEATGHOR_S3_ENDPOINT,
	// SEATGHOR_S3_ACCESS_KEY, SEATGHOR_S3_SECRET_KEY, SEATGHOR_S3_BUCKET
	// default "seatghor-tickets"; ). Unset endpoint in serve: no PDFs.
	// Unset in dev: an embedded S3-compatible server.
	S3 objstore.Config
	// TripIndex is the trip search index: Meilisearch at
	// SEATGHOR_MEILI_URL with SEATGHOR_MEILI_KEY, index SEATGHOR_MEILI_INDEX
	// (default "trips"). Unset in serve: SearchTrips answers unavailable.
	// Unset in dev: an embedded index under the data directory.
	// SEATGHOR_SEARCH_DEEP=off answers searches from their filters alone
	// a sale day's capacity goes to buying).
	TripIndex app.TripIndexConfig
	// LogLevel is debug, info, warn or error (SEATGHOR_LOG_LEVEL, info).
	LogLevel slog.Level
	// LogFormat is text or json (SEATGHOR_LOG_FORMAT, text): json writes
	// one JSON object a line, for log shippers.
	LogFormat string
	// Payment is how the payment gateway is reached (see paymentConfig).
	Payment paymentConfig
	// OnSale is the waiting rooms' controller and the rate limits
	// (SEATGHOR_QUEUE_*, SEATGHOR_RATE_*; see onSaleConfig).
	OnSale onSaleConfig
	// CatalogPolicy bounds what organisations set on their shows
	// (SEATGHOR_MAX_CANCELLATION_FEE_BPS, default 1000; decision 0076).
	CatalogPolicy catalog.Policy
	// APIKeyMode is the partner API keys the API accepts
	// (SEATGHOR_API_KEY_MODE, live or test; unset: live in serve, test in
	// dev, whose payments go to the sandbox; decision 0180).
	APIKeyMode partner.Mode
	// PartnerShowHoldCap is the per-show cap of partners without their own
	// (SEATGHOR_PARTNER_SHOW_HOLD_CAP; decision 0286); 0: partner.DefaultShowHoldCap.
	PartnerShowHoldCap int
	// OIDC is the identity provider whose tokens the API accepts and
	// through which the site signs in (SEATGHOR_OIDC_ISSUER, _CLIENT_ID,
	// _CLIENT_SECRET, _AUDIENCE, _NAME, _REDIRECT_URL; decisions 0165,
	// 0166). Unset issuer: none; OIDC.Enabled() says which.
	OIDC idp.Config
	// CORSOrigins may call the API from their pages (SEATGHOR_CORS_ORIGINS,
	// comma-separated; decision 0167). Unset: same origin only.
	CORSOrigins []string
	// Webhooks tunes the delivery of partners' webhooks: SEATGHOR_WEBHOOK_TIMEOUT
	// (one POST, default 10s), SEATGHOR_WEBHOOK_RETRY_BASE (the first retry's
	// backoff, default 5s), SEATGHOR_WEBHOOK_CONCURRENCY (sends at once per
	// process, default 16), SEATGHOR_WEBHOOK_PER_PARTNER (one partner's sends
	// at once over all processes, default a quarter of the concurrency,
	// at least 2; decision 0280), SEATGHOR_WEBHOOK_MAX_ENDPOINTS (endpoints
	// per partner, default 5; decision 0278) and SEATGHOR_WEBHOOK_ALLOW_LOOPBACK=1 (endpoints
	// on plain http to 127.0.0.1 or localhost; dev and tests; dev sets it).
	Webhooks webhook.WorkerConfig
	// Notify is where serve sends the buyers' SMS and e-mail (loadNotify:
	// SEATGHOR_SITE_URL, SEATGHOR_SMS_*, SEATGHOR_SMTP_*); dev starts its
	// own sandbox and mailpit instead.
	Notify app.NotifyConfig
}

func loadConfig(getenv func(string) string) (config, error) {
	c := config{
		Addr:          "127.0.0.1:8080",
		AdminAddr:     "127.0.0.1:9090",
		DrainDelay:    5 * time.Second,
		AuthSecret:    getenv("SEATGHOR_AUTH_SECRET"),
		CatalogURL:    getenv("SEATGHOR_CATALOG_URL"),
		Shards:        4,
		DataDir:       ".seatghor",
		SweepInterval: 5 * time.Second,
		MaxConns:      20,
		Roles:         map[string]bool{"api": true, "workers": true, "projectors": true, "webhooks": true},
		Tracing:       tracing.Enabled(getenv),
		RedisURL:      getenv("SEATGHOR_REDIS_URL"),
		RedisPrefix:   getenv("SEATGHOR_REDIS_PREFIX"),
		ReadURL:       getenv("SEATGHOR_READ_URL"),
		S3: objstore.Config{Endpoint: getenv("SEATGHOR_S3_ENDPOINT"), AccessKey: getenv("SEATGHOR_S3_ACCESS_KEY"),
			SecretKey: getenv("SEATGHOR_S3_SECRET_KEY"), Bucket: getenv("SEATGHOR_S3_BUCKET")},
		TripIndex: app.TripIndexConfig{MeiliURL: getenv("SEATGHOR_MEILI_URL"), MeiliKey: getenv("SEATGHOR_MEILI_KEY"),
			MeiliIndex: getenv("SEATGHOR_MEILI_INDEX")},
	}
	if c.S3.Bucket == "" {
		c.S3.Bucket = "seatghor-tickets"
	}
	if v := getenv("SEATGHOR_ROLES"); v != "" {
		c.Roles = map[string]bool{}
		for _, r := range strings.Split(v, ",") {
			switch r = strings.TrimSpace(r); r {
			case "api", "workers", "projectors", "webhooks":
				c.Roles[r] = true
			default:
				return c, fmt.Errorf("SEATGHOR_ROLES=%q: roles are api, workers, projectors and webhooks", v)
			}
		}
	}
	if v := getenv("SEATGHOR_ADDR"); v != "" {
		c.Addr = v
	}
	if v := getenv("SEATGHOR_ADMIN_ADDR"); v != "" {
		c.AdminAddr, c.adminAddrSet = v, true
	}
	if v := getenv("SEATGHOR_DRAIN_DELAY"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return c, fmt.Errorf("SEATGHOR_DRAIN_DELAY=%q: want a duration such as 5s (0: none)", v)
		}
		c.DrainDelay, c.drainDelaySet = d, true
	}
	if c.AdminAddr == c.Addr {
		return c, fmt.Errorf("SEATGHOR_ADMIN_ADDR=%q: the admin listener must not be the public port", c.AdminAddr)
	}
	if v := getenv("SEATGHOR_API_KEY_MODE"); v != "" {
		m, err := partner.ParseMode(v)
		if err != nil {
			return c, fmt.Errorf("SEATGHOR_API_KEY_MODE=%q: want live or test", v)
		}
		c.APIKeyMode = m
	}
	if v := getenv("SEATGHOR_PARTNER_SHOW_HOLD_CAP"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return c, fmt.Errorf("SEATGHOR_PARTNER_SHOW_HOLD_CAP=%q: want a positive number of places", v)
		}
		c.PartnerShowHoldCap = n
	}
	if v := getenv("SEATGHOR_SHARD_URLS"); v != "" {
		for _, u := range strings.Split(v, ",") {
			if u = strings.TrimSpace(u); u != "" {
				c.ShardURLs = append(c.ShardURLs, u)
			}
		}
	}
	if v := getenv("SEATGHOR_DATA_DIR"); v != "" {
		c.DataDir = v
	}
	if v := getenv("SEATGHOR_SHARDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 64 {
			return c, fmt.Errorf("SEATGHOR_SHARDS=%q: want a number from 1 to 64", v)
		}
		c.Shards = n
	}
	if v := getenv("SEATGHOR_SWEEP_INTERVAL"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return c, fmt.Errorf("SEATGHOR_SWEEP_INTERVAL=%q: want a positive duration such as 5s", v)
		}
		c.SweepInterval = d
	}
	if v := getenv("SEATGHOR_TIMETABLE_DAYS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > network.MaxDays {
			return c, fmt.Errorf("SEATGHOR_TIMETABLE_DAYS=%q: want a number of days from 1 to %d", v, network.MaxDays)
		}
		c.Timetables.Days = n
	}
	if v := getenv("SEATGHOR_TIMETABLE_INTERVAL"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return c, fmt.Errorf("SEATGHOR_TIMETABLE_INTERVAL=%q: want a positive duration such as 1h", v)
		}
		c.Timetables.Every = d
	}
	if v := getenv("SEATGHOR_DB_MAX_CONNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			return c, fmt.Errorf("SEATGHOR_DB_MAX_CONNS=%q: want a number from 1 to 1000", v)
		}
		c.MaxConns = int32(n)
	}
	for _, n := range []struct {
		name string
		to   *int
	}{{"SEATGHOR_HOLD_BATCH_SIZE", &c.HoldBatchSize}, {"SEATGHOR_HOLD_BATCH_RUNNERS", &c.HoldBatchRunners}} {
		if v := getenv(n.name); v != "" {
			i, err := strconv.Atoi(v)
			if err != nil || i < 1 || i > 256 {
				return c, fmt.Errorf("%s=%q: want a number from 1 to 256", n.name, v)
			}
			*n.to = i
		}
	}
	switch v := getenv("SEATGHOR_SEARCH_DEEP"); v {
	case "", "on":
	case "off":
		c.TripIndex.DeepSearchOff = true
	default:
		return c, fmt.Errorf("SEATGHOR_SEARCH_DEEP=%q: want on or off", v)
	}
	if v := getenv("SEATGHOR_LOG_LEVEL"); v != "" {
		if err := c.LogLevel.UnmarshalText([]byte(v)); err != nil {
			return c, fmt.Errorf("SEATGHOR_LOG_LEVEL=%q: want debug, info, warn or error", v)
		}
	}
	c.LogFormat = "text"
	if v := getenv("SEATGHOR_LOG_FORMAT"); v != "" {
		if v != "text" && v != "json" {
			return c, fmt.Errorf("SEATGHOR_LOG_FORMAT=%q: want text or json", v)
		}
		c.LogFormat = v
	}
	if v := getenv("SEATGHOR_MAX_CANCELLATION_FEE_BPS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 10000 {
			return c, fmt.Errorf("SEATGHOR_MAX_CANCELLATION_FEE_BPS=%q: want basis points from 0 to 10000", v)
		}
		c.CatalogPolicy.MaxCancellationFeeBps = new(n)
	}
	var err error
	if c.Webhooks, err = loadWebhookConfig(getenv); err != nil {
		return c, err
	}
	if c.TokenKeys, err = loadKeys(getenv, "SEATGHOR_TOKEN_KEYS"); err != nil {
		return c, err
	}
	if c.TicketKeys, err = loadKeys(getenv, "SEATGHOR_TICKET_KEYS"); err != nil {
		return c, err
	}
	if c.QueueKeys, err = loadKeys(getenv, "SEATGHOR_QUEUE_KEYS"); err != nil {
		return c, err
	}
	if c.SealKeys, err = loadKeys(getenv, "SEATGHOR_SEAL_KEYS"); err != nil {
		return c, err
	}
	if c.Payment, err = loadPaymentConfig(getenv); err != nil {
		return c, err
	}
	if c.OnSale, err = loadOnSaleConfig(getenv); err != nil {
		return c, err
	}
	if c.OIDC, err = loadOIDC(getenv); err != nil {
		return c, err
	}
	if c.CORSOrigins, err = api.ParseCORSOrigins(getenv("SEATGHOR_CORS_ORIGINS")); err != nil {
		return c, err
	}
	if c.Notify, err = loadNotify(getenv); err != nil {
		return c, err
	}
	if (c.CatalogURL == "") != (len(c.ShardURLs) == 0) {
		return c, fmt.Errorf("set both SEATGHOR_CATALOG_URL and SEATGHOR_SHARD_URLS, or neither")
	}
	return c, nil
}

// loadOIDC reads the identity provider's settings and checks them when an
// issuer is set; the others without it are a mistake worth saying.
func loadOIDC(getenv func(string) string) (idp.Config, error) {
	c := idp.Config{Issuer: getenv("SEATGHOR_OIDC_ISSUER"), ClientID: getenv("SEATGHOR_OIDC_CLIENT_ID"),
		ClientSecret: getenv("SEATGHOR_OIDC_CLIENT_SECRET"), Audience: getenv("SEATGHOR_OIDC_AUDIENCE"),
		Name: getenv("SEATGHOR_OIDC_NAME"), RedirectURL: getenv("SEATGHOR_OIDC_REDIRECT_URL")}
	if !c.Enabled() {
		if c.ClientID+c.ClientSecret+c.Audience+c.Name+c.RedirectURL != "" {
			return c, errors.New("SEATGHOR_OIDC_* settings need SEATGHOR_OIDC_ISSUER")
		}
		return c, nil
	}
	_, err := idp.New(c)
	return c, err
}

// loadKeys reads the key set in variable name, or in the file that name_FILE
// names (one entry a line or comma-separated); nil when neither is set.
func loadKeys(getenv func(string) string, name string) (*keyset.Set, error) {
	v, file := getenv(name), getenv(name+"_FILE")
	switch {
	case v != "" && file != "":
		return nil, fmt.Errorf("set %s or %s_FILE, not both", name, name)
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("%s_FILE: %w", name, err)
		}
		v = string(b)
	case v == "":
		return nil, nil
	}
	set, err := keyset.Parse(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err) // the error names kids, never secrets
	}
	return set, nil
}

// checkServeKeys is what `serve` asks of the keys: every purpose has keys,
// listed or derived from a shorthand secret that is not the dev secret and
// has at least 32 bytes (listed keys are checked as they are parsed).
func (c config) checkServeKeys() error {
	if c.AuthSecret == "" {
		for _, k := range []struct {
			name string
			set  *keyset.Set
		}{
			{"SEATGHOR_TOKEN_KEYS", c.TokenKeys}, {"SEATGHOR_TICKET_KEYS", c.TicketKeys}, {"SEATGHOR_QUEUE_KEYS", c.QueueKeys},
			{"SEATGHOR_SEAL_KEYS", c.SealKeys},
		} {
			if k.set == nil {
				return fmt.Errorf("serve needs %s (or the shorthand SEATGHOR_AUTH_SECRET)", k.name)
			}
		}
		return nil
	}
	switch {
	case c.AuthSecret == devSecret:
		return errors.New("serve refuses the built-in dev secret as SEATGHOR_AUTH_SECRET")
	case len(c.AuthSecret) < keyset.MinSecretLen:
		return fmt.Errorf("SEATGHOR_AUTH_SECRET has %d bytes; serve needs at least %d", len(c.AuthSecret), keyset.MinSecretLen)
	}
	return nil
}

// tokenKeys is the key set that `token` and `loadtest` sign with: the
// server's, given the same environment (the dev secret standing in for an
// unset SEATGHOR_AUTH_SECRET, as in `dev`).
func (c config) tokenKeys() (*keyset.Set, error) {
	secret := c.AuthSecret
	if secret == "" {
		secret = devSecret
	}
	return keyset.Resolve(c.TokenKeys, secret, keyset.Tokens)
}

// loadWebhookConfig reads the SEATGHOR_WEBHOOK_* settings.
func loadWebhookConfig(getenv func(string) string) (webhook.WorkerConfig, error) {
	var w webhook.WorkerConfig
	for name, d := range map[string]*time.Duration{"SEATGHOR_WEBHOOK_TIMEOUT": &w.Timeout, "SEATGHOR_WEBHOOK_RETRY_BASE": &w.RetryBase} {
		if v := getenv(name); v != "" {
			var err error
			if *d, err = time.ParseDuration(v); err != nil || *d <= 0 {
				return w, fmt.Errorf("%s=%q: want a positive duration such as 10s", name, v)
			}
		}
	}
	for name, n := range map[string]*int{"SEATGHOR_WEBHOOK_CONCURRENCY": &w.Concurrency, "SEATGHOR_WEBHOOK_PER_PARTNER": &w.PerPartner} {
		if v := getenv(name); v != "" {
			var err error
			if *n, err = strconv.Atoi(v); err != nil || *n < 1 || *n > 1000 {
				return w, fmt.Errorf("%s=%q: want a number from 1 to 1000", name, v)
			}
		}
	}
	if v := getenv("SEATGHOR_WEBHOOK_MAX_ENDPOINTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return w, fmt.Errorf("SEATGHOR_WEBHOOK_MAX_ENDPOINTS=%q: want a number from 1 to 100", v)
		}
		w.MaxEndpoints = n
	}
	switch v := getenv("SEATGHOR_WEBHOOK_ALLOW_LOOPBACK"); v {
	case "", "0":
	case "1":
		w.AllowLoopback = true
	default:
		return w, fmt.Errorf("SEATGHOR_WEBHOOK_ALLOW_LOOPBACK=%q: want 1 or 0", v)
	}
	return w, nil
}
