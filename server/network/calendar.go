package network

import (
	"fmt"
	"slices"
	"time"

	networkv1 "github.com/seatghor/seatghor/gen/seatghor/network/v1"
	"github.com/seatghor/seatghor/server/display"
	"github.com/seatghor/seatghor/server/fault"
)

// A timetable's calendar, after GTFS: weekdays between two dates
// (calendar.txt), dates off and extra runs (calendar_dates.txt). Dates and
// times are the wall clock of the timetable's zone (decision 0362).

// date is a local calendar date, as midnight UTC of that date: comparable,
// and one day is always 24 hours apart.
type date time.Time

func (d date) String() string { return time.Time(d).Format(time.DateOnly) }

func (d date) addDays(n int) date { return date(time.Time(d).AddDate(0, 0, n)) }

func (d date) after(e date) bool { return time.Time(d).After(time.Time(e)) }

func (d date) weekday() time.Weekday { return time.Time(d).Weekday() }

func parseDate(s string) (date, error) {
	t, err := time.Parse(time.DateOnly, s)
	return date(t), err
}

// dateOf is the local date of t in loc.
func dateOf(t time.Time, loc *time.Location) date {
	y, m, d := t.In(loc).Date()
	return date(time.Date(y, m, d, 0, 0, 0, 0, time.UTC))
}

// hhmm is a local departure time, minutes after midnight.
type hhmm int

func (h hhmm) String() string { return fmt.Sprintf("%02d:%02d", int(h)/60, int(h)%60) }

func parseHHMM(s string) (hhmm, bool) {
	t, err := time.Parse("15:04", s)
	if err != nil || len(s) != 5 {
		return 0, false
	}
	return hhmm(t.Hour()*60 + t.Minute()), true
}

// schedule is a timetable's calendar, parsed.
type schedule struct {
	loc      *time.Location
	weekdays [7]bool // by time.Weekday
	times    []hhmm
	from, to *date
	off      map[date]bool
	extra    map[date][]hhmm
}

// weekdays maps the API's days (Monday 1 … Sunday 7) to Go's.
var weekdays = map[networkv1.Weekday]time.Weekday{
	networkv1.Weekday_WEEKDAY_MONDAY: time.Monday, networkv1.Weekday_WEEKDAY_TUESDAY: time.Tuesday,
	networkv1.Weekday_WEEKDAY_WEDNESDAY: time.Wednesday, networkv1.Weekday_WEEKDAY_THURSDAY: time.Thursday,
	networkv1.Weekday_WEEKDAY_FRIDAY: time.Friday, networkv1.Weekday_WEEKDAY_SATURDAY: time.Saturday,
	networkv1.Weekday_WEEKDAY_SUNDAY: time.Sunday,
}

// parseSchedule reads t's calendar, refusing a field that does not parse.
func parseSchedule(t *networkv1.Timetable) (schedule, error) {
	zone := t.GetTimeZone()
	if zone == "" {
		zone = DefaultZone
	}
	loc, err := display.Zone(zone)
	if err != nil {
		return schedule{}, fault.OnField(fault.NetworkInvalid, "timetable.time_zone", "%q is not an IANA time zone (e.g. %q)", zone, DefaultZone)
	}
	s := schedule{loc: loc, off: map[date]bool{}, extra: map[date][]hhmm{}}
	for _, d := range t.GetDays() {
		wd, ok := weekdays[d]
		if !ok {
			return schedule{}, fault.OnField(fault.NetworkInvalid, "timetable.days", "%v is not a day of the week", d)
		}
		s.weekdays[wd] = true
	}
	if s.times, err = parseTimes("timetable.departure_times", t.GetDepartureTimes()); err != nil {
		return schedule{}, err
	}
	for _, f := range []struct {
		field, value string
		to           **date
	}{{"timetable.valid_from", t.GetValidFrom(), &s.from}, {"timetable.valid_to", t.GetValidTo(), &s.to}} {
		if f.value == "" {
			continue
		}
		d, err := parseDate(f.value)
		if err != nil {
			return schedule{}, fault.OnField(fault.NetworkInvalid, f.field, "%q is not a date (YYYY-MM-DD)", f.value)
		}
		*f.to = &d
	}
	if s.from != nil && s.to != nil && s.from.after(*s.to) {
		return schedule{}, fault.OnField(fault.NetworkInvalid, "timetable.valid_to", "it ends before it starts (valid_from %s)", s.from)
	}
	for i, v := range t.GetDatesOff() {
		d, err := parseDate(v)
		if err != nil {
			return schedule{}, fault.OnField(fault.NetworkInvalid, fmt.Sprintf("timetable.dates_off[%d]", i), "%q is not a date (YYYY-MM-DD)", v)
		}
		s.off[d] = true
	}
	for i, x := range t.GetExtraRuns() {
		field := fmt.Sprintf("timetable.extra_runs[%d]", i)
		d, err := parseDate(x.GetDate())
		if err != nil {
			return schedule{}, fault.OnField(fault.NetworkInvalid, field+".date", "%q is not a date (YYYY-MM-DD)", x.GetDate())
		}
		times := s.times
		if len(x.GetDepartureTimes()) > 0 {
			if times, err = parseTimes(field+".departure_times", x.GetDepartureTimes()); err != nil {
				return schedule{}, err
			}
		}
		if len(times) == 0 {
			return schedule{}, fault.OnField(fault.NetworkInvalid, field+".departure_times", "an extra run needs departure times (its own or the timetable's)")
		}
		s.extra[d] = append(s.extra[d], times...)
	}
	return s, nil
}

