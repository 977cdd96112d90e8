package eticket

import (
	"bytes"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/display"
	"github.com/seatghor/seatghor/server/ticket"
)

var record = flag.Bool("record", false, "write the rendered e-tickets as the new reference images in testdata/")

// The demo bus, departing at 10:00 in Dhaka (04:00 UTC), with fixed ids,
// codes and times: the rendering depends on nothing else.
func demoOrder() (catalog.Show, []ticket.Ticket) {
	show := catalog.Show{ID: 1, Kind: catalogv1.ShowKind_SHOW_KIND_BUS_TRIP, Title: "Dhaka to Cox's Bazar 10:00",
		Operator: "Green Line Paribahan", Origin: "Dhaka", Destination: "Cox's Bazar", TimeZone: "Asia/Dhaka",
		StartsAt: time.Date(2026, 12, 30, 4, 0, 0, 0, time.UTC)}
	issued := time.Date(2026, 11, 30, 18, 30, 0, 0, time.UTC) // 00:30 on 1 Dec in Dhaka
	// One passenger named in Latin letters, one in Bengali (with a
	// conjunct, ন্দ), declared a woman: both faces on one line.
	passengers := []ticket.Passenger{
		{Name: "Rahim Uddin", Phone: "+8801711234567"},
		{Name: "সুন্দরী খাতুন", Phone: "+8801819000000", Woman: true},
	}
	var tickets []ticket.Ticket
	for i, seat := range []string{"A1", "A2"} {
		id := fmt.Sprintf("tkt_1_0123456789abcdef_%03d", i+1)
		tickets = append(tickets, ticket.Ticket{ID: id, OrderID: "ord_1_0123456789abcdef", ShowID: 1, Seat: seat,
			Position: i + 1, PriceMinor: 120000, Currency: "BDT", IssuedAt: issued, Passenger: passengers[i],
			Code: "sgt1." + id + "." + seat + ".Zm9yLXRoZS1yZWZlcmVuY2UtaW1hZ2Utb25seS1ub3QtYS1yZWFsLXNpZ25hdHVyZQ"})
	}
	return show, tickets
}

// journeyOrder is the demo order on a trip with stops, Dhaka → Cumilla →
// Chattogram (decision 0384): its tickets are for Cumilla → Chattogram,
// boarding at the Paduar Bazar counter at 11:05 and leaving at Dampara.
func journeyOrder() (catalog.Show, []ticket.Ticket) {
	show, tickets := demoOrder()
	show.Title, show.Destination = "Dhaka to Chattogram 10:00", "Chattogram"
	show.Stops = []catalog.TripStop{
		{StopID: "dhaka", Place: "Dhaka"},
		{StopID: "cumilla", Place: "Cumilla", Minutes: 60, Counters: []catalog.Counter{
			{ID: "paduar-bazar", Name: "Paduar Bazar", NameBn: "পদুয়ার বাজার", Boarding: true, Minutes: 65}}},
		{StopID: "chattogram", Place: "Chattogram", Minutes: 180, Counters: []catalog.Counter{
			{ID: "dampara", Name: "Dampara", NameBn: "দামপাড়া", Dropping: true, Minutes: 175}}},
	}
	j := show.Trip().JourneyProto(1, 2, "paduar-bazar", "dampara")
	for i := range tickets {
		tickets[i].Journey = j
	}
	return show, tickets
}

// matchOrder is an order of two seats of a match whose show is named in
// Bengali too (decision 0385): the Bengali e-ticket reads the Bengali
// title, venue and operator, the English one the names as written.
func matchOrder() (catalog.Show, []ticket.Ticket) {
	show, tickets := demoOrder()
	show.Kind, show.Origin, show.Destination = catalogv1.ShowKind_SHOW_KIND_SPORT, "", ""
	show.Title, show.Venue, show.Operator = "Bangladesh v India, ODI", "Sher-e-Bangla Stadium, Mirpur", "BCB"
	show.TitleBn, show.VenueBn, show.OperatorBn = "বাংলাদেশ বনাম ভারত, ওয়ানডে", "শেরেবাংলা স্টেডিয়াম, মিরপুর", "বিসিবি"
	return show, tickets
}

