// Package idempotency makes every write of Seatghor safe to retry:
// the caller's Idempotency-Key is claimed in the same transaction as the
// work, the first answer (a success or a business error) is stored with it,
// and a retry gets that answer again without the work being done twice.
package idempotency

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/pg"
)

// Retention is how long a key is remembered (R-5.1 asks for at least 24 h).
const Retention = 48 * time.Hour

// Show is the Target of a request that acts on a show.
func Show(id int64) string { return "show:" + strconv.FormatInt(id, 10) }

// Errors lists the sentinel errors of idempotency; the API answers each by
// its reason (docs/errors.md).
var Errors = []error{ErrKeyMissing, ErrKeyTooLong, ErrNoCaller, ErrKeyReused, ErrInProgress}

// ErrKeyMissing refuses a write without an Idempotency-Key.
var ErrKeyMissing = fault.SentinelOnField(fault.IdempotencyKeyMissing, Header,
	"the header is required on every write (R-5.1)")

// ErrKeyTooLong refuses a key longer than MaxKeyLen.
var ErrKeyTooLong = fault.SentinelOnField(fault.IdempotencyKeyInvalid, Header,
	fmt.Sprintf("the header is longer than %d bytes", MaxKeyLen))

// ErrNoCaller means a write reached the key's scope without a caller.
var ErrNoCaller = fault.Sentinel(fault.Unauthenticated, "no caller for the idempotency key")

// ErrKeyReused means the key was first used with a different request.
var ErrKeyReused = fault.SentinelOnField(fault.IdempotencyKeyReused, Header,
	"the key was already used with a different request")

// ErrInProgress means a request with the same key is still running.
var ErrInProgress = fault.Sentinel(fault.IdempotencyKeyInProgress, "a request with this idempotency key is still running")

// Key is one caller's idempotency key for one request.
type Key struct {
	// Scope is the caller (token subject): keys of different callers never
	// meet. The record's whole scope is (caller, procedure, Options.Target).
	Scope string
	// Key is the Idempotency-Key header.
	Key string
	// Procedure is the RPC the key was used for.
	Procedure string
	// Fingerprint is a hash of the procedure and the request message.
	Fingerprint [sha256.Size]byte
}

type keyCtx struct{}

// WithKey returns ctx carrying k.
func WithKey(ctx context.Context, k Key) context.Context { return context.WithValue(ctx, keyCtx{}, k) }

// WithoutKey returns ctx without a key: for the writes a request makes on
// behalf of something else than its caller's one request (the trips a
// timetable run makes, each its own write), which its key must not answer.
func WithoutKey(ctx context.Context) context.Context { return context.WithValue(ctx, keyCtx{}, nil) }

// FromContext returns the request's key, if it has one.
func FromContext(ctx context.Context) (Key, bool) {
	k, ok := ctx.Value(keyCtx{}).(Key)
	return k, ok
}

// Codec turns the business errors of a domain into stored records and back.
// Errors it does not accept (database trouble, timeouts) are not recorded:
// the caller may retry them with the same key.
type Codec struct {
	EncodeError func(error) (json.RawMessage, bool)
	DecodeError func(json.RawMessage) error
}

type record[T any] struct {
	Value T               `json:"value,omitempty"`
	Err   json.RawMessage `json:"error,omitempty"`
}

// Options tune Do.
type Options struct {
	// Target is what the request acts on: Show(id) for a show, or the id of
	// the hold, order, payment or refund it names; empty for a request that
	// creates what it acts on (CreateShow). With the caller and the
	// procedure it scopes the key (decision 0087): the same key for another
	// target is another request. Every target lives in one database, the
	// one Do runs in, so a reuse within a scope is always seen.
	Target string
	// Now is the time of the request.
	Now time.Time
	// Wait is how long a duplicate waits for the first request with its key
	// to finish before it is answered ErrInProgress.
	Wait time.Duration
}

