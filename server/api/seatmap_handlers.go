package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"connectrpc.com/connect"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	seatmapv1 "github.com/seatghor/seatghor/gen/seatghor/seatmap/v1"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/fault"
)

// SeatMapReader answers a show's seat map: the Redis read model
// (projections/seatmap) or, without one, booking reading the shard.
type SeatMapReader interface {
	SeatMap(ctx context.Context, showID int64) (booking.SeatMap, error)
}

// ChannelViews reads how a partner's channel sees a show differently from
// the public seat map, which is what SeatMapReader answers (booking.Service
// does; decision 0324).
type ChannelViews interface {
	ChannelView(ctx context.Context, showID, partnerID int64) (booking.ChannelView, error)
}

// CounterViews reads how a counter sees a show in a cash shift: the seats
// a no-show left, the counters' first (counter.Service; decision 0482).
type CounterViews interface {
	SeatView(ctx context.Context, userID, shiftID string, showID int64) (booking.ChannelView, error)
}

type seatmapHandler struct {
	maps     SeatMapReader
	channels ChannelViews
	counters CounterViews
	log      *slog.Logger
}

func newSeatmapHandler(cfg Config) *seatmapHandler {
	var maps SeatMapReader = cfg.Booking
	if cfg.SeatMaps != nil {
		maps = cfg.SeatMaps
	}
	h := &seatmapHandler{maps: maps, channels: cfg.Booking, log: cfg.Log}
	if cfg.Counters != nil {
		h.counters = cfg.Counters
	}
	return h
}

// AvailabilityReader answers the small part of a seat map without its
// layout (projections/seatmap's reader does); without one, the handler
// takes it from the whole map.
type AvailabilityReader interface {
	Availability(ctx context.Context, showID int64) (booking.MapAvailability, error)
}

func (h *seatmapHandler) GetSeatMap(ctx context.Context, req *connect.Request[seatmapv1.GetSeatMapRequest]) (*connect.Response[seatmapv1.GetSeatMapResponse], error) {
	showID, etag, section := req.Msg.GetShowId(), req.Msg.GetLayoutEtag(), req.Msg.GetSection()
	from, to := req.Msg.GetFromStopId(), req.Msg.GetToStopId()
	var whole booking.MapAvailability
	var full *booking.SeatMap
	ar, small := h.maps.(AvailabilityReader)
	if small && etag != "" {
		// the caller may have the layout; read only the small part.
		var err error
		if whole, err = ar.Availability(ctx, showID); err != nil {
			return nil, toConnect(ctx, h.log, err)
		}
	}
	if whole.LayoutETag == "" || !sameLayout(whole, from, to, etag) {
		m, err := h.maps.SeatMap(ctx, showID)
		if err != nil {
			return nil, toConnect(ctx, h.log, err)
		}
		full, whole = &m, m.Availability()
	}
	// The journey the caller asks for (decision 0354): every leg's
	// availability is kept, a buyer sees one journey's.
	f, t, err := whole.JourneyOf(from, to)
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	// The map the read model keeps is the public's; a partner sees its
	// own allocation free and what its channel may not hold taken
	// (decision 0324).
	if p, _ := auth.FromContext(ctx); channelOf(p) != 0 {
		v, err := h.channels.ChannelView(ctx, showID, channelOf(p))
		if err != nil {
			return nil, toConnect(ctx, h.log, err)
		}
		whole = v.Apply(whole)
	}
	if shift := req.Msg.GetCounterShiftId(); shift != "" {
		if h.counters == nil {
			return nil, toConnect(ctx, h.log, fault.New(fault.NotServed, "counters are not served here"))
		}
		p, _ := auth.FromContext(ctx)
		v, err := h.counters.SeatView(ctx, p.UserID, shift, showID)
		if err != nil {
			return nil, toConnect(ctx, h.log, err)
		}
		whole = v.Apply(whole)
	}
	a, err := whole.Journey(f, t)
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	var layout *seatmapv1.GetSeatLayoutResponse
	if full != nil && a.LayoutETag != etag {
		mj, err := full.Journey(f, t)
		if err != nil {
			return nil, toConnect(ctx, h.log, err)
		}
		layout = layoutProto(mj)
	}
	resp, err := seatMapAnswer(a, layout, section)
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	res := connect.NewResponse(resp)
	setSeatMapCaching(res.Header())
	res.Header().Set("ETag", seatMapETag(resp))
	return res, nil
}

// sameLayout says whether etag names the layout of the journey from → to
// of whole (a show without stops: its layout), so availability alone
// answers; a journey the show lacks does not (the whole map's read
// answers it).
func sameLayout(whole booking.MapAvailability, from, to, etag string) bool {
	f, t, err := whole.JourneyOf(from, to)
	if err != nil {
		return false
	}
	a, err := whole.Journey(f, t)
	return err == nil && a.LayoutETag == etag
}

