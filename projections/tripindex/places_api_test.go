package tripindex_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/timestamppb"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/gen/seatghor/catalog/v1/catalogv1connect"
	searchv1 "github.com/seatghor/seatghor/gen/seatghor/search/v1"
	"github.com/seatghor/seatghor/gen/seatghor/search/v1/searchv1connect"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/app"
	"github.com/seatghor/seatghor/server/auth"
)

// TestShowsStoreCanonicalPlaces: CreateShow takes any known spelling of a
// place and stores its official name and place id (an unknown place stays
// free text), and SearchTrips names each place as the buyer typed it
// ("Chattogram (Chittagong)") with its Bengali name (decision 0112).
func TestShowsStoreCanonicalPlaces(t *testing.T) {
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Projectors: true,
		TripIndex: app.TripIndexConfig{Dir: t.TempDir(), Debounce: 50 * time.Millisecond}})
	admin := catalogv1connect.NewCatalogServiceClient(env.HTTP, env.URL, authAs(t, env, "admin", auth.RoleAdmin))
	user := searchv1connect.NewTripSearchServiceClient(env.HTTP, env.URL, authAs(t, env, "rumana", auth.RoleUser))

	day := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, 30)
	create := func(title, from, to string, hour int) *catalogv1.Show {
		resp, err := admin.CreateShow(ctx, connect.NewRequest(&catalogv1.CreateShowRequest{
			Kind: catalogv1.ShowKind_SHOW_KIND_BUS_TRIP, Title: title, Operator: "Tisha", Origin: from, Destination: to,
			StartsAt: timestamppb.New(day.Add(time.Duration(hour) * time.Hour)), Currency: "BDT",
			Sections: []*catalogv1.Section{{Name: "Main", Rows: []string{"A"}, SeatsPerRow: 4, PriceMinor: 50000}}}))
		require.NoError(t, err)
		return resp.Msg.GetShow()
	}
	ctg := create("Dhaka to Chittagong 08:00", "dacca", "Chittagong", 8)
	require.Equal(t, "Dhaka", ctg.GetOrigin())
	require.Equal(t, "dhaka", ctg.GetOriginPlaceId())
	require.Equal(t, "Chattogram", ctg.GetDestination())
	require.Equal(t, "chattogram", ctg.GetDestinationPlaceId())
	com := create("Comilla express", "ঢাকা", "comilla", 9)
	require.Equal(t, "Cumilla", com.GetDestination())
	free := create("To the farm", "Dhaka", "Shimulia Farm", 10)
	require.Equal(t, "Shimulia Farm", free.GetDestination(), "an unknown place stays free text")
	require.Empty(t, free.GetDestinationPlaceId())

	got, err := admin.GetShow(ctx, connect.NewRequest(&catalogv1.GetShowRequest{ShowId: ctg.GetShowId()}))
	require.NoError(t, err)
	require.Equal(t, "chattogram", got.Msg.GetShow().GetDestinationPlaceId(), "the place id is stored")

	search := func(req *searchv1.SearchTripsRequest, n int) []*searchv1.TripHit {
		t.Helper()
		var hits []*searchv1.TripHit
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(25 * time.Millisecond) {
			resp, err := user.SearchTrips(ctx, connect.NewRequest(req))
			require.NoError(t, err)
			if hits = resp.Msg.GetTrips(); len(hits) == n {
				return hits
			}
		}
		t.Fatalf("search %v: %d hits, want %d", req, len(hits), n)
		return nil
	}
	hits := search(&searchv1.SearchTripsRequest{Query: "dhaka chittagong"}, 1)
	require.Equal(t, ctg.GetShowId(), hits[0].GetShowId())
	require.Equal(t, "Chattogram", hits[0].GetDestination())
	require.Equal(t, "Chattogram (Chittagong)", hits[0].GetDestinationLabel())
	require.Equal(t, "চট্টগ্রাম", hits[0].GetDestinationBengali())
	require.Equal(t, "chattogram", hits[0].GetDestinationPlaceId())
	require.Equal(t, "Dhaka", hits[0].GetOriginLabel())
	require.Equal(t, "ঢাকা", hits[0].GetOriginBengali())

	hits = search(&searchv1.SearchTripsRequest{Destination: "Comilla"}, 1)
	require.Equal(t, com.GetShowId(), hits[0].GetShowId())
	require.Equal(t, "Cumilla (Comilla)", hits[0].GetDestinationLabel())
	require.Equal(t, "কুমিল্লা", hits[0].GetDestinationBengali())

	hits = search(&searchv1.SearchTripsRequest{Query: "shimulia"}, 1)
	require.Equal(t, "Shimulia Farm", hits[0].GetDestinationLabel(), fmt.Sprint(hits[0]))
	require.Empty(t, hits[0].GetDestinationBengali())
}
