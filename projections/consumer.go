// Package projections is the read side's engine: it reads the
// transactional outbox of every shard and of the catalog and hands the
// events, in batches, to projectors that build read models (the Redis seat
// map, my tickets, the trip index, e-ticket PDFs; one package each below).
//
// No event is skipped: a database's outbox is read in (xid, id) order and
// only below the oldest transaction still running there (horizonSQL: the
// snapshot's xmin, leaving out other databases' transactions), so a row whose
// transaction commits after a later one is never passed over (docs/DESIGN.md,
// "The outbox has no gaps"). Each projector keeps its own checkpoint in each
// database, advanced only after the projector accepted the batch; delivery
// is therefore at least once and every projector is idempotent.
package projections

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Event is one outbox row.
type Event struct {
	// Source names the database it came from ("catalog", "shard-2").
	Source string
	// ID and XID place the row in its outbox: rows are delivered in
	// (XID, ID) order per database.
	ID         int64
	XID        uint64
	ShowID     int64
	EventID    string
	Type       string
	Payload    []byte
	OccurredAt time.Time
	// RecordedAt is when the row was written: its INSERT's
	// clock_timestamp(), in the hold the last statement before COMMIT, so
	// about when the change became true (decision 0245). Delay and lag are
	// counted from it. Rows written before that are read with OccurredAt.
	RecordedAt time.Time
}

// Projector builds one read model from events. Apply must be idempotent: a
// batch is delivered again after a crash or a lost checkpoint write.
type Projector interface {
	// Name identifies the projector's checkpoints; stable across releases.
	Name() string
	// Apply makes the read model reflect events (one database's, in order).
	// An error leaves the checkpoint where it was; the batch is retried.
	Apply(ctx context.Context, events []Event) error
	// Reset drops the read model, for a rebuild from scratch.
	Reset(ctx context.Context) error
}

// Eager is a Projector whose read model should follow a busy outbox more
// closely than Config.Poll: after a batch with events, its consumer looks
// again after BusyPoll, and a commit in the source (Source.NextCommit)
// wakes it, no sooner than BusyPoll after its previous read (decision 0247).
// BusyPoll is therefore the least time between two of its reads.
type Eager interface {
	BusyPoll() time.Duration
}

// Previewer is a Projector whose read model does not depend on the order
// of events (the seat map: per-seat versions, decision 0130). While rows
// wait behind a running transaction, its consumer hands it those already
// committed, ahead of their turn (decision 0248), with the batch it
// delivers in order, in one call (decision 0260): an event shows as soon
// as it is true, not once every older transaction has ended. The preview
// must not move what the order guards (the seat map's version); the same
// rows are delivered in order later, as always.
type Previewer interface {
	// ApplyPreview is Apply of batch (possibly empty) together with a
	// preview of ahead. It returns the events of ahead it made visible (it
	// may leave some to Apply); each event is offered once. An error
	// means the batch may not be applied: the consumer then applies it
	// alone, retrying as for Apply, and drops the preview (delivery does
	// not depend on it).
	ApplyPreview(ctx context.Context, batch, ahead []Event) (shown []Event, err error)
}

// offer is what became of a row offered to Preview.
type offer struct {
	xid   uint64
	shown bool // its delay was counted when it was shown
}

// Paced is a Projector whose read model may be a little behind:
// unless it is catching up (a full batch), its consumer reads at most every
// Pace, also while rows wait behind a running transaction, so a burst of
// events reaches it as a few large batches instead of many small ones
// (decision 0246).
type Paced interface {
	Pace() time.Duration
}

// Source is a database with an outbox.
type Source struct {
	Name string
	Pool *pgxpool.Pool
	// NextCommit returns a channel closed when a transaction next commits
	// in the database through this process (pg.Pool.NextCommit); it wakes
	// the Eager projectors' consumers before their poll. Nil: poll only.
	NextCommit func() <-chan struct{}
}

