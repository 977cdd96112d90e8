package api_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	seatmapv1 "github.com/seatghor/seatghor/gen/seatghor/seatmap/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
)

// busOrganization makes an organisation, org, with a manager, and returns
// the manager's clients.
func busOrganization(t *testing.T, env *apptest.Env, org, manager string) clients {
	t.Helper()
	ctx := context.Background()
	admin := as(t, env, "admin", auth.RoleAdmin)
	_, err := admin.catalog.CreateOrganization(ctx, connect.NewRequest(&catalogv1.CreateOrganizationRequest{OrganizationId: org, Name: org}))
	require.NoError(t, err)
	_, err = admin.catalog.AddOrganizationMember(ctx, connect.NewRequest(&catalogv1.AddOrganizationMemberRequest{
		OrganizationId: org, UserId: manager, Role: catalogv1.OrganizationRole_ORGANIZATION_ROLE_MANAGER}))
	require.NoError(t, err)
	return as(t, env, manager, auth.RoleOperator)
}

// busTrip is a bus trip of org made from a layout template.
func busTrip(org, template string) *catalogv1.CreateShowRequest {
	return &catalogv1.CreateShowRequest{
		Kind: catalogv1.ShowKind_SHOW_KIND_BUS_TRIP, Title: "Dhaka → Chattogram", Origin: "Dhaka", Destination: "Chattogram",
		StartsAt: timestamppb.New(time.Now().Add(7 * 24 * time.Hour)), Currency: "BDT", OrganizationId: org,
		LayoutTemplateId: template, MaxSeatsPerAccount: 10, MaxSeatsPerHold: 10,
	}
}

// refusal is what an error answer says: code, reason, fields at fault and
// the seats its SeatsUnavailable detail names.
type refusal struct {
	code   connect.Code
	reason string
	fields []string
	seats  []string
}

func refusalOf(tb testing.TB, err error) refusal {
	tb.Helper()
	require.Error(tb, err)
	a := answerOf(tb, err)
	r := refusal{code: a.code, reason: a.reason, fields: a.fields}
	var ce *connect.Error
	require.True(tb, errors.As(err, &ce))
	for _, d := range ce.Details() {
		if v, derr := d.Value(); derr == nil {
			if su, ok := v.(*bookingv1.SeatsUnavailable); ok {
				r.seats = su.GetSeats()
			}
		}
	}
	return r
}

