package network_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	networkv1 "github.com/seatghor/seatghor/gen/seatghor/network/v1"
	"github.com/seatghor/seatghor/internal/testkit/pgtest"
	"github.com/seatghor/seatghor/internal/testkit/schematest"
	"github.com/seatghor/seatghor/server/audit"
	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/fault"
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

// platform is a catalog database and two shards, fresh for one test,
// opened as the application opens them, with a fake clock: the catalog,
// booking (to hold seats of a trip) and the network over them.
type platform struct {
	router   *shard.Router
	clock    *clock.Fake
	catalog  *catalog.Service
	booking  *booking.Service
	network  *network.Service
	registry *prometheus.Registry
}

// manager manages the organisation "hanif"; admin is an admin.
var (
	manager = network.Caller{UserID: "hanif-mgr"}
	admin   = network.Caller{UserID: "root", Admin: true}
)

func newPlatform(t *testing.T, now time.Time) *platform {
	t.Helper()
	open := func(name string, kind migrations.Kind) *pg.Pool {
		pool, err := pg.Open(t.Context(), name, schematest.Fresh(t, kind), 6, pg.WithRole(pg.AppRole))
		require.NoError(t, err)
		t.Cleanup(pool.Close)
		return pool
	}
	cat := open("catalog", migrations.Catalog)
	router := shard.NewRouter(cat, []*pg.Pool{open("shard-0", migrations.Shard), open("shard-1", migrations.Shard)})
	p := &platform{router: router, clock: clock.NewFake(now), registry: prometheus.NewRegistry()}
	p.catalog = catalog.NewService(router, p.clock, booking.Inventory{})
	p.booking = booking.NewService(router, p.catalog, p.clock, booking.Config{})
	var err error
	p.network, err = network.NewService(cat, p.catalog, p.clock, network.Config{Registerer: p.registry})
	require.NoError(t, err)
	ctx := t.Context()
	_, err = p.catalog.CreateOrganization(ctx, "root", "hanif", "Hanif Enterprise", "")
	require.NoError(t, err)
	_, err = p.catalog.SetMember(ctx, audit.Actor{Kind: audit.ActorAdmin, ID: "root"}, "hanif", manager.UserID, catalog.RoleManager)
	require.NoError(t, err)
	return p
}

// dhakaChattogram is Hanif's Dhaka → Chattogram route via Cumilla and
// Feni, with counters at both ends; places in their old spellings.
func dhakaChattogram() *networkv1.Route {
	return &networkv1.Route{RouteId: "hanif-dhaka-ctg", OrganizationId: "hanif", Stops: []*catalogv1.TripStop{
		{Place: "Dhaka", MinutesFromStart: 0, Counters: []*catalogv1.Counter{
			{CounterId: "kalabagan", Name: "Kalabagan", NameBn: "কলাবাগান", Boarding: true},
			{CounterId: "sayedabad", Name: "Sayedabad", NameBn: "সায়েদাবাদ", Boarding: true, MinutesAfterDeparture: 40},
		}},
		{Place: "Comilla", MinutesFromStart: 150, Counters: []*catalogv1.Counter{
			{CounterId: "padua-bazar", Name: "Padua Bazar", NameBn: "পদুয়ার বাজার", Boarding: true, Dropping: true, MinutesAfterDeparture: 150},
		}},
		{Place: "Feni", MinutesFromStart: 210},
		{Place: "Chittagong", MinutesFromStart: 330, Counters: []*catalogv1.Counter{
			{CounterId: "dampara", Name: "Dampara", NameBn: "দামপাড়া", Dropping: true, MinutesAfterDeparture: 340},
		}},
	}}
}

// fares prices every pair of the route in one class.
func fares(perStop int64) []*catalogv1.Fare {
	ids := []string{"dhaka", "cumilla", "feni", "chattogram"}
	var out []*catalogv1.Fare
	for i := range ids {
		for j := i + 1; j < len(ids); j++ {
			out = append(out, &catalogv1.Fare{FromStopId: ids[i], ToStopId: ids[j], PriceMinor: perStop * int64(j-i)})
		}
	}
	return out
}

