// Package chaos is `seatghor chaos` (decision 0410): it attacks the whole
// platform at once, the way Jepsen's bank tests and TigerBeetle's simulator
// do, and then checks that nothing it guarantees broke. Over `seatghor
// cluster up` (the real binary as separate processes, PostgreSQL shards on
// two servers, a Redis Cluster, MinIO, Meilisearch, the sandbox gateway) it
// sends a mixed on-sale load through both API processes — seated and
// general-admission holds, orders, payments with the sandbox's faults,
// double taps, cancellations, check-ins at the gate, a partner's holds,
// searches and seat-map reads, malformed requests, forged and stale
// gateway webhooks — while a seeded schedule kill -9s processes and starts
// them again, crashes a PostgreSQL shard server, kills a Redis primary and
// takes Meilisearch and MinIO away for a while. Then it settles the
// payments, reconciles, measures how long the read models take to equal
// the databases, and checks every invariant against the databases.
//
// Every random choice of the load and of the faults comes from the seed,
// so --seed replays the schedule; the interleaving of real processes is
// not replayed (a Jepsen-style test of real processes, not a simulation).
package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/seatghor/seatghor/server/app"
	"github.com/seatghor/seatghor/server/auth"
)

// Config is one chaos run: the load's size and the faults'. Sizes scale
// with the flags of `seatghor chaos`.
type Config struct {
	// Preset names the configuration the run started from.
	Preset string `json:"preset"`
	// Seed drives every random choice of the load and of the schedule.
	Seed uint64 `json:"seed"`
	// Buyers arrive within Arrival, each wanting 1 to 4 seats or places.
	Buyers  int           `json:"buyers"`
	Arrival time.Duration `json:"arrival"`
	// BusTrips are fresh 40-seat buses; StadiumSeats the seated stands of
	// one stadium show (rows of 20) and GAPlaces its general-admission
	// area.
	BusTrips     int `json:"bus_trips"`
	StadiumSeats int `json:"stadium_seats"`
	GAPlaces     int `json:"ga_places"`
	// Payers come for the payments (R2) rather than for the race: each
	// holds 1 to 4 places of a general-admission area of their own (the
	// stadium's Terrace, four places a payer, so it never runs out),
	// orders and pays as the buyers do. The race's seats serve a few
	// hundred buyers; the payers bring the payments to the count
	// without making the race less of one (decision 0481).
	Payers int `json:"payers"`
	// HoldTTL is the shows' hold lifetime.
	HoldTTL time.Duration `json:"hold_ttl"`
	// Kills is how many times a serve process (either API, the workers,
	// the projectors) is killed with SIGKILL and started again.
	Kills int `json:"kills"`
	// Outage is how long Meilisearch and MinIO are each stopped.
	Outage time.Duration `json:"outage"`
	// Forged and Stale are the gateway webhooks sent with a wrong
	// signature and with an old one, among the real ones.
	Forged int `json:"forged"`
	Stale  int `json:"stale"`
	// Malformed is how many malformed requests the load mixes in.
	Malformed int `json:"malformed"`
	// ConvergeWithin is how soon after the last write every read model
	// should equal the databases (reported, and watched for four times as
	// long: a read model that never equals them is the violation);
	// SettleWithin how long the payments may take to settle after the
	// load.
	ConvergeWithin time.Duration `json:"converge_within"`
	SettleWithin   time.Duration `json:"settle_within"`
	// Broken names the switches of a chaosbroken build the run turns on
	// (holds, webhooks, audit, counter); the run must then report
	// violations.
	Broken []string `json:"broken,omitempty"`
}

// Presets are the named configurations: "short" runs in `make test` in
// under three minutes on a small machine; "full" is the run of
// docs/reliability.md (the sizes, where one machine carries them).
func Presets() map[string]Config {
	return map[string]Config{
		"short": {
			Preset: "short", Seed: 1, Buyers: 110, Arrival: 30 * time.Second, BusTrips: 3, StadiumSeats: 80, GAPlaces: 120, Payers: 20,
			HoldTTL: time.Minute, Kills: 3, Outage: 5 * time.Second, Forged: 10, Stale: 10, Malformed: 40,
			ConvergeWithin: 30 * time.Second, SettleWithin: 60 * time.Second,
		},
		"full": {
			Preset: "full", Seed: 1, Buyers: 2000, Arrival: 5 * time.Minute, BusTrips: 15, StadiumSeats: 400, GAPlaces: 1200, Payers: 1200,
			HoldTTL: time.Minute, Kills: 20, Outage: 20 * time.Second, Forged: 100, Stale: 100, Malformed: 400,
			ConvergeWithin: 30 * time.Second, SettleWithin: 2 * time.Minute,
		},
	}
}

