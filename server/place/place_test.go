package place_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/place"
)

// TestGazetteerHasEveryDistrict: the 64 districts of Bangladesh, each with
// a Bengali name, and no spelling naming two places (Parse checks that).
func TestGazetteerHasEveryDistrict(t *testing.T) {
	g := place.Default()
	districts := 0
	for _, p := range g.Places() {
		if p.Kind == "district" {
			districts++
			require.Equal(t, p.ID, p.District)
		}
		require.NotEmpty(t, p.Bengali, p.ID)
	}
	require.Equal(t, 64, districts)
}

func TestGazetteerParseRejectsAmbiguousSpelling(t *testing.T) {
	_, err := place.Parse("a | Alpha | আ | district | a | Beta\nb | Beta | ব | district | b |\n")
	require.ErrorContains(t, err, "also names a")
}

// TestLookupAcceptsAnySpelling: old and new names, abbreviations, case,
// apostrophes, joined and split words, loose transliteration, Bengali.
func TestLookupAcceptsAnySpelling(t *testing.T) {
	g := place.Default()
	for spelling, want := range map[string]string{
		"Chattogram": "chattogram", "chittagong": "chattogram", "CTG": "chattogram", "Chottogram": "chattogram",
		"চট্টগ্রাম": "chattogram", "Chatga": "chattogram",
		"Cox's Bazar": "coxs-bazar", "coxs bazar": "coxs-bazar", "coxsbazar": "coxs-bazar", "cox bazar": "coxs-bazar",
		"Cox’s  Bazar": "coxs-bazar", "কক্সবাজার": "coxs-bazar",
		"Comilla": "cumilla", "Kumilla": "cumilla", "কুমিল্লা": "cumilla",
		"Barisal": "barishal", "borishal": "barishal", "বরিশাল": "barishal",
		"Jessore": "jashore", "joshor": "jashore", "যশোর": "jashore",
		"Bogra": "bogura", "বগুড়া": "bogura",
		"Dhaka": "dhaka", "dacca": "dhaka", "ঢাকা": "dhaka", " DHAKA ": "dhaka",
		"Sylet": "sylhet", "সিলেট": "sylhet",
		"Kalyanpur": "kallyanpur", "Gabtali": "gabtoli", "Saidabad": "sayedabad", "Kolatoli": "kolatoli",
		"Moulvi Bazar": "moulvibazar", "Maulvibazar": "moulvibazar",
		"Chapai Nawabganj": "chapainawabganj", "Mymensingh": "mymensingh", "ময়মনসিংহ": "mymensingh",
		"Narayangonj": "narayanganj", "Brahmanbaria": "brahmanbaria",
	} {
		p, ok := g.Lookup(spelling)
		require.True(t, ok, spelling)
		require.Equal(t, want, p.ID, spelling)
	}
	for _, unknown := range []string{"", "dhak", "Gulshan", "xylophone", "express", "green line", "Mirpur"} {
		_, ok := g.Lookup(unknown)
		require.False(t, ok, unknown)
	}
}

func TestTransliterateBengaliPlaceNames(t *testing.T) {
	for bn, want := range map[string]string{
		"ঢাকা": "dhaka", "চট্টগ্রাম": "chottogram", "সিলেট": "silet", "বগুড়া": "bogura",
		"খুলনা": "khulna", "রংপুর": "rongpur",
	} {
		require.Equal(t, want, place.Transliterate(bn), bn)
	}
	// A Bengali spelling not in the gazetteer still finds its place.
	p, ok := place.Default().Lookup("চিটাগাং")
	require.True(t, ok)
	require.Equal(t, "chattogram", p.ID)
}

// TestLabelNamesTheSpellingTyped: a former or common spelling is named in
// brackets after the official name; the official name, its loose
// spellings and Bengali are not.
func TestLabelNamesTheSpellingTyped(t *testing.T) {
	g := place.Default()
	for typed, want := range map[string]string{
		"chittagong": "Chattogram (Chittagong)", "CTG": "Chattogram (Ctg)", "chattogram": "Chattogram",
		"চট্টগ্রাম": "Chattogram", "comilla": "Cumilla (Comilla)", "coxsbazar": "Cox's Bazar", "cox bazar": "Cox's Bazar",
		"Barisal": "Barishal (Barisal)",
	} {
		p, spelling, ok := g.Match(typed)
		require.True(t, ok, typed)
		require.Equal(t, want, p.Label(spelling), typed)
	}
}

// BenchmarkScan: finding the places of a query (docs/performance.md, Trip search).
func BenchmarkScan(b *testing.B) {
	g := place.Default()
	for range b.N {
		g.Scan("ঢাকা থেকে চট্টগ্রাম")
		g.Scan("green line coxs bazar")
	}
}
