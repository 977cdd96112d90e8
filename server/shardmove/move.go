// Package shardmove moves one show, online, from its shard to another
// (R-4.2, R-12; decision 0205): it copies the show's rows while the show
// sells, catches up on what changed meanwhile, freezes the show's writes for
// a short window to copy the last changes, flips the catalog's directory,
// and deletes the rows from the old shard. Writes during the window fail
// with the retryable SHOW_MOVING and are retried against the new shard, so
// nothing is lost and nothing is written twice.
package shardmove

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/shard"
)

// Report says what a move did.
type Report struct {
	ShowID   int64
	From, To int
	// Copied counts the rows written on the new shard over all passes
	// (the same row may count once per pass it changed in).
	Copied int
	// Passes is the number of copy passes before the freeze.
	Passes int
	// Freeze is how long the show's writes were refused: from freezing it
	// on the old shard to the directory naming the new one.
	Freeze time.Duration
	// Deleted counts the rows removed from the old shard.
	Deleted int
	// Leftovers counts the rows an earlier move, its mover dead, left on
	// shards other than the directory's, deleted before this one began.
	Leftovers int
}

// ErrSameShard refuses a move to the shard the show is on.
var ErrSameShard = errors.New("the show is already on that shard")

// ErrBusy refuses a move onto a shard that serves the show already, or from
// a shard where the show is not active (another move is running).
var ErrBusy = errors.New("the show is being moved or is already there")

// Options tune a move.
type Options struct {
	// MaxPasses bounds the copy passes before the freeze; default 5.
	MaxPasses int
	// SettledRows ends the passes early once one copied at most this many
	// rows, so the frozen pass is short; default 100.
	SettledRows int
	// Grace is how long the old shard keeps the moved show's rows after the
	// flip, refusing their writes, before they are deleted; default 2 s. A
	// request in flight that resolved the old shard before the flip then
	// still reads its rows and fails its write with SHOW_MOVING, which its
	// caller retries on the new shard, instead of finding nothing.
	Grace time.Duration
	Log   *slog.Logger
	// stepHook, set by tests, runs after each step of a move (Step*).
	stepHook func(step string)
}

// Mover moves shows between the router's shards.
type Mover struct {
	router *shard.Router
	opts   Options
}

