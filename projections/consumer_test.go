package projections_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/internal/testkit/pgtest"
	"github.com/seatghor/seatghor/projections"
	"github.com/seatghor/seatghor/server/migrations"
	"github.com/seatghor/seatghor/server/pg"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Cleanup()
	os.Exit(code)
}

// insertEvents commits outbox rows e<from> … e<to-1>, one transaction each.
func insertEvents(t *testing.T, db *pgxpool.Pool, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		_, err := db.Exec(context.Background(), insertSQL, fmt.Sprint("e", i))
		require.NoError(t, err)
	}
}

// shardDB returns a pool on a fresh, migrated shard database.
func shardDB(t *testing.T) *pgxpool.Pool {
	t.Helper()
	admin := pgtest.Server(t)
	hash, err := migrations.Hash(migrations.Shard)
	require.NoError(t, err)
	tpl := admin.Template(t, string(migrations.Shard), hash, func(ctx context.Context, url string) error {
		return migrations.UpURL(ctx, url, migrations.Shard)
	})
	pool, err := pgxpool.New(context.Background(), admin.Fresh(t, tpl))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}

// recorder is a projector that keeps what it was given.
type recorder struct {
	name string
	mu   sync.Mutex
	got  []string
	// failFirst makes the first n Apply calls fail.
	failFirst int
	calls     int
	resets    int
}

func (r *recorder) Name() string { return r.name }

func (r *recorder) Apply(_ context.Context, events []projections.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if r.calls <= r.failFirst {
		return errors.New("sink down")
	}
	for _, e := range events {
		r.got = append(r.got, e.EventID)
	}
	return nil
}

func (r *recorder) Reset(context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.resets++
	r.got = nil
	return nil
}

func (r *recorder) events() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

const insertSQL = `INSERT INTO outbox (show_id, event_id, event_type, payload, occurred_at)
	VALUES (1, $1, 'test.Event', '', now())`

func run(t *testing.T, c *projections.Consumer) context.CancelFunc {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return cancel
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	// Generous: the xid horizon is cluster-wide, so other tests' open
	// transactions on a loaded machine can hold delivery back for a while.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// TestOutOfOrderCommitIsNotSkipped: a transaction that wrote its outbox row
// first but commits last is delivered, and before the rows of the
// transactions that started after it (docs/DESIGN.md, "The outbox has no gaps").
// A consumer reading `id > last_id` would deliver B and C, move past A's id
// and never deliver A.
func TestOutOfOrderCommitIsNotSkipped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := shardDB(t)

	slow, err := db.Begin(ctx)
	require.NoError(t, err)
	defer slow.Rollback(ctx) //nolint:errcheck
	_, err = slow.Exec(ctx, insertSQL, "A")
	require.NoError(t, err)
	for _, id := range []string{"B", "C"} {
		_, err := db.Exec(ctx, insertSQL, id)
		require.NoError(t, err)
	}

	rec := &recorder{name: "rec"}
	reg := prometheus.NewRegistry()
	c, err := projections.NewConsumer([]projections.Source{{Name: "shard-0", Pool: db}}, []projections.Projector{rec},
		projections.Config{Poll: 20 * time.Millisecond, Registerer: reg})
	require.NoError(t, err)
	run(t, c)

	// Once the consumer has looked (the backlog gauge counts B and C, which
	// are committed and wait behind A), it must still have delivered nothing.
	waitFor(t, "the consumer to see B and C", func() bool {
		return gauge(t, reg, "seatghor_projector_backlog_events") == 2
	})
	time.Sleep(100 * time.Millisecond) // a few more polls
	require.Empty(t, rec.events(), "nothing may be delivered past a running transaction's row")

	require.NoError(t, slow.Commit(ctx))
	waitFor(t, "A, B and C", func() bool { return len(rec.events()) == 3 })
	require.Equal(t, []string{"A", "B", "C"}, rec.events())

	// The checkpoint becomes the last (xid, id) delivered.
	waitCheckpoint(t, db, "rec", "C")
	waitFor(t, "the events counter", func() bool { return gauge(t, reg, "seatghor_projector_events_total") == 3 })
	waitFor(t, "the backlog gauge", func() bool { return gauge(t, reg, "seatghor_projector_backlog_events") == 0 })
}

