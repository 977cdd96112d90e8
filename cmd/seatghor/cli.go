package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/seatghor/seatghor/server/api"
	"github.com/spf13/cobra"
)

// The command tree (decision 0203). Adding a command takes four steps:
//
//  1. in its own file, an options struct with a register(*pflag.FlagSet)
//     method for its flags and a runX(ctx, cfg, opts, stdout, log) error;
//     usage mistakes it finds itself wrap errUsage;
//  2. here, a newXCmd like newVerifyCmd: Use, Short, Long, Example,
//     Args: usageArgs(cobra.NoArgs) (or cobra.ArbitraryArgs when runX checks
//     them), o.register(cmd.Flags()) and RunE: c.withConfig(…) calling runX;
//     add it to newRootCmd's AddCommand, under a parentCmd for a two-word
//     command (`shard move`: parentCmd("shard", …, c.newShardMoveCmd()));
//  3. its path ("shard move") in the commands of the envVars rows it reads
//     (envvars.go);
//  4. its path, and its parent's, in TestCommandHelp's table.

// newRootCmd is `seatghor` with every command below it; it writes to stdout
// and stderr and reads the environment only when a command runs, so -h
// works whatever the environment holds.
func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "seatghor",
		Short: "The Seatghor ticket platform in one binary",
		Long: `seatghor — the Seatghor ticket platform in one binary.

Every command but probe, version and completion checks all the SEATGHOR_*
variables at start (a bad value fails it); its help lists the ones that
change what it does. README.md, Configuration, explains each.`,
		Example: `  seatghor dev                    # everything on embedded defaults, demo data
  seatghor serve                  # the configured roles, from SEATGHOR_* variables
  seatghor dev -h                 # a command's flags, environment and examples`,
		// Unknown commands land here, so that they are usage errors.
		Args:          cobra.ArbitraryArgs,
		SilenceErrors: true, // main prints the error, once
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return fmt.Errorf("%w: no command given", errUsage)
			}
			err := fmt.Errorf("%w: unknown command %q", errUsage, args[0])
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				err = fmt.Errorf("%w; did you mean %s?", err, strings.Join(s, " or "))
			}
			return err
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return fmt.Errorf("%w: %s: %v", errUsage, cmd.CommandPath(), err)
	})
	// Each command's help ends with the variables it reads (envvars.go).
	help := root.HelpFunc()
	root.SetHelpFunc(func(cmd *cobra.Command, args []string) {
		help(cmd, args)
		if cmd != root && cmd.Annotations["env"] != "no" {
			fmt.Fprint(cmd.OutOrStdout(), envHelp(strings.TrimPrefix(cmd.CommandPath(), root.Name()+" ")))
		}
	})
	c := cli{stdout: stdout, stderr: stderr}
	root.AddCommand(c.newDevCmd(), c.newServeCmd(), c.newMigrateCmd(), c.newRebuildCmd(), c.newGatewayCmd(),
		c.newLoadtestCmd(), c.newTokenCmd(), c.newVerifyCmd(), newProbeCmd(), newVersionCmd(),
		parentCmd("shard move", "Shard operations", "shard move moves one show to another shard online (decision 0205).",
			"  seatghor shard move --show 42 --to 3", c.newShardMoveCmd()),
		c.newClusterCmd(), c.newChaosCmd())
	return root
}

// cli holds what the commands write to.
type cli struct{ stdout, stderr io.Writer }

// withConfig is a command's RunE that loads the configuration and the
// logger first.
func (c cli) withConfig(run func(ctx context.Context, cfg config, log *slog.Logger, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		cfg, err := loadConfig(os.Getenv)
		if err != nil {
			return err
		}
		return run(cmd.Context(), cfg, newLogger(cfg, c.stderr), args)
	}
}

// usageArgs makes a positional-argument check's error a usage error.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return fmt.Errorf("%w: %s: %v", errUsage, cmd.CommandPath(), err)
		}
		return nil
	}
}

