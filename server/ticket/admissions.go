package ticket

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/page"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/shard"
)

// Admission is one ticket of a show as the gate admits it: what a gate
// device keeps to admit with no network (docs/gate-offline.md).
type Admission struct {
	TicketID string
	Seat     string
	GAArea   string
	// Status is valid, checked_in, cancelled or refunded.
	Status        Status
	CheckedInAt   time.Time
	CheckedInGate string
	// BoardingStopID is, on a trip with stops, the stop the ticket's
	// journey boards at: a device at another stop refuses it.
	BoardingStopID string
}

// AdmissionPage is one page of a show's admission list.
type AdmissionPage struct {
	Admissions    []Admission
	NextPageToken string
	// ServerTime is when the page was read, by the server's clock: a
	// device measures its clock's offset from it.
	ServerTime    time.Time
	AdmittedCount int64
}

// The admission list's pages, in orders.
const (
	defaultAdmissionPage = 1000
	maxAdmissionPage     = 5000
)

// gatePool returns the shard of show showID once c may check its tickets
// in (CheckIn's rule: an admin, or a manager or gate staff of the show's
// organisation, decision 0075); an unknown show is not found.
func (s *Service) gatePool(ctx context.Context, c Caller, showID int64) (*pg.Pool, error) {
	if !c.Admin && !c.Operator {
		return nil, fault.New(fault.GateForbidden, "only the show's operator (its organization's managers and gate staff) or an admin works its gates")
	}
	ok, err := s.checksIn(ctx, c, showID)
	if errors.Is(err, shard.ErrUnknownShow) {
		return nil, fault.New(fault.ShowNotFound, "show %d not found", showID)
	}
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fault.New(fault.GateForbidden, "show %d is not yours to check in", showID)
	}
	return s.router.ForShow(ctx, showID)
}

// AdmissionList returns a page of show showID's admission list: every
// ticket of its confirmed, cancelled and refunded orders, in order id
// order, pageSize orders a page (default 1,000), with each ticket's
// check-in. Its callers are CheckIn's.
func (s *Service) AdmissionList(ctx context.Context, c Caller, showID int64, pageSize int, pageToken string) (AdmissionPage, error) {
	pool, err := s.gatePool(ctx, c, showID)
	if err != nil {
		return AdmissionPage{}, err
	}
	after := ""
	if cur, ok, err := page.Decode(pageToken); err != nil {
		return AdmissionPage{}, err
	} else if ok {
		after = cur.ID
	}
	if pageSize <= 0 {
		pageSize = defaultAdmissionPage
	}
	pageSize = min(pageSize, maxAdmissionPage)
	out := AdmissionPage{ServerTime: s.clock.Now().UTC()}
	entries, err := booking.ListEntries(ctx, pool, showID, after, pageSize+1)
	if err != nil {
		return AdmissionPage{}, err
	}
	if len(entries) > pageSize {
		entries = entries[:pageSize]
		out.NextPageToken = page.Encode(page.Cursor{ID: entries[len(entries)-1].OrderID})
	}
	stops, err := booking.StopIDs(ctx, pool, showID)
	if err != nil {
		return AdmissionPage{}, err
	}
	orders := make([]string, len(entries))
	for i, e := range entries {
		orders[i] = e.OrderID
	}
	type checkin struct {
		at   time.Time
		gate string
	}
	checkins := map[string]checkin{}
	rows, err := pool.Query(ctx, `SELECT ticket_id, checked_in_at, gate FROM ticket_checkins WHERE order_id = ANY($1)`, orders)
	if err != nil {
		return AdmissionPage{}, fmt.Errorf("read check-ins of show %d: %w", showID, err)
	}
	for rows.Next() {
		var id string
		var ci checkin
		if err := rows.Scan(&id, &ci.at, &ci.gate); err != nil {
			rows.Close()
			return AdmissionPage{}, fmt.Errorf("read check-ins of show %d: %w", showID, err)
		}
		checkins[id] = ci
	}
	if err := rows.Err(); err != nil {
		return AdmissionPage{}, fmt.Errorf("read check-ins of show %d: %w", showID, err)
	}
	for _, e := range entries {
		n := max(len(e.Seats), e.Quantity)
		for i := range n {
			id, err := ID(e.OrderID, i+1)
			if err != nil {
				return AdmissionPage{}, err
			}
			a := Admission{TicketID: id, Status: StatusValid}
			if e.Journey.From < len(stops) {
				a.BoardingStopID = stops[e.Journey.From]
			}
			if len(e.Seats) > 0 {
				a.Seat = e.Seats[i]
			} else {
				a.GAArea = e.GAArea
			}
			switch e.Status {
			case booking.OrderCancelled:
				a.Status = StatusCancelled
			case booking.OrderRefunded:
				a.Status = StatusRefunded
			}
			if ci, ok := checkins[id]; ok && a.Status == StatusValid {
				a.Status, a.CheckedInAt, a.CheckedInGate = StatusCheckedIn, ci.at.UTC(), ci.gate
			}
			out.Admissions = append(out.Admissions, a)
		}
	}
	if out.AdmittedCount, err = admittedCount(ctx, pool, showID); err != nil {
		return AdmissionPage{}, err
	}
	return out, nil
}

// rowQuerier reads one row: a pool or a transaction.
type rowQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// admittedCount is how many tickets of show showID are checked in.
func admittedCount(ctx context.Context, q rowQuerier, showID int64) (int64, error) {
	var n int64
	if err := q.QueryRow(ctx, `SELECT count(*) FROM ticket_checkins WHERE show_id = $1`, showID).Scan(&n); err != nil {
		return 0, fmt.Errorf("count check-ins of show %d: %w", showID, err)
	}
	return n, nil
}
