package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/seatghor/seatghor/internal/loadtest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/spf13/pflag"
)

// onsaleOptions are the flags of `seatghor loadtest onsale`; zero and
// negative numbers take the preset's value.
type onsaleOptions struct {
	urls, adminURLs                 []string
	preset, ttls, out, compare      string
	buyers, trips, rows, minA, maxA int
	arrival, poll                   time.Duration
	pay                             float64
	room                            bool
}

func (o *onsaleOptions) register(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.urls, "url", nil, "the running server's API processes, repeated or comma-separated: buyers spread over them and move on when one is gone (default http://$SEATGHOR_ADDR)")
	fs.StringSliceVar(&o.adminURLs, "admin-url", nil, "admin listeners whose /metrics are summed, repeated or comma-separated (default http://$SEATGHOR_ADMIN_ADDR)")
	fs.StringVar(&o.preset, "preset", "small", "small or full")
	fs.IntVar(&o.buyers, "buyers", 0, "buyers (0: the preset's)")
	fs.IntVar(&o.trips, "trips", 0, "bus trips on sale (0: the preset's)")
	fs.IntVar(&o.rows, "rows", 0, "rows of 4 seats per trip (0: the preset's)")
	fs.DurationVar(&o.arrival, "arrival", 0, "the window the crowd arrives in (0: the preset's)")
	fs.StringVar(&o.ttls, "ttl", "", "hold TTLs to measure, comma-separated, e.g. 30s,1m (empty: the preset's)")
	fs.Float64Var(&o.pay, "pay-share", -1, "share of buyers who pay (negative: the preset's)")
	fs.BoolVar(&o.room, "waiting-room", false, "put every trip behind a waiting room (R-9); buyers queue, then hold with their Queue-Token")
	fs.IntVar(&o.minA, "min-admission", 0, "waiting room: lowest admission rate per second and trip (0: the server's default)")
	fs.IntVar(&o.maxA, "max-admission", 0, "waiting room: highest admission rate per second and trip (0: the server's default)")
	fs.DurationVar(&o.poll, "poll", time.Second, "waiting room: poll at least this often, whatever pollAfter says")
	fs.StringVar(&o.out, "out", "", "write the result as JSON to this file")
	fs.StringVar(&o.compare, "compare", "", "a result JSON to compare this run with, as ratios")
}

// runLoadtest is `seatghor loadtest onsale`: the on-sale crowd against a
// running server, a summary table on stdout and the result as JSON.
func runLoadtest(ctx context.Context, cfg config, o onsaleOptions, stdout io.Writer, log *slog.Logger) error {
	lt, ok := loadtest.Presets()[o.preset]
	if !ok {
		return fmt.Errorf("%w: loadtest: no preset %q (small, full)", errUsage, o.preset)
	}
	lt.BaseURLs, lt.AdminURLs = trimURLs(o.urls, "http://"+cfg.Addr), trimURLs(o.adminURLs, "http://"+cfg.AdminAddr)
	for dst, v := range map[*int]int{&lt.Buyers: o.buyers, &lt.Trips: o.trips, &lt.RowsPerTrip: o.rows} {
		if v > 0 {
			*dst = v
		}
	}
	if o.arrival > 0 {
		lt.Arrival = o.arrival
	}
	if o.pay >= 0 {
		lt.PayShare = o.pay
	}
	lt.WaitingRoom, lt.MinAdmission, lt.MaxAdmission, lt.PollInterval = o.room, int32(o.minA), int32(o.maxA), o.poll
	if o.ttls != "" {
		lt.HoldTTLs = nil
		for _, s := range strings.Split(o.ttls, ",") {
			d, err := time.ParseDuration(strings.TrimSpace(s))
			if err != nil {
				return fmt.Errorf("%w: loadtest: --ttl %q: %v", errUsage, s, err)
			}
			lt.HoldTTLs = append(lt.HoldTTLs, d)
		}
	}
	tokens, err := loadtestSigner(cfg)
	if err != nil {
		return err
	}
	res, err := loadtest.Run(ctx, lt, tokens, log)
	if err != nil {
		return err
	}
	if err := writeResult(stdout, res, o.out); err != nil {
		return err
	}
	for _, p := range res.Phases {
		if p.Oversold > 0 || p.Lost > 0 {
			return fmt.Errorf("%w: TTL %s: %d seats oversold, %d confirmed orders lost", errLoadtestBroken, p.HoldTTL, p.Oversold, p.Lost)
		}
	}
	if o.compare != "" {
		b, err := os.ReadFile(o.compare)
		if err != nil {
			return fmt.Errorf("read baseline: %w", err)
		}
		var base loadtest.Result
		if err := json.Unmarshal(b, &base); err != nil {
			return fmt.Errorf("baseline %s: %w", o.compare, err)
		}
		fmt.Fprintf(stdout, "\nthis run / %s:\n", o.compare)
		return loadtest.Compare(stdout, base, res)
	}
	return nil
}

// errLoadtestBroken means the on-sale run broke an invariant: a seat sold
// twice or a confirmed order lost (the command exits 1).
var errLoadtestBroken = errors.New("loadtest: invariants broken")

// trimURLs is urls without trailing slashes and empty entries, else def.
func trimURLs(urls []string, def string) []string {
	var out []string
	for _, u := range urls {
		if u = strings.TrimRight(strings.TrimSpace(u), "/"); u != "" {
			out = append(out, u)
		}
	}
	if len(out) == 0 {
		return []string{def}
	}
	return out
}

