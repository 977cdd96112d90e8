package api_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/timestamppb"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	counterv1 "github.com/seatghor/seatghor/gen/seatghor/counter/v1"
	ledgerv1 "github.com/seatghor/seatghor/gen/seatghor/ledger/v1"
	networkv1 "github.com/seatghor/seatghor/gen/seatghor/network/v1"
	notifyv1 "github.com/seatghor/seatghor/gen/seatghor/notify/v1"
	partnerv1 "github.com/seatghor/seatghor/gen/seatghor/partner/v1"
	paymentv1 "github.com/seatghor/seatghor/gen/seatghor/payment/v1"
	searchv1 "github.com/seatghor/seatghor/gen/seatghor/search/v1"
	seatmapv1 "github.com/seatghor/seatghor/gen/seatghor/seatmap/v1"
	signinv1 "github.com/seatghor/seatghor/gen/seatghor/signin/v1"
	ticketsv1 "github.com/seatghor/seatghor/gen/seatghor/tickets/v1"
	waitingroomv1 "github.com/seatghor/seatghor/gen/seatghor/waitingroom/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/internal/testkit/redistest"
	"github.com/seatghor/seatghor/projections/mytickets"
	"github.com/seatghor/seatghor/projections/notifications"
	"github.com/seatghor/seatghor/server/app"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/payment"
	"github.com/seatghor/seatghor/server/shard"
	"github.com/seatghor/seatghor/server/ticket"
)

// The authorization matrix (issue 28, R7): every RPC, over Connect and over
// its REST route, called by every kind of caller, and the code each gets.
// A cell is the first answer a caller gets for a request that is otherwise
// well-formed and names real things: `ok` means the call did what it does;
// `denied` is permission_denied; a caller refused for not owning a thing is
// told it does not exist (`notfound`) where the API hides what others own
// . A new RPC without its row fails TestAuthorizationMatrix, so no
// procedure is ever served without someone having written down who may call
// it.
//
// After a deliberate change of a rule, print the observed matrix with
//
//	go test -run TestAuthorizationMatrix ./server/api/ -args -authz.print
//
// and review every changed cell before copying it here.

var authzPrint = flag.Bool("authz.print", false, "print the observed authorization matrix")

// caller is a kind of caller: each cell of a row is one.
type caller int

const (
	anonymous    caller = iota // no credential
	owner                      // the buyer whose hold, order, payment or ticket it is
	otherBuyer                 // another signed-in buyer
	gateStaff                  // gate staff of the show's organisation
	manager                    // a manager of the show's organisation
	otherManager               // a manager of another organisation
	otherGate                  // gate staff of another organisation
	keyReadOnly                // an API key of the partner, scope read_only
	keyBooking                 // an API key of the partner, scope booking
	keyWebhooks                // an API key of the partner, scope webhooks
	otherPartner               // a booking key of another partner
	admin                      // a platform admin
	callers
)

// callerNames head the printed matrix, in caller order.
var callerNames = [callers]string{"anon", "owner", "buyer", "gate", "mgr", "mgr2", "gate2", "k-ro", "k-book", "k-hook", "partner2", "admin"}

// codeWords are the words of the matrix for the codes a call answers.
var codeWords = map[connect.Code]string{
	0:                              "ok",
	connect.CodeUnauthenticated:    "unauth",
	connect.CodePermissionDenied:   "denied",
	connect.CodeNotFound:           "notfound",
	connect.CodeFailedPrecondition: "precond",
	connect.CodeInvalidArgument:    "invalid",
	connect.CodeAborted:            "aborted",
	connect.CodeAlreadyExists:      "exists",
	connect.CodeUnavailable:        "unavail",
	connect.CodeResourceExhausted:  "exhausted",
	connect.CodeUnimplemented:      "unimpl",
	connect.CodeInternal:           "INTERNAL",
	connect.CodeUnknown:            "UNKNOWN",
	connect.CodeDeadlineExceeded:   "deadline",
	connect.CodeCanceled:           "canceled",
	connect.CodeOutOfRange:         "range",
	connect.CodeDataLoss:           "DATALOSS",
}

// authzRow is one RPC: how to make a request for a caller (fresh things
// where a call uses them up) and what each caller gets, as words in caller
// order.
type authzRow struct {
	procedure string
	request   func(w *authzWorld, c caller) proto.Message
	want      string
}

