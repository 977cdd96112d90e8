package idempotency

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/pg"
)

// Pipelined is a write whose work fits in two pipelined batches
// (decision 0125): statements whose results decide the answer, then
// statements that complete the work once the answer is known (its outbox
// row). Slow is the same work done the ordinary way, as Do's fn.
type Pipelined[T any] struct {
	// Lock is the work's first statement: a SELECT list (advisory locks,
	// settings) whose values are not read, its parameters numbered from
	// $2; LockArgs are its arguments. It runs in one statement with the
	// key's lock (decision 0226), so Work's statements read with both held.
	Lock     string
	LockArgs []any
	// Work queues the work's other statements. They go out in the first
	// round trip, right after the locks, before those have answered: they
	// run speculatively, and nothing they do is committed unless the key
	// was free and unused.
	Work func(b *pgx.Batch)
	// Read reads the results of Work's statements, in order. done is false
	// when the work did not happen in full — a business refusal, or any
	// case the pipeline does not answer itself — and then Slow answers.
	Read func(br pgx.BatchResults) (out T, done bool, err error)
	// Finish queues the statements that complete the work; they commit in
	// the second round trip with the key's record.
	Finish func(b *pgx.Batch, out T) error
	// Slow answers every case the pipeline leaves: a key in use or already
	// answered, and every refusal, exactly as Do would.
	Slow func(pgx.Tx) (T, error)
}

// lockKeySQL takes the key's lock ($1, none when empty) without waiting,
// in one statement with the work's own locks (Pipelined.Lock).
var lockKeySQL = `SELECT ` + TryLockSQL("$1::text") + `, `

// storeNewSQL records a new key's answer in the pipeline. With the key's
// lock held, a record of the key can only be one committed before, and the
// primary key refuses it whatever this transaction's snapshot saw: the
// insert is the look-up (decision 0226). Any record, live or expired, makes
// it fail; Do then replays the live one or replaces the expired one.
const storeNewSQL = `
		INSERT INTO idempotency_keys (scope, procedure, target, key, fingerprint, outcome, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`

// DoPipelined is Do for a Pipelined write on a pool: in the common case —
// the key is free and new, the work succeeds — the key's lock, the work,
// the answer's record and COMMIT take two round trips. Every other case
// rolls the speculative work back and runs Do with w.Slow, so duplicates,
// replays and refusals are answered by the one proven path (R-5.1,
// decision 0003).
func DoPipelined[T any](ctx context.Context, db *pg.Pool, codec Codec, opts Options, w Pipelined[T]) (T, error) {
	var (
		zero T
		out  T
		fast bool
	)
	key, hasKey := FromContext(ctx)
	err := pg.InPipe(ctx, db, func(p *pg.Pipe) error {
		b := &pgx.Batch{}
		name := ""
		if hasKey {
			name = lockName(key)
		}
		b.Queue(lockKeySQL+w.Lock, append([]any{name}, w.LockArgs...)...)
		w.Work(b)
		free, done := true, false
		err := p.Send(ctx, b, func(br pgx.BatchResults) error {
			rows, err := br.Query()
			if err != nil {
				return fmt.Errorf("lock idempotency key: %w", err)
			}
			var locks []any
			if rows.Next() {
				locks, err = rows.Values()
			}
			rows.Close()
			if err == nil {
				err = rows.Err()
			}
			if err != nil || len(locks) == 0 {
				return fmt.Errorf("lock idempotency key: %w (%d values)", err, len(locks))
			}
			free, _ = locks[0].(bool)
			out, done, err = w.Read(br)
			return err
		})
		if err != nil || !free || !done {
			return err // InPipe rolls the speculative work back
		}
		b = &pgx.Batch{}
		if err := w.Finish(b, out); err != nil {
			return err
		}
		if hasKey {
			outcome, err := json.Marshal(record[T]{Value: out})
			if err != nil {
				return fmt.Errorf("encode idempotency record: %w", err)
			}
			b.Queue(storeNewSQL, storeArgs(key, opts.Target, opts.Now, outcome)...)
		}
		err = p.Commit(ctx, b, func(br pgx.BatchResults) error {
			for range b.QueuedQueries {
				if _, err := br.Exec(); err != nil {
					return err
				}
			}
			return nil
		})
		if recorded(err) {
			return nil // the key has a record: Do answers
		}
		if err != nil {
			return fmt.Errorf("complete the work: %w", err)
		}
		fast = true
		return nil
	})
	switch {
	case err != nil:
		return zero, err
	case fast:
		return out, nil
	}
	return Do(ctx, db, codec, opts, w.Slow)
}

// recorded tells whether err is storeNewSQL's refusal: the key already has
// a record. The transaction failed with it and was rolled back.
func recorded(err error) bool {
	return pg.IsUniqueViolation(err, "idempotency_keys_pkey")
}
