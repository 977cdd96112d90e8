package catalog

import (
	"testing"

	"buf.build/go/protovalidate"
	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/fault"
)

// TestStraightRows: sections given the old way become blocks of straight
// rows, a place apart, each block centred on the widest and a place below
// the one before (decision 0370).
func TestStraightRows(t *testing.T) {
	l := StraightRows([]Section{
		{Name: "Front", Rows: []string{"A", "B"}, SeatsPerRow: 4, PriceMinor: 100},
		{Name: "Back", NameBn: "পেছন", Rows: []string{"C"}, SeatsPerRow: 2, PriceMinor: 50},
	})
	require.Equal(t, []Deck{{Width: 40, Height: 40}}, l.Decks)
	require.Equal(t, []LayoutSeat{{Seat: "A1", X: 5, Y: 5}, {Seat: "A2", X: 15, Y: 5}, {Seat: "A3", X: 25, Y: 5}, {Seat: "A4", X: 35, Y: 5}},
		l.Sections[0].Rows[0].Seats)
	require.Equal(t, 15, l.Sections[0].Rows[1].Seats[0].Y)
	require.Equal(t, LayoutSection{Name: "Back", NameBn: "পেছন", PriceMinor: 50,
		Rows: []LayoutRow{{Label: "C", Seats: []LayoutSeat{{Seat: "C1", X: 15, Y: 35}, {Seat: "C2", X: 25, Y: 35}}}}}, l.Sections[1])
	require.NoError(t, l.check(fault.ShowInvalid, "layout"))
	require.Equal(t, 10, l.SeatCount())
}

// coach is a small two-deck layout every case of TestLayoutCheck breaks
// one way.
func coach() *Layout {
	return &Layout{
		Decks: []Deck{{Name: "Lower", Width: 40, Height: 40}, {Name: "Upper", Width: 40, Height: 40}},
		Sections: []LayoutSection{
			{Name: "Lower", Deck: 0, SeatClass: "sleeper", PriceMinor: 100, Rows: []LayoutRow{
				{Label: "A", Seats: []LayoutSeat{{Seat: "A1", X: 5, Y: 15, Kind: KindWomen}, {Seat: "A2", X: 25, Y: 15, Kind: KindSleeper}}},
				{Label: "B", Seats: []LayoutSeat{{Seat: "B1", X: 5, Y: 30}, {Seat: "B2", X: 25, Y: 30, Kind: KindBlocked}}},
			}},
			{Name: "Upper", Deck: 1, PriceMinor: 100, Rows: []LayoutRow{
				{Label: "C", Seats: []LayoutSeat{{Seat: "C1", X: 5, Y: 15}}},
			}},
		},
		Features: []Feature{{Kind: 1, X: 30, Y: 5, Width: 10, Height: 8}, {Kind: 3, Deck: 1, X: 20, Y: 5}},
	}
}

// TestLayoutCheck: a layout that cannot be drawn or sold is refused on the
// field at fault (decision 0370), and a good one is completed.
func TestLayoutCheck(t *testing.T) {
	require.NoError(t, coach().check(fault.ShowInvalid, "layout"))
	for _, tt := range []struct {
		name   string
		break_ func(*Layout)
		field  string
	}{
		{"a seat id twice", func(l *Layout) { l.Sections[1].Rows[0].Seats[0].Seat = "A2" }, "layout.sections[1].rows[0].seats[0].seat"},
		{"a row label twice", func(l *Layout) { l.Sections[1].Rows[0].Label = "B" }, "layout.sections[1].rows[0].label"},
		{"a section name twice", func(l *Layout) { l.Sections[1].Name = "Lower" }, "layout.sections[1].name"},
		{"a deck out of range", func(l *Layout) { l.Sections[1].Deck = 2 }, "layout.sections[1].deck"},
		{"a negative deck", func(l *Layout) { l.Sections[0].Deck = -1 }, "layout.sections[0].deck"},
		{"a second deck without decks", func(l *Layout) { l.Decks = nil }, "layout.sections[1].deck"},
		{"two places at one spot", func(l *Layout) { l.Sections[0].Rows[1].Seats[0].Y = 15 }, "layout.sections[0].rows[1].seats[0].x"},
		{"a place outside its deck", func(l *Layout) { l.Sections[1].Rows[0].Seats[0].X = 41 }, "layout.sections[1].rows[0].seats[0].x"},
		{"a place below its deck", func(l *Layout) { l.Sections[0].Rows[1].Seats[1].Y = 400 }, "layout.sections[0].rows[1].seats[1].x"},
		{"a negative position", func(l *Layout) { l.Sections[0].Rows[0].Seats[0].X = -5 }, "layout.sections[0].rows[0].seats[0].x"},
		{"a kind out of range", func(l *Layout) { l.Sections[0].Rows[0].Seats[0].Kind = 6 }, "layout.sections[0].rows[0].seats[0].kind"},
		{"a row without seats", func(l *Layout) { l.Sections[1].Rows[0].Seats = nil }, "layout.sections[1].rows[0].seats"},
		{"a section without rows", func(l *Layout) { l.Sections[1].Rows = nil }, "layout.sections[1].rows"},
		{"a section without a name", func(l *Layout) { l.Sections[0].Name = "" }, "layout.sections[0].name"},
		{"a price out of bounds", func(l *Layout) { l.Sections[0].PriceMinor = -1 }, "layout.sections[0].price_minor"},
		{"a feature on no deck", func(l *Layout) { l.Features[1].Deck = 3 }, "layout.features[1].deck"},
		{"a feature outside its deck", func(l *Layout) { l.Features[0].Y = 41 }, "layout.features[0].x"},
		{"a feature of no kind", func(l *Layout) { l.Features[0].Kind = 0 }, "layout.features[0].kind"},
		{"five decks", func(l *Layout) { l.Decks = append(l.Decks, Deck{}, Deck{}, Deck{}) }, "layout.decks"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := coach()
			tt.break_(l)
			err := l.check(fault.ShowInvalid, "layout")
			e, ok := fault.As(err)
			require.True(t, ok, "refused: %v", err)
			require.Equal(t, fault.ShowInvalid, e.Reason)
			require.Equal(t, tt.field, e.Field, "%v", e)
		})
	}

	t.Run("places without positions get straight rows", func(t *testing.T) {
		l := &Layout{Sections: []LayoutSection{{Name: "Main", Rows: []LayoutRow{
			{Label: "A", Seats: []LayoutSeat{{Seat: "A1"}, {Seat: "A2"}, {Seat: "A3"}}},
			{Label: "B", Seats: []LayoutSeat{{Seat: "B1", Kind: KindWheelchair}}},
		}}}}
		require.NoError(t, l.check(fault.ShowInvalid, "layout"))
		require.Equal(t, []LayoutSeat{{Seat: "A1", X: 5, Y: 5}, {Seat: "A2", X: 15, Y: 5}, {Seat: "A3", X: 25, Y: 5}}, l.Sections[0].Rows[0].Seats)
		require.Equal(t, []LayoutSeat{{Seat: "B1", X: 15, Y: 15, Kind: KindWheelchair}}, l.Sections[0].Rows[1].Seats)
		require.Equal(t, []Deck{{Width: 30, Height: 20}}, l.Decks, "a deck of the places' size")
	})
	t.Run("a deck without a size gets what is on it", func(t *testing.T) {
		l := coach()
		l.Decks[1] = Deck{Name: "Upper"}
		require.NoError(t, l.check(fault.ShowInvalid, "layout"))
		require.Equal(t, Deck{Name: "Upper", Width: 20, Height: 20}, l.Decks[1])
	})
}

