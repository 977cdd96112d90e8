package eticket

import (
	"bytes"
	"fmt"

	qrcode "github.com/skip2/go-qrcode"
	"github.com/tdewolff/canvas"
	"github.com/tdewolff/canvas/renderers/pdf"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/display"
	"github.com/seatghor/seatghor/server/phone"
	"github.com/seatghor/seatghor/server/ticket"
)

// An 80 mm thermal roll prints 72 mm: the receipt keeps 4 mm each side.
const (
	receiptW      = 80.0
	receiptMargin = 4.0
	receiptQR     = 40.0
)

// receiptWords are the counter ticket's own labels.
var receiptWords = map[display.Lang]struct{ heading, soldAt, keep string }{
	display.English: {heading: "Seatghor ticket (counter)", soldAt: "Sold at",
		keep: "Keep this ticket: show the QR code when boarding."},
	display.Bengali: {heading: "সিটঘর টিকিট (কাউন্টার)", soldAt: "বিক্রির স্থান",
		keep: "টিকিটটি রাখুন: ওঠার সময় কিউআর কোড দেখান।"},
}

// Receipt is what a counter ticket says besides the show and its tickets.
type Receipt struct {
	// Buyer is the buyer's phone (E.164), printed as Bangladeshis write it.
	Buyer string
	// Counter names where it was sold; empty for none.
	Counter string
}

// RenderReceipt returns an order's tickets for an 80 mm thermal printer
// (issue 25 §3, decision 0443): one page as long as its tickets need, the
// show, its journey and times as on the e-ticket (the same words and
// fonts), then each ticket with a 40 mm QR code of its signed code, the
// seat and passenger, the ticket number and price.
func RenderReceipt(show catalog.Show, r Receipt, tickets []ticket.Ticket, lang display.Lang) ([]byte, error) {
	w, ok := labels[lang]
	rw := receiptWords[lang]
	if !ok {
		w, rw, lang = labels[display.English], receiptWords[display.English], display.English
	}
	if len(tickets) == 0 {
		return nil, fmt.Errorf("a counter ticket of no tickets")
	}
	f, err := loadFontsAt(12, 10.5, 8, 7) // a thermal printer's sizes
	if err != nil {
		return nil, err
	}
	loc := display.ZoneOrDefault(show.TimeZone)
	title, operator := show.Title, show.Operator
	if lang == display.Bengali {
		title, operator = orName(show.TitleBn, title), orName(show.OperatorBn, operator)
	}
	when := w.starts
	if show.Kind == catalogv1.ShowKind_SHOW_KIND_BUS_TRIP {
		when = w.boarding
	}
	head := []string{where(show, w, lang), w.operator + ": " + operator, when + ": " + display.Time(show.StartsAt, loc, lang)}
	if j := tickets[0].Journey; j != nil {
		stops, board := journeyLines(j, w, loc, lang)
		head = append([]string{head[0], stops, head[1]}, board...)
	}
	if r.Buyer != "" {
		head = append(head, w.buyer+": "+display.Digits(phone.National(r.Buyer), lang))
	}
	head = append(head, w.order+": "+ticket.Label(tickets[0].OrderID))
	if r.Counter != "" {
		head = append(head, rw.soldAt+": "+r.Counter)
	}
	// Drawn on a canvas longer than needed, then cut to what was drawn: a
	// roll has no page length. White rules across the top and under the
	// last line keep the width at 80 mm and the margins when it is fitted.
	h := 60 + float64(len(head))*6 + float64(len(tickets))*(receiptQR+30)
	c := canvas.New(receiptW, h)
	ctx := canvas.NewContext(c)
	ctx.SetFillColor(canvas.White)
	ctx.DrawPath(0, h-0.2, canvas.Rectangle(receiptW, 0.2))
	ctx.SetFillColor(canvas.Black)
	x := receiptMargin
	// line wrapped at the printable width.
	line := func(ctx *canvas.Context, x, y float64, face typeface, s string) float64 {
		return lineIn(ctx, x, y, face, s, receiptW-2*receiptMargin)
	}
	y := line(ctx, x, h-receiptMargin, f.heading, rw.heading) - 1
	y = line(ctx, x, y, f.big, title)
	for _, s := range head {
		y = line(ctx, x, y, f.body, s)
	}
	for _, t := range tickets {
		y -= 2
		ctx.DrawPath(x, y, canvas.Rectangle(receiptW-2*x, 0.3))
		y -= 3
		label := w.seat + " " + t.Seat
		if t.Seat == "" {
			label = w.ga + ": " + t.GAArea
		}
		y = line(ctx, x, y, f.big, label)
		if p := t.Passenger; p.Name != "" {
			s := w.passenger + ": " + p.Name
			if p.Woman {
				s += ", " + w.woman
			}
			y = line(ctx, x, y, f.body, s)
		}
		y = line(ctx, x, y, f.body, w.ticket+" "+t.ID)
		y = line(ctx, x, y, f.body, w.price+" "+display.Money(t.PriceMinor, t.Currency, lang))
		qr, err := qrcode.New(t.Code, qrcode.Medium)
		if err != nil {
			return nil, fmt.Errorf("QR code of ticket %s: %w", t.ID, err)
		}
		img := qr.Image(-4)
		side := float64(img.Bounds().Dx())
		ctx.DrawImage((receiptW-receiptQR)/2, y-receiptQR, img, canvas.DPMM(side/receiptQR))
		y -= receiptQR + 2
	}
	y = line(ctx, x, y-1, f.small, rw.keep)
	y = line(ctx, x, y, f.small, w.issued+": "+display.Time(tickets[0].IssuedAt, loc, lang))
	ctx.SetFillColor(canvas.White)
	ctx.DrawPath(0, y-receiptMargin, canvas.Rectangle(receiptW, 0.2))
	c.Fit(0)
	var out bytes.Buffer
	doc := pdf.New(&out, c.W, c.H, &pdf.Options{Compress: true, SubsetFonts: true, ImageEncoding: canvas.Lossless})
	doc.SetInfo("Seatghor counter ticket "+tickets[0].OrderID, "", "", "Seatghor", "Seatghor")
	doc.SetLang(string(lang))
	c.RenderTo(doc)
	if err := doc.Close(); err != nil {
		return nil, fmt.Errorf("render counter ticket %s: %w", tickets[0].OrderID, err)
	}
	return out.Bytes(), nil
}
