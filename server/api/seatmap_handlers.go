package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"maps"
	"net/http"
	"strings"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	seatmapv1 "github.com/seatghor/seatghor/gen/seatghor/seatmap/v1"
	"github.com/seatghor/seatghor/server/booking"
)

// SeatMapReader answers a show's seat map: the Redis read model
// (projections/seatmap) or, without one, booking reading the shard.
type SeatMapReader interface {
	SeatMap(ctx context.Context, showID int64) (booking.SeatMap, error)
}

type seatmapHandler struct {
	maps SeatMapReader
	log  *slog.Logger
}

func newSeatmapHandler(cfg Config) *seatmapHandler {
	var maps SeatMapReader = cfg.Booking
	if cfg.SeatMaps != nil {
		maps = cfg.SeatMaps
	}
	return &seatmapHandler{maps: maps, log: cfg.Log}
}

func (h *seatmapHandler) GetSeatMap(ctx context.Context, req *connect.Request[seatmapv1.GetSeatMapRequest]) (*connect.Response[seatmapv1.GetSeatMapResponse], error) {
	m, err := h.maps.SeatMap(ctx, req.Msg.GetShowId())
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	layout := layoutProto(m)
	resp := &seatmapv1.GetSeatMapResponse{ShowId: m.ShowID, Currency: m.Currency, Availability: m.States,
		SeatCount: int32(m.SeatCount), Version: m.Version, Sections: layout.Sections, LayoutEtag: layout.Etag}
	for _, a := range m.GAAreas {
		resp.GaAreas = append(resp.GaAreas, &seatmapv1.GaArea{Name: a.Name, Capacity: int32(a.Capacity),
			Remaining: int32(a.Remaining), PriceMinor: a.PriceMinor})
	}
	res := connect.NewResponse(resp)
	// a second-old availability is fine, so an edge may share it
	// for a second (GET requests: the RPC has no side effects).
	res.Header().Set("Cache-Control", "public, max-age=1")
	return res, nil
}

func (h *seatmapHandler) GetSeatLayout(ctx context.Context, req *connect.Request[seatmapv1.GetSeatLayoutRequest]) (*connect.Response[seatmapv1.GetSeatLayoutResponse], error) {
	m, err := h.maps.SeatMap(ctx, req.Msg.GetShowId())
	if err != nil {
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

// layoutProto is the static part of m, with its etag: a hash of the
// layout's deterministic encoding, so it changes exactly when the layout
// does.
func layoutProto(m booking.SeatMap) *seatmapv1.GetSeatLayoutResponse {
	l := &seatmapv1.GetSeatLayoutResponse{ShowId: m.ShowID, Currency: m.Currency, SeatCount: int32(m.SeatCount)}
	for _, s := range m.Sections {
		sec := &seatmapv1.Section{Name: s.Name, PriceMinor: s.PriceMinor}
		for _, r := range s.Rows {
			sec.Rows = append(sec.Rows, &seatmapv1.Row{Label: r.Label, Seats: r.Seats})
		}
		l.Sections = append(l.Sections, sec)
	}
	for _, a := range m.GAAreas {
		l.GaAreas = append(l.GaAreas, &seatmapv1.GaArea{Name: a.Name, Capacity: int32(a.Capacity), PriceMinor: a.PriceMinor})
	}
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(l) // cannot fail: a valid message
	sum := sha256.Sum256(b)
	l.Etag = hex.EncodeToString(sum[:12])
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
