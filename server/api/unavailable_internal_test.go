package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"github.com/seatghor/seatghor/server/pg"
)

// TestDatabaseDownAnswersUnavailable (decision 0414): a request whose
// database did not answer is told `unavailable` with DATABASE_UNAVAILABLE,
// which clients retry with the same key, not `internal`; the message names
// no server (the log has it).
func TestDatabaseDownAnswersUnavailable(t *testing.T) {
	ctx := context.Background()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	pool, err := pg.Open(ctx, "down", fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=2", port), 1)
	if err == nil {
		t.Cleanup(pool.Close)
		_, err = pool.Exec(ctx, `SELECT 1`)
	}
	require.Error(t, err)

	got := toConnect(ctx, slog.New(slog.NewTextHandler(io.Discard, nil)), fmt.Errorf("cancel order ord_1_x: %w", err))
	var ce *connect.Error
	require.True(t, errors.As(got, &ce))
	require.Equal(t, connect.CodeUnavailable, ce.Code())
	require.NotContains(t, ce.Message(), "127.0.0.1")
	var reason string
	for _, d := range ce.Details() {
		if v, derr := d.Value(); derr == nil {
			if info, ok := v.(*errdetails.ErrorInfo); ok {
				reason = info.GetReason()
			}
		}
	}
	require.Equal(t, "DATABASE_UNAVAILABLE", reason)

	// A refusal stays what it was.
	got = toConnect(ctx, slog.New(slog.NewTextHandler(io.Discard, nil)), errors.New("a bug"))
	require.True(t, errors.As(got, &ce))
	require.Equal(t, connect.CodeInternal, ce.Code())
}
