package tripindex_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/projections/tripindex"
	"github.com/seatghor/seatghor/server/search"
)

// The journeys' fixture (decision 0364): 21 is the Dhaka → Chattogram
// coach via Cumilla and Feni at 08:00 Dhaka time; 22 a direct Dhaka →
// Cumilla bus; 23 a Cumilla → Chattogram coach via Feni at 11:00; 24 a
// night coach from Dhaka at 23:00 that reaches Cumilla after midnight.
func journeys() []search.Trip {
	dhaka := func(id string, min int, counters ...search.Counter) search.Stop {
		return search.Stop{ID: id, Place: map[string]string{"dhaka": "Dhaka", "cumilla": "Cumilla", "feni": "Feni", "chattogram": "Chattogram"}[id],
			PlaceID: id, Minutes: min, Counters: counters}
	}
	fare := func(from, to string, price int64) search.Fare {
		return search.Fare{From: from, To: to, PriceMinor: price}
	}
	at := func(d, h, m int) time.Time {
		return base.AddDate(0, 0, d).Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute)
	}
	trip := func(id int64, title, from, to string, starts time.Time, price int64) search.Trip {
		return search.Trip{ShowID: id, Kind: bus, Title: title, Operator: "Hanif", Origin: from, Destination: to,
			StartsAt: starts, TimeZone: "Asia/Dhaka", OnSaleAt: base.AddDate(0, 0, -10), Currency: "BDT",
			LowestPriceMinor: price, SeatsAvailable: 40, Capacity: 40}
	}
	via := trip(21, "Dhaka to Chattogram 08:00", "Dhaka", "Chattogram", at(1, 2, 0), 30000)
	via.Stops = []search.Stop{
		dhaka("dhaka", 0, search.Counter{ID: "kalabagan", Name: "Kalabagan", NameBn: "কলাবাগান", Boarding: true},
			search.Counter{ID: "sayedabad", Name: "Sayedabad", Boarding: true, Minutes: 40}),
		dhaka("cumilla", 150, search.Counter{ID: "padua", Name: "Padua Bazar", NameBn: "পদুয়ার বাজার", Boarding: true, Dropping: true, Minutes: 155}),
		dhaka("feni", 210),
		dhaka("chattogram", 330, search.Counter{ID: "dampara", Name: "Dampara", Dropping: true, Minutes: 340}),
	}
	via.Fares = []search.Fare{fare("dhaka", "cumilla", 30000), fare("dhaka", "feni", 50000), fare("dhaka", "chattogram", 90000),
		fare("cumilla", "feni", 20000), fare("cumilla", "chattogram", 60000), fare("feni", "chattogram", 40000),
		{From: "cumilla", To: "chattogram", Class: "business", PriceMinor: 80000}}
	direct := trip(22, "Dhaka to Cumilla 09:00", "Dhaka", "Cumilla", at(1, 3, 0), 45000)
	short := trip(23, "Cumilla to Chattogram 11:00", "Cumilla", "Chattogram", at(1, 5, 0), 50000)
	short.Stops = []search.Stop{dhaka("cumilla", 0), dhaka("feni", 60), dhaka("chattogram", 180)}
	short.Fares = []search.Fare{fare("cumilla", "chattogram", 50000), fare("cumilla", "feni", 25000), fare("feni", "chattogram", 30000)}
	night := trip(24, "Dhaka to Chattogram 23:00", "Dhaka", "Chattogram", at(1, 17, 0), 70000)
	night.Stops = []search.Stop{dhaka("dhaka", 0), dhaka("cumilla", 150), dhaka("chattogram", 360)}
	night.Fares = []search.Fare{fare("dhaka", "chattogram", 70000), fare("cumilla", "chattogram", 55000)}
	return []search.Trip{via, direct, short, night}
}

// TestJourneysContract: a trip with stops is found by any pair it sells,
// once, with the journey's departure, local day and lowest fare; a pair
// it does not sell finds nothing; a search naming one place lists each
// trip once; both indexes alike.
func TestJourneysContract(t *testing.T) {
	for name, open := range implementations {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runJourneys(t, open(t))
		})
	}
}