// waitCheckpoint waits until projector's checkpoint is the outbox row
// with eventID.
func waitCheckpoint(t *testing.T, db *pgxpool.Pool, projector, eventID string) {
	t.Helper()
	waitFor(t, projector+"'s checkpoint at "+eventID, func() bool {
		var at bool
		require.NoError(t, db.QueryRow(context.Background(), `
			SELECT EXISTS (SELECT FROM projection_checkpoints c JOIN outbox o ON (o.xid, o.id) = (c.xid, c.id)
			               WHERE c.projector = $1 AND o.event_id = $2)`, projector, eventID).Scan(&at))
		return at
	})
}

// gauge reads the one series of a gauge or counter from reg.
func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == name {
			m := mf.GetMetric()[0]
			if m.GetGauge() != nil {
				return m.GetGauge().GetValue()
			}
			return m.GetCounter().GetValue()
		}
	}
	return -1
}

// TestManyInterleavedTransactions: many writers, some slow, commit in any
// order; every row is delivered exactly once to a sink that never fails.
func TestManyInterleavedTransactions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := shardDB(t)
	rec := &recorder{name: "rec"}
	c, err := projections.NewConsumer([]projections.Source{{Name: "shard-0", Pool: db}}, []projections.Projector{rec},
		projections.Config{Batch: 7})
	require.NoError(t, err)
	run(t, c)

	var wg sync.WaitGroup
	const writers, each = 8, 25
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				tx, err := db.Begin(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				_, err = tx.Exec(ctx, insertSQL, fmt.Sprintf("w%d-%d", w, i))
				if err == nil && i%5 == 0 {
					time.Sleep(time.Duration(w+1) * 3 * time.Millisecond) // hold it open while others commit
				}
				if err == nil {
					err = tx.Commit(ctx)
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	waitFor(t, "every row", func() bool { return len(rec.events()) >= writers*each })
	got := rec.events()
	slices.Sort(got)
	require.Len(t, slices.Compact(got), writers*each, "no row skipped or delivered twice")
}

// TestDeliversWithinThePoll: a caught-up consumer picks up a new row
// within its short poll (the idle lag bound).
func TestDeliversWithinThePoll(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := shardDB(t)
	rec := &recorder{name: "rec"}
	c, err := projections.NewConsumer([]projections.Source{{Name: "shard-0", Pool: db}}, []projections.Projector{rec},
		projections.Config{})
	require.NoError(t, err)
	run(t, c)
	time.Sleep(200 * time.Millisecond) // let it go idle
	start := time.Now()
	_, err = db.Exec(ctx, insertSQL, "N")
	require.NoError(t, err)
	waitFor(t, "the new row", func() bool { return len(rec.events()) == 1 })
	// Reported, not asserted (speed is measured, never a timed assertion):
	// the xid horizon is cluster-wide, and parallel tests hold transactions
	// open.
	t.Logf("delivered %v after the commit", time.Since(start))
}

// TestFailingSinkRetriesAndRestartLosesNothing: a failing sink is retried
// without moving the checkpoint; a consumer stopped and started again goes
// on from its checkpoint; nothing is lost.
func TestFailingSinkRetriesAndRestartLosesNothing(t *testing.T) {
	t.Parallel()
	db := shardDB(t)
	insertEvents(t, db, 0, 5)
	rec := &recorder{name: "rec", failFirst: 3}
	src := []projections.Source{{Name: "shard-0", Pool: db}}
	c, err := projections.NewConsumer(src, []projections.Projector{rec}, projections.Config{MaxBackoff: 50 * time.Millisecond})
	require.NoError(t, err)
	stop := run(t, c)
	waitFor(t, "the first rows", func() bool { return len(rec.events()) == 5 })
	stop()
	time.Sleep(50 * time.Millisecond)

	insertEvents(t, db, 5, 10)
	c2, err := projections.NewConsumer(src, []projections.Projector{rec}, projections.Config{})
	require.NoError(t, err)
	run(t, c2)
	// At least once: a batch applied just before the stop may come again.
	distinct := func() []string {
		got := rec.events()
		slices.Sort(got)
		return slices.Compact(got)
	}
	waitFor(t, "the rest", func() bool { return len(distinct()) == 10 })
	require.Equal(t, []string{"e0", "e1", "e2", "e3", "e4", "e5", "e6", "e7", "e8", "e9"}, distinct())
}

// TestOneActiveInstance: two consumers (two processes' worth) of one
// projector and source: one holds the advisory lock and delivers; the other
// takes over when the first stops.
func TestOneActiveInstance(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := shardDB(t)
	src := []projections.Source{{Name: "shard-0", Pool: db}}
	a, b := &recorder{name: "rec"}, &recorder{name: "rec"}
	ca, err := projections.NewConsumer(src, []projections.Projector{a}, projections.Config{})
	require.NoError(t, err)
	stopA := run(t, ca)
	// A is active once it has delivered something: only then start B, so
	// the test does not depend on who is scheduled first.
	_, err = db.Exec(ctx, insertSQL, "warm-up")
	require.NoError(t, err)
	waitFor(t, "A to be active", func() bool { return len(a.events()) == 1 })
	cb, err := projections.NewConsumer(src, []projections.Projector{b}, projections.Config{})
	require.NoError(t, err)
	run(t, cb)
	time.Sleep(200 * time.Millisecond) // B tries, and must stay passive
	insertEvents(t, db, 0, 20)
	waitFor(t, "delivery", func() bool { return len(a.events()) == 21 })
	require.Empty(t, b.events(), "the second instance must stay passive")
	// A saves a batch's checkpoint before its next read; stopped before
	// then, the batch is only delivered again (at least once) and the
	// takeover would start before it: wait for the save.
	waitFor(t, "A's checkpoint", func() bool {
		var saved, last int64
		require.NoError(t, db.QueryRow(ctx, `
			SELECT (SELECT id FROM projection_checkpoints WHERE projector = 'rec'), (SELECT max(id) FROM outbox)`).Scan(&saved, &last))
		return saved == last
	})

	stopA()
	_, err = db.Exec(ctx, insertSQL, "after")
	require.NoError(t, err)
	waitFor(t, "the takeover", func() bool { return slices.Contains(b.events(), "after") })
	require.NotContains(t, b.events(), "e0", "the takeover starts at the checkpoint")
}

// TestRebuildReplaysFromScratch: Rebuild resets the read model and the
// checkpoint; a running consumer replays every row.
func TestRebuildReplaysFromScratch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := shardDB(t)
	insertEvents(t, db, 0, 3)
	rec := &recorder{name: "rec"}
	c, err := projections.NewConsumer([]projections.Source{{Name: "shard-0", Pool: db}}, []projections.Projector{rec},
		projections.Config{Poll: 20 * time.Millisecond})
	require.NoError(t, err)
	run(t, c)
	waitFor(t, "the rows", func() bool { return len(rec.events()) == 3 })
	require.NoError(t, c.Rebuild(ctx, "rec"))
	_, err = db.Exec(ctx, insertSQL, "e3") // wakes it
	require.NoError(t, err)
	waitFor(t, "the replay", func() bool {
		got := rec.events()
		return len(got) >= 4 && slices.Equal(got[len(got)-4:], []string{"e0", "e1", "e2", "e3"})
	})
	require.Equal(t, 1, rec.resets)
	require.Error(t, c.Rebuild(ctx, "nope"))
}

