package main

import (
	"fmt"
	"slices"
	"strings"
)

// envVar is one environment variable of the binary: its one-line meaning
// and the commands whose behaviour it changes. The README's Configuration
// table gives the long story; this one is what `-h` prints, and
// TestEnvTableListsEveryVariable keeps it equal to what loadConfig reads.
type envVar struct {
	name, meaning string
	commands      []string
}

// envVars is every variable loadConfig reads. Commands are named by their
// path below the root ("loadtest holds"). A new command lists itself in the
// rows it reads.
func envVars() []envVar {
	servers := []string{"dev", "serve"}
	serveOnly := []string{"serve"}                         // dev starts its own SMS sandbox and mailpit
	tools := []string{"dev", "serve", "rebuild", "verify"} // open the whole platform
	databases := []string{"dev", "serve", "migrate", "rebuild", "verify", "shard move"}
	signers := []string{"dev", "serve", "rebuild", "verify", "token", "loadtest onsale", "loadtest holds", "cluster up", "chaos"}
	logging := []string{"dev", "serve", "migrate", "rebuild", "verify", "shard move", "gateway", "loadtest onsale", "loadtest holds",
		"cluster up", "cluster down", "chaos"}
	with := func(base []string, more ...string) []string { return append(slices.Clone(base), more...) }
	clusters := []string{"cluster up", "cluster down", "cluster status"}
	return []envVar{
		{"SEATGHOR_ADDR", "listen address, all protocols on one port (127.0.0.1:8080)", with(servers, "gateway", "loadtest onsale", "loadtest holds")},
		{"SEATGHOR_ADMIN_ADDR", "the admin listener: /metrics, reflection, pprof, probes (127.0.0.1:9090; dev: a free port)", with(servers, "loadtest onsale", "loadtest holds")},
		{"SEATGHOR_DRAIN_DELAY", "how long a stopping process answers /readyz 503 before closing (5s; dev, cluster: 0)", with(servers, "cluster up")},
		{"SEATGHOR_TOKEN_KEYS", "API token keys kid:secret,…; the first signs", signers},
		{"SEATGHOR_TOKEN_KEYS_FILE", "a file holding SEATGHOR_TOKEN_KEYS", signers},
		{"SEATGHOR_TICKET_KEYS", "ticket QR code keys kid:secret,…", tools},
		{"SEATGHOR_TICKET_KEYS_FILE", "a file holding SEATGHOR_TICKET_KEYS", tools},
		{"SEATGHOR_QUEUE_KEYS", "waiting-room token keys kid:secret,…", tools},
		{"SEATGHOR_QUEUE_KEYS_FILE", "a file holding SEATGHOR_QUEUE_KEYS", tools},
		{"SEATGHOR_SEAL_KEYS", "keys sealing partners' webhook secrets at rest kid:secret,…; the first seals", tools},
		{"SEATGHOR_SEAL_KEYS_FILE", "a file holding SEATGHOR_SEAL_KEYS", tools},
		{"SEATGHOR_AUTH_SECRET", "shorthand secret deriving a key per purpose (dev, token, loadtest: a built-in dev secret)", signers},
		{"SEATGHOR_CATALOG_URL", "postgres:// URL of the catalog database (dev: the embedded cluster)", with(databases, "loadtest holds")},
		{"SEATGHOR_SHARD_URLS", "comma-separated postgres:// URLs of the shards, in order", with(databases, "loadtest holds")},
		{"SEATGHOR_SHARDS", "shard databases dev and cluster up create (4)", []string{"dev", "cluster up", "chaos"}},
		{"SEATGHOR_DATA_DIR", "where dev keeps its state (.seatghor); cluster: its cluster/", with(clusters, "dev")},
		{"SEATGHOR_SWEEP_INTERVAL", "how often expired holds end and allocations return (5s)", servers},
		{"SEATGHOR_TIMETABLE_DAYS", "how many days ahead, today included, the timetables' trips are made (30)", servers},
		{"SEATGHOR_TIMETABLE_INTERVAL", "how often the timetable job makes trips (1h)", servers},
		{"SEATGHOR_DB_MAX_CONNS", "connection-pool size per database (20)", tools},
		{"SEATGHOR_HOLD_BATCH_SIZE", "most holds of one shard written in one transaction (32)", servers},
		{"SEATGHOR_HOLD_BATCH_RUNNERS", "most batches of holds of one shard written at once (4)", servers},
		{"SEATGHOR_ROLES", "what serve runs: api,workers,projectors,webhooks", []string{"serve"}},
		{"SEATGHOR_REDIS_URL", "redis:// URL of seat maps, waiting rooms and rate limits", with(tools, "loadtest holds")},
		{"SEATGHOR_REDIS_PREFIX", "prefix of every Redis key (seatghor:)", with(tools, "loadtest holds")},
		{"SEATGHOR_READ_URL", "postgres:// URL of the read database (my tickets, e-tickets)", databases},
		{"SEATGHOR_S3_ENDPOINT", "S3 API of the e-ticket PDFs (dev: an embedded server)", tools},
		{"SEATGHOR_S3_ACCESS_KEY", "S3 access key", tools},
		{"SEATGHOR_S3_SECRET_KEY", "S3 secret key", tools},
		{"SEATGHOR_S3_BUCKET", "bucket of the e-ticket PDFs (seatghor-tickets)", with(tools, "cluster up")},
		{"SEATGHOR_MEILI_URL", "Meilisearch of the trip index (dev: an embedded index)", tools},
		{"SEATGHOR_MEILI_KEY", "Meilisearch API key", tools},
		{"SEATGHOR_MEILI_INDEX", "the Meilisearch index uid (trips)", tools},
		{"SEATGHOR_SEARCH_DEEP", "off: free-text search off on a sale day (on)", servers},
		{"SEATGHOR_RATE_HOLDS", "CreateHold per caller, RATE/PERIOD[,BURST] or off (30/1m,15)", servers},
		{"SEATGHOR_RATE_PARTNER_HOLDS", "CreateHold per partner (1200/1m,200)", servers},
		{"SEATGHOR_RATE_SALE_HOLDS", "CreateHold per caller and sale (30/15m,30)", servers},
		{"SEATGHOR_RATE_PAYMENTS", "StartPayment per caller (20/1m,10)", servers},
		{"SEATGHOR_RATE_PARTNER_PAYMENTS", "StartPayment per partner (600/1m,100)", servers},
		{"SEATGHOR_RATE_JOINS", "waiting-room joins per caller (10/1m,5)", servers},
		{"SEATGHOR_RATE_LIMITS", "off: every rate limit off", servers},
		{"SEATGHOR_API_KEY_MODE", "partner API keys accepted: live or test (live; dev: test)", servers},
		{"SEATGHOR_PARTNER_SHOW_HOLD_CAP", "places of one show a partner without its own cap may hold or have bought (100)", servers},
		{"SEATGHOR_QUEUE_TARGET_P99", "waiting rooms admit less when CreateHold's p99 is above this (250ms)", servers},
		{"SEATGHOR_QUEUE_MAX_ERROR_RATE", "… or when this share of CreateHolds fail (0.01)", servers},
		{"SEATGHOR_QUEUE_POLL_MAX", "the longest pollAfter a waiting buyer is told (20s)", servers},
		{"SEATGHOR_LOG_LEVEL", "debug, info, warn or error (info)", logging},
		{"SEATGHOR_LOG_FORMAT", "text or json (text)", logging},
		{"OTEL_EXPORTER_OTLP_ENDPOINT", "an OpenTelemetry collector (OTLP/HTTP) receiving traces; unset: none", servers},
		{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "the collector's traces endpoint, instead of the one above", servers},
		{"SEATGHOR_GATEWAY_URL", "the payment gateway's API (dev: the sandbox in-process)", servers},
		{"SEATGHOR_GATEWAY_API_KEY", "bearer key for the gateway's API", servers},
		{"SEATGHOR_WEBHOOK_SECRETS", "comma-separated secrets verifying the gateway's webhooks", with(servers, "gateway", "cluster up", "chaos")},
		{"SEATGHOR_WEBHOOK_TIMEOUT", "how long one partner webhook POST may take (10s)", servers},
		{"SEATGHOR_WEBHOOK_RETRY_BASE", "backoff after a failed partner webhook, doubling (5s)", servers},
		{"SEATGHOR_WEBHOOK_CONCURRENCY", "partner webhook POSTs one process sends at once (16)", servers},
		{"SEATGHOR_WEBHOOK_PER_PARTNER", "one partner's webhook POSTs in flight over all processes (a quarter of the concurrency, at least 2)", servers},
		{"SEATGHOR_WEBHOOK_MAX_ENDPOINTS", "webhook endpoints one partner may have (5)", servers},
		{"SEATGHOR_WEBHOOK_ALLOW_LOOPBACK", "1: partner webhooks may go to http://127.0.0.1 (0; dev: 1)", servers},
		{"SEATGHOR_SANDBOX_ADDR", "where the sandbox gateway listens (127.0.0.1:8081)", []string{"dev", "gateway"}},
		{"SEATGHOR_SANDBOX_FAULTS", "the sandbox's seeded faults, e.g. seed=7,timeout=0.03", []string{"dev", "gateway"}},
		{"SEATGHOR_PAYMENT_RECOVER_INTERVAL", "how often open payments and refunds are looked up (30s; dev, cluster: 2s)", with(servers, "cluster up")},
		{"SEATGHOR_PAYMENT_RECOVER_AFTER", "how long an attempt waits before it is looked up (1m; dev, cluster: 3s)", with(servers, "cluster up")},
		{"SEATGHOR_REFUND_APPROVAL_MINOR", "manual refunds from this amount need a second admin (500000)", servers},
		{"SEATGHOR_MAX_CANCELLATION_FEE_BPS", "highest cancellation fee a manager may set, basis points (1000)", servers},
		{"SEATGHOR_OIDC_ISSUER", "an OpenID Connect provider's issuer URL; unset: our own tokens only", servers},
		{"SEATGHOR_OIDC_CLIENT_ID", "our client id at the provider", servers},
		{"SEATGHOR_OIDC_CLIENT_SECRET", "our client secret (unset: a public client, PKCE)", servers},
		{"SEATGHOR_OIDC_AUDIENCE", "what a provider token's aud must contain (the client id)", servers},
		{"SEATGHOR_OIDC_NAME", "the <name> in callers' ids idp:<name>:<sub> (oidc)", servers},
		{"SEATGHOR_OIDC_REDIRECT_URL", "the sign-in callback registered with the provider", servers},
		{"SEATGHOR_CORS_ORIGINS", "comma-separated origins whose pages may call the API", servers},
		{"SEATGHOR_SITE_URL", "the site's public base the buyers' messages link to", serveOnly},
		{"SEATGHOR_SMS_GATEWAY_URL", "the SMS provider's URL; unset: no SMS (nor phone sign-in)", serveOnly},
		{"SEATGHOR_SMS_GATEWAY_FORMAT", "the provider's body: form (default) or json", serveOnly},
		{"SEATGHOR_SMS_GATEWAY_FIELDS", "the body's fields, a JSON object of templates", serveOnly},
		{"SEATGHOR_SMS_GATEWAY_HEADERS", "headers, a JSON object of templates", serveOnly},
		{"SEATGHOR_SMS_GATEWAY_ID_FIELD", "the answer's message id field (data.id)", serveOnly},
		{"SEATGHOR_SMS_API_KEY", "the provider's key, {{.APIKey}} in the templates", serveOnly},
		{"SEATGHOR_SMS_SENDER", "the sender id, {{.Sender}} in the templates", serveOnly},
		{"SEATGHOR_SMS_SANDBOX_URL", "a running SMS sandbox instead of a provider (staging)", serveOnly},
		{"SEATGHOR_SMTP_HOST", "the SMTP server of the buyers' e-mail; unset: none", serveOnly},
		{"SEATGHOR_SMTP_PORT", "its port (587)", serveOnly},
		{"SEATGHOR_SMTP_FROM", "the e-mail's sender, e.g. Seatghor <tickets@…>", serveOnly},
		{"SEATGHOR_SMTP_USERNAME", "the SMTP user", serveOnly},
		{"SEATGHOR_SMTP_PASSWORD", "the SMTP password", serveOnly},
		{"SEATGHOR_SMTP_TLS", "1 (default): STARTTLS required; 0: a relay on the host", serveOnly},
	}
}

// envHelp is the Environment section of a command's help: the variables
// that change what the command does (path as in envVar.commands).
func envHelp(path string) string {
	var b strings.Builder
	b.WriteString("\nEnvironment (README.md, Configuration, says more):\n")
	n := 0
	for _, v := range envVars() {
		if slices.Contains(v.commands, path) {
			fmt.Fprintf(&b, "  %-34s %s\n", v.name, v.meaning)
			n++
		}
	}
	if n == 0 {
		b.WriteString("  none\n")
	}
	return b.String()
}
