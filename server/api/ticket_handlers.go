package api

import (
	"context"
	"log/slog"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	ticketsv1 "github.com/seatghor/seatghor/gen/seatghor/tickets/v1"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/display"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/place"
	"github.com/seatghor/seatghor/server/ticket"
)

// TicketReader answers a user's tickets from the "my tickets" read model
// (projections/mytickets, R-8.3).
type TicketReader interface {
	ListTickets(ctx context.Context, userID string, f ticket.ListFilter) ([]ticket.View, string, error)
	GetTicket(ctx context.Context, userID, ticketID string) (ticket.View, error)
}

// TicketFiles answers where a ticket's e-ticket PDF can be fetched
// (projections/eticket, R-8.5).
type TicketFiles interface {
	Download(ctx context.Context, v ticket.View, lang display.Lang) (ticket.Download, error)
}

type ticketHandler struct {
	tickets TicketReader
	files   TicketFiles
	checkIn *ticket.Service
	now     func() time.Time
	log     *slog.Logger
}

var errNoReadModel = fault.New(fault.NotServed, "my tickets is not available on this server (no read database configured)")

func (h *ticketHandler) ListMyTickets(ctx context.Context, req *connect.Request[ticketsv1.ListMyTicketsRequest]) (*connect.Response[ticketsv1.ListMyTicketsResponse], error) {
	p, ok := auth.FromContext(ctx)
	if !ok {
		return nil, errNotSignedIn
	}
	if h.tickets == nil {
		return nil, errNoReadModel
	}
	list, next, err := h.tickets.ListTickets(ctx, p.UserID, ticket.ListFilter{
		ShowID: req.Msg.GetShowId(), UpcomingOnly: req.Msg.GetUpcomingOnly(), Now: h.now(),
		PageSize: int(req.Msg.GetPageSize()), PageToken: req.Msg.GetPageToken(),
	})
	if err != nil {
		return nil, h.error(ctx, err)
	}
	resp := &ticketsv1.ListMyTicketsResponse{NextPageToken: next}
	for _, t := range list {
		resp.Tickets = append(resp.Tickets, ticketProto(t))
	}
	return connect.NewResponse(resp), nil
}

func (h *ticketHandler) GetTicketDownload(ctx context.Context, req *connect.Request[ticketsv1.GetTicketDownloadRequest]) (*connect.Response[ticketsv1.GetTicketDownloadResponse], error) {
	p, ok := auth.FromContext(ctx)
	if !ok {
		return nil, errNotSignedIn
	}
	if h.tickets == nil || h.files == nil {
		return nil, fault.New(fault.NotServed, "e-tickets are not available on this server")
	}
	// only the holder; another user's ticket is not found.
	v, err := h.tickets.GetTicket(ctx, p.UserID, req.Msg.GetTicketId())
	if err != nil {
		return nil, h.error(ctx, err)
	}
	if !v.GoodForEntry() {
		return nil, h.error(ctx, fault.New(fault.TicketNotAdmissible, "ticket %s is %s", v.ID, v.Status))
	}
	d, err := h.files.Download(ctx, v, display.ParseLang(req.Msg.GetLang()))
	if err != nil {
		return nil, h.error(ctx, err)
	}
	resp := &ticketsv1.GetTicketDownloadResponse{TicketId: v.ID, Ready: d.Ready, Url: d.URL,
		ContentType: d.ContentType, FileName: d.FileName}
	if d.Ready {
		resp.ExpiresAt = timestamppb.New(d.ExpiresAt)
	} else {
		resp.RetryAfter = durationpb.New(d.RetryAfter)
	}
	res := connect.NewResponse(resp)
	res.Header().Set("Cache-Control", "private, no-store") // the URL is a bearer credential
	return res, nil
}

func (h *ticketHandler) CheckInTicket(ctx context.Context, req *connect.Request[ticketsv1.CheckInTicketRequest]) (*connect.Response[ticketsv1.CheckInTicketResponse], error) {
	p, ok := auth.FromContext(ctx)
	if !ok {
		return nil, errNotSignedIn
	}
	res, err := h.checkIn.CheckIn(ctx, ticket.Caller{UserID: p.UserID, Admin: p.Is(auth.RoleAdmin), Operator: p.Is(auth.RoleOperator)},
		ticket.Scan{ShowID: req.Msg.GetShowId(), Code: req.Msg.GetCode(), TicketID: req.Msg.GetTicketId(), Gate: req.Msg.GetGate()})
	if err != nil {
		return nil, h.error(ctx, err)
	}
	t := ticketProto(ticket.View{Ticket: res.Ticket, Status: res.Status, CheckedInAt: res.CheckedInAt,
		CheckedInGate: res.CheckedInGate, TimeZone: res.TimeZone})
	return connect.NewResponse(&ticketsv1.CheckInTicketResponse{Ticket: t, Admitted: res.Admitted,
		AlreadyCheckedIn: res.AlreadyCheckedIn, AdmittedCount: res.AdmittedCount}), nil
}

func (h *ticketHandler) error(ctx context.Context, err error) error {
	return toConnect(ctx, h.log, err)
}

var ticketStatuses = map[ticket.Status]ticketsv1.TicketStatus{
	ticket.StatusValid:     ticketsv1.TicketStatus_TICKET_STATUS_VALID,
	ticket.StatusCheckedIn: ticketsv1.TicketStatus_TICKET_STATUS_CHECKED_IN,
	ticket.StatusCancelled: ticketsv1.TicketStatus_TICKET_STATUS_CANCELLED,
	ticket.StatusRefunded:  ticketsv1.TicketStatus_TICKET_STATUS_REFUNDED,
}

func ticketProto(v ticket.View) *ticketsv1.Ticket {
	t := &ticketsv1.Ticket{
		TicketId: v.ID, OrderId: v.OrderID, ShowId: v.ShowID, ShowKind: v.Kind, ShowTitle: v.Title,
		Origin: v.Origin, Destination: v.Destination, Venue: v.Venue, Seat: v.Seat, GaArea: v.GAArea,
		UserId: v.UserID, Status: ticketStatuses[v.Status], Code: v.Code, CheckedInGate: v.CheckedInGate,
		DownloadReady: v.PDFKey != "", Operator: v.Operator,
		OriginBengali: place.Bengali(v.Origin), DestinationBengali: place.Bengali(v.Destination),
	}
	if v.Seat != "" {
		t.Seats = []string{v.Seat}
	}
	if v.Currency != "" {
		t.Price = money(v.PriceMinor, v.Currency)
	}
	// The zone is known once the show is (a check-in answer has no start).
	loc := display.ZoneOrDefault(v.TimeZone)
	if !v.StartsAt.IsZero() {
		t.StartsAt = timestamppb.New(v.StartsAt)
		t.StartsAtLocal = display.LocalTime(v.StartsAt, loc)
	}
	if !v.IssuedAt.IsZero() {
		t.IssuedAt = timestamppb.New(v.IssuedAt)
	}
	if !v.CheckedInAt.IsZero() {
		t.CheckedInAt = timestamppb.New(v.CheckedInAt)
		t.CheckedInAtLocal = display.LocalTime(v.CheckedInAt, loc)
	}
	return t
}