// TestLayoutTemplateShowServesItsDrawing (decisions 0370, 0372): a bus
// trip made from a shipped template, with this show's price, is served
// with the template's drawing — sections with their Bengali names, decks
// and seat classes, each seat's position and kind, the decks and the
// features (driver, door) — by GetSeatLayout and by GetSeatMap on the RPC
// path and the fast path alike (the same JSON, the fast path without the
// RPC); its blocked seat is shown taken.
func TestLayoutTemplateShowServesItsDrawing(t *testing.T) {
	s := newSeatmapServers(t)
	ctx := context.Background()
	manager := busOrganization(t, s.env, "greenline", "rahim")

	list, err := manager.catalog.ListLayoutTemplates(ctx, connect.NewRequest(&catalogv1.ListLayoutTemplatesRequest{OrganizationId: "greenline"}))
	require.NoError(t, err)
	var ids []string
	for _, tpl := range list.Msg.GetTemplates() {
		ids = append(ids, tpl.GetTemplateId())
	}
	require.Equal(t, []string{"coach-2x1-27", "coach-2x2-40", "sleeper-1x2-30"}, ids)
	got, err := manager.catalog.GetLayoutTemplate(ctx, connect.NewRequest(&catalogv1.GetLayoutTemplateRequest{TemplateId: "coach-2x1-27"}))
	require.NoError(t, err)
	tpl := got.Msg.GetTemplate()

	req := busTrip("greenline", "coach-2x1-27")
	req.SectionPrices = []*catalogv1.SectionPrice{{Section: "Business", PriceMinor: 180000}}
	created, err := manager.catalog.CreateShow(ctx, connect.NewRequest(req))
	require.NoError(t, err)
	show := created.Msg.GetShow()
	require.Equal(t, "coach-2x1-27", show.GetLayoutTemplateId())
	require.EqualValues(t, 28, show.GetSeatCount())

	// What the layout must say: the template's, at this show's price.
	want := &seatmapv1.GetSeatLayoutResponse{ShowId: show.GetShowId(), Currency: "BDT", SeatCount: 28,
		Decks: tpl.GetLayout().GetDecks(), Features: tpl.GetLayout().GetFeatures()}
	for _, sec := range tpl.GetLayout().GetSections() {
		ws := &seatmapv1.Section{Name: sec.GetName(), NameBn: sec.GetNameBn(), Deck: sec.GetDeck(), SeatClass: sec.GetSeatClass(), PriceMinor: 180000}
		for _, r := range sec.GetRows() {
			wr := &seatmapv1.Row{Label: r.GetLabel()}
			for _, seat := range r.GetSeats() {
				wr.Seats, wr.X, wr.Y = append(wr.Seats, seat.GetSeat()), append(wr.X, seat.GetX()), append(wr.Y, seat.GetY())
				wr.Kinds = append(wr.Kinds, seat.GetKind())
			}
			ws.Rows = append(ws.Rows, wr)
		}
		want.Sections = append(want.Sections, ws)
	}
	buyer := as(t, s.env, "shirin", auth.RoleUser)
	layout, err := buyer.seatmap.GetSeatLayout(ctx, connect.NewRequest(&seatmapv1.GetSeatLayoutRequest{ShowId: show.GetShowId()}))
	require.NoError(t, err)
	want.Etag = layout.Msg.GetEtag()
	require.True(t, proto.Equal(want, layout.Msg), "the layout served:\n got %v\nwant %v", layout.Msg, want)
	require.Equal(t, []catalogv1.SeatKind{catalogv1.SeatKind_SEAT_KIND_BLOCKED}, layout.Msg.GetSections()[0].GetRows()[0].GetKinds())

	// The whole map and the availability, on both paths.
	waitForMapVersion(t, s, show.GetShowId(), buyer)
	signedIn := http.Header{"Authorization": {"Bearer " + s.env.Token(t, "reader", auth.RoleUser)}}
	base := fmt.Sprintf("/v1/shows/%d/seatmap", show.GetShowId())
	for _, tc := range []fastCase{
		{"whole map", base, signedIn, true, 200},
		{"a section with its layout", base + "?section=Business", signedIn, true, 200},
		{"availability only", base + "?layout_etag=" + want.Etag, signedIn, true, 200},
	} {
		t.Run(tc.name, func(t *testing.T) { s.answersAsTheRPC(t, tc) })
	}
	var whole seatmapv1.GetSeatMapResponse
	a := getREST(t, s.fast, base, signedIn)
	require.NoError(t, protojson.Unmarshal([]byte(a.body), &whole))
	require.True(t, proto.Equal(&seatmapv1.GetSeatMapResponse{ShowId: show.GetShowId(), Currency: "BDT", Sections: want.Sections,
		Availability: whole.GetAvailability(), SeatCount: 28, Version: whole.GetVersion(), LayoutEtag: want.Etag, AvailabilityCount: 28,
		Decks: want.Decks, Features: want.Features}, &whole), "the whole map on the fast path: %s", a.body)
	require.EqualValues(t, 2, whole.GetAvailability()[0]&3, "the supervisor's seat (the first) is shown taken")
	require.Zero(t, whole.GetAvailability()[0]>>2, "the others are free")
	// The Connect GET of the site's client answers the same drawing.
	m, err := buyer.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: show.GetShowId()}))
	require.NoError(t, err)
	require.True(t, proto.Equal(want.Sections[0], m.Msg.GetSections()[0]))
	require.True(t, proto.Equal(want.Features[0], m.Msg.GetFeatures()[0]))
}

