package catalog

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/server/display"
	"github.com/seatghor/seatghor/server/fault"
)

// validTrip is a bus trip complete accepts: Dhaka → Cumilla → Feni →
// Chattogram, 40 economy seats and 4 business, fares for some pairs.
func validTrip() Show {
	return Show{
		Kind: catalogv1.ShowKind_SHOW_KIND_BUS_TRIP, Title: "Dhaka to Chattogram 08:00", Currency: "BDT",
		StartsAt: testNow.Add(30 * 24 * time.Hour),
		Sections: []Section{{Name: "Economy", Rows: []string{"A", "B", "C", "D", "E", "F", "G", "H", "I", "J"}, SeatsPerRow: 4},
			{Name: "Business", Rows: []string{"K"}, SeatsPerRow: 4, SeatClass: "business"}},
		Stops: []TripStop{
			{Place: "Dhaka", Counters: []Counter{{ID: "kalabagan", Name: "Kalabagan"}, {ID: "sayedabad", Name: "Sayedabad", Minutes: 30}}},
			{Place: "Comilla", Minutes: 120, Counters: []Counter{{ID: "cantonment", Name: "Cantonment", Minutes: 120}}},
			{Place: "Feni", Minutes: 180},
			{Place: "Chittagong", Minutes: 330, Counters: []Counter{{ID: "garib-e-newaz", Name: "Garib-e-Newaz", Minutes: 330}}},
		},
		Fares: []Fare{{From: "dhaka", To: "chattogram", PriceMinor: 120000},
			{From: "dhaka", To: "chattogram", SeatClass: "business", PriceMinor: 200000},
			{From: "cumilla", To: "chattogram", PriceMinor: 90000}},
	}
}

// TestCompleteFillsTheTrip: a trip's places go through the gazetteer, its
// stop ids default to the places' ids, its origin and destination come
// from its first and last stops, and its counters board and drop as their
// stops' places on the route say.
func TestCompleteFillsTheTrip(t *testing.T) {
	t.Parallel()
	s := validTrip()
	require.NoError(t, complete(&s, "creator", testNow))
	require.Equal(t, []string{"dhaka", "cumilla", "feni", "chattogram"}, s.Trip().StopIDs())
	require.Equal(t, "Cumilla", s.Stops[1].Place, "Comilla is Cumilla's old name")
	require.Equal(t, "cumilla", s.Stops[1].PlaceID)
	require.Equal(t, "Dhaka", s.Origin)
	require.Equal(t, "dhaka", s.OriginPlaceID)
	require.Equal(t, "Chattogram", s.Destination)
	require.Equal(t, "chattogram", s.DestinationPlaceID)
	require.Equal(t, 3, s.Trip().Legs())
	require.Equal(t, 44, s.SeatCount)
	c := s.Stops[0].Counters[0]
	require.True(t, c.Boarding && !c.Dropping, "the first stop's counters board")
	c = s.Stops[1].Counters[0]
	require.True(t, c.Boarding && c.Dropping, "a middle stop's counters do both")
	c = s.Stops[3].Counters[0]
	require.True(t, !c.Boarding && c.Dropping, "the last stop's counters drop")

	// The API's answer: times in the show's zone, names in both languages.
	p := s.Proto()
	require.Len(t, p.GetStops(), 4)
	cum := p.GetStops()[1]
	require.Equal(t, "কুমিল্লা", cum.GetPlaceBengali())
	require.Equal(t, s.StartsAt.Add(120*time.Minute), cum.GetDepartsAt().AsTime())
	require.Equal(t, "2026-03-31T14:00:00+06:00", cum.GetDepartsAtLocal().GetWallTime(), "08:00 UTC + 2 h is 14:00 in Dhaka")
	require.Equal(t, s.StartsAt.Add(30*time.Minute), p.GetStops()[0].GetCounters()[1].GetAt().AsTime())
	require.Len(t, p.GetFares(), 3)

	// A trip without stops is as before.
	plain := validShow()
	require.NoError(t, complete(&plain, "creator", testNow))
	require.Empty(t, plain.Proto().GetStops())
	require.Equal(t, 1, plain.Trip().Legs())
}

