package loadtest_test

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/clients/go/loadtest"
	"github.com/seatghor/seatghor/server/apptest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Cleanup()
	os.Exit(code)
}

// tokens mints the crowd's tokens with the platform's signer.
type tokens struct{ *auth.Tokens }

func (t tokens) Token(sub string, admin bool) (string, error) {
	role := auth.RoleUser
	if admin {
		role = auth.RoleAdmin
	}
	return t.Mint(sub, role, time.Hour)
}

// TestSmallPreset runs the small on-sale preset against the whole platform
// over HTTP: more buyers than seats, 30 % of them walking away with holds.
// No seat is ever sold twice, what the client saw confirmed is what the
// server shows booked, and the inventory runs out.
func TestSmallPreset(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 2})
	cfg := loadtest.Presets()["small"]
	cfg.BaseURL = env.URL
	res, err := loadtest.Run(context.Background(), cfg, tokens{env.App.Tokens}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	require.Len(t, res.Phases, 1)
	p := res.Phases[0]
	var table strings.Builder
	require.NoError(t, res.WriteTable(&table))
	t.Log("\n" + table.String())

	require.Zero(t, p.Oversold, "no seat sold twice")
	require.Positive(t, p.Sold)
	require.Equal(t, p.Sold, p.BookedOnServer, "confirmed orders and booked seats agree")
	require.Positive(t, p.FirstSoldOut, "more seats wanted than on sale: it sells out")
	require.LessOrEqual(t, p.Sold+p.GhostSeats, p.Seats)
	require.Positive(t, p.RPC["CreateHold"].Calls)
	require.Positive(t, p.DBWritesPerSec)
}
