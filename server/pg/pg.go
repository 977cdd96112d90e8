// Package pg is the PostgreSQL plumbing every store shares: opening pools and
// the one helper that owns begin, commit and rollback.
package pg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/exaring/otelpgx"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/multitracer"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
)

// Pool is a connection pool that counts the statements sent through it, so
// tests and metrics can tell which database a request touched.
type Pool struct {
	*pgxpool.Pool
	// Name is the database's role in the system, e.g. "catalog" or "shard-2".
	Name    string
	queries *atomic.Int64
	writes  *atomic.Int64
	trips   *atomic.Int64
	rt      prometheus.Histogram
	commits *commits
}

// NextCommit returns a channel that is closed when a transaction next
// commits on one of the pool's connections, in this process (InTx, a Pipe,
// or any COMMIT sent through it). The outbox consumers wait on it beside
// their poll, so a new event is read when its transaction ends (decision
// 0247); commits of other processes are still found by the poll.
// A pool not made by Open never rings (nil: wait on the poll alone).
func (p *Pool) NextCommit() <-chan struct{} {
	if p.commits == nil {
		return nil
	}
	return p.commits.next()
}

// RoundTripSeconds is the histogram of the pool's round trips (a statement,
// or a pipelined batch, from sending to its answer), labelled with the
// database's name, for registration (R-11: the seat databases' p99).
func (p *Pool) RoundTripSeconds() prometheus.Histogram { return p.rt }

// Queries returns how many statements were sent through the pool so far.
func (p *Pool) Queries() int64 { return p.queries.Load() }

// RoundTrips returns how many times a statement or a pipelined batch of
// statements was sent through the pool and its answer awaited.
func (p *Pool) RoundTrips() int64 { return p.trips.Load() }

// Writes returns how many of those statements could change rows (INSERT,
// UPDATE or DELETE anywhere in them, so also a writing CTE or a SELECT …
// FOR UPDATE): the load test's "DB writes".
func (p *Pool) Writes() int64 { return p.writes.Load() }

// Option tunes a pool opened by Open.
type Option func(*pgxpool.Config)

// WithRole makes every session of the pool run as role (the startup
// parameter "role", i.e. SET ROLE at connect). The application's pools run
// as the migrations' seatghor_app, which may only read and append to the
// ledger; the login role must be a member of it (a superuser always
// is). Migration pools leave it out: they own the schema.
func WithRole(role string) Option {
	return func(cfg *pgxpool.Config) { cfg.ConnConfig.RuntimeParams["role"] = role }
}

// WithTracing adds a span per statement and batch (OpenTelemetry, through
// otelpgx) beside the counting the pool always does; the statement's text
// is recorded, its arguments never.
func WithTracing(tp trace.TracerProvider) Option {
	return func(cfg *pgxpool.Config) {
		cfg.ConnConfig.Tracer = multitracer.New(cfg.ConnConfig.Tracer,
			otelpgx.NewTracer(otelpgx.WithTracerProvider(tp)))
	}
}

// WithIdle closes a connection idle for d, looking every d/2 (0: pgx's
// defaults, half an hour and a minute).
func WithIdle(d time.Duration) Option {
	return func(cfg *pgxpool.Config) {
		if d > 0 {
			cfg.MaxConnIdleTime, cfg.HealthCheckPeriod = d, d/2
		}
	}
}

// AppRole is the database role the application runs as (see WithRole).
const AppRole = "seatghor_app"

// Open connects a pool to url and checks that the database answers.
func Open(ctx context.Context, name, url string, maxConns int32, opts ...Option) (*Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("database %s: parse url: %w", name, err)
	}
	if maxConns > 0 {
		cfg.MaxConns = maxConns
	}
	// A stuck statement or a forgotten open transaction must not hold seat
	// locks for long: the database ends them.
	cfg.ConnConfig.RuntimeParams["statement_timeout"] = "15s"
	cfg.ConnConfig.RuntimeParams["idle_in_transaction_session_timeout"] = "60s"
	counter := new(atomic.Int64)
	writes := new(atomic.Int64)
	trips := new(atomic.Int64)
	rt := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:        "seatghor_db_round_trip_seconds",
		Help:        "Round trips to a database (a statement or a pipelined batch), from sending to the answer.",
		ConstLabels: prometheus.Labels{"database": name},
		Buckets:     prometheus.ExponentialBuckets(0.0005, 2, 14),
	})
	bell := &commits{}
	cfg.ConnConfig.Tracer = countingTracer{n: counter, writes: writes, trips: trips, rt: rt, commits: bell}
	for _, o := range opts {
		o(cfg)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", name, err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("database %s: ping: %w", name, err)
	}
	return &Pool{Pool: pool, Name: name, queries: counter, writes: writes, trips: trips, rt: rt, commits: bell}, nil
}