// TestPruneOnlyBelowEveryCheckpoint: rows go only when every named
// projector has passed them.
func TestPruneOnlyBelowEveryCheckpoint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, c := fourRows(t)
	future := time.Now().Add(time.Hour)
	n, err := c.Prune(ctx, []string{"rec"}, future)
	require.NoError(t, err)
	require.Zero(t, n, "no checkpoint yet: nothing goes")

	run(t, c)
	// The recorder sees a batch before its checkpoint commits; pruning
	// counts the checkpoint.
	waitCheckpoint(t, db, "rec", "e3")
	n, err = c.Prune(ctx, []string{"rec", "other"}, future)
	require.NoError(t, err)
	require.Zero(t, n, "a projector without a checkpoint keeps everything")

	_, err = db.Exec(ctx, `INSERT INTO projection_checkpoints (projector, xid, id)
		SELECT 'other', xid, id FROM outbox WHERE event_id = 'e1'`)
	require.NoError(t, err)
	n, err = c.Prune(ctx, []string{"rec", "other"}, future)
	require.NoError(t, err)
	require.EqualValues(t, 2, n, "e0 and e1 are below both checkpoints")
	n, err = c.Prune(ctx, []string{"rec"}, time.Now().Add(-time.Hour))
	require.NoError(t, err)
	require.Zero(t, n, "younger than the retention")
}