// setSeatMapCaching sets GetSeatMap's cache headers, on the RPC path and
// the fast path alike.: a second-old availability is fine, so the
// caller's own cache may keep it for a second (GET requests: the RPC has no
// side effects) and then revalidates with If-None-Match, getting 304 while
// nothing it asked for moved (notModified, the fast path). Private, not
// public: the read needs a credential, and a shared cache may hand a
// public answer to anyone, even one stored for a request with
// Authorization (RFC 9111 §3.5), so an edge would serve it to callers
// without one (decision 0290); and a partner's answer is its channel's
// (decision 0324).
func setSeatMapCaching(h http.Header) {
	h.Set("Cache-Control", "private, max-age=1")
	h.Add("Vary", "Authorization")
}

// seatMapAnswer is GetSeatMap's answer of a: availability only, or with
// layout's sections and the GA areas' capacities and prices when layout is
// not nil (the caller lacks it); cut to section when one is named (R-12: a
// huge show is read a section at a time). The RPC and the fast path
// (seatmap_fast.go) answer with it alike.
func seatMapAnswer(a booking.MapAvailability, layout *seatmapv1.GetSeatLayoutResponse, section string) (*seatmapv1.GetSeatMapResponse, error) {
	resp := &seatmapv1.GetSeatMapResponse{ShowId: a.ShowID, Currency: a.Currency, Availability: a.States,
		SeatCount: int32(a.SeatCount), Version: a.Version, LayoutEtag: a.LayoutETag,
		AvailabilityCount: int32(a.SeatCount), AvailabilityOnly: layout == nil,
		FromStopId: a.FromStopID, ToStopId: a.ToStopID}
	for _, g := range a.GAAreas {
		ga := &seatmapv1.GaArea{Name: g.Name, Remaining: int32(g.Remaining)}
		if layout != nil {
			ga.Capacity, ga.PriceMinor = int32(g.Capacity), g.PriceMinor
		}
		resp.GaAreas = append(resp.GaAreas, ga)
	}
	if layout != nil {
		resp.Sections, resp.Decks, resp.Features, resp.Stops = layout.Sections, layout.Decks, layout.Features, layout.Stops
	}
	if section != "" {
		i := slices.IndexFunc(a.Sections, func(s booking.SectionSpan) bool { return s.Name == section })
		if i < 0 {
			return nil, fault.OnField(fault.BookingInvalid, "section", "show %d has no section %q", a.ShowID, section)
		}
		span := a.Sections[i]
		resp.Availability = sliceStates(a.States, span.First, span.Count)
		resp.AvailabilityOffset, resp.AvailabilityCount = int32(span.First), int32(span.Count)
		if layout != nil {
			resp.Sections = resp.Sections[i : i+1]
		}
	}
	return resp, nil
}

// seatMapETag names one answer of GetSeatMap: the version and a hash of
// what the answer carries (availability, GA places, which layout and how
// much of it), so it moves with every change the caller would see: a new
// version, and also a hold that lapsed, which changes no version.
func seatMapETag(resp *seatmapv1.GetSeatMapResponse) string {
	ga := make([]int32, len(resp.GetGaAreas()))
	for i, g := range resp.GetGaAreas() {
		ga[i] = g.GetRemaining()
	}
	return answerETag(resp.GetVersion(), resp.GetLayoutEtag(), int(resp.GetAvailabilityOffset()), int(resp.GetAvailabilityCount()),
		resp.GetAvailabilityOnly(), len(resp.GetSections()), resp.GetAvailability(), ga)
}

// answerETag is seatMapETag of an answer given by its parts, so the fast
// path (seatmap_fast.go) names its answers exactly as the RPC does.
func answerETag(version int64, layoutETag string, offset, count int, availabilityOnly bool, sections int,
	states []byte, gaRemaining []int32) string {
	h := sha256.New()
	b := make([]byte, 0, 96)
	b = append(append(b, layoutETag...), ';')
	b = append(strconv.AppendInt(b, int64(offset), 10), ';')
	b = append(strconv.AppendInt(b, int64(count), 10), ';')
	b = append(strconv.AppendBool(b, availabilityOnly), ';')
	b = append(strconv.AppendInt(b, int64(sections), 10), ';')
	h.Write(b)
	h.Write(states)
	b = b[:0]
	for _, r := range gaRemaining {
		b = strconv.AppendInt(append(b, ';'), int64(r), 10)
	}
	h.Write(b)
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	b = append(strconv.AppendInt(append(b[:0], '"'), version, 10), '-')
	b = append(hex.AppendEncode(b, sum[:8]), '"')
	return string(b)
}

