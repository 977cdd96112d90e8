package ticket

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/types/known/timestamppb"

	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	eventsv1 "github.com/seatghor/seatghor/gen/seatghor/events/v1"
	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/idempotency"
	"github.com/seatghor/seatghor/server/outbox"
	"github.com/seatghor/seatghor/server/shard"
)

// Errors lists the sentinel errors of ticket that reach the API; it answers
// each by its reason (docs/errors.md).
var Errors = []error{ErrNotFound, ErrBadPageToken, ErrBadCode}

// errorCodec records the answers a check-in makes for its request with the
// idempotency key (decision 0318); the kinds are those of ticket's own error
// type before, so that the answers recorded then replay.
var errorCodec = idempotency.Faults("ticket",
	[]fault.Reason{fault.TicketNotFound, fault.TicketNotAdmissible, fault.GateForbidden, fault.TicketIDInvalid,
		fault.TicketBoardsElsewhere},
	map[string]fault.Reason{"not_found": fault.TicketNotFound, "precondition": fault.TicketNotAdmissible,
		"permission": fault.GateForbidden, "invalid": fault.TicketIDInvalid})

// Caller is who scans: the token subject and their role.
type Caller struct {
	UserID   string
	Admin    bool
	Operator bool
}

// Members answers whether a user has one of roles in an organisation
// (catalog.Service.HasRole).
type Members interface {
	HasRole(ctx context.Context, orgID, userID string, roles ...catalog.Role) (bool, error)
}

// Service checks tickets in at the gate.
type Service struct {
	router  *shard.Router
	codes   *Codes
	members Members
	clock   clock.Clock
}

// NewService returns the check-in service; members says who works for the
// organisation that runs a show.
func NewService(router *shard.Router, codes *Codes, members Members, clk clock.Clock) *Service {
	return &Service{router: router, codes: codes, members: members, clock: clk}
}

// Codes returns the service's code signer.
func (s *Service) Codes() *Codes { return s.codes }

// Scan is one scan at the gate of a show: a QR code, or a ticket id typed
// in by hand.
type Scan struct {
	ShowID   int64
	Code     string
	TicketID string
	Gate     string
	// StopID is the stop of a trip with stops the gate stands at: a
	// ticket boarding elsewhere is refused (decision 0384). "": any stop.
	StopID string
}

// Status is where a ticket is, as the gate sees it.
type Status string

// The statuses a scan answers.
const (
	StatusValid     Status = "valid"
	StatusCheckedIn Status = "checked_in"
)

// Result is the answer to a scan.
type Result struct {
	Ticket        Ticket    `json:"ticket"`
	Status        Status    `json:"status"`
	CheckedInAt   time.Time `json:"checked_in_at"`
	CheckedInGate string    `json:"checked_in_gate,omitempty"`
	// TimeZone is the show's IANA zone, in which the gate reads
	// CheckedInAt (decision 0170).
	TimeZone string `json:"time_zone,omitempty"`
	// Admitted: this scan checked the ticket in; let the holder in.
	Admitted bool `json:"admitted"`
	// AlreadyCheckedIn: an earlier scan did (at CheckedInAt).
	AlreadyCheckedIn bool `json:"already_checked_in"`
	// AdmittedCount is how many tickets of the show are checked in, this
	// scan included: the gate's running count.
	AdmittedCount int64 `json:"admitted_count"`
}

