package demo

import (
	"context"
	"errors"
	"fmt"
	"time"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	networkv1 "github.com/seatghor/seatghor/gen/seatghor/network/v1"
	"github.com/seatghor/seatghor/server/audit"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/display"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/network"
)

// The demo's bus network (issue 24): three operators' routes from Dhaka,
// with their counters, and timetables that make 30 days of trips. The
// timetable job makes the trips in the background once the workers start
// (`make run` does not wait for them).

// Counter is the demo network's counter clerk: counter staff of its
// operators (decision 0443), who sells their seats for cash in a shift and
// checks their passengers in.
const Counter = "demo-counter"

// Operator is a demo bus company.
type Operator struct {
	ID, Name, NameBn string
}

// Operators are the demo network's operators; demo-manager manages each,
// Counter (their counters' clerk) checks their passengers in. Not
// demo-gate, whose gate lists the demo shows alone (its next show first).
var Operators = []Operator{
	{"hanif", "Hanif Enterprise", "হানিফ এন্টারপ্রাইজ"},
	{"green-line", "Green Line Paribahan", "গ্রিন লাইন পরিবহন"},
	{"shyamoli", "Shyamoli Paribahan", "শ্যামলী পরিবহন"},
}

// The demo's coaches are the shipped layout templates (decision 0372): a
// 2+2 economy coach, a 2+1 business coach and a 1+2 double-deck sleeper.
const (
	economy  = "coach-2x2-40"
	business = "coach-2x1-27"
	sleeper  = "sleeper-1x2-30"
)

// counter is a counter at the minute the coach is there.
func counter(id, name, nameBn, address string, minute int32, board, drop bool) *catalogv1.Counter {
	return &catalogv1.Counter{CounterId: id, Name: name, NameBn: nameBn, Address: address, MinutesAfterDeparture: minute,
		Boarding: board, Dropping: drop}
}

func stop(place string, minute int32, counters ...*catalogv1.Counter) *catalogv1.TripStop {
	return &catalogv1.TripStop{Place: place, MinutesFromStart: minute, Counters: counters}
}

