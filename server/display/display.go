// Package display writes what a buyer or a gate reads: the times of a show
// in the show's own time zone with the zone named, prices in taka, in
// English or Bengali (decision 0170). Everything the API stores and sends as
// a timestamp stays UTC; only the words people read are local.
package display

import (
	"errors"
	"fmt"
	"strings"
	"time"

	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	// Zones must not depend on the host's zoneinfo: a container without it
	// would print UTC or refuse every show.
	_ "time/tzdata"
)

// DefaultZone is the zone of a show created without one: Seatghor sells in
// Bangladesh.
const DefaultZone = "Asia/Dhaka"

// Lang is a language a buyer reads.
type Lang string

// The languages.
const (
	English Lang = "en"
	Bengali Lang = "bn"
)

// ParseLang reads a language tag ("bn", "bn-BD", "en-GB"); anything that
// is not Bengali is English, the language of the API.
func ParseLang(tag string) Lang {
	if t := strings.ToLower(tag); t == "bn" || strings.HasPrefix(t, "bn-") || strings.HasPrefix(t, "bn_") {
		return Bengali
	}
	return English
}

// ErrUnknownZone means a name is not an IANA time zone.
var ErrUnknownZone = errors.New("not an IANA time zone")

// Zone loads an IANA zone by name; "" is DefaultZone. "Local" (the
// server's own, which differs between machines) is refused.
func Zone(name string) (*time.Location, error) {
	if name == "" {
		name = DefaultZone
	}
	if name == "Local" {
		return nil, fmt.Errorf("%q: %w", name, ErrUnknownZone)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", name, ErrUnknownZone)
	}
	return loc, nil
}

// ZoneOrDefault is Zone for names already checked when they were stored:
// a name this build does not know (an older tzdata) falls back to
// DefaultZone rather than failing a read.
func ZoneOrDefault(name string) *time.Location {
	if loc, err := Zone(name); err == nil {
		return loc
	}
	loc, _ := Zone(DefaultZone)
	return loc
}

// Time is t as read where the show is, with the zone named:
// "Wed 30 Dec 2026, 16:00 (Asia/Dhaka, +06)" or
// "বুধ ৩০ ডিসেম্বর ২০২৬, ১৬:০০ (Asia/Dhaka, +০৬)".
func Time(t time.Time, loc *time.Location, lang Lang) string {
	l := t.In(loc)
	abbr := l.Format("MST")
	if lang != Bengali {
		return fmt.Sprintf("%s (%s, %s)", l.Format("Mon 2 Jan 2006, 15:04"), loc.String(), abbr)
	}
	return Digits(fmt.Sprintf("%s %d %s %d, %s (%s, %s)", bnWeekdays[l.Weekday()], l.Day(),
		bnMonths[l.Month()-1], l.Year(), l.Format("15:04"), loc.String(), abbr), Bengali)
}

// Local is t in loc as RFC 3339 with the zone's offset,
// "2026-12-30T16:00:00+06:00": for programs that want the local wall time.
func Local(t time.Time, loc *time.Location) string { return t.In(loc).Format(time.RFC3339) }

// LocalTime is at as the API sends it for reading: the zone, the wall time
// and the English and Bengali text.
func LocalTime(at time.Time, loc *time.Location) *commonv1.LocalTime {
	return &commonv1.LocalTime{TimeZone: loc.String(), WallTime: Local(at, loc),
		En: Time(at, loc, English), Bn: Time(at, loc, Bengali)}
}

// Day is the calendar day t falls on in loc as a number, 20261230: what the
// search `date` filter matches (decision 0172).
func Day(t time.Time, loc *time.Location) int {
	y, m, d := t.In(loc).Date()
	return y*10000 + int(m)*100 + d
}

// Money writes an amount of minor units (paisa) with the taka sign and
// thousands separators, "৳1,200.00" or "৳১,২০০.০০"; another currency is
// written with its code, "USD 12.50".
func Money(minor int64, currency string, lang Lang) string {
	sign := ""
	if minor < 0 {
		sign, minor = "-", -minor
	}
	whole := fmt.Sprint(minor / 100)
	var b strings.Builder
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	s := fmt.Sprintf("%s.%02d", b.String(), minor%100)
	if currency == "BDT" {
		return Digits(sign+"৳"+s, lang)
	}
	return Digits(sign+currency+" "+s, lang)
}

// Digits writes the ASCII digits of s as Bengali digits in Bengali; in
// English s is unchanged.
func Digits(s string, lang Lang) string {
	if lang != Bengali {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return '০' + (r - '0')
		}
		return r
	}, s)
}

var bnWeekdays = [...]string{"রবি", "সোম", "মঙ্গল", "বুধ", "বৃহস্পতি", "শুক্র", "শনি"}

var bnMonths = [...]string{"জানুয়ারি", "ফেব্রুয়ারি", "মার্চ", "এপ্রিল", "মে", "জুন", "জুলাই", "আগস্ট",
	"সেপ্টেম্বর", "অক্টোবর", "নভেম্বর", "ডিসেম্বর"}