func (c cli) newDevCmd() *cobra.Command {
	var o devOptions
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Everything in one process on embedded defaults, with demo data",
		Long: `dev runs the whole platform in one process: an embedded PostgreSQL cluster,
S3 server, trip index and Redis under the data directory (unless their
variables name real ones), the sandbox payment gateway, the demo shows and
the site. It prints tokens and example calls once it listens; Ctrl-C stops it.`,
		Example: `  seatghor dev
  seatghor dev --addr 127.0.0.1:8088 --data-dir /tmp/seatghor
  SEATGHOR_LOG_FORMAT=json seatghor dev`,
		Args: usageArgs(cobra.NoArgs),
		RunE: c.withConfig(func(ctx context.Context, cfg config, log *slog.Logger, _ []string) error {
			return runDev(ctx, cfg, o, c.stdout, log)
		}),
	}
	o.register(cmd.Flags())
	return cmd
}

func (c cli) newServeCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "serve",
		Short: "The API, workers, projectors and webhook senders, configured from SEATGHOR_*",
		Long: `serve runs the roles SEATGHOR_ROLES names against the configured databases,
Redis, S3, trip index and payment gateway, until SIGTERM; then it drains
(SEATGHOR_DRAIN_DELAY) and shuts down. docs/operations.md says how to run it.`,
		Example: `  SEATGHOR_CATALOG_URL=postgres://db/catalog SEATGHOR_SHARD_URLS=postgres://db/s0,postgres://db/s1 \
  SEATGHOR_TOKEN_KEYS_FILE=/run/secrets/token_keys … seatghor serve
  SEATGHOR_ROLES=projectors,webhooks seatghor serve   # a worker process without the API`,
		Args: usageArgs(cobra.NoArgs),
		RunE: c.withConfig(func(ctx context.Context, cfg config, log *slog.Logger, _ []string) error {
			return runServe(ctx, cfg, log)
		}),
	}
}

func (c cli) newMigrateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Apply the schema to the catalog, every shard and the read database",
		Long: `migrate applies the schema migrations (goose) to SEATGHOR_CATALOG_URL, every
database of SEATGHOR_SHARD_URLS and, when set, SEATGHOR_READ_URL. It is safe
to run again: applied migrations are skipped.`,
		Example: `  SEATGHOR_CATALOG_URL=postgres://db/catalog SEATGHOR_SHARD_URLS=postgres://db/s0 seatghor migrate`,
		Args:    usageArgs(cobra.NoArgs),
		RunE: c.withConfig(func(ctx context.Context, cfg config, log *slog.Logger, _ []string) error {
			return runMigrate(ctx, cfg, log)
		}),
	}
}

func (c cli) newRebuildCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "rebuild PROJECTOR",
		Short: "Drop a read model (seatmap, tripindex, mytickets, eticket); the projectors replay it",
		Long: `rebuild drops one read model and resets its checkpoints; the projectors of
the running serve processes then replay it from the outboxes (decision 0090,
projections/README.md).`,
		Example: `  seatghor rebuild seatmap
  seatghor rebuild tripindex`,
		ValidArgs: []string{"seatmap", "tripindex", "mytickets", "eticket"},
		Args:      cobra.ArbitraryArgs, // runRebuild says what it needs
		RunE: c.withConfig(func(ctx context.Context, cfg config, log *slog.Logger, args []string) error {
			return runRebuild(ctx, cfg, args, log)
		}),
	}
}

func (c cli) newGatewayCmd() *cobra.Command {
	var o gatewayOptions
	cmd := &cobra.Command{
		Use:   "gateway",
		Short: "The sandbox payment gateway, standalone",
		Long: `gateway runs the sandbox payment gateway on its own, for a serve elsewhere
or a load test; it sends its webhooks signed with the first of
SEATGHOR_WEBHOOK_SECRETS (else dev's secret). SEATGHOR_SANDBOX_FAULTS seeds
its faults.`,
		Example: `  seatghor gateway --addr 127.0.0.1:8081 --webhook-url http://127.0.0.1:8080/webhooks/sandbox
  SEATGHOR_SANDBOX_FAULTS=seed=7,timeout=0.03,dup=0.02 seatghor gateway`,
		Args: usageArgs(cobra.NoArgs),
		RunE: c.withConfig(func(ctx context.Context, cfg config, log *slog.Logger, _ []string) error {
			return runGateway(ctx, cfg, o, log)
		}),
	}
	o.register(cmd.Flags())
	return cmd
}