// morning runs the route daily at 08:00 Dhaka time on a 40-seat coach.
func morning() *networkv1.Timetable {
	return &networkv1.Timetable{TimetableId: "hanif-ctg-morning", RouteId: "hanif-dhaka-ctg",
		Days: []networkv1.Weekday{1, 2, 3, 4, 5, 6, 7}, DepartureTimes: []string{"08:00"},
		Sections: []*catalogv1.Section{{Name: "Economy", Rows: []string{"A", "B", "C", "D", "E", "F", "G", "H", "I", "J"}, SeatsPerRow: 4}},
		Fares:    fares(30000),
	}
}

func (p *platform) create(t *testing.T, r *networkv1.Route, tt *networkv1.Timetable) *networkv1.TimetableRun {
	t.Helper()
	_, err := p.network.CreateRoute(t.Context(), manager, r)
	require.NoError(t, err)
	_, run, err := p.network.CreateTimetable(t.Context(), manager, tt)
	require.NoError(t, err)
	require.Empty(t, run.GetFailure())
	return run
}

func (p *platform) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, p.router.Catalog().QueryRow(t.Context(), sql, args...).Scan(&n))
	return n
}

var dhaka = func() *time.Location {
	l, err := time.LoadLocation("Asia/Dhaka")
	if err != nil {
		panic(err)
	}
	return l
}()

// TestTimetableMakesThirtyDaysOfTrips: a daily timetable makes a trip a
// day for 30 days, today included, each a bus trip of the route at 08:00
// Dhaka time with its stops and the organisation's name.
func TestTimetableMakesThirtyDaysOfTrips(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 30, 0, 0, time.UTC) // 06:30 in Dhaka: today's 08:00 is ahead
	p := newPlatform(t, now)
	run := p.create(t, dhakaChattogram(), morning())
	require.Len(t, run.GetMade(), 30)
	require.Equal(t, "2026-12-01", run.GetFromDate())
	require.Equal(t, "2026-12-30", run.GetToDate())
	require.Zero(t, run.GetUnchanged())
	for i, m := range run.GetMade() {
		day := time.Date(2026, 12, 1+i, 8, 0, 0, 0, dhaka)
		require.Equal(t, day.Format(time.DateOnly), m.GetDate())
		require.Equal(t, "08:00", m.GetDepartureTime())
		require.Equal(t, day.UTC(), m.GetStartsAt().AsTime())
		show, err := p.catalog.GetShow(t.Context(), m.GetShowId())
		require.NoError(t, err)
		require.Equal(t, catalogv1.ShowKind_SHOW_KIND_BUS_TRIP, show.Kind)
		require.Equal(t, "Dhaka to Chattogram 08:00", show.Title)
		require.Equal(t, "Hanif Enterprise", show.Operator)
		require.Equal(t, "hanif", show.OrganizationID)
		require.Equal(t, "hanif-dhaka-ctg", show.RouteID)
		require.Equal(t, "Asia/Dhaka", show.TimeZone)
		require.Equal(t, "Dhaka", show.Origin)
		require.Equal(t, "Chattogram", show.Destination)
		require.Equal(t, 40, show.SeatCount)
		require.Equal(t, int64(90000), show.Sections[0].PriceMinor, "a plain section's seat costs the whole route's fare")
		require.Equal(t, "timetable:hanif-ctg-morning", show.CreatedBy)
		require.True(t, show.OnSaleAt.Equal(now), "on sale as soon as it is made")
		require.Equal(t, "hanif-dhaka-ctg", show.Proto().GetRouteId())
	}
	require.Equal(t, 30, p.count(t, `SELECT count(*) FROM timetable_trips WHERE timetable_id = 'hanif-ctg-morning'`))
	require.Equal(t, 30.0, metric(t, p, "seatghor_timetable_trips_made_total"))
}