// CheckIn admits a ticket at the gate of its show, once. Only an admin or a
// member of the show's organisation (a manager or gate staff, decision 0075)
// may scan; the organisation is the shard's copy of the show's. The code's signature is checked before the
// database is asked; the verdict is the shard's conditional insert,
// in one transaction with the TicketCheckedIn event and the
// request's idempotency record, so a retried scan gets the first
// answer.
func (s *Service) CheckIn(ctx context.Context, c Caller, in Scan) (Result, error) {
	if !c.Admin && !c.Operator {
		return Result{}, fault.New(fault.GateForbidden, "only the show's operator (its organization's managers and gate staff) or an admin checks tickets in")
	}
	// Decision 0298: a person types the printed id in any letter case and
	// with spaces around it; the id's alphabet is lower case, so this is
	// the one spelling (decision 0066) again, not another.
	ticketID, place := strings.ToLower(strings.TrimSpace(in.TicketID)), ""
	if in.Code != "" {
		var err error
		if ticketID, place, err = s.codes.Verify(in.Code); err != nil {
			return Result{}, fault.New(fault.TicketNotFound, "ticket code not recognised")
		}
	}
	// Decision 0066: a ticket has one spelling, the one ID writes and the
	// code carries; any other ("…_0001", "…_+01", "…_1") is refused, so
	// the check-in row is keyed by the one id and a second scan finds it.
	showID, orderID, position, err := Parse(ticketID)
	if err != nil && in.Code != "" {
		return Result{}, fault.New(fault.TicketNotFound, "ticket code not recognised")
	}
	if err != nil {
		return Result{}, &fault.Error{Reason: fault.TicketIDInvalid, Field: "ticket_id",
			Message: fmt.Sprintf("ticket_id %q is not a ticket id; type it as printed: tkt_<show>_<16 characters>_<3 digits>", ticketID)}
	}
	pool, err := s.router.ForShow(ctx, in.ShowID)
	if errors.Is(err, shard.ErrUnknownShow) {
		return Result{}, fault.New(fault.TicketNotFound, "show %d not found", in.ShowID)
	}
	if err != nil {
		return Result{}, err
	}
	// Who may scan is asked before the idempotency record is taken: a
	// refusal is not replayed to the same key once the clerk is added.
	if !c.Admin {
		ok, err := s.checksIn(ctx, c, in.ShowID)
		if errors.Is(err, shard.ErrUnknownShow) {
			return Result{}, fault.New(fault.TicketNotFound, "show %d not found", in.ShowID)
		}
		if err != nil {
			return Result{}, err
		}
		if !ok {
			return Result{}, fault.New(fault.GateForbidden, "show %d is not yours to check in", in.ShowID)
		}
	}
	// Decision 0297: a ticket of another show that the caller checks in too
	// names that show, so the gate can switch to it; a ticket of someone
	// else's show names nothing of it.
	other := int64(0)
	if showID != in.ShowID {
		ok, err := s.checksIn(ctx, c, showID)
		if err != nil && !errors.Is(err, shard.ErrUnknownShow) {
			return Result{}, err
		}
		if ok {
			other = showID
		}
	}
	now := s.clock.Now().UTC().Truncate(time.Microsecond)
	return idempotency.Do(ctx, pool, errorCodec, idempotency.Options{Now: now, Wait: 3 * time.Second, Target: idempotency.Show(in.ShowID)},
		func(tx pgx.Tx) (Result, error) {
			if showID != in.ShowID && other != 0 {
				return Result{}, &fault.Error{Reason: fault.TicketNotAdmissible, OtherShowID: other,
					Message: fmt.Sprintf("ticket %s is for show %d, not %d", ticketID, other, in.ShowID)}
			}
			if showID != in.ShowID {
				return Result{}, fault.New(fault.TicketNotAdmissible, "ticket %s is not for show %d", ticketID, in.ShowID)
			}
			return checkIn(ctx, tx, c, in, ticketID, orderID, position, place, now)
		})
}

// checksIn tells whether c may check in tickets of show showID: an admin
// any show that exists; an operator the shows of an organisation they are
// a manager or gate staff of (decision 0075), by the organisation of the
// shard's copy of the show. An unknown show is shard.ErrUnknownShow.
func (s *Service) checksIn(ctx context.Context, c Caller, showID int64) (bool, error) {
	pool, err := s.router.ForShow(ctx, showID)
	if err != nil {
		return false, err
	}
	if c.Admin {
		return true, nil
	}
	terms, err := catalog.ReadTerms(ctx, pool, showID)
	if errors.Is(err, catalog.ErrNotFound) {
		return false, fmt.Errorf("show %d: %w", showID, shard.ErrUnknownShow)
	}
	if err != nil {
		return false, err
	}
	return s.members.HasRole(ctx, terms.OrganizationID, c.UserID, catalog.RoleManager, catalog.RoleGate, catalog.RoleCounter)
}

