package idempotency

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Claim is one request's key as a batched write takes and records it
// (decision 0270): many requests in one transaction, each with its own key.
// The batch takes every key's lock without waiting, checks in a later
// statement (whose snapshot is taken with the locks held) that no key has a
// record, and records each answer with RecordAll. A request whose key is
// locked or recorded is left out of the batch and answered by Do.
type Claim struct {
	key    Key
	hasKey bool
	target string
	now    time.Time
}

// ClaimOf is the claim of the request in ctx, scoped as opts scope Do's.
func ClaimOf(ctx context.Context, opts Options) Claim {
	key, ok := FromContext(ctx)
	return Claim{key: key, hasKey: ok, target: opts.Target, now: opts.Now}
}

// LockName is the name of the key's advisory lock, as Do and DoPipelined
// take it; empty when the request has no key.
func (c Claim) LockName() string {
	if !c.hasKey {
		return ""
	}
	return lockName(c.key)
}

// Columns are the values UnrecordedSQL compares: the record's scope,
// procedure, target and key (all empty without a key).
func (c Claim) Columns() (scope, procedure, target, key string) {
	if !c.hasKey {
		return "", "", "", ""
	}
	return c.key.Scope, c.key.Procedure, c.target, c.key.Key
}

// TryLockSQL is the condition that takes the advisory lock named by the
// SQL expression name (LockName's value) without waiting: true when taken,
// or when name is empty. A CASE, not an OR: only CASE promises that an
// empty name takes no lock.
func TryLockSQL(name string) string {
	return `CASE WHEN ` + name + ` = '' THEN true ELSE pg_try_advisory_xact_lock(hashtextextended(` + name + `, 0)) END`
}

// UnrecordedSQL is the condition, over SQL expressions of Columns' four
// values, that the key has no record, live or expired: an expired one is
// Do's to replace. It must run in a statement after the one that took the
// key's lock (TryLockSQL), so that a record committed by the lock's last
// holder is in its snapshot.
//
// It is a scalar subquery, not NOT EXISTS: PostgreSQL may run a correlated
// EXISTS as a hashed subplan, which reads every record of the table.
func UnrecordedSQL(scope, procedure, target, key string) string {
	return `(` + key + ` = '' OR (SELECT true FROM idempotency_keys k WHERE k.scope = ` + scope +
		` AND k.procedure = ` + procedure + ` AND k.target = ` + target + ` AND k.key = ` + key + ` LIMIT 1) IS NULL)`
}

// recordAllSQL records many keys' answers in one statement. No record of
// any key can exist (UnrecordedSQL, with its lock held), so a conflict
// fails the whole batch, which then answers every request with Do.
const recordAllSQL = `
		INSERT INTO idempotency_keys (scope, procedure, target, key, fingerprint, outcome, created_at, expires_at)
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bytea[], $6::bytea[],
		                     $7::timestamptz[], $8::timestamptz[])`

// RecordAll queues on b the records of the claims that have a key, each
// with its answer (values[i] for claims[i]), exactly as DoPipelined records
// one, so a retry replays it.
func RecordAll[T any](b *pgx.Batch, claims []Claim, values []T) error {
	var (
		scopes, procedures, targets, keys []string
		fingerprints, outcomes            [][]byte
		created, expires                  []time.Time
	)
	for i, c := range claims {
		if !c.hasKey {
			continue
		}
		outcome, err := json.Marshal(record[T]{Value: values[i]})
		if err != nil {
			return fmt.Errorf("encode idempotency record: %w", err)
		}
		scopes, procedures = append(scopes, c.key.Scope), append(procedures, c.key.Procedure)
		targets, keys = append(targets, c.target), append(keys, c.key.Key)
		fingerprints, outcomes = append(fingerprints, c.key.Fingerprint[:]), append(outcomes, outcome)
		created, expires = append(created, c.now), append(expires, c.now.Add(Retention))
	}
	if len(keys) > 0 {
		b.Queue(recordAllSQL, scopes, procedures, targets, keys, fingerprints, outcomes, created, expires)
	}
	return nil
}
