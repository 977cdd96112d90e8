package api

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	ticketsv1 "github.com/seatghor/seatghor/gen/seatghor/tickets/v1"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/display"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/phone"
	"github.com/seatghor/seatghor/server/place"
	"github.com/seatghor/seatghor/server/ticket"
)

// TicketReader answers a user's tickets from the "my tickets" read model
// (projections/mytickets, R-8.3).
type TicketReader interface {
	ListTickets(ctx context.Context, h ticket.Holder, f ticket.ListFilter) ([]ticket.View, string, error)
	GetTicket(ctx context.Context, h ticket.Holder, ticketID string) (ticket.View, error)
	FindOrder(ctx context.Context, orderID, phone, client string, now time.Time) ([]ticket.View, error)
	// OrdersNumbered finds the orders of a ticket number, at most two
	// (for the counter's staff, decision 0476).
	OrdersNumbered(ctx context.Context, number string) ([]string, error)
}

// TicketSMS sends a booking's SMS again (decision 0437).
type TicketSMS interface {
	Resend(ctx context.Context, orderID, phone string) (time.Duration, error)
}

// TicketFiles answers where a ticket's e-ticket PDF can be fetched
// (projections/eticket, R-8.5).
type TicketFiles interface {
	Download(ctx context.Context, v ticket.View, lang display.Lang) (ticket.Download, error)
}

