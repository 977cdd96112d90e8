package eticket

import (
	"bytes"
	"fmt"

	"github.com/tdewolff/canvas"
	"github.com/tdewolff/canvas/renderers/pdf"

	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/display"
	"github.com/seatghor/seatghor/server/ticket"
)

// The printed manifest: A4 across, 12 mm margins.
const (
	manifestW, manifestH = 297.0, 210.0
	manifestMargin       = 12.0
	manifestRowH         = 7.0
)

// manifestColumns are the columns of ticket.ManifestTable the printed
// manifest shows, with their widths in mm (a tick box follows): seat,
// passenger, phone, from, to, boarding counter, channel, status.
var manifestColumns = []struct {
	index int
	width float64
}{{0, 14}, {2, 58}, {3, 30}, {5, 28}, {6, 28}, {7, 36}, {9, 24}, {10, 24}}

// manifestTitles are the printed manifest's own words.
var manifestTitles = map[display.Lang]struct{ heading, printed, counts string }{
	display.English: {heading: "Passenger manifest", printed: "Printed", counts: "%d expected · %d boarded · %d no-show"},
	display.Bengali: {heading: "যাত্রী তালিকা", printed: "প্রিন্ট", counts: "অপেক্ষমাণ %d · উঠেছেন %d · অনুপস্থিত %d"},
}

// RenderManifest is a trip's manifest to print for its supervisor (issue 25
// §4, decision 0442): A4 pages across, the show and its time on each, the
// passengers by seat (name, phone, journey, boarding counter, channel,
// status) with an empty box to tick at the door, in lang.
func RenderManifest(show catalog.Show, m ticket.Manifest, lang display.Lang) ([]byte, error) {
	mt, ok := manifestTitles[lang]
	if !ok {
		mt, lang = manifestTitles[display.English], display.English
	}
	f, err := loadFontsAt(14, 11, 8.5, 7)
	if err != nil {
		return nil, err
	}
	loc := display.ZoneOrDefault(show.TimeZone)
	title := show.Title
	if lang == display.Bengali {
		title = orName(show.TitleBn, title)
	}
	columns, rows := ticket.ManifestTable(m, lang)
	perPage := 22 // rows under the headings: (210 - 2×12 - 30) / 7
	total := max(1, (len(rows)+perPage-1)/perPage)
	var pages []*canvas.Canvas
	for start := 0; start == 0 || start < len(rows); start += perPage {
		c := canvas.New(manifestW, manifestH)
		ctx := canvas.NewContext(c)
		pages = append(pages, c)
		y := line(ctx, manifestMargin, manifestH-manifestMargin, f.heading, mt.heading+": "+title)
		y = line(ctx, manifestMargin, y, f.body, display.Time(show.StartsAt, loc, lang)+" · "+
			display.Digits(fmt.Sprintf(mt.counts, m.Expected, m.Boarded, m.NoShow), lang)+" · "+
			mt.printed+" "+display.Time(m.ServerTime, loc, lang)+
			display.Digits(fmt.Sprintf(" · %d/%d", len(pages), total), lang))
		y -= 2
		row := func(cells []string, face typeface) {
			x := manifestMargin
			for i, col := range manifestColumns {
				lineIn(ctx, x+1, y-1, face, cells[i], col.width-2)
				x += col.width
			}
			ctx.DrawPath(x+2, y-manifestRowH+1.5, canvas.Rectangle(4, 4).Stroke(0.3, canvas.ButtCap, canvas.MiterJoin, 1))
			ctx.DrawPath(manifestMargin, y-manifestRowH, canvas.Rectangle(manifestW-2*manifestMargin, 0.2))
			y -= manifestRowH
		}
		head := make([]string, len(manifestColumns))
		for i, col := range manifestColumns {
			head[i] = columns[col.index]
		}
		row(head, f.big)
		for _, r := range rows[start:min(start+perPage, len(rows))] {
			cells := make([]string, len(manifestColumns))
			for i, col := range manifestColumns {
				cells[i] = r[col.index]
			}
			row(cells, f.body)
		}
	}
	var out bytes.Buffer
	doc := pdf.New(&out, manifestW, manifestH, &pdf.Options{Compress: true, SubsetFonts: true})
	doc.SetInfo(fmt.Sprintf("Seatghor manifest %d", show.ID), "", "", "Seatghor", "Seatghor")
	doc.SetLang(string(lang))
	for i, c := range pages {
		if i > 0 {
			doc.NewPage(manifestW, manifestH)
		}
		c.RenderTo(doc)
	}
	if err := doc.Close(); err != nil {
		return nil, fmt.Errorf("render the manifest of show %d: %w", show.ID, err)
	}
	return out.Bytes(), nil
}