// Validate says what is wrong with c.
func (c Config) Validate() error {
	switch {
	case c.Buyers < 1 || c.Arrival <= 0:
		return errors.New("chaos: buyers and the arrival window must be positive")
	case c.BusTrips < 1 || c.StadiumSeats < 20 || c.GAPlaces < 4:
		return errors.New("chaos: at least one bus trip, 20 stadium seats and 4 general-admission places")
	case c.StadiumSeats%20 != 0:
		return errors.New("chaos: stadium seats come in rows of 20")
	case c.Kills < 0 || c.Payers < 0 || c.Forged < 0 || c.Stale < 0 || c.Malformed < 0:
		return errors.New("chaos: counts cannot be negative")
	case c.HoldTTL < 10*time.Second:
		return errors.New("chaos: holds must last at least 10 s")
	case c.Outage <= 0 || 2*c.Outage >= c.Arrival:
		return errors.New("chaos: the two outages must fit in the arrival window")
	case c.ConvergeWithin <= 0 || c.SettleWithin <= 0:
		return errors.New("chaos: the convergence and settlement limits must be positive")
	}
	return nil
}

// Cluster is the running topology the faults act on (`seatghor cluster
// up`): processes by name (api-1, api-2, workers, projectors, meilisearch,
// minio), the two PostgreSQL servers by index, the Redis Cluster's nodes.
type Cluster interface {
	// APIs are the API processes' base URLs.
	APIs() []string
	// Kill ends a process at once (SIGKILL), Stop asks it to end
	// (SIGTERM, then SIGKILL); Start starts it again as it was started and
	// returns once it is ready.
	Kill(ctx context.Context, name string) error
	Stop(ctx context.Context, name string) error
	Start(ctx context.Context, name string) error
	// CrashPostgres stops PostgreSQL server i (0 or 1) immediately, as a
	// crash would; StartPostgres starts it again on the same address.
	CrashPostgres(ctx context.Context, i int) error
	StartPostgres(ctx context.Context, i int) error
	// KillRedisPrimary kills the Redis primary serving key (SIGKILL) and
	// returns once its replica serves the key's slot.
	KillRedisPrimary(ctx context.Context, key string) (killed, promoted string, err error)
	// Logs are the serve processes' log files, searched for panics.
	Logs() []string
}

// Deps is what a run works with.
type Deps struct {
	Cluster Cluster
	// App is the platform opened as a tool on the cluster's databases,
	// Redis, object store, trip index and gateway: what the invariants are
	// checked against.
	App *app.App
	// RedisPrefix is the prefix of the cluster's Redis keys.
	RedisPrefix string
	// Tokens sign the callers' tokens with the cluster's key.
	Tokens *auth.Tokens
	// WebhookSecret signs the sandbox's webhooks (stale replays are signed
	// with it; forged ones are not).
	WebhookSecret string
	// Organization is the organisation the run's shows belong to, Gate a
	// member of it who checks tickets in (the demo data's).
	Organization, Gate string
	// Log receives progress; nil discards it.
	Log *slog.Logger
	// Progress receives a line per phase; nil discards them.
	Progress io.Writer
}

// ErrViolations means the run found invariants broken.
var ErrViolations = errors.New("chaos: invariants broken")

// Run runs the load and the schedule against the cluster, settles,
// converges and checks, and returns what it found. An error means the run
// could not be made; broken invariants are in the result (Violations).
func Run(ctx context.Context, cfg Config, d Deps) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Progress == nil {
		d.Progress = io.Discard
	}
	r, err := newRun(cfg, d)
	if err != nil {
		return Result{}, err
	}
	defer r.close()
	return r.run(ctx)
}

// say prints a progress line.
func (r *run) say(format string, args ...any) {
	fmt.Fprintf(r.d.Progress, "chaos %6.1fs  "+format+"\n", append([]any{time.Since(r.began).Seconds()}, args...)...)
}
