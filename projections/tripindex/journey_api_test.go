package tripindex_test

import (
	"context"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/timestamppb"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	"github.com/seatghor/seatghor/gen/seatghor/booking/v1/bookingv1connect"
	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/gen/seatghor/catalog/v1/catalogv1connect"
	networkv1 "github.com/seatghor/seatghor/gen/seatghor/network/v1"
	"github.com/seatghor/seatghor/gen/seatghor/network/v1/networkv1connect"
	searchv1 "github.com/seatghor/seatghor/gen/seatghor/search/v1"
	"github.com/seatghor/seatghor/gen/seatghor/search/v1/searchv1connect"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/app"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/clock"
)

// TestSearchAnswersTheJourney: SearchTrips by an inner pair of a coach
// answers the journey: the departure from the buyer's stop in the trip's
// zone, the boarding and dropping counters in English and Bengali, and
// that pair's lowest fare as the hit's price.
func TestSearchAnswersTheJourney(t *testing.T) {
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Shards: 1, TripIndex: app.TripIndexConfig{Dir: t.TempDir()}})
	require.NoError(t, env.App.Trips.Put(ctx, journeys()))
	user := searchv1connect.NewTripSearchServiceClient(env.HTTP, env.URL, authAs(t, env, "rumana", auth.RoleUser))
	resp, err := user.SearchTrips(ctx, connect.NewRequest(&searchv1.SearchTripsRequest{Origin: "Comilla", Destination: "Chittagong",
		StartsAfter: timestamppb.New(base)}))
	require.NoError(t, err)
	hits := resp.Msg.GetTrips()
	require.Len(t, hits, 3)
	hit := hits[0]
	require.Equal(t, int64(21), hit.GetShowId())
	require.Equal(t, "Dhaka", hit.GetOrigin(), "the coach's own route")
	require.Contains(t, hit.GetStartsAtLocal().GetEn(), "08:00")
	require.EqualValues(t, 60000, hit.GetLowestPrice().GetAmountMinor(), "Cumilla to Chattogram's fare")
	require.Equal(t, "BDT", hit.GetLowestPrice().GetCurrency())
	j := hit.GetJourney()
	require.Equal(t, "cumilla", j.GetFromStopId())
	require.Equal(t, "chattogram", j.GetToStopId())
	require.Equal(t, "Cumilla", j.GetFromName())
	require.Equal(t, "কুমিল্লা", j.GetFromNameBn(), "from the gazetteer")
	require.Equal(t, "চট্টগ্রাম", j.GetToNameBn())
	require.Equal(t, "2027-03-02T10:30:00+06:00", j.GetDepartsAtLocal().GetWallTime(), "leaves Cumilla at 10:30 Dhaka time")
	require.Contains(t, j.GetDepartsAtLocal().GetBn(), "১০:৩০")
	require.Equal(t, "2027-03-02T13:30:00+06:00", j.GetArrivesAtLocal().GetWallTime())
	require.Equal(t, "padua", j.GetBoardingCounterId())
	require.Equal(t, "Padua Bazar", j.GetBoardingCounterName())
	require.Equal(t, "পদুয়ার বাজার", j.GetBoardingCounterNameBn())
	require.Equal(t, "2027-03-02T10:35:00+06:00", j.GetBoardingAtLocal().GetWallTime())
	require.Equal(t, "Dampara", j.GetDroppingCounterName())
	require.Equal(t, hit.GetStartsAt().AsTime().Add(150*time.Minute), j.GetDepartsAt().AsTime())

	// A trip without stops answers as it always did: no journey.
	resp, err = user.SearchTrips(ctx, connect.NewRequest(&searchv1.SearchTripsRequest{Origin: "Dhaka", Destination: "Cumilla",
		StartsAfter: timestamppb.New(base)}))
	require.NoError(t, err)
	require.Len(t, resp.Msg.GetTrips(), 2)
	require.Equal(t, int64(22), resp.Msg.GetTrips()[1].GetShowId())
	require.Nil(t, resp.Msg.GetTrips()[1].GetJourney())
	require.EqualValues(t, 45000, resp.Msg.GetTrips()[1].GetLowestPrice().GetAmountMinor())
	require.Equal(t, "cumilla", resp.Msg.GetTrips()[0].GetJourney().GetToStopId(), "the coach's Dhaka to Cumilla journey")
	require.EqualValues(t, 30000, resp.Msg.GetTrips()[0].GetLowestPrice().GetAmountMinor())
}