// TestPrunerKeepsWhatAnotherProcessNeeds: the workers' pruner counts every
// projector with a checkpoint in the database, not only its own, so rows a
// projector of another process has not read stay.
func TestPrunerKeepsWhatAnotherProcessNeeds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, c := fourRows(t)
	run(t, c)
	// The recorder sees a batch before its checkpoint commits; pruning
	// counts the checkpoint.
	waitCheckpoint(t, db, "rec", "e3")
	// Another process's projector has read up to e1 only.
	_, err := db.Exec(ctx, `INSERT INTO projection_checkpoints (projector, xid, id)
		SELECT 'elsewhere', xid, id FROM outbox WHERE event_id = 'e1'`)
	require.NoError(t, err)

	pctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { c.RunPruner(pctx, 10*time.Millisecond, 0); close(done) }()
	var left []string
	waitFor(t, "the pruner", func() bool {
		rows, err := db.Query(ctx, `SELECT event_id FROM outbox ORDER BY xid, id`)
		require.NoError(t, err)
		left, err = pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		return len(left) == 2
	})
	stop()
	<-done
	require.Equal(t, []string{"e2", "e3"}, left, "only what both projectors have passed is gone")
}

// TestOrderAcrossAnXidDigit: rows are delivered in xid order as numbers,
// also where xids gain a digit (999 → 1000, …). Sorting them as text once
// put "1000" before "945" and skipped every row in between. The rows here
// carry chosen xids on both sides of a boundary, written in the wrong order.
func TestOrderAcrossAnXidDigit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := shardDB(t)
	// xids far below any running transaction's: all final, all deliverable.
	for _, x := range []string{"1000", "99", "100", "9", "10", "999"} {
		_, err := db.Exec(ctx, `INSERT INTO outbox (xid, show_id, event_id, event_type, payload, occurred_at)
			VALUES ($1::text::xid8, 1, 'x' || $1, 'test.Event', '', now())`, x)
		require.NoError(t, err)
	}
	rec := &recorder{name: "rec"}
	c, err := projections.NewConsumer([]projections.Source{{Name: "shard-0", Pool: db}}, []projections.Projector{rec},
		projections.Config{Batch: 2})
	require.NoError(t, err)
	run(t, c)
	waitFor(t, "every row", func() bool { return len(rec.events()) == 6 })
	require.Equal(t, []string{"x9", "x10", "x99", "x100", "x999", "x1000"}, rec.events(), "numeric xid order, nothing skipped")
}

// fourRows is a shard database with outbox rows e0…e3 and a consumer (not
// running yet) with one recorder.
func fourRows(t *testing.T) (*pgxpool.Pool, *projections.Consumer) {
	t.Helper()
	db := shardDB(t)
	insertEvents(t, db, 0, 4)
	rec := &recorder{name: "rec"}
	c, err := projections.NewConsumer([]projections.Source{{Name: "shard-0", Pool: db}}, []projections.Projector{rec},
		projections.Config{})
	require.NoError(t, err)
	return db, c
}

// slowReset is a recorder whose Reset waits until released, as a large read
// model takes a while to clear.
type slowReset struct {
	*recorder
	entered, release chan struct{}
}

func (r *slowReset) Reset(ctx context.Context) error {
	close(r.entered)
	<-r.release
	return r.recorder.Reset(ctx)
}

