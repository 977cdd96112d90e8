package api_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	networkv1 "github.com/seatghor/seatghor/gen/seatghor/network/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/clock"
)

// networkRoute is a two-stop route of org.
func networkRoute(id, org string) *networkv1.CreateRouteRequest {
	return &networkv1.CreateRouteRequest{RouteId: id, OrganizationId: org, Stops: []*catalogv1.TripStop{
		{Place: "Dhaka", Counters: []*catalogv1.Counter{{CounterId: "kalabagan", Name: "Kalabagan", NameBn: "কলাবাগান", Boarding: true}}},
		{Place: "Sylhet", MinutesFromStart: 330, Counters: []*catalogv1.Counter{{CounterId: "kadamtali", Name: "Kadamtali", NameBn: "কদমতলী", Dropping: true, MinutesAfterDeparture: 330}}},
	}}
}

func networkTimetable(id, route string) *networkv1.Timetable {
	return &networkv1.Timetable{TimetableId: id, RouteId: route, Days: []networkv1.Weekday{1, 2, 3, 4, 5, 6, 7},
		DepartureTimes: []string{"22:30"},
		Sections:       []*catalogv1.Section{{Name: "Main", Rows: []string{"A", "B"}, SeatsPerRow: 4}},
		Fares:          []*catalogv1.Fare{{FromStopId: "dhaka", ToStopId: "sylhet", PriceMinor: 70000}}}
}