// Do runs fn in a transaction on db, guarded by the key in ctx if there is
// one: the key is locked, an earlier answer is returned as it was, otherwise
// fn runs and its answer is stored in the same transaction. A business error
// (one codec accepts) rolls fn's writes back but is stored and returned like
// an answer.
func Do[T any](ctx context.Context, db pg.Beginner, codec Codec, opts Options, fn func(pgx.Tx) (T, error)) (T, error) {
	var zero T
	// run runs fn in a transaction of db (a savepoint when db is a tx).
	run := func(db pg.Beginner) (out T, err error) {
		err = pg.InTx(ctx, db, func(tx pgx.Tx) (err error) {
			out, err = fn(tx)
			return err
		})
		return out, err
	}
	key, ok := FromContext(ctx)
	if !ok {
		return run(db)
	}
	var (
		out    T
		answer error
	)
	err := pg.InTx(ctx, db, func(tx pgx.Tx) error {
		if err := lock(ctx, tx, key, opts.Wait); err != nil {
			return err
		}
		if rec, found, err := lookup[T](ctx, tx, key, opts.Target, opts.Now); err != nil {
			return err
		} else if found {
			out = rec.Value
			if len(rec.Err) > 0 {
				answer = codec.DecodeError(rec.Err)
			}
			return nil
		}
		var (
			rec record[T]
			err error
		)
		out, err = run(tx)
		switch {
		case err == nil:
			rec.Value = out
		default:
			encoded, business := codec.EncodeError(err)
			if !business {
				return err
			}
			out, answer, rec.Err = zero, err, encoded
		}
		return store(ctx, tx, key, opts.Target, opts.Now, rec)
	})
	if err != nil {
		return zero, err
	}
	return out, answer
}

const lockSQL = `SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0))`

// lockName is the advisory lock's name of a key. Length-prefixed, so ("ab",
// "c") and ("a", "bc") are different keys; a hash collision only makes two
// keys wait for each other.
func lockName(key Key) string {
	return fmt.Sprintf("idem:%d:%s:%s", len(key.Scope), key.Scope, key.Key)
}

func lock(ctx context.Context, tx pgx.Tx, key Key, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	backoff := 2 * time.Millisecond
	for {
		var got bool
		err := tx.QueryRow(ctx, lockSQL, lockName(key)).Scan(&got)
		if err != nil {
			return fmt.Errorf("lock idempotency key: %w", err)
		}
		if got {
			return nil
		}
		if time.Now().After(deadline) {
			return ErrInProgress
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 50*time.Millisecond)
	}
}

func lookup[T any](ctx context.Context, tx pgx.Tx, key Key, target string, now time.Time) (record[T], bool, error) {
	var (
		rec         record[T]
		fingerprint []byte
		outcome     []byte
	)
	err := tx.QueryRow(ctx, `
		SELECT fingerprint, outcome FROM idempotency_keys
		WHERE scope = $1 AND procedure = $2 AND target = $3 AND key = $4 AND expires_at > $5`,
		key.Scope, key.Procedure, target, key.Key, now).Scan(&fingerprint, &outcome)
	found, err := pg.Found(err)
	if err != nil {
		return rec, false, fmt.Errorf("read idempotency key: %w", err)
	}
	if !found {
		return rec, false, nil
	}
	if !bytes.Equal(fingerprint, key.Fingerprint[:]) {
		return rec, false, ErrKeyReused
	}
	if err := json.Unmarshal(outcome, &rec); err != nil {
		return rec, false, fmt.Errorf("decode idempotency record: %w", err)
	}
	return rec, true, nil
}

// storeSQL records a key's answer. An expired record of the same key may
// still be there: the new one replaces it.
const storeSQL = `
		INSERT INTO idempotency_keys (scope, procedure, target, key, fingerprint, outcome, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (scope, procedure, target, key) DO UPDATE
		SET fingerprint = excluded.fingerprint, outcome = excluded.outcome,
		    created_at = excluded.created_at, expires_at = excluded.expires_at`

func storeArgs(key Key, target string, now time.Time, outcome []byte) []any {
	return []any{key.Scope, key.Procedure, target, key.Key, key.Fingerprint[:], outcome, now, now.Add(Retention)}
}

func store[T any](ctx context.Context, tx pgx.Tx, key Key, target string, now time.Time, rec record[T]) error {
	outcome, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode idempotency record: %w", err)
	}
	_, err = tx.Exec(ctx, storeSQL, storeArgs(key, target, now, outcome)...)
	if err != nil {
		return fmt.Errorf("store idempotency record: %w", err)
	}
	return nil
}

// Purge deletes the records that expired before now; it returns how many.
func Purge(ctx context.Context, db pg.Execer, now time.Time) (int64, error) {
	tag, err := db.Exec(ctx, `DELETE FROM idempotency_keys WHERE expires_at <= $1`, now)
	if err != nil {
		return 0, fmt.Errorf("purge idempotency keys: %w", err)
	}
	return tag.RowsAffected(), nil
}