// New returns a mover over the router's catalog and shards.
func New(router *shard.Router, opts Options) *Mover {
	if opts.MaxPasses <= 0 {
		opts.MaxPasses = 5
	}
	if opts.SettledRows <= 0 {
		opts.SettledRows = 100
	}
	if opts.Grace <= 0 {
		opts.Grace = 2 * time.Second
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	return &Mover{router: router, opts: opts}
}

// Move moves the show to shard to. What an earlier move of the show left
// behind, its mover dead, is settled first (see settle): run again, a move
// resumes, reusing the target's partial copy, and a move whose directory
// already flipped only deletes the rows left on the old shard.
func (m *Mover) Move(ctx context.Context, showID int64, to int) (Report, error) {
	rep := Report{ShowID: showID, To: to}
	dst, err := m.router.Shard(to)
	if err != nil {
		return rep, err
	}
	lock, unlock, err := m.lock(ctx, showID)
	if err != nil {
		return rep, err
	}
	defer unlock()
	if moved, err := m.moveDraft(ctx, &rep); moved || err != nil {
		return rep, err
	}
	if rep.From, rep.Leftovers, err = m.settle(ctx, showID, to); err != nil {
		return rep, err
	}
	if rep.From == to {
		if rep.Leftovers > 0 {
			return rep, nil
		}
		return rep, fmt.Errorf("show %d on shard %d: %w", showID, to, ErrSameShard)
	}
	src, err := m.router.Shard(rep.From)
	if err != nil {
		return rep, err
	}
	schema, err := loadSchema(ctx, src)
	if err != nil {
		return rep, err
	}

	// The new shard's ids run ahead of the old one's by a margin before
	// the passes, so the catch-ups before and inside the freeze have little
	// or nothing left to spend; the old shard goes on using ids while the
	// new one spends, so again until the new shard was not far behind.
	for range 5 {
		spent, err := outrun(ctx, src, dst, outrunAhead)
		if err != nil {
			return rep, err
		}
		if spent <= 2*outrunAhead {
			break
		}
	}

	// Online passes: the show sells on the old shard meanwhile.
	cp := &copier{sc: schema, src: src, dst: dst, showID: showID}
	for rep.Passes < m.opts.MaxPasses {
		n, err := cp.pass(ctx)
		if err != nil {
			return rep, err
		}
		rep.Passes++
		rep.Copied += n
		m.opts.Log.InfoContext(ctx, "shard move: pass", "show", showID, "pass", rep.Passes, "rows", n)
		m.step(StepCopied)
		if n <= m.opts.SettledRows {
			break
		}
	}

	// Once more, so the frozen pass has none left to spend.
	if _, err := outrun(ctx, src, dst, outrunAhead); err != nil {
		return rep, err
	}

	// The freeze: it waits for every write already past the fence's check;
	// every later one sees 'moving' and is refused.
	start, err := freeze(ctx, src, showID)
	if err != nil {
		return rep, err
	}
	m.opts.Log.InfoContext(ctx, "shard move: frozen", "show", showID, "waited", time.Since(start))
	m.step(StepFrozen)
	flipped, err := m.flip(ctx, lock, cp, &rep)
	if err != nil && !flipped.IsZero() {
		return rep, fmt.Errorf("show %d moved to shard %d; its rows stay on shard %d until the move runs again: %w", showID, to, rep.From, err)
	}
	if err != nil {
		// Only the holder of the lock may lift the fence: with the lock's
		// session gone, another mover may run already, and the next one
		// settles what this one left.
		if _, lerr := lock.Exec(context.WithoutCancel(ctx), `SELECT 1`); lerr != nil {
			return rep, errors.Join(err, fmt.Errorf("show %d stays frozen until the move runs again: %w", showID, lerr))
		}
		// The new shard's copy goes back to waiting; the old one serves on.
		if _, uerr := dst.Exec(context.WithoutCancel(ctx), `UPDATE shows SET placement = 'incoming' WHERE show_id = $1`, showID); uerr != nil {
			err = errors.Join(err, fmt.Errorf("deactivate show %d on %s: %w", showID, dst.Name, uerr))
		}
		if _, uerr := src.Exec(context.WithoutCancel(ctx), `UPDATE shows SET placement = 'active' WHERE show_id = $1 AND placement = 'moving'`, showID); uerr != nil {
			err = errors.Join(err, fmt.Errorf("unfreeze show %d: %w", showID, uerr))
		}
		return rep, err
	}
	rep.Freeze = flipped.Sub(start)

	select {
	case <-ctx.Done():
		return rep, fmt.Errorf("show %d moved to shard %d; its rows stay on shard %d until the move runs again: %w", showID, to, rep.From, ctx.Err())
	case <-time.After(m.opts.Grace):
	}
	rep.Deleted, err = deleteShow(ctx, src, showID)
	if err != nil {
		return rep, fmt.Errorf("show %d moved to shard %d; deleting it from shard %d: %w", showID, to, rep.From, err)
	}
	return rep, nil
}

// Abort settles what a dead mover left of a move of the show (see settle)
// without moving it: the shard the directory names serves the show again,
// unfrozen, and every other shard's copy of it is deleted.
func (m *Mover) Abort(ctx context.Context, showID int64) (Report, error) {
	rep := Report{ShowID: showID, To: -1}
	_, unlock, err := m.lock(ctx, showID)
	if err != nil {
		return rep, err
	}
	defer unlock()
	rep.From, rep.Leftovers, err = m.settle(ctx, showID, -1)
	rep.To = rep.From
	return rep, err
}

// lock takes the move of the show: one at a time, held by a catalog session
// for the move's life (a dead mover's session ends, and so its lock). The
// directory flips on that session, so a mover that lost it cannot flip.
func (m *Mover) lock(ctx context.Context, showID int64) (*pgxpool.Conn, func(), error) {
	lock, err := m.router.Catalog().Acquire(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("lock the move of show %d: %w", showID, err)
	}
	// A dead mover's session may take a moment to end on the server: the
	// lock is waited for that long, not more.
	_, err = lock.Exec(ctx, `SELECT set_config('lock_timeout', '1s', false)`)
	if err == nil {
		_, err = lock.Exec(ctx, `SELECT pg_advisory_lock(hashtextextended('shard move', $1))`, showID)
	}
	if err == nil {
		_, err = lock.Exec(ctx, `RESET lock_timeout`)
	}
	if err != nil {
		_, _ = lock.Exec(context.WithoutCancel(ctx), `RESET lock_timeout`) // the session goes back to the pool
		lock.Release()
		if pg.SQLState(err) == lockNotAvailable {
			return nil, nil, fmt.Errorf("show %d: %w", showID, ErrBusy)
		}
		return nil, nil, fmt.Errorf("lock the move of show %d: %w", showID, err)
	}
	return lock, func() {
		_, _ = lock.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(hashtextextended('shard move', $1))`, showID)
		lock.Release()
	}, nil
}

// moveDraft moves a draft that has nothing on any shard (decision 0483):
// a draft's seats are written to its shard when it is published, so
// there is nothing to copy, and its catalog row, locked as PublishShow
// locks it, simply names the new shard (announced, as a flip is). It
// returns false for a published show, or a draft a crashed publish left
// rows of (those move as a show's rows do).
func (m *Mover) moveDraft(ctx context.Context, rep *Report) (bool, error) {
	moved := false
	err := pg.InTx(ctx, m.router.Catalog(), func(tx pgx.Tx) error {
		var draft bool
		err := tx.QueryRow(ctx, `SELECT shard, published_at IS NULL FROM shows WHERE show_id = $1 FOR UPDATE`, rep.ShowID).
			Scan(&rep.From, &draft)
		if found, err := pg.Found(err); err != nil || !found || !draft {
			return err // an unknown show is settle's to report
		}
		for _, pool := range m.router.Shards() {
			var there bool
			if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT FROM shows WHERE show_id = $1)`, rep.ShowID).Scan(&there); err != nil {
				return fmt.Errorf("look for draft %d on %s: %w", rep.ShowID, pool.Name, err)
			}
			if there {
				return nil
			}
		}
		if rep.From == rep.To {
			return fmt.Errorf("draft %d on shard %d: %w", rep.ShowID, rep.To, ErrSameShard)
		}
		if _, err := tx.Exec(ctx, `UPDATE shows SET shard = $2 WHERE show_id = $1`, rep.ShowID, rep.To); err != nil {
			return fmt.Errorf("point draft %d to shard %d: %w", rep.ShowID, rep.To, err)
		}
		if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, shard.DirectoryChannel, strconv.FormatInt(rep.ShowID, 10)); err != nil {
			return fmt.Errorf("announce draft %d's move: %w", rep.ShowID, err)
		}
		moved = true
		return nil
	})
	if err != nil {
		return false, err
	}
	if moved {
		m.opts.Log.InfoContext(ctx, "shard move: a draft, its directory alone", "show", rep.ShowID, "from", rep.From, "to", rep.To)
	}
	return moved, nil
}

