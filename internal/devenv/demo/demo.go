// Package demo loads the sample shows that `seatghor dev` starts with,
// among them the seed's sample database: show 7, a bus whose seats
// A1–A4 are free, and show 9, a general-admission show with 3 places left.
package demo

import (
	"context"
	"errors"
	"fmt"
	"time"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/server/audit"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/display"
)

// The demo shows belong to one organisation (decision 0075), with a
// manager who creates them and a gate clerk who may only scan their tickets.
const (
	Organization     = "demo-operator"
	OrganizationName = "Seatghor Demo Lines"
	// OrganizationNameBn is its name in Bengali script (decision 0385).
	OrganizationNameBn = "সিটঘর ডেমো লাইনস"
	Manager            = "demo-manager"
	Gate               = "demo-gate"
)

// Shows returns the demo shows, 30 days from now. Every show is in Dhaka
// (display.DefaultZone) and the time in a title is Dhaka's wall clock: the
// Cox's Bazar bus "10:00" leaves at 10:00 in Dhaka, stored as 04:00 UTC
// (decision 0170).
func Shows(now time.Time) []catalog.Show {
	dhaka := display.ZoneOrDefault(display.DefaultZone)
	y, m, d := now.In(dhaka).AddDate(0, 0, 30).Date()
	// at is hh:mm in Dhaka on that day (hours past 24 run into the next).
	at := func(hour, minute int) time.Time { return time.Date(y, m, d, hour, minute, 0, 0, dhaka).UTC() }
	rows := []string{"A", "B", "C", "D", "E", "F", "G", "H", "I", "J"}
	return []catalog.Show{
		{ID: 1, Kind: catalogv1.ShowKind_SHOW_KIND_BUS_TRIP, Title: "Dhaka to Chattogram 08:00", Operator: "Green Line", OperatorBn: "গ্রিন লাইন",
			Origin: "Dhaka", Destination: "Chattogram", StartsAt: at(8, 0), Currency: "BDT", TimeZone: display.DefaultZone,
			Sections: []catalog.Section{{Name: "Main", NameBn: "প্রধান", Rows: rows, SeatsPerRow: 4, PriceMinor: 85000}}},
		{ID: 2, Kind: catalogv1.ShowKind_SHOW_KIND_BUS_TRIP, Title: "Dhaka to Sylhet 22:30", Operator: "Shyamoli", OperatorBn: "শ্যামলী",
			Origin: "Dhaka", Destination: "Sylhet", StartsAt: at(22, 30), Currency: "BDT", TimeZone: display.DefaultZone,
			Sections: []catalog.Section{{Name: "Main", Rows: rows, SeatsPerRow: 4, PriceMinor: 70000}}},
		{ID: 3, Kind: catalogv1.ShowKind_SHOW_KIND_SPORT, Title: "Bangladesh v India, ODI", Venue: "Sher-e-Bangla Stadium, Mirpur",
			TitleBn: "বাংলাদেশ বনাম ভারত, ওয়ানডে", VenueBn: "শেরেবাংলা স্টেডিয়াম, মিরপুর",
			StartsAt: at(14, 0), Currency: "BDT", TimeZone: display.DefaultZone,
			Sections: []catalog.Section{
				{Name: "Grand Stand", Rows: []string{"A", "B", "C", "D", "E"}, SeatsPerRow: 40, PriceMinor: 300000},
				{Name: "Gallery", Rows: []string{"K", "L", "M", "N", "P"}, SeatsPerRow: 60, PriceMinor: 50000},
			},
			GAAreas: []catalog.GAArea{{Name: "Hill", Capacity: 2000, PriceMinor: 20000}}},
		// The seed's sample database.
		{ID: 7, Kind: catalogv1.ShowKind_SHOW_KIND_BUS_TRIP, Title: "Dhaka to Cox's Bazar 10:00", Operator: "Hanif", OperatorBn: "হানিফ",
			Origin: "Dhaka", Destination: "Cox's Bazar", StartsAt: at(10, 0), Currency: "BDT", TimeZone: display.DefaultZone,
			Sections: []catalog.Section{{Name: "Main", Rows: rows, SeatsPerRow: 4, PriceMinor: 85000}}},
		{ID: 9, Kind: catalogv1.ShowKind_SHOW_KIND_CONCERT, Title: "Rooftop Unplugged", Venue: "Gulshan, Dhaka",
			TitleBn: "রুফটপ আনপ্লাগড", VenueBn: "গুলশান, ঢাকা",
			StartsAt: at(19, 0), Currency: "BDT", TimeZone: display.DefaultZone,
			GAAreas: []catalog.GAArea{{Name: "General", Capacity: 3, PriceMinor: 150000}}},
		// Trips between places renamed in 2018, some entered under their
		// former names: CreateShow stores the official ones, and search finds
		// them by either (decisions 0110, 0112).
		{ID: 10, Kind: catalogv1.ShowKind_SHOW_KIND_BUS_TRIP, Title: "Dhaka to Cumilla 07:00", Operator: "Tisha", OperatorBn: "তিশা",
			Origin: "Dhaka", Destination: "Comilla", StartsAt: at(7, 0), Currency: "BDT", TimeZone: display.DefaultZone,
			Sections: []catalog.Section{{Name: "Main", Rows: rows, SeatsPerRow: 4, PriceMinor: 45000}}},
		{ID: 11, Kind: catalogv1.ShowKind_SHOW_KIND_BUS_TRIP, Title: "Dhaka to Barishal 21:00", Operator: "Sakura", OperatorBn: "সাকুরা",
			Origin: "Dhaka", Destination: "Barisal", StartsAt: at(21, 0), Currency: "BDT", TimeZone: display.DefaultZone,
			Sections: []catalog.Section{{Name: "Main", Rows: rows, SeatsPerRow: 4, PriceMinor: 65000}}},
		{ID: 12, Kind: catalogv1.ShowKind_SHOW_KIND_BUS_TRIP, Title: "Dhaka to Jashore 23:00", Operator: "Eagle", OperatorBn: "ঈগল",
			Origin: "Dhaka", Destination: "Jashore", StartsAt: at(23, 0), Currency: "BDT", TimeZone: display.DefaultZone,
			Sections: []catalog.Section{{Name: "Main", Rows: rows, SeatsPerRow: 4, PriceMinor: 70000}}},
		{ID: 13, Kind: catalogv1.ShowKind_SHOW_KIND_BUS_TRIP, Title: "Dhaka to Bogura 13:00", Operator: "SR Travels", OperatorBn: "এস আর ট্রাভেলস",
			Origin: "Dhaka", Destination: "Bogra", StartsAt: at(13, 0), Currency: "BDT", TimeZone: display.DefaultZone,
			Sections: []catalog.Section{{Name: "Main", Rows: rows, SeatsPerRow: 4, PriceMinor: 60000}}},
		{ID: 14, Kind: catalogv1.ShowKind_SHOW_KIND_BUS_TRIP, Title: "Jashore to Barishal 09:00", Operator: "Sakura", OperatorBn: "সাকুরা",
			Origin: "Jessore", Destination: "Barishal", StartsAt: at(33, 0), Currency: "BDT", TimeZone: display.DefaultZone,
			Sections: []catalog.Section{{Name: "Main", Rows: rows, SeatsPerRow: 4, PriceMinor: 55000}}},
	}
}

// Load creates the demo organisation and its members, and the demo shows
// that do not exist yet; it returns how many shows it created.
func Load(ctx context.Context, svc *catalog.Service, now time.Time) (int, error) {
	if _, err := svc.CreateOrganization(ctx, Manager, Organization, OrganizationName, OrganizationNameBn); err != nil {
		return 0, fmt.Errorf("demo organization: %w", err)
	}
	for user, role := range map[string]catalog.Role{Manager: catalog.RoleManager, Gate: catalog.RoleGate} {
		if _, err := svc.SetMember(ctx, audit.Actor{Kind: audit.ActorAdmin, ID: Manager}, Organization, user, role); err != nil {
			return 0, fmt.Errorf("demo organization: %w", err)
		}
	}
	n := 0
	for _, s := range Shows(now) {
		_, err := svc.GetShow(ctx, s.ID)
		if err == nil {
			continue
		}
		if !errors.Is(err, catalog.ErrNotFound) {
			return n, err
		}
		s.OrganizationID = Organization
		if _, err := svc.CreateShow(ctx, Manager, catalog.NewShow{Show: s}); err != nil {
			return n, fmt.Errorf("demo show %d: %w", s.ID, err)
		}
		n++
	}
	return n, nil
}