// authzMatrix is the table. Columns, in order:
//
//	anon owner buyer gate mgr mgr2 gate2 k-ro k-book k-hook partner2 admin
var authzMatrix = []authzRow{
	// Catalog.
	{"seatghor.catalog.v1.CatalogService/CreateShow", func(w *authzWorld, c caller) proto.Message {
		req := seatedShow("Matrix "+callerNames[c], 1, 2)
		req.OrganizationId = "org-a"
		return req
	}, "unauth denied denied denied ok denied denied denied denied denied denied ok"},
	{"seatghor.catalog.v1.CatalogService/CreateOrganization", func(w *authzWorld, c caller) proto.Message {
		return &catalogv1.CreateOrganizationRequest{OrganizationId: "org-" + callerNames[c], Name: "Org " + callerNames[c]}
	}, "unauth denied denied denied denied denied denied denied denied denied denied ok"},
	{"seatghor.catalog.v1.CatalogService/AddOrganizationMember", func(w *authzWorld, c caller) proto.Message {
		return &catalogv1.AddOrganizationMemberRequest{OrganizationId: "org-a", UserId: "new-" + callerNames[c],
			Role: catalogv1.OrganizationRole_ORGANIZATION_ROLE_GATE}
	}, "unauth denied denied denied ok denied denied denied denied denied denied ok"},
	{"seatghor.catalog.v1.CatalogService/RemoveOrganizationMember", func(w *authzWorld, c caller) proto.Message {
		w.env.Member(w.t, "org-a", "leaving-"+callerNames[c], catalog.RoleGate)
		return &catalogv1.RemoveOrganizationMemberRequest{OrganizationId: "org-a", UserId: "leaving-" + callerNames[c]}
	}, "unauth denied denied denied ok denied denied denied denied denied denied ok"},
	{"seatghor.catalog.v1.CatalogService/ListOrganizations", func(*authzWorld, caller) proto.Message {
		return &catalogv1.ListOrganizationsRequest{}
	}, "unauth ok ok ok ok ok ok ok ok ok ok ok"},
	{"seatghor.catalog.v1.CatalogService/ListOrganizationMembers", func(*authzWorld, caller) proto.Message {
		return &catalogv1.ListOrganizationMembersRequest{OrganizationId: "org-a"}
	}, "unauth denied denied denied ok denied denied denied denied denied denied ok"},
	{"seatghor.catalog.v1.CatalogService/ListAuditEntries", func(*authzWorld, caller) proto.Message {
		return &catalogv1.ListAuditEntriesRequest{OrganizationId: "org-a"}
	}, "unauth denied denied denied ok denied denied denied denied denied denied ok"},
	{"seatghor.catalog.v1.CatalogService/GetShow", func(w *authzWorld, _ caller) proto.Message {
		return &catalogv1.GetShowRequest{ShowId: w.show}
	}, "unauth ok ok ok ok ok ok ok ok ok ok ok"},
	{"seatghor.catalog.v1.CatalogService/ListShows", func(*authzWorld, caller) proto.Message {
		return &catalogv1.ListShowsRequest{}
	}, "unauth ok ok ok ok ok ok ok ok ok ok ok"},
	// A show's cancellation (decision 0440): its organisation's managers
	// and admins; each caller's own fresh show, the second read of it
	// after an admin cancelled it.
	{"seatghor.catalog.v1.CatalogService/CancelShow", func(w *authzWorld, c caller) proto.Message {
		return &catalogv1.CancelShowRequest{ShowId: w.newShow("Cancel "+callerNames[c], nil), Reason: "matrix"}
	}, "unauth denied denied denied ok denied denied denied denied denied denied ok"},
	{"seatghor.catalog.v1.CatalogService/GetShowCancellation", func(w *authzWorld, c caller) proto.Message {
		show := w.newShow("Cancelled "+callerNames[c], nil)
		w.must(admin, "seatghor.catalog.v1.CatalogService/CancelShow",
			&catalogv1.CancelShowRequest{ShowId: show, Reason: "matrix"}, &catalogv1.CancelShowResponse{})
		return &catalogv1.GetShowCancellationRequest{ShowId: show}
	}, "unauth denied denied denied ok denied denied denied denied denied denied ok"},
	// A show's move to a later time (decision 0441): the same callers.
	{"seatghor.catalog.v1.CatalogService/RescheduleShow", func(w *authzWorld, c caller) proto.Message {
		return &catalogv1.RescheduleShowRequest{ShowId: w.newShow("Delay "+callerNames[c], nil),
			StartsAt: timestamppb.New(time.Now().Add(60 * 24 * time.Hour)), Reason: "matrix"}
	}, "unauth denied denied denied ok denied denied denied denied denied denied ok"},
	// A draft's publication (decision 0455): the same callers, each its
	// own fresh draft.
	{"seatghor.catalog.v1.CatalogService/PublishShow", func(w *authzWorld, c caller) proto.Message {
		return &catalogv1.PublishShowRequest{ShowId: w.newDraft("Draft " + callerNames[c])}
	}, "unauth denied denied denied ok denied denied denied denied denied denied ok"},
	{"seatghor.catalog.v1.CatalogService/DeleteShow", func(w *authzWorld, c caller) proto.Message {
		return &catalogv1.DeleteShowRequest{ShowId: w.newDraft("Dropped draft " + callerNames[c])}
	}, "unauth denied denied denied ok denied denied denied denied denied denied ok"},
	{"seatghor.catalog.v1.CatalogService/MarkTrip", func(w *authzWorld, c caller) proto.Message {
		return &catalogv1.MarkTripRequest{ShowId: w.boardingTrip("Leaving " + callerNames[c]), Mark: catalogv1.TripMark_TRIP_MARK_DEPARTED}
	}, "unauth denied denied ok ok denied denied denied denied denied denied ok"},
	{"seatghor.catalog.v1.CatalogService/UpdateShow", func(w *authzWorld, c caller) proto.Message {
		return &catalogv1.UpdateShowRequest{ShowId: w.show, Title: proto.String("Renamed by " + callerNames[c])}
	}, "unauth denied denied denied ok denied denied denied denied denied denied ok"},

	// Holds and orders: the owner's own; fresh ones where a call uses them.
	{"seatghor.booking.v1.HoldService/CreateHold", func(w *authzWorld, _ caller) proto.Message {
		show, seat := w.seat()
		return &bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{seat}}
	}, "unauth ok ok ok ok ok ok denied denied denied ok ok"},
	{"seatghor.booking.v1.HoldService/GetHold", func(w *authzWorld, _ caller) proto.Message {
		return &bookingv1.GetHoldRequest{HoldId: w.hold}
	}, "unauth ok notfound notfound ok notfound notfound notfound notfound notfound notfound ok"},
	{"seatghor.booking.v1.HoldService/ListMyHolds", func(*authzWorld, caller) proto.Message {
		return &bookingv1.ListMyHoldsRequest{}
	}, "unauth ok ok ok ok ok ok ok ok ok ok ok"},
	{"seatghor.booking.v1.HoldService/ReleaseHold", func(w *authzWorld, _ caller) proto.Message {
		return &bookingv1.ReleaseHoldRequest{HoldId: w.freshHold()}
	}, "unauth ok notfound notfound notfound notfound notfound denied notfound denied notfound notfound"},
	{"seatghor.booking.v1.OrderService/CreateOrder", func(w *authzWorld, _ caller) proto.Message {
		return &bookingv1.CreateOrderRequest{HoldId: w.freshHold()}
	}, "unauth ok notfound notfound notfound notfound notfound denied notfound denied notfound notfound"},
	{"seatghor.booking.v1.OrderService/GetOrder", func(w *authzWorld, _ caller) proto.Message {
		return &bookingv1.GetOrderRequest{OrderId: w.order}
	}, "unauth ok notfound notfound ok notfound notfound notfound notfound notfound notfound ok"},
	{"seatghor.booking.v1.OrderService/ListMyOrders", func(*authzWorld, caller) proto.Message {
		return &bookingv1.ListMyOrdersRequest{}
	}, "unauth ok ok ok ok ok ok ok ok ok ok ok"},
	{"seatghor.booking.v1.OrderService/CancelOrder", func(w *authzWorld, _ caller) proto.Message {
		return &bookingv1.CancelOrderRequest{OrderId: w.freshOrder()}
	}, "unauth ok notfound notfound notfound notfound notfound denied notfound denied notfound notfound"},

	// Seat maps and search: public reads.
	{"seatghor.seatmap.v1.SeatMapService/GetSeatMap", func(w *authzWorld, _ caller) proto.Message {
		return &seatmapv1.GetSeatMapRequest{ShowId: w.show}
	}, "unauth ok ok ok ok ok ok ok ok ok ok ok"},
	{"seatghor.seatmap.v1.SeatMapService/GetSeatLayout", func(w *authzWorld, _ caller) proto.Message {
		return &seatmapv1.GetSeatLayoutRequest{ShowId: w.show}
	}, "ok ok ok ok ok ok ok ok ok ok ok ok"},
	{"seatghor.search.v1.TripSearchService/SearchTrips", func(*authzWorld, caller) proto.Message {
		return &searchv1.SearchTripsRequest{Query: "matrix"}
	}, "ok ok ok ok ok ok ok ok ok ok ok ok"},

	// Payments.
	{"seatghor.payment.v1.PaymentService/StartPayment", func(w *authzWorld, _ caller) proto.Message {
		return &paymentv1.StartPaymentRequest{OrderId: w.freshOrder(), Sandbox: &paymentv1.SandboxPayment{Token: "tok_success"}}
	}, "unauth ok notfound notfound notfound notfound notfound denied notfound denied notfound notfound"},
	{"seatghor.payment.v1.PaymentService/GetPayment", func(w *authzWorld, _ caller) proto.Message {
		return &paymentv1.GetPaymentRequest{PaymentId: w.paymentID}
	}, "unauth ok notfound notfound notfound notfound notfound notfound notfound notfound notfound ok"},
	{"seatghor.payment.v1.PaymentService/RefundPayment", func(w *authzWorld, _ caller) proto.Message {
		_, p := w.freshPaid()
		return &paymentv1.RefundPaymentRequest{PaymentId: p, AmountMinor: 1000, Note: "goodwill"}
	}, "unauth denied denied denied denied denied denied denied denied denied denied ok"},
	{"seatghor.payment.v1.PaymentService/ApproveRefund", func(w *authzWorld, _ caller) proto.Message {
		return &paymentv1.ApproveRefundRequest{RefundId: w.freshRefund()}
	}, "unauth denied denied denied denied denied denied denied denied denied denied ok"},

	// Tickets.
	{"seatghor.tickets.v1.TicketService/ListMyTickets", func(*authzWorld, caller) proto.Message {
		return &ticketsv1.ListMyTicketsRequest{}
	}, "unauth ok ok ok ok ok ok ok ok ok ok ok"},
	{"seatghor.tickets.v1.TicketService/GetTicketDownload", func(w *authzWorld, _ caller) proto.Message {
		return &ticketsv1.GetTicketDownloadRequest{TicketId: w.ticketID}
	}, "unauth ok notfound notfound notfound notfound notfound notfound notfound notfound notfound notfound"},
	{"seatghor.tickets.v1.TicketService/CheckInTicket", func(w *authzWorld, _ caller) proto.Message {
		o, _ := w.freshPaid()
		id, _ := ticket.ID(o, 1)
		return &ticketsv1.CheckInTicketRequest{ShowId: w.bulk, Ticket: &ticketsv1.CheckInTicketRequest_TicketId{TicketId: id}, Gate: "north"}
	}, "unauth denied denied ok ok denied denied denied denied denied denied ok"},

	{"seatghor.tickets.v1.TicketService/GetTicketKeys", func(*authzWorld, caller) proto.Message {
		return &ticketsv1.GetTicketKeysRequest{}
	}, "ok ok ok ok ok ok ok ok ok ok ok ok"},
	{"seatghor.tickets.v1.TicketService/GetAdmissionList", func(w *authzWorld, _ caller) proto.Message {
		return &ticketsv1.GetAdmissionListRequest{ShowId: w.paidShow}
	}, "unauth denied denied ok ok denied denied denied denied denied denied ok"},
	{"seatghor.tickets.v1.TicketService/SyncGateScans", func(w *authzWorld, c caller) proto.Message {
		o, _ := w.freshPaid()
		id, _ := ticket.ID(o, 1)
		return &ticketsv1.SyncGateScansRequest{ShowId: w.paidShow, DeviceId: "device-" + callerNames[c], Gate: "north",
			DeviceTime: timestamppb.Now(), Scans: []*ticketsv1.GateScan{{ScanId: "scan-" + newKey(),
				Ticket: &ticketsv1.GateScan_TicketId{TicketId: id}, ScannedAt: timestamppb.Now()}}}
	}, "unauth denied denied ok ok denied denied denied denied denied denied ok"},
	{"seatghor.tickets.v1.TicketService/GetGateStatus", func(w *authzWorld, _ caller) proto.Message {
		return &ticketsv1.GetGateStatusRequest{ShowId: w.paidShow}
	}, "unauth denied denied ok ok denied denied denied denied denied denied ok"},
	// Phone sign-in (decision 0436): anyone, a new number each call; not
	// an API key that may only read.
	{"seatghor.signin.v1.PhoneSignInService/SendCode", func(w *authzWorld, _ caller) proto.Message {
		w.phones++
		return &signinv1.SendCodeRequest{Phone: fmt.Sprintf("0171100%04d", w.phones)}
	}, "ok ok ok ok ok ok ok denied ok denied ok ok"},
	{"seatghor.signin.v1.PhoneSignInService/VerifyCode", func(_ *authzWorld, c caller) proto.Message {
		return &signinv1.VerifyCodeRequest{Phone: fmt.Sprintf("0171100%04d", int(c)), Code: "not-a-code"}
	}, "invalid invalid invalid invalid invalid invalid invalid denied invalid denied invalid invalid"},
	{"seatghor.signin.v1.PhoneSignInService/StartGuest", func(*authzWorld, caller) proto.Message {
		return &signinv1.StartGuestRequest{}
	}, "ok ok ok ok ok ok ok denied ok denied ok ok"},
	// A guest's tickets (decision 0437): anyone with the ticket number and
	// the phone (a fresh order each call to send its SMS again); not an API
	// key that may only read (a lookup counts a miss).
	{"seatghor.tickets.v1.TicketService/FindTickets", func(w *authzWorld, _ caller) proto.Message {
		return &ticketsv1.FindTicketsRequest{OrderId: w.phoneOrder, Phone: matrixPhone}
	}, "ok ok ok ok ok ok ok denied ok denied ok ok"},
	{"seatghor.tickets.v1.TicketService/ResendTicketSms", func(w *authzWorld, _ caller) proto.Message {
		return &ticketsv1.ResendTicketSmsRequest{OrderId: w.freshPhoneOrder(), Phone: matrixPhone}
	}, "ok ok ok ok ok ok ok denied ok denied ok ok"},
	// The manifest (decision 0442): the gate's callers. A no-show before
	// the coach has left is refused after the caller is let in.
	{"seatghor.tickets.v1.ManifestService/GetManifest", func(w *authzWorld, _ caller) proto.Message {
		return &ticketsv1.GetManifestRequest{ShowId: w.paidShow}
	}, "unauth denied denied ok ok denied denied denied denied denied denied ok"},
	{"seatghor.tickets.v1.ManifestService/ExportManifest", func(w *authzWorld, _ caller) proto.Message {
		return &ticketsv1.ExportManifestRequest{ShowId: w.paidShow, Language: "bn"}
	}, "unauth denied denied ok ok denied denied denied denied denied denied ok"},
	{"seatghor.tickets.v1.ManifestService/MarkNoShow", func(w *authzWorld, _ caller) proto.Message {
		o, _ := w.freshPaid()
		id, _ := ticket.ID(o, 1)
		return &ticketsv1.MarkNoShowRequest{ShowId: w.bulk, TicketId: id}
	}, "unauth denied denied precond precond denied denied denied denied denied denied precond"},

	// Counter sales (decision 0443): counter staff and managers of the
	// organisation, each in their own open shift (here org-a's manager's);
	// anyone else is refused the shift, and its report is the manager's and
	// admins'. Paying out a trip never cancelled is refused after the
	// caller is let in.
	{"seatghor.counter.v1.CounterService/OpenShift", func(w *authzWorld, c caller) proto.Message {
		w.closeShifts()
		return &counterv1.OpenShiftRequest{OrganizationId: "org-a", CounterId: "open-" + callerNames[c],
			OpeningFloat: &commonv1.Money{AmountMinor: 100000, Currency: "BDT"}}
	}, "unauth denied denied denied ok denied denied denied denied denied denied denied"},
	{"seatghor.counter.v1.CounterService/GetShift", func(w *authzWorld, _ caller) proto.Message {
		return &counterv1.GetShiftRequest{ShiftId: w.counterShift()}
	}, "unauth denied denied denied ok denied denied denied denied denied denied ok"},
	{"seatghor.counter.v1.CounterService/SellTickets", func(w *authzWorld, _ caller) proto.Message {
		show, seat := w.seat()
		return &counterv1.SellTicketsRequest{ShiftId: w.counterShift(), ShowId: show, Seats: []string{seat},
			Contact: &commonv1.Contact{Phone: matrixPhone}}
	}, "unauth precond precond precond ok precond precond denied precond denied precond precond"},
	{"seatghor.counter.v1.CounterService/RefundTickets", func(w *authzWorld, _ caller) proto.Message {
		return &counterv1.RefundTicketsRequest{ShiftId: w.counterShift(), OrderId: w.cashOrder()}
	}, "unauth precond precond precond ok precond precond denied precond denied precond precond"},
	{"seatghor.counter.v1.CounterService/PayOwed", func(w *authzWorld, _ caller) proto.Message {
		return &counterv1.PayOwedRequest{ShiftId: w.counterShift(), OrderId: w.cashOrder()}
	}, "unauth precond precond precond precond precond precond denied precond denied precond precond"},
	{"seatghor.counter.v1.CounterService/GetCounterTicket", func(w *authzWorld, _ caller) proto.Message {
		return &counterv1.GetCounterTicketRequest{OrderId: w.cashOrder(), Language: "bn"}
	}, "unauth denied denied denied ok denied denied denied denied denied denied ok"},
	{"seatghor.counter.v1.CounterService/CloseShift", func(w *authzWorld, _ caller) proto.Message {
		w.closeShifts()
		return &counterv1.CloseShiftRequest{ShiftId: w.counterShift(), CountedCash: &commonv1.Money{AmountMinor: 100000, Currency: "BDT"}}
	}, "unauth precond precond precond ok precond precond denied precond denied precond precond"},

	// The waiting room.
	{"seatghor.waitingroom.v1.WaitingRoomService/Join", func(w *authzWorld, _ caller) proto.Message {
		return &waitingroomv1.JoinRequest{ShowId: w.saleShow}
	}, "unauth ok ok ok ok ok ok denied ok denied ok ok"},
	{"seatghor.waitingroom.v1.WaitingRoomService/GetStatus", func(w *authzWorld, _ caller) proto.Message {
		return &waitingroomv1.GetStatusRequest{Token: w.queueToken}
	}, "unauth ok denied denied denied denied denied denied denied denied denied denied"},
	{"seatghor.waitingroom.v1.WaitingRoomService/GetSale", func(w *authzWorld, _ caller) proto.Message {
		return &waitingroomv1.GetSaleRequest{ShowId: w.saleShow}
	}, "unauth denied denied denied ok denied denied denied denied denied denied ok"},
	{"seatghor.waitingroom.v1.WaitingRoomService/UpdateSale", func(w *authzWorld, _ caller) proto.Message {
		return &waitingroomv1.UpdateSaleRequest{ShowId: w.saleShow, Paused: proto.Bool(false)}
	}, "unauth denied denied denied ok denied denied denied denied denied denied ok"},

	// What the SMS sandbox received (issue 25): admins.
	{"seatghor.notify.v1.NotificationService/ListSandboxSms", func(*authzWorld, caller) proto.Message {
		return &notifyv1.ListSandboxSmsRequest{Phone: "01711-234567"}
	}, "unauth denied denied denied denied denied denied denied denied denied denied ok"},

	// The ledger: admins.
	{"seatghor.ledger.v1.LedgerService/GetShowSales", func(w *authzWorld, _ caller) proto.Message {
		return &ledgerv1.GetShowSalesRequest{ShowId: w.show}
	}, "unauth denied denied denied ok denied denied denied denied denied denied ok"},
	{"seatghor.ledger.v1.LedgerService/ExportSales", func(w *authzWorld, _ caller) proto.Message {
		return &ledgerv1.ExportSalesRequest{ShowId: w.paidShow, Kind: ledgerv1.ExportKind_EXPORT_KIND_ORDERS}
	}, "unauth denied denied denied ok denied denied denied denied denied denied ok"},
	{"seatghor.ledger.v1.LedgerService/GetOrganizationSales", func(*authzWorld, caller) proto.Message {
		return &ledgerv1.GetOrganizationSalesRequest{OrganizationId: "org-a"}
	}, "unauth denied denied denied ok denied denied denied denied denied denied ok"},
	{"seatghor.ledger.v1.LedgerService/GetTrialBalance", func(*authzWorld, caller) proto.Message {
		return &ledgerv1.GetTrialBalanceRequest{}
	}, "unauth denied denied denied denied denied denied denied denied denied denied ok"},
	{"seatghor.ledger.v1.LedgerService/ListJournal", func(*authzWorld, caller) proto.Message {
		return &ledgerv1.ListJournalRequest{}
	}, "unauth denied denied denied denied denied denied denied denied denied denied ok"},
	{"seatghor.ledger.v1.LedgerService/RunReconciliation", func(*authzWorld, caller) proto.Message {
		return &ledgerv1.RunReconciliationRequest{PeriodStart: timestamppb.New(time.Now().Add(-time.Hour)),
			PeriodEnd: timestamppb.New(time.Now()), DryRun: true}
	}, "unauth denied denied denied denied denied denied denied denied denied denied ok"},
	{"seatghor.ledger.v1.LedgerService/RecordPayout", func(w *authzWorld, c caller) proto.Message {
		return &ledgerv1.RecordPayoutRequest{ShowId: w.paidShow, PayoutId: "payout-" + callerNames[c],
			Amount: &commonv1.Money{AmountMinor: 1, Currency: "BDT"}}
	}, "unauth denied denied denied denied denied denied denied denied denied denied ok"},
	{"seatghor.ledger.v1.LedgerService/ListFailedRefunds", func(*authzWorld, caller) proto.Message {
		return &ledgerv1.ListFailedRefundsRequest{}
	}, "unauth denied denied denied denied denied denied denied denied denied denied ok"},
	{"seatghor.ledger.v1.LedgerService/ListRefundsToApprove", func(*authzWorld, caller) proto.Message {
		return &ledgerv1.ListRefundsToApproveRequest{}
	}, "unauth denied denied denied denied denied denied denied denied denied denied ok"},
	{"seatghor.ledger.v1.LedgerService/SettleFailedRefund", func(w *authzWorld, _ caller) proto.Message {
		// No refund of the show failed: an admin is told so.
		return &ledgerv1.SettleFailedRefundRequest{RefundId: shard.NewID("rfd", w.show),
			Method: ledgerv1.SettlementMethod_SETTLEMENT_METHOD_CASH, Reference: "counter-1"}
	}, "unauth denied denied denied denied denied denied denied denied denied denied notfound"},

	// Partners, their keys and allocations.
	{"seatghor.partner.v1.PartnerService/CreatePartner", func(_ *authzWorld, c caller) proto.Message {
		return &partnerv1.CreatePartnerRequest{Name: "New " + callerNames[c],
			Contact: &partnerv1.Contact{Name: "Nadia", Email: "api@example.com"}}
	}, "unauth denied denied denied denied denied denied denied denied denied denied ok"},
	{"seatghor.partner.v1.PartnerService/ListPartners", func(*authzWorld, caller) proto.Message {
		return &partnerv1.ListPartnersRequest{}
	}, "unauth denied denied denied denied denied denied denied denied denied denied ok"},
	{"seatghor.partner.v1.PartnerService/UpdatePartnerAccess", func(w *authzWorld, _ caller) proto.Message {
		return &partnerv1.UpdatePartnerAccessRequest{PartnerId: w.partnerID, AllowOrganizationIds: []string{"org-a"}}
	}, "unauth denied denied denied ok denied denied denied denied denied denied ok"},
	{"seatghor.partner.v1.PartnerService/GetPartner", func(w *authzWorld, _ caller) proto.Message {
		return &partnerv1.GetPartnerRequest{PartnerId: w.partnerID}
	}, "unauth denied denied denied denied denied denied ok ok ok denied ok"},
	{"seatghor.partner.v1.PartnerService/CreateApiKey", func(w *authzWorld, _ caller) proto.Message {
		return &partnerv1.CreateApiKeyRequest{PartnerId: w.partnerID, Name: "another",
			Scope: partnerv1.ApiKeyScope_API_KEY_SCOPE_READ_ONLY}
	}, "unauth denied denied denied denied denied denied denied denied denied denied ok"},
	{"seatghor.partner.v1.PartnerService/ListApiKeys", func(w *authzWorld, _ caller) proto.Message {
		return &partnerv1.ListApiKeysRequest{PartnerId: w.partnerID}
	}, "unauth denied denied denied denied denied denied ok ok ok denied ok"},
	{"seatghor.partner.v1.PartnerService/RevokeApiKey", func(w *authzWorld, _ caller) proto.Message {
		return &partnerv1.RevokeApiKeyRequest{KeyId: w.freshAPIKey()}
	}, "unauth denied denied denied denied denied denied denied denied denied denied ok"},
	{"seatghor.partner.v1.PartnerService/GetStatement", func(w *authzWorld, _ caller) proto.Message {
		return &partnerv1.GetStatementRequest{PartnerId: w.partnerID, PeriodStart: timestamppb.New(time.Now().Add(-time.Hour)),
			PeriodEnd: timestamppb.New(time.Now().Add(time.Hour))}
	}, "unauth denied denied denied denied denied denied ok ok ok denied ok"},
	{"seatghor.partner.v1.AllocationService/AllocateSeats", func(w *authzWorld, _ caller) proto.Message {
		show, seat := w.seat()
		return &partnerv1.AllocateSeatsRequest{ShowId: show, PartnerId: w.partnerID, Seats: []string{seat},
			ReturnAt: timestamppb.New(time.Now().Add(time.Hour))}
	}, "unauth denied denied denied ok denied denied denied denied denied denied ok"},
	{"seatghor.partner.v1.AllocationService/ReleaseAllocation", func(w *authzWorld, _ caller) proto.Message {
		return &partnerv1.ReleaseAllocationRequest{AllocationId: w.freshAllocation()}
	}, "unauth denied denied denied ok denied denied denied denied denied denied ok"},
	{"seatghor.partner.v1.AllocationService/ListAllocations", func(w *authzWorld, _ caller) proto.Message {
		return &partnerv1.ListAllocationsRequest{ShowId: w.bulk}
	}, "unauth denied denied denied ok denied denied ok ok ok ok ok"},

	// Webhook endpoints of the partner.
	{"seatghor.partner.v1.WebhookService/CreateEndpoint", func(w *authzWorld, c caller) proto.Message {
		w.pruneEndpoints()
		return &partnerv1.CreateEndpointRequest{PartnerId: w.partnerID, Url: "https://hooks.partner-a.example/" + callerNames[c],
			EventTypes: []string{"booking.confirmed"}}
	}, "unauth denied denied denied denied denied denied denied denied ok denied ok"},
	{"seatghor.partner.v1.WebhookService/ListEndpoints", func(*authzWorld, caller) proto.Message {
		return &partnerv1.ListEndpointsRequest{}
	}, "unauth denied denied denied denied denied denied ok ok ok ok ok"},
	{"seatghor.partner.v1.WebhookService/DisableEndpoint", func(w *authzWorld, _ caller) proto.Message {
		return &partnerv1.DisableEndpointRequest{EndpointId: w.freshEndpoint()}
	}, "unauth denied denied denied denied denied denied denied denied ok denied ok"},
	{"seatghor.partner.v1.WebhookService/DeleteEndpoint", func(w *authzWorld, _ caller) proto.Message {
		return &partnerv1.DeleteEndpointRequest{EndpointId: w.freshEndpoint()}
	}, "unauth denied denied denied denied denied denied denied denied ok denied ok"},
	{"seatghor.partner.v1.WebhookService/RotateEndpointSecret", func(w *authzWorld, _ caller) proto.Message {
		return &partnerv1.RotateEndpointSecretRequest{EndpointId: w.endpointID}
	}, "unauth denied denied denied denied denied denied denied denied ok denied ok"},
	{"seatghor.partner.v1.WebhookService/EnableEndpoint", func(w *authzWorld, _ caller) proto.Message {
		return &partnerv1.EnableEndpointRequest{EndpointId: w.endpointID}
	}, "unauth denied denied denied denied denied denied denied denied ok denied ok"},
	{"seatghor.partner.v1.WebhookService/ListDeliveries", func(w *authzWorld, _ caller) proto.Message {
		return &partnerv1.ListDeliveriesRequest{EndpointId: w.endpointID}
	}, "unauth denied denied denied denied denied denied ok ok ok notfound ok"},
	{"seatghor.partner.v1.WebhookService/ReplayDeliveries", func(w *authzWorld, _ caller) proto.Message {
		return &partnerv1.ReplayDeliveriesRequest{EndpointId: w.endpointID, Which: &partnerv1.ReplayDeliveriesRequest_EventId{EventId: "evt_none"}}
	}, "unauth denied denied denied denied denied denied denied denied ok denied ok"},

	// Layout templates (decision 0372): shipped ones any operator reads;
	// an organisation's its managers and admins.
	{"seatghor.catalog.v1.CatalogService/CreateLayoutTemplate", func(w *authzWorld, c caller) proto.Message {
		return &catalogv1.CreateLayoutTemplateRequest{Template: matrixTemplate("tpl-" + callerNames[c])}
	}, "unauth denied denied denied ok denied denied denied denied denied denied ok"},
	{"seatghor.catalog.v1.CatalogService/UpdateLayoutTemplate", func(_ *authzWorld, c caller) proto.Message {
		t := matrixTemplate("matrix-coach")
		t.Name = "Mini, renamed by " + callerNames[c]
		return &catalogv1.UpdateLayoutTemplateRequest{Template: t}
	}, "unauth denied denied denied ok denied denied denied denied denied denied ok"},
	{"seatghor.catalog.v1.CatalogService/GetLayoutTemplate", func(*authzWorld, caller) proto.Message {
		return &catalogv1.GetLayoutTemplateRequest{OrganizationId: "org-a", TemplateId: "matrix-coach"}
	}, "unauth denied denied denied ok denied denied denied denied denied denied ok"},
	{"seatghor.catalog.v1.CatalogService/ListLayoutTemplates", func(*authzWorld, caller) proto.Message {
		return &catalogv1.ListLayoutTemplatesRequest{OrganizationId: "org-a"}
	}, "unauth denied denied denied ok denied denied denied denied denied denied ok"},

	// The bus network (decision 0360): an organisation's routes and
	// timetables are its managers' and admins'.
	{"seatghor.network.v1.NetworkService/CreateRoute", func(_ *authzWorld, c caller) proto.Message {
		return networkRoute("route-"+callerNames[c], "org-a")
	}, "unauth denied denied denied ok denied denied denied denied denied denied ok"},
	{"seatghor.network.v1.NetworkService/GetRoute", func(*authzWorld, caller) proto.Message {
		return &networkv1.GetRouteRequest{RouteId: "matrix-route"}
	}, "unauth denied denied denied ok denied denied denied denied denied denied ok"},
	{"seatghor.network.v1.NetworkService/ListRoutes", func(*authzWorld, caller) proto.Message {
		return &networkv1.ListRoutesRequest{OrganizationId: "org-a"}
	}, "unauth denied denied denied ok denied denied denied denied denied denied ok"},
	{"seatghor.network.v1.NetworkService/UpdateRoute", func(*authzWorld, caller) proto.Message {
		return &networkv1.UpdateRouteRequest{RouteId: "matrix-route", Name: "Night to Sylhet", Stops: networkRoute("matrix-route", "org-a").GetStops()}
	}, "unauth denied denied denied ok denied denied denied denied denied denied ok"},
	{"seatghor.network.v1.NetworkService/CreateTimetable", func(_ *authzWorld, c caller) proto.Message {
		return &networkv1.CreateTimetableRequest{Timetable: networkTimetable("tt-"+callerNames[c], "matrix-route")}
	}, "unauth denied denied denied ok denied denied denied denied denied denied ok"},
	{"seatghor.network.v1.NetworkService/GetTimetable", func(*authzWorld, caller) proto.Message {
		return &networkv1.GetTimetableRequest{TimetableId: "matrix-night"}
	}, "unauth denied denied denied ok denied denied denied denied denied denied ok"},
	{"seatghor.network.v1.NetworkService/ListTimetables", func(*authzWorld, caller) proto.Message {
		return &networkv1.ListTimetablesRequest{OrganizationId: "org-a"}
	}, "unauth denied denied denied ok denied denied denied denied denied denied ok"},
	{"seatghor.network.v1.NetworkService/UpdateTimetable", func(*authzWorld, caller) proto.Message {
		return &networkv1.UpdateTimetableRequest{Timetable: networkTimetable("matrix-night", "matrix-route")}
	}, "unauth denied denied denied ok denied denied denied denied denied denied ok"},
	{"seatghor.network.v1.NetworkService/RunTimetables", func(*authzWorld, caller) proto.Message {
		return &networkv1.RunTimetablesRequest{OrganizationId: "org-a", TimetableIds: []string{"matrix-night"}, Days: 1}
	}, "unauth denied denied denied ok denied denied denied denied denied denied ok"},
}