// settle makes the state of the show what the directory says, whatever an
// earlier mover that died left (decision 0240), and returns the directory's
// shard and the rows it deleted. It runs under the move's lock, so no other
// mover acts meanwhile:
//   - the directory's shard serves the show: a freeze left there (a mover
//     died before the flip) is lifted;
//   - the shard keep (the target of a move; -1: none) keeps its copy,
//     'incoming', for the next pass to compare with and reuse;
//   - every other shard's copy (the old shard of a move that flipped, or a
//     partial copy) is deleted, after the grace if it may have served.
func (m *Mover) settle(ctx context.Context, showID int64, keep int) (int, int, error) {
	var dir int
	found, err := pg.Found(m.router.Catalog().QueryRow(ctx, `SELECT shard FROM shows WHERE show_id = $1`, showID).Scan(&dir))
	if err != nil {
		return 0, 0, fmt.Errorf("look up show %d: %w", showID, err)
	}
	if !found {
		return 0, 0, fmt.Errorf("show %d: %w", showID, shard.ErrUnknownShow)
	}
	var stale []*pg.Pool
	served := false
	for i, pool := range m.router.Shards() {
		var state string
		err := pool.QueryRow(ctx, `SELECT placement FROM shows WHERE show_id = $1`, showID).Scan(&state)
		found, err := pg.Found(err)
		if err != nil {
			return dir, 0, fmt.Errorf("show %d on %s: %w", showID, pool.Name, err)
		}
		if !found {
			continue
		}
		switch {
		case i == dir:
			if state == "moving" {
				m.opts.Log.WarnContext(ctx, "shard move: lifting the freeze a dead move left", "show", showID, "shard", pool.Name)
				if _, err := pool.Exec(ctx, `UPDATE shows SET placement = 'active' WHERE show_id = $1 AND placement = 'moving'`, showID); err != nil {
					return dir, 0, fmt.Errorf("unfreeze show %d on %s: %w", showID, pool.Name, err)
				}
			}
		case i == keep:
			if _, err := pool.Exec(ctx, `UPDATE shows SET placement = 'incoming' WHERE show_id = $1`, showID); err != nil {
				return dir, 0, fmt.Errorf("show %d on %s: %w", showID, pool.Name, err)
			}
		default:
			left, err := hasRows(ctx, pool, showID)
			if err != nil {
				return dir, 0, err
			}
			if state == "moved" && !left {
				continue // the tombstone of an earlier move
			}
			served = served || state == "moving" || state == "moved"
			if _, err := pool.Exec(ctx, `UPDATE shows SET placement = 'moved' WHERE show_id = $1`, showID); err != nil {
				return dir, 0, fmt.Errorf("show %d on %s: %w", showID, pool.Name, err)
			}
			stale = append(stale, pool)
		}
	}
	if len(stale) == 0 {
		return dir, 0, nil
	}
	if served {
		select {
		case <-ctx.Done():
			return dir, 0, ctx.Err()
		case <-time.After(m.opts.Grace):
		}
	}
	deleted := 0
	for _, pool := range stale {
		n, err := deleteShow(ctx, pool, showID)
		deleted += n
		if err != nil {
			return dir, deleted, fmt.Errorf("delete what a move left of show %d on %s: %w", showID, pool.Name, err)
		}
		m.opts.Log.WarnContext(ctx, "shard move: deleted what a dead move left", "show", showID, "shard", pool.Name, "rows", n)
	}
	return dir, deleted, nil
}