// TestCreateShowLayouts (decision 0370): a show's places are given one
// way — the old sections (straight rows, without positions), a layout with
// positions and kinds (a venue's curved rows), or a template — and a
// layout that cannot be drawn or sold is refused on the field at fault.
func TestCreateShowLayouts(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 1})
	ctx := context.Background()
	admin := as(t, env, "admin", auth.RoleAdmin)
	user := as(t, env, "rumana", auth.RoleUser)

	t.Run("sections become straight rows", func(t *testing.T) {
		show := createShow(t, env, seatedShow("straight", 2, 3))
		l, err := user.seatmap.GetSeatLayout(ctx, connect.NewRequest(&seatmapv1.GetSeatLayoutRequest{ShowId: show.GetShowId()}))
		require.NoError(t, err)
		row := l.Msg.GetSections()[0].GetRows()[1]
		require.Equal(t, []string{"B1", "B2", "B3"}, row.GetSeats())
		// Straight rows carry no positions: the venue map packs them to
		// the screen, the bus map draws them in rows (decision 0374).
		require.Empty(t, row.GetX())
		require.Empty(t, row.GetY())
		require.Empty(t, row.GetKinds(), "every seat ordinary")
		require.True(t, proto.Equal(&catalogv1.Deck{Width: 30, Height: 20}, l.Msg.GetDecks()[0]))
	})

	t.Run("a venue with curved rows and a wheelchair place", func(t *testing.T) {
		req := seatedShow("curved", 1, 1)
		req.Sections = nil
		req.Layout = &catalogv1.Layout{
			Sections: []*catalogv1.LayoutSection{{Name: "Arc", NameBn: "বাঁক", PriceMinor: 50000, Rows: []*catalogv1.LayoutRow{
				{Label: "A", Seats: []*catalogv1.LayoutSeat{{Seat: "A1", X: 20, Y: 40}, {Seat: "A2", X: 35, Y: 30},
					{Seat: "A3", X: 50, Y: 27}, {Seat: "A4", X: 65, Y: 30}, {Seat: "A5", X: 80, Y: 40, Kind: catalogv1.SeatKind_SEAT_KIND_WHEELCHAIR}}},
			}}},
			Features: []*catalogv1.LayoutFeature{{Kind: catalogv1.FeatureKind_FEATURE_KIND_STAGE, X: 50, Y: 5, Width: 60, Height: 10, Label: "Stage", LabelBn: "মঞ্চ"}},
		}
		show := createShow(t, env, req)
		require.EqualValues(t, 5, show.GetSeatCount())
		require.Equal(t, []*catalogv1.Section{{Name: "Arc", NameBn: "বাঁক", Rows: []string{"A"}, SeatsPerRow: 5, PriceMinor: 50000}}, show.GetSections(),
			"the show's sections summarise the layout")
		l, err := user.seatmap.GetSeatLayout(ctx, connect.NewRequest(&seatmapv1.GetSeatLayoutRequest{ShowId: show.GetShowId()}))
		require.NoError(t, err)
		row := l.Msg.GetSections()[0].GetRows()[0]
		require.Equal(t, []int32{20, 35, 50, 65, 80}, row.GetX())
		require.Equal(t, []int32{40, 30, 27, 30, 40}, row.GetY())
		require.Equal(t, catalogv1.SeatKind_SEAT_KIND_WHEELCHAIR, row.GetKinds()[4])
		require.True(t, proto.Equal(&catalogv1.Deck{Width: 85, Height: 45}, l.Msg.GetDecks()[0]), "a deck of what is on it")
		require.Equal(t, "মঞ্চ", l.Msg.GetFeatures()[0].GetLabelBn())
		// A wheelchair place sells as any seat.
		_, err = user.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show.GetShowId(), Seats: []string{"A5"}}))
		require.NoError(t, err)
	})

	seat := func(id string, x, y int32) *catalogv1.LayoutSeat { return &catalogv1.LayoutSeat{Seat: id, X: x, Y: y} }
	layoutOf := func(sections ...*catalogv1.LayoutSection) *catalogv1.Layout {
		return &catalogv1.Layout{Sections: sections}
	}
	section := func(name string, deck int32, rows ...*catalogv1.LayoutRow) *catalogv1.LayoutSection {
		return &catalogv1.LayoutSection{Name: name, Deck: deck, PriceMinor: 100, Rows: rows}
	}
	row := func(label string, seats ...*catalogv1.LayoutSeat) *catalogv1.LayoutRow {
		return &catalogv1.LayoutRow{Label: label, Seats: seats}
	}
	for _, tt := range []struct {
		name string
		set  func(*catalogv1.CreateShowRequest)
		want refusal
	}{
		{"sections and a layout", func(r *catalogv1.CreateShowRequest) {
			r.Layout = layoutOf(section("S", 0, row("A", seat("A1", 5, 5))))
		}, refusal{code: connect.CodeInvalidArgument, reason: "SHOW_INVALID", fields: []string{"layout"}}},
		{"a seat id twice", func(r *catalogv1.CreateShowRequest) {
			r.Sections, r.Layout = nil, layoutOf(section("S", 0, row("A", seat("A1", 5, 5)), row("B", seat("A1", 5, 15))))
		}, refusal{code: connect.CodeInvalidArgument, reason: "SHOW_INVALID", fields: []string{"layout.sections[0].rows[1].seats[0].seat"}}},
		{"a row label twice", func(r *catalogv1.CreateShowRequest) {
			r.Sections, r.Layout = nil, layoutOf(section("S", 0, row("A", seat("A1", 5, 5))), section("T", 0, row("A", seat("A2", 5, 15))))
		}, refusal{code: connect.CodeInvalidArgument, reason: "SHOW_INVALID", fields: []string{"layout.sections[1].rows[0].label"}}},
		{"a deck the layout has not", func(r *catalogv1.CreateShowRequest) {
			r.Sections, r.Layout = nil, layoutOf(section("S", 1, row("A", seat("A1", 5, 5))))
		}, refusal{code: connect.CodeInvalidArgument, reason: "SHOW_INVALID", fields: []string{"layout.sections[0].deck"}}},
		{"a place outside its deck", func(r *catalogv1.CreateShowRequest) {
			r.Sections, r.Layout = nil, layoutOf(section("S", 0, row("A", seat("A1", 5, 5), seat("A2", 95, 5))))
			r.Layout.Decks = []*catalogv1.Deck{{Width: 50, Height: 20}}
		}, refusal{code: connect.CodeInvalidArgument, reason: "SHOW_INVALID", fields: []string{"layout.sections[0].rows[0].seats[1].x"}}},
		{"two places at one spot", func(r *catalogv1.CreateShowRequest) {
			r.Sections, r.Layout = nil, layoutOf(section("S", 0, row("A", seat("A1", 5, 5), seat("A2", 5, 5))))
		}, refusal{code: connect.CodeInvalidArgument, reason: "SHOW_INVALID", fields: []string{"layout.sections[0].rows[0].seats[1].x"}}},
		{"a seat id the API does not take", func(r *catalogv1.CreateShowRequest) {
			r.Sections, r.Layout = nil, layoutOf(section("S", 0, row("A", seat("a-1", 5, 5))))
		}, refusal{code: connect.CodeInvalidArgument, reason: "INVALID_ARGUMENT", fields: []string{"layout.sections[0].rows[0].seats[0].seat"}}},
		{"an unknown template", func(r *catalogv1.CreateShowRequest) {
			r.Sections, r.LayoutTemplateId = nil, "coach-9x9-99"
		}, refusal{code: connect.CodeNotFound, reason: "LAYOUT_TEMPLATE_NOT_FOUND", fields: []string{"layout_template_id"}}},
		{"section prices without a template", func(r *catalogv1.CreateShowRequest) {
			r.SectionPrices = []*catalogv1.SectionPrice{{Section: "Main", PriceMinor: 100}}
		}, refusal{code: connect.CodeInvalidArgument, reason: "SHOW_INVALID", fields: []string{"section_prices"}}},
		{"a price of a section the template has not", func(r *catalogv1.CreateShowRequest) {
			r.Sections, r.LayoutTemplateId = nil, "coach-2x2-40"
			r.SectionPrices = []*catalogv1.SectionPrice{{Section: "Balcony", PriceMinor: 100}}
		}, refusal{code: connect.CodeInvalidArgument, reason: "SHOW_INVALID", fields: []string{"section_prices[0].section"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := seatedShow(tt.name, 1, 4)
			tt.set(req)
			_, err := admin.catalog.CreateShow(ctx, connect.NewRequest(req))
			got := refusalOf(t, err)
			require.Equal(t, tt.want, got, "%v", err)
		})
	}
}

