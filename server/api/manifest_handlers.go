package api

import (
	"context"
	"fmt"
	"log/slog"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	ticketsv1 "github.com/seatghor/seatghor/gen/seatghor/tickets/v1"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/display"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/ticket"
)

// manifestHandler serves ManifestService: the trip's manifest and its
// no-shows (decision 0442), with the gate's callers.
type manifestHandler struct {
	checkIn *ticket.Service
	// pdf prints a manifest (Config.ManifestPDF); nil: only CSV.
	pdf ManifestPrinter
	log *slog.Logger
}

// ManifestPrinter lays a trip's manifest out as a PDF to print, in lang
// (eticket.RenderManifest with the show read from the catalog).
type ManifestPrinter func(ctx context.Context, m ticket.Manifest, lang display.Lang) ([]byte, error)

func (h *manifestHandler) error(ctx context.Context, err error) error {
	return toConnect(ctx, h.log, err)
}

// GetManifest answers a trip's manifest.
func (h *manifestHandler) GetManifest(ctx context.Context, req *connect.Request[ticketsv1.GetManifestRequest]) (*connect.Response[ticketsv1.GetManifestResponse], error) {
	p, ok := auth.FromContext(ctx)
	if !ok {
		return nil, errNotSignedIn
	}
	m, err := h.checkIn.Manifest(ctx, gateCaller(p), req.Msg.GetShowId(), req.Msg.GetStopId())
	if err != nil {
		return nil, h.error(ctx, err)
	}
	resp := &ticketsv1.GetManifestResponse{Expected: int32(m.Expected), Boarded: int32(m.Boarded), NoShows: int32(m.NoShow),
		ServerTime: timestamppb.New(m.ServerTime), Entries: make([]*ticketsv1.ManifestEntry, 0, len(m.Entries))}
	for _, e := range m.Entries {
		resp.Entries = append(resp.Entries, manifestEntryProto(e))
	}
	res := connect.NewResponse(resp)
	res.Header().Set("Cache-Control", "private, no-store") // passengers' numbers
	return res, nil
}

// MarkNoShow records a passenger who did not board (decision 0442).
func (h *manifestHandler) MarkNoShow(ctx context.Context, req *connect.Request[ticketsv1.MarkNoShowRequest]) (*connect.Response[ticketsv1.MarkNoShowResponse], error) {
	p, ok := auth.FromContext(ctx)
	if !ok {
		return nil, errNotSignedIn
	}
	e, err := h.checkIn.MarkNoShow(ctx, gateCaller(p), req.Msg.GetShowId(), req.Msg.GetTicketId())
	if err != nil {
		return nil, h.error(ctx, err)
	}
	return connect.NewResponse(&ticketsv1.MarkNoShowResponse{Entry: manifestEntryProto(e)}), nil
}

// ExportManifest answers the manifest as a CSV file.
func (h *manifestHandler) ExportManifest(ctx context.Context, req *connect.Request[ticketsv1.ExportManifestRequest]) (*connect.Response[ticketsv1.ExportManifestResponse], error) {
	p, ok := auth.FromContext(ctx)
	if !ok {
		return nil, errNotSignedIn
	}
	m, err := h.checkIn.Manifest(ctx, gateCaller(p), req.Msg.GetShowId(), "")
	if err != nil {
		return nil, h.error(ctx, err)
	}
	lang := display.ParseLang(req.Msg.GetLanguage())
	if req.Msg.GetFormat() == "pdf" {
		if h.pdf == nil {
			return nil, h.error(ctx, fault.New(fault.NotServed, "manifests are not printed here"))
		}
		data, err := h.pdf(ctx, m, lang)
		if err != nil {
			return nil, h.error(ctx, err)
		}
		res := connect.NewResponse(&ticketsv1.ExportManifestResponse{Filename: fmt.Sprintf("manifest-%d-%s.pdf", m.ShowID, lang),
			ContentType: "application/pdf", Data: data})
		res.Header().Set("Cache-Control", "private, no-store")
		return res, nil
	}
	data, err := ticket.ManifestCSV(m, lang)
	if err != nil {
		return nil, h.error(ctx, err)
	}
	res := connect.NewResponse(&ticketsv1.ExportManifestResponse{Filename: fmt.Sprintf("manifest-%d-%s.csv", m.ShowID, lang),
		ContentType: "text/csv; charset=utf-8", Data: data})
	res.Header().Set("Cache-Control", "private, no-store")
	return res, nil
}

var boardingStatuses = map[ticket.Boarding]ticketsv1.BoardingStatus{
	ticket.Expected: ticketsv1.BoardingStatus_BOARDING_STATUS_EXPECTED,
	ticket.Boarded:  ticketsv1.BoardingStatus_BOARDING_STATUS_BOARDED,
	ticket.NoShow:   ticketsv1.BoardingStatus_BOARDING_STATUS_NO_SHOW,
}

var salesChannels = map[ticket.Channel]ticketsv1.SalesChannel{
	ticket.ChannelWeb:     ticketsv1.SalesChannel_SALES_CHANNEL_WEB,
	ticket.ChannelPartner: ticketsv1.SalesChannel_SALES_CHANNEL_PARTNER,
	ticket.ChannelCounter: ticketsv1.SalesChannel_SALES_CHANNEL_COUNTER,
}

func manifestEntryProto(e ticket.ManifestEntry) *ticketsv1.ManifestEntry {
	m := &ticketsv1.ManifestEntry{TicketId: e.TicketID, OrderId: e.OrderID, Seat: e.Seat, GaArea: e.GAArea,
		PassengerName: e.Passenger, Phone: e.Phone, Woman: e.Woman, Journey: e.Journey, Channel: salesChannels[e.Channel],
		PartnerId: e.PartnerID, Status: boardingStatuses[e.Status], BoardedGate: e.Gate, ReleasedLegs: int32(e.ReleasedLegs)}
	if !e.BoardedAt.IsZero() {
		m.BoardedAt = timestamppb.New(e.BoardedAt)
	}
	if !e.CounterFirstUntil.IsZero() {
		m.CounterFirstUntil = timestamppb.New(e.CounterFirstUntil)
	}
	if !e.NoShowAt.IsZero() {
		m.NoShowAt = timestamppb.New(e.NoShowAt)
	}
	return m
}