// parentCmd is a command that only groups others (loadtest onsale|holds);
// run alone it is a usage error, and its help lists no environment (its
// children's do).
func parentCmd(use, short, long, example string, children ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{
		Use: use, Short: short, Long: long, Example: example,
		Annotations: map[string]string{"env": "no"},
		Args:        cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return fmt.Errorf("%w: %s", errUsage, cmd.UseLine())
		},
	}
	cmd.AddCommand(children...)
	return cmd
}

func (c cli) newLoadtestCmd() *cobra.Command {
	var onsale onsaleOptions
	onsaleCmd := &cobra.Command{
		Use:   "onsale",
		Short: "The on-sale crowd against a running server (docs/loadtest.md)",
		Long: `loadtest onsale sends a crowd of buyers at trips going on sale: they hold,
some pay, holds expire; it checks that no seat is sold twice and measures
the latencies (R-2). Tokens are signed with the server's token keys.`,
		Example: `  seatghor loadtest onsale --url http://127.0.0.1:8080 --preset small --ttl 30s,1m --out run.json
  seatghor loadtest onsale --waiting-room --compare run.json`,
		Args: usageArgs(cobra.NoArgs),
		RunE: c.withConfig(func(ctx context.Context, cfg config, log *slog.Logger, _ []string) error {
			return runLoadtest(ctx, cfg, onsale, c.stdout, log)
		}),
	}
	onsale.register(onsaleCmd.Flags())
	var holds holdsOptions
	holdsCmd := &cobra.Command{
		Use:   "holds",
		Short: "CreateHold and GetSeatMap against their baselines (docs/performance.md)",
		Long: `loadtest holds runs CreateHold and GetSeatMap at full speed, each next to the
same work without our code (the hold's transaction with pgx on the same
PostgreSQL, Redis GETs of the seat map's size), and prints the ratios.`,
		Example: `  seatghor loadtest holds --concurrency 32 --duration 20s --pg-url postgres://127.0.0.1/seatghor_shard_0
  seatghor loadtest holds --preset full --out holds.json`,
		Args: usageArgs(cobra.NoArgs),
		RunE: c.withConfig(func(ctx context.Context, cfg config, log *slog.Logger, _ []string) error {
			return runLoadtestHolds(ctx, cfg, holds, c.stdout, log)
		}),
	}
	holds.register(holdsCmd.Flags())
	return parentCmd("loadtest onsale|holds", "Load tests against a running server",
		`loadtest runs one of the load tests against a running server and prints a
table; --out writes the result as JSON.`,
		`  seatghor loadtest onsale --preset small
  seatghor loadtest holds --duration 30s`,
		onsaleCmd, holdsCmd)
}

func (c cli) newTokenCmd() *cobra.Command {
	var o tokenOptions
	cmd := &cobra.Command{
		Use:   "token --sub ID",
		Short: "Print an API token",
		Long: `token prints an API token for --sub, signed with the first key of
SEATGHOR_TOKEN_KEYS (or one derived from SEATGHOR_AUTH_SECRET, else dev's
secret): the token a server with the same environment accepts.`,
		Example: `  seatghor token --sub rumana
  seatghor token --sub ops-1 --role admin --ttl 1h
  seatghor token --sub shop --role partner --partner 7`,
		Args: usageArgs(cobra.NoArgs),
		RunE: c.withConfig(func(_ context.Context, cfg config, _ *slog.Logger, _ []string) error {
			return runToken(cfg, o, c.stdout)
		}),
	}
	o.register(cmd.Flags())
	return cmd
}

