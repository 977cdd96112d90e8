package api_test

import (
	"context"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	seatmapv1 "github.com/seatghor/seatghor/gen/seatghor/seatmap/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/internal/testkit/redistest"
	"github.com/seatghor/seatghor/server/auth"
)

// TestCatalog: the seed's CreateShow example, a retried CreateShow, reads,
// paging and the kind filter.
func TestCatalog(t *testing.T) {
	env := apptest.New(t, apptest.Options{})
	ctx := context.Background()
	admin := as(t, env, "admin", auth.RoleAdmin)

	bus := seatedShow("Dhaka to Chattogram 08:00", 10, 10)
	bus.Kind, bus.Origin, bus.Destination, bus.Venue = catalogv1.ShowKind_SHOW_KIND_BUS_TRIP, "Dhaka", "Chattogram", ""
	bus.GaAreas = []*catalogv1.GaArea{{Name: "Standing", Capacity: 50, PriceMinor: 50000}}
	first, err := admin.catalog.CreateShow(ctx, withKey(bus, "show-1"))
	require.NoError(t, err)
	s := first.Msg.GetShow()
	require.EqualValues(t, 100, s.GetSeatCount())
	require.Equal(t, "admin", s.GetOperator(), "the operator defaults to the caller")
	again, err := admin.catalog.CreateShow(ctx, withKey(bus, "show-1"))
	require.NoError(t, err)
	require.Equal(t, s.GetShowId(), again.Msg.GetShow().GetShowId(), "a retried CreateShow creates nothing new")

	m, err := admin.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: s.GetShowId()}))
	require.NoError(t, err)
	require.Equal(t, "J10", m.Msg.GetSections()[0].GetRows()[9].GetSeats()[9])
	require.EqualValues(t, 50, m.Msg.GetGaAreas()[0].GetRemaining())

	user := as(t, env, "rumana", auth.RoleUser)
	_, err = user.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: s.GetShowId(), Quantity: proto.Int32(4)}))
	require.NoError(t, err)
	got, err := user.catalog.GetShow(ctx, connect.NewRequest(&catalogv1.GetShowRequest{ShowId: s.GetShowId()}))
	require.NoError(t, err)
	require.EqualValues(t, 46, got.Msg.GetShow().GetGaAreas()[0].GetRemaining())
	_, err = user.catalog.GetShow(ctx, connect.NewRequest(&catalogv1.GetShowRequest{ShowId: 424242}))
	require.Equal(t, connect.CodeNotFound, connect.CodeOf(err))

	for range 4 {
		createShow(t, env, seatedShow("concert", 1, 2))
	}
	var seen []int64
	token := ""
	for {
		page, err := user.catalog.ListShows(ctx, connect.NewRequest(&catalogv1.ListShowsRequest{PageSize: 2, PageToken: token}))
		require.NoError(t, err)
		for _, sh := range page.Msg.GetShows() {
			seen = append(seen, sh.GetShowId())
		}
		if token = page.Msg.GetNextPageToken(); token == "" {
			break
		}
	}
	require.Len(t, seen, 5, "every show once over the pages: %v", seen)
	buses, err := user.catalog.ListShows(ctx, connect.NewRequest(&catalogv1.ListShowsRequest{Kind: catalogv1.ShowKind_SHOW_KIND_BUS_TRIP}))
	require.NoError(t, err)
	require.Len(t, buses.Msg.GetShows(), 1)
	_, err = user.catalog.ListShows(ctx, connect.NewRequest(&catalogv1.ListShowsRequest{PageToken: "garbage"}))
	require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err))
}