// TestTimetableTripsAreFoundByAnyStopPair: a timetable's trips, made by
// the job through CreateShow with the route's stops and the fares, are
// found by a search from Cumilla to Chattogram with their journey; a
// withdrawn trip leaves the index.
func TestTimetableTripsAreFoundByAnyStopPair(t *testing.T) {
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Shards: 2, Projectors: true, Clock: clock.NewFake(time.Date(2026, 12, 1, 0, 30, 0, 0, time.UTC)),
		TripIndex: app.TripIndexConfig{Dir: t.TempDir(), Debounce: 50 * time.Millisecond}})
	env.Member(t, "hanif", "hanif-mgr", catalog.RoleManager)
	mgr := networkv1connect.NewNetworkServiceClient(env.HTTP, env.URL, authAs(t, env, "hanif-mgr", auth.RoleOperator))
	shows := catalogv1connect.NewCatalogServiceClient(env.HTTP, env.URL, authAs(t, env, "rumana", auth.RoleUser))
	user := searchv1connect.NewTripSearchServiceClient(env.HTTP, env.URL, authAs(t, env, "rumana", auth.RoleUser))
	stop := func(place string, min int32, counters ...*catalogv1.Counter) *catalogv1.TripStop {
		return &catalogv1.TripStop{Place: place, MinutesFromStart: min, Counters: counters}
	}
	_, err := mgr.CreateRoute(ctx, connect.NewRequest(&networkv1.CreateRouteRequest{RouteId: "hanif-ctg", OrganizationId: "hanif",
		Stops: []*catalogv1.TripStop{
			stop("Dhaka", 0, &catalogv1.Counter{CounterId: "kalabagan", Name: "Kalabagan", NameBn: "কলাবাগান", Boarding: true}),
			stop("Cumilla", 150, &catalogv1.Counter{CounterId: "padua", Name: "Padua Bazar", NameBn: "পদুয়ার বাজার", Boarding: true, Dropping: true, MinutesAfterDeparture: 150}),
			stop("Feni", 210),
			stop("Chattogram", 330, &catalogv1.Counter{CounterId: "dampara", Name: "Dampara", NameBn: "দামপাড়া", Dropping: true, MinutesAfterDeparture: 330}),
		}}))
	require.NoError(t, err)
	fare := func(from, to string, p int64) *catalogv1.Fare {
		return &catalogv1.Fare{FromStopId: from, ToStopId: to, PriceMinor: p}
	}
	tt := &networkv1.Timetable{TimetableId: "hanif-ctg-0800", RouteId: "hanif-ctg", Days: []networkv1.Weekday{1, 2, 3, 4, 5, 6, 7},
		DepartureTimes: []string{"08:00"},
		Sections:       []*catalogv1.Section{{Name: "Economy", Rows: []string{"A", "B", "C", "D", "E", "F", "G", "H", "I", "J"}, SeatsPerRow: 4}},
		Fares: []*catalogv1.Fare{fare("dhaka", "cumilla", 35000), fare("dhaka", "chattogram", 90000),
			fare("cumilla", "chattogram", 60000), fare("feni", "chattogram", 40000)}}
	made, err := mgr.CreateTimetable(ctx, connect.NewRequest(&networkv1.CreateTimetableRequest{Timetable: tt}))
	require.NoError(t, err)
	trips := made.Msg.GetRun().GetMade()
	require.Len(t, trips, 30)
	first, err := shows.GetShow(ctx, connect.NewRequest(&catalogv1.GetShowRequest{ShowId: trips[1].GetShowId()}))
	require.NoError(t, err)
	require.Equal(t, "hanif-ctg", first.Msg.GetShow().GetRouteId())
	require.Len(t, first.Msg.GetShow().GetStops(), 4, "the trip keeps its route's stops")
	env.WaitProjected(t, "tripindex")
	resp, err := user.SearchTrips(ctx, connect.NewRequest(&searchv1.SearchTripsRequest{Origin: "Comilla", Destination: "Chattogram", PageSize: 100}))
	require.NoError(t, err)
	hits := resp.Msg.GetTrips()
	require.Len(t, hits, 30)
	for _, h := range hits {
		require.EqualValues(t, 60000, h.GetLowestPrice().GetAmountMinor())
		require.Equal(t, "cumilla", h.GetJourney().GetFromStopId())
		require.Contains(t, h.GetJourney().GetDepartsAtLocal().GetWallTime(), "T10:30:00+06:00")
		require.Equal(t, "Padua Bazar", h.GetJourney().GetBoardingCounterName())
	}
	resp, err = user.SearchTrips(ctx, connect.NewRequest(&searchv1.SearchTripsRequest{Origin: "Cumilla", Destination: "Feni"}))
	require.NoError(t, err)
	require.Empty(t, resp.Msg.GetTrips(), "a pair without a fare is not sold")

	// A new fare withdraws the unsold trips and remakes them; the index
	// follows: the old shows go, the new ones come at the new fare.
	tt.Fares[2].PriceMinor = 65000
	upd, err := mgr.UpdateTimetable(ctx, connect.NewRequest(&networkv1.UpdateTimetableRequest{Timetable: tt}))
	require.NoError(t, err)
	require.Len(t, upd.Msg.GetRun().GetWithdrawn(), 30)
	env.WaitProjected(t, "tripindex")
	resp, err = user.SearchTrips(ctx, connect.NewRequest(&searchv1.SearchTripsRequest{Origin: "Cumilla", Destination: "Chattogram", PageSize: 100}))
	require.NoError(t, err)
	require.Len(t, resp.Msg.GetTrips(), 30)
	for _, h := range resp.Msg.GetTrips() {
		require.EqualValues(t, 65000, h.GetLowestPrice().GetAmountMinor())
	}
}

