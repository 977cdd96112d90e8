package booking

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/fault"
)

// TestCleanName: names are stored trimmed, with one space between words,
// in NFC; a name needs a letter, at most 100 characters and no control
// characters, but keeps the joiners Bengali conjuncts use.
func TestCleanName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"  Rahim   Uddin ", "Rahim Uddin"},
		{"Rahim\tUddin\n", "Rahim Uddin"},
		{"সুন্দরী  খাতুন", "সুন্দরী খাতুন"},
		{"র\u200D্যাব", "র\u200D্যাব"}, // ZWJ kept
		{"Zoe\u0301", "Zoé"},           // NFC
		{"O'Brien-Smith Jr.", "O'Brien-Smith Jr."},
		{strings.Repeat("ক", 100), strings.Repeat("ক", 100)},
	} {
		got, err := cleanName(c.in)
		require.NoError(t, err, "%q", c.in)
		require.Equal(t, c.want, got, "%q", c.in)
	}
	for _, in := range []string{"", "   ", "123", "-- .", "Ra\x00him", "Ra\u202Ehim", "Rahim\x7f", strings.Repeat("a", 101), "\xff\xfe"} {
		_, err := cleanName(in)
		require.Error(t, err, "%q", in)
	}
}

// TestMatchPassengers is the rule of decision 0380 on a hold's seats: none
// or one passenger for every seat, each a seat of the hold once, none on a
// general-admission hold, and every seat when the trip requires them (a
// trip with stops).
func TestMatchPassengers(t *testing.T) {
	seated := Hold{ID: "hld_1_x", Seats: []string{"B2", "A1"}}
	ga := Hold{ID: "hld_1_y", GAArea: "Floor", Quantity: 2}
	p := func(seat string) Passenger { return Passenger{Seat: seat, Name: "N " + seat, Phone: "+8801711234567"} }
	for _, c := range []struct {
		name     string
		hold     Hold
		in       []Passenger
		required bool
		want     []string // seats in the answer's order; nil with field: refused
		field    string
	}{
		{"none, not required", seated, nil, false, nil, ""},
		{"all, in the hold's order", seated, []Passenger{p("A1"), p("B2")}, false, []string{"B2", "A1"}, ""},
		{"all, required", seated, []Passenger{p("B2"), p("A1")}, true, []string{"B2", "A1"}, ""},
		{"none, required", seated, nil, true, nil, "passengers"},
		{"some", seated, []Passenger{p("A1")}, false, nil, "passengers"},
		{"a seat not held", seated, []Passenger{p("A1"), p("C3")}, false, nil, "passengers[1].seat"},
		{"a seat twice", seated, []Passenger{p("A1"), p("A1"), p("B2")}, false, nil, "passengers[1].seat"},
		{"general admission", ga, []Passenger{p("A1")}, false, nil, "passengers"},
		{"general admission, none", ga, nil, false, nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := matchPassengers(c.hold, c.in, c.required)
			if c.field != "" {
				e, ok := fault.As(err)
				require.True(t, ok, "%v", err)
				require.Equal(t, fault.BookingInvalid, e.Reason)
				require.Equal(t, c.field, e.Field)
				return
			}
			require.NoError(t, err)
			var seats []string
			for _, x := range got {
				seats = append(seats, x.Seat)
			}
			require.Equal(t, c.want, seats)
		})
	}
}

// TestCleanPassengers: each refusal names the field at fault; a good
// passenger comes out with the phone in E.164 and the seat upper case.
func TestCleanPassengers(t *testing.T) {
	got, err := cleanPassengers([]Passenger{{Seat: " a1 ", Name: " Rahim ", Phone: "০১৭১১-২৩৪৫৬৭", Woman: true}})
	require.NoError(t, err)
	require.Equal(t, []Passenger{{Seat: "A1", Name: "Rahim", Phone: "+8801711234567", Woman: true}}, got)
	for _, c := range []struct {
		in    []Passenger
		field string
	}{
		{[]Passenger{{Seat: "A1", Name: "R", Phone: "01711234567"}, {Seat: "A2", Name: "K", Phone: "1234"}}, "passengers[1].phone"},
		{[]Passenger{{Seat: "A1", Name: " ", Phone: "01711234567"}}, "passengers[0].name"},
		{[]Passenger{{Seat: "", Name: "R", Phone: "01711234567"}}, "passengers[0].seat"},
	} {
		_, err := cleanPassengers(c.in)
		e, ok := fault.As(err)
		require.True(t, ok, "%v", err)
		require.Equal(t, c.field, e.Field)
	}
}