// authzWorld is the platform and the things the rows' requests name: a show
// of organisation "org-a" (its manager and gate staff are callers), a
// partner allowed to sell it with a key of each scope, and the owner's
// hold, order, payment and ticket.
type authzWorld struct {
	t     *testing.T
	env   *apptest.Env
	creds [callers]string
	// phones counts the numbers sign-in codes went to: a new one a call,
	// so that no number's resend limit answers.
	phones int

	show, saleShow int64
	partnerID      int64
	otherPartnerID int64

	// bulk is the show fresh holds take their seats from, and next the
	// number of seats taken of it: a new one every bulkSeats, so that no
	// account reaches its cap.
	bulk int64
	next int
	// paidShow is a show with a paid order, so its operator is owed money.
	paidShow int64

	hold, order, paymentID, ticketID string
	// phoneOrder is a paid order whose tickets went to matrixPhone.
	phoneOrder string
	endpointID int64
	// shiftID is manager-a's open counter shift ("": none), and shifts
	// counts the shifts opened.
	shiftID      string
	shifts       int
	allocationID string
	queueToken   string
}

const bulkSeats = 80

func newAuthzWorld(t *testing.T) *authzWorld {
	t.Helper()
	r := redistest.New(t)
	env := apptest.New(t, apptest.Options{Shards: 2, RedisURL: r.URL, RedisPrefix: r.Prefix, Tickets: true, Projectors: true,
		TripIndex: app.TripIndexConfig{Dir: t.TempDir()}, Payments: payment.Config{RefundApprovalMinor: 50000}})
	w := &authzWorld{t: t, env: env}
	env.Member(t, "org-a", "gate-a", catalog.RoleGate)
	env.Member(t, "org-a", "manager-a", catalog.RoleManager)
	env.Member(t, "org-b", "manager-b", catalog.RoleManager)
	env.Member(t, "org-b", "gate-b", catalog.RoleGate)

	w.creds[owner] = env.Token(t, "owner", auth.RoleUser)
	w.creds[otherBuyer] = env.Token(t, "other-buyer", auth.RoleUser)
	w.creds[gateStaff] = env.Token(t, "gate-a", auth.RoleOperator)
	w.creds[manager] = env.Token(t, "manager-a", auth.RoleOperator)
	w.creds[otherManager] = env.Token(t, "manager-b", auth.RoleOperator)
	w.creds[otherGate] = env.Token(t, "gate-b", auth.RoleOperator)
	w.creds[admin] = env.Token(t, "admin", auth.RoleAdmin)

	w.partnerID = newPartner(t, env, "Partner A", 500).GetPartnerId()
	w.otherPartnerID = newPartner(t, env, "Partner B", 500).GetPartnerId()
	w.creds[keyReadOnly] = newAPIKey(t, env, w.partnerID, partnerv1.ApiKeyScope_API_KEY_SCOPE_READ_ONLY).GetSecret()
	w.creds[keyBooking] = newAPIKey(t, env, w.partnerID, partnerv1.ApiKeyScope_API_KEY_SCOPE_BOOKING).GetSecret()
	w.creds[keyWebhooks] = newAPIKey(t, env, w.partnerID, partnerv1.ApiKeyScope_API_KEY_SCOPE_WEBHOOKS).GetSecret()
	w.creds[otherPartner] = newAPIKey(t, env, w.otherPartnerID, partnerv1.ApiKeyScope_API_KEY_SCOPE_BOOKING).GetSecret()

	w.show = w.newShow("Matrix night", nil)
	w.saleShow = w.newShow("Matrix on-sale", &catalogv1.WaitingRoom{Enabled: true})
	w.hold = w.freshHold()
	w.order = w.freshOrder()
	o, p := w.freshPaid()
	w.paymentID = p
	w.ticketID, _ = ticket.ID(o, 1)
	w.phoneOrder = w.freshPhoneOrder()
	w.endpointID = w.freshEndpoint()
	w.allocationID = w.freshAllocation()
	w.queueToken = w.join()
	// org-a's bus network: a template, a route and its timetable.
	w.must(manager, "seatghor.catalog.v1.CatalogService/CreateLayoutTemplate",
		&catalogv1.CreateLayoutTemplateRequest{Template: matrixTemplate("matrix-coach")}, &catalogv1.CreateLayoutTemplateResponse{})
	w.must(manager, "seatghor.network.v1.NetworkService/CreateRoute", networkRoute("matrix-route", "org-a"), &networkv1.CreateRouteResponse{})
	w.must(manager, "seatghor.network.v1.NetworkService/CreateTimetable",
		&networkv1.CreateTimetableRequest{Timetable: networkTimetable("matrix-night", "matrix-route")}, &networkv1.CreateTimetableResponse{})
	return w
}

