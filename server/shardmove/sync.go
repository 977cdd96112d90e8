package shardmove

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/pg"
)

// fenceColumn is the shows column a move sets by itself on each shard, so a
// pass neither compares nor copies it.
const fenceColumn = "placement"

// chunk bounds the rows sent in one statement.
const chunk = 2000

// columns is what a pass needs to know of a table.
type columns struct {
	key  []string // the primary key
	cols []string // the columns a copy writes (not generated, not identity)
}

type schema map[string]columns

// loadSchema reads the key and columns of every table a move copies.
func loadSchema(ctx context.Context, pool *pg.Pool) (schema, error) {
	out := schema{}
	for _, name := range append(tableNames(), outbox) {
		var c columns
		err := pool.QueryRow(ctx, `
			SELECT coalesce((SELECT array_agg(a.attname::text ORDER BY array_position(i.indkey::int2[], a.attnum))
			                   FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
			                  WHERE i.indrelid = $1::regclass AND i.indisprimary), '{}'),
			       coalesce((SELECT array_agg(attname::text ORDER BY attnum) FROM pg_attribute
			                  WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped
			                    AND attgenerated = '' AND attidentity <> 'a'), '{}')`, name).Scan(&c.key, &c.cols)
		if err != nil {
			return nil, fmt.Errorf("read the columns of %s: %w", name, err)
		}
		if name == outbox {
			// Each shard's outbox gives its rows their own positions.
			c.cols = without(c.cols, "xid")
		} else if len(c.key) == 0 {
			return nil, fmt.Errorf("table %s has no primary key: a move cannot tell its rows apart", name)
		}
		out[name] = c
	}
	return out, nil
}

func tableNames() []string {
	names := make([]string, len(moved))
	for i, t := range moved {
		names[i] = t.name
	}
	return names
}

func without(cols []string, drop string) []string {
	var out []string
	for _, c := range cols {
		if c != drop {
			out = append(out, c)
		}
	}
	return out
}

// copier copies one show from src to dst, pass after pass. After a pass
// it knows what dst holds (the show is 'incoming' there: only the copier
// writes it), so later passes read only src, and of src only the rows that
// changed since the last pass's snapshot: the frozen pass then takes time
// in proportion to the writes since, not to the show's size.
type copier struct {
	sc       schema
	src, dst *pg.Pool
	showID   int64
	// copied is dst's rows of each table after the last pass, events its
	// outbox's event ids; nil before the first pass.
	copied map[string]map[string]string
	events map[string]bool
	// since is the oldest transaction of src still running at the last
	// pass's snapshot (its xmin, an xid8 of src): every row version that
	// snapshot did not see was written by a transaction at or after it.
	// Only ever compared with src's own transaction ids.
	since int64
}