// TestLayoutTemplatesOfAnOrganization (decision 0372): an organisation's
// managers (and admins) keep its layout templates by RPC — checked as a
// show's layout is, their ids their own and no shipped template's — list
// them after the shipped ones, and make shows from them; nobody else reads
// or writes them.
func TestLayoutTemplatesOfAnOrganization(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 1})
	ctx := context.Background()
	manager := busOrganization(t, env, "shyamoli", "karim")
	busOrganization(t, env, "hanif", "jamal")
	other := as(t, env, "jamal", auth.RoleOperator)
	buyer := as(t, env, "rumana", auth.RoleUser)

	mini := &catalogv1.LayoutTemplate{TemplateId: "mini-2x1-9", OrganizationId: "shyamoli", Name: "Minibus 2+1", NameBn: "মিনিবাস ২+১",
		Layout: &catalogv1.Layout{
			Sections: []*catalogv1.LayoutSection{{Name: "Economy", NameBn: "ইকোনমি", SeatClass: "economy", PriceMinor: 40000,
				Rows: []*catalogv1.LayoutRow{
					{Label: "A", Seats: []*catalogv1.LayoutSeat{{Seat: "A1", X: 5, Y: 25, Kind: catalogv1.SeatKind_SEAT_KIND_WOMEN}, {Seat: "A2", X: 25, Y: 25}, {Seat: "A3", X: 35, Y: 25}}},
					{Label: "B", Seats: []*catalogv1.LayoutSeat{{Seat: "B1", X: 5, Y: 37}, {Seat: "B2", X: 25, Y: 37}, {Seat: "B3", X: 35, Y: 37}}},
					{Label: "C", Seats: []*catalogv1.LayoutSeat{{Seat: "C1", X: 5, Y: 49}, {Seat: "C2", X: 25, Y: 49}, {Seat: "C3", X: 35, Y: 49}}},
				}}},
			Features: []*catalogv1.LayoutFeature{{Kind: catalogv1.FeatureKind_FEATURE_KIND_DRIVER, X: 33, Y: 8, Width: 12, Height: 10},
				{Kind: catalogv1.FeatureKind_FEATURE_KIND_DOOR, X: 3, Y: 8, Width: 4, Height: 12}},
		}}
	created, err := manager.catalog.CreateLayoutTemplate(ctx, connect.NewRequest(&catalogv1.CreateLayoutTemplateRequest{Template: mini}))
	require.NoError(t, err)
	require.NotNil(t, created.Msg.GetTemplate().GetCreatedAt())
	require.True(t, proto.Equal(&catalogv1.Deck{Width: 40, Height: 54}, created.Msg.GetTemplate().GetLayout().GetDecks()[0]), "a deck of what is on it")

	for _, tt := range []struct {
		name string
		c    clients
		tpl  func() *catalogv1.LayoutTemplate
		want refusal
	}{
		{"the same id again", manager, func() *catalogv1.LayoutTemplate { return mini },
			refusal{code: connect.CodeAlreadyExists, reason: "LAYOUT_TEMPLATE_EXISTS"}},
		{"a shipped template's id", manager, func() *catalogv1.LayoutTemplate {
			t := proto.CloneOf(mini)
			t.TemplateId = "coach-2x2-40"
			return t
		}, refusal{code: connect.CodeAlreadyExists, reason: "LAYOUT_TEMPLATE_EXISTS"}},
		{"another organisation's manager", other, func() *catalogv1.LayoutTemplate {
			t := proto.CloneOf(mini)
			t.TemplateId = "mini-2"
			return t
		}, refusal{code: connect.CodePermissionDenied, reason: "LAYOUT_TEMPLATE_FORBIDDEN"}},
		{"a buyer", buyer, func() *catalogv1.LayoutTemplate { return mini },
			refusal{code: connect.CodePermissionDenied, reason: "PERMISSION_DENIED"}},
		{"no seats", manager, func() *catalogv1.LayoutTemplate {
			t := proto.CloneOf(mini)
			t.TemplateId, t.Layout.Sections = "empty", nil
			return t
		}, refusal{code: connect.CodeInvalidArgument, reason: "LAYOUT_TEMPLATE_INVALID", fields: []string{"template.layout"}}},
		{"a seat twice", manager, func() *catalogv1.LayoutTemplate {
			t := proto.CloneOf(mini)
			t.TemplateId = "twice"
			t.Layout.Sections[0].Rows[2].Seats[0].Seat = "B1"
			return t
		}, refusal{code: connect.CodeInvalidArgument, reason: "LAYOUT_TEMPLATE_INVALID", fields: []string{"template.layout.sections[0].rows[2].seats[0].seat"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.c.catalog.CreateLayoutTemplate(ctx, connect.NewRequest(&catalogv1.CreateLayoutTemplateRequest{Template: tt.tpl()}))
			require.Equal(t, tt.want, refusalOf(t, err), "%v", err)
		})
	}

	list, err := manager.catalog.ListLayoutTemplates(ctx, connect.NewRequest(&catalogv1.ListLayoutTemplatesRequest{OrganizationId: "shyamoli"}))
	require.NoError(t, err)
	require.Len(t, list.Msg.GetTemplates(), 4)
	require.Equal(t, "mini-2x1-9", list.Msg.GetTemplates()[3].GetTemplateId(), "the organisation's after the shipped ones")
	_, err = other.catalog.ListLayoutTemplates(ctx, connect.NewRequest(&catalogv1.ListLayoutTemplatesRequest{OrganizationId: "shyamoli"}))
	require.Equal(t, "LAYOUT_TEMPLATE_FORBIDDEN", refusalOf(t, err).reason)
	_, err = other.catalog.GetLayoutTemplate(ctx, connect.NewRequest(&catalogv1.GetLayoutTemplateRequest{OrganizationId: "shyamoli", TemplateId: "mini-2x1-9"}))
	require.Equal(t, "LAYOUT_TEMPLATE_FORBIDDEN", refusalOf(t, err).reason)
	_, err = manager.catalog.GetLayoutTemplate(ctx, connect.NewRequest(&catalogv1.GetLayoutTemplateRequest{OrganizationId: "shyamoli", TemplateId: "nope"}))
	require.Equal(t, refusal{code: connect.CodeNotFound, reason: "LAYOUT_TEMPLATE_NOT_FOUND"}, refusalOf(t, err))

	// Two trips made from it: a chart reused by many shows. Another
	// organisation's show cannot use it.
	for range 2 {
		_, err = manager.catalog.CreateShow(ctx, connect.NewRequest(busTrip("shyamoli", "mini-2x1-9")))
		require.NoError(t, err)
	}
	trip, err := manager.catalog.CreateShow(ctx, connect.NewRequest(busTrip("shyamoli", "mini-2x1-9")))
	require.NoError(t, err)
	require.EqualValues(t, 9, trip.Msg.GetShow().GetSeatCount())
	l, err := buyer.seatmap.GetSeatLayout(ctx, connect.NewRequest(&seatmapv1.GetSeatLayoutRequest{ShowId: trip.Msg.GetShow().GetShowId()}))
	require.NoError(t, err)
	require.Equal(t, catalogv1.SeatKind_SEAT_KIND_WOMEN, l.Msg.GetSections()[0].GetRows()[0].GetKinds()[0])
	require.Len(t, l.Msg.GetFeatures(), 2)
	_, err = other.catalog.CreateShow(ctx, connect.NewRequest(busTrip("hanif", "mini-2x1-9")))
	require.Equal(t, "LAYOUT_TEMPLATE_NOT_FOUND", refusalOf(t, err).reason)
}