func (c cli) newVerifyCmd() *cobra.Command {
	var o verifyOptions
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Check the invariants (seats, ledger, charges); --rebuild replays every read model",
		Long: `verify checks the invariants of the configured databases: no seat in two
confirmed bookings, a balanced ledger, every order charged at most once. It
exits 1 when one is broken. With --rebuild it then drops every read model and
waits until the projectors replayed them (after a restore: docs/operations.md).`,
		Example: `  seatghor verify
  seatghor verify --rebuild --timeout 30m`,
		Args: usageArgs(cobra.NoArgs),
		RunE: c.withConfig(func(ctx context.Context, cfg config, log *slog.Logger, _ []string) error {
			return runVerify(ctx, cfg, o, c.stdout, log)
		}),
	}
	o.register(cmd.Flags())
	return cmd
}

func (c cli) newShardMoveCmd() *cobra.Command {
	var o shardMoveOptions
	cmd := &cobra.Command{
		Use:   "move",
		Short: "Move a show to another shard online; prints how long its writes were frozen",
		Long: `shard move copies a show's rows to shard --to while it sells, freezes its
writes for the last copy, flips the directory, and every API process routes
to the new shard at once (decision 0205). It connects as the login role: the
moved show's journals leave the old shard, which the application may never
do. Run it again to finish a move whose mover died (decision 0240): before
the directory flipped it resumes, after it deletes the old shard's rows;
--abort instead leaves the show where the directory says, unfrozen, and
deletes every other copy.`,
		Example: `  seatghor shard move --show 42 --to 3
  seatghor shard move --show 42 --abort`,
		Args: usageArgs(cobra.NoArgs),
		RunE: c.withConfig(func(ctx context.Context, cfg config, log *slog.Logger, _ []string) error {
			return runShardMove(ctx, cfg, o, c.stdout, log)
		}),
	}
	o.register(cmd.Flags())
	return cmd
}

func (c cli) newClusterCmd() *cobra.Command {
	var up, down, status clusterOptions
	upCmd := &cobra.Command{
		Use:   "up",
		Short: "Start the production topology as local processes, return once all are ready",
		Long: `cluster up starts, as separate processes that outlive it, the topology of
deploy/compose.yaml (decision 0215): two PostgreSQL servers (the catalog,
the read database and the first half of SEATGHOR_SHARDS shards on one, the
rest on the other, migrated, with the demo shows), a Redis Cluster of three
primaries with a replica each, MinIO when its binary is built
(SEATGHOR_MINIO_DIR, make deps), Meilisearch when installed
(SEATGHOR_MEILI_DIR, scripts/install-meilisearch.sh), the sandbox gateway,
and this binary's serve by role: two API processes, the workers with the
webhook senders, the projectors. It prints "api http://HOST:PORT" for each
API process, then the admin listeners, tokens and where the logs are
(DIR/logs). It refuses a directory whose cluster runs. The serve processes
take SEATGHOR_AUTH_SECRET (else a secret made once into DIR/auth_secret)
and the other SEATGHOR_* variables of its environment.`,
		Example: `  seatghor cluster up --data-dir /tmp/sg
  SEATGHOR_AUTH_SECRET=$(openssl rand -hex 32) seatghor cluster up --data-dir /tmp/sg
  seatghor loadtest onsale --url http://127.0.0.1:PORT1 --url http://127.0.0.1:PORT2`,
		Args: usageArgs(cobra.NoArgs),
		RunE: c.withConfig(func(ctx context.Context, cfg config, log *slog.Logger, _ []string) error {
			return runClusterUp(ctx, cfg, up, c.stdout, log)
		}),
	}
	up.register(upCmd.Flags())
	downCmd := &cobra.Command{
		Use:   "down",
		Short: "Stop every process cluster up started (SIGTERM, then SIGKILL)",
		Long: `cluster down stops what cluster up recorded in DIR/cluster.json, the API
first: SIGTERM, SIGKILL after a tenth of --timeout, then the PostgreSQL
servers. It is safe to run again, and after some processes crashed. The
data stays in DIR for the next up.`,
		Example: `  seatghor cluster down --data-dir /tmp/sg`,
		Args:    usageArgs(cobra.NoArgs),
		RunE: c.withConfig(func(ctx context.Context, cfg config, log *slog.Logger, _ []string) error {
			return runClusterDown(ctx, cfg, down, c.stdout, log)
		}),
	}
	down.register(downCmd.Flags())
	statusCmd := &cobra.Command{
		Use:     "status",
		Short:   "Which processes of the cluster run; exit 1 when any is down",
		Long:    `cluster status prints each process cluster up recorded, up or DOWN, with its pid and address.`,
		Example: `  seatghor cluster status --data-dir /tmp/sg`,
		Args:    usageArgs(cobra.NoArgs),
		RunE: c.withConfig(func(ctx context.Context, cfg config, _ *slog.Logger, _ []string) error {
			return runClusterStatus(ctx, cfg, status, c.stdout)
		}),
	}
	status.register(statusCmd.Flags())
	return parentCmd("cluster up|down|status", "The production topology as local processes (development, load tests)",
		`cluster starts and stops the topology of deploy/compose.yaml as processes on
this machine (decision 0215): docs/operations.md, Topology.`,
		`  seatghor cluster up --data-dir /tmp/sg
  seatghor cluster down --data-dir /tmp/sg`,
		upCmd, downCmd, statusCmd)
}

