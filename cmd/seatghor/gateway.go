package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/seatghor/seatghor/server/gateway/sandbox"
	"github.com/seatghor/seatghor/server/payment"

	"github.com/spf13/pflag"
	"go.opentelemetry.io/otel/trace"
)

// devWebhookSecret signs the in-process sandbox's webhooks in dev mode.
const devWebhookSecret = "whsec_dev_not_for_production"

// paymentConfig is how the binary reaches the payment gateway.
type paymentConfig struct {
	// GatewayURL is the gateway's API (SEATGHOR_GATEWAY_URL). Unset in dev:
	// the sandbox runs in-process on SandboxAddr.
	GatewayURL string
	// GatewayAPIKey authenticates us to it (SEATGHOR_GATEWAY_API_KEY).
	GatewayAPIKey string
	// WebhookSecrets verify its webhooks (SEATGHOR_WEBHOOK_SECRETS,
	// comma-separated: more than one while a secret is rotated).
	WebhookSecrets []string
	// SandboxAddr is where dev's sandbox and `seatghor gateway` listen
	// (SEATGHOR_SANDBOX_ADDR, default 127.0.0.1:8081).
	SandboxAddr string
	// SandboxFaults injects faults into the sandbox (SEATGHOR_SANDBOX_FAULTS,
	// e.g. "seed=7,timeout=0.03,slow=1001-1200:0.5,applied=0.6,dup=0.02,dup_max=3,drop=0.01,delay=2s,
	// reorder=0.05,reorder_delay=2s").
	SandboxFaults sandbox.Faults
	// RecoverEvery is how often open attempts are looked up at the gateway
	// (SEATGHOR_PAYMENT_RECOVER_INTERVAL, default 30s; dev 2s).
	RecoverEvery time.Duration
	// RecoverAfter is how long an attempt stays open before it is looked
	// up (SEATGHOR_PAYMENT_RECOVER_AFTER, default 1m; dev 3s).
	RecoverAfter time.Duration
	// RefundApprovalMinor is the total of manual refunds (per charge, and
	// per admin over 24 hours) from which a second admin must approve
	// (SEATGHOR_REFUND_APPROVAL_MINOR, default 500000, R-10, decision 0060).
	RefundApprovalMinor int64
}

func loadPaymentConfig(getenv func(string) string) (paymentConfig, error) {
	c := paymentConfig{
		GatewayURL: getenv("SEATGHOR_GATEWAY_URL"), GatewayAPIKey: getenv("SEATGHOR_GATEWAY_API_KEY"),
		SandboxAddr: "127.0.0.1:8081",
	}
	for _, s := range strings.Split(getenv("SEATGHOR_WEBHOOK_SECRETS"), ",") {
		if s = strings.TrimSpace(s); s != "" {
			c.WebhookSecrets = append(c.WebhookSecrets, s)
		}
	}
	if v := getenv("SEATGHOR_SANDBOX_ADDR"); v != "" {
		c.SandboxAddr = v
	}
	for name, d := range map[string]*time.Duration{
		"SEATGHOR_PAYMENT_RECOVER_INTERVAL": &c.RecoverEvery, "SEATGHOR_PAYMENT_RECOVER_AFTER": &c.RecoverAfter,
	} {
		if v := getenv(name); v != "" {
			var err error
			if *d, err = time.ParseDuration(v); err != nil || *d <= 0 {
				return c, fmt.Errorf("%s=%q: want a positive duration such as 30s", name, v)
			}
		}
	}
	if v := getenv("SEATGHOR_REFUND_APPROVAL_MINOR"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return c, fmt.Errorf("SEATGHOR_REFUND_APPROVAL_MINOR=%q: want a positive amount in minor units", v)
		}
		c.RefundApprovalMinor = n
	}
	if v := getenv("SEATGHOR_SANDBOX_FAULTS"); v != "" {
		f, err := parseFaults(v)
		if err != nil {
			return c, fmt.Errorf("SEATGHOR_SANDBOX_FAULTS=%q: %w", v, err)
		}
		c.SandboxFaults = f
	}
	return c, nil
}

