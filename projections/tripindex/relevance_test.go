package tripindex_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/projections/tripindex"
	"github.com/seatghor/seatghor/server/search"
)

// relevanceTrips: trips between places under their new names, old names
// (data typed before 2018's renaming), bus stops and Bengali script.
func relevanceTrips() []search.Trip {
	trip := func(id int64, title, op, from, to string, d, hour int) search.Trip {
		return search.Trip{ShowID: id, Kind: bus, Title: title, Operator: op, Origin: from, Destination: to,
			StartsAt: day(d, hour), OnSaleAt: base.AddDate(0, 0, -10), Currency: "BDT", LowestPriceMinor: 80000,
			SeatsAvailable: 40, Capacity: 40}
	}
	show := func(id int64, kind, title, op, venue string, d, hour int) search.Trip {
		t := trip(id, title, op, "", "", d, hour)
		t.Kind, t.Venue = concert, venue
		if kind == "sport" {
			t.Kind = sport
		}
		return t
	}
	return []search.Trip{
		trip(101, "Dhaka to Chattogram 08:00", "Green Line", "Dhaka", "Chattogram", 1, 8),
		trip(102, "Dhaka to Chattogram 22:00", "Hanif", "Dhaka", "Chattogram", 1, 22),
		trip(103, "Chattogram to Dhaka 09:00", "Green Line", "Chattogram", "Dhaka", 2, 9),
		trip(104, "Dhaka to Cox's Bazar 10:00", "Hanif", "Dhaka", "Cox's Bazar", 3, 10),
		trip(105, "Dhaka to Sylhet 07:00", "Shyamoli", "Dhaka", "Sylhet", 2, 7),
		trip(106, "Dhaka to Cumilla 06:00", "Tisha", "Dhaka", "Cumilla", 1, 6),
		trip(107, "Cumilla to Dhaka 15:00", "Tisha", "Cumilla", "Dhaka", 2, 15),
		trip(108, "Dhaka to Barishal 21:00", "Sakura", "Dhaka", "Barishal", 1, 21),
		trip(109, "Dhaka to Jashore 23:00", "Eagle", "Dhaka", "Jashore", 2, 23),
		trip(110, "Dhaka to Bogura 13:00", "SR Travels", "Dhaka", "Bogura", 3, 13),
		trip(111, "Chittagong to Coxsbazar 07:00", "Saudia", "Chittagong", "Coxsbazar", 1, 7),
		trip(112, "Rajshahi to Dhaka 14:00", "Desh Travels", "Rajshahi", "Dhaka", 2, 14),
		trip(113, "Dhaka to Khulna 20:00", "Hanif", "Dhaka", "Khulna", 3, 20),
		trip(114, "Gabtoli to Rangpur 23:00", "Nabil", "Gabtoli", "Rangpur", 1, 23),
		trip(115, "Sayedabad to Chattogram 12:00", "Ena", "Sayedabad", "Chattogram", 2, 12),
		trip(116, "Mohakhali to Mymensingh 09:00", "Ena", "Mohakhali", "Mymensingh", 1, 9),
		trip(117, "ঢাকা থেকে সিলেট ০৮:০০", "Ena", "ঢাকা", "সিলেট", 3, 8),
		show(118, "concert", "Rooftop Unplugged", "Live Nation BD", "Gulshan, Dhaka", 3, 19),
		show(119, "sport", "Bangladesh v India, ODI", "BCB", "Sher-e-Bangla Stadium, Mirpur", 1, 14),
		trip(120, "Dhaka to Kolatoli 22:00", "Shyamoli", "Dhaka", "Kolatoli", 2, 22),
		trip(121, "Sylhet to Chattogram 10:00", "Hanif", "Sylhet", "Chattogram", 4, 10),
		trip(122, "Barisal to Khulna 08:00", "Sakura", "Barisal", "Khulna", 3, 8),
		trip(123, "Kallyanpur to Kushtia 06:00", "SB Super Deluxe", "Kallyanpur", "Kushtia", 2, 6),
	}
}

type relevanceCase struct {
	line       int
	q          search.Query
	mode       string // first, only, has
	want       []int64
	text, spec string
}

func readRelevance(t testing.TB) []relevanceCase {
	raw, err := os.ReadFile("testdata/relevance.txt")
	require.NoError(t, err)
	var out []relevanceCase
	for n, line := range strings.Split(string(raw), "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "|")
		require.Len(t, f, 4, "relevance.txt line %d", n+1)
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		exp := strings.Fields(f[3])
		require.NotEmpty(t, exp, "relevance.txt line %d", n+1)
		c := relevanceCase{line: n + 1, q: search.Query{Text: f[0], Origin: f[1], Destination: f[2]},
			mode: exp[0], want: []int64{}, text: line, spec: f[3]}
		require.Contains(t, []string{"first", "only", "has"}, c.mode, "relevance.txt line %d", n+1)
		for _, s := range exp[1:] {
			id, err := strconv.ParseInt(s, 10, 64)
			require.NoError(t, err, "relevance.txt line %d", n+1)
			c.want = append(c.want, id)
		}
		out = append(out, c)
	}
	return out
}

// hit says whether got meets the case's expectation.
func (c relevanceCase) hit(got []int64) bool {
	switch c.mode {
	case "first":
		return len(got) >= len(c.want) && slices.Equal(got[:len(c.want)], c.want)
	case "only":
		a, b := slices.Clone(got), slices.Clone(c.want)
		slices.Sort(a)
		slices.Sort(b)
		return slices.Equal(a, b)
	default:
		for _, id := range c.want {
			if !slices.Contains(got, id) {
				return false
			}
		}
		return true
	}
}

// TestRelevance runs the relevance suite (testdata/relevance.txt: old and
// new names, Bengali, transliteration, typos, apostrophes, joined words and
// two-place queries) against every implementation and reports its hit rate;
// every query must hit.
func TestRelevance(t *testing.T) {
	cases := readRelevance(t)
	require.GreaterOrEqual(t, len(cases), 60)
	for name, open := range implementations {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			idx := open(t)
			ctx := context.Background()
			require.NoError(t, idx.Put(ctx, relevanceTrips()))
			hits := relevanceHits(t, idx, cases)
			t.Logf("relevance %s: %d of %d queries hit (%.1f%%)", name, hits, len(cases), 100*float64(hits)/float64(len(cases)))
			require.Equal(t, len(cases), hits, "every query of the relevance suite must hit")
		})
	}
}

func relevanceHits(t *testing.T, idx tripindex.TripIndex, cases []relevanceCase) int {
	hits := 0
	for _, c := range cases {
		r, err := idx.Search(context.Background(), c.q)
		require.NoError(t, err, "line %d", c.line)
		got := ids(r)
		if c.hit(got) {
			hits++
			continue
		}
		t.Errorf("relevance.txt line %d: %q: want %s, got %s", c.line, c.text, c.spec, fmt.Sprint(got))
	}
	return hits
}