// Routes are the demo network's routes, each from Dhaka.
func Routes() []*networkv1.Route {
	board, drop := true, false
	both := func(id, name, nameBn, address string, minute int32) *catalogv1.Counter {
		return counter(id, name, nameBn, address, minute, true, true)
	}
	return []*networkv1.Route{
		{RouteId: "hanif-dhaka-chattogram", OrganizationId: "hanif", Name: "Dhaka – Chattogram via Cumilla and Feni",
			NameBn: "ঢাকা – চট্টগ্রাম (কুমিল্লা ও ফেনী হয়ে)", Stops: []*catalogv1.TripStop{
				stop("Dhaka", 0,
					counter("kalabagan", "Kalabagan", "কলাবাগান", "Mirpur Road, Kalabagan, Dhaka", 0, board, drop),
					counter("sayedabad", "Sayedabad", "সায়েদাবাদ", "Sayedabad Bus Terminal, Dhaka", 40, board, drop)),
				stop("Cumilla", 150, both("padua-bazar", "Padua Bazar", "পদুয়ার বাজার", "Padua Bazar Bishwa Road, Cumilla", 150)),
				stop("Feni", 210, both("mohipal", "Mohipal", "মহিপাল", "Mohipal flyover, Feni", 210)),
				stop("Chattogram", 330,
					counter("ak-khan", "A. K. Khan", "এ কে খান", "A. K. Khan Gate, Chattogram", 330, false, true),
					counter("dampara", "Dampara", "দামপাড়া", "Dampara Bus Stand, Chattogram", 350, false, true)),
			}},
		{RouteId: "green-line-dhaka-coxs-bazar", OrganizationId: "green-line", Name: "Dhaka – Cox's Bazar via Chattogram",
			NameBn: "ঢাকা – কক্সবাজার (চট্টগ্রাম হয়ে)", Stops: []*catalogv1.TripStop{
				stop("Dhaka", 0,
					counter("arambagh", "Arambagh", "আরামবাগ", "Arambagh, Motijheel, Dhaka", 0, board, drop),
					counter("sayedabad", "Sayedabad", "সায়েদাবাদ", "Sayedabad Bus Terminal, Dhaka", 30, board, drop)),
				stop("Chattogram", 330, both("gec", "GEC Circle", "জিইসি মোড়", "GEC Circle, Chattogram", 330)),
				stop("Cox's Bazar", 600, counter("kolatoli", "Kolatoli", "কলাতলী", "Kolatoli Road, Cox's Bazar", 600, false, true)),
			}},
		{RouteId: "shyamoli-dhaka-sylhet", OrganizationId: "shyamoli", Name: "Dhaka – Sylhet via Habiganj",
			NameBn: "ঢাকা – সিলেট (হবিগঞ্জ হয়ে)", Stops: []*catalogv1.TripStop{
				stop("Dhaka", 0,
					counter("fakirapool", "Fakirapool", "ফকিরাপুল", "Fakirapool, Motijheel, Dhaka", 0, board, drop),
					counter("sayedabad", "Sayedabad", "সায়েদাবাদ", "Sayedabad Bus Terminal, Dhaka", 25, board, drop)),
				stop("Habiganj", 220, both("habiganj", "Habiganj Bus Stand", "হবিগঞ্জ বাসস্ট্যান্ড", "Dhaka-Sylhet Highway, Habiganj", 220)),
				stop("Sylhet", 360, counter("kadamtali", "Kadamtali", "কদমতলী", "Kadamtali Bus Terminal, Sylhet", 360, false, true)),
			}},
		{RouteId: "hanif-dhaka-rajshahi", OrganizationId: "hanif", Name: "Dhaka – Rajshahi via Tangail and Natore",
			NameBn: "ঢাকা – রাজশাহী (টাঙ্গাইল ও নাটোর হয়ে)", Stops: []*catalogv1.TripStop{
				stop("Dhaka", 0,
					counter("gabtoli", "Gabtoli", "গাবতলী", "Gabtoli Bus Terminal, Dhaka", 0, board, drop),
					counter("abdullahpur", "Abdullahpur", "আব্দুল্লাহপুর", "Abdullahpur, Uttara, Dhaka", 35, board, drop)),
				stop("Tangail", 120, both("tangail", "Tangail Bypass", "টাঙ্গাইল বাইপাস", "Rabna Bypass, Tangail", 120)),
				stop("Natore", 300, both("natore", "Natore Bus Stand", "নাটোর বাসস্ট্যান্ড", "Harishpur, Natore", 300)),
				stop("Rajshahi", 360, counter("shiroil", "Shiroil", "শিরোইল", "Shiroil Bus Terminal, Rajshahi", 360, false, true)),
			}},
		{RouteId: "green-line-dhaka-khulna", OrganizationId: "green-line", Name: "Dhaka – Khulna over the Padma Bridge",
			NameBn: "ঢাকা – খুলনা (পদ্মা সেতু হয়ে)", Stops: []*catalogv1.TripStop{
				stop("Dhaka", 0,
					counter("kalabagan", "Kalabagan", "কলাবাগান", "Mirpur Road, Kalabagan, Dhaka", 0, board, drop),
					counter("jatrabari", "Jatrabari", "যাত্রাবাড়ী", "Jatrabari, Dhaka", 30, board, drop)),
				stop("Gopalganj", 180, both("gopalganj", "Gopalganj", "গোপালগঞ্জ", "Gopalganj Bus Stand", 180)),
				stop("Khulna", 270, counter("sonadanga", "Sonadanga", "সোনাডাঙ্গা", "Sonadanga Bus Terminal, Khulna", 270, false, true)),
			}},
		{RouteId: "shyamoli-dhaka-barishal", OrganizationId: "shyamoli", Name: "Dhaka – Barishal",
			NameBn: "ঢাকা – বরিশাল", Stops: []*catalogv1.TripStop{
				stop("Dhaka", 0, counter("gabtoli", "Gabtoli", "গাবতলী", "Gabtoli Bus Terminal, Dhaka", 0, board, drop)),
				stop("Barishal", 300, counter("nathullabad", "Nathullabad", "নথুল্লাবাদ", "Nathullabad Bus Terminal, Barishal", 300, false, true)),
			}},
	}
}

