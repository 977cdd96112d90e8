// Package app wires Seatghor's parts into one running platform: database
// pools, the shard router, the domain services and the API handler. The
// binary's subcommands and the end-to-end tests build it the same way.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/seatghor/seatghor/server/api"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/migrations"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/shard"
)

// Config says where the databases are and how the platform behaves.
type Config struct {
	CatalogURL string
	ShardURLs  []string
	AuthSecret string
	// MaxConns bounds each pool; 0 takes pgx's default.
	MaxConns int32
	Clock    clock.Clock
	Log      *slog.Logger
}

func (c *Config) validate() error {
	switch {
	case c.CatalogURL == "":
		return errors.New("no catalog database URL")
	case len(c.ShardURLs) == 0:
		return errors.New("no shard database URLs")
	case c.AuthSecret == "":
		return errors.New("no auth secret")
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	return nil
}

// App is the wired platform.
type App struct {
	Router   *shard.Router
	Catalog  *catalog.Service
	Booking  *booking.Service
	Tokens   *auth.Tokens
	Registry *prometheus.Registry
	Handler  http.Handler
	log      *slog.Logger
}

// Open connects to every database and wires the services. It does not
// migrate: that is Migrate's job (and `seatghor migrate`'s).
func Open(ctx context.Context, cfg Config) (*App, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	cat, err := pg.Open(ctx, "catalog", cfg.CatalogURL, cfg.MaxConns)
	if err != nil {
		return nil, err
	}
	shards := make([]*pg.Pool, 0, len(cfg.ShardURLs))
	closeAll := func() {
		cat.Close()
		for _, s := range shards {
			s.Close()
		}
	}
	for i, url := range cfg.ShardURLs {
		p, err := pg.Open(ctx, fmt.Sprintf("shard-%d", i), url, cfg.MaxConns)
		if err != nil {
			closeAll()
			return nil, err
		}
		shards = append(shards, p)
	}
	tokens, err := auth.NewTokens(cfg.AuthSecret, cfg.Clock.Now)
	if err != nil {
		closeAll()
		return nil, err
	}
	a := &App{
		Router:   shard.NewRouter(cat, shards),
		Tokens:   tokens,
		Registry: prometheus.NewRegistry(),
		log:      cfg.Log,
	}
	a.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	a.Catalog = catalog.NewService(a.Router, cfg.Clock)
	a.Booking = booking.NewService(a.Router, cfg.Clock, booking.Config{})
	a.Handler, err = api.NewHandler(api.Config{
		Tokens: tokens, Catalog: a.Catalog, Booking: a.Booking, Router: a.Router, Log: cfg.Log, Registry: a.Registry,
	})
	if err != nil {
		closeAll()
		return nil, err
	}
	return a, nil
}

// Close closes every pool.
func (a *App) Close() {
	a.Router.Catalog().Close()
	for _, s := range a.Router.Shards() {
		s.Close()
	}
}

// Migrate applies the embedded migrations to the catalog and every shard.
func Migrate(ctx context.Context, catalogURL string, shardURLs []string) error {
	run := func(name, url string, kind migrations.Kind) error {
		p, err := pg.Open(ctx, name, url, 2)
		if err != nil {
			return err
		}
		defer p.Close()
		return migrations.Up(ctx, p.Pool, kind)
	}
	if err := run("catalog", catalogURL, migrations.Catalog); err != nil {
		return err
	}
	for i, url := range shardURLs {
		if err := run(fmt.Sprintf("shard-%d", i), url, migrations.Shard); err != nil {
			return err
		}
	}
	return nil
}

// RunWorkers runs the background work of the platform until ctx ends: for
// now the hold sweeper.
func (a *App) RunWorkers(ctx context.Context, sweepEvery time.Duration) {
	a.Booking.RunSweeper(ctx, sweepEvery, a.log)
}