// hasRows tells whether pool holds any row of the show besides its shows
// row (a delete of a move takes them all or none, in one transaction).
func hasRows(ctx context.Context, pool *pg.Pool, showID int64) (bool, error) {
	var probes []string
	for _, t := range moved[1:] {
		if t.where == "show_id = $1" {
			probes = append(probes, `EXISTS (SELECT FROM `+t.name+` WHERE show_id = $1)`)
		}
	}
	probes = append(probes, `EXISTS (SELECT FROM outbox WHERE show_id = $1)`)
	var left bool
	if err := pool.QueryRow(ctx, `SELECT `+strings.Join(probes, " OR "), showID).Scan(&left); err != nil {
		return false, fmt.Errorf("rows of show %d on %s: %w", showID, pool.Name, err)
	}
	return left, nil
}

// The steps of a move after which a test may stop it, as a mover's death
// would (no cleanup, its sessions closed).
const (
	StepCopied    = "copied"    // after each online pass
	StepFrozen    = "frozen"    // the old shard refuses the show's writes
	StepActivated = "activated" // the new shard would serve it; the directory not flipped yet
	StepFlipped   = "flipped"   // the directory names the new shard; the old one not marked moved
	StepMarked    = "marked"    // the old shard's rows wait for the grace and their delete
)

