package eticket

import (
	"bytes"
	_ "embed"
	"fmt"
	"strings"
	"time"
	"unicode"

	qrcode "github.com/skip2/go-qrcode"
	"github.com/tdewolff/canvas"
	"github.com/tdewolff/canvas/renderers/pdf"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/gomono"
	"golang.org/x/image/font/gofont/goregular"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/display"
	"github.com/seatghor/seatghor/server/phone"
	"github.com/seatghor/seatghor/server/place"
	"github.com/seatghor/seatghor/server/ticket"
)

// Noto Sans Bengali from Debian's fonts-noto-core (fonts/OFL.txt): Latin
// text is set in the Go fonts, Bengali in Noto, both embedded as subsets.
var (
	//go:embed fonts/NotoSansBengali-Regular.ttf
	bengaliRegular []byte
	//go:embed fonts/NotoSansBengali-Bold.ttf
	bengaliBold []byte
)

// A4, in millimetres; canvas's y axis points up.
const pageW, pageH = 210.0, 297.0

// words are the printed labels in each language.
type words struct {
	heading, route, venue, operator, boarding, starts, buyer, order, seat, ga, ticket, price, issued, show string
	passenger, woman                                                                                       string
	// A trip with stops (decision 0384): the journey, where to board and
	// where to leave, and the word after a counter's name.
	journey, boardAt, dropAt, counter string
}

var labels = map[display.Lang]words{
	display.English: {heading: "Seatghor e-ticket", route: "Route", venue: "Venue", operator: "Operator",
		boarding: "Boarding", starts: "Starts", buyer: "Buyer", order: "Ticket number", seat: "Seat",
		ga: "General admission", ticket: "Ticket", price: "Price", issued: "Issued",
		show: "Show this QR code at the gate or to the supervisor", passenger: "Passenger", woman: "woman",
		journey: "Journey", boardAt: "Boarding", dropAt: "Dropping", counter: "counter"},
	display.Bengali: {heading: "সিটঘর ই-টিকিট", route: "যাত্রাপথ", venue: "স্থান", operator: "পরিচালনায়",
		boarding: "যাত্রার সময়", starts: "শুরু", buyer: "ক্রেতা", order: "টিকিট নম্বর", seat: "আসন",
		ga: "সাধারণ প্রবেশ", ticket: "টিকিট", price: "মূল্য", issued: "ইস্যু",
		show: "প্রবেশপথে বা সুপারভাইজারকে এই কিউআর কোড দেখান", passenger: "যাত্রী", woman: "নারী",
		journey: "যাত্রা", boardAt: "ওঠার স্থান", dropAt: "নামার স্থান", counter: "কাউন্টার"},
}

// typeface is one size and weight, with a Latin and a Bengali face.
type typeface struct{ latin, bengali *canvas.FontFace }

