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
	"github.com/jackc/pgx/v5/pgconn"

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

// Move moves the show to shard to.
func (m *Mover) Move(ctx context.Context, showID int64, to int) (Report, error) {
	rep := Report{ShowID: showID, To: to}
	dst, err := m.router.Shard(to)
	if err != nil {
		return rep, err
	}
	if err := m.router.Catalog().QueryRow(ctx, `SELECT shard FROM shows WHERE show_id = $1`, showID).Scan(&rep.From); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return rep, fmt.Errorf("show %d: %w", showID, shard.ErrUnknownShow)
		}
		return rep, fmt.Errorf("look up show %d: %w", showID, err)
	}
	if rep.From == to {
		return rep, fmt.Errorf("show %d on shard %d: %w", showID, to, ErrSameShard)
	}
	// One move of a show at a time, held by a catalog session for the
	// move's life (a crashed mover's session ends, and so its lock).
	lock, err := m.router.Catalog().Acquire(ctx)
	if err != nil {
		return rep, fmt.Errorf("lock the move of show %d: %w", showID, err)
	}
	defer lock.Release()
	var locked bool
	if err := lock.QueryRow(ctx, `SELECT pg_try_advisory_lock(hashtextextended('shard move', $1))`, showID).Scan(&locked); err != nil {
		return rep, fmt.Errorf("lock the move of show %d: %w", showID, err)
	}
	if !locked {
		return rep, fmt.Errorf("show %d: %w", showID, ErrBusy)
	}
	defer func() {
		_, _ = lock.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(hashtextextended('shard move', $1))`, showID)
	}()
	src, err := m.router.Shard(rep.From)
	if err != nil {
		return rep, err
	}
	if err := prepareTarget(ctx, dst, showID); err != nil {
		return rep, err
	}
	schema, err := loadSchema(ctx, src)
	if err != nil {
		return rep, err
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
		if n <= m.opts.SettledRows {
			break
		}
	}

	// The freeze: the UPDATE waits for every write already holding the
	// show row FOR SHARE; every later one sees 'moving' and is refused.
	if err := outrun(ctx, src, dst); err != nil {
		return rep, err
	}
	start, err := freeze(ctx, src, showID)
	if err != nil {
		return rep, err
	}
	m.opts.Log.InfoContext(ctx, "shard move: frozen", "show", showID, "waited", time.Since(start))
	if err := m.flip(ctx, cp, &rep); err != nil {
		if _, uerr := src.Exec(context.WithoutCancel(ctx), `UPDATE shows SET placement = 'active' WHERE show_id = $1 AND placement = 'moving'`, showID); uerr != nil {
			err = errors.Join(err, fmt.Errorf("unfreeze show %d: %w", showID, uerr))
		}
		return rep, err
	}
	rep.Freeze = time.Since(start)

	select {
	case <-ctx.Done():
		return rep, fmt.Errorf("show %d moved to shard %d; its rows stay on shard %d: %w", showID, to, rep.From, ctx.Err())
	case <-time.After(m.opts.Grace):
	}
	rep.Deleted, err = deleteShow(ctx, src, showID)
	if err != nil {
		return rep, fmt.Errorf("show %d moved to shard %d; deleting it from shard %d: %w", showID, to, rep.From, err)
	}
	return rep, nil
}

// freezeWait bounds one attempt to freeze: the UPDATE waits for the writes
// holding the show row, and writes that queue behind it wait for it, so a
// write that also waits for one of those (a seat row) would deadlock with
// it. Giving up first, the move is the one that yields, never a buyer.
const freezeWait = 100 * time.Millisecond

// lockNotAvailable is the SQLSTATE of a lock_timeout.
const lockNotAvailable = "55P03"

// freeze sets the show 'moving' on its shard and returns when the freeze
// began (the attempt that succeeded). A show left 'moving' by a mover that
// died before the flip is frozen again: the rerun of the move finishes it.
func freeze(ctx context.Context, src *pg.Pool, showID int64) (time.Time, error) {
	for attempt := 1; ; attempt++ {
		start := time.Now()
		var frozen int64
		err := pg.InTx(ctx, src, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT set_config('lock_timeout', $1, true)`, fmt.Sprintf("%dms", freezeWait.Milliseconds())); err != nil {
				return err
			}
			tag, err := tx.Exec(ctx, `UPDATE shows SET placement = 'moving' WHERE show_id = $1 AND placement IN ('active', 'moving')`, showID)
			frozen = tag.RowsAffected()
			return err
		})
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == lockNotAvailable && attempt < 50 {
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
// and points the directory there, announcing it to every router.
func (m *Mover) flip(ctx context.Context, cp *copier, rep *Report) error {
	src, dst := cp.src, cp.dst
	began := time.Now()
	// The last catch-up of transaction ids: what src used since outrun.
	if err := outrun(ctx, src, dst); err != nil {
		return err
	}
	n, err := cp.pass(ctx)
	if err != nil {
		return err
	}
	rep.Copied += n
	m.opts.Log.InfoContext(ctx, "shard move: last pass", "show", rep.ShowID, "rows", n, "took", time.Since(began))
	if _, err := dst.Exec(ctx, `UPDATE shows SET placement = 'active' WHERE show_id = $1`, rep.ShowID); err != nil {
		return fmt.Errorf("activate show %d on %s: %w", rep.ShowID, dst.Name, err)
	}
	err = pg.InTx(ctx, m.router.Catalog(), func(tx pgx.Tx) error {
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
		// The new shard's copy goes back to waiting; the old one serves on.
		_, _ = dst.Exec(context.WithoutCancel(ctx), `UPDATE shows SET placement = 'incoming' WHERE show_id = $1`, rep.ShowID)
		return fmt.Errorf("point the directory of show %d to shard %d: %w", rep.ShowID, rep.To, err)
	}
	if _, err := src.Exec(ctx, `UPDATE shows SET placement = 'moved' WHERE show_id = $1`, rep.ShowID); err != nil {
		return fmt.Errorf("mark show %d moved on %s: %w", rep.ShowID, src.Name, err)
	}
	return nil
}

// maxOutrun bounds the transaction ids outrun spends on the new shard.
const maxOutrun = 50_000_000

// outrun spends transaction ids on dst until its next one is past src's:
// a show's seat-map version is the xid of its newest event and never goes
// down (decision 0130), so the events the show gets on its new shard must
// have higher xids than those it had on the old one (decision 0205).
func outrun(ctx context.Context, src, dst *pg.Pool) error {
	const next = `SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint`
	var s, d int64
	if err := src.QueryRow(ctx, next).Scan(&s); err != nil {
		return fmt.Errorf("next transaction id of %s: %w", src.Name, err)
	}
	if err := dst.QueryRow(ctx, next).Scan(&d); err != nil {
		return fmt.Errorf("next transaction id of %s: %w", dst.Name, err)
	}
	gap := s - d
	if gap <= 0 {
		return nil
	}
	if gap > maxOutrun {
		return fmt.Errorf("%s is %d transactions behind %s (at most %d are caught up): move the show elsewhere", dst.Name, gap, src.Name, maxOutrun)
	}
	return spendXIDs(ctx, dst, gap)
}

// spendXIDs commits n empty transactions that each take a transaction id,
// in the server, not one round trip each.
func spendXIDs(ctx context.Context, pool *pg.Pool, n int64) error {
	_, err := pool.Exec(ctx, fmt.Sprintf(`DO $$ BEGIN FOR i IN 1..%d LOOP PERFORM pg_current_xact_id(); COMMIT; END LOOP; END $$`, n))
	if err != nil {
		return fmt.Errorf("catch up the transaction ids of %s: %w", pool.Name, err)
	}
	return nil
}

// prepareTarget makes sure the new shard does not serve the show: no row
// yet, or one left by an earlier move away or an interrupted move in.
func prepareTarget(ctx context.Context, dst *pg.Pool, showID int64) error {
	var state string
	err := dst.QueryRow(ctx, `SELECT placement FROM shows WHERE show_id = $1`, showID).Scan(&state)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("show %d on %s: %w", showID, dst.Name, err)
	}
	if state != "incoming" && state != "moved" {
		return fmt.Errorf("show %d is %s on %s: %w", showID, state, dst.Name, ErrBusy)
	}
	_, err = dst.Exec(ctx, `UPDATE shows SET placement = 'incoming' WHERE show_id = $1`, showID)
	return err
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