func runJourneys(t *testing.T, idx tripindex.TripIndex) {
	ctx := context.Background()
	require.NoError(t, idx.Put(ctx, journeys()))
	find := func(t *testing.T, q search.Query) search.Result {
		t.Helper()
		r, err := idx.Search(ctx, q)
		require.NoError(t, err)
		return r
	}
	for _, c := range []struct {
		name string
		q    search.Query
		want []int64
	}{
		{"an inner pair finds the coach through it, by its departure there", search.Query{Origin: "Comilla", Destination: "Chittagong"}, []int64{21, 23, 24}},
		{"a route in the text finds the same, once each", search.Query{Text: "cumilla ctg"}, []int64{21, 23, 24}},
		{"a pair not sold finds nothing", search.Query{Origin: "Feni", Destination: "Cumilla"}, []int64{}},
		{"a pair with no fare is not sold", search.Query{Origin: "Dhaka", Destination: "Cumilla", Text: "23:00"}, []int64{}},
		{"the same trip by a pair it sells", search.Query{Origin: "Cumilla", Destination: "Chattogram", Text: "23:00"}, []int64{24}},
		{"the whole route", search.Query{Origin: "Dhaka", Destination: "Chattogram"}, []int64{21, 24}},
		{"from a place: to each trip's end, once", search.Query{Origin: "Cumilla"}, []int64{21, 23, 24}},
		{"to a place: from each trip's start, once", search.Query{Destination: "Cumilla"}, []int64{21, 22}},
		{"no places: each trip once", search.Query{}, []int64{21, 22, 23, 24}},
		{"an inner stop in the text finds the trips through it", search.Query{Text: "feni"}, []int64{21, 23}},
		{"the date is the day at the boarding stop", search.Query{Origin: "Cumilla", Destination: "Chattogram", Day: 20270303}, []int64{24}},
		{"and not the day the trip started", search.Query{Origin: "Cumilla", Destination: "Chattogram", Day: 20270302}, []int64{21, 23}},
		{"cheapest journey first", search.Query{Origin: "Cumilla", Destination: "Chattogram", Sort: search.SortPrice}, []int64{23, 24, 21}},
		{"the journey's price filters", search.Query{Origin: "Cumilla", Destination: "Chattogram", MaxPriceMinor: new(int64(55000))}, []int64{23, 24}},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, ids(find(t, c.q)))
		})
	}

	t.Run("a hit carries its journey", func(t *testing.T) {
		r := find(t, search.Query{Origin: "Cumilla", Destination: "Chattogram"})
		require.EqualValues(t, 3, r.EstimatedTotal)
		hit := r.Trips[0]
		require.Equal(t, int64(21), hit.ShowID)
		require.Equal(t, "Dhaka", hit.Origin, "the trip is still the whole coach")
		require.True(t, hit.StartsAt.Equal(base.AddDate(0, 0, 1).Add(2*time.Hour)), "the trip's own start")
		require.EqualValues(t, 60000, hit.LowestPriceMinor, "the pair's lowest fare, not the route's")
		j := hit.Journey
		require.NotNil(t, j)
		require.Equal(t, "cumilla", j.From.ID)
		require.Equal(t, "chattogram", j.To.ID)
		require.True(t, j.DepartsAt.Equal(hit.StartsAt.Add(150*time.Minute)), "leaves Cumilla at 10:30 Dhaka time")
		require.True(t, j.ArrivesAt.Equal(hit.StartsAt.Add(330*time.Minute)))
		require.Equal(t, "Padua Bazar", j.Boarding.Name)
		require.Equal(t, "পদুয়ার বাজার", j.Boarding.NameBn)
		require.Equal(t, 155, j.Boarding.Minutes)
		require.Equal(t, "Dampara", j.Dropping.Name)
		require.Empty(t, hit.Stops, "a hit carries its journey, not the route")

		whole := find(t, search.Query{Text: "feni", Sort: search.SortStartsAt}).Trips[0]
		require.Equal(t, "dhaka", whole.Journey.From.ID)
		require.Equal(t, "Kalabagan", whole.Journey.Boarding.Name, "the first boarding counter")
		require.EqualValues(t, 90000, whole.LowestPriceMinor, "the whole route's fare")

		plain := find(t, search.Query{Origin: "Dhaka", Destination: "Cumilla"})
		require.Equal(t, []int64{21, 22}, ids(plain))
		require.Nil(t, plain.Trips[1].Journey, "a trip without stops has no journey")
	})

	t.Run("pages", func(t *testing.T) {
		var got []int64
		for offset := range 3 {
			got = append(got, ids(find(t, search.Query{Origin: "Cumilla", Limit: 1, Offset: offset}))...)
		}
		require.Equal(t, []int64{21, 23, 24}, got)
	})

	t.Run("seats and withdrawal take every journey of a trip", func(t *testing.T) {
		full := journeys()[0]
		full.SeatsAvailable = 0
		require.NoError(t, idx.Put(ctx, []search.Trip{full}))
		require.Equal(t, []int64{23, 24}, ids(find(t, search.Query{Origin: "Cumilla", Destination: "Chattogram", MinSeatsAvailable: 1})))
		require.Equal(t, []int64{22}, ids(find(t, search.Query{Destination: "Cumilla", MinSeatsAvailable: 1})))
		require.NoError(t, idx.Delete(ctx, []int64{21, 99}))
		require.Equal(t, []int64{23, 24}, ids(find(t, search.Query{Origin: "Cumilla", Destination: "Chattogram"})))
		require.Equal(t, []int64{22, 23, 24}, ids(find(t, search.Query{})))
		require.Empty(t, ids(find(t, search.Query{Text: "padua"})))
	})
}