// matrixTemplate is a three-seat coach template of org-a.
func matrixTemplate(id string) *catalogv1.LayoutTemplate {
	return &catalogv1.LayoutTemplate{TemplateId: id, OrganizationId: "org-a", Name: "Mini", NameBn: "মিনি",
		Layout: &catalogv1.Layout{
			Sections: []*catalogv1.LayoutSection{{Name: "Economy", SeatClass: "economy", PriceMinor: 40000,
				Rows: []*catalogv1.LayoutRow{{Label: "A", Seats: []*catalogv1.LayoutSeat{{Seat: "A1", X: 5, Y: 25}, {Seat: "A2", X: 25, Y: 25}, {Seat: "A3", X: 35, Y: 25}}}}}},
			Features: []*catalogv1.LayoutFeature{{Kind: catalogv1.FeatureKind_FEATURE_KIND_DRIVER, X: 33, Y: 8, Width: 12, Height: 10}},
		}}
}

// newShow creates a seated show of org-a as its manager.
func (w *authzWorld) newShow(title string, room *catalogv1.WaitingRoom) int64 {
	w.t.Helper()
	return w.createShow(title, room, false)
}

// newDraft is manager-a's new draft of org-a.
func (w *authzWorld) newDraft(title string) int64 {
	w.t.Helper()
	return w.createShow(title, nil, true)
}