// pass makes the new shard's copy of the show equal to one snapshot of the
// old shard's rows, and appends the outbox events it lacks in their order.
// It returns the rows it wrote or deleted.
func (c *copier) pass(ctx context.Context) (int, error) {
	var n int
	changed := map[string]map[string]string{}
	gone := map[string][]string{}
	var events map[string]bool
	var since int64
	err := moverTx(ctx, c.dst, pgx.TxOptions{}, func(dtx pgx.Tx) error {
		stx, err := c.src.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
		if err != nil {
			return err
		}
		defer func() { _ = stx.Rollback(context.WithoutCancel(ctx)) }()
		// The first statement takes the transaction's snapshot.
		var next int64
		if err := stx.QueryRow(ctx, `SELECT pg_snapshot_xmin(s)::text::bigint, pg_snapshot_xmax(s)::text::bigint
			FROM pg_current_snapshot() s`).Scan(&since, &next); err != nil {
			return fmt.Errorf("snapshot of %s: %w", c.src.Name, err)
		}
		f := filter{}
		if c.copied != nil {
			f = newFilter(c.since, next)
		}
		n = 0
		upserts := make([][]string, len(moved))
		for i, t := range moved {
			have, count, err := readRows(ctx, stx, t, c.sc[t.name], c.showID, f)
			if err != nil {
				return fmt.Errorf("read %s of %s: %w", t.name, c.src.Name, err)
			}
			changed[t.name] = have
			had := c.copied[t.name]
			if c.copied == nil {
				if had, _, err = readRows(ctx, dtx, t, c.sc[t.name], c.showID, filter{}); err != nil {
					return fmt.Errorf("read %s of %s: %w", t.name, c.dst.Name, err)
				}
			}
			for k, row := range have {
				if had[k] != row {
					upserts[i] = append(upserts[i], row)
				}
			}
			if gone[t.name], err = deleted(ctx, stx, t, c.sc[t.name], c.showID, f, had, have, count); err != nil {
				return fmt.Errorf("read %s of %s: %w", t.name, c.src.Name, err)
			}
		}
		for i := len(moved) - 1; i >= 0; i-- {
			t, cols := moved[i], c.sc[moved[i].name]
			for part := range chunks(gone[t.name]) {
				tag, err := dtx.Exec(ctx, `DELETE FROM `+t.name+` WHERE jsonb_build_array(`+quoteCols("", cols.key)+`) IN (SELECT jsonb_array_elements($1::jsonb))`, part)
				if err != nil {
					return fmt.Errorf("delete from %s: %w", t.name, err)
				}
				n += int(tag.RowsAffected())
			}
		}
		for i, t := range moved {
			for part := range chunks(upserts[i]) {
				tag, err := dtx.Exec(ctx, upsertSQL(t.name, c.sc[t.name]), part)
				if err != nil {
					return fmt.Errorf("copy into %s: %w", t.name, err)
				}
				n += int(tag.RowsAffected())
			}
		}
		var copied int
		events, copied, err = copyOutbox(ctx, c.sc[outbox], stx, dtx, c.showID, c.events, f)
		n += copied
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("copy show %d from %s to %s: %w", c.showID, c.src.Name, c.dst.Name, err)
	}
	if c.copied == nil {
		c.copied = changed // the first pass read everything
	} else {
		for _, t := range moved {
			rows := c.copied[t.name]
			for _, k := range gone[t.name] {
				delete(rows, k)
			}
			maps.Copy(rows, changed[t.name])
		}
	}
	c.events, c.since = events, since
	return n, nil
}

// filter selects the row versions of src a snapshot taken when since was
// its oldest running transaction did not see, and some it did: those
// written by a transaction at or after since, up to next (the current
// snapshot's next xid). xmin is 32 bits: the distance from since's low 32
// bits, modulo 2^32, is below next - since exactly for those. A row read
// though unchanged is compared and not written. The zero filter selects
// every row.
type filter struct {
	on         bool
	base, span int64
}

func newFilter(since, next int64) filter {
	return filter{on: true, base: since & 0xFFFFFFFF, span: next - since}
}

func (f filter) all() bool { return !f.on }

// sql is the filter's condition on table alias t, its parameters $2, $3.
func (f filter) sql() string {
	return `((t.xmin::text::bigint - $2 + 4294967296) % 4294967296) < $3`
}

// readRows returns the show's rows of t that f selects: primary key (a
// JSON array) → the row as JSON, which is the same text on both shards for
// the same row; and how many rows of the show t has, in the same scan.
func readRows(ctx context.Context, tx pgx.Tx, t table, c columns, showID int64, f filter) (map[string]string, int, error) {
	row := "to_jsonb(t)"
	if t.name == "shows" {
		row = "to_jsonb(t) - '" + fenceColumn + "'"
	}
	cond, args := "true", []any{showID}
	if !f.all() {
		cond, args = f.sql(), append(args, f.base, f.span)
	}
	var keys, vals []string
	var count int
	err := tx.QueryRow(ctx, `SELECT count(*),
			coalesce(array_agg(jsonb_build_array(`+quoteCols("t.", c.key)+`)::text) FILTER (WHERE `+cond+`), '{}'),
			coalesce(array_agg((`+row+`)::text) FILTER (WHERE `+cond+`), '{}')
		FROM `+t.name+` t WHERE `+t.where, args...).Scan(&count, &keys, &vals)
	if err != nil {
		return nil, 0, err
	}
	out := make(map[string]string, len(keys))
	for i, k := range keys {
		out[k] = vals[i]
	}
	return out, count, nil
}

// deleted returns the keys of had (the rows of the last pass) that are gone
// now, given have, the rows f read now, and count, the show's rows now.
// Unless f read every row, the rows it did not read are unchanged since
// had, so none is gone when the show's rows number those of had plus the
// new keys of have; only otherwise are the keys of all of them read.
func deleted(ctx context.Context, tx pgx.Tx, t table, c columns, showID int64, f filter, had, have map[string]string, count int) ([]string, error) {
	var gone []string
	if f.all() {
		for k := range had {
			if _, ok := have[k]; !ok {
				gone = append(gone, k)
			}
		}
		return gone, nil
	}
	added := 0
	for k := range have {
		if _, ok := had[k]; !ok {
			added++
		}
	}
	if count == len(had)+added {
		return nil, nil
	}
	rows, err := tx.Query(ctx, `SELECT jsonb_build_array(`+quoteCols("t.", c.key)+`)::text FROM `+t.name+` t WHERE `+t.where, showID)
	if err != nil {
		return nil, err
	}
	there := map[string]bool{}
	var k string
	if _, err := pgx.ForEachRow(rows, []any{&k}, func() error { there[k] = true; return nil }); err != nil {
		return nil, err
	}
	for k := range had {
		if !there[k] {
			gone = append(gone, k)
		}
	}
	return gone, nil
}

// upsertSQL writes rows given as a JSON array ($1) into table, replacing
// the rows with the same key. A show's row arrives 'incoming': the new
// shard serves it only once the directory is flipped.
func upsertSQL(name string, c columns) string {
	row := "e.j"
	var set []string
	for _, col := range c.cols {
		if name == "shows" && col == fenceColumn {
			row = `e.j || '{"` + fenceColumn + `": "incoming"}'`
			continue
		}
		set = append(set, pgx.Identifier{col}.Sanitize()+" = EXCLUDED."+pgx.Identifier{col}.Sanitize())
	}
	conflict := "DO NOTHING"
	if len(set) > len(c.key) {
		conflict = "DO UPDATE SET " + strings.Join(set, ", ")
	}
	return `INSERT INTO ` + name + ` (` + quoteCols("", c.cols) + `)
		SELECT ` + quoteCols("r.", c.cols) + ` FROM jsonb_array_elements($1::jsonb) e(j), jsonb_populate_record(NULL::` + name + `, ` + row + `) r
		ON CONFLICT (` + quoteCols("", c.key) + `) ` + conflict
}

// copyOutbox appends to the new shard's outbox the show's events it lacks,
// in the old shard's (xid, id) order: they get new positions there, after
// every event already in it, so the new shard's projectors apply them in
// order (decision 0205).
//
// there is the new shard's event ids of the show, nil when not known yet;
// copyOutbox returns them as they are after it.
func copyOutbox(ctx context.Context, c columns, stx, dtx pgx.Tx, showID int64, known map[string]bool, f filter) (map[string]bool, int, error) {
	there := maps.Clone(known)
	var id string
	if there == nil {
		there = map[string]bool{}
		rows, err := dtx.Query(ctx, `SELECT event_id FROM outbox WHERE show_id = $1`, showID)
		if err != nil {
			return nil, 0, fmt.Errorf("read the new shard's outbox: %w", err)
		}
		if _, err := pgx.ForEachRow(rows, []any{&id}, func() error { there[id] = true; return nil }); err != nil {
			return nil, 0, fmt.Errorf("read the new shard's outbox: %w", err)
		}
	}
	// Events are only ever inserted: those f does not read were copied.
	sql, args := `SELECT event_id, to_jsonb(t)::text FROM outbox t WHERE show_id = $1`, []any{showID}
	if !f.all() {
		sql += ` AND ` + f.sql()
		args = append(args, f.base, f.span)
	}
	rows, err := stx.Query(ctx, sql+` ORDER BY xid, id`, args...)
	if err != nil {
		return nil, 0, fmt.Errorf("read the old shard's outbox: %w", err)
	}
	var missing []string
	var event string
	if _, err := pgx.ForEachRow(rows, []any{&id, &event}, func() error {
		if !there[id] {
			missing = append(missing, event)
			there[id] = true
		}
		return nil
	}); err != nil {
		return nil, 0, fmt.Errorf("read the old shard's outbox: %w", err)
	}
	n := 0
	for part := range chunks(missing) {
		tag, err := dtx.Exec(ctx, `INSERT INTO outbox (`+quoteCols("", c.cols)+`)
			SELECT `+quoteCols("r.", c.cols)+`
			  FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY e(j, n), jsonb_populate_record(NULL::outbox, e.j) r
			 ORDER BY e.n`, part)
		if err != nil {
			return nil, n, fmt.Errorf("append to the new shard's outbox: %w", err)
		}
		n += int(tag.RowsAffected())
	}
	return there, n, nil
}

// chunks yields rows as JSON arrays of at most chunk rows.
func chunks(rows []string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for len(rows) > 0 {
			k := min(chunk, len(rows))
			if !yield("[" + strings.Join(rows[:k], ",") + "]") {
				return
			}
			rows = rows[k:]
		}
	}
}