// Timetables are the demo network's timetables, in Dhaka time; dates
// count from the day now is in Dhaka (an extra run and a date off).
func Timetables(now time.Time) []*networkv1.Timetable {
	daily := []networkv1.Weekday{1, 2, 3, 4, 5, 6, 7}
	dhaka := display.ZoneOrDefault(display.DefaultZone)
	inDays := func(n int) string { return now.In(dhaka).AddDate(0, 0, n).Format(time.DateOnly) }
	// fares prices each stop pair of a route by its stops' minutes apart,
	// times perHour (rounded to 10 Tk), in class "".
	fares := func(routeID string, perHour int64) []*catalogv1.Fare {
		var r *networkv1.Route
		for _, x := range Routes() {
			if x.GetRouteId() == routeID {
				r = x
			}
		}
		var out []*catalogv1.Fare
		stops := r.GetStops()
		for i := range stops {
			for j := i + 1; j < len(stops); j++ {
				minutes := int64(stops[j].GetMinutesFromStart() - stops[i].GetMinutesFromStart())
				price := (minutes*perHour/60 + 500) / 1000 * 1000
				out = append(out, &catalogv1.Fare{FromStopId: stopID(stops[i]), ToStopId: stopID(stops[j]), PriceMinor: max(price, 10000)})
			}
		}
		return out
	}
	tt := func(id, route, title, template string, perHour int64, days []networkv1.Weekday, times ...string) *networkv1.Timetable {
		return &networkv1.Timetable{TimetableId: id, RouteId: route, Title: title, Days: days, DepartureTimes: times,
			Fares: fares(route, perHour), TimeZone: display.DefaultZone, LayoutTemplateId: template,
			SaleRules: &networkv1.SaleRules{MaxSeatsPerAccount: 6, MaxSeatsPerHold: 4}}
	}
	ctgDay := tt("hanif-chattogram-day", "hanif-dhaka-chattogram", "Dhaka to Chattogram", economy, 17000, daily, "07:00", "10:00", "14:30")
	ctgDay.ExtraRuns = []*networkv1.ExtraRun{{Date: inDays(7), DepartureTimes: []string{"16:00"}}}
	barishal := tt("shyamoli-barishal", "shyamoli-dhaka-barishal", "Dhaka to Barishal", economy, 13000, daily, "07:30", "21:00")
	barishal.DatesOff = []string{inDays(10)}
	return []*networkv1.Timetable{
		ctgDay,
		tt("hanif-chattogram-night", "hanif-dhaka-chattogram", "Dhaka to Chattogram", business, 25000, daily, "23:00"),
		tt("green-line-coxs-bazar-business", "green-line-dhaka-coxs-bazar", "Dhaka to Cox's Bazar", business, 24000, daily, "09:00", "21:30"),
		tt("green-line-coxs-bazar-sleeper", "green-line-dhaka-coxs-bazar", "Dhaka to Cox's Bazar sleeper", sleeper, 36000, daily, "22:30"),
		tt("shyamoli-sylhet", "shyamoli-dhaka-sylhet", "Dhaka to Sylhet", economy, 12000, daily, "06:30", "13:30", "23:30"),
		tt("hanif-rajshahi", "hanif-dhaka-rajshahi", "Dhaka to Rajshahi", economy, 13000, daily, "07:30", "22:00"),
		tt("green-line-khulna", "green-line-dhaka-khulna", "Dhaka to Khulna", business, 22000, daily, "08:30", "22:15"),
		barishal,
	}
}

// stopID is a route stop's id as the network completes it: its place's.
func stopID(s *catalogv1.TripStop) string {
	if s.GetStopId() != "" {
		return s.GetStopId()
	}
	return map[string]string{"Dhaka": "dhaka", "Cumilla": "cumilla", "Feni": "feni", "Chattogram": "chattogram",
		"Cox's Bazar": "coxs-bazar", "Habiganj": "habiganj", "Sylhet": "sylhet", "Tangail": "tangail", "Natore": "natore",
		"Rajshahi": "rajshahi", "Gopalganj": "gopalganj", "Khulna": "khulna", "Barishal": "barishal"}[s.GetPlace()]
}

// LoadNetwork creates the demo operators, their staff (demo-manager and
// demo-counter), routes and timetables that are missing, and brings changed
// ones to the demo's definition. It makes no trip: the timetable job
// does, in the background.
func LoadNetwork(ctx context.Context, cat *catalog.Service, net *network.Service, now time.Time) error {
	for _, o := range Operators {
		if _, err := cat.CreateOrganization(ctx, Manager, o.ID, o.Name, o.NameBn); err != nil {
			return fmt.Errorf("demo operator %s: %w", o.ID, err)
		}
		for user, role := range map[string]catalog.Role{Manager: catalog.RoleManager, Counter: catalog.RoleCounter} {
			if _, err := cat.SetMember(ctx, audit.Actor{Kind: audit.ActorAdmin, ID: Manager}, o.ID, user, role); err != nil {
				return fmt.Errorf("demo operator %s: %w", o.ID, err)
			}
		}
	}
	by := network.Caller{UserID: Manager}
	for _, r := range Routes() {
		_, err := net.CreateRoute(ctx, by, r)
		if fault.ReasonOf(err) == fault.NetworkExists {
			_, err = net.UpdateRoute(ctx, by, r, 0)
		}
		if err != nil {
			return fmt.Errorf("demo route %s: %w", r.GetRouteId(), err)
		}
	}
	for _, t := range Timetables(now) {
		_, err := net.DefineTimetable(ctx, by, t)
		if fault.ReasonOf(err) == fault.NetworkExists {
			err = nil // kept as it is: its dates are those of its first load
		}
		if err != nil && !errors.Is(err, context.Canceled) {
			return fmt.Errorf("demo timetable %s: %w", t.GetTimetableId(), err)
		}
	}
	return nil
}