func (w *authzWorld) createShow(title string, room *catalogv1.WaitingRoom, draft bool) int64 {
	w.t.Helper()
	req := seatedShow(title, 20, 20)
	req.Draft = draft
	req.OrganizationId = "org-a"
	req.MaxSeatsPerAccount = 100
	req.WaitingRoom = room
	if room != nil {
		req.OnSaleAt = timestamppb.New(time.Now().Add(24 * time.Hour))
	}
	var resp catalogv1.CreateShowResponse
	w.must(manager, "seatghor.catalog.v1.CatalogService/CreateShow", req, &resp)
	return resp.GetShow().GetShowId()
}

// boardingTrip is a new coach of org-a leaving in ten minutes: its
// supervisors may mark it gone (decision 0468).
func (w *authzWorld) boardingTrip(title string) int64 {
	w.t.Helper()
	req := tripShow(title, 2, 0, "Dhaka", "Cumilla")
	req.OrganizationId = "org-a"
	req.OnSaleAt = timestamppb.New(time.Now().Add(-time.Hour))
	req.StartsAt = timestamppb.New(time.Now().Add(10 * time.Minute))
	var resp catalogv1.CreateShowResponse
	w.must(manager, "seatghor.catalog.v1.CatalogService/CreateShow", req, &resp)
	return resp.GetShow().GetShowId()
}

