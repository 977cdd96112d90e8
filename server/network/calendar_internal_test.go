package network

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	networkv1 "github.com/seatghor/seatghor/gen/seatghor/network/v1"
)

func mustDate(t *testing.T, s string) date {
	t.Helper()
	d, err := parseDate(s)
	require.NoError(t, err)
	return d
}

// TestWallClockAcrossDaylightSaving: a departure keeps its wall-clock
// time on both sides of a change (decision 0362); the hour the spring
// change skips is read as if the clock had not jumped, and the hour the
// autumn change repeats is its first time.
func TestWallClockAcrossDaylightSaving(t *testing.T) {
	london, err := time.LoadLocation("Europe/London")
	require.NoError(t, err)
	newYork, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	dhaka, err := time.LoadLocation("Asia/Dhaka")
	require.NoError(t, err)
	for _, c := range []struct {
		name  string
		loc   *time.Location
		date  string
		clock string
		want  time.Time
		local string // the wall clock the trip shows
	}{
		{"London, the day before summer time", london, "2027-03-27", "08:00", time.Date(2027, 3, 27, 8, 0, 0, 0, time.UTC), "08:00"},
		{"London, summer time's first day", london, "2027-03-28", "08:00", time.Date(2027, 3, 28, 7, 0, 0, 0, time.UTC), "08:00"},
		{"London, the hour the clock skips", london, "2027-03-28", "01:30", time.Date(2027, 3, 28, 1, 30, 0, 0, time.UTC), "02:30"},
		{"London, just before the jump", london, "2027-03-28", "00:59", time.Date(2027, 3, 28, 0, 59, 0, 0, time.UTC), "00:59"},
		{"London, the last day of summer time", london, "2027-10-30", "08:00", time.Date(2027, 10, 30, 7, 0, 0, 0, time.UTC), "08:00"},
		{"London, the hour the clock repeats: its first time", london, "2027-10-31", "01:30", time.Date(2027, 10, 31, 0, 30, 0, 0, time.UTC), "01:30"},
		{"London, winter again", london, "2027-10-31", "08:00", time.Date(2027, 10, 31, 8, 0, 0, 0, time.UTC), "08:00"},
		{"New York, before the autumn change", newYork, "2026-10-31", "22:00", time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC), "22:00"},
		{"New York, after the autumn change", newYork, "2026-11-01", "22:00", time.Date(2026, 11, 2, 3, 0, 0, 0, time.UTC), "22:00"},
		{"New York, the repeated hour", newYork, "2026-11-01", "01:30", time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC), "01:30"},
		{"New York, the skipped hour", newYork, "2027-03-14", "02:30", time.Date(2027, 3, 14, 7, 30, 0, 0, time.UTC), "03:30"},
		{"Dhaka, no daylight saving", dhaka, "2027-03-28", "08:00", time.Date(2027, 3, 28, 2, 0, 0, 0, time.UTC), "08:00"},
		{"Dhaka, just after midnight", dhaka, "2026-12-01", "00:15", time.Date(2026, 11, 30, 18, 15, 0, 0, time.UTC), "00:15"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, ok := parseHHMM(c.clock)
			require.True(t, ok)
			got := wallClock(mustDate(t, c.date), h, c.loc)
			require.Equal(t, c.want, got.UTC())
			require.Equal(t, c.local, got.In(c.loc).Format("15:04"))
		})
	}
}

// TestCalendar: weekdays between valid_from and valid_to, but not the
// dates off, plus the extra runs (GTFS calendar and calendar_dates).
func TestCalendar(t *testing.T) {
	tt := &networkv1.Timetable{
		Days: []networkv1.Weekday{networkv1.Weekday_WEEKDAY_FRIDAY, networkv1.Weekday_WEEKDAY_SATURDAY},
		// Out of order and a duplicate of an extra run's: each run once, in order.
		DepartureTimes: []string{"22:30", "08:00"},
		ValidFrom:      "2026-12-04", ValidTo: "2026-12-19",
		DatesOff:  []string{"2026-12-11"},
		ExtraRuns: []*networkv1.ExtraRun{{Date: "2026-12-16", DepartureTimes: []string{"14:00"}}, {Date: "2026-12-26"}, {Date: "2026-12-05", DepartureTimes: []string{"08:00", "09:00"}}},
	}
	s, err := parseSchedule(tt)
	require.NoError(t, err)
	var got []string
	for _, r := range s.runsBetween(mustDate(t, "2026-12-01"), mustDate(t, "2026-12-31")) {
		got = append(got, r.date.String()+" "+r.time.String())
	}
	require.Equal(t, []string{
		"2026-12-04 08:00", "2026-12-04 22:30", // Friday, the first valid day
		"2026-12-05 08:00", "2026-12-05 09:00", "2026-12-05 22:30", // Saturday with an extra run
		// 11 December is off; Saturday the 12th runs
		"2026-12-12 08:00", "2026-12-12 22:30",
		"2026-12-16 14:00", // Victory Day: an extra run on a Wednesday
		"2026-12-18 08:00", "2026-12-18 22:30", "2026-12-19 08:00", "2026-12-19 22:30",
		// valid_to passed; an extra run with the timetable's times
		"2026-12-26 08:00", "2026-12-26 22:30",
	}, got)
}

// TestScheduleRefusesWhatDoesNotParse names the field at fault.
func TestScheduleRefusesWhatDoesNotParse(t *testing.T) {
	for _, c := range []struct {
		tt    *networkv1.Timetable
		field string
	}{
		{&networkv1.Timetable{TimeZone: "Asia/Nowhere"}, "timetable.time_zone"},
		{&networkv1.Timetable{DepartureTimes: []string{"24:00"}}, "timetable.departure_times[0]"},
		{&networkv1.Timetable{ValidFrom: "2026-02-30"}, "timetable.valid_from"},
		{&networkv1.Timetable{ValidFrom: "2026-12-02", ValidTo: "2026-12-01"}, "timetable.valid_to"},
		{&networkv1.Timetable{DatesOff: []string{"tomorrow"}}, "timetable.dates_off[0]"},
		{&networkv1.Timetable{ExtraRuns: []*networkv1.ExtraRun{{Date: "2026-12-16"}}}, "timetable.extra_runs[0].departure_times"},
	} {
		_, err := parseSchedule(c.tt)
		require.Error(t, err)
		f, ok := asFault(err)
		require.True(t, ok, "%v", err)
		require.Equal(t, c.field, f)
	}
}
