package pg

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Pipe is a transaction whose statements travel in pipelined batches: BEGIN
// goes out with the first batch and COMMIT with the last, so a transaction
// of two batches costs two round trips, whatever its number of statements
// (decision 0125). Each statement of a batch still runs on its own, in
// order, with its own snapshot (READ COMMITTED), so a lock taken by one is
// held before the next one reads.
type Pipe struct {
	conn   *pgxpool.Conn
	begun  bool
	closed bool
}

// ErrRolledBack means COMMIT did not commit: the transaction had failed.
var ErrRolledBack = errors.New("the transaction was rolled back")

// InPipe runs fn with a Pipe on one connection of p. Unless fn committed
// (Pipe.Commit), the transaction is rolled back when fn returns. Like InTx it
// owns begin, commit and rollback.
func InPipe(ctx context.Context, p *Pool, fn func(*Pipe) error) error {
	conn, err := p.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquire: %w", err)
	}
	t := &Pipe{conn: conn}
	defer t.end(ctx)
	return fn(t)
}

// end rolls back whatever is still open and gives the connection back. A
// connection left in a transaction (the rollback failed) is closed by the
// pool instead of reused.
func (t *Pipe) end(ctx context.Context) {
	if t.begun && !t.closed && t.conn.Conn().PgConn().TxStatus() != 'I' {
		// The rollback error is secondary to the one that ended fn.
		_, _ = t.conn.Exec(context.WithoutCancel(ctx), "ROLLBACK")
	}
	t.conn.Release()
}

// Send sends b in one round trip (opening the transaction with it the first
// time) and lets read read its results, in order.
func (t *Pipe) Send(ctx context.Context, b *pgx.Batch, read func(pgx.BatchResults) error) error {
	return t.send(ctx, b, false, read)
}

// Commit sends b followed by COMMIT in one round trip, lets read read b's
// results, and then checks that the transaction committed.
func (t *Pipe) Commit(ctx context.Context, b *pgx.Batch, read func(pgx.BatchResults) error) error {
	return t.send(ctx, b, true, read)
}

func (t *Pipe) send(ctx context.Context, b *pgx.Batch, commit bool, read func(pgx.BatchResults) error) (err error) {
	if t.closed {
		return errors.New("pipe: the transaction has ended")
	}
	queries := make([]*pgx.QueuedQuery, 0, len(b.QueuedQueries)+2)
	begin := !t.begun
	if begin {
		queries = append(queries, &pgx.QueuedQuery{SQL: "BEGIN"})
	}
	queries = append(queries, b.QueuedQueries...)
	if commit {
		queries = append(queries, &pgx.QueuedQuery{SQL: "COMMIT"})
	}
	t.begun = true
	br := t.conn.SendBatch(ctx, &pgx.Batch{QueuedQueries: queries})
	defer func() {
		if cerr := br.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	if begin {
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("begin: %w", err)
		}
	}
	if err := read(br); err != nil {
		return err
	}
	if commit {
		tag, err := br.Exec()
		if err != nil {
			return fmt.Errorf("commit: %w", err)
		}
		// COMMIT of a failed transaction answers ROLLBACK, not an error.
		if tag.String() != "COMMIT" {
			return ErrRolledBack
		}
		t.closed = true
	}
	return nil
}