func parseTimes(field string, in []string) ([]hhmm, error) {
	out := make([]hhmm, 0, len(in))
	for i, v := range in {
		h, ok := parseHHMM(v)
		if !ok {
			return nil, fault.OnField(fault.NetworkInvalid, fmt.Sprintf("%s[%d]", field, i), "%q is not a time of day (HH:MM, 00:00 to 23:59)", v)
		}
		out = append(out, h)
	}
	return out, nil
}

// run is one run a schedule has: a local date and departure time, and the
// instant they are.
type run struct {
	date     date
	time     hhmm
	startsAt time.Time
}

// runsBetween lists the schedule's runs on the local dates first to last,
// in order: on a date its weekdays and valid dates include, but not off,
// at its departure times; and on a date of an extra run, at that run's.
func (s schedule) runsBetween(first, last date) []run {
	var out []run
	for d := first; !d.after(last); d = d.addDays(1) {
		var times []hhmm
		if s.weekdays[d.weekday()] && (s.from == nil || !s.from.after(d)) && (s.to == nil || !d.after(*s.to)) && !s.off[d] {
			times = append(times, s.times...)
		}
		times = append(times, s.extra[d]...)
		slices.Sort(times)
		for _, t := range slices.Compact(times) {
			out = append(out, run{date: d, time: t, startsAt: wallClock(d, t, s.loc)})
		}
	}
	return out
}

// wallClock is the instant loc's wall clock reads t on d (decision 0362):
// a coach at 08:00 leaves at 08:00 local time the whole year, whatever the
// offset that day. Where the clock jumps over t (the spring change), it
// is when the clock would have read t had it not jumped: 01:30 in London
// on the last Sunday of March is 02:30 BST. Where it reads t twice (the
// autumn change), it is the first time.
func wallClock(d date, t hhmm, loc *time.Location) time.Time {
	y, m, day := time.Time(d).Date()
	asUTC := time.Date(y, m, day, int(t)/60, int(t)%60, 0, 0, time.UTC)
	noon := time.Date(y, m, day, 12, 0, 0, 0, time.UTC)
	var (
		best  time.Time
		found bool
	)
	// The zone's offsets around that day: a day before, that day, a day
	// after cover a change on it.
	for _, probe := range []time.Time{noon.Add(-36 * time.Hour), noon, noon.Add(36 * time.Hour)} {
		_, off := probe.In(loc).Zone()
		at := asUTC.Add(-time.Duration(off) * time.Second)
		if l := at.In(loc); l.Hour()*60+l.Minute() == int(t) && l.Day() == day {
			if !found || at.Before(best) {
				best, found = at, true
			}
		}
	}
	if found {
		return best
	}
	_, before := noon.Add(-36 * time.Hour).In(loc).Zone()
	return asUTC.Add(-time.Duration(before) * time.Second)
}