// sliceStates returns the 2-bit states of seats first … first+n-1, packed
// four a byte from the lowest bits, as the whole availability is.
func sliceStates(states []byte, first, n int) []byte {
	if first%4 == 0 {
		end := min((first+n+3)/4, len(states))
		out := slices.Clone(states[first/4 : end])
		if r := n % 4; r != 0 && len(out) > 0 {
			out[len(out)-1] &= byte(1<<(2*r)) - 1
		}
		return out
	}
	out := make([]byte, (n+3)/4)
	for i := range n {
		j := first + i
		st := states[j/4] >> (2 * (j % 4)) & 3
		out[i/4] |= st << (2 * (i % 4))
	}
	return out
}

func (h *seatmapHandler) GetSeatLayout(ctx context.Context, req *connect.Request[seatmapv1.GetSeatLayoutRequest]) (*connect.Response[seatmapv1.GetSeatLayoutResponse], error) {
	m, err := h.maps.SeatMap(ctx, req.Msg.GetShowId())
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	// A trip with stops: the layout of one journey, its prices its fares
	// (decision 0354).
	f, t, err := m.JourneyOf(req.Msg.GetFromStopId(), req.Msg.GetToStopId())
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	if m, err = m.Journey(f, t); err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	layout := layoutProto(m)
	res := connect.NewResponse(layout)
	// the layout is the big, static part; a CDN keeps it and
	// revalidates with If-None-Match (answered 304 by notModified).
	res.Header().Set("ETag", `"`+layout.Etag+`"`)
	res.Header().Set("Cache-Control", "public, max-age=3600, stale-while-revalidate=86400")
	return res, nil
}

// layoutProto is the static part of m, with its etag (booking's
// LayoutETag: it changes exactly when the layout does, and the Redis map
// keeps it next to the availability for availability-only answers). m is
// a journey's view on a trip with stops: its prices and etag are the
// journey's, and it names the trip's stops.
func layoutProto(m booking.SeatMap) *seatmapv1.GetSeatLayoutResponse {
	l := &seatmapv1.GetSeatLayoutResponse{ShowId: m.ShowID, Currency: m.Currency, SeatCount: int32(m.SeatCount)}
	for _, s := range m.Sections {
		sec := &seatmapv1.Section{Name: s.Name, PriceMinor: s.PriceMinor, NameBn: s.NameBn, Deck: int32(s.Deck), SeatClass: s.SeatClass}
		for _, r := range s.Rows {
			row := &seatmapv1.Row{Label: r.Label, Seats: r.Seats, X: r.X, Y: r.Y}
			if len(r.Kinds) > 0 {
				row.Kinds = make([]catalogv1.SeatKind, len(r.Kinds))
				for i, k := range r.Kinds {
					row.Kinds[i] = catalogv1.SeatKind(k)
				}
			}
			sec.Rows = append(sec.Rows, row)
		}
		l.Sections = append(l.Sections, sec)
	}
	for _, d := range m.Decks {
		l.Decks = append(l.Decks, d.Proto())
	}
	for _, f := range m.Features {
		l.Features = append(l.Features, f.Proto())
	}
	for _, a := range m.GAAreas {
		l.GaAreas = append(l.GaAreas, &seatmapv1.GaArea{Name: a.Name, Capacity: int32(a.Capacity), PriceMinor: a.PriceMinor})
	}
	if stops := m.Trip.Stops; len(stops) > 0 {
		l.Stops = m.Trip.StopsProto()
		if m.From != m.To {
			l.FromStopId, l.ToStopId = stops[m.From].StopID, stops[m.To].StopID
		}
	}
	l.Etag = m.LayoutETag()
	return l
}

// notModified answers a GET whose If-None-Match names the ETag the handler
// would answer with 304 and no body (RFC 9110 §13.1.2), so edges and
// clients revalidate the seat layout without downloading it again.
func notModified(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inm := r.Header.Get("If-None-Match")
		if r.Method != http.MethodGet || inm == "" {
			next.ServeHTTP(w, r)
			return
		}
		rec := &bufferedResponse{header: http.Header{}, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		maps.Copy(w.Header(), rec.header)
		if etag := rec.header.Get("ETag"); rec.status == http.StatusOK && etag != "" && etagMatches(inm, etag) {
			w.Header().Del("Content-Length")
			w.Header().Del("Content-Type")
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.WriteHeader(rec.status)
		_, _ = w.Write(rec.body.Bytes())
	})
}

func etagMatches(ifNoneMatch, etag string) bool {
	for c := range strings.SplitSeq(ifNoneMatch, ",") {
		c = strings.TrimPrefix(strings.TrimSpace(c), "W/")
		if c == "*" || c == etag {
			return true
		}
	}
	return false
}

// bufferedResponse keeps a response until notModified has seen its ETag.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header         { return b.header }
func (b *bufferedResponse) Write(p []byte) (int, error) { return b.body.Write(p) }
func (b *bufferedResponse) WriteHeader(status int)      { b.status = status }

// Flush is a no-op: vanguard flushes, and the body is sent at the end anyway.
func (b *bufferedResponse) Flush() {}
