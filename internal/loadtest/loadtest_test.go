package loadtest_test

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/internal/loadtest"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/internal/testkit/pgtest"
	"github.com/seatghor/seatghor/internal/testkit/redistest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Cleanup()
	os.Exit(code)
}

// TestSmallPreset runs the small on-sale preset against the whole platform
// over HTTP: more buyers than seats, 30 % of them walking away with holds.
// No seat is ever sold twice, what the client saw confirmed is what the
// server shows booked, and the inventory runs out.
func TestSmallPreset(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 2})
	cfg := loadtest.Presets()["small"]
	cfg.BaseURLs, cfg.AdminURLs = []string{env.URL}, []string{env.AdminURL}
	res, err := loadtest.Run(context.Background(), cfg, loadtest.Signer(env.App.Tokens), slog.New(slog.DiscardHandler))
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

// TestSmallPresetWaitingRoom runs the crowd through a waiting room:
// every hold carries its admitted Queue-Token, the controller's admission
// rate is sampled, and still no seat is sold twice.
func TestSmallPresetWaitingRoom(t *testing.T) {
	r := redistest.New(t)
	env := apptest.New(t, apptest.Options{Shards: 1, RedisURL: r.URL, RedisPrefix: r.Prefix, Projectors: true})
	require.NotNil(t, env.App.WaitingRooms)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { env.App.WaitingRooms.RunAdmitter(ctx); close(done) }() // the workers role
	t.Cleanup(func() { stop(); <-done })

	cfg := loadtest.Presets()["small"]
	cfg.BaseURLs, cfg.AdminURLs, cfg.Trips, cfg.Buyers, cfg.Arrival = []string{env.URL}, []string{env.AdminURL}, 1, 80, 3*time.Second
	cfg.WaitingRoom, cfg.MinAdmission, cfg.MaxAdmission, cfg.PollInterval = true, 10, 40, 200*time.Millisecond
	res, err := loadtest.Run(context.Background(), cfg, loadtest.Signer(env.App.Tokens), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	p := res.Phases[0]
	var table strings.Builder
	require.NoError(t, res.WriteTable(&table))
	t.Log("\n" + table.String())

	require.Zero(t, p.Oversold)
	require.Equal(t, p.Sold, p.BookedOnServer)
	require.Positive(t, p.Sold)
	require.Positive(t, p.RPC["Join"].Calls)
	require.Empty(t, p.RPC["CreateHold"].Errors["permission_denied"], "every hold had its admitted token")
	require.NotEmpty(t, p.Admission, "the admission rate was sampled")
	var admitted int64
	for _, a := range p.Admission {
		admitted = max(admitted, a.Admitted)
	}
	require.Positive(t, admitted)
}