// TestNetworkAuthorization: the routes and timetables of an organisation
// are its managers' and admins' to create, read, change and run, through
// every RPC; another organisation's manager, its gate staff and buyers
// are refused, and a manager's lists hold only their organisations'.
func TestNetworkAuthorization(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 2, Clock: clock.NewFake(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))})
	env.Member(t, "hanif", "hanif-mgr", catalog.RoleManager)
	env.Member(t, "hanif", "hanif-gate", catalog.RoleGate)
	env.Member(t, "shyamoli", "shyamoli-mgr", catalog.RoleManager)
	ctx := context.Background()
	callers := map[string]clients{
		"admin":        as(t, env, "root", auth.RoleAdmin),
		"hanif-mgr":    as(t, env, "hanif-mgr", auth.RoleOperator),
		"shyamoli-mgr": as(t, env, "shyamoli-mgr", auth.RoleOperator),
		"hanif-gate":   as(t, env, "hanif-gate", auth.RoleOperator),
		"rumana":       as(t, env, "rumana", auth.RoleUser),
	}
	// What exists before each call: a route and a timetable of each
	// organisation.
	admin := callers["admin"]
	for _, org := range []string{"hanif", "shyamoli"} {
		_, err := admin.network.CreateRoute(ctx, connect.NewRequest(networkRoute(org+"-sylhet", org)))
		require.NoError(t, err)
		resp, err := admin.network.CreateTimetable(ctx, connect.NewRequest(&networkv1.CreateTimetableRequest{
			Timetable: networkTimetable(org+"-night", org+"-sylhet")}))
		require.NoError(t, err)
		require.Len(t, resp.Msg.GetRun().GetMade(), 30)
	}
	calls := map[string]func(c clients, n int) error{
		"CreateRoute": func(c clients, n int) error {
			_, err := c.network.CreateRoute(ctx, connect.NewRequest(networkRoute("hanif-new-"+strconv.Itoa(n), "hanif")))
			return err
		},
		"GetRoute": func(c clients, _ int) error {
			_, err := c.network.GetRoute(ctx, connect.NewRequest(&networkv1.GetRouteRequest{RouteId: "hanif-sylhet"}))
			return err
		},
		"ListRoutes": func(c clients, _ int) error {
			_, err := c.network.ListRoutes(ctx, connect.NewRequest(&networkv1.ListRoutesRequest{OrganizationId: "hanif"}))
			return err
		},
		"UpdateRoute": func(c clients, _ int) error {
			r := networkRoute("hanif-sylhet", "hanif")
			_, err := c.network.UpdateRoute(ctx, connect.NewRequest(&networkv1.UpdateRouteRequest{RouteId: r.GetRouteId(), Name: "Night to Sylhet", Stops: r.GetStops()}))
			return err
		},
		"CreateTimetable": func(c clients, n int) error {
			_, err := c.network.CreateTimetable(ctx, connect.NewRequest(&networkv1.CreateTimetableRequest{
				Timetable: networkTimetable("hanif-extra-"+strconv.Itoa(n), "hanif-sylhet")}))
			return err
		},
		"GetTimetable": func(c clients, _ int) error {
			_, err := c.network.GetTimetable(ctx, connect.NewRequest(&networkv1.GetTimetableRequest{TimetableId: "hanif-night"}))
			return err
		},
		"ListTimetables": func(c clients, _ int) error {
			_, err := c.network.ListTimetables(ctx, connect.NewRequest(&networkv1.ListTimetablesRequest{OrganizationId: "hanif"}))
			return err
		},
		"UpdateTimetable": func(c clients, _ int) error {
			_, err := c.network.UpdateTimetable(ctx, connect.NewRequest(&networkv1.UpdateTimetableRequest{Timetable: networkTimetable("hanif-night", "hanif-sylhet")}))
			return err
		},
		"RunTimetables": func(c clients, _ int) error {
			_, err := c.network.RunTimetables(ctx, connect.NewRequest(&networkv1.RunTimetablesRequest{OrganizationId: "hanif"}))
			return err
		},
		"RunTimetables by id": func(c clients, _ int) error {
			_, err := c.network.RunTimetables(ctx, connect.NewRequest(&networkv1.RunTimetablesRequest{TimetableIds: []string{"hanif-night"}}))
			return err
		},
	}
	n := 0
	for name, call := range calls {
		for who, c := range callers {
			n++
			err := call(c, n)
			if who == "admin" || who == "hanif-mgr" {
				require.NoError(t, err, "%s by %s", name, who)
				continue
			}
			code, reason := reasonOf(t, err)
			require.Equal(t, connect.CodePermissionDenied, code, "%s by %s: %v", name, who, err)
			require.Equal(t, "NETWORK_FORBIDDEN", reason, "%s by %s", name, who)
		}
	}

	// A manager's lists hold their organisations' alone; an admin's all.
	list, err := callers["shyamoli-mgr"].network.ListRoutes(ctx, connect.NewRequest(&networkv1.ListRoutesRequest{}))
	require.NoError(t, err)
	require.Len(t, list.Msg.GetRoutes(), 1)
	require.Equal(t, "shyamoli-sylhet", list.Msg.GetRoutes()[0].GetRouteId())
	tts, err := callers["shyamoli-mgr"].network.ListTimetables(ctx, connect.NewRequest(&networkv1.ListTimetablesRequest{}))
	require.NoError(t, err)
	require.Len(t, tts.Msg.GetTimetables(), 1)
	all, err := admin.network.ListRoutes(ctx, connect.NewRequest(&networkv1.ListRoutesRequest{PageSize: 2}))
	require.NoError(t, err)
	require.Len(t, all.Msg.GetRoutes(), 2)
	require.NotEmpty(t, all.Msg.GetNextPageToken())
	none, err := callers["hanif-gate"].network.ListRoutes(ctx, connect.NewRequest(&networkv1.ListRoutesRequest{}))
	require.NoError(t, err)
	require.Empty(t, none.Msg.GetRoutes(), "gate staff manage nothing")

	// A manager runs an organisation's timetables by naming it; an
	// unknown id is not found.
	_, err = callers["hanif-mgr"].network.RunTimetables(ctx, connect.NewRequest(&networkv1.RunTimetablesRequest{}))
	code, reason := reasonOf(t, err)
	require.Equal(t, connect.CodeInvalidArgument, code)
	require.Equal(t, "NETWORK_INVALID", reason)
	_, err = admin.network.GetRoute(ctx, connect.NewRequest(&networkv1.GetRouteRequest{RouteId: "nowhere"}))
	code, reason = reasonOf(t, err)
	require.Equal(t, connect.CodeNotFound, code)
	require.Equal(t, "ROUTE_NOT_FOUND", reason)
	_, err = admin.network.GetTimetable(ctx, connect.NewRequest(&networkv1.GetTimetableRequest{TimetableId: "nowhere"}))
	code, reason = reasonOf(t, err)
	require.Equal(t, connect.CodeNotFound, code)
	require.Equal(t, "TIMETABLE_NOT_FOUND", reason)

	// A stale version is refused; the run of an admin reports on every
	// timetable, and the trips are the catalog's, buyers' to read.
	_, err = admin.network.UpdateTimetable(ctx, connect.NewRequest(&networkv1.UpdateTimetableRequest{
		Timetable: networkTimetable("hanif-night", "hanif-sylhet"), ExpectedVersion: 1}))
	code, reason = reasonOf(t, err)
	require.Equal(t, connect.CodeAborted, code)
	require.Equal(t, "NETWORK_VERSION_CONFLICT", reason)
	runs, err := admin.network.RunTimetables(ctx, connect.NewRequest(&networkv1.RunTimetablesRequest{Days: 2}))
	require.NoError(t, err)
	require.Len(t, runs.Msg.GetRuns(), 2+2, "two timetables made above, and the two extras")
	trip := runs.Msg.GetRuns()[0]
	require.Equal(t, "2026-12-02", trip.GetToDate())
	shows, err := callers["rumana"].catalog.ListShows(ctx, connect.NewRequest(&catalogv1.ListShowsRequest{PageSize: 500}))
	require.NoError(t, err)
	routes := map[string]int{}
	for _, s := range shows.Msg.GetShows() {
		routes[s.GetRouteId()]++
	}
	require.Equal(t, 30, routes["shyamoli-sylhet"])
	require.Positive(t, routes["hanif-sylhet"])
}
