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

// Rows gathers the events of many changes for one INSERT (QueueRows): a
// batch of holds in one transaction (decision 0270).
type Rows struct {
	shows      []int64
	ids, types []string
	payloads   [][]byte
	at         []time.Time
}

// Add adds one event of a show, at its time.
func (r *Rows) Add(showID int64, at time.Time, event proto.Message) error {
	args, err := row(showID, at, event)
	if err != nil {
		return err
	}
	r.shows = append(r.shows, showID)
	r.ids, r.types = append(r.ids, args[1].(string)), append(r.types, args[2].(string))
	r.payloads, r.at = append(r.payloads, args[3].([]byte)), append(r.at, at)
	return nil
}

// QueueRows adds one INSERT of every event of r to b, in the order they
// were added; nothing when r is empty.
func QueueRows(b *pgx.Batch, r *Rows) {
	if len(r.ids) == 0 {
		return
	}
	b.Queue(appendRowsSQL, r.shows, r.ids, r.types, r.payloads, r.at)
}

// appendRowsSQL is appendSQL for many rows; WITH ORDINALITY keeps their
// order in the identity column.
const appendRowsSQL = `
		INSERT INTO outbox (show_id, event_id, event_type, payload, occurred_at)
		SELECT show_id, event_id, event_type, payload, occurred_at
		FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bytea[], $5::timestamptz[])
		     WITH ORDINALITY AS e(show_id, event_id, event_type, payload, occurred_at, n)
		ORDER BY n`

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