// holdsOptions are the flags of `seatghor loadtest holds`.
type holdsOptions struct {
	url, adminURL, redisURL, redisPrefix, preset, seatMapPath, out string
	pgURLs                                                         []string
	conc, showSeats, shows, ga, stops                              int
	duration                                                       time.Duration
	seatMapOnly                                                    bool
}

func (o *holdsOptions) register(fs *pflag.FlagSet) {
	fs.StringVar(&o.url, "url", "", "the running server (default http://$SEATGHOR_ADDR)")
	fs.StringVar(&o.adminURL, "admin-url", "", "the running server's admin listener, its /metrics (default http://$SEATGHOR_ADMIN_ADDR)")
	fs.StringArrayVar(&o.pgURLs, "pg-url", nil, "a shard's database, once per shard the shows land on (any PostgreSQL servers of this machine): the oversold check and the PostgreSQL CPU cover them all, the baseline transaction runs on the first (default: $SEATGHOR_SHARD_URLS)")
	fs.StringVar(&o.redisURL, "redis-url", "", "the Redis for the baseline GETs, a Redis Cluster with addr= parameters (default $SEATGHOR_REDIS_URL)")
	fs.StringVar(&o.redisPrefix, "redis-prefix", "", "the server's Redis key prefix; with it, the big show's seat map is dropped and its rebuild timed (default $SEATGHOR_REDIS_PREFIX)")
	fs.StringVar(&o.preset, "preset", "small", "small or full")
	fs.IntVar(&o.conc, "concurrency", 0, "closed-loop clients (0: the preset's)")
	fs.IntVar(&o.showSeats, "show-seats", -1, "seats of the one big show, in rows of 500; 0 skips it (negative: the preset's)")
	fs.IntVar(&o.shows, "shows", -1, "40-seat buses; 0 skips them (negative: the preset's)")
	fs.IntVar(&o.ga, "ga-places", -1, "places of the GA shows, bucketed and single-row; 0 skips them (negative: the preset's)")
	fs.IntVar(&o.stops, "stops", 0, "make the buses coaches of this many stops (2 to 8), sold per leg: holds ask for journeys drawn over the stop pairs (0: sold whole)")
	fs.DurationVar(&o.duration, "duration", 0, "how long each phase runs (0: the preset's)")
	fs.StringVar(&o.seatMapPath, "seatmap-path", "", "the seat map read to measure, {show} for the show (empty: /v1/shows/{show}/seatmap)")
	fs.BoolVar(&o.seatMapOnly, "seatmap-only", false, "run only the GetSeatMap phase and its Redis baseline (no holds, no GA)")
	fs.StringVar(&o.out, "out", "", "write the result as JSON to this file")
}

// runLoadtestHolds is `seatghor loadtest holds`: CreateHold and GetSeatMap
// at full speed, each next to the same work without our code (the hold's
// essential transaction with pgx on the same PostgreSQL, Redis GETs of the
// seat map's size), printed as ratios and written as JSON.
func runLoadtestHolds(ctx context.Context, cfg config, o holdsOptions, stdout io.Writer, log *slog.Logger) error {
	lt, ok := loadtest.HoldsPresets()[o.preset]
	if !ok {
		return fmt.Errorf("%w: loadtest holds: no preset %q (small, full)", errUsage, o.preset)
	}
	lt.BaseURL = strings.TrimRight(cmp.Or(o.url, "http://"+cfg.Addr), "/")
	lt.AdminURL = strings.TrimRight(cmp.Or(o.adminURL, "http://"+cfg.AdminAddr), "/")
	lt.PGURLs, lt.RedisURL, lt.RedisPrefix, lt.SeatMapPath = o.pgURLs, cmp.Or(o.redisURL, cfg.RedisURL), cmp.Or(o.redisPrefix, cfg.RedisPrefix), o.seatMapPath
	lt.SeatMapOnly, lt.Stops = o.seatMapOnly, o.stops
	if len(lt.PGURLs) == 0 {
		lt.PGURLs = cfg.ShardURLs
	}
	if o.conc > 0 {
		lt.Concurrency = o.conc
	}
	for dst, v := range map[*int]int{&lt.ShowSeats: o.showSeats, &lt.Shows: o.shows, &lt.GAPlaces: o.ga} {
		if v >= 0 {
			*dst = v
		}
	}
	if o.duration > 0 {
		lt.Duration = o.duration
	}
	tokens, err := loadtestSigner(cfg)
	if err != nil {
		return err
	}
	res, err := loadtest.RunHolds(ctx, lt, tokens, log)
	if err != nil {
		return err
	}
	if err := writeResult(stdout, res, o.out); err != nil {
		return err
	}
	return nil
}

// loadtestSigner signs the load test's buyers' tokens with the token keys
// the server verifies.
func loadtestSigner(cfg config) (loadtest.Tokens, error) {
	keys, err := cfg.tokenKeys()
	if err != nil {
		return nil, err
	}
	tokens, err := auth.NewTokens(keys, time.Now)
	if err != nil {
		return nil, err
	}
	return loadtest.Signer(tokens), nil
}

// writeResult prints a run's table and, with a path, writes its JSON there.
func writeResult(stdout io.Writer, res interface{ WriteTable(io.Writer) error }, path string) error {
	if err := res.WriteTable(stdout); err != nil {
		return err
	}
	if path == "" {
		return nil
	}
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("write result: %w", err)
	}
	return nil
}