// Render returns the e-ticket PDF of one order in lang (decision 0171): the
// show, its route or venue, its operator and its start in the show's time
// zone (decision 0170), the buyer, and one block per ticket with its seat
// (or GA area), price and the QR code of its signed code, the code printed
// under it for typing in by hand. Text is shaped (Bengali conjuncts and
// vowel signs) and set in embedded fonts.
func Render(show catalog.Show, buyer string, tickets []ticket.Ticket, lang display.Lang) ([]byte, error) {
	w, ok := labels[lang]
	if !ok {
		w, lang = labels[display.English], display.English
	}
	f, err := loadFonts()
	if err != nil {
		return nil, err
	}
	loc := display.ZoneOrDefault(show.TimeZone)
	// The show's own names in Bengali script where it has them (decision
	// 0385); the names as written otherwise.
	title, operator := show.Title, show.Operator
	if lang == display.Bengali {
		title, operator = orName(show.TitleBn, title), orName(show.OperatorBn, operator)
	}
	when := w.starts
	if show.Kind == catalogv1.ShowKind_SHOW_KIND_BUS_TRIP {
		when = w.boarding
	}
	head := []string{
		where(show, w, lang),
		w.operator + ": " + operator,
		when + ": " + display.Time(show.StartsAt, loc, lang),
	}
	// A trip with stops: the order's journey after the route, its boarding
	// stop, counter and time in place of the trip's start, and where to
	// leave (decision 0384). The ticket blocks move down by the lines
	// added, closer together, so three still fit a page.
	top0, pitch := pageH-66, 76.0
	if j := tickets[0].Journey; j != nil {
		stops, board := journeyLines(j, w, loc, lang)
		head = append([]string{head[0], stops, head[1]}, board...)
		top0 -= float64(len(head)-3) * f.body.latin.Size * 1.6
		pitch = min(pitch, (top0-75)/2) // 15 mm margin under the last 60 mm QR code
	}
	var pages []*canvas.Canvas
	var ctx *canvas.Context
	for i, t := range tickets {
		if i%3 == 0 {
			c := canvas.New(pageW, pageH)
			pages, ctx = append(pages, c), canvas.NewContext(c)
			y := line(ctx, 15, pageH-12, f.heading, w.heading) - 2
			y = line(ctx, 15, y, f.big, title)
			for _, s := range append(head, w.buyer+": "+buyer+"    "+w.order+": "+ticket.Label(t.OrderID)) {
				y = line(ctx, 15, y, f.body, s)
			}
			line(ctx, 15, y-1, f.small, w.show)
		}
		top := top0 - float64(i%3)*pitch
		qr, err := qrcode.New(t.Code, qrcode.Medium)
		if err != nil {
			return nil, fmt.Errorf("QR code of ticket %s: %w", t.ID, err)
		}
		// 6 pixels a module, drawn 60 mm wide: sharp for any scanner.
		img := qr.Image(-6)
		side := float64(img.Bounds().Dx())
		ctx.DrawImage(10, top-60, img, canvas.DPMM(side/60))
		label := w.seat + " " + t.Seat
		if t.Seat == "" {
			label = w.ga + ": " + t.GAArea
		}
		y := line(ctx, 75, top-4, f.big, label) - 1
		// Who travels on the seat (bus trips, decision 0381): the name as
		// typed (a Bengali name in the Bengali face), the mobile number as
		// Bangladeshis write it.
		if p := t.Passenger; p.Name != "" {
			s := w.passenger + ": " + p.Name
			if p.Phone != "" {
				s += ", " + display.Digits(phone.National(p.Phone), lang)
			}
			if p.Woman {
				s += ", " + w.woman
			}
			y = line(ctx, 75, y, f.body, s)
		}
		for _, s := range []string{
			w.ticket + " " + t.ID,
			w.price + " " + display.Money(t.PriceMinor, t.Currency, lang),
			w.issued + ": " + display.Time(t.IssuedAt, loc, lang),
		} {
			y = line(ctx, 75, y, f.body, s)
		}
		y -= 2
		// The code, for typing in by hand when a scanner fails.
		for code := t.Code; code != ""; {
			n := min(len(code), 64)
			ctx.DrawText(75, y, canvas.NewTextLine(f.mono, code[:n], canvas.Left))
			code, y = code[n:], y-3
		}
	}
	var out bytes.Buffer
	doc := pdf.New(&out, pageW, pageH, &pdf.Options{Compress: true, SubsetFonts: true, ImageEncoding: canvas.Lossless})
	doc.SetInfo("Seatghor e-ticket "+tickets[0].OrderID, "", "", "Seatghor", "Seatghor")
	doc.SetLang(string(lang))
	for i, c := range pages {
		if i > 0 {
			doc.NewPage(pageW, pageH)
		}
		c.RenderTo(doc)
	}
	if err := doc.Close(); err != nil {
		return nil, fmt.Errorf("render e-ticket %s: %w", tickets[0].OrderID, err)
	}
	return out.Bytes(), nil
}

// fonts are the faces of an e-ticket.
type fonts struct {
	heading, big, body, small typeface
	mono                      *canvas.FontFace
}

// loadFonts parses the embedded fonts. Each rendering has its own: the
// projector renders orders in parallel, and canvas does not say its fonts
// may be shared between goroutines.
func loadFonts() (fonts, error) { return loadFontsAt(18, 15, 11, 9) }

// loadFontsAt is loadFonts with the sizes (in points) of the heading, big,
// body and small faces.
func loadFontsAt(heading, big, body, small float64) (fonts, error) {
	latin, bengali, mono := canvas.NewFontFamily("Go"), canvas.NewFontFamily("Noto Sans Bengali"), canvas.NewFontFamily("Go Mono")
	for _, l := range []struct {
		family *canvas.FontFamily
		data   []byte
		style  canvas.FontStyle
	}{
		{latin, goregular.TTF, canvas.FontRegular}, {latin, gobold.TTF, canvas.FontBold},
		{bengali, bengaliRegular, canvas.FontRegular}, {bengali, bengaliBold, canvas.FontBold},
		{mono, gomono.TTF, canvas.FontRegular},
	} {
		if err := l.family.LoadFont(l.data, 0, l.style); err != nil {
			return fonts{}, fmt.Errorf("e-ticket font %s: %w", l.family.Name(), err)
		}
	}
	face := func(size float64, style canvas.FontStyle) typeface {
		return typeface{latin: latin.Face(size, canvas.Black, style), bengali: bengali.Face(size, canvas.Black, style)}
	}
	return fonts{heading: face(heading, canvas.FontBold), big: face(big, canvas.FontBold), body: face(body, canvas.FontRegular),
		small: face(small, canvas.FontRegular), mono: mono.Face(6.5, canvas.Black, canvas.FontRegular)}, nil
}

