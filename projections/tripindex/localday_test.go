package tripindex_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/search"
)

// TestDateIsTheLocalDayOfDeparture: the search date is the calendar day of
// departure in each show's own zone (decision 0172). The bus leaving Dhaka
// at 02:00 on 31 December (20:00 UTC on the 30th) is found on the 31st, not
// on the UTC day before; a show in Kolkata and one in London likewise.
func TestDateIsTheLocalDayOfDeparture(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		require.NoError(t, err)
		return v.UTC()
	}
	trip := func(id int64, title, zone string, startsAt time.Time) search.Trip {
		return search.Trip{ShowID: id, Kind: bus, Title: title, Operator: "Hanif", Origin: "Dhaka",
			Destination: "Cox's Bazar", StartsAt: startsAt, TimeZone: zone, OnSaleAt: startsAt.AddDate(0, 0, -30),
			Currency: "BDT", LowestPriceMinor: 120000, SeatsAvailable: 40, Capacity: 40}
	}
	trips := []search.Trip{
		trip(1, "Dhaka to Cox's Bazar 02:00", "Asia/Dhaka", at("2026-12-31T02:00:00+06:00")),
		trip(2, "Dhaka to Cox's Bazar 23:30", "Asia/Dhaka", at("2026-12-30T23:30:00+06:00")),
		trip(3, "Kolkata night show 02:00", "Asia/Kolkata", at("2026-12-31T02:00:00+05:30")),
		trip(4, "London late show 23:00", "Europe/London", at("2026-12-30T23:00:00Z")),
		// A show stored before shows had zones: read in Dhaka's.
		trip(5, "Dhaka to Cox's Bazar 05:59", "", at("2026-12-31T05:59:00+06:00")),
	}
	for name, open := range implementations {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			idx := open(t)
			ctx := context.Background()
			require.NoError(t, idx.Put(ctx, trips))
			for _, c := range []struct {
				day  int
				want []int64
			}{
				{20261231, []int64{1, 3, 5}},
				{20261230, []int64{2, 4}},
				{20261229, []int64{}},
			} {
				r, err := idx.Search(ctx, search.Query{Day: c.day, Sort: search.SortStartsAt})
				require.NoError(t, err)
				require.ElementsMatch(t, c.want, ids(r), "day %d", c.day)
			}
			r, err := idx.Search(ctx, search.Query{Day: 20261231, Text: "kolkata"})
			require.NoError(t, err)
			require.Len(t, r.Trips, 1)
			require.Equal(t, "Asia/Kolkata", r.Trips[0].TimeZone, "the zone comes back with the trip")
		})
	}
}