// Config tunes a Consumer.
type Config struct {
	// Batch is the most rows handed to a projector at once; default 500.
	Batch int
	// Poll is how often a caught-up consumer looks for new rows; default
	// 100ms (the lag bound when idle). A short poll, not LISTEN/NOTIFY:
	// NOTIFY serialises the commits of every notifying transaction in the
	// cluster (decision 0020).
	Poll time.Duration
	// MaxBackoff caps the jittered backoff after errors; default 10s.
	MaxBackoff time.Duration
	// Registerer receives the metrics; nil registers nothing.
	Registerer prometheus.Registerer
	Log        *slog.Logger
	// Tracing receives a span per batch applied; nil records none.
	Tracing trace.TracerProvider
}

// Consumer runs projectors over sources.
type Consumer struct {
	sources    []Source
	projectors []Projector
	cfg        Config
	log        *slog.Logger
	m          *metrics
	tracer     trace.Tracer
}

// NewConsumer returns a consumer of sources' outboxes for projectors.
func NewConsumer(sources []Source, projectors []Projector, cfg Config) (*Consumer, error) {
	if cfg.Batch <= 0 {
		cfg.Batch = 500
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 100 * time.Millisecond
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = 10 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Tracing == nil {
		cfg.Tracing = noop.NewTracerProvider()
	}
	seen := map[string]bool{}
	for _, p := range projectors {
		if seen[p.Name()] {
			return nil, fmt.Errorf("projections: two projectors named %q", p.Name())
		}
		seen[p.Name()] = true
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	return &Consumer{sources: sources, projectors: projectors, cfg: cfg, log: cfg.Log, m: m,
		tracer: cfg.Tracing.Tracer("github.com/seatghor/seatghor/projections")}, nil
}

// Run runs every (projector, source) pair until ctx ends. Each pair is
// active in one process at a time (a session advisory lock in the source
// database); the others wait and take over when it goes away.
func (c *Consumer) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, p := range c.projectors {
		for _, s := range c.sources {
			wg.Go(func() { c.runPair(ctx, p, s) })
		}
	}
	wg.Wait()
}

// Rebuild drops p's read model and then resets p's checkpoint in every
// source to the start of the outbox, so the running consumers (in any
// process) replay it (decision 0090). Nothing has to be stopped:
//
//   - The model is cleared first. A consumer may go on applying batches
//     onto the empty model until it sees the reset; their events are
//     replayed again after it, which idempotence makes harmless. (The other
//     order loses events: a consumer that saw the reset first would replay
//     a batch from the start, the clear would wipe it, and its checkpoint
//     would move past it.)
//   - The checkpoint row is reset in place, never deleted, and its
//     generation moves on: a consumer can only save a position under the
//     generation it loaded, so it cannot carry a pre-rebuild position over
//     the reset; and every pruner, in any process, still sees the row at
//     the start of the outbox and keeps the rows the replay needs.
//
// If it fails part way, run it again: the model may be empty while some
// checkpoints were not reset yet.
func (c *Consumer) Rebuild(ctx context.Context, name string) error {
	var p Projector
	for _, q := range c.projectors {
		if q.Name() == name {
			p = q
		}
	}
	if p == nil {
		return fmt.Errorf("rebuild: no projector %q", name)
	}
	if err := p.Reset(ctx); err != nil {
		return fmt.Errorf("rebuild %s: %w", name, err)
	}
	for _, s := range c.sources {
		if err := resetCheckpoint(ctx, s, name); err != nil {
			return fmt.Errorf("rebuild %s: reset checkpoint in %s: %w", name, s.Name, err)
		}
	}
	return nil
}

// pruneLock serialises pruning and checkpoint resets in one database: a
// prune's DELETE reads the checkpoints once, so a reset waits for a running
// prune, and a prune that starts after the reset sees it.
const pruneLock = `SELECT pg_advisory_xact_lock(hashtextextended('seatghor outbox prune', 0))`

// resetCheckpoint moves projector's checkpoint in s back to the start of the
// outbox under a new generation (creating the row if the projector never
// ran there, so pruners see it too).
func resetCheckpoint(ctx context.Context, s Source, projector string) error {
	return pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, pruneLock); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `
			INSERT INTO projection_checkpoints AS c (projector, generation) VALUES ($1, 1)
			ON CONFLICT (projector) DO UPDATE SET xid = '0', id = 0, generation = c.generation + 1, updated_at = now()`,
			projector)
		return err
	})
}