// TestRebuildKeepsWhatIsAppliedWhileItClears (decision 0090): a consumer
// goes on applying batches while a rebuild clears the read model; after the
// rebuild the model holds every row, those applied during the clear too.
// (Resetting the checkpoint before the clear lost them: the consumer
// replayed from the start, the clear wiped that, and the checkpoint stayed
// past it.)
func TestRebuildKeepsWhatIsAppliedWhileItClears(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := shardDB(t)
	insertEvents(t, db, 0, 3)
	rec := &slowReset{recorder: &recorder{name: "rec"}, entered: make(chan struct{}), release: make(chan struct{})}
	c, err := projections.NewConsumer([]projections.Source{{Name: "shard-0", Pool: db}}, []projections.Projector{rec},
		projections.Config{Poll: 5 * time.Millisecond})
	require.NoError(t, err)
	run(t, c)
	waitFor(t, "the rows", func() bool { return len(rec.events()) == 3 })

	rebuilt := make(chan error, 1)
	go func() { rebuilt <- c.Rebuild(ctx, "rec") }()
	<-rec.entered
	_, err = db.Exec(ctx, insertSQL, "e3")
	require.NoError(t, err)
	waitFor(t, "e3, applied while the model is cleared", func() bool { return slices.Contains(rec.events(), "e3") })
	close(rec.release)
	require.NoError(t, <-rebuilt)

	_, err = db.Exec(ctx, insertSQL, "e4")
	require.NoError(t, err)
	all := []string{"e0", "e1", "e2", "e3", "e4"}
	waitFor(t, "every row in the rebuilt model", func() bool {
		got := rec.events()
		slices.Sort(got)
		return slices.Equal(slices.Compact(got), all)
	})
}

// TestPrunerKeepsWhatARebuildNeeds (decision 0090): once a projector is
// rebuilt, the pruner of a process that does not run it keeps every row the
// replay needs, even before any consumer of that projector has looked again;
// the replay then gets every row.
func TestPrunerKeepsWhatARebuildNeeds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, c := fourRows(t)
	stop := run(t, c)
	waitCheckpoint(t, db, "rec", "e3")
	stop() // the rebuilt projector's consumers are down, or slow
	// Another process's projector has read everything.
	_, err := db.Exec(ctx, `INSERT INTO projection_checkpoints (projector, xid, id)
		SELECT 'other', xid, id FROM outbox WHERE event_id = 'e3'`)
	require.NoError(t, err)
	require.NoError(t, c.Rebuild(ctx, "rec"))

	// The workers of a process that runs only "other" prune this database
	// and then a second one, whose rows every projector has passed: once
	// those are gone, the pruner has been over this one too.
	second := shardDB(t)
	_, err = second.Exec(ctx, insertSQL, "s0")
	require.NoError(t, err)
	_, err = second.Exec(ctx, `INSERT INTO projection_checkpoints (projector, xid, id)
		SELECT 'other', xid, id FROM outbox WHERE event_id = 's0'`)
	require.NoError(t, err)
	pruner, err := projections.NewConsumer([]projections.Source{{Name: "shard-0", Pool: db}, {Name: "shard-1", Pool: second}},
		[]projections.Projector{&recorder{name: "other"}}, projections.Config{})
	require.NoError(t, err)
	pctx, stopPruner := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { pruner.RunPruner(pctx, 10*time.Millisecond, 0); close(done) }()
	waitFor(t, "the pruner", func() bool {
		var n int
		require.NoError(t, second.QueryRow(ctx, `SELECT count(*) FROM outbox`).Scan(&n))
		return n == 0
	})
	stopPruner()
	<-done
	rows, err := db.Query(ctx, `SELECT event_id FROM outbox ORDER BY xid, id`)
	require.NoError(t, err)
	left, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Equal(t, []string{"e0", "e1", "e2", "e3"}, left, "the rebuild still needs every row")

	// The replay gets them all.
	again := &recorder{name: "rec"}
	c2, err := projections.NewConsumer([]projections.Source{{Name: "shard-0", Pool: db}}, []projections.Projector{again},
		projections.Config{})
	require.NoError(t, err)
	run(t, c2)
	waitFor(t, "the replay", func() bool { return len(again.events()) == 4 })
	require.Equal(t, []string{"e0", "e1", "e2", "e3"}, again.events())
}