func (c cli) newChaosCmd() *cobra.Command {
	var o chaosOptions
	cmd := &cobra.Command{
		Use:   "chaos",
		Short: "Attack a cluster of its own with crashes, outages and bad input under load; check every invariant",
		Long: `chaos starts a cluster of its own (cluster up: the real binary as separate
processes, PostgreSQL shards on two servers, a Redis Cluster, MinIO,
Meilisearch, the sandbox gateway with its faults), sends a mixed on-sale load
through both API processes (seated and general-admission holds, orders,
payments, double taps, cancellations, check-ins, a partner's holds, searches,
seat-map reads, malformed requests, forged and stale gateway webhooks) while
a seeded schedule kill -9s serve processes and starts them again, crashes a
PostgreSQL shard server, kills a Redis primary and stops Meilisearch and
MinIO for a while; then it settles and reconciles the payments, times how
long the read models take to equal the databases, checks every invariant
against the databases and prints a table (decision 0410, docs/reliability.md).
It exits 3 when an invariant is broken, 1 when the run could not be made.
--seed replays the schedule and the load's choices, not the interleaving of
the real processes. The full preset writes docs/reliability.md.`,
		Example: `  seatghor chaos                           # the short preset (make test)
  seatghor chaos --preset full --out result.json
  seatghor chaos --seed 7 --kills 5 --buyers 300
  bin/seatghor-broken chaos --broken holds,webhooks   # must exit 3 (make chaos-broken)`,
		Args: usageArgs(cobra.NoArgs),
		RunE: c.withConfig(func(ctx context.Context, cfg config, log *slog.Logger, _ []string) error {
			return runChaos(ctx, cfg, o, c.stdout, log)
		}),
	}
	o.register(cmd.Flags())
	return cmd
}

func newProbeCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "probe URL",
		Short: "Exit 0 when URL (a /livez or /readyz) answers 2xx within 3 s",
		Long: `probe asks one URL and fails unless it answers 2xx within 3 seconds: the
health check of the images, which have no shell or curl (deploy/compose.yaml).`,
		Example: `  seatghor probe http://127.0.0.1:9090/readyz`,
		Args:    cobra.ArbitraryArgs, // runProbe says what it needs
		RunE: func(cmd *cobra.Command, args []string) error {
			return runProbe(cmd.Context(), args)
		},
	}
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the module version, VCS revision and Go version",
		Long:    `version prints which build this is, as the seatghor_build_info metric labels it.`,
		Example: `  seatghor version`,
		Args:    usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			b := api.ReadBuild()
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "seatghor %s\nrevision %s\n%s\n", b.Version, b.Revision, b.GoVersion)
			return err
		},
	}
}