// closeShifts closes manager-a's open counter shifts behind the API's back,
// so that a new one may open.
func (w *authzWorld) closeShifts() {
	w.t.Helper()
	_, err := w.env.App.Router.Catalog().Exec(w.t.Context(), `
		UPDATE counter_shifts SET closed_at = now(), counted_minor = 0 WHERE user_id = 'manager-a' AND closed_at IS NULL`)
	require.NoError(w.t, err)
	w.shiftID = ""
}

// counterShift is manager-a's open shift at a counter of org-a, opened
// when there is none.
func (w *authzWorld) counterShift() string {
	w.t.Helper()
	if w.shiftID != "" {
		return w.shiftID
	}
	w.closeShifts()
	w.shifts++
	var resp counterv1.OpenShiftResponse
	w.must(manager, "seatghor.counter.v1.CounterService/OpenShift", &counterv1.OpenShiftRequest{OrganizationId: "org-a",
		CounterId: fmt.Sprintf("matrix-%d", w.shifts)}, &resp)
	w.shiftID = resp.GetShift().GetShiftId()
	return w.shiftID
}

// cashOrder is an order sold for cash in manager-a's shift.
func (w *authzWorld) cashOrder() string {
	w.t.Helper()
	show, seat := w.seat()
	var resp counterv1.SellTicketsResponse
	w.must(manager, "seatghor.counter.v1.CounterService/SellTickets", &counterv1.SellTicketsRequest{ShiftId: w.counterShift(),
		ShowId: show, Seats: []string{seat}, Contact: &commonv1.Contact{Phone: matrixPhone}}, &resp)
	return resp.GetOrder().GetOrderId()
}