// TestETicketLooksAsRecorded renders the demo orders' e-tickets in English
// and in Bengali, rasterises page 1 with pdftoppm (as a reader's viewer
// would; text extraction garbles Bengali conjuncts) and compares it with
// testdata/eticket-<lang>.png (a trip without stops) and
// testdata/eticket-journey-<lang>.png (a journey on a trip with stops) and
// testdata/eticket-match-<lang>.png (a match named in Bengali too).
// Re-record after a deliberate change with
//
//	go test ./projections/eticket -run TestETicketLooksAsRecorded -args -record
//
// and look at the new images before committing them.
func TestETicketLooksAsRecorded(t *testing.T) {
	if _, err := exec.LookPath("pdftoppm"); err != nil {
		t.Fatal("pdftoppm is missing: scripts/ensure-deps.sh test installs it (Debian package poppler-utils)")
	}
	for _, order := range []struct {
		prefix string
		make   func() (catalog.Show, []ticket.Ticket)
	}{{"eticket-", demoOrder}, {"eticket-journey-", journeyOrder}, {"eticket-match-", matchOrder}} {
		show, tickets := order.make()
		for _, lang := range []display.Lang{display.English, display.Bengali} {
			t.Run(order.prefix+string(lang), func(t *testing.T) {
				recorded(t, show, tickets, lang, filepath.Join("testdata", order.prefix+string(lang)+".png"))
			})
		}
	}
}

// TestETicketNamesTheJourney: the header of a journey's e-ticket names its
// stops, the boarding counter and its time in the show's zone, and the
// dropping counter, in English and in Bengali (Bengali names and digits).
func TestETicketNamesTheJourney(t *testing.T) {
	show, tickets := journeyOrder()
	loc := display.ZoneOrDefault(show.TimeZone)
	for _, tc := range []struct {
		lang  display.Lang
		stops string
		board []string
	}{
		{display.English, "Journey: Cumilla to Chattogram", []string{
			"Boarding: Cumilla, Paduar Bazar counter, Wed 30 Dec 2026, 11:05 (Asia/Dhaka, +06)",
			"Dropping: Chattogram, Dampara counter"}},
		{display.Bengali, "যাত্রা: কুমিল্লা থেকে চট্টগ্রাম", []string{
			"ওঠার স্থান: কুমিল্লা, পদুয়ার বাজার কাউন্টার, বুধ ৩০ ডিসেম্বর ২০২৬, ১১:০৫ (Asia/Dhaka, +০৬)",
			"নামার স্থান: চট্টগ্রাম, দামপাড়া কাউন্টার"}},
	} {
		t.Run(string(tc.lang), func(t *testing.T) {
			stops, board := journeyLines(tickets[0].Journey, labels[tc.lang], loc, tc.lang)
			require.Equal(t, tc.stops, stops)
			require.Equal(t, tc.board, board)
		})
	}
}

// TestCounterTicketLooksAsRecorded renders the journey's order as a counter
// prints it (decision 0443), in English and in Bengali: one page 80 mm wide
// (227 pixels at 72 dpi) as long as its two tickets need, compared with
// testdata/counter-<lang>.png (re-record as TestETicketLooksAsRecorded
// says).
func TestCounterTicketLooksAsRecorded(t *testing.T) {
	show, tickets := journeyOrder()
	for _, lang := range []display.Lang{display.English, display.Bengali} {
		t.Run(string(lang), func(t *testing.T) {
			pdf, err := RenderReceipt(show, Receipt{Buyer: "+8801711234567", Counter: "kalabagan"}, tickets, lang)
			require.NoError(t, err)
			got := matches(t, pdf, filepath.Join("testdata", "counter-"+string(lang)+".png"))
			require.InDelta(t, 227, got.Bounds().Dx(), 1, "80 mm wide")
			require.Greater(t, got.Bounds().Dy(), 2*got.Bounds().Dx(), "a roll as long as two tickets need")
		})
	}
}

// recorded renders tickets in lang and compares page 1 with the reference
// image ref (or records it).
func recorded(t *testing.T, show catalog.Show, tickets []ticket.Ticket, lang display.Lang, ref string) {
	t.Helper()
	pdf, err := Render(show, "rahima", tickets, lang)
	require.NoError(t, err)
	matches(t, pdf, ref)
}

// matches compares page 1 of pdf with the reference image ref (or records
// it), and answers the rendering.
func matches(t *testing.T, pdf []byte, ref string) image.Image {
	t.Helper()
	got := rasterise(t, pdf)
	if *record {
		var buf bytes.Buffer
		require.NoError(t, png.Encode(&buf, got))
		require.NoError(t, os.WriteFile(ref, buf.Bytes(), 0o644))
		return got
	}
	f, err := os.Open(ref)
	require.NoError(t, err, "no reference image; record one with -args -record")
	defer f.Close()
	want, err := png.Decode(f)
	require.NoError(t, err)
	compare(t, ref, want, got)
	return got
}