func (m *Mover) step(name string) {
	if m.opts.stepHook != nil {
		m.opts.stepHook(name)
	}
}

// freezeWait bounds one attempt to freeze: the fence's lock waits for the
// writes holding it, and writes that queue behind it wait for it, so a
// write that also waits for one of those (a seat row) would deadlock with
// it. Giving up first, the move is the one that yields, never a buyer.
const freezeWait = 100 * time.Millisecond

// lockNotAvailable is the SQLSTATE of a lock_timeout.
const lockNotAvailable = "55P03"

// freeze sets the show 'moving' on its shard and returns when the freeze
// began (the attempt that succeeded).
func freeze(ctx context.Context, src *pg.Pool, showID int64) (time.Time, error) {
	for attempt := 1; ; attempt++ {
		start := time.Now()
		var frozen int64
		err := pg.InTx(ctx, src, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT set_config('lock_timeout', $1, true)`, fmt.Sprintf("%dms", freezeWait.Milliseconds())); err != nil {
				return err
			}
			// Writers hold this lock shared from their check to their
			// end (show_writable, decision 0265): taking it waits for
			// those already past the check, and those after wait for the
			// UPDATE's commit and then read 'moving'.
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('seatghor.fence', $1))`, showID); err != nil {
				return err
			}
			tag, err := tx.Exec(ctx, `UPDATE shows SET placement = 'moving' WHERE show_id = $1 AND placement = 'active'`, showID)
			frozen = tag.RowsAffected()
			return err
		})
		if pg.SQLState(err) == lockNotAvailable && attempt < 50 {
			continue
		}
		if err != nil {
			return start, fmt.Errorf("freeze show %d on %s: %w", showID, src.Name, err)
		}
		if frozen != 1 {
			return start, fmt.Errorf("freeze show %d on %s: %w", showID, src.Name, ErrBusy)
		}
		return start, nil
	}
}