// seat is a seat of the bulk show no one has taken yet.
func (w *authzWorld) seat() (int64, string) {
	if w.bulk == 0 || w.next == bulkSeats {
		w.bulk, w.next = w.newShow("Matrix bulk", nil), 0
	}
	w.next++
	return w.bulk, fmt.Sprintf("%s%d", rowsAZ(20)[(w.next-1)/20], (w.next-1)%20+1)
}

func (w *authzWorld) freshHold() string {
	show, seat := w.seat()
	var resp bookingv1.CreateHoldResponse
	w.must(owner, "seatghor.booking.v1.HoldService/CreateHold", &bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{seat}}, &resp)
	return resp.GetHold().GetHoldId()
}

func (w *authzWorld) freshOrder() string {
	var resp bookingv1.CreateOrderResponse
	w.must(owner, "seatghor.booking.v1.OrderService/CreateOrder", &bookingv1.CreateOrderRequest{HoldId: w.freshHold()}, &resp)
	return resp.GetOrder().GetOrderId()
}

// freshPaid is a paid order of the owner and its payment.
func (w *authzWorld) freshPaid() (order, paymentID string) {
	order = w.freshOrder()
	w.paidShow = w.bulk
	var resp paymentv1.StartPaymentResponse
	w.must(owner, "seatghor.payment.v1.PaymentService/StartPayment",
		&paymentv1.StartPaymentRequest{OrderId: order, Sandbox: &paymentv1.SandboxPayment{Token: "tok_success"}}, &resp)
	require.Equal(w.t, paymentv1.PaymentState_PAYMENT_STATE_SUCCEEDED, resp.GetPayment().GetStatus())
	return order, resp.GetPayment().GetPaymentId()
}

// matrixPhone is the number the world's orders with a phone give.
const matrixPhone = "01711-000777"

// freshPhoneOrder is a paid order of the owner with matrixPhone as its
// contact, once "my tickets" and the notifications have it.
func (w *authzWorld) freshPhoneOrder() string {
	var order bookingv1.CreateOrderResponse
	w.must(owner, "seatghor.booking.v1.OrderService/CreateOrder", &bookingv1.CreateOrderRequest{HoldId: w.freshHold(),
		Contact: &commonv1.Contact{Phone: matrixPhone}}, &order)
	id := order.GetOrder().GetOrderId()
	var resp paymentv1.StartPaymentResponse
	w.must(owner, "seatghor.payment.v1.PaymentService/StartPayment",
		&paymentv1.StartPaymentRequest{OrderId: id, Sandbox: &paymentv1.SandboxPayment{Token: "tok_success"}}, &resp)
	w.env.WaitProjected(w.t, mytickets.Name)
	w.env.WaitProjected(w.t, notifications.Name)
	return id
}

// pruneEndpoints deletes the partner's endpoints but the world's own, so
// that fresh ones stay under the partner's cap (decision 0278).
func (w *authzWorld) pruneEndpoints() {
	var list partnerv1.ListEndpointsResponse
	w.must(admin, "seatghor.partner.v1.WebhookService/ListEndpoints", &partnerv1.ListEndpointsRequest{PartnerId: w.partnerID}, &list)
	for _, e := range list.GetEndpoints() {
		if e.GetEndpointId() != w.endpointID {
			var gone partnerv1.DeleteEndpointResponse
			w.must(admin, "seatghor.partner.v1.WebhookService/DeleteEndpoint", &partnerv1.DeleteEndpointRequest{EndpointId: e.GetEndpointId()}, &gone)
		}
	}
}

func (w *authzWorld) freshEndpoint() int64 {
	if w.endpointID != 0 {
		w.pruneEndpoints()
	}
	var resp partnerv1.CreateEndpointResponse
	w.must(keyWebhooks, "seatghor.partner.v1.WebhookService/CreateEndpoint", &partnerv1.CreateEndpointRequest{
		Url: "https://hooks.partner-a.example/seatghor", EventTypes: []string{"booking.confirmed"}}, &resp)
	return resp.GetEndpoint().GetEndpointId()
}

func (w *authzWorld) freshAllocation() string {
	show, seat := w.seat()
	var resp partnerv1.AllocateSeatsResponse
	w.must(admin, "seatghor.partner.v1.AllocationService/AllocateSeats", &partnerv1.AllocateSeatsRequest{
		ShowId: show, PartnerId: w.partnerID, Seats: []string{seat}, ReturnAt: timestamppb.New(time.Now().Add(time.Hour))}, &resp)
	return resp.GetAllocation().GetAllocationId()
}

func (w *authzWorld) freshAPIKey() string {
	return newAPIKey(w.t, w.env, w.partnerID, partnerv1.ApiKeyScope_API_KEY_SCOPE_READ_ONLY).GetApiKey().GetKeyId()
}

// freshRefund is a refund of a fresh payment waiting for a second admin.
func (w *authzWorld) freshRefund() string {
	_, p := w.freshPaid()
	var resp paymentv1.RefundPaymentResponse
	req := &paymentv1.RefundPaymentRequest{PaymentId: p, AmountMinor: 85000, Note: "matrix"}
	code, body := w.call(w.env.Token(w.t, "admin-asking", auth.RoleAdmin), "seatghor.payment.v1.PaymentService/RefundPayment", req)
	require.Equal(w.t, connect.Code(0), code, "%s", body)
	require.NoError(w.t, protojson.Unmarshal(body, &resp))
	require.Equal(w.t, paymentv1.RefundStatus_REFUND_STATUS_AWAITING_APPROVAL, resp.GetRefund().GetStatus())
	return resp.GetRefund().GetRefundId()
}

func (w *authzWorld) join() string {
	var resp waitingroomv1.JoinResponse
	w.must(owner, "seatghor.waitingroom.v1.WaitingRoomService/Join", &waitingroomv1.JoinRequest{ShowId: w.saleShow}, &resp)
	return resp.GetToken()
}

// must calls procedure as c and decodes the answer into out.
func (w *authzWorld) must(c caller, procedure string, req proto.Message, out proto.Message) {
	w.t.Helper()
	code, body := w.call(w.creds[c], procedure, req)
	require.Equal(w.t, connect.Code(0), code, "%s as %s: %s", procedure, callerNames[c], body)
	require.NoError(w.t, protojson.Unmarshal(body, out))
}