// line draws s with its top-left corner at (x, y) and returns the y of the
// next line. Bengali letters are set in the Bengali face, Latin letters in
// the Latin one; spaces, digits and punctuation stay in the face of the
// letters before them, so a run is shaped whole.
func line(ctx *canvas.Context, x, y float64, face typeface, s string) float64 {
	return lineIn(ctx, x, y, face, s, 0)
}

// lineIn is line wrapped at width (mm; 0: never), on as many lines as it
// needs: a receipt's lines are short.
func lineIn(ctx *canvas.Context, x, y float64, face typeface, s string, width float64) float64 {
	rt := canvas.NewRichText(face.latin)
	cur, start := face.latin, 0
	for i, r := range s {
		next := cur
		switch {
		case isBengali(r):
			next = face.bengali
		case unicode.IsLetter(r):
			next = face.latin
		}
		if next != cur {
			rt.WriteFace(cur, s[start:i])
			cur, start = next, i
		}
	}
	rt.WriteFace(cur, s[start:])
	text := rt.ToText(width, 0, canvas.Left, canvas.Top, nil)
	ctx.DrawText(x, y, text)
	if width == 0 {
		return y - face.latin.Size*1.6 // the size (in mm) and leading
	}
	return y - text.Bounds().H() - face.latin.Size*0.45
}

// isBengali: the Bengali block, the dandas and the zero-width (non-)joiners
// that steer conjuncts.
func isBengali(r rune) bool {
	return (r >= 0x0980 && r <= 0x09FF) || r == 0x0964 || r == 0x0965 || r == 0x200C || r == 0x200D
}

// journeyLines are the header's lines of a journey on a trip with stops:
// its stops; then the boarding stop and counter with the time to be there
// (the counter's, else the coach's at the stop) in the show's zone, and the
// dropping stop and counter when one is named. Bengali names: the
// counters' own, the gazetteer's places.
func journeyLines(j *commonv1.Journey, w words, loc *time.Location, lang display.Lang) (string, []string) {
	from, to := j.GetFromName(), j.GetToName()
	board, drop := j.GetBoardingCounterName(), j.GetDroppingCounterName()
	joiner := " to "
	if lang == display.Bengali {
		from, to, joiner = bengaliName(from), bengaliName(to), " থেকে "
		board, drop = orName(j.GetBoardingCounterNameBn(), board), orName(j.GetDroppingCounterNameBn(), drop)
	}
	at := j.GetDepartsAt()
	if board != "" {
		at = j.GetBoardingAt()
	}
	out := []string{w.boardAt + ": " + from + counterName(board, w) + ", " + display.Time(at.AsTime(), loc, lang)}
	if drop != "" {
		out = append(out, w.dropAt+": "+to+counterName(drop, w))
	}
	return w.journey + ": " + from + joiner + to, out
}

// counterName is ", <name> counter" ("" without a name), the word left out
// when the name has it.
func counterName(name string, w words) string {
	if name == "" {
		return ""
	}
	if !strings.Contains(strings.ToLower(name), strings.ToLower(w.counter)) {
		name += " " + w.counter
	}
	return ", " + name
}

func orName(name, fallback string) string {
	if name != "" {
		return name
	}
	return fallback
}

// where is the route of a bus trip ("Dhaka to Cox's Bazar", in Bengali the
// gazetteer's names) or the venue.
func where(s catalog.Show, w words, lang display.Lang) string {
	if s.Kind == catalogv1.ShowKind_SHOW_KIND_BUS_TRIP || (s.Origin != "" && s.Destination != "") {
		if lang == display.Bengali {
			return w.route + ": " + bengaliName(s.Origin) + " থেকে " + bengaliName(s.Destination)
		}
		return w.route + ": " + s.Origin + " to " + s.Destination
	}
	if lang == display.Bengali {
		return w.venue + ": " + orName(s.VenueBn, s.Venue)
	}
	return w.venue + ": " + s.Venue
}

func bengaliName(name string) string {
	if p, ok := place.Default().Lookup(name); ok && p.Bengali != "" {
		return p.Bengali
	}
	return name
}