// TestLayoutTemplateUpdatedLeavesItsShows (decision 0466): a manager
// changes her organisation's chart (a fourth row, a new name): it reads as
// changed, a show made from it before keeps its nine seats, a show made
// after has twelve; the audit log says the seats before and after, once
// (the same again records nothing). A shipped template, another
// organisation's manager, a buyer and a chart that does not exist are
// refused, and a bad layout is refused on its field.
func TestLayoutTemplateUpdatedLeavesItsShows(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 1})
	ctx := context.Background()
	manager := busOrganization(t, env, "shyamoli", "karim")
	busOrganization(t, env, "hanif", "jamal")
	row := func(label string, y int32) *catalogv1.LayoutRow {
		return &catalogv1.LayoutRow{Label: label, Seats: []*catalogv1.LayoutSeat{{Seat: label + "1", X: 5, Y: y}, {Seat: label + "2", X: 25, Y: y}, {Seat: label + "3", X: 35, Y: y}}}
	}
	mini := &catalogv1.LayoutTemplate{TemplateId: "mini", OrganizationId: "shyamoli", Name: "Minibus", Layout: &catalogv1.Layout{
		Sections: []*catalogv1.LayoutSection{{Name: "Economy", PriceMinor: 40000, Rows: []*catalogv1.LayoutRow{row("A", 25), row("B", 37), row("C", 49)}}}}}
	_, err := manager.catalog.CreateLayoutTemplate(ctx, connect.NewRequest(&catalogv1.CreateLayoutTemplateRequest{Template: mini}))
	require.NoError(t, err)
	before, err := manager.catalog.CreateShow(ctx, connect.NewRequest(busTrip("shyamoli", "mini")))
	require.NoError(t, err)

	longer := proto.CloneOf(mini)
	longer.Name, longer.NameBn = "Minibus, four rows", "মিনিবাস, চার সারি"
	longer.Layout.Sections[0].Rows = append(longer.Layout.Sections[0].Rows, row("D", 61))
	for range 2 { // the same again changes nothing
		got, err := manager.catalog.UpdateLayoutTemplate(ctx, connect.NewRequest(&catalogv1.UpdateLayoutTemplateRequest{Template: longer}))
		require.NoError(t, err)
		require.Equal(t, "Minibus, four rows", got.Msg.GetTemplate().GetName())
	}
	read, err := manager.catalog.GetLayoutTemplate(ctx, connect.NewRequest(&catalogv1.GetLayoutTemplateRequest{OrganizationId: "shyamoli", TemplateId: "mini"}))
	require.NoError(t, err)
	require.Len(t, read.Msg.GetTemplate().GetLayout().GetSections()[0].GetRows(), 4)
	require.Equal(t, "মিনিবাস, চার সারি", read.Msg.GetTemplate().GetNameBn())
	after, err := manager.catalog.CreateShow(ctx, connect.NewRequest(busTrip("shyamoli", "mini")))
	require.NoError(t, err)
	require.EqualValues(t, 12, after.Msg.GetShow().GetSeatCount(), "a show made now takes the new chart")
	kept, err := manager.catalog.GetShow(ctx, connect.NewRequest(&catalogv1.GetShowRequest{ShowId: before.Msg.GetShow().GetShowId()}))
	require.NoError(t, err)
	require.EqualValues(t, 9, kept.Msg.GetShow().GetSeatCount(), "a show made before keeps its chart")

	entries, err := manager.catalog.ListAuditEntries(ctx, connect.NewRequest(&catalogv1.ListAuditEntriesRequest{
		OrganizationId: "shyamoli", Action: "layout_template.update"}))
	require.NoError(t, err)
	require.Len(t, entries.Msg.GetEntries(), 1, "the same again records nothing")
	detail := entries.Msg.GetEntries()[0].GetDetail().AsMap()
	require.EqualValues(t, 9, detail["before"].(map[string]any)["seats"])
	require.EqualValues(t, 12, detail["after"].(map[string]any)["seats"])

	for _, tt := range []struct {
		name string
		c    clients
		tpl  func() *catalogv1.LayoutTemplate
		want refusal
	}{
		{"a shipped template", manager, func() *catalogv1.LayoutTemplate {
			t := proto.CloneOf(longer)
			t.TemplateId = "coach-2x2-40"
			return t
		}, refusal{code: connect.CodePermissionDenied, reason: "LAYOUT_TEMPLATE_FORBIDDEN"}},
		{"another organisation's manager", as(t, env, "jamal", auth.RoleOperator), func() *catalogv1.LayoutTemplate { return longer },
			refusal{code: connect.CodePermissionDenied, reason: "LAYOUT_TEMPLATE_FORBIDDEN"}},
		{"a buyer", as(t, env, "rumana", auth.RoleUser), func() *catalogv1.LayoutTemplate { return longer },
			refusal{code: connect.CodePermissionDenied, reason: "PERMISSION_DENIED"}},
		{"no such chart", manager, func() *catalogv1.LayoutTemplate {
			t := proto.CloneOf(longer)
			t.TemplateId = "nope"
			return t
		}, refusal{code: connect.CodeNotFound, reason: "LAYOUT_TEMPLATE_NOT_FOUND"}},
		{"a seat twice", manager, func() *catalogv1.LayoutTemplate {
			t := proto.CloneOf(longer)
			t.Layout.Sections[0].Rows[3].Seats[0].Seat = "A1"
			return t
		}, refusal{code: connect.CodeInvalidArgument, reason: "LAYOUT_TEMPLATE_INVALID", fields: []string{"template.layout.sections[0].rows[3].seats[0].seat"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.c.catalog.UpdateLayoutTemplate(ctx, connect.NewRequest(&catalogv1.UpdateLayoutTemplateRequest{Template: tt.tpl()}))
			require.Equal(t, tt.want, refusalOf(t, err), "%v", err)
		})
	}
	read, err = manager.catalog.GetLayoutTemplate(ctx, connect.NewRequest(&catalogv1.GetLayoutTemplateRequest{OrganizationId: "shyamoli", TemplateId: "mini"}))
	require.NoError(t, err)
	require.Len(t, read.Msg.GetTemplate().GetLayout().GetSections()[0].GetRows(), 4, "a refused change wrote nothing")
}

