package api

import (
	"context"
	"log/slog"

	"connectrpc.com/connect"

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
	resp := &seatmapv1.GetSeatMapResponse{ShowId: m.ShowID, Currency: m.Currency, Availability: m.States,
		SeatCount: int32(m.SeatCount), Version: m.Version}
	for _, s := range m.Sections {
		sec := &seatmapv1.Section{Name: s.Name, PriceMinor: s.PriceMinor}
		for _, r := range s.Rows {
			sec.Rows = append(sec.Rows, &seatmapv1.Row{Label: r.Label, Seats: r.Seats})
		}
		resp.Sections = append(resp.Sections, sec)
	}
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
