package catalog

import (
	"context"
	"fmt"
	"slices"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/server/amount"
	"github.com/seatghor/seatghor/server/fault"
)

// The layout model of every show, venue and coach alike (decision 0370):
// decks, sections of rows of places with positions and kinds, and features
// that are not places (the driver, a door, the stage). A place is Pitch
// layout units wide and deep; x, y are its centre on its deck, x growing to
// the right and y away from the front (catalog.v1.Layout).

// Pitch is the width and depth of one place, in layout units.
const Pitch = 10

// SeatKind is what a place is (catalog.v1.SeatKind, the same numbers; the
// shard's seats.kind).
type SeatKind int16

// The seat kinds.
const (
	KindOrdinary   = SeatKind(catalogv1.SeatKind_SEAT_KIND_ORDINARY_UNSPECIFIED)
	KindBusiness   = SeatKind(catalogv1.SeatKind_SEAT_KIND_BUSINESS)
	KindSleeper    = SeatKind(catalogv1.SeatKind_SEAT_KIND_SLEEPER)
	KindWomen      = SeatKind(catalogv1.SeatKind_SEAT_KIND_WOMEN)
	KindWheelchair = SeatKind(catalogv1.SeatKind_SEAT_KIND_WHEELCHAIR)
	KindBlocked    = SeatKind(catalogv1.SeatKind_SEAT_KIND_BLOCKED)
)

// FeatureKind is something drawn that is not a place (catalog.v1.FeatureKind).
type FeatureKind int16

// Layout is the drawing of a show's places.
type Layout struct {
	Decks    []Deck          `json:"decks,omitempty"`
	Sections []LayoutSection `json:"sections"`
	Features []Feature       `json:"features,omitempty"`
}