// TestCrewSeatIsNotForSale: a coach made from the 2+1 template has 28
// places, one of them the supervisor's (blocked): the search answers 27
// seats, all free, and one fewer once a buyer holds one.
func TestCrewSeatIsNotForSale(t *testing.T) {
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Shards: 1, Projectors: true,
		TripIndex: app.TripIndexConfig{Dir: t.TempDir(), Debounce: 50 * time.Millisecond}})
	env.Member(t, "greenline", "greenline-mgr", catalog.RoleManager)
	mgr := catalogv1connect.NewCatalogServiceClient(env.HTTP, env.URL, authAs(t, env, "greenline-mgr", auth.RoleOperator))
	user := searchv1connect.NewTripSearchServiceClient(env.HTTP, env.URL, authAs(t, env, "rumana", auth.RoleUser))
	created, err := mgr.CreateShow(ctx, connect.NewRequest(&catalogv1.CreateShowRequest{
		Kind: catalogv1.ShowKind_SHOW_KIND_BUS_TRIP, Title: "Dhaka → Sylhet", Origin: "Dhaka", Destination: "Sylhet",
		StartsAt: timestamppb.New(time.Now().Add(7 * 24 * time.Hour)), Currency: "BDT", OrganizationId: "greenline",
		LayoutTemplateId: "coach-2x1-27", MaxSeatsPerAccount: 4, MaxSeatsPerHold: 4}))
	require.NoError(t, err)
	show := created.Msg.GetShow()
	require.EqualValues(t, 28, show.GetSeatCount(), "the places drawn, the supervisor's included")

	found := func() *searchv1.TripHit {
		t.Helper()
		env.WaitProjected(t, "tripindex")
		resp, err := user.SearchTrips(ctx, connect.NewRequest(&searchv1.SearchTripsRequest{Origin: "Dhaka", Destination: "Sylhet"}))
		require.NoError(t, err)
		require.Len(t, resp.Msg.GetTrips(), 1)
		return resp.Msg.GetTrips()[0]
	}
	hit := found()
	require.EqualValues(t, 27, hit.GetCapacity(), "the seats sold")
	require.EqualValues(t, 27, hit.GetSeatsAvailable())

	holds := bookingv1connect.NewHoldServiceClient(env.HTTP, env.URL, authAs(t, env, "rumana", auth.RoleUser))
	_, err = holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show.GetShowId(), Seats: []string{"B2"}}))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return found().GetSeatsAvailable() == 26 }, 15*time.Second, 50*time.Millisecond)
}