func checkIn(ctx context.Context, tx pgx.Tx, c Caller, in Scan, ticketID, orderID string, position int,
	place string, now time.Time) (Result, error) {
	// The order's lock, shared: a cancellation (which locks the order FOR
	// UPDATE and asks OrderAdmitted) and a check-in of the same order take
	// turns, so a ticket is never admitted after its order was cancelled,
	// nor an order cancelled after one of its tickets was admitted
	// (decision 0065).
	e, err := booking.LockForEntry(ctx, tx, orderID, in.ShowID)
	if fault.ReasonOf(err) == fault.BookingNotFound {
		return Result{}, fault.New(fault.TicketNotFound, "ticket %s not found", ticketID)
	}
	if err != nil {
		return Result{}, err
	}
	status, user, area, currency, seats, quantity, total :=
		e.Status, e.UserID, e.GAArea, e.Currency, e.Seats, e.Quantity, e.TotalMinor
	t := Ticket{ID: ticketID, OrderID: orderID, ShowID: in.ShowID, UserID: user, Position: position, Currency: currency}
	switch {
	case len(seats) > 0 && position <= len(seats):
		t.Seat = seats[position-1]
		// The staff who scan see who travels on the seat, to match them
		// with their identity document; not their number (decision 0381).
		for _, p := range e.Passengers {
			if p.Seat == t.Seat {
				t.Passenger = Passenger{Name: p.Name, Woman: p.Woman}
			}
		}
	case len(seats) == 0 && position <= quantity:
		t.GAArea = area
	default:
		return Result{}, fault.New(fault.TicketNotFound, "ticket %s not found", ticketID)
	}
	if place != "" && place != t.Place() {
		return Result{}, fault.New(fault.TicketNotFound, "ticket %s not found", ticketID)
	}
	n := max(len(seats), quantity)
	t.PriceMinor = total / int64(n)
	if int64(position-1) < total%int64(n) {
		t.PriceMinor++
	}
	t.Code = "" // the gate has it; the answer does not repeat it
	res := Result{Ticket: t, Status: StatusValid}
	terms, err := catalog.ReadTerms(ctx, tx, in.ShowID)
	if err != nil {
		return Result{}, err
	}
	res.TimeZone = terms.TimeZone
	if status != booking.OrderConfirmed {
		if status == booking.OrderCancelled || status == booking.OrderRefunded {
			return Result{}, fault.New(fault.TicketNotAdmissible, "ticket %s is cancelled; not good for entry", ticketID)
		}
		return Result{}, fault.New(fault.TicketNotFound, "ticket %s not found", ticketID)
	}
	// A gate at a stop of a trip with stops boards only the tickets whose
	// journey starts there (decision 0384); the refusal says where the
	// ticket boards, for the staff to send the passenger on.
	if in.StopID != "" {
		if res.Ticket.Journey, err = booking.EntryJourney(ctx, tx, e); err != nil {
			return Result{}, err
		}
		if j := res.Ticket.Journey; j != nil && j.GetFromStopId() != in.StopID {
			return Result{}, fault.New(fault.TicketBoardsElsewhere, "ticket %s boards at %s, not at stop %q",
				ticketID, BoardsAt(j), in.StopID)
		}
	}
	tag, err := tx.Exec(ctx, `
		INSERT INTO ticket_checkins (ticket_id, show_id, order_id, seat, ga_area, gate, checked_in_by, checked_in_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (ticket_id) DO NOTHING`,
		ticketID, in.ShowID, orderID, t.Seat, t.GAArea, in.Gate, c.UserID, now)
	if err != nil {
		return Result{}, fmt.Errorf("check in ticket %s: %w", ticketID, err)
	}
	// Every gate of the show reads the same count, in the scan's own
	// transaction (an index-only count; shard migration 00090).
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM ticket_checkins WHERE show_id = $1`, in.ShowID).
		Scan(&res.AdmittedCount); err != nil {
		return Result{}, fmt.Errorf("count check-ins of show %d: %w", in.ShowID, err)
	}
	if tag.RowsAffected() == 1 {
		res.Status, res.Admitted, res.CheckedInAt, res.CheckedInGate = StatusCheckedIn, true, now, in.Gate
		return res, outbox.Append(ctx, tx, in.ShowID, now, &eventsv1.TicketCheckedIn{
			ShowId: in.ShowID, TicketId: ticketID, OrderId: orderID, UserId: user, Seat: t.Seat, GaArea: t.GAArea,
			Gate: in.Gate, CheckedInBy: c.UserID, OccurredAt: timestamppb.New(now),
		})
	}
	// a second scan says when (and where) the ticket was used.
	if err := tx.QueryRow(ctx, `SELECT checked_in_at, gate FROM ticket_checkins WHERE ticket_id = $1`, ticketID).
		Scan(&res.CheckedInAt, &res.CheckedInGate); err != nil {
		return Result{}, fmt.Errorf("read check-in of ticket %s: %w", ticketID, err)
	}
	res.CheckedInAt = res.CheckedInAt.UTC()
	res.Status, res.AlreadyCheckedIn = StatusCheckedIn, true
	return res, nil
}

// OrderAdmitted tells whether any ticket of order orderID has been checked
// in. It is the booking.AdmittedFunc a cancellation asks in its own
// transaction, under the order's lock (decision 0065): check-ins are this
// package's table, so nobody else reads it.
func OrderAdmitted(ctx context.Context, tx pgx.Tx, orderID string) (bool, error) {
	var admitted bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM ticket_checkins WHERE order_id = $1)`, orderID).
		Scan(&admitted); err != nil {
		return false, fmt.Errorf("read check-ins of order %s: %w", orderID, err)
	}
	return admitted, nil
}

// BoardsAt is where a journey boards, as the gate's refusal says it: the
// stop and its counter ("Dhaka, Kalabagan counter"), or the stop alone.
func BoardsAt(j *commonv1.Journey) string {
	name := j.GetBoardingCounterName()
	switch {
	case name == "":
		return j.GetFromName()
	case !strings.Contains(strings.ToLower(name), "counter"):
		name += " counter"
	}
	return j.GetFromName() + ", " + name
}
