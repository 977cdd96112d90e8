// Package outbox writes events into a database's transactional outbox:
// in the same transaction as the state change they describe, so an event is
// published if and only if its change committed.
package outbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"
)

// Append writes one event of a show into the outbox of tx's database. The
// row's xid column records the writing transaction (see the migration), so
// a consumer can read the outbox without gaps.
func Append(ctx context.Context, tx pgx.Tx, showID int64, at time.Time, event proto.Message) error {
	args, err := row(showID, at, event)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, appendSQL, args...); err != nil {
		return fmt.Errorf("outbox: append %T: %w", event, err)
	}
	return nil
}

// LastXID returns the transaction id of the newest event of a show that q
// sees in its outbox (0 when there is none): the seat-map version of the
// show (decision 0130). One index lookup (shard migration 00050).
func LastXID(ctx context.Context, q Querier, showID int64) (int64, error) {
	var xid int64
	err := q.QueryRow(ctx, `
		SELECT coalesce(max(xid)::text::bigint, 0) FROM outbox WHERE show_id = $1`, showID).Scan(&xid)
	if err != nil {
		return 0, fmt.Errorf("outbox: last event of show %d: %w", showID, err)
	}
	return xid, nil
}

// Querier runs one query (a pgx.Tx, pgx.Conn or pool).
type Querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Queue is Append for a pipelined transaction (pg.Pipe): it adds the
// event's INSERT to b, to be sent with the other statements of its
// transaction.
func Queue(b *pgx.Batch, showID int64, at time.Time, event proto.Message) error {
	args, err := row(showID, at, event)
	if err != nil {
		return err
	}
	b.Queue(appendSQL, args...)
	return nil
}

// appendSQL leaves xid and recorded_at to their defaults: the writing
// transaction's id, and clock_timestamp() when the INSERT runs, which in the
// hold is the last statement before COMMIT (decision 0245: projector delay
// and lag count from it; at stays the event's occurred_at).
const appendSQL = `
		INSERT INTO outbox (show_id, event_id, event_type, payload, occurred_at)
		VALUES ($1, $2, $3, $4, $5)`

func row(showID int64, at time.Time, event proto.Message) ([]any, error) {
	payload, err := proto.Marshal(event)
	if err != nil {
		return nil, fmt.Errorf("outbox: encode %T: %w", event, err)
	}
	var id [16]byte
	_, _ = rand.Read(id[:]) // crypto/rand.Read never fails (Go 1.24+)
	return []any{showID, "evt_" + hex.EncodeToString(id[:]), string(event.ProtoReflect().Descriptor().FullName()), payload, at}, nil
}
