package pg_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/internal/testkit/pgtest"
	"github.com/seatghor/seatghor/server/pg"
)

// TestUnreachable (decision 0414): a database that did not answer — no
// server on the port, the server ending the connection, the connection
// gone — is told from one that refused the request, on real connections.
func TestUnreachable(t *testing.T) {
	ctx := context.Background()
	admin := pgtest.Server(t)
	url := admin.Fresh(t, "template0")

	// Nothing listens: a port taken and released at once.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	down, err := pg.Open(ctx, "down", fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=2", port), 1)
	if err == nil {
		t.Cleanup(down.Close)
		_, err = down.Exec(ctx, `SELECT 1`)
	}
	require.Error(t, err)
	require.True(t, pg.Unreachable(err), "no server: %v", err)

	// The server ends the connection (an administrator, a restart): 57P01,
	// or the connection found broken.
	victim, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = victim.Close(ctx) })
	killer, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = killer.Close(ctx) })
	var killed bool
	require.NoError(t, killer.QueryRow(ctx, `SELECT pg_terminate_backend($1)`, victim.PgConn().PID()).Scan(&killed))
	require.True(t, killed)
	_, err = victim.Exec(ctx, `SELECT 1`)
	require.Error(t, err)
	require.True(t, pg.Unreachable(fmt.Errorf("read: %w", err)), "terminated: %v", err)
	_, err = victim.Exec(ctx, `SELECT 1`)
	require.Error(t, err)
	require.True(t, pg.Unreachable(err), "closed: %v", err)

	// Refusals are not: the server answered.
	_, err = killer.Exec(ctx, `SELECT * FROM no_such_table`)
	require.Error(t, err)
	require.False(t, pg.Unreachable(err), "an error of the statement")
	require.False(t, pg.Unreachable(&pgconn.PgError{Code: "23505"}), "a unique violation")
	require.False(t, pg.Unreachable(pgx.ErrNoRows))
	require.False(t, pg.Unreachable(errors.New("the show is sold out")))
	require.False(t, pg.Unreachable(nil))
	require.True(t, pg.Unreachable(&pgconn.PgError{Code: "57P03"}), "still starting")
}