// rasterise renders page 1 at 72 dpi, grey.
func rasterise(t *testing.T, pdf []byte) image.Image {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, "ticket.pdf")
	require.NoError(t, os.WriteFile(in, pdf, 0o600))
	out, err := exec.Command("pdftoppm", "-r", "72", "-gray", "-png", "-f", "1", "-l", "1", "-singlefile",
		in, filepath.Join(dir, "page")).CombinedOutput()
	require.NoError(t, err, "pdftoppm: %s", out)
	f, err := os.Open(filepath.Join(dir, "page.png"))
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	return img
}

// compare allows anti-aliasing to differ between poppler versions: a pixel
// counts as different when its grey level is more than 96 apart, and at
// most 0.2 % of the pixels may differ. A failure writes the rendering and a
// diff image (red: different) next to the test's temporary files.
func compare(t *testing.T, ref string, want, got image.Image) {
	t.Helper()
	if want.Bounds() != got.Bounds() {
		t.Fatalf("%s: the rendering is %v, the reference %v", ref, got.Bounds(), want.Bounds())
	}
	b := want.Bounds()
	diff := image.NewRGBA(b)
	n := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			w, g := color.GrayModel.Convert(want.At(x, y)).(color.Gray).Y, color.GrayModel.Convert(got.At(x, y)).(color.Gray).Y
			d := int(w) - int(g)
			if d < -96 || d > 96 {
				n++
				diff.Set(x, y, color.RGBA{R: 255, A: 255})
			} else {
				diff.Set(x, y, color.RGBA{R: g, G: g, B: g, A: 255})
			}
		}
	}
	allowed := b.Dx() * b.Dy() / 500
	if n <= allowed {
		return
	}
	dir := t.TempDir()
	for name, img := range map[string]image.Image{"got.png": got, "diff.png": diff} {
		var buf bytes.Buffer
		require.NoError(t, png.Encode(&buf, img))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644))
	}
	t.Fatalf("%s: %d of %d pixels differ (at most %d may): see %s/got.png and diff.png (red = different); "+
		"if the change is meant, re-record with -args -record", ref, n, b.Dx()*b.Dy(), allowed, dir)
}

// TestManifestLooksAsRecorded prints a 25-passenger manifest of the
// journey's trip (decision 0442) in English and in Bengali: two A4 pages
// across, page 1 compared with testdata/manifest-<lang>.png.
func TestManifestLooksAsRecorded(t *testing.T) {
	show, tickets := journeyOrder()
	m := ticket.Manifest{ShowID: show.ID, TimeZone: show.TimeZone, ServerTime: time.Date(2026, 12, 30, 4, 30, 0, 0, time.UTC)}
	names := []string{"Rahim Uddin", "সুন্দরী খাতুন", "Karim Mia"}
	for i := range 25 {
		e := ticket.ManifestEntry{TicketID: fmt.Sprintf("tkt_1_0123456789abcdef_%03d", i+1), OrderID: "ord_1_0123456789abcdef",
			Seat: fmt.Sprintf("%c%d", 'A'+i/4, i%4+1), Passenger: names[i%3], Phone: "+8801711234567", Journey: tickets[0].Journey,
			Channel: []ticket.Channel{ticket.ChannelWeb, ticket.ChannelCounter, ticket.ChannelPartner}[i%3], Status: ticket.Expected}
		if i%3 == 2 {
			e.PartnerID = 7
		}
		if i%5 == 0 {
			e.Status = ticket.Boarded
			m.Boarded++
		} else {
			m.Expected++
		}
		m.Entries = append(m.Entries, e)
	}
	for _, lang := range []display.Lang{display.English, display.Bengali} {
		t.Run(string(lang), func(t *testing.T) {
			pdf, err := RenderManifest(show, m, lang)
			require.NoError(t, err)
			require.Equal(t, 2, bytes.Count(pdf, []byte("/Type/Page/")), "22 passengers a page")
			got := matches(t, pdf, filepath.Join("testdata", "manifest-"+string(lang)+".png"))
			require.Greater(t, got.Bounds().Dx(), got.Bounds().Dy(), "A4 across")
		})
	}
}