// metric sums a counter of the network's registry over its series.
func metric(t *testing.T, p *platform, name string) float64 {
	t.Helper()
	mfs, err := p.registry.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == name {
			var sum float64
			for _, m := range mf.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
			return sum
		}
	}
	return 0
}

// TestSecondRunMakesNothing: running again, from the API or from four
// job processes at once, makes no trip twice: the trip's key is claimed
// with its show.
func TestSecondRunMakesNothing(t *testing.T) {
	p := newPlatform(t, time.Date(2026, 12, 1, 0, 30, 0, 0, time.UTC))
	p.create(t, dhakaChattogram(), morning())
	runs, err := p.network.Run(t.Context(), manager, network.RunRequest{OrganizationID: "hanif"})
	require.NoError(t, err)
	require.Len(t, runs, 1)
	require.Empty(t, runs[0].GetMade())
	require.EqualValues(t, 30, runs[0].GetUnchanged())

	// A day later the window has moved on: one new trip, the 31st day.
	p.clock.Advance(24 * time.Hour)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { p.network.RunAll(context.Background()) })
	}
	wg.Wait()
	runs, err = p.network.Run(t.Context(), admin, network.RunRequest{})
	require.NoError(t, err)
	require.Empty(t, runs[0].GetMade())
	require.EqualValues(t, 30, runs[0].GetUnchanged(), "today's departure is still ahead; 30 days from today")
	require.Equal(t, 31, p.count(t, `SELECT count(*) FROM timetable_trips`))
	require.Equal(t, 31, p.count(t, `SELECT count(*) FROM shows WHERE route_id = 'hanif-dhaka-ctg'`))
	require.Equal(t, 0, p.count(t, `
		SELECT count(*) FROM (SELECT starts_at FROM shows WHERE route_id = 'hanif-dhaka-ctg' GROUP BY starts_at HAVING count(*) > 1) d`))
}