// TestWomenAndBlockedSeatsThroughTheAPI (decision 0371): a seat for women
// is held only with its passenger declared a woman (women_seats), which the
// hold keeps and answers; a blocked seat never; the declaration names asked
// seats only; and the order's passenger of a seat for women must be
// declared a woman when passengers are given.
func TestWomenAndBlockedSeatsThroughTheAPI(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 1})
	ctx := context.Background()
	manager := busOrganization(t, env, "greenline", "rahim")
	created, err := manager.catalog.CreateShow(ctx, connect.NewRequest(busTrip("greenline", "coach-2x1-27")))
	require.NoError(t, err)
	show := created.Msg.GetShow().GetShowId()
	buyer := as(t, env, "shirin", auth.RoleUser)
	hold := func(c clients, seats, women []string) (*bookingv1.Hold, error) {
		r, err := c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: seats, WomenSeats: women}))
		if err != nil {
			return nil, err
		}
		return r.Msg.GetHold(), nil
	}

	for _, tt := range []struct {
		name         string
		seats, women []string
		want         refusal
	}{
		{"a seat for women undeclared", []string{"A1"}, nil,
			refusal{code: connect.CodeInvalidArgument, reason: "WOMEN_SEAT_UNDECLARED", fields: []string{"women_seats"}, seats: []string{"A1"}}},
		{"a seat for women undeclared with another declared", []string{"A2", "B1"}, []string{"A2"},
			refusal{code: connect.CodeInvalidArgument, reason: "WOMEN_SEAT_UNDECLARED", fields: []string{"women_seats"}, seats: []string{"B1"}}},
		{"the supervisor's seat", []string{"S1"}, nil,
			refusal{code: connect.CodeFailedPrecondition, reason: "SEATS_BLOCKED", fields: []string{"seats"}, seats: []string{"S1"}}},
		{"the supervisor's seat declared", []string{"S1", "A1"}, []string{"S1", "A1"},
			refusal{code: connect.CodeFailedPrecondition, reason: "SEATS_BLOCKED", fields: []string{"seats"}, seats: []string{"S1"}}},
		{"a declaration of a seat not asked for", []string{"A2"}, []string{"A1"},
			refusal{code: connect.CodeInvalidArgument, reason: "BOOKING_INVALID", fields: []string{"women_seats"}}},
		{"a declaration that is no seat id", []string{"A2"}, []string{"a1"},
			refusal{code: connect.CodeInvalidArgument, reason: "INVALID_ARGUMENT", fields: []string{"women_seats[0]"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := hold(buyer, tt.seats, tt.women)
			require.Equal(t, tt.want, refusalOf(t, err), "%v", err)
		})
	}

	// Declared, held: the hold keeps the declaration, in layout order.
	h, err := hold(buyer, []string{"B1", "A1", "A2"}, []string{"A1", "B1"})
	require.NoError(t, err)
	require.Equal(t, []string{"A1", "A2", "B1"}, h.GetSeats())
	require.Equal(t, []string{"A1", "B1"}, h.GetWomenSeats())
	read, err := buyer.holds.GetHold(ctx, connect.NewRequest(&bookingv1.GetHoldRequest{HoldId: h.GetHoldId()}))
	require.NoError(t, err)
	require.Equal(t, []string{"A1", "B1"}, read.Msg.GetHold().GetWomenSeats())
	mine, err := buyer.holds.ListMyHolds(ctx, connect.NewRequest(&bookingv1.ListMyHoldsRequest{ShowId: &show}))
	require.NoError(t, err)
	require.Equal(t, []string{"A1", "B1"}, mine.Msg.GetHolds()[0].GetWomenSeats())
	// The map shows the supervisor's seat taken, always.
	m, err := buyer.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: show}))
	require.NoError(t, err)
	require.EqualValues(t, 2, m.Msg.GetAvailability()[0]&3)

	// The order: passengers who do not match the declaration are refused;
	// then matching ones are taken.
	passengers := func(womanA1, womanB1 bool) []*commonv1.Passenger {
		return []*commonv1.Passenger{{Seat: "A1", Name: "Shirin Akter", Phone: "01711234567", Woman: womanA1},
			{Seat: "A2", Name: "Kamal Hossain", Phone: "01811234567"},
			{Seat: "B1", Name: "Nasrin Akter", Phone: "01911234567", Woman: womanB1}}
	}
	_, err = buyer.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: h.GetHoldId(), Passengers: passengers(true, false)}))
	require.Equal(t, refusal{code: connect.CodeInvalidArgument, reason: "WOMEN_SEAT_UNDECLARED", fields: []string{"passengers"}, seats: []string{"B1"}},
		refusalOf(t, err), "%v", err)
	_, err = buyer.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: h.GetHoldId(), Passengers: passengers(true, true)[:2]}))
	require.Equal(t, []string{"B1"}, refusalOf(t, err).seats, "a seat for women without its passenger")
	o, err := buyer.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: h.GetHoldId(), Passengers: passengers(true, true)}))
	require.NoError(t, err)
	require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_PENDING_PAYMENT, o.Msg.GetOrder().GetStatus())

	// Without passengers the hold's declaration stands.
	other := as(t, env, "nasima", auth.RoleUser)
	h2, err := hold(other, []string{"C1"}, []string{"C1"})
	require.NoError(t, err)
	require.Equal(t, []string{"C1"}, h2.GetWomenSeats(), "a passenger declared a woman on an ordinary seat")
	_, err = other.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: h2.GetHoldId(),
		Passengers: []*commonv1.Passenger{{Seat: "C1", Name: "Nasima", Phone: "01711234568"}}}))
	require.NoError(t, err, "an ordinary seat's passenger need not be declared")
}