// TestShippedTemplates: the templates shipped in the binary are valid by
// the API's own rules (protovalidate) and the catalog's, and are the
// coaches they say: a 40-seat 2+2 economy coach, a 27-seat 2+1 business
// coach with its supervisor's seat, and a 30-berth 1+2 double-deck
// sleeper; each with its driver at the front right and its door at the
// front left, seats for women in its front rows (decision 0372).
func TestShippedTemplates(t *testing.T) {
	list, err := ShippedTemplates()
	require.NoError(t, err)
	v, err := protovalidate.New()
	require.NoError(t, err)
	type coachWant struct {
		seats, sold, decks int
		women              []string
		blocked            []string
		kind               SeatKind
	}
	want := map[string]coachWant{
		"coach-2x1-27":   {seats: 28, sold: 27, decks: 1, women: []string{"A1", "B1"}, blocked: []string{"S1"}, kind: KindBusiness},
		"coach-2x2-40":   {seats: 40, sold: 40, decks: 1, women: []string{"A1", "A2", "B1", "B2"}, kind: KindOrdinary},
		"sleeper-1x2-30": {seats: 30, sold: 30, decks: 2, women: []string{"A1", "F1"}, kind: KindSleeper},
	}
	require.Len(t, list, len(want))
	for _, tpl := range list {
		t.Run(tpl.ID, func(t *testing.T) {
			w, ok := want[tpl.ID]
			require.True(t, ok)
			require.NoError(t, v.Validate(tpl.Proto()), "the API's rules")
			require.NotEmpty(t, tpl.NameBn)
			l := tpl.Layout
			require.Equal(t, w.seats, l.SeatCount())
			require.Len(t, l.Decks, w.decks)
			var women, blocked []string
			sold := 0
			for _, s := range l.Sections {
				require.NotEmpty(t, s.NameBn)
				require.NotEmpty(t, s.SeatClass)
				for _, r := range s.Rows {
					for _, seat := range r.Seats {
						switch seat.Kind {
						case KindWomen:
							women = append(women, seat.Seat)
						case KindBlocked:
							blocked = append(blocked, seat.Seat)
						default:
							require.Equal(t, w.kind, seat.Kind, "seat %s", seat.Seat)
						}
						if seat.Kind != KindBlocked {
							sold++
						}
					}
				}
			}
			require.Equal(t, w.women, women)
			require.Equal(t, w.blocked, blocked)
			require.Equal(t, w.sold, sold)
			// The driver at the front right, the door at the front left,
			// on the lowest deck; the seats behind them.
			var driver, door *Feature
			for i, f := range l.Features {
				switch f.Kind {
				case 1:
					driver = &l.Features[i]
				case 2:
					door = &l.Features[i]
				}
			}
			require.NotNil(t, driver)
			require.NotNil(t, door)
			require.Zero(t, driver.Deck)
			require.Greater(t, driver.X, l.Decks[0].Width/2, "the driver sits on the right")
			require.Less(t, door.X, l.Decks[0].Width/2, "the door is on the left")
			for _, s := range l.Sections {
				for _, r := range s.Rows {
					for _, seat := range r.Seats {
						if seat.Kind != KindBlocked {
							require.Less(t, driver.Y, seat.Y, "seat %s is behind the driver", seat.Seat)
						}
					}
				}
			}
			require.NoError(t, l.check(fault.ShowInvalid, "layout"))
		})
	}
}