// TestEditLeavesSoldTripsAlone: a new fare withdraws and remakes every
// trip nobody held, and keeps the one with held seats as it was, saying
// so once in the log's metric and in every run's answer.
func TestEditLeavesSoldTripsAlone(t *testing.T) {
	p := newPlatform(t, time.Date(2026, 12, 1, 0, 30, 0, 0, time.UTC))
	first := p.create(t, dhakaChattogram(), morning())
	sold := first.GetMade()[2]
	_, err := p.booking.CreateHold(t.Context(), "rumana", booking.HoldRequest{ShowID: sold.GetShowId(), Seats: []string{"A1", "A2"}})
	require.NoError(t, err)

	tt := morning()
	tt.Fares = fares(35000)
	_, run, err := p.network.UpdateTimetable(t.Context(), manager, tt, 1)
	require.NoError(t, err)
	require.Empty(t, run.GetFailure())
	require.Len(t, run.GetWithdrawn(), 29)
	require.Len(t, run.GetMade(), 29)
	require.Len(t, run.GetLeftAlone(), 1)
	kept := run.GetLeftAlone()[0]
	require.Equal(t, sold.GetShowId(), kept.GetTrip().GetShowId())
	require.Equal(t, networkv1.LeftAloneReason_LEFT_ALONE_REASON_HAS_SALES, kept.GetReason())
	require.EqualValues(t, 2, kept.GetSeatsHeld())
	require.Equal(t, "fares", kept.GetChange())

	// The kept trip sells at the old fare; the others are new shows at the new.
	show, err := p.catalog.GetShow(t.Context(), sold.GetShowId())
	require.NoError(t, err)
	require.Equal(t, int64(90000), show.Sections[0].PriceMinor)
	for _, w := range run.GetWithdrawn() {
		_, err := p.catalog.GetShow(t.Context(), w.GetShowId())
		require.ErrorIs(t, err, catalog.ErrNotFound, "withdrawn trip %d", w.GetShowId())
		require.Equal(t, 0, countShard(t, p, w.GetShowId()), "its seats are gone from its shard")
	}
	for _, m := range run.GetMade() {
		show, err := p.catalog.GetShow(t.Context(), m.GetShowId())
		require.NoError(t, err)
		require.Equal(t, int64(105000), show.Sections[0].PriceMinor)
	}
	require.Equal(t, 29, p.count(t, `SELECT count(*) FROM outbox WHERE event_type = 'seatghor.events.v1.ShowWithdrawn'`))
	require.Equal(t, 29, p.count(t, `SELECT count(*) FROM audit_log WHERE action = 'show.withdraw'`))
	require.Equal(t, 30, p.count(t, `SELECT count(*) FROM timetable_trips`))

	// Every later run lists it again; the log and the metric tell it once.
	runs, err := p.network.Run(t.Context(), manager, network.RunRequest{TimetableIDs: []string{"hanif-ctg-morning"}})
	require.NoError(t, err)
	require.Len(t, runs[0].GetLeftAlone(), 1)
	require.Empty(t, runs[0].GetWithdrawn())
	require.Empty(t, runs[0].GetMade())
	require.EqualValues(t, 29, runs[0].GetUnchanged())
	require.Equal(t, 1.0, metric(t, p, "seatghor_timetable_trips_left_alone_total"))

	// A departure moved: the sold 08:00 trip no longer runs but is kept;
	// the 08:30 one runs beside it that day.
	tt.DepartureTimes = []string{"08:30"}
	_, run, err = p.network.UpdateTimetable(t.Context(), manager, tt, 0)
	require.NoError(t, err)
	require.Len(t, run.GetLeftAlone(), 1)
	require.Equal(t, "no longer runs", run.GetLeftAlone()[0].GetChange())
	require.Len(t, run.GetWithdrawn(), 29)
	require.Len(t, run.GetMade(), 30)
	require.Equal(t, 2.0, metric(t, p, "seatghor_timetable_trips_left_alone_total"))
}

// countShard counts a show's seat rows on its shard.
func countShard(t *testing.T, p *platform, showID int64) int {
	t.Helper()
	n := 0
	for _, s := range p.router.Shards() {
		var c int
		require.NoError(t, s.QueryRow(t.Context(), `SELECT count(*) FROM seats WHERE show_id = $1`, showID).Scan(&c))
		n += c
	}
	return n
}

// TestWithdrawalRacesAHold: a hold and the withdrawal of its trip, at
// once, many times: either the hold lands and the trip is kept, or the
// trip goes and the hold finds nothing; never a hold on a withdrawn trip.
func TestWithdrawalRacesAHold(t *testing.T) {
	p := newPlatform(t, time.Date(2026, 12, 1, 0, 30, 0, 0, time.UTC))
	tt := morning()
	tt.DepartureTimes = []string{"08:00", "09:00", "10:00", "11:00", "12:00", "13:00"}
	run := p.create(t, dhakaChattogram(), tt)
	var held, kept int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, m := range run.GetMade()[:60] {
		wg.Go(func() {
			_, err := p.booking.CreateHold(context.Background(), fmt.Sprintf("buyer-%d", i), booking.HoldRequest{ShowID: m.GetShowId(), Seats: []string{"C3"}})
			if err == nil {
				mu.Lock()
				held++
				mu.Unlock()
			}
		})
	}
	tt.Fares = fares(31000)
	wg.Go(func() {
		_, r, err := p.network.UpdateTimetable(context.Background(), manager, tt, 0)
		require.NoError(t, err)
		mu.Lock()
		kept = len(r.GetLeftAlone())
		mu.Unlock()
	})
	wg.Wait()
	require.Equal(t, held, kept, "a trip is kept exactly when its hold landed")
	var stray int
	for _, s := range p.router.Shards() {
		var n int
		require.NoError(t, s.QueryRow(t.Context(), `
			SELECT count(*) FROM holds h WHERE NOT EXISTS (SELECT FROM seats s WHERE s.hold_id = h.hold_id)`).Scan(&n))
		stray += n
	}
	require.Zero(t, stray, "no hold without its seat")
}