// Prune deletes the outbox rows of every source that every one of the named
// projectors has passed and that occurred before olderThan (R-8.1:
// retention, see README.md). A projector without a checkpoint in a source
// keeps that source's outbox whole. It returns the rows deleted.
func (c *Consumer) Prune(ctx context.Context, projectors []string, olderThan time.Time) (int64, error) {
	if len(projectors) == 0 {
		return 0, nil
	}
	var total int64
	for _, s := range c.sources {
		n, err := pruneSource(ctx, s, projectors, false, olderThan)
		if err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}

// pruneSource deletes s's outbox rows older than olderThan at or below the
// lowest checkpoint of the named projectors, and of every projector with a
// checkpoint row in s when all is set; nothing while a named projector has
// no row there. The checkpoints are read in the same statement, under
// pruneLock, so a rebuild's reset is either seen or waits.
func pruneSource(ctx context.Context, s Source, projectors []string, all bool, olderThan time.Time) (int64, error) {
	if projectors == nil {
		projectors = []string{} // NULL would match nothing
	}
	var n int64
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, pruneLock); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `
			WITH low AS (
				SELECT xid, id FROM projection_checkpoints WHERE $3 OR projector = ANY($1)
				ORDER BY xid, id LIMIT 1
			), have AS (
				SELECT count(*) AS n FROM projection_checkpoints WHERE projector = ANY($1)
			)
			DELETE FROM outbox o USING low, have
			WHERE have.n = cardinality($1) AND (o.xid, o.id) <= (low.xid, low.id) AND o.occurred_at < $2`,
			projectors, olderThan, all)
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("prune outbox of %s: %w", s.Name, err)
	}
	return n, nil
}

// RunPruner prunes every source's outbox each interval, keeping retention
// (the workers role). The projectors that must have passed a row are the
// ones this process runs and every one with a checkpoint row in that
// database, so a read model that another process runs, or that is being
// rebuilt (its row reset to the start, decision 0090), is never cut short.
func (c *Consumer) RunPruner(ctx context.Context, every, retention time.Duration) {
	own := make([]string, 0, len(c.projectors))
	for _, p := range c.projectors {
		own = append(own, p.Name())
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
		for _, s := range c.sources {
			n, err := pruneSource(ctx, s, own, true, time.Now().Add(-retention))
			if err == nil && n > 0 {
				c.log.Info("outbox pruned", "source", s.Name, "rows", n)
			}
			if err != nil && ctx.Err() == nil {
				c.log.Warn("outbox not pruned", "source", s.Name, "err", err)
			}
		}
	}
}

// runPair keeps one (projector, source) going until ctx ends, taking over
// after errors with a jittered backoff.
func (c *Consumer) runPair(ctx context.Context, p Projector, s Source) {
	log := c.log.With("projector", p.Name(), "source", s.Name)
	failures := 0
	for ctx.Err() == nil {
		active, err := c.consume(ctx, p, s, log)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			failures++
			log.Warn("projector stopped; retrying", "err", err, "failures", failures)
		case !active:
			failures = 0 // another process has it: look again later
		}
		sleep(ctx, backoff(max(failures, 1), time.Second, c.cfg.MaxBackoff))
	}
}