// TestOtherDatabasesDoNotHoldTheOutboxBack (decision 0212): a transaction
// running in another database of the cluster cannot write this outbox, so
// rows committed after it began are delivered while it still runs; a
// running transaction of this database still holds them back
// (TestOutOfOrderCommitIsNotSkipped).
func TestOtherDatabasesDoNotHoldTheOutboxBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, other := shardDB(t), shardDB(t)

	long, err := other.Begin(ctx)
	require.NoError(t, err)
	defer long.Rollback(ctx) //nolint:errcheck
	// It takes an xid, older than the rows below.
	_, err = long.Exec(ctx, `SELECT pg_current_xact_id()`)
	require.NoError(t, err)
	for _, id := range []string{"A", "B"} {
		_, err := db.Exec(ctx, insertSQL, id)
		require.NoError(t, err)
	}

	rec := &recorder{name: "rec"}
	c, err := projections.NewConsumer([]projections.Source{{Name: "shard-0", Pool: db}}, []projections.Projector{rec},
		projections.Config{Poll: 20 * time.Millisecond})
	require.NoError(t, err)
	run(t, c)
	waitFor(t, "A and B while the other database's transaction runs", func() bool { return len(rec.events()) == 2 })
	require.Equal(t, []string{"A", "B"}, rec.events())
}

// eager is a recorder whose consumer looks again soon while busy and is
// woken by commits (projections.Eager).
type eager struct{ recorder }

func (*eager) BusyPoll() time.Duration { return time.Millisecond }

// TestCommitWakesAnEagerConsumer: a commit through the process's pool wakes
// an eager consumer, so its event is applied without waiting for the poll
// (decision 0247). The poll is an hour: only the commit can wake it.
func TestCommitWakesAnEagerConsumer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := shardDB(t)
	pool, err := pg.Open(ctx, "shard-0", db.Config().ConnString(), 2)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	commit := func(id string) {
		require.NoError(t, pg.InTx(ctx, pool, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, insertSQL, id)
			return err
		}))
	}
	commit("before")
	rec := &eager{recorder{name: "rec"}}
	c, err := projections.NewConsumer(
		[]projections.Source{{Name: "shard-0", Pool: pool.Pool, NextCommit: pool.NextCommit}},
		[]projections.Projector{rec}, projections.Config{Poll: time.Hour})
	require.NoError(t, err)
	run(t, c)
	waitFor(t, "the first row", func() bool { return len(rec.events()) == 1 })
	// It now reads once more (BusyPoll after a batch), finds nothing and
	// waits for the hour's poll or a commit. Each commit below wakes it.
	for i := range 3 {
		id := fmt.Sprint("after-", i)
		commit(id)
		waitFor(t, id, func() bool { return slices.Contains(rec.events(), id) })
	}
	require.Equal(t, []string{"before", "after-0", "after-1", "after-2"}, rec.events())
}

// paced is a recorder whose consumer reads at most every pace
// (projections.Paced), counting its batches.
type paced struct {
	recorder
	pace time.Duration
}

func (p *paced) Pace() time.Duration { return p.pace }

// TestPacedConsumerDeliversEverythingInOrder: pacing (decision 0246) skips
// the short look-again behind a running transaction, and still delivers
// every row once, in (xid, id) order, the late committer first.
func TestPacedConsumerDeliversEverythingInOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := shardDB(t)
	rec := &paced{recorder: recorder{name: "rec"}, pace: 20 * time.Millisecond}
	c, err := projections.NewConsumer([]projections.Source{{Name: "shard-0", Pool: db}}, []projections.Projector{rec},
		projections.Config{Poll: time.Hour})
	require.NoError(t, err)
	run(t, c)
	late, err := db.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = late.Rollback(ctx) }()
	_, err = late.Exec(ctx, insertSQL, "late")
	require.NoError(t, err)
	insertEvents(t, db, 0, 20)
	time.Sleep(100 * time.Millisecond) // several paces: nothing passes "late"
	require.Empty(t, rec.events())
	require.NoError(t, late.Commit(ctx))
	insertEvents(t, db, 20, 40)
	waitFor(t, "every row", func() bool { return len(rec.events()) == 41 })
	want := []string{"late"}
	for i := range 40 {
		want = append(want, fmt.Sprint("e", i))
	}
	require.Equal(t, want, rec.events())
}

