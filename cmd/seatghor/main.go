// Command seatghor is the whole platform in one binary: `dev` runs
// everything on embedded defaults, `serve` runs the configured roles,
// `migrate` applies the schema, `token` mints an API token.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/seatghor/seatghor/server/api"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "seatghor:", err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

var errUsage = errors.New("usage")

const usage = `seatghor — the Seatghor ticket platform

Usage:
  seatghor dev [--data-dir DIR] [--addr ADDR]   everything in one process on embedded defaults
  seatghor serve                                the API, workers and projectors, configured from SEATGHOR_* variables
  seatghor migrate                              apply the schema to the catalog and every shard
  seatghor rebuild PROJECTOR                    drop a read model (e.g. seatmap); running projectors replay it
  seatghor gateway [--addr ADDR] [--webhook-url URL]
                                                the sandbox payment gateway, standalone (faults: SEATGHOR_SANDBOX_FAULTS)
  seatghor loadtest onsale [--url URL] [--preset small|full] [--ttl 30s,1m] [--out FILE] [--compare FILE]
                                                the on-sale crowd against a running server (docs/loadtest.md)
  seatghor loadtest holds [--concurrency N] [--show-seats N] [--shows N] [--duration D] [--pg-url URL] [--redis-url URL] [--out FILE]
                                                CreateHold and GetSeatMap against their baselines (docs/performance.md)
  seatghor token --sub ID [--role ROLE] [--partner ID] [--ttl DURATION]
                                                print an API token signed with the first SEATGHOR_TOKEN_KEYS key (or SEATGHOR_AUTH_SECRET)

  seatghor verify [--rebuild] [--timeout D]     check the invariants (seats, ledger, charges); --rebuild replays every read model
  seatghor shard move --show N --to S            move a show to shard S online; prints how long its writes were frozen
  seatghor probe URL                            exit 0 when URL (a /livez or /readyz) answers 2xx: images' health check

Configuration (environment): see README.md.
`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	cfg, err := loadConfig(os.Getenv)
	if err != nil {
		return err
	}
	log := newLogger(cfg, stderr)
	switch args[0] {
	case "dev":
		return runDev(ctx, cfg, args[1:], stdout, log)
	case "serve":
		return runServe(ctx, cfg, log)
	case "migrate":
		return runMigrate(ctx, cfg, log)
	case "rebuild":
		return runRebuild(ctx, cfg, args[1:], log)
	case "gateway":
		return runGateway(ctx, cfg, args[1:], log)
	case "loadtest":
		return runLoadtest(ctx, cfg, args[1:], stdout, log)
	case "token":
		return runToken(cfg, args[1:], stdout)
	case "shard":
		return runShard(ctx, cfg, args[1:], stdout, log)
	case "probe":
		return runProbe(ctx, args[1:])
	case "verify":
		return runVerify(ctx, cfg, args[1:], stdout, log)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("%w: unknown command %q", errUsage, args[0])
}

func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// newLogger is the process's logger: text or JSON lines (SEATGHOR_LOG_FORMAT)
// at SEATGHOR_LOG_LEVEL, every line of an API request carrying its request_id.
func newLogger(cfg config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if cfg.LogFormat == "json" {
		h = slog.NewJSONHandler(w, opts)
	}
	return slog.New(api.LogHandler(h))
}
