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
	"github.com/seatghor/seatghor/server/catalog"
)

// The demo shows belong to one organisation (decision 0075), with a
// manager who creates them and a gate clerk who may only scan their tickets.
const (
	Organization     = "demo-operator"
	OrganizationName = "Seatghor Demo Lines"
	Manager          = "demo-manager"
	Gate             = "demo-gate"
)

// Shows returns the demo shows, starting relative to now.
func Shows(now time.Time) []catalog.Show {
	day := now.UTC().Truncate(24*time.Hour).AddDate(0, 0, 30)
	rows := []string{"A", "B", "C", "D", "E", "F", "G", "H", "I", "J"}
	return []catalog.Show{
		{ID: 1, Kind: catalogv1.ShowKind_SHOW_KIND_BUS_TRIP, Title: "Dhaka to Chattogram 08:00", Operator: "Green Line",
			Origin: "Dhaka", Destination: "Chattogram", StartsAt: day.Add(8 * time.Hour), Currency: "BDT",
			Sections: []catalog.Section{{Name: "Main", Rows: rows, SeatsPerRow: 4, PriceMinor: 85000}}},
		{ID: 2, Kind: catalogv1.ShowKind_SHOW_KIND_BUS_TRIP, Title: "Dhaka to Sylhet 22:30", Operator: "Shyamoli",
			Origin: "Dhaka", Destination: "Sylhet", StartsAt: day.Add(22*time.Hour + 30*time.Minute), Currency: "BDT",
			Sections: []catalog.Section{{Name: "Main", Rows: rows, SeatsPerRow: 4, PriceMinor: 70000}}},
		{ID: 3, Kind: catalogv1.ShowKind_SHOW_KIND_SPORT, Title: "Bangladesh v India, ODI", Venue: "Sher-e-Bangla Stadium, Mirpur",
			StartsAt: day.Add(14 * time.Hour), Currency: "BDT",
			Sections: []catalog.Section{
				{Name: "Grand Stand", Rows: []string{"A", "B", "C", "D", "E"}, SeatsPerRow: 40, PriceMinor: 300000},
				{Name: "Gallery", Rows: []string{"K", "L", "M", "N", "P"}, SeatsPerRow: 60, PriceMinor: 50000},
			},
			GAAreas: []catalog.GAArea{{Name: "Hill", Capacity: 2000, PriceMinor: 20000}}},
		// The seed's sample database.
		{ID: 7, Kind: catalogv1.ShowKind_SHOW_KIND_BUS_TRIP, Title: "Dhaka to Cox's Bazar 10:00", Operator: "Hanif",
			Origin: "Dhaka", Destination: "Cox's Bazar", StartsAt: day.Add(10 * time.Hour), Currency: "BDT",
			Sections: []catalog.Section{{Name: "Main", Rows: rows, SeatsPerRow: 4, PriceMinor: 85000}}},
		{ID: 9, Kind: catalogv1.ShowKind_SHOW_KIND_CONCERT, Title: "Rooftop Unplugged", Venue: "Gulshan, Dhaka",
			StartsAt: day.Add(19 * time.Hour), Currency: "BDT",
			GAAreas: []catalog.GAArea{{Name: "General", Capacity: 3, PriceMinor: 150000}}},
		// Trips between places renamed in 2018, some entered under their
		// former names: CreateShow stores the official ones, and search finds
		// them by either (decisions 0110, 0112).
		{ID: 10, Kind: catalogv1.ShowKind_SHOW_KIND_BUS_TRIP, Title: "Dhaka to Cumilla 07:00", Operator: "Tisha",
			Origin: "Dhaka", Destination: "Comilla", StartsAt: day.Add(7 * time.Hour), Currency: "BDT",
			Sections: []catalog.Section{{Name: "Main", Rows: rows, SeatsPerRow: 4, PriceMinor: 45000}}},
		{ID: 11, Kind: catalogv1.ShowKind_SHOW_KIND_BUS_TRIP, Title: "Dhaka to Barishal 21:00", Operator: "Sakura",
			Origin: "Dhaka", Destination: "Barisal", StartsAt: day.Add(21 * time.Hour), Currency: "BDT",
			Sections: []catalog.Section{{Name: "Main", Rows: rows, SeatsPerRow: 4, PriceMinor: 65000}}},
		{ID: 12, Kind: catalogv1.ShowKind_SHOW_KIND_BUS_TRIP, Title: "Dhaka to Jashore 23:00", Operator: "Eagle",
			Origin: "Dhaka", Destination: "Jashore", StartsAt: day.Add(23 * time.Hour), Currency: "BDT",
			Sections: []catalog.Section{{Name: "Main", Rows: rows, SeatsPerRow: 4, PriceMinor: 70000}}},
		{ID: 13, Kind: catalogv1.ShowKind_SHOW_KIND_BUS_TRIP, Title: "Dhaka to Bogura 13:00", Operator: "SR Travels",
			Origin: "Dhaka", Destination: "Bogra", StartsAt: day.Add(13 * time.Hour), Currency: "BDT",
			Sections: []catalog.Section{{Name: "Main", Rows: rows, SeatsPerRow: 4, PriceMinor: 60000}}},
		{ID: 14, Kind: catalogv1.ShowKind_SHOW_KIND_BUS_TRIP, Title: "Jashore to Barishal 09:00", Operator: "Sakura",
			Origin: "Jessore", Destination: "Barishal", StartsAt: day.Add(33 * time.Hour), Currency: "BDT",
			Sections: []catalog.Section{{Name: "Main", Rows: rows, SeatsPerRow: 4, PriceMinor: 55000}}},
	}
}

// Load creates the demo organisation and its members, and the demo shows
// that do not exist yet; it returns how many shows it created.
func Load(ctx context.Context, svc *catalog.Service, now time.Time) (int, error) {
	if _, err := svc.CreateOrganization(ctx, Manager, Organization, OrganizationName); err != nil {
		return 0, fmt.Errorf("demo organization: %w", err)
	}
	for user, role := range map[string]catalog.Role{Manager: catalog.RoleManager, Gate: catalog.RoleGate} {
		if _, err := svc.SetMember(ctx, Manager, Organization, user, role); err != nil {
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