type ticketHandler struct {
	tickets TicketReader
	files   TicketFiles
	// phones answers a phone buyer's number; sms sends a booking's SMS
	// again. Nil where no SMS are sent.
	phones  PhoneSignIn
	sms     TicketSMS
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
	holder, err := h.holder(ctx, p)
	if err != nil {
		return nil, h.error(ctx, err)
	}
	list, next, err := h.tickets.ListTickets(ctx, holder, ticket.ListFilter{
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
	holder, err := h.holder(ctx, p)
	if err != nil {
		return nil, h.error(ctx, err)
	}
	// only the holder; another user's ticket is not found.
	v, err := h.tickets.GetTicket(ctx, holder, req.Msg.GetTicketId())
	if err != nil {
		return nil, h.error(ctx, err)
	}
	if !v.GoodForEntry() {
		return nil, h.error(ctx, fault.New(fault.TicketNotAdmissible, "ticket %s is %s", v.ID, v.Status))
	}
	resp, err := h.download(ctx, v, req.Msg.GetLang())
	if err != nil {
		return nil, h.error(ctx, err)
	}
	res := connect.NewResponse(resp)
	res.Header().Set("Cache-Control", "private, no-store") // the URL is a bearer credential
	return res, nil
}

// download answers where a ticket's e-ticket PDF is.
func (h *ticketHandler) download(ctx context.Context, v ticket.View, lang string) (*ticketsv1.GetTicketDownloadResponse, error) {
	d, err := h.files.Download(ctx, v, display.ParseLang(lang))
	if err != nil {
		return nil, err
	}
	resp := &ticketsv1.GetTicketDownloadResponse{TicketId: v.ID, Ready: d.Ready, Url: d.URL,
		ContentType: d.ContentType, FileName: d.FileName}
	if d.Ready {
		resp.ExpiresAt = timestamppb.New(d.ExpiresAt)
	} else {
		resp.RetryAfter = durationpb.New(d.RetryAfter)
	}
	return resp, nil
}

// holder is whose tickets the caller reads: their own and, signed in by
// phone, the orders sent to their number (decision 0437).
func (h *ticketHandler) holder(ctx context.Context, p auth.Principal) (ticket.Holder, error) {
	out := ticket.Holder{UserID: p.UserID}
	if h.phones == nil {
		return out, nil
	}
	n, err := h.phones.PhoneOf(ctx, p.UserID)
	out.Phone = n
	return out, err
}

// FindTickets answers an order's tickets to whoever knows its ticket
// number and the number they were sent to (decision 0437).
func (h *ticketHandler) FindTickets(ctx context.Context, req *connect.Request[ticketsv1.FindTicketsRequest]) (*connect.Response[ticketsv1.FindTicketsResponse], error) {
	if h.tickets == nil {
		return nil, errNoReadModel
	}
	number, err := phone.Bangladesh(req.Msg.GetPhone())
	if err != nil {
		return nil, h.error(ctx, fault.OnField(fault.InvalidArgument, "phone", "%v", err))
	}
	list, err := h.tickets.FindOrder(ctx, strings.TrimSpace(req.Msg.GetOrderId()), number, clientAddr(req.Peer()), h.now())
	if err != nil {
		return nil, h.error(ctx, err)
	}
	resp := &ticketsv1.FindTicketsResponse{}
	for _, t := range list {
		resp.Tickets = append(resp.Tickets, ticketProto(t))
	}
	// One PDF covers the order (decision 0305): any good ticket answers it.
	if v := list[0]; v.GoodForEntry() && h.files != nil {
		if resp.Download, err = h.download(ctx, v, req.Msg.GetLang()); err != nil {
			return nil, h.error(ctx, err)
		}
	}
	res := connect.NewResponse(resp)
	res.Header().Set("Cache-Control", "private, no-store") // the codes and the URL admit
	return res, nil
}

// ResendTicketSms sends a booking's SMS again to its number (decision 0437).
func (h *ticketHandler) ResendTicketSms(ctx context.Context, req *connect.Request[ticketsv1.ResendTicketSmsRequest]) (*connect.Response[ticketsv1.ResendTicketSmsResponse], error) {
	if h.sms == nil || h.tickets == nil {
		return nil, h.error(ctx, errNoSMS)
	}
	number, err := phone.Bangladesh(req.Msg.GetPhone())
	if err != nil {
		return nil, h.error(ctx, fault.OnField(fault.InvalidArgument, "phone", "%v", err))
	}
	// The same lookup as FindTickets first, so that a wrong guess counts
	// against the caller's address here too; it also reads a ticket
	// number as its order.
	list, err := h.tickets.FindOrder(ctx, strings.TrimSpace(req.Msg.GetOrderId()), number, clientAddr(req.Peer()), h.now())
	if err != nil {
		return nil, h.error(ctx, err)
	}
	wait, err := h.sms.Resend(ctx, list[0].OrderID, number)
	if err != nil {
		return nil, h.error(ctx, err)
	}
	return connect.NewResponse(&ticketsv1.ResendTicketSmsResponse{Phone: number, ResendAfter: durationpb.New(wait)}), nil
}

func (h *ticketHandler) CheckInTicket(ctx context.Context, req *connect.Request[ticketsv1.CheckInTicketRequest]) (*connect.Response[ticketsv1.CheckInTicketResponse], error) {
	p, ok := auth.FromContext(ctx)
	if !ok {
		return nil, errNotSignedIn
	}
	res, err := h.checkIn.CheckIn(ctx, gateCaller(p),
		ticket.Scan{ShowID: req.Msg.GetShowId(), Code: req.Msg.GetCode(), TicketID: req.Msg.GetTicketId(), Gate: req.Msg.GetGate(),
			StopID: req.Msg.GetStopId()})
	if err != nil {
		return nil, h.error(ctx, err)
	}
	t := ticketProto(ticket.View{Ticket: res.Ticket, Status: res.Status, CheckedInAt: res.CheckedInAt,
		CheckedInGate: res.CheckedInGate, TimeZone: res.TimeZone})
	return connect.NewResponse(&ticketsv1.CheckInTicketResponse{Ticket: t, Admitted: res.Admitted,
		AlreadyCheckedIn: res.AlreadyCheckedIn, AdmittedCount: res.AdmittedCount}), nil
}

// gateCaller is the ticket service's view of who calls.
func gateCaller(p auth.Principal) ticket.Caller {
	return ticket.Caller{UserID: p.UserID, Admin: p.Is(auth.RoleAdmin), Operator: p.Is(auth.RoleOperator)}
}

func (h *ticketHandler) GetTicketKeys(context.Context, *connect.Request[ticketsv1.GetTicketKeysRequest]) (*connect.Response[ticketsv1.GetTicketKeysResponse], error) {
	resp := &ticketsv1.GetTicketKeysResponse{}
	for _, k := range h.checkIn.Codes().PublicKeys() {
		resp.Keys = append(resp.Keys, &ticketsv1.TicketKey{KeyId: k.ID, Algorithm: ticket.Algorithm, PublicKey: k.Key, Signing: k.Signing})
	}
	res := connect.NewResponse(resp)
	// The same for everyone; a gate caches them (and keeps them offline).
	res.Header().Set("Cache-Control", "public, max-age=300")
	return res, nil
}

func (h *ticketHandler) GetAdmissionList(ctx context.Context, req *connect.Request[ticketsv1.GetAdmissionListRequest]) (*connect.Response[ticketsv1.GetAdmissionListResponse], error) {
	p, ok := auth.FromContext(ctx)
	if !ok {
		return nil, errNotSignedIn
	}
	list, err := h.checkIn.AdmissionList(ctx, gateCaller(p), req.Msg.GetShowId(), int(req.Msg.GetPageSize()), req.Msg.GetPageToken())
	if err != nil {
		return nil, h.error(ctx, err)
	}
	resp := &ticketsv1.GetAdmissionListResponse{NextPageToken: list.NextPageToken, ServerTime: timestamppb.New(list.ServerTime),
		AdmittedCount: list.AdmittedCount, Admissions: make([]*ticketsv1.Admission, 0, len(list.Admissions))}
	for _, a := range list.Admissions {
		m := &ticketsv1.Admission{TicketId: a.TicketID, Seat: a.Seat, GaArea: a.GAArea, Status: ticketStatuses[a.Status],
			CheckedInGate: a.CheckedInGate, BoardingStopId: a.BoardingStopID}
		if !a.CheckedInAt.IsZero() {
			m.CheckedInAt = timestamppb.New(a.CheckedInAt)
		}
		resp.Admissions = append(resp.Admissions, m)
	}
	res := connect.NewResponse(resp)
	res.Header().Set("Cache-Control", "private, no-store")
	return res, nil
}

func (h *ticketHandler) SyncGateScans(ctx context.Context, req *connect.Request[ticketsv1.SyncGateScansRequest]) (*connect.Response[ticketsv1.SyncGateScansResponse], error) {
	p, ok := auth.FromContext(ctx)
	if !ok {
		return nil, errNotSignedIn
	}
	m := req.Msg
	b := ticket.Batch{ShowID: m.GetShowId(), DeviceID: m.GetDeviceId(), Gate: m.GetGate(), DeviceTime: m.GetDeviceTime().AsTime(),
		Pending: int(m.GetPending()), StopID: m.GetStopId()}
	if m.ClockOffset != nil {
		d := m.GetClockOffset().AsDuration()
		b.ClockOffset = &d
	}
	for _, sc := range m.GetScans() {
		b.Scans = append(b.Scans, ticket.OfflineScan{ScanID: sc.GetScanId(), Code: sc.GetCode(), TicketID: sc.GetTicketId(),
			ScannedAt: sc.GetScannedAt().AsTime()})
	}
	st, err := h.checkIn.SettleScans(ctx, gateCaller(p), b)
	if err != nil {
		return nil, h.error(ctx, err)
	}
	resp := &ticketsv1.SyncGateScansResponse{ServerTime: timestamppb.New(st.ServerTime), ClockOffset: durationpb.New(st.ClockOffset),
		AdmittedCount: st.AdmittedCount}
	for _, s := range st.Scans {
		resp.Scans = append(resp.Scans, settledProto(s))
	}
	return connect.NewResponse(resp), nil
}

func (h *ticketHandler) GetGateStatus(ctx context.Context, req *connect.Request[ticketsv1.GetGateStatusRequest]) (*connect.Response[ticketsv1.GetGateStatusResponse], error) {
	p, ok := auth.FromContext(ctx)
	if !ok {
		return nil, errNotSignedIn
	}
	st, err := h.checkIn.GateStatus(ctx, gateCaller(p), req.Msg.GetShowId())
	if err != nil {
		return nil, h.error(ctx, err)
	}
	resp := &ticketsv1.GetGateStatusResponse{ConflictCount: st.ConflictCount, AdmittedCount: st.AdmittedCount,
		ServerTime: timestamppb.New(st.ServerTime)}
	for _, d := range st.Devices {
		resp.Devices = append(resp.Devices, &ticketsv1.GateDevice{DeviceId: d.DeviceID, Gate: d.Gate,
			LastSyncAt: timestamppb.New(d.LastSyncAt), Pending: int32(d.Pending), ClockOffset: durationpb.New(d.ClockOffset),
			Admitted: d.Admitted, Duplicates: d.Duplicates, Refunded: d.Refunded, Invalid: d.Invalid, SyncedBy: d.SyncedBy,
			BoardsElsewhere: d.BoardsElsewhere})
	}
	for _, s := range st.Conflicts {
		resp.Conflicts = append(resp.Conflicts, settledProto(s))
	}
	res := connect.NewResponse(resp)
	res.Header().Set("Cache-Control", "private, no-store")
	return res, nil
}

var scanOutcomes = map[ticket.Outcome]ticketsv1.ScanOutcome{
	ticket.OutcomeAdmitted:        ticketsv1.ScanOutcome_SCAN_OUTCOME_ADMITTED,
	ticket.OutcomeDuplicate:       ticketsv1.ScanOutcome_SCAN_OUTCOME_DUPLICATE,
	ticket.OutcomeRefunded:        ticketsv1.ScanOutcome_SCAN_OUTCOME_REFUNDED,
	ticket.OutcomeInvalid:         ticketsv1.ScanOutcome_SCAN_OUTCOME_INVALID,
	ticket.OutcomeBoardsElsewhere: ticketsv1.ScanOutcome_SCAN_OUTCOME_BOARDS_ELSEWHERE,
}

func settledProto(s ticket.Settled) *ticketsv1.SettledScan {
	m := &ticketsv1.SettledScan{ScanId: s.ScanID, DeviceId: s.DeviceID, Gate: s.Gate, TicketId: s.TicketID, Seat: s.Seat,
		GaArea: s.GAArea, Outcome: scanOutcomes[s.Outcome], ScannedAt: timestamppb.New(s.ScannedAt),
		SettledTime: timestamppb.New(s.SettledTime), AdmittedGate: s.AdmittedGate, AdmittedDeviceId: s.AdmittedDeviceID,
		TicketStatus: ticketStatuses[s.TicketStatus], Detail: s.Detail, BoardingStopId: s.BoardingStopID}
	if !s.AdmittedAt.IsZero() {
		m.AdmittedAt = timestamppb.New(s.AdmittedAt)
	}
	return m
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
		TitleBn: v.TitleBn, VenueBn: v.VenueBn, OperatorBn: v.OperatorBn,
	}
	if v.Seat != "" {
		t.Seats = []string{v.Seat}
	}
	// The holder's own ticket, or the gate's answer to the show's staff
	// (without the phone): decision 0381.
	if v.Passenger.Name != "" {
		t.Passenger = &commonv1.Passenger{Seat: v.Seat, Name: v.Passenger.Name, Phone: v.Passenger.Phone, Woman: v.Passenger.Woman}
	}
	if v.Currency != "" {
		t.Price = money(v.PriceMinor, v.Currency)
	}
	// Bus trips with stops: the journey as sold (decision 0384); nil on
	// every other show.
	t.Journey = v.Journey
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
