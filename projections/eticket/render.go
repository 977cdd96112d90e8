package eticket

import (
	"bytes"
	"fmt"
	"strconv"
	"time"

	"github.com/go-pdf/fpdf"
	qrcode "github.com/skip2/go-qrcode"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/ticket"
)

// Render returns the e-ticket PDF of one order: the show, the buyer, and
// one block per ticket with its seat (or GA area), price and the QR code of
// its signed code, the code printed under it for typing in by hand.
func Render(show catalog.Show, buyer string, tickets []ticket.Ticket) ([]byte, error) {
	pdf := fpdf.New("P", "mm", "A4", "")
	// Dated by the booking, not the rendering: a replay prints the same.
	pdf.SetCreationDate(tickets[0].IssuedAt)
	pdf.SetModificationDate(tickets[0].IssuedAt)
	pdf.SetCatalogSort(true)
	// Uncompressed page text: small files, and the codes stay greppable.
	pdf.SetCompression(false)
	pdf.SetTitle("Seatghor e-ticket "+tickets[0].OrderID, true)
	pdf.SetAuthor("Seatghor", true)
	// The core fonts speak cp1252; names in other scripts degrade, not fail.
	tr := pdf.UnicodeTranslatorFromDescriptor("")
	pdf.SetAutoPageBreak(false, 10)
	for i, t := range tickets {
		if i%3 == 0 {
			pdf.AddPage()
			pdf.SetFont("Helvetica", "B", 18)
			pdf.CellFormat(0, 10, "Seatghor e-ticket", "", 1, "L", false, 0, "")
			pdf.SetFont("Helvetica", "", 11)
			pdf.CellFormat(0, 6, tr(show.Title), "", 1, "L", false, 0, "")
			pdf.CellFormat(0, 6, tr(where(show)), "", 1, "L", false, 0, "")
			pdf.CellFormat(0, 6, "Starts: "+show.StartsAt.UTC().Format("Mon 2 Jan 2006, 15:04 MST"), "", 1, "L", false, 0, "")
			pdf.CellFormat(0, 6, tr("Buyer: "+buyer+"    Order: "+t.OrderID), "", 1, "L", false, 0, "")
			pdf.Ln(4)
		}
		y := pdf.GetY()
		png, err := qrcode.Encode(t.Code, qrcode.Medium, 512)
		if err != nil {
			return nil, fmt.Errorf("QR code of ticket %s: %w", t.ID, err)
		}
		name := "qr-" + strconv.Itoa(i)
		pdf.RegisterImageOptionsReader(name, fpdf.ImageOptions{ImageType: "PNG"}, bytes.NewReader(png))
		pdf.ImageOptions(name, 10, y, 55, 55, false, fpdf.ImageOptions{ImageType: "PNG"}, 0, "")
		pdf.SetXY(70, y+4)
		pdf.SetFont("Helvetica", "B", 16)
		label := "Seat " + t.Seat
		if t.Seat == "" {
			label = "General admission: " + t.GAArea
		}
		pdf.CellFormat(0, 8, tr(label), "", 2, "L", false, 0, "")
		pdf.SetFont("Helvetica", "", 10)
		pdf.CellFormat(0, 6, "Ticket "+t.ID, "", 2, "L", false, 0, "")
		pdf.CellFormat(0, 6, fmt.Sprintf("Price %s %d.%02d", t.Currency, t.PriceMinor/100, t.PriceMinor%100), "", 2, "L", false, 0, "")
		pdf.CellFormat(0, 6, "Issued "+t.IssuedAt.UTC().Format(time.RFC3339), "", 2, "L", false, 0, "")
		pdf.SetFont("Courier", "", 6)
		pdf.MultiCell(0, 3, t.Code, "", "L", false)
		pdf.SetY(y + 62)
	}
	if err := pdf.Error(); err != nil {
		return nil, fmt.Errorf("render e-ticket %s: %w", tickets[0].OrderID, err)
	}
	var buf bytes.Buffer
	if err := pdf.Output(&buf); err != nil {
		return nil, fmt.Errorf("render e-ticket %s: %w", tickets[0].OrderID, err)
	}
	return buf.Bytes(), nil
}

func where(s catalog.Show) string {
	if s.Kind == catalogv1.ShowKind_SHOW_KIND_BUS_TRIP || (s.Origin != "" && s.Destination != "") {
		return s.Origin + " to " + s.Destination
	}
	return s.Venue
}