// TestCompleteRefusesABadTrip: every trip complete refuses names its field.
func TestCompleteRefusesABadTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		edit  func(*Show)
		field string // empty: accepted
	}{
		{"one stop", func(s *Show) { s.Stops = s.Stops[:1] }, "stops"},
		{"stops on a concert", func(s *Show) { s.Kind = catalogv1.ShowKind_SHOW_KIND_CONCERT }, "stops"},
		{"general admission on a trip with stops", func(s *Show) { s.GAAreas = []GAArea{{Name: "Roof", Capacity: 5}} }, "ga_areas"},
		{"no fares", func(s *Show) { s.Fares = nil }, "fares"},
		{"fares without stops", func(s *Show) { s.Stops = nil }, "fares"},
		{"the first stop after the departure", func(s *Show) { s.Stops[0].Minutes = 5 }, "stops[0].minutes_from_start"},
		{"a stop no later than the one before", func(s *Show) { s.Stops[2].Minutes = 120 }, "stops[2].minutes_from_start"},
		{"a stop twice", func(s *Show) { s.Stops[2].Place = "Cumilla" }, "stops[2].stop_id"},
		{"the same place twice under two ids", func(s *Show) { s.Stops[2].Place, s.Stops[2].StopID = "Cumilla", "cumilla-bypass" }, ""},
		{"a free-text place gets an id of its name", func(s *Show) { s.Stops[2].Place = "Mirsarai Bazar" }, ""},
		{"a free-text place without a Latin name", func(s *Show) { s.Stops[2].Place = "মিরসরাই বাজার ঘাট" }, "stops[2].stop_id"},
		{"an empty place", func(s *Show) { s.Stops[2].Place = " " }, "stops[2].place"},
		{"a counter twice on the trip", func(s *Show) { s.Stops[1].Counters[0].ID = "kalabagan" }, "stops[1].counters[0].counter_id"},
		{"a counter without a name", func(s *Show) { s.Stops[1].Counters[0].Name = "" }, "stops[1].counters[0].name"},
		{"boarding at the last stop", func(s *Show) { s.Stops[3].Counters[0].Boarding = true }, "stops[3].counters[0].boarding"},
		{"an origin that is not the first stop", func(s *Show) { s.Origin = "Sylhet" }, "origin"},
		{"the origin as the first stop", func(s *Show) { s.Origin = "dhaka" }, ""},
		{"a destination that is not the last stop", func(s *Show) { s.Destination = "Feni" }, "destination"},
		{"a fare from an unknown stop", func(s *Show) { s.Fares[0].From = "sylhet" }, "fares[0].from_stop_id"},
		{"a fare to an unknown stop", func(s *Show) { s.Fares[0].To = "sylhet" }, "fares[0].to_stop_id"},
		{"a fare the wrong way", func(s *Show) { s.Fares[0].From, s.Fares[0].To = "chattogram", "dhaka" }, "fares[0].to_stop_id"},
		{"a fare of one stop", func(s *Show) { s.Fares[0].To = "dhaka" }, "fares[0].to_stop_id"},
		{"a fare of an unknown class", func(s *Show) { s.Fares[0].SeatClass = "sleeper" }, "fares[0].seat_class"},
		{"a fare twice", func(s *Show) { s.Fares[2] = s.Fares[0] }, "fares[2]"},
		{"a fare past the price bound", func(s *Show) { s.Fares[0].PriceMinor = 1_000_000_001 }, "fares[0].price_minor"},
		{"a free fare", func(s *Show) { s.Fares[0].PriceMinor = 0 }, ""},
		{"more seat-legs than a show may have", func(s *Show) {
			s.Sections[0].SeatsPerRow = 4000
		}, "stops"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := validTrip()
			tc.edit(&s)
			err := complete(&s, "creator", testNow)
			if tc.field == "" {
				require.NoError(t, err)
				return
			}
			e, ok := fault.As(err)
			require.True(t, ok, "%v", err)
			require.Equal(t, fault.ShowInvalid, e.Reason, "%v", err)
			require.Equal(t, tc.field, e.Field, "%v", err)
		})
	}
}

// TestJourneyProtoNamesTheJourney: the journey a buyer reads names its
// stops in both languages, its counters and their times in the trip's zone.
func TestJourneyProtoNamesTheJourney(t *testing.T) {
	t.Parallel()
	s := validTrip()
	require.NoError(t, complete(&s, "creator", testNow))
	j := s.Trip().JourneyProto(1, 3, "cantonment", "garib-e-newaz")
	require.Equal(t, "cumilla", j.GetFromStopId())
	require.Equal(t, "chattogram", j.GetToStopId())
	require.Equal(t, "Cumilla", j.GetFromName())
	require.Equal(t, "কুমিল্লা", j.GetFromNameBn())
	require.Equal(t, "চট্টগ্রাম", j.GetToNameBn())
	require.Equal(t, "Cantonment", j.GetBoardingCounterName())
	require.Equal(t, "Garib-e-Newaz", j.GetDroppingCounterName())
	require.Equal(t, s.StartsAt.Add(2*time.Hour), j.GetDepartsAt().AsTime())
	require.Equal(t, s.StartsAt.Add(2*time.Hour), j.GetBoardingAt().AsTime())
	require.Equal(t, s.StartsAt.Add(330*time.Minute), j.GetArrivesAt().AsTime())
	require.Equal(t, "2026-03-31T14:00:00+06:00", j.GetBoardingAtLocal().GetWallTime())
	require.Nil(t, s.Trip().JourneyProto(2, 1, "", ""), "not a journey")
	require.Nil(t, validShow().Trip().JourneyProto(0, 1, "", ""), "a show without stops")
}

// TestCounterNameIsTheStopsOrTheID: a counter ticket names the counter that
// sold it (decision 0463) as the trip's stops name it, in Bengali when it
// has a Bengali name, and by its id when no stop has it.
func TestCounterNameIsTheStopsOrTheID(t *testing.T) {
	t.Parallel()
	trip := validTrip().Trip()
	trip.Stops[0].Counters[0].NameBn = "কলাবাগান"
	for _, tc := range []struct {
		id   string
		lang display.Lang
		want string
	}{
		{"kalabagan", display.English, "Kalabagan"},
		{"kalabagan", display.Bengali, "কলাবাগান"},
		{"sayedabad", display.Bengali, "Sayedabad"}, // no Bengali name: the English one
		{"garib-e-newaz", display.English, "Garib-e-Newaz"},
		{"head-office", display.Bengali, "head-office"},
		{"", display.English, ""},
	} {
		require.Equal(t, tc.want, trip.CounterName(tc.id, tc.lang), "%s in %s", tc.id, tc.lang)
	}
}
