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
	// Work queues the work's statements. They go out in the first round
	// trip, right after the key's lock and look-up, before those have
	// answered: they run speculatively, and nothing they do is committed
	// unless the key was free and unused.
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

// lookupLiveSQL tells whether a key already has a live record.
const lookupLiveSQL = `
	SELECT EXISTS (SELECT 1 FROM idempotency_keys
	               WHERE scope = $1 AND procedure = $2 AND target = $3 AND key = $4 AND expires_at > $5)`

// DoPipelined is Do for a Pipelined write on a pool: in the common case —
// the key is free and new, the work succeeds — the key's lock, its
// look-up, the work, the answer's record and COMMIT take two round trips.
// Every other case rolls the speculative work back and runs Do with
// w.Slow, so duplicates, replays and refusals are answered by the one
// proven path (R-5.1, decision 0003).
func DoPipelined[T any](ctx context.Context, db *pg.Pool, codec Codec, opts Options, w Pipelined[T]) (T, error) {
	var (
		zero T
		out  T
		fast bool
	)
	key, hasKey := FromContext(ctx)
	err := pg.InPipe(ctx, db, func(p *pg.Pipe) error {
		b := &pgx.Batch{}
		if hasKey {
			// Two statements: the look-up's snapshot is taken after the lock
			// is held, so a first request that committed before is seen.
			b.Queue(lockSQL, lockName(key))
			b.Queue(lookupLiveSQL, key.Scope, key.Procedure, opts.Target, key.Key, opts.Now)
		}
		w.Work(b)
		free, done := true, false
		err := p.Send(ctx, b, func(br pgx.BatchResults) error {
			if hasKey {
				var got, used bool
				if err := br.QueryRow().Scan(&got); err != nil {
					return fmt.Errorf("lock idempotency key: %w", err)
				}
				if err := br.QueryRow().Scan(&used); err != nil {
					return fmt.Errorf("read idempotency key: %w", err)
				}
				free = got && !used
			}
			var err error
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
			b.Queue(storeSQL, storeArgs(key, opts.Target, opts.Now, outcome)...)
		}
		err = p.Commit(ctx, b, func(br pgx.BatchResults) error {
			for range b.QueuedQueries {
				if _, err := br.Exec(); err != nil {
					return err
				}
			}
			return nil
		})
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