// Deck is one level: a coach's lower or upper deck; a venue has one.
type Deck struct {
	Name   string `json:"name,omitempty"`
	NameBn string `json:"name_bn,omitempty"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
}

// LayoutSection is a block of rows with one seat class and one price.
type LayoutSection struct {
	Name       string      `json:"name"`
	NameBn     string      `json:"name_bn,omitempty"`
	Deck       int         `json:"deck,omitempty"`
	SeatClass  string      `json:"seat_class,omitempty"`
	PriceMinor int64       `json:"price_minor"`
	Rows       []LayoutRow `json:"rows"`
}

// LayoutRow is a row of places, straight or curved as their positions say.
type LayoutRow struct {
	Label string       `json:"label"`
	Seats []LayoutSeat `json:"seats"`
}

// LayoutSeat is one place.
type LayoutSeat struct {
	Seat string   `json:"seat"`
	X    int      `json:"x"`
	Y    int      `json:"y"`
	Kind SeatKind `json:"kind,omitempty"`
}

// Feature is something drawn that is not a place.
type Feature struct {
	Kind    FeatureKind `json:"kind"`
	Deck    int         `json:"deck,omitempty"`
	X       int         `json:"x"`
	Y       int         `json:"y"`
	Width   int         `json:"width,omitempty"`
	Height  int         `json:"height,omitempty"`
	Label   string      `json:"label,omitempty"`
	LabelBn string      `json:"label_bn,omitempty"`
}

// SeatCount is the number of places of l.
func (l *Layout) SeatCount() int {
	n := 0
	for _, s := range l.Sections {
		for _, r := range s.Rows {
			n += len(r.Seats)
		}
	}
	return n
}

// Blocked counts the places that never sell (KindBlocked: the crew's, one
// out of use), which a buyer is not offered nor counted.
func (l *Layout) Blocked() int {
	n := 0
	for _, s := range l.Sections {
		for _, r := range s.Rows {
			for _, seat := range r.Seats {
				if seat.Kind == KindBlocked {
					n++
				}
			}
		}
	}
	return n
}

// StraightRows is the layout of sections given the old way (rows of
// seats_per_row seats named row label + number): each section a block of
// straight rows, one place apart, the blocks one under the other with a
// place between them and centred on the widest. Every seat is ordinary.
func StraightRows(sections []Section) *Layout {
	width := 0
	for _, s := range sections {
		width = max(width, s.SeatsPerRow*Pitch)
	}
	l := &Layout{}
	y := 0
	for i, s := range sections {
		if i > 0 {
			y += Pitch // a gap between blocks
		}
		left := (width - s.SeatsPerRow*Pitch) / 2
		ls := LayoutSection{Name: s.Name, NameBn: s.NameBn, PriceMinor: s.PriceMinor, SeatClass: s.SeatClass}
		for _, label := range s.Rows {
			r := LayoutRow{Label: label, Seats: make([]LayoutSeat, s.SeatsPerRow)}
			for n := range s.SeatsPerRow {
				r.Seats[n] = LayoutSeat{Seat: fmt.Sprintf("%s%d", label, n+1), X: left + n*Pitch + Pitch/2, Y: y + Pitch/2}
			}
			ls.Rows = append(ls.Rows, r)
			y += Pitch
		}
		l.Sections = append(l.Sections, ls)
	}
	l.Decks = []Deck{{Width: width, Height: y}}
	return l
}

// summary is l's sections the old way, for what reads a show's sections
// (Show.Sections: the API's Show, the trip index's lowest price): names,
// row labels, the longest row's length and prices.
func (l *Layout) summary() []Section {
	out := make([]Section, 0, len(l.Sections))
	for _, s := range l.Sections {
		sec := Section{Name: s.Name, NameBn: s.NameBn, PriceMinor: s.PriceMinor, SeatClass: s.SeatClass}
		for _, r := range s.Rows {
			sec.Rows = append(sec.Rows, r.Label)
			sec.SeatsPerRow = max(sec.SeatsPerRow, len(r.Seats))
		}
		out = append(out, sec)
	}
	return out
}

// check refuses a layout that cannot be drawn or sold (reason, on fields
// under prefix: "layout", "template.layout"): a seat id, row label or
// section name twice, a deck out of range, two places at one position of
// a deck, a place or feature outside its deck, more seats than a show may
// have. It fills what is left to the server: a layout whose places have no
// positions at all (every x and y 0) gets straight rows; decks not given
// get one; a deck without a size gets the size of what is on it.
func (l *Layout) check(reason fault.Reason, prefix string) error {
	bad := func(field, format string, args ...any) error {
		return fault.OnField(reason, prefix+field, format, args...)
	}
	if len(l.Decks) > 4 {
		return bad(".decks", "at most 4 decks")
	}
	if l.unplaced() {
		l.placeStraight()
	}
	decks := max(1, len(l.Decks))
	seats, rows, names := map[string]bool{}, map[string]bool{}, map[string]bool{}
	type spot struct{ deck, x, y int }
	taken := map[spot]string{}
	n := 0
	for si, s := range l.Sections {
		at := fmt.Sprintf(".sections[%d]", si)
		if s.Name == "" {
			return bad(at+".name", "a section needs a name")
		}
		if names[s.Name] {
			return bad(at+".name", "section %q appears twice", s.Name)
		}
		names[s.Name] = true
		if s.PriceMinor < 0 || s.PriceMinor > amount.MaxPriceMinor {
			return bad(at+".price_minor", "price %d is out of range: 0 to %d minor units", s.PriceMinor, amount.MaxPriceMinor)
		}
		if s.Deck < 0 || s.Deck >= decks {
			return bad(at+".deck", "deck %d is out of range: the layout has %d", s.Deck, decks)
		}
		if len(s.Rows) == 0 {
			return bad(at+".rows", "section %q has no rows", s.Name)
		}
		for ri, r := range s.Rows {
			at := fmt.Sprintf("%s.rows[%d]", at, ri)
			if rows[r.Label] {
				return bad(at+".label", "row %q appears twice", r.Label)
			}
			rows[r.Label] = true
			if len(r.Seats) == 0 {
				return bad(at+".seats", "row %q has no seats", r.Label)
			}
			for i, seat := range r.Seats {
				at := fmt.Sprintf("%s.seats[%d]", at, i)
				switch {
				case seats[seat.Seat]:
					return bad(at+".seat", "seat %q appears twice", seat.Seat)
				case seat.Kind < KindOrdinary || seat.Kind > KindBlocked:
					return bad(at+".kind", "seat %q has no kind %d", seat.Seat, seat.Kind)
				case seat.X < 0 || seat.Y < 0:
					return bad(at+".x", "seat %q is at (%d, %d): positions are not negative", seat.Seat, seat.X, seat.Y)
				}
				seats[seat.Seat] = true
				k := spot{s.Deck, seat.X, seat.Y}
				if other, ok := taken[k]; ok {
					return bad(at+".x", "seats %q and %q are both at (%d, %d) of deck %d", other, seat.Seat, seat.X, seat.Y, s.Deck)
				}
				taken[k] = seat.Seat
				n++
			}
		}
	}
	if n > MaxSeats {
		return bad(".sections", "%d seats; at most %d per show", n, MaxSeats)
	}
	for i, f := range l.Features {
		at := fmt.Sprintf(".features[%d]", i)
		switch {
		case f.Kind <= 0 || int(f.Kind) >= len(catalogv1.FeatureKind_name):
			return bad(at+".kind", "no feature kind %d", f.Kind)
		case f.Deck < 0 || f.Deck >= decks:
			return bad(at+".deck", "deck %d is out of range: the layout has %d", f.Deck, decks)
		case f.X < 0 || f.Y < 0 || f.Width < 0 || f.Height < 0:
			return bad(at+".x", "positions and sizes are not negative")
		}
	}
	l.sizeDecks()
	for si, s := range l.Sections {
		d := l.Decks[s.Deck]
		for ri, r := range s.Rows {
			for i, seat := range r.Seats {
				if seat.X > d.Width || seat.Y > d.Height {
					return bad(fmt.Sprintf(".sections[%d].rows[%d].seats[%d].x", si, ri, i),
						"seat %q at (%d, %d) is outside deck %d (%d × %d)", seat.Seat, seat.X, seat.Y, s.Deck, d.Width, d.Height)
				}
			}
		}
	}
	for i, f := range l.Features {
		if d := l.Decks[f.Deck]; f.X > d.Width || f.Y > d.Height {
			return bad(fmt.Sprintf(".features[%d].x", i), "the feature at (%d, %d) is outside deck %d (%d × %d)",
				f.X, f.Y, f.Deck, d.Width, d.Height)
		}
	}
	return nil
}

// unplaced says whether no place of l has a position (every x and y 0):
// a layout given as rows only.
func (l *Layout) unplaced() bool {
	for _, s := range l.Sections {
		for _, r := range s.Rows {
			for _, seat := range r.Seats {
				if seat.X != 0 || seat.Y != 0 {
					return false
				}
			}
		}
	}
	return true
}

// placeStraight gives the places of l straight rows, as StraightRows does,
// deck by deck; rows of one section may differ in length (each is centred).
func (l *Layout) placeStraight() {
	width := map[int]int{}
	for _, s := range l.Sections {
		for _, r := range s.Rows {
			width[s.Deck] = max(width[s.Deck], len(r.Seats)*Pitch)
		}
	}
	y := map[int]int{}
	for si := range l.Sections {
		s := &l.Sections[si]
		if y[s.Deck] > 0 {
			y[s.Deck] += Pitch
		}
		for ri := range s.Rows {
			r := &s.Rows[ri]
			left := (width[s.Deck] - len(r.Seats)*Pitch) / 2
			for i := range r.Seats {
				r.Seats[i].X, r.Seats[i].Y = left+i*Pitch+Pitch/2, y[s.Deck]+Pitch/2
			}
			y[s.Deck] += Pitch
		}
	}
}

// sizeDecks gives l a deck when it has none, and a deck without a width or
// height the extent of its places and features, half a place beyond the
// farthest centre.
func (l *Layout) sizeDecks() {
	if len(l.Decks) == 0 {
		l.Decks = []Deck{{}}
	}
	w, h := make([]int, len(l.Decks)), make([]int, len(l.Decks))
	grow := func(deck, x, y int) {
		w[deck], h[deck] = max(w[deck], x), max(h[deck], y)
	}
	for _, s := range l.Sections {
		for _, r := range s.Rows {
			for _, seat := range r.Seats {
				grow(s.Deck, seat.X+Pitch/2, seat.Y+Pitch/2)
			}
		}
	}
	for _, f := range l.Features {
		grow(f.Deck, f.X+f.Width/2, f.Y+f.Height/2)
	}
	for i := range l.Decks {
		if l.Decks[i].Width == 0 {
			l.Decks[i].Width = w[i]
		}
		if l.Decks[i].Height == 0 {
			l.Decks[i].Height = h[i]
		}
	}
}

// Drawing is what the shard keeps of a show's layout besides its seats
// (the shards' shows.drawing): the decks, the features, and each section's
// Bengali name, deck and seat class, for the seat map to serve (decision
// 0370).
type Drawing struct {
	Decks    []Deck           `json:"decks,omitempty"`
	Features []Feature        `json:"features,omitempty"`
	Sections []DrawingSection `json:"sections,omitempty"`
}

// DrawingSection is what the seat map serves of a section besides its
// rows.
type DrawingSection struct {
	Name      string `json:"name"`
	NameBn    string `json:"name_bn,omitempty"`
	Deck      int    `json:"deck,omitempty"`
	SeatClass string `json:"seat_class,omitempty"`
}

// Drawing is l's drawing.
func (l *Layout) Drawing() Drawing {
	d := Drawing{Decks: l.Decks, Features: l.Features}
	for _, s := range l.Sections {
		d.Sections = append(d.Sections, DrawingSection{Name: s.Name, NameBn: s.NameBn, Deck: s.Deck, SeatClass: s.SeatClass})
	}
	return d
}

// LayoutFromProto is the layout p describes; nil for nil.
func LayoutFromProto(p *catalogv1.Layout) *Layout {
	if p == nil {
		return nil
	}
	l := &Layout{}
	for _, d := range p.GetDecks() {
		l.Decks = append(l.Decks, Deck{Name: d.GetName(), NameBn: d.GetNameBn(), Width: int(d.GetWidth()), Height: int(d.GetHeight())})
	}
	for _, s := range p.GetSections() {
		ls := LayoutSection{Name: s.GetName(), NameBn: s.GetNameBn(), Deck: int(s.GetDeck()), SeatClass: s.GetSeatClass(),
			PriceMinor: s.GetPriceMinor()}
		for _, r := range s.GetRows() {
			lr := LayoutRow{Label: r.GetLabel(), Seats: make([]LayoutSeat, 0, len(r.GetSeats()))}
			for _, seat := range r.GetSeats() {
				lr.Seats = append(lr.Seats, LayoutSeat{Seat: seat.GetSeat(), X: int(seat.GetX()), Y: int(seat.GetY()), Kind: SeatKind(seat.GetKind())})
			}
			ls.Rows = append(ls.Rows, lr)
		}
		l.Sections = append(l.Sections, ls)
	}
	for _, f := range p.GetFeatures() {
		l.Features = append(l.Features, Feature{Kind: FeatureKind(f.GetKind()), Deck: int(f.GetDeck()), X: int(f.GetX()), Y: int(f.GetY()),
			Width: int(f.GetWidth()), Height: int(f.GetHeight()), Label: f.GetLabel(), LabelBn: f.GetLabelBn()})
	}
	return l
}

// Proto is l as the API carries it.
func (l *Layout) Proto() *catalogv1.Layout {
	p := &catalogv1.Layout{}
	for _, d := range l.Decks {
		p.Decks = append(p.Decks, d.Proto())
	}
	for _, s := range l.Sections {
		ps := &catalogv1.LayoutSection{Name: s.Name, NameBn: s.NameBn, Deck: int32(s.Deck), SeatClass: s.SeatClass, PriceMinor: s.PriceMinor}
		for _, r := range s.Rows {
			pr := &catalogv1.LayoutRow{Label: r.Label}
			for _, seat := range r.Seats {
				pr.Seats = append(pr.Seats, &catalogv1.LayoutSeat{Seat: seat.Seat, X: int32(seat.X), Y: int32(seat.Y),
					Kind: catalogv1.SeatKind(seat.Kind)})
			}
			ps.Rows = append(ps.Rows, pr)
		}
		p.Sections = append(p.Sections, ps)
	}
	for _, f := range l.Features {
		p.Features = append(p.Features, f.Proto())
	}
	return p
}

// Proto is d as the API carries it.
func (d Deck) Proto() *catalogv1.Deck {
	return &catalogv1.Deck{Name: d.Name, NameBn: d.NameBn, Width: int32(d.Width), Height: int32(d.Height)}
}

// Proto is f as the API carries it.
func (f Feature) Proto() *catalogv1.LayoutFeature {
	return &catalogv1.LayoutFeature{Kind: catalogv1.FeatureKind(f.Kind), Deck: int32(f.Deck), X: int32(f.X), Y: int32(f.Y),
		Width: int32(f.Width), Height: int32(f.Height), Label: f.Label, LabelBn: f.LabelBn}
}

// layOut settles the drawing of show's places (decision 0370): given at
// most one way (sections, a layout or a template); a template's layout is
// copied, with this show's section prices; a layout is checked and
// completed (check), and the show's sections then summarise it. Sections
// given the old way are left as they are (Places lays them out).
func (s *Service) layOut(ctx context.Context, show *Show) error {
	ways := 0
	for _, given := range []bool{len(show.Sections) > 0, show.Layout != nil, show.LayoutTemplateID != ""} {
		if given {
			ways++
		}
	}
	if ways > 1 {
		return fault.OnField(fault.ShowInvalid, "layout", "give the places one way: sections, layout or layout_template_id")
	}
	if len(show.SectionPrices) > 0 && show.LayoutTemplateID == "" {
		return fault.OnField(fault.ShowInvalid, "section_prices", "section prices go with a layout template (layout_template_id)")
	}
	if show.LayoutTemplateID != "" {
		l, err := s.templateLayout(ctx, show.OrganizationID, show.LayoutTemplateID)
		if err != nil {
			return err
		}
		show.Layout = l
	}
	if show.Layout == nil {
		return nil
	}
	for i, p := range show.SectionPrices {
		j := slices.IndexFunc(show.Layout.Sections, func(s LayoutSection) bool { return s.Name == p.Section })
		if j < 0 {
			return fault.OnField(fault.ShowInvalid, fmt.Sprintf("section_prices[%d].section", i),
				"template %q has no section %q", show.LayoutTemplateID, p.Section)
		}
		show.Layout.Sections[j].PriceMinor = p.PriceMinor
	}
	if err := show.Layout.check(fault.ShowInvalid, "layout"); err != nil {
		return err
	}
	show.Sections = show.Layout.summary()
	return nil
}