// call sends req to procedure over Connect (JSON) with credential as its
// bearer and a fresh idempotency key, and answers the code and the body.
func (w *authzWorld) call(credential, procedure string, req proto.Message) (connect.Code, []byte) {
	w.t.Helper()
	body, err := protojson.Marshal(req)
	require.NoError(w.t, err)
	r, err := http.NewRequest(http.MethodPost, w.env.URL+"/"+procedure, bytes.NewReader(body))
	require.NoError(w.t, err)
	r.Header.Set("Content-Type", "application/json")
	return w.send(r, credential, connectCode)
}

// stream sends req to a server-streaming procedure over Connect's
// streaming protocol (JSON, enveloped) and answers the code the stream
// ended with and its messages, read whole.
func (w *authzWorld) stream(credential, procedure string, req proto.Message) (connect.Code, []byte) {
	w.t.Helper()
	body, err := protojson.Marshal(req)
	require.NoError(w.t, err)
	envelope := binary.BigEndian.AppendUint32([]byte{0}, uint32(len(body)))
	r, err := http.NewRequest(http.MethodPost, w.env.URL+"/"+procedure, bytes.NewReader(append(envelope, body...)))
	require.NoError(w.t, err)
	r.Header.Set("Content-Type", "application/connect+json")
	return w.send(r, credential, func(status int, b []byte) connect.Code {
		if status != http.StatusOK {
			return connect.CodeUnknown
		}
		for len(b) >= 5 {
			flags, n := b[0], binary.BigEndian.Uint32(b[1:5])
			require.GreaterOrEqual(w.t, uint32(len(b)-5), n, "a whole envelope")
			msg := b[5 : 5+n]
			b = b[5+n:]
			if flags&0x02 == 0 { // a message; the last envelope ends the stream
				continue
			}
			var end struct {
				Error *struct {
					Code string `json:"code"`
				} `json:"error"`
			}
			require.NoError(w.t, json.Unmarshal(msg, &end))
			if end.Error == nil {
				return 0
			}
			var c connect.Code
			if c.UnmarshalText([]byte(end.Error.Code)) != nil {
				return connect.CodeUnknown
			}
			return c
		}
		return connect.CodeUnknown // no end of stream
	})
}

// rest sends req to the REST route of method as credential.
func (w *authzWorld) rest(credential string, method protoreflect.MethodDescriptor, req proto.Message) (connect.Code, []byte) {
	w.t.Helper()
	rule := proto.GetExtension(method.Options(), annotations.E_Http).(*annotations.HttpRule)
	verb, path := http.MethodGet, rule.GetGet()
	if rule.GetPost() != "" {
		verb, path = http.MethodPost, rule.GetPost()
	} else if rule.GetDelete() != "" {
		verb, path = http.MethodDelete, rule.GetDelete()
	}
	fields, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(req)
	require.NoError(w.t, err)
	var values map[string]json.RawMessage
	require.NoError(w.t, json.Unmarshal(fields, &values))
	for name, v := range values { // path variables
		if strings.Contains(path, "{"+name+"}") {
			var s string
			if json.Unmarshal(v, &s) != nil {
				s = string(v)
			}
			path = strings.ReplaceAll(path, "{"+name+"}", url.PathEscape(s))
			delete(values, name)
		}
	}
	var body io.Reader
	switch {
	case rule.GetBody() == "*":
		b, err := json.Marshal(values)
		require.NoError(w.t, err)
		body = bytes.NewReader(b)
	case len(values) > 0:
		q := url.Values{}
		for name, v := range values {
			var s string
			if json.Unmarshal(v, &s) != nil {
				s = string(v)
			}
			q.Set(name, s)
		}
		path += "?" + q.Encode()
	}
	r, err := http.NewRequest(verb, w.env.URL+path, body)
	require.NoError(w.t, err)
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	return w.send(r, credential, restCode)
}

func (w *authzWorld) send(r *http.Request, credential string, code func(status int, body []byte) connect.Code) (connect.Code, []byte) {
	w.t.Helper()
	if credential != "" {
		r.Header.Set("Authorization", "Bearer "+credential)
	}
	r.Header.Set(keyHeader, newKey())
	resp, err := w.env.HTTP.Do(r)
	require.NoError(w.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(w.t, err)
	return code(resp.StatusCode, b), b
}

// connectCode reads a Connect answer's code (0 when it succeeded).
func connectCode(status int, body []byte) connect.Code {
	if status == http.StatusOK {
		return 0
	}
	var e struct {
		Code string `json:"code"`
	}
	var c connect.Code
	if json.Unmarshal(body, &e) != nil || c.UnmarshalText([]byte(e.Code)) != nil {
		return connect.CodeUnknown
	}
	return c
}

// restCode reads a REST answer's code: a google.rpc.Status's.
func restCode(status int, body []byte) connect.Code {
	if status == http.StatusOK {
		return 0
	}
	var st struct {
		Code int `json:"code"`
	}
	if json.Unmarshal(body, &st) != nil || st.Code == 0 {
		return connect.CodeUnknown
	}
	return connect.Code(st.Code)
}

// servedMethods are every RPC of every service of the API (the registry
// holds what the server's handlers import).
func servedMethods(tb testing.TB) map[string]protoreflect.MethodDescriptor {
	out := map[string]protoreflect.MethodDescriptor{}
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if !strings.HasPrefix(string(fd.Package()), "seatghor.") {
			return true
		}
		for i := range fd.Services().Len() {
			sd := fd.Services().Get(i)
			for j := range sd.Methods().Len() {
				m := sd.Methods().Get(j)
				out[string(sd.FullName())+"/"+string(m.Name())] = m
			}
		}
		return true
	})
	require.NotEmpty(tb, out)
	return out
}

// TestAuthorizationMatrix runs every cell of authzMatrix against the real
// server, over Connect and over REST, and fails on any RPC the server
// serves without a row.
func TestAuthorizationMatrix(t *testing.T) {
	served := servedMethods(t)
	var rowless []string
	for name := range served {
		if !slices.ContainsFunc(authzMatrix, func(r authzRow) bool { return r.procedure == name }) {
			rowless = append(rowless, name)
		}
	}
	slices.Sort(rowless)
	if !*authzPrint {
		require.Empty(t, rowless, "every RPC needs its row in authzMatrix: who may call it")
	}

	w := newAuthzWorld(t)
	var printed strings.Builder
	for _, row := range authzMatrix {
		m, ok := served[row.procedure]
		require.True(t, ok, "%s is not served", row.procedure)
		want := strings.Fields(row.want)
		if !*authzPrint {
			require.Len(t, want, int(callers), "%s: one word per caller", row.procedure)
		}
		got := make([]string, callers)
		for c := range callers {
			call := w.call
			if m.IsStreamingServer() {
				call = w.stream
			}
			code, body := call(w.creds[c], row.procedure, row.request(w, c))
			got[c] = codeWords[code]
			if !*authzPrint {
				require.Equal(t, want[c], got[c], "%s as %s over Connect: %s", row.procedure, callerNames[c], body)
			}
			if rule, _ := proto.GetExtension(m.Options(), annotations.E_Http).(*annotations.HttpRule); rule.GetGet()+rule.GetPost()+rule.GetDelete() != "" {
				code, body := w.rest(w.creds[c], m, row.request(w, c))
				if *authzPrint && codeWords[code] != got[c] {
					got[c] += "/rest:" + codeWords[code]
				} else if !*authzPrint {
					require.Equal(t, want[c], codeWords[code], "%s as %s over REST: %s", row.procedure, callerNames[c], body)
				}
			}
		}
		fmt.Fprintf(&printed, "\t{%q, ..., %q},\n", row.procedure, strings.Join(got, " "))
	}
	if *authzPrint {
		t.Logf("columns: %s\n%s\nwithout a row: %v", strings.Join(callerNames[:], " "), printed.String(), rowless)
	}
}
