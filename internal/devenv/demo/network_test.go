package demo_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/internal/devenv/demo"
	"github.com/seatghor/seatghor/internal/testkit/pgtest"
	"github.com/seatghor/seatghor/internal/testkit/schematest"
	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/migrations"
	"github.com/seatghor/seatghor/server/network"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/shard"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Cleanup()
	os.Exit(code)
}

// TestDemoNetworkLooksReal: the demo network has at least five routes from
// Dhaka by three operators, counters named in English and Bengali at both
// ends, 2+2 and 2+1 coaches and a sleeper; loaded twice it is the same,
// and its timetables make 30 days of trips once.
func TestDemoNetworkLooksReal(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	routes := demo.Routes()
	operators := map[string]bool{}
	fromDhaka := 0
	for _, r := range routes {
		operators[r.GetOrganizationId()] = true
		stops := r.GetStops()
		if stops[0].GetPlace() == "Dhaka" {
			fromDhaka++
		}
		require.NotEmpty(t, r.GetNameBn(), r.GetRouteId())
		for i, st := range []int{0, len(stops) - 1} {
			require.NotEmpty(t, stops[st].GetCounters(), "%s: counters at both ends", r.GetRouteId())
			for _, c := range stops[st].GetCounters() {
				require.NotEmpty(t, c.GetNameBn(), c.GetCounterId())
				require.NotEmpty(t, c.GetAddress(), c.GetCounterId())
				require.Equal(t, i == 0, c.GetBoarding(), c.GetCounterId())
			}
		}
	}
	require.GreaterOrEqual(t, fromDhaka, 5)
	require.GreaterOrEqual(t, len(operators), 3)
	coaches := map[string]bool{}
	for _, tt := range demo.Timetables(now) {
		coaches[tt.GetLayoutTemplateId()] = true
	}
	require.Equal(t, map[string]bool{"coach-2x2-40": true, "coach-2x1-27": true, "sleeper-1x2-30": true}, coaches)

	open := func(name string, kind migrations.Kind) *pg.Pool {
		pool, err := pg.Open(t.Context(), name, schematest.Fresh(t, kind), 8, pg.WithRole(pg.AppRole))
		require.NoError(t, err)
		t.Cleanup(pool.Close)
		return pool
	}
	cat := open("catalog", migrations.Catalog)
	router := shard.NewRouter(cat, []*pg.Pool{open("shard-0", migrations.Shard), open("shard-1", migrations.Shard)})
	clk := clock.NewFake(now)
	catalogs := catalog.NewService(router, clk, booking.Inventory{})
	net, err := network.NewService(cat, catalogs, clk, network.Config{})
	require.NoError(t, err)
	ctx := context.Background()
	for range 2 {
		require.NoError(t, demo.LoadNetwork(ctx, catalogs, net, now))
	}
	start := time.Now()
	runs, err := net.Run(ctx, network.Caller{UserID: demo.Manager, Admin: true}, network.RunRequest{})
	require.NoError(t, err)
	made := 0
	for _, r := range runs {
		require.Empty(t, r.GetFailure(), r.GetTimetableId())
		made += len(r.GetMade())
	}
	t.Logf("the demo network's timetables made %d trips of 30 days in %s", made, time.Since(start).Round(time.Millisecond))
	require.Greater(t, made, 400)
	again, err := net.Run(ctx, network.Caller{Admin: true}, network.RunRequest{})
	require.NoError(t, err)
	for _, r := range again {
		require.Empty(t, r.GetMade(), r.GetTimetableId())
		require.Empty(t, r.GetWithdrawn(), r.GetTimetableId())
	}
}