// flip copies the frozen show's last changes, makes the new shard serve it
// and points the directory there, on the move's lock session, announcing it
// to every router. It returns when the directory flipped (the freeze ends
// there for every router that hears of it), zero if it did not.
func (m *Mover) flip(ctx context.Context, lock *pgxpool.Conn, cp *copier, rep *Report) (time.Time, error) {
	src, dst := cp.src, cp.dst
	began := time.Now()
	// The last catch-up of transaction ids, if src used more than the
	// margin since.
	if _, err := outrun(ctx, src, dst, 0); err != nil {
		return time.Time{}, err
	}
	n, err := cp.pass(ctx)
	if err != nil {
		return time.Time{}, err
	}
	rep.Copied += n
	m.opts.Log.InfoContext(ctx, "shard move: last pass", "show", rep.ShowID, "rows", n, "took", time.Since(began))
	if _, err := dst.Exec(ctx, `UPDATE shows SET placement = 'active' WHERE show_id = $1`, rep.ShowID); err != nil {
		return time.Time{}, fmt.Errorf("activate show %d on %s: %w", rep.ShowID, dst.Name, err)
	}
	m.step(StepActivated)
	err = pg.InTx(ctx, lock, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE shows SET shard = $2 WHERE show_id = $1 AND shard = $3`, rep.ShowID, rep.To, rep.From)
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
			return ErrBusy
		}
		_, err = tx.Exec(ctx, `SELECT pg_notify($1, $2)`, shard.DirectoryChannel, strconv.FormatInt(rep.ShowID, 10))
		return err
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("point the directory of show %d to shard %d: %w", rep.ShowID, rep.To, err)
	}
	flipped := time.Now()
	m.step(StepFlipped)
	if _, err := src.Exec(ctx, `UPDATE shows SET placement = 'moved' WHERE show_id = $1`, rep.ShowID); err != nil {
		return flipped, fmt.Errorf("mark show %d moved on %s: %w", rep.ShowID, src.Name, err)
	}
	m.step(StepMarked)
	return flipped, nil
}

// maxOutrun bounds the transaction ids outrun spends on the new shard.
const maxOutrun = 50_000_000

// outrunAhead is how far ahead of the old shard's the new shard's next
// transaction id is put before the freeze: more than a busy show's writes
// use in the moments until the frozen pass (a second of spending at most).
const outrunAhead = 10_000

// outrun spends transaction ids on dst, when its next one is behind src's,
// until it is ahead by ahead, and returns how many it spent: a show's
// seat-map version is the xid of its newest event and never goes down
// (decision 0130), so the events the show gets on its new shard must have
// higher xids than those it had on the old one (decision 0205). It is the
// one comparison of two servers' transaction ids (decision 0241).
func outrun(ctx context.Context, src, dst *pg.Pool, ahead int64) (int64, error) {
	const next = `SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint`
	var s, d int64
	if err := src.QueryRow(ctx, next).Scan(&s); err != nil {
		return 0, fmt.Errorf("next transaction id of %s: %w", src.Name, err)
	}
	if err := dst.QueryRow(ctx, next).Scan(&d); err != nil {
		return 0, fmt.Errorf("next transaction id of %s: %w", dst.Name, err)
	}
	if s <= d { // also two databases of one server: one counter
		return 0, nil
	}
	gap := s - d + ahead
	if gap > maxOutrun {
		return 0, fmt.Errorf("%s is %d transactions behind %s (at most %d are caught up): move the show elsewhere", dst.Name, gap, src.Name, maxOutrun)
	}
	return gap, spendXIDs(ctx, dst, gap)
}

// spendChunk bounds the ids one statement spends, well inside the pools'
// statement timeout (15 s; tens of thousands of ids a second).
const spendChunk = 50_000

// spendXIDs commits n empty transactions that each take a transaction id,
// in the server, not one round trip each.
func spendXIDs(ctx context.Context, pool *pg.Pool, n int64) error {
	for n > 0 {
		k := min(n, spendChunk)
		_, err := pool.Exec(ctx, fmt.Sprintf(`DO $$ BEGIN FOR i IN 1..%d LOOP PERFORM pg_current_xact_id(); COMMIT; END LOOP; END $$`, k))
		if err != nil {
			return fmt.Errorf("catch up the transaction ids of %s: %w", pool.Name, err)
		}
		n -= k
	}
	return nil
}

// moverTx runs f in a transaction on pool that writes past the show fence.
func moverTx(ctx context.Context, pool *pg.Pool, opts pgx.TxOptions, f func(pgx.Tx) error) error {
	tx, err := pool.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, `SELECT set_config('seatghor.show_mover', 'on', true)`); err != nil {
		return err
	}
	if err := f(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// deleteShow removes the moved show's rows from the old shard, children
// first; the shows row stays, marked moved, as the fence's tombstone.
func deleteShow(ctx context.Context, src *pg.Pool, showID int64) (int, error) {
	deleted := 0
	err := moverTx(ctx, src, pgx.TxOptions{}, func(tx pgx.Tx) error {
		deleted = 0
		tag, err := tx.Exec(ctx, `DELETE FROM outbox WHERE show_id = $1`, showID)
		if err != nil {
			return fmt.Errorf("delete outbox: %w", err)
		}
		deleted += int(tag.RowsAffected())
		for i := len(moved) - 1; i > 0; i-- { // moved[0] is shows: kept
			t := moved[i]
			tag, err := tx.Exec(ctx, `DELETE FROM `+t.name+` WHERE `+t.where, showID)
			if err != nil {
				return fmt.Errorf("delete %s: %w", t.name, err)
			}
			deleted += int(tag.RowsAffected())
		}
		return nil
	})
	return deleted, err
}

// quoteCols joins column names for SQL, each quoted.
func quoteCols(prefix string, cols []string) string {
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = prefix + pgx.Identifier{c}.Sanitize()
	}
	return strings.Join(q, ", ")
}
