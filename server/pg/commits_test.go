package pg_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/internal/testkit/pgtest"
	"github.com/seatghor/seatghor/server/pg"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Cleanup()
	os.Exit(code)
}

func rung(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestNextCommitRingsOnCommitsOnly (decision 0247): the pool's bell rings
// after a transaction commits, by InTx or a Pipe, and not for a statement
// outside a transaction or a transaction that rolled back.
func TestNextCommitRingsOnCommitsOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	admin := pgtest.Server(t)
	pool, err := pg.Open(ctx, "scratch", admin.Fresh(t, "template0"), 2)
	require.NoError(t, err)
	t.Cleanup(pool.Close)

	ch := pool.NextCommit()
	_, err = pool.Exec(ctx, `SELECT 1`)
	require.NoError(t, err)
	require.False(t, rung(ch), "no transaction, no commit")

	failed := errors.New("changed my mind")
	require.ErrorIs(t, pg.InTx(ctx, pool, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `SELECT 1`)
		require.NoError(t, err)
		return failed
	}), failed)
	require.False(t, rung(ch), "a rollback is no commit")

	// Its error is ErrRolledBack or the COMMIT's own, by how the server
	// answers a pipeline after an error; either way nothing committed.
	require.Error(t, pg.InPipe(ctx, pool, func(p *pg.Pipe) error {
		b := &pgx.Batch{}
		b.Queue(`SELECT 1/0`)
		return p.Commit(ctx, b, func(br pgx.BatchResults) error {
			_, err := br.Exec()
			require.Error(t, err)
			return nil
		})
	}))
	require.False(t, rung(ch), "a failed pipe's COMMIT answers ROLLBACK")

	require.NoError(t, pg.InTx(ctx, pool, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `SELECT 1`)
		return err
	}))
	require.True(t, rung(ch), "InTx committed")

	ch = pool.NextCommit()
	require.False(t, rung(ch), "a new wait starts unrung")
	require.NoError(t, pg.InPipe(ctx, pool, func(p *pg.Pipe) error {
		b := &pgx.Batch{}
		b.Queue(`SELECT 1`)
		return p.Commit(ctx, b, func(br pgx.BatchResults) error {
			_, err := br.Exec()
			return err
		})
	}))
	require.True(t, rung(ch), "the pipe committed")
}
