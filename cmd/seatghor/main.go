// Command seatghor is the whole platform in one binary: `dev` runs
// everything on embedded defaults, `serve` runs the configured roles,
// `migrate` applies the schema, `token` mints an API token; `seatghor -h`
// lists the rest.
package main

import (
	"context"
	"errors"
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
		switch {
		case errors.Is(err, errUsage):
			os.Exit(2)
		case errors.Is(err, errChaosViolations):
			os.Exit(3) // the run was made and found invariants broken
		}
		os.Exit(1)
	}
}

// errUsage marks a mistake in the command line: main exits 2.
var errUsage = errors.New("usage")

// run is the binary, testable: the command tree (cli.go) on args.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if errors.Is(err, errUsage) {
		fmt.Fprintf(stderr, "%s\nRun '%s -h' for help.\n", cmd.UsageString(), cmd.CommandPath())
	}
	return err
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