// parseFaults reads "key=value,…" fault settings for the sandbox.
func parseFaults(spec string) (sandbox.Faults, error) {
	var f sandbox.Faults
	rate := func(v string) (float64, error) {
		r, err := strconv.ParseFloat(v, 64)
		if err != nil || r < 0 || r > 1 {
			return 0, fmt.Errorf("%q is not a rate from 0 to 1", v)
		}
		return r, nil
	}
	for _, kv := range strings.Split(spec, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return f, fmt.Errorf("%q is not key=value", kv)
		}
		var err error
		switch k {
		case "seed":
			f.Seed, err = strconv.ParseUint(v, 10, 64)
		case "timeout":
			f.TimeoutRate, err = rate(v)
		case "applied":
			f.AppliedIfTimeout, err = rate(v)
		case "dup":
			f.DuplicateRate, err = rate(v)
		case "dup_max":
			if f.DuplicateMax, err = strconv.Atoi(v); err == nil && (f.DuplicateMax < 2 || f.DuplicateMax > sandbox.MaxDuplicates) {
				err = fmt.Errorf("%q: want 2 to %d copies", v, sandbox.MaxDuplicates)
			}
		case "reorder":
			f.ReorderRate, err = rate(v)
		case "reorder_delay":
			f.ReorderDelay, err = time.ParseDuration(v)
		case "drop":
			f.DropRate, err = rate(v)
		case "refund_fail":
			f.RefundFailRate, err = rate(v)
		case "delay":
			f.DelayMax, err = time.ParseDuration(v)
		case "hang":
			f.HangFor, err = time.ParseDuration(v)
		case "slow":
			// from-to:rate, by the order in which references arrive
			span, r, ok := strings.Cut(v, ":")
			from, to, ok2 := strings.Cut(span, "-")
			if !ok || !ok2 {
				return f, fmt.Errorf("slow=%q: want from-to:rate", v)
			}
			if f.SlowWindow.From, err = strconv.Atoi(from); err == nil {
				if f.SlowWindow.To, err = strconv.Atoi(to); err == nil {
					f.SlowWindow.TimeoutRate, err = rate(r)
				}
			}
		default:
			return f, fmt.Errorf("unknown fault %q", k)
		}
		if err != nil {
			return f, fmt.Errorf("%s: %w", k, err)
		}
	}
	return f, nil
}

// gatewayClient connects to the configured gateway.
func (c paymentConfig) gatewayClient(tp trace.TracerProvider) (*sandbox.Client, error) {
	if c.GatewayURL == "" || len(c.WebhookSecrets) == 0 {
		return nil, errors.New("payments need SEATGHOR_GATEWAY_URL and SEATGHOR_WEBHOOK_SECRETS")
	}
	return sandbox.NewClient(sandbox.ClientConfig{BaseURL: c.GatewayURL, APIKey: c.GatewayAPIKey, WebhookSecrets: c.WebhookSecrets,
		Tracing: tp})
}

// workers is how often the payment jobs run.
func (c paymentConfig) workers() payment.WorkerConfig {
	return payment.WorkerConfig{RecoverEvery: c.RecoverEvery}
}

// service tunes the payment service.
func (c paymentConfig) service() payment.Config {
	return payment.Config{RecoverAfter: c.RecoverAfter, RefundApprovalMinor: c.RefundApprovalMinor}
}

// startSandbox runs the sandbox gateway on addr until ctx ends or stop is
// called; it sends webhooks to webhookURL.
func startSandbox(ctx context.Context, addr, webhookURL string, secrets []string, faults sandbox.Faults, log *slog.Logger) (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("sandbox gateway: %w", err)
	}
	url = "http://" + ln.Addr().String()
	gw := sandbox.New(sandbox.Config{WebhookURL: webhookURL, WebhookSecrets: secrets, PublicURL: url, Faults: faults,
		Logger: log.With("component", "sandbox")})
	srv := &http.Server{Handler: gw, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("sandbox gateway stopped", "err", err)
		}
	}()
	stop = func() {
		gw.Close()
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}
	return url, stop, nil
}

// gatewayOptions are the flags of `seatghor gateway`; empty ones follow
// the environment.
type gatewayOptions struct{ addr, webhookURL string }

func (o *gatewayOptions) register(fs *pflag.FlagSet) {
	fs.StringVar(&o.addr, "addr", "", "listen address (default $SEATGHOR_SANDBOX_ADDR, else 127.0.0.1:8081)")
	fs.StringVar(&o.webhookURL, "webhook-url", "", "where to send webhooks (default http://$SEATGHOR_ADDR/webhooks/sandbox)")
}

// runGateway runs the sandbox gateway standalone (`seatghor gateway`), for
// a `seatghor serve` elsewhere or the load test.
func runGateway(ctx context.Context, cfg config, o gatewayOptions, log *slog.Logger) error {
	addr := cmp.Or(o.addr, cfg.Payment.SandboxAddr)
	webhook := cmp.Or(o.webhookURL, "http://"+cfg.Addr+"/webhooks/sandbox")
	secrets := cfg.Payment.WebhookSecrets
	if len(secrets) == 0 {
		secrets = []string{devWebhookSecret}
	}
	url, stop, err := startSandbox(ctx, addr, webhook, secrets, cfg.Payment.SandboxFaults, log)
	if err != nil {
		return err
	}
	defer stop()
	log.Info("sandbox gateway listening", "url", url, "webhooks", webhook)
	<-ctx.Done()
	return nil
}

// devPayments settles payments within seconds in dev mode: the recovery job
// looks up open attempts after 3 s instead of a minute.
func devPayments(c payment.Config) payment.Config {
	if c.RecoverAfter == 0 {
		c.RecoverAfter = 3 * time.Second
	}
	c.NotFoundGrace, c.PendingGrace = 10*time.Second, time.Minute
	return c
}