// consume runs p over s on a connection of its own while it holds the
// pair's advisory lock. It returns active=false when another process holds
// the lock.
func (c *Consumer) consume(ctx context.Context, p Projector, s Source, log *slog.Logger) (active bool, err error) {
	// A dedicated connection, not a pooled one: the session advisory lock
	// belongs to it, and closing it (or its death) releases the lock.
	conn, err := pgx.ConnectConfig(ctx, s.Pool.Config().ConnConfig)
	if err != nil {
		return false, fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if locked, err := lockPair(ctx, conn, p.Name()); err != nil || !locked {
		return false, err
	}
	// The checkpoint's commits need not wait for their WAL flush (6–12 ms
	// a batch under an on-sale's commits, decision 0260): a checkpoint lost
	// in a crash only replays batches, which every projector takes again
	// (at least once), and a prune that read it flushes it with its own
	// commit, so no row is deleted that a lost checkpoint still needs.
	if _, err := conn.Exec(ctx, `SET synchronous_commit = off`); err != nil {
		return true, fmt.Errorf("checkpoint commits: %w", err)
	}
	cp, err := loadCheckpoint(ctx, conn, p.Name())
	if err != nil {
		return true, err
	}
	log.Debug("projector active", "xid", cp.xid, "id", cp.id)
	// saved tells whether cp, the position after the last batch applied,
	// is in the database: it is written with the next look's read, in its
	// round trip (decision 0260), and when the consumer stops.
	saved := true
	defer func() {
		if !saved {
			c.saveOnExit(context.WithoutCancel(ctx), conn, s, p.Name(), cp, log)
		}
	}()
	labels := prometheus.Labels{"projector": p.Name(), "source": s.Name}
	lastStats := time.Time{}
	eager, _ := p.(Eager)
	previewer, _ := p.(Previewer)
	// previewed holds the rows offered to Preview and not yet delivered,
	// by outbox id.
	previewed := map[int64]offer{}
	for {
		// The bell is taken before the read: a commit after it rings it,
		// and one before it is in the read's snapshot.
		var commit <-chan struct{}
		if eager != nil && s.NextCommit != nil {
			commit = s.NextCommit()
		}
		readAt := time.Now()
		l, err := readLook(ctx, conn, s.Name, p.Name(), cp, !saved, c.cfg.Batch, previewer != nil, previewed)
		if err != nil {
			return true, err
		}
		saved = true
		if l.gen != cp.gen {
			// A rebuild reset the checkpoint (another generation, or the
			// row is gone): start over.
			log.Info("checkpoint was reset; replaying from the start")
			if cp, err = loadCheckpoint(ctx, conn, p.Name()); err != nil {
				return true, err
			}
			clear(previewed)
			continue
		}
		batch := l.batch
		c.m.observeRead(labels, batch, time.Now())
		c.m.observeSize(labels, "deliver", len(batch))
		c.m.observeSize(labels, "preview", len(l.ahead))
		at := c.m.observeStep(labels, "read", readAt)
		// The rows ahead of their turn are previewed with the batch, in one
		// call: one read of their seats and one write (decision 0260).
		if len(l.ahead) > 0 {
			shown, err := c.applyPreview(ctx, p, previewer, batch, l.ahead, labels)
			switch {
			case err == nil:
				c.offered(labels, l.ahead, shown, previewed)
			case ctx.Err() != nil:
				return true, ctx.Err()
			default:
				log.Warn("preview failed; the events come in order", "err", err)
				if len(batch) > 0 {
					if err := c.apply(ctx, p, batch, log, labels); err != nil {
						return true, err
					}
				}
			}
			at = c.m.observeStep(labels, "apply_preview", at)
		} else if len(batch) > 0 {
			if err := c.apply(ctx, p, batch, log, labels); err != nil {
				return true, err
			}
			at = c.m.observeStep(labels, "apply", at)
		}
		if len(batch) > 0 {
			last := batch[len(batch)-1]
			c.m.observe(labels, batch, previewed)
			// Saved with the next read, under cp's generation: a rebuild
			// that reset the checkpoint meanwhile keeps its reset, and the
			// read sees its generation and starts over.
			cp, saved = checkpoint{xid: last.XID, id: last.ID, gen: cp.gen}, false
			for id, o := range previewed {
				if o.xid < cp.xid || (o.xid == cp.xid && id <= cp.id) {
					delete(previewed, id)
				}
			}
		}
		full := len(batch) == c.cfg.Batch
		if full && time.Since(lastStats) < time.Second {
			continue // catching up: straight to the next batch
		}
		// The gauges need one more query: at most every second while rows
		// wait (an on-sale), and after each look that may have caught up,
		// so an idle consumer's lag reads 0 at once.
		if !l.waiting || time.Since(lastStats) >= time.Second {
			if err := c.stats(ctx, conn, cp, labels, &lastStats); err != nil {
				return true, err
			}
			c.m.observeStep(labels, "stats", at)
		}
		if full {
			continue
		}
		wait := c.cfg.Poll
		if l.waiting {
			wait = min(wait, 50*time.Millisecond)
		}
		if paced, ok := p.(Paced); ok {
			wait = paced.Pace()
		}
		var gap time.Duration
		if eager != nil {
			gap = eager.BusyPoll()
			if len(batch) > 0 {
				// Events are arriving (an on-sale) for a read model that
				// wants them soon: look again shortly, so an event waits a
				// few milliseconds for its batch, not a poll (decision
				// 0210). Idle, it polls at Poll like the others.
				wait = min(wait, gap)
			}
		}
		// A commit wakes an eager consumer, no sooner than gap after its
		// last read: at once when it was idle or waiting behind a running
		// transaction for a while, every gap while commits pour in
		// (decision 0247).
		at = time.Now()
		pause(ctx, wait, commit, readAt.Add(gap))
		c.m.observeStep(labels, "pause", at)
		if ctx.Err() != nil {
			return true, ctx.Err()
		}
	}
}

// lockPair takes the session advisory lock of projector's consumer in
// conn's database; false: another process has it.
func lockPair(ctx context.Context, conn *pgx.Conn, projector string) (bool, error) {
	var locked bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(hashtextextended('seatghor projector ' || $1, 0))`,
		projector).Scan(&locked); err != nil {
		return false, fmt.Errorf("lock: %w", err)
	}
	return locked, nil
}

// saveOnExit writes the checkpoint of the last batch applied when the
// consumer stops before its next read would have. A stop that interrupted
// a query closed conn, and with it the lock: the checkpoint is then
// written on a new connection only if the lock can be taken again, so it
// never races a consumer that took over. Not saved, the batch is only
// delivered again.
func (c *Consumer) saveOnExit(ctx context.Context, conn *pgx.Conn, s Source, projector string, cp checkpoint, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err := func() error {
		if conn.IsClosed() {
			var err error
			if conn, err = pgx.ConnectConfig(ctx, s.Pool.Config().ConnConfig); err != nil {
				return err
			}
			defer conn.Close(ctx)
			locked, err := lockPair(ctx, conn, projector)
			if err != nil {
				return err
			}
			if !locked {
				return errors.New("another consumer took over")
			}
		}
		_, err := saveCheckpoint(ctx, conn, projector, cp)
		return err
	}()
	if err != nil {
		log.Info("checkpoint of the last batch not saved; it will be delivered again", "err", err)
	}
}

// apply hands a batch to p, retrying with jittered backoff while p fails
// (its store may be down: read models catch up when it returns).
func (c *Consumer) apply(ctx context.Context, p Projector, batch []Event, log *slog.Logger, labels prometheus.Labels) error {
	for attempt := 1; ; attempt++ {
		err := c.traced(ctx, p, batch, nil, attempt, func(ctx context.Context) error { return p.Apply(ctx, batch) })
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		c.m.errors.With(labels).Inc()
		d := backoff(attempt, 100*time.Millisecond, c.cfg.MaxBackoff)
		log.Warn("projector failed a batch; retrying", "err", err, "attempt", attempt, "events", len(batch), "in", d)
		sleep(ctx, d)
	}
}

// applyPreview hands p a batch and the rows ahead of it in one call
// (Previewer), once: on an error the caller applies the batch alone.
func (c *Consumer) applyPreview(ctx context.Context, p Projector, pv Previewer, batch, ahead []Event, labels prometheus.Labels) (shown []Event, err error) {
	err = c.traced(ctx, p, batch, ahead, 1, func(ctx context.Context) error {
		shown, err = pv.ApplyPreview(ctx, batch, ahead)
		return err
	})
	if err != nil && len(batch) > 0 {
		c.m.errors.With(labels).Inc()
	}
	return shown, err
}

// traced is one Apply (run) in a span of its own, so a trace shows what a
// projector spends on a batch (and the Redis or SQL calls under it).
func (c *Consumer) traced(ctx context.Context, p Projector, batch, ahead []Event, attempt int, run func(context.Context) error) error {
	source := ""
	if len(batch) > 0 {
		source = batch[0].Source
	} else if len(ahead) > 0 {
		source = ahead[0].Source
	}
	ctx, span := c.tracer.Start(ctx, "project "+p.Name(), trace.WithAttributes(
		attribute.String("seatghor.projector", p.Name()),
		attribute.String("seatghor.source", source),
		attribute.Int("seatghor.events", len(batch)),
		attribute.Int("seatghor.previewed", len(ahead)),
		attribute.Int("seatghor.attempt", attempt)))
	defer span.End()
	err := run(ctx)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, "apply failed")
	}
	return err
}

type checkpoint struct {
	xid uint64
	id  int64
	// gen is the checkpoint's generation: a rebuild moves it on.
	gen int64
}

func loadCheckpoint(ctx context.Context, conn *pgx.Conn, projector string) (checkpoint, error) {
	if _, err := conn.Exec(ctx, `INSERT INTO projection_checkpoints (projector) VALUES ($1) ON CONFLICT DO NOTHING`,
		projector); err != nil {
		return checkpoint{}, fmt.Errorf("create checkpoint: %w", err)
	}
	var cp checkpoint
	var xid string
	if err := conn.QueryRow(ctx, `SELECT xid::text, id, generation FROM projection_checkpoints WHERE projector = $1`,
		projector).Scan(&xid, &cp.id, &cp.gen); err != nil {
		return cp, fmt.Errorf("read checkpoint: %w", err)
	}
	var err error
	if cp.xid, err = strconv.ParseUint(xid, 10, 64); err != nil {
		return cp, fmt.Errorf("read checkpoint: xid %q: %w", xid, err)
	}
	return cp, nil
}

// saveCheckpointSQL moves projector's checkpoint to ($2 xid, $3 id) if its
// generation is still $4.
const saveCheckpointSQL = `
		UPDATE projection_checkpoints SET xid = $2::text::xid8, id = $3, updated_at = now()
		WHERE projector = $1 AND generation = $4`

// saveCheckpoint moves the checkpoint forward; moved is false when a
// rebuild reset it since it was loaded (its generation is not cp's): the
// batch just applied may predate the rebuild's clear, so the consumer must
// start over rather than keep its position (decision 0090).
func saveCheckpoint(ctx context.Context, conn *pgx.Conn, projector string, cp checkpoint) (moved bool, err error) {
	tag, err := conn.Exec(ctx, saveCheckpointSQL, projector, strconv.FormatUint(cp.xid, 10), cp.id, cp.gen)
	if err != nil {
		return false, fmt.Errorf("save checkpoint: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// look is what one read of the outbox found.
type look struct {
	// batch is the rows after the checkpoint that no running transaction
	// can still precede, in (xid, id) order: every transaction with an
	// xid below the horizon has ended, so no row can later appear before
	// the last one read.
	batch []Event
	// ahead is the committed rows at or above the horizon not offered to
	// Preview yet (decision 0248); only for a Previewer.
	ahead []Event
	// waiting tells that committed rows wait behind a running transaction.
	waiting bool
	// gen is the checkpoint row's generation (-1: the row is gone): a
	// rebuild moved it on (decision 0090).
	gen int64
}

// readLook reads, in one round trip, the next batch in order, the rows
// ahead of it to preview (when preview is set and rows wait behind a
// running transaction), whether rows wait, and the checkpoint's
// generation; with save, it first writes cp as the checkpoint (the last
// look's batch is applied). The batch and the rows ahead come from one
// statement, so one snapshot and one horizon part them (decision 0260).
//
// The ORDER BY names the table's columns: a bare "xid" would mean the
// output column xid::text and sort as text, "1000" before "945", which
// skipped every row between such a pair once xids gained a digit.
func readLook(ctx context.Context, conn *pgx.Conn, source, projector string, cp checkpoint, save bool, limit int, preview bool, previewed map[int64]offer) (look, error) {
	seen := make([]int64, 0, len(previewed))
	for id := range previewed {
		seen = append(seen, id)
	}
	xid := strconv.FormatUint(cp.xid, 10)
	l := look{gen: -1}
	// Rows wait when the newest row after the checkpoint is at or above
	// the horizon: max, one step of a backward index scan, because an
	// EXISTS gets a generic plan that scans the whole outbox.
	b := &pgx.Batch{}
	if save {
		b.Queue(saveCheckpointSQL, projector, xid, cp.id, cp.gen)
	}
	b.Queue(`
		WITH h(x) AS MATERIALIZED (`+horizonSQL+`)
		SELECT coalesce((SELECT generation FROM projection_checkpoints WHERE projector = $3), -1),
		       coalesce((SELECT max(o.xid) FROM outbox o WHERE (o.xid, o.id) > ($1::text::xid8, $2)) >= (SELECT x FROM h), false)`,
		xid, cp.id, projector).QueryRow(func(r pgx.Row) error {
		return r.Scan(&l.gen, &l.waiting)
	})
	var rows []Event
	b.Queue(`
		WITH h(x) AS MATERIALIZED (`+horizonSQL+`),
		below AS (
			SELECT o.* FROM outbox o
			WHERE (o.xid, o.id) > ($1::text::xid8, $2) AND o.xid < (SELECT x FROM h)
			ORDER BY o.xid, o.id
			LIMIT $3
		), ahead AS (
			SELECT o.* FROM outbox o
			WHERE $4 AND (o.xid, o.id) > ($1::text::xid8, $2) AND o.xid >= (SELECT x FROM h)
			  AND o.id <> ALL ($5::bigint[])
			ORDER BY o.xid, o.id
			LIMIT $3
		)
		SELECT `+eventColumns+`, o.in_order
		FROM (SELECT b.*, true AS in_order FROM below b UNION ALL SELECT a.*, false FROM ahead a) o
		ORDER BY o.in_order DESC, o.xid, o.id`,
		xid, cp.id, limit, preview, seen).Query(func(r pgx.Rows) error {
		var err error
		rows, err = collectEvents(r, source, &l.ahead)
		return err
	})
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		return l, fmt.Errorf("read outbox: %w", err)
	}
	l.batch = rows
	return l, nil
}

// eventColumns are the columns collectEvents scans, of the outbox as o,
// followed by a boolean in_order.
const eventColumns = `o.id, o.xid::text AS xid_text, o.show_id, o.event_id, o.event_type, o.payload, o.occurred_at,
		       coalesce(o.recorded_at, o.occurred_at)`

// collectEvents scans rows of eventColumns and in_order: it returns the
// rows in order and appends the others to ahead.
func collectEvents(rows pgx.Rows, source string, ahead *[]Event) ([]Event, error) {
	var in []Event
	var xid string
	var inOrder bool
	for rows.Next() {
		e := Event{Source: source}
		if err := rows.Scan(&e.ID, &xid, &e.ShowID, &e.EventID, &e.Type, &e.Payload, &e.OccurredAt, &e.RecordedAt, &inOrder); err != nil {
			return nil, err
		}
		var err error
		if e.XID, err = strconv.ParseUint(xid, 10, 64); err != nil {
			return nil, err
		}
		if inOrder {
			in = append(in, e)
		} else {
			*ahead = append(*ahead, e)
		}
	}
	return in, rows.Err()
}

// offered records the rows offered to Preview, and counts the delay of
// those it showed now: they are in the read model from here on.
func (c *Consumer) offered(labels prometheus.Labels, ahead, shown []Event, previewed map[int64]offer) {
	for _, e := range ahead {
		previewed[e.ID] = offer{xid: e.XID}
	}
	for _, e := range shown {
		previewed[e.ID] = offer{xid: e.XID, shown: true}
	}
	c.m.observePreview(labels, shown)
}

// horizonSQL is the xid below which this statement may read the outbox:
// the oldest transaction its snapshot does not see that may have written
// here, else the snapshot's xmax. That is pg_snapshot_xmin, except that a
// transaction still running in another database of the cluster is left out:
// it cannot write this outbox, and on a shared server another database's
// long transaction (a DROP DATABASE of a test, a report) held every
// projector back by seconds (decision 0212). A transaction that has ended by
// the time pg_stat_activity is read, or whose database is not shown (a role
// without pg_read_all_stats sees no other role's xids), still counts.
const horizonSQL = `
		SELECT coalesce((
			SELECT min(x) FROM pg_snapshot_xip(s.snap) AS x
			WHERE NOT EXISTS (
				SELECT FROM pg_stat_activity a
				WHERE a.backend_xid = xid(x) AND a.datname IS DISTINCT FROM current_database())
		), pg_snapshot_xmax(s.snap))
		FROM (SELECT pg_current_snapshot() AS snap) s`

// stats updates the backlog and lag gauges.
func (c *Consumer) stats(ctx context.Context, conn *pgx.Conn, cp checkpoint, labels prometheus.Labels, last *time.Time) error {
	var n int64
	var oldest *time.Time
	err := conn.QueryRow(ctx, `
		SELECT count(*), min(coalesce(recorded_at, occurred_at))
		FROM outbox
		WHERE (xid, id) > ($1::text::xid8, $2)`, strconv.FormatUint(cp.xid, 10), cp.id).Scan(&n, &oldest)
	if err != nil {
		return fmt.Errorf("outbox backlog: %w", err)
	}
	*last = time.Now()
	c.m.backlog.With(labels).Set(float64(n))
	lag := 0.0
	if oldest != nil {
		lag = max(time.Since(*oldest).Seconds(), 0)
	}
	c.m.lag.With(labels).Set(lag)
	return nil
}

// backoff is a full-jitter exponential backoff: random in [0, base·2^(n-1)]
// capped at limit, so restarted consumers do not retry in step.
func backoff(attempt int, base, limit time.Duration) time.Duration {
	d := base << min(attempt-1, 20)
	if d <= 0 || d > limit {
		d = limit
	}
	return time.Duration(rand.Int64N(int64(d))) + time.Millisecond
}

// pause sleeps d, or until commit is closed and then until earliest,
// whichever ends first (a nil commit never wakes it).
func pause(ctx context.Context, d time.Duration, commit <-chan struct{}, earliest time.Time) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	case <-commit:
		if wait := time.Until(earliest); wait > 0 {
			select {
			case <-ctx.Done():
			case <-t.C:
			case <-time.After(wait):
			}
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