// TestDaylightSavingKeepsWallClockTimes: a London timetable's 08:00 coach
// leaves at 08:00 local time on both sides of the change to summer time,
// an hour earlier in UTC; its 01:30 coach on the night the clock jumps
// leaves when the clock reads 02:30.
func TestDaylightSavingKeepsWallClockTimes(t *testing.T) {
	p := newPlatform(t, time.Date(2027, 3, 20, 0, 0, 0, 0, time.UTC))
	tt := morning()
	tt.TimeZone = "Europe/London"
	tt.DepartureTimes = []string{"01:30", "08:00"}
	run := p.create(t, dhakaChattogram(), tt)
	london, err := time.LoadLocation("Europe/London")
	require.NoError(t, err)
	got := map[string]time.Time{}
	for _, m := range run.GetMade() {
		got[m.GetDate()+" "+m.GetDepartureTime()] = m.GetStartsAt().AsTime()
		show, err := p.catalog.GetShow(t.Context(), m.GetShowId())
		require.NoError(t, err)
		require.Equal(t, "Europe/London", show.TimeZone)
		if m.GetDepartureTime() == "08:00" {
			require.Equal(t, "08:00", show.StartsAt.In(london).Format("15:04"), m.GetDate())
			require.Contains(t, show.Proto().GetStartsAtLocal().GetEn(), "08:00")
		}
	}
	require.Equal(t, time.Date(2027, 3, 27, 8, 0, 0, 0, time.UTC), got["2027-03-27 08:00"])
	require.Equal(t, time.Date(2027, 3, 28, 7, 0, 0, 0, time.UTC), got["2027-03-28 08:00"])
	require.Equal(t, time.Date(2027, 3, 29, 7, 0, 0, 0, time.UTC), got["2027-03-29 08:00"])
	require.Equal(t, "02:30", got["2027-03-28 01:30"].In(london).Format("15:04"))
	require.Len(t, run.GetMade(), 60)
	// The trips made before the change still follow the timetable after it.
	p.clock.Advance(10 * 24 * time.Hour)
	runs, err := p.network.Run(t.Context(), manager, network.RunRequest{OrganizationID: "hanif"})
	require.NoError(t, err)
	require.Empty(t, runs[0].GetWithdrawn())
	require.Empty(t, runs[0].GetLeftAlone())
}

// TestRunsAroundMidnight: at 02:30 in Dhaka (20:30 UTC the day before),
// today is Dhaka's date: its 00:15 and 02:00 coaches have left, its 23:45
// has not, and tomorrow's 00:15 is 18:15 UTC today.
func TestRunsAroundMidnight(t *testing.T) {
	p := newPlatform(t, time.Date(2026, 11, 30, 20, 30, 0, 0, time.UTC))
	tt := morning()
	tt.DepartureTimes = []string{"23:45", "00:15", "02:00"}
	_, err := p.network.CreateRoute(t.Context(), manager, dhakaChattogram())
	require.NoError(t, err)
	tt.Days = []networkv1.Weekday{networkv1.Weekday_WEEKDAY_TUESDAY, networkv1.Weekday_WEEKDAY_WEDNESDAY} // 1 and 2 December 2026
	_, run, err := p.network.CreateTimetable(t.Context(), manager, tt)
	require.NoError(t, err)
	var got []string
	for _, m := range run.GetMade()[:4] {
		got = append(got, m.GetDate()+" "+m.GetDepartureTime()+" "+m.GetStartsAt().AsTime().Format(time.RFC3339))
	}
	// 1 December's 00:15 and 02:00 have left; its 23:45 has not.
	require.Equal(t, []string{
		"2026-12-01 23:45 2026-12-01T17:45:00Z",
		"2026-12-02 00:15 2026-12-01T18:15:00Z",
		"2026-12-02 02:00 2026-12-01T20:00:00Z",
		"2026-12-02 23:45 2026-12-02T17:45:00Z",
	}, got)
	require.Len(t, run.GetMade(), 4+4*2*3, "then four more Tuesdays and Wednesdays")
	require.Equal(t, "2026-12-01", run.GetFromDate())
}

