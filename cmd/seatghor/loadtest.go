package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/seatghor/seatghor/clients/go/loadtest"
	"github.com/seatghor/seatghor/server/auth"
)

// runLoadtest is `seatghor loadtest onsale`: the on-sale crowd against a
// running server, a summary table on stdout and the result as JSON.
func runLoadtest(ctx context.Context, cfg config, args []string, stdout io.Writer, log *slog.Logger) error {
	if len(args) > 0 && args[0] == "holds" {
		return runLoadtestHolds(ctx, cfg, args[1:], stdout, log)
	}
	if len(args) == 0 || args[0] != "onsale" {
		return fmt.Errorf("%w: loadtest onsale|holds [flags]", errUsage)
	}
	fs := newFlags("loadtest onsale")
	url := fs.String("url", "http://"+cfg.Addr, "the running server")
	adminURL := fs.String("admin-url", "http://"+cfg.AdminAddr, "the running server's admin listener (its /metrics)")
	preset := fs.String("preset", "small", "small or full")
	buyers := fs.Int("buyers", 0, "buyers (0: the preset's)")
	trips := fs.Int("trips", 0, "bus trips on sale (0: the preset's)")
	rows := fs.Int("rows", 0, "rows of 4 seats per trip (0: the preset's)")
	arrival := fs.Duration("arrival", 0, "the window the crowd arrives in (0: the preset's)")
	ttls := fs.String("ttl", "", "hold TTLs to measure, comma-separated, e.g. 30s,1m (empty: the preset's)")
	pay := fs.Float64("pay-share", -1, "share of buyers who pay (negative: the preset's)")
	room := fs.Bool("waiting-room", false, "put every trip behind a waiting room (R-9); buyers queue, then hold with their Queue-Token")
	minA := fs.Int("min-admission", 0, "waiting room: lowest admission rate per second and trip (0: the server's default)")
	maxA := fs.Int("max-admission", 0, "waiting room: highest admission rate per second and trip (0: the server's default)")
	poll := fs.Duration("poll", time.Second, "waiting room: poll at least this often, whatever pollAfter says")
	out := fs.String("out", "", "write the result as JSON to this file")
	compare := fs.String("compare", "", "a result JSON to compare this run with, as ratios")
	if err := fs.Parse(args[1:]); err != nil {
		return fmt.Errorf("%w: loadtest: %v", errUsage, err)
	}
	lt, ok := loadtest.Presets()[*preset]
	if !ok {
		return fmt.Errorf("%w: loadtest: no preset %q (small, full)", errUsage, *preset)
	}
	lt.BaseURL = strings.TrimRight(*url, "/")
	lt.AdminURL = strings.TrimRight(*adminURL, "/")
	for dst, v := range map[*int]int{&lt.Buyers: *buyers, &lt.Trips: *trips, &lt.RowsPerTrip: *rows} {
		if v > 0 {
			*dst = v
		}
	}
	if *arrival > 0 {
		lt.Arrival = *arrival
	}
	if *pay >= 0 {
		lt.PayShare = *pay
	}
	lt.WaitingRoom, lt.MinAdmission, lt.MaxAdmission, lt.PollInterval = *room, int32(*minA), int32(*maxA), *poll
	if *ttls != "" {
		lt.HoldTTLs = nil
		for _, s := range strings.Split(*ttls, ",") {
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
	if err := writeResult(stdout, res, *out); err != nil {
		return err
	}
	if *compare != "" {
		b, err := os.ReadFile(*compare)
		if err != nil {
			return fmt.Errorf("read baseline: %w", err)
		}
		var base loadtest.Result
		if err := json.Unmarshal(b, &base); err != nil {
			return fmt.Errorf("baseline %s: %w", *compare, err)
		}
		fmt.Fprintf(stdout, "\nthis run / %s:\n", *compare)
		return loadtest.Compare(stdout, base, res)
	}
	return nil
}

// runLoadtestHolds is `seatghor loadtest holds`: CreateHold and GetSeatMap
// at full speed, each next to the same work without our code (the hold's
// essential transaction with pgx on the same PostgreSQL, Redis GETs of the
// seat map's size), printed as ratios and written as JSON.
func runLoadtestHolds(ctx context.Context, cfg config, args []string, stdout io.Writer, log *slog.Logger) error {
	fs := newFlags("loadtest holds")
	url := fs.String("url", "http://"+cfg.Addr, "the running server")
	adminURL := fs.String("admin-url", "http://"+cfg.AdminAddr, "the running server's admin listener (its /metrics)")
	pgURL := fs.String("pg-url", "", "the database the shows land on (the shard's), for the baseline transaction")
	redisURL := fs.String("redis-url", cfg.RedisURL, "the Redis for the baseline GETs")
	redisPrefix := fs.String("redis-prefix", cfg.RedisPrefix, "the server's Redis key prefix; with it, the big show's seat map is dropped and its rebuild timed")
	preset := fs.String("preset", "small", "small or full")
	conc := fs.Int("concurrency", 0, "closed-loop clients (0: the preset's)")
	showSeats := fs.Int("show-seats", -1, "seats of the one big show, in rows of 500; 0 skips it (negative: the preset's)")
	shows := fs.Int("shows", -1, "40-seat buses; 0 skips them (negative: the preset's)")
	ga := fs.Int("ga-places", -1, "places of the GA shows, bucketed and single-row; 0 skips them (negative: the preset's)")
	duration := fs.Duration("duration", 0, "how long each phase runs (0: the preset's)")
	seatMapPath := fs.String("seatmap-path", "", "the seat map read to measure, {show} for the show (empty: /v1/shows/{show}/seatmap)")
	out := fs.String("out", "", "write the result as JSON to this file")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: loadtest holds: %v", errUsage, err)
	}
	lt, ok := loadtest.HoldsPresets()[*preset]
	if !ok {
		return fmt.Errorf("%w: loadtest holds: no preset %q (small, full)", errUsage, *preset)
	}
	lt.BaseURL, lt.AdminURL = strings.TrimRight(*url, "/"), strings.TrimRight(*adminURL, "/")
	lt.PGURL, lt.RedisURL, lt.RedisPrefix, lt.SeatMapPath = *pgURL, *redisURL, *redisPrefix, *seatMapPath
	if lt.PGURL == "" && len(cfg.ShardURLs) == 1 {
		lt.PGURL = cfg.ShardURLs[0]
	}
	if *conc > 0 {
		lt.Concurrency = *conc
	}
	for dst, v := range map[*int]int{&lt.ShowSeats: *showSeats, &lt.Shows: *shows, &lt.GAPlaces: *ga} {
		if v >= 0 {
			*dst = v
		}
	}
	if *duration > 0 {
		lt.Duration = *duration
	}
	tokens, err := loadtestSigner(cfg)
	if err != nil {
		return err
	}
	res, err := loadtest.RunHolds(ctx, lt, tokens, log)
	if err != nil {
		return err
	}
	if err := writeResult(stdout, res, *out); err != nil {
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