type countingTracer struct {
	n, writes, trips *atomic.Int64
	rt               prometheus.Histogram
	commits          *commits
}

// sentAt is when a round trip's statement or batch was sent.
type sentAt struct{}

func (t countingTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	t.trips.Add(1)
	t.count(d.SQL)
	return context.WithValue(ctx, sentAt{}, time.Now())
}

// observe records the round trip that ctx's start began.
func (t countingTracer) observe(ctx context.Context) {
	if start, ok := ctx.Value(sentAt{}).(time.Time); ok {
		t.rt.Observe(time.Since(start).Seconds())
	}
}

func (t countingTracer) count(sql string) {
	t.n.Add(1)
	if writing(sql) {
		t.writes.Add(1)
	}
}

// TraceBatchStart counts every statement of a pipelined batch (all are sent,
// even those an earlier error makes the server skip), and the batch as one
// round trip.
func (t countingTracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	t.trips.Add(1)
	for _, q := range d.Batch.QueuedQueries {
		t.count(q.SQL)
	}
	return context.WithValue(ctx, sentAt{}, time.Now())
}

// TraceBatchQuery rings the commit bell when a batch's COMMIT committed (a
// Pipe's last batch; a failed transaction's COMMIT answers ROLLBACK).
func (t countingTracer) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	if d.Err == nil && d.CommandTag.String() == "COMMIT" {
		t.commits.ring()
	}
}

func (t countingTracer) TraceBatchEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchEndData) {
	t.observe(ctx)
}

// writing tells whether a statement may change rows. Our SQL is written
// with upper-case keywords, so a plain search is enough for a counter.
func writing(sql string) bool {
	return strings.Contains(sql, "INSERT") || strings.Contains(sql, "UPDATE") || strings.Contains(sql, "DELETE")
}

func (t countingTracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryEndData) {
	t.observe(ctx)
	if d.Err == nil && d.CommandTag.String() == "COMMIT" {
		t.commits.ring()
	}
}

// Beginner starts a transaction: a pool, or a transaction (a savepoint).
type Beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// Execer runs a statement: a pool or a transaction.
type Execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// InTx runs fn in a transaction: commit when fn returns nil, rollback
// otherwise. It is the only place that begins and ends transactions.
func InTx(ctx context.Context, db Beginner, fn func(pgx.Tx) error) (err error) {
	tx, err := db.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if err != nil {
			// The rollback error is secondary to the one that caused it.
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	if err = fn(tx); err != nil {
		return err
	}
	if err = tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// The database's errors are read here and nowhere else (decision 0318):
// stores ask these what a query's error means and answer with their own
// domain errors.

// Found reads the error of a query for one row: found is false, with no
// error, when there was no row (pgx.ErrNoRows), and err is returned as it
// is when the query failed. A store answers a missing row with its domain
// error (not found, or nothing to do) and wraps a failure with what it did.
func Found(err error) (found bool, _ error) {
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// IsUniqueViolation tells whether err is a unique violation of constraint
// (any constraint when constraint is empty).
func IsUniqueViolation(err error, constraint string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505" &&
		(constraint == "" || pgErr.ConstraintName == constraint)
}

// IsForeignKeyViolation tells whether err is a foreign key violation: a
// row another table's row still points at, or a reference to no row.
func IsForeignKeyViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23503"
}

// IsCheckViolation tells whether err is a CHECK constraint violation.
func IsCheckViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23514"
}

// Unreachable tells whether err says the database did not answer rather
// than refused: no connection could be made, the server is shutting down,
// crashed or still starting (SQLSTATE 57P01–57P03), the connection failed
// (class 08), or it broke mid-request. Such a request may be retried with
// its idempotency key (decision 0414); what the server refused is never
// this.
func Unreachable(err error) bool {
	if err == nil {
		return false
	}
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) {
		return true
	}
	if code := SQLState(err); code != "" {
		return strings.HasPrefix(code, "08") || code == "57P01" || code == "57P02" || code == "57P03"
	}
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		pgconn.SafeToRetry(err)
}

// SQLState is the SQLSTATE of the database error in err's chain (a
// trigger's own, lock_not_available, …); "" when there is none.
func SQLState(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}