// TestRecordedAtIsTheInsertsClock: a row written without recorded_at (as
// before decision 0245) has it from the column's default, the INSERT's
// clock_timestamp(), not the occurred_at the writer chose.
func TestRecordedAtIsTheInsertsClock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := shardDB(t)
	_, err := db.Exec(ctx, `INSERT INTO outbox (show_id, event_id, event_type, payload, occurred_at)
		VALUES (1, 'old', 'test.Event', '', now() - interval '1 hour')`)
	require.NoError(t, err)
	var gap time.Duration
	require.NoError(t, db.QueryRow(ctx, `SELECT recorded_at - occurred_at FROM outbox WHERE event_id = 'old'`).Scan(&gap))
	require.GreaterOrEqual(t, gap, time.Hour)
}

// previewer is a recorder that also keeps what it was shown ahead of its
// turn (projections.Previewer).
type previewer struct {
	recorder
	mu    sync.Mutex
	ahead []string
}

func (p *previewer) ApplyPreview(ctx context.Context, batch, ahead []projections.Event) ([]projections.Event, error) {
	if len(batch) > 0 {
		if err := p.Apply(ctx, batch); err != nil {
			return nil, err
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range ahead {
		p.ahead = append(p.ahead, e.EventID)
	}
	return ahead, nil
}

func (p *previewer) previewed() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.ahead)
}

// TestPreviewShowsCommittedRowsBehindARunningTransaction: while a
// transaction that wrote first is still open, the rows committed after it
// are previewed (each once, decision 0248) but not delivered; once it
// commits, everything is delivered in (xid, id) order as before.
func TestPreviewShowsCommittedRowsBehindARunningTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := shardDB(t)
	rec := &previewer{recorder: recorder{name: "rec"}}
	c, err := projections.NewConsumer([]projections.Source{{Name: "shard-0", Pool: db}}, []projections.Projector{rec},
		projections.Config{Poll: 10 * time.Millisecond})
	require.NoError(t, err)
	run(t, c)
	late, err := db.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = late.Rollback(ctx) }()
	_, err = late.Exec(ctx, insertSQL, "late")
	require.NoError(t, err)
	insertEvents(t, db, 0, 3)
	waitFor(t, "the committed rows previewed", func() bool { return len(rec.previewed()) == 3 })
	insertEvents(t, db, 3, 5)
	waitFor(t, "the next rows previewed", func() bool { return len(rec.previewed()) == 5 })
	require.Empty(t, rec.events(), "nothing passes the running transaction")
	require.NoError(t, late.Commit(ctx))
	waitFor(t, "every row", func() bool { return len(rec.events()) == 6 })
	require.Equal(t, []string{"late", "e0", "e1", "e2", "e3", "e4"}, rec.events())
	require.Equal(t, []string{"e0", "e1", "e2", "e3", "e4"}, rec.previewed(), "each previewed once, the open one never")
}

// TestBehindCountsOnlyWhatCameBefore: Behind counts the rows written before
// a time that a projector has not applied; rows written later do not count,
// so a read model that caught up with what came before an outage reads 0
// while the load goes on.
func TestBehindCountsOnlyWhatCameBefore(t *testing.T) {
	t.Parallel()
	db := shardDB(t)
	insertEvents(t, db, 0, 3)
	var cut time.Time
	require.NoError(t, db.QueryRow(context.Background(), `SELECT clock_timestamp()`).Scan(&cut))
	insertEvents(t, db, 3, 5)
	rec := &recorder{name: "rec", failFirst: 1 << 30} // applies nothing yet
	src := []projections.Source{{Name: "shard-0", Pool: db}}
	c, err := projections.NewConsumer(src, []projections.Projector{rec}, projections.Config{MaxBackoff: 20 * time.Millisecond})
	require.NoError(t, err)
	ctx := context.Background()
	n, err := c.Behind(ctx, "rec", cut)
	require.NoError(t, err)
	require.EqualValues(t, 3, n, "e0 to e2 came before the cut")

	rec.mu.Lock()
	rec.failFirst = 0
	rec.mu.Unlock()
	run(t, c)
	waitFor(t, "the rows", func() bool { return len(rec.events()) == 5 })
	waitFor(t, "the checkpoint", func() bool {
		n, err := c.Behind(ctx, "rec", time.Now().Add(time.Hour))
		require.NoError(t, err)
		return n == 0
	})
	insertEvents(t, db, 5, 6) // after the cut: not counted
	n, err = c.Behind(ctx, "rec", cut)
	require.NoError(t, err)
	require.Zero(t, n)
}