// TestListShowsCarriesWaitingRooms: a listed show says whether it sells
// through a waiting room, as GetShow does.
func TestListShowsCarriesWaitingRooms(t *testing.T) {
	r := redistest.New(t) // waiting rooms live in Redis
	env := apptest.New(t, apptest.Options{Shards: 1, RedisURL: r.URL, RedisPrefix: r.Prefix})
	ctx := context.Background()
	plain := seatedShow("no room", 1, 4)
	createShow(t, env, plain)
	roomed := seatedShow("with room", 1, 4)
	roomed.OnSaleAt = timestamppb.New(time.Now().Add(time.Hour))
	roomed.WaitingRoom = &catalogv1.WaitingRoom{Enabled: true, MaxAdmissionRate: 50}
	want := createShow(t, env, roomed)
	require.True(t, want.GetWaitingRoom().GetEnabled())

	list, err := as(t, env, "u", auth.RoleUser).catalog.ListShows(ctx, connect.NewRequest(&catalogv1.ListShowsRequest{}))
	require.NoError(t, err)
	rooms := map[string]bool{}
	for _, s := range list.Msg.GetShows() {
		rooms[s.GetTitle()] = s.GetWaitingRoom().GetEnabled()
		if s.GetShowId() == want.GetShowId() {
			require.EqualValues(t, 50, s.GetWaitingRoom().GetMaxAdmissionRate())
		}
	}
	require.Equal(t, map[string]bool{"no room": false, "with room": true}, rooms)
}

// TestShowTimeZone: a show carries an IANA zone, Asia/Dhaka unless set
// (decision 0170); a name that is not a zone is refused on time_zone.
func TestShowTimeZone(t *testing.T) {
	env := apptest.New(t, apptest.Options{})
	ctx := context.Background()
	admin := as(t, env, "admin", auth.RoleAdmin)

	require.Equal(t, "Asia/Dhaka", createShow(t, env, seatedShow("default zone", 1, 2)).GetTimeZone())
	kolkata := seatedShow("in Kolkata", 1, 2)
	kolkata.TimeZone = "Asia/Kolkata"
	s := createShow(t, env, kolkata)
	require.Equal(t, "Asia/Kolkata", s.GetTimeZone())
	got, err := admin.catalog.GetShow(ctx, connect.NewRequest(&catalogv1.GetShowRequest{ShowId: s.GetShowId()}))
	require.NoError(t, err)
	require.Equal(t, "Asia/Kolkata", got.Msg.GetShow().GetTimeZone())
	require.Equal(t, s.GetStartsAt().AsTime().In(mustZone(t, "Asia/Kolkata")).Format(time.RFC3339),
		got.Msg.GetShow().GetStartsAtLocal().GetWallTime())
	require.Contains(t, got.Msg.GetShow().GetStartsAtLocal().GetEn(), "(Asia/Kolkata, IST)")

	for _, zone := range []string{"Mars/Olympus", "Local", "+06:00", "../../etc/passwd"} {
		bad := seatedShow("bad zone", 1, 2)
		bad.TimeZone = zone
		_, err := admin.catalog.CreateShow(ctx, connect.NewRequest(bad))
		require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err), "%s: %v", zone, err)
		require.Equal(t, []string{"time_zone"}, checkInFieldViolations(err), zone)
	}
}

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	require.NoError(t, err)
	return loc
}

// TestShowBengaliPlaces: a bus trip's places come with their Bengali names
// from the gazetteer, for a Bengali UI (issue 23 item 7); a place the
// gazetteer does not know has none. A section keeps its Bengali name.
func TestShowBengaliPlaces(t *testing.T) {
	env := apptest.New(t, apptest.Options{})
	ctx := context.Background()
	user := as(t, env, "u", auth.RoleUser)
	for _, tc := range []struct{ origin, destination, wantOrigin, wantDestination string }{
		{"Dhaka", "Chattogram", "ঢাকা", "চট্টগ্রাম"},
		{"Dhaka", "Nowhere Bazar", "ঢাকা", ""},
	} {
		bus := seatedShow("trip", 1, 2)
		bus.Kind, bus.Origin, bus.Destination, bus.Venue = catalogv1.ShowKind_SHOW_KIND_BUS_TRIP, tc.origin, tc.destination, ""
		bus.Sections[0].NameBn = "প্রধান"
		s := createShow(t, env, bus)
		got, err := user.catalog.GetShow(ctx, connect.NewRequest(&catalogv1.GetShowRequest{ShowId: s.GetShowId()}))
		require.NoError(t, err)
		require.Equal(t, tc.wantOrigin, got.Msg.GetShow().GetOriginBengali(), tc.origin)
		require.Equal(t, tc.wantDestination, got.Msg.GetShow().GetDestinationBengali(), tc.destination)
		require.Equal(t, "প্রধান", got.Msg.GetShow().GetSections()[0].GetNameBn(), "a section's Bengali name")
	}
}