// TestOnSaleLead: trips go on sale the lead before departure, or at once
// when that has passed.
func TestOnSaleLead(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 30, 0, 0, time.UTC)
	p := newPlatform(t, now)
	tt := morning()
	tt.SaleRules = &networkv1.SaleRules{OnSaleBefore: durationDays(10), MaxSeatsPerAccount: 4}
	run := p.create(t, dhakaChattogram(), tt)
	for _, m := range run.GetMade() {
		show, err := p.catalog.GetShow(t.Context(), m.GetShowId())
		require.NoError(t, err)
		want := show.StartsAt.Add(-10 * 24 * time.Hour)
		if want.Before(now) {
			want = now
		}
		require.True(t, want.Equal(show.OnSaleAt), "%s: on sale at %s, want %s", m.GetDate(), show.OnSaleAt, want)
		require.Equal(t, 4, show.MaxSeatsPerAccount)
	}
	// The next day nothing changed: the sale opening follows the lead,
	// not the instant a trip was made.
	p.clock.Advance(24 * time.Hour)
	runs, err := p.network.Run(t.Context(), manager, network.RunRequest{OrganizationID: "hanif"})
	require.NoError(t, err)
	require.Empty(t, runs[0].GetWithdrawn())
}

// TestRouteAndTimetableRefusals: what a route or timetable may not say,
// each refused naming its field, nothing written.
func TestRouteAndTimetableRefusals(t *testing.T) {
	p := newPlatform(t, time.Date(2026, 12, 1, 0, 30, 0, 0, time.UTC))
	ctx := t.Context()
	routes := []struct {
		name  string
		edit  func(r *networkv1.Route)
		field string
	}{
		{"stops out of order", func(r *networkv1.Route) { r.Stops[3].MinutesFromStart = 200 }, "stops[3].minutes_from_start"},
		{"a first stop not at minute 0", func(r *networkv1.Route) { r.Stops[0].MinutesFromStart = 5 }, "stops[0].minutes_from_start"},
		{"a stop twice", func(r *networkv1.Route) { r.Stops[2].Place = "Cumilla" }, "stops[2].stop_id"},
		{"an unknown place without an id", func(r *networkv1.Route) { r.Stops[2].Place = "Chauddagram" }, "stops[2].stop_id"},
		{"a counter twice", func(r *networkv1.Route) { r.Stops[1].Counters[0].CounterId = "kalabagan" }, "stops[1].counters[0].counter_id"},
		{"dropping at the first stop", func(r *networkv1.Route) { r.Stops[0].Counters[0].Dropping = true }, "stops[0].counters[0].dropping"},
		{"boarding at the last stop", func(r *networkv1.Route) { r.Stops[3].Counters[0].Boarding = true }, "stops[3].counters[0].boarding"},
		{"a counter after the next stop", func(r *networkv1.Route) { r.Stops[0].Counters[1].MinutesAfterDeparture = 150 }, "stops[0].counters[1].minutes_after_departure"},
		{"neither boarding nor dropping", func(r *networkv1.Route) {
			r.Stops[1].Counters[0].Boarding, r.Stops[1].Counters[0].Dropping = false, false
		}, "stops[1].counters[0]"},
		{"no such organisation", func(r *networkv1.Route) { r.OrganizationId = "nobody" }, "organization_id"},
	}
	for _, c := range routes {
		r := dhakaChattogram()
		c.edit(r)
		_, err := p.network.CreateRoute(ctx, admin, r)
		require.Equal(t, fault.NetworkInvalid, fault.ReasonOf(err), "%s: %v", c.name, err)
		e, _ := fault.As(err)
		require.Equal(t, c.field, e.Field, c.name)
	}
	require.Equal(t, 0, p.count(t, `SELECT count(*) FROM routes`))
	r, err := p.network.CreateRoute(ctx, manager, dhakaChattogram())
	require.NoError(t, err)
	require.Equal(t, "cumilla", r.GetStops()[1].GetStopId(), "a stop is named by its place")
	require.Equal(t, "Cumilla", r.GetStops()[1].GetPlace(), "the official name of Comilla")
	require.Equal(t, "কুমিল্লা", r.GetStops()[1].GetPlaceBengali())
	require.Equal(t, "Dhaka – Chattogram", r.GetName())
	require.Equal(t, "ঢাকা – চট্টগ্রাম", r.GetNameBn())

	timetables := []struct {
		name  string
		edit  func(tt *networkv1.Timetable)
		field string
	}{
		{"a fare from a stop the route lacks", func(tt *networkv1.Timetable) { tt.Fares[0].FromStopId = "sylhet" }, "fares[0].from_stop_id"},
		{"a fare backwards", func(tt *networkv1.Timetable) { tt.Fares[0].FromStopId, tt.Fares[0].ToStopId = "cumilla", "dhaka" }, "fares[0].to_stop_id"},
		{"a fare twice", func(tt *networkv1.Timetable) { tt.Fares[1] = proto.CloneOf(tt.Fares[0]) }, "fares[1]"},
		{"a class sections lack", func(tt *networkv1.Timetable) { tt.Fares[0].SeatClass = "business" }, "fares[0].seat_class"},
		{"a template and sections", func(tt *networkv1.Timetable) { tt.LayoutTemplateId = "coach-2x2-40" }, "sections"},
		{"a zone that is none", func(tt *networkv1.Timetable) { tt.TimeZone = "Dhaka" }, "timetable.time_zone"},
		{"a row twice", func(tt *networkv1.Timetable) {
			tt.Sections = append(tt.Sections, &catalogv1.Section{Name: "Back", Rows: []string{"J"}, SeatsPerRow: 4})
		}, "sections[1].rows"},
	}
	for _, c := range timetables {
		tt := morning()
		c.edit(tt)
		_, _, err := p.network.CreateTimetable(ctx, manager, tt)
		require.Equal(t, fault.NetworkInvalid, fault.ReasonOf(err), "%s: %v", c.name, err)
		e, _ := fault.As(err)
		require.Equal(t, c.field, e.Field, c.name)
	}
	require.Equal(t, 0, p.count(t, `SELECT count(*) FROM timetables`))

	// A route whose change would strand a timetable's fares is refused.
	_, _, err = p.network.CreateTimetable(ctx, manager, morning())
	require.NoError(t, err)
	shorter := dhakaChattogram()
	shorter.Stops = append(shorter.Stops[:2], shorter.Stops[3])
	_, err = p.network.UpdateRoute(ctx, manager, shorter, 0)
	require.Equal(t, fault.NetworkInvalid, fault.ReasonOf(err), "%v", err)
	_, err = p.network.UpdateRoute(ctx, manager, dhakaChattogram(), 7)
	require.ErrorIs(t, err, network.ErrVersionConflict)
	// Creating it again as it is answers it; another route under its id is refused.
	_, err = p.network.CreateRoute(ctx, manager, dhakaChattogram())
	require.NoError(t, err)
	_, err = p.network.CreateRoute(ctx, manager, shorter)
	require.Equal(t, fault.NetworkExists, fault.ReasonOf(err))
}

func durationDays(n int) *durationpb.Duration {
	return durationpb.New(time.Duration(n) * 24 * time.Hour)
}
