package ticket

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/types/known/timestamppb"

	eventsv1 "github.com/seatghor/seatghor/gen/seatghor/events/v1"
	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/outbox"
	"github.com/seatghor/seatghor/server/pg"
)

// OfflineScan is one scan a gate device admitted with no network: a QR
// code or a ticket id typed in, and when, by the device's clock.
type OfflineScan struct {
	// ScanID is the device's own id of the scan: with the device's id, it
	// settles the scan once however often it is sent.
	ScanID    string
	Code      string
	TicketID  string
	ScannedAt time.Time
}

// Batch is what a device sends at a sync: its scans of one show.
type Batch struct {
	ShowID   int64
	DeviceID string
	Gate     string
	Scans    []OfflineScan
	// DeviceTime is the device's clock when it sent the batch.
	DeviceTime time.Time
	// ClockOffset is the server's clock minus the device's, as the device
	// measured it at its last sync; nil when it never did, and the server
	// takes its own measure (its clock at arrival minus DeviceTime).
	ClockOffset *time.Duration
	// Pending is how many scans the device still holds unsent.
	Pending int
	// StopID is the stop of a trip with stops the device stands at
	// (decision 0408); empty: any stop.
	StopID string
}

// Outcome is how a scan from a device settled.
type Outcome string

// The outcomes (docs/gate-offline.md).
const (
	// OutcomeAdmitted: the ticket's admission, its earliest scan.
	OutcomeAdmitted Outcome = "admitted"
	// OutcomeDuplicate: another scan of the ticket came first.
	OutcomeDuplicate Outcome = "duplicate"
	// OutcomeRefunded: the ticket's order was cancelled or refunded.
	OutcomeRefunded Outcome = "refunded"
	// OutcomeInvalid: not a ticket of this show.
	OutcomeInvalid Outcome = "invalid"
	// OutcomeBoardsElsewhere: a ticket of the trip whose journey boards
	// at another stop than the device's; not admitted.
	OutcomeBoardsElsewhere Outcome = "boards_elsewhere"
)

// Settled is a scan from a device as the server settled it.
type Settled struct {
	ScanID   string
	DeviceID string
	Gate     string
	TicketID string
	Seat     string
	GAArea   string
	Outcome  Outcome
	// ScannedAt is the device's time of the scan; SettledTime the same on
	// the server's clock, which orders the scans of a ticket.
	ScannedAt   time.Time
	SettledTime time.Time
	// A duplicate's: the admission that stands.
	AdmittedGate     string
	AdmittedDeviceID string
	AdmittedAt       time.Time
	// A refunded scan's: the ticket's status (cancelled or refunded).
	TicketStatus Status
	// An invalid scan's: why; one that boards elsewhere: where.
	Detail string
	// BoardingStopID is, for a scan that boards elsewhere, the stop the
	// ticket's journey boards at.
	BoardingStopID string
}

// Settlement is the answer to a batch.
type Settlement struct {
	// Scans are the batch's, in its order.
	Scans       []Settled
	ServerTime  time.Time
	ClockOffset time.Duration
	// AdmittedCount is how many tickets of the show are checked in.
	AdmittedCount int64
}

// onlineScanID names, with the device id "", the record of a check-in
// online that an earlier scan from a device replaced: one per ticket, since
// a ticket is checked in online at most once.
func onlineScanID(ticketID string) string { return ticketID }

// SettleScans settles a device's batch of scans on the show's shard
// (docs/gate-offline.md, decision 0392). Its callers are CheckIn's. Each
// scan is settled once, in a transaction of its own:
//
//   - its time on the server's clock is its device time plus the batch's
//     clock offset, and never later than the batch's arrival;
//   - the earliest scan of a ticket (by that time, then device id, then scan
//     id; a check-in online has the device id "" and the server's time) is
//     its admission, the ticket_checkins row; every other scan is a
//     duplicate naming it. An earlier scan that arrives later takes the
//     admission over: the row then names it, and the scan that had it turns
//     duplicate. So the outcome does not depend on the order in which
//     devices sync;
//   - a scan of a cancelled or refunded ticket is reported so, and admits
//     nothing; one that names no ticket of the show is invalid.
//
// A scan already settled (its device and scan id) answers as it stands now.
func (s *Service) SettleScans(ctx context.Context, c Caller, b Batch) (Settlement, error) {
	pool, err := s.gatePool(ctx, c, b.ShowID)
	if err != nil {
		return Settlement{}, err
	}
	now := s.clock.Now().UTC().Truncate(time.Microsecond)
	out := Settlement{ServerTime: now, Scans: make([]Settled, len(b.Scans))}
	if b.ClockOffset != nil {
		out.ClockOffset = *b.ClockOffset
	} else {
		out.ClockOffset = now.Sub(b.DeviceTime)
	}
	out.ClockOffset = out.ClockOffset.Truncate(time.Millisecond)
	// Earliest first, so that a batch seldom takes over from itself.
	order := make([]int, len(b.Scans))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int { return b.Scans[i].ScannedAt.Compare(b.Scans[j].ScannedAt) })
	for _, i := range order {
		if out.Scans[i], err = s.settle(ctx, pool, c, b, b.Scans[i], out.ClockOffset, now); err != nil {
			return Settlement{}, err
		}
	}
	if _, err := pool.Exec(ctx, `
		INSERT INTO gate_devices (show_id, device_id, gate, pending, clock_offset_ms, last_sync_at, synced_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (show_id, device_id) DO UPDATE
		SET gate = excluded.gate, pending = excluded.pending, clock_offset_ms = excluded.clock_offset_ms,
		    last_sync_at = excluded.last_sync_at, synced_by = excluded.synced_by
		WHERE gate_devices.last_sync_at <= excluded.last_sync_at`,
		b.ShowID, b.DeviceID, b.Gate, b.Pending, out.ClockOffset.Milliseconds(), now, c.UserID); err != nil {
		return Settlement{}, fmt.Errorf("record device %s of show %d: %w", b.DeviceID, b.ShowID, err)
	}
	if out.AdmittedCount, err = admittedCount(ctx, pool, b.ShowID); err != nil {
		return Settlement{}, err
	}
	return out, nil
}

// admission is a ticket's check-in row: the scan that admitted it.
type admission struct {
	at       time.Time
	gate     string
	deviceID string
	scanID   string
	by       string
}

// comesAfter tells whether admission a comes after a scan at at by device
// and scan ids: by time on the server's clock, then device id, then scan
// id, so every settlement orders two scans the same way.
func (a admission) comesAfter(at time.Time, deviceID, scanID string) bool {
	if c := at.Compare(a.at); c != 0 {
		return c < 0
	}
	if c := strings.Compare(deviceID, a.deviceID); c != 0 {
		return c < 0
	}
	return scanID < a.scanID
}

// settle settles one scan in a transaction of its own.
func (s *Service) settle(ctx context.Context, pool *pg.Pool, c Caller, b Batch, in OfflineScan, offset time.Duration,
	now time.Time) (Settled, error) {
	res := Settled{ScanID: in.ScanID, DeviceID: b.DeviceID, Gate: b.Gate, ScannedAt: in.ScannedAt.UTC().Truncate(time.Microsecond)}
	res.SettledTime = res.ScannedAt.Add(offset)
	if res.SettledTime.After(now) {
		res.SettledTime = now // a scan is never later than its sync
	}
	ticketID, place, orderID, position := s.identify(b.ShowID, in, &res)
	err := pg.InTx(ctx, pool, func(tx pgx.Tx) error {
		// The scan's record first: a second sending of it waits here for
		// the first to end, then reads how it settled.
		tag, err := tx.Exec(ctx, `
			INSERT INTO gate_scans (show_id, device_id, scan_id, gate, ticket_id, scanned_at, clock_offset_ms,
			                        settled_time, outcome, detail, synced_by, synced_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'invalid', $9, $10, $11)
			ON CONFLICT (show_id, device_id, scan_id) DO NOTHING`,
			b.ShowID, b.DeviceID, in.ScanID, b.Gate, ticketID, res.ScannedAt, offset.Milliseconds(), res.SettledTime,
			res.Detail, c.UserID, now)
		if err != nil {
			return fmt.Errorf("record scan %s of device %s: %w", in.ScanID, b.DeviceID, err)
		}
		if tag.RowsAffected() == 0 {
			res, err = readScan(ctx, tx, b.ShowID, b.DeviceID, in.ScanID)
			return err
		}
		if res.Outcome == OutcomeInvalid {
			return nil
		}
		if err := s.admit(ctx, tx, c, b, &res, ticketID, place, orderID, position, now); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `
			UPDATE gate_scans SET ticket_id = $4, seat = $5, ga_area = $6, outcome = $7, ticket_status = $8, detail = $9,
			       admitted_gate = $10, admitted_device_id = $11, admitted_at = $12, boarding_stop_id = $13
			WHERE show_id = $1 AND device_id = $2 AND scan_id = $3`,
			b.ShowID, b.DeviceID, in.ScanID, res.TicketID, res.Seat, res.GAArea, string(res.Outcome), string(res.TicketStatus),
			res.Detail, res.AdmittedGate, res.AdmittedDeviceID, nullTime(res.AdmittedAt), res.BoardingStopID)
		if err != nil {
			return fmt.Errorf("settle scan %s of device %s: %w", in.ScanID, b.DeviceID, err)
		}
		return nil
	})
	return res, err
}

// identify reads what a scan names: the ticket, its place (a code's), its
// order and position. A code not signed here, an id of no ticket, or a
// ticket of another show makes res invalid, with why.
func (s *Service) identify(showID int64, in OfflineScan, res *Settled) (ticketID, place, orderID string, position int) {
	ticketID = strings.ToLower(strings.TrimSpace(in.TicketID))
	if in.Code != "" {
		var err error
		if ticketID, place, err = s.codes.Verify(in.Code); err != nil {
			res.Outcome, res.Detail = OutcomeInvalid, "the code is not one this platform signed"
			return "", "", "", 0
		}
	}
	ticketShow, orderID, position, err := Parse(ticketID)
	if err != nil {
		res.Outcome, res.Detail = OutcomeInvalid, "not a ticket id"
		return "", "", "", 0
	}
	res.TicketID = ticketID
	if ticketShow != showID {
		res.Outcome, res.Detail = OutcomeInvalid, fmt.Sprintf("the ticket is for show %d", ticketShow)
	}
	return ticketID, place, orderID, position
}

// admit decides a scan of a ticket of the show, in tx: refunded, invalid,
// the admission, or a duplicate of it.
func (s *Service) admit(ctx context.Context, tx pgx.Tx, c Caller, b Batch, res *Settled, ticketID, place, orderID string,
	position int, now time.Time) error {
	// The order's lock, shared, as at CheckIn: a cancellation and the
	// settlement take turns (decision 0065).
	e, err := booking.LockForEntry(ctx, tx, orderID, b.ShowID)
	if fault.ReasonOf(err) == fault.BookingNotFound {
		res.Outcome, res.Detail = OutcomeInvalid, "no such ticket"
		return nil
	}
	if err != nil {
		return err
	}
	switch {
	case len(e.Seats) > 0 && position <= len(e.Seats):
		res.Seat = e.Seats[position-1]
	case len(e.Seats) == 0 && position <= e.Quantity:
		res.GAArea = e.GAArea
	default:
		res.Outcome, res.Detail = OutcomeInvalid, "no such ticket"
		return nil
	}
	if place != "" && place != res.Seat+res.GAArea {
		res.Outcome, res.Detail = OutcomeInvalid, "no such ticket"
		return nil
	}
	switch e.Status {
	case booking.OrderConfirmed:
	case booking.OrderCancelled:
		res.Outcome, res.TicketStatus = OutcomeRefunded, StatusCancelled
		return nil
	case booking.OrderRefunded:
		res.Outcome, res.TicketStatus = OutcomeRefunded, StatusRefunded
		return nil
	default:
		res.Outcome, res.Detail = OutcomeInvalid, "no such ticket"
		return nil
	}
	// A device at a stop boards only the tickets whose journey starts
	// there, as CheckIn does (decisions 0384, 0408).
	if b.StopID != "" {
		j, err := booking.EntryJourney(ctx, tx, e)
		if err != nil {
			return err
		}
		if j != nil && j.GetFromStopId() != b.StopID {
			res.Outcome, res.BoardingStopID = OutcomeBoardsElsewhere, j.GetFromStopId()
			res.Detail = fmt.Sprintf("boards at %s, not at stop %q", BoardsAt(j), b.StopID)
			return nil
		}
	}
	cur, found, err := lockAdmission(ctx, tx, ticketID)
	if err != nil {
		return err
	}
	if !found {
		tag, err := tx.Exec(ctx, `
			INSERT INTO ticket_checkins (ticket_id, show_id, order_id, seat, ga_area, gate, checked_in_by, checked_in_at, device_id, scan_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
			ON CONFLICT (ticket_id) DO NOTHING`,
			ticketID, b.ShowID, orderID, res.Seat, res.GAArea, b.Gate, c.UserID, res.SettledTime, b.DeviceID, res.ScanID)
		if err != nil {
			return fmt.Errorf("check in ticket %s: %w", ticketID, err)
		}
		if tag.RowsAffected() == 1 {
			res.Outcome = OutcomeAdmitted
			return s.announce(ctx, tx, c, b, res, orderID, e.UserID, false, now)
		}
		// Another settlement (or a check-in online) inserted it meanwhile.
		if cur, _, err = lockAdmission(ctx, tx, ticketID); err != nil {
			return err
		}
	}
	if !cur.comesAfter(res.SettledTime, b.DeviceID, res.ScanID) {
		res.Outcome, res.AdmittedGate, res.AdmittedDeviceID, res.AdmittedAt = OutcomeDuplicate, cur.gate, cur.deviceID, cur.at
		return nil
	}
	// Earlier than the admission that stands: this scan takes it over.
	if _, err := tx.Exec(ctx, `
		UPDATE ticket_checkins SET gate = $2, checked_in_by = $3, checked_in_at = $4, device_id = $5, scan_id = $6
		WHERE ticket_id = $1`, ticketID, b.Gate, c.UserID, res.SettledTime, b.DeviceID, res.ScanID); err != nil {
		return fmt.Errorf("move the admission of ticket %s: %w", ticketID, err)
	}
	if cur.deviceID == "" && cur.scanID == "" {
		// A check-in online: its record as a scan, a duplicate now.
		if _, err := tx.Exec(ctx, `
			INSERT INTO gate_scans (show_id, device_id, scan_id, gate, ticket_id, seat, ga_area, scanned_at, clock_offset_ms,
			                        settled_time, outcome, synced_by, synced_at, admitted_gate, admitted_device_id, admitted_at)
			VALUES ($1, '', $2, $3, $4, $5, $6, $7, 0, $7, 'duplicate', $8, $9, $10, $11, $12)`,
			b.ShowID, onlineScanID(ticketID), cur.gate, ticketID, res.Seat, res.GAArea, cur.at, cur.by, now,
			b.Gate, b.DeviceID, res.SettledTime); err != nil {
			return fmt.Errorf("record the check-in online of ticket %s: %w", ticketID, err)
		}
	}
	// Every other scan of the ticket is a duplicate of this one now.
	if _, err := tx.Exec(ctx, `
		UPDATE gate_scans SET outcome = 'duplicate', admitted_gate = $3, admitted_device_id = $4, admitted_at = $5
		WHERE ticket_id = $1 AND show_id = $2 AND outcome IN ('admitted', 'duplicate')`,
		ticketID, b.ShowID, b.Gate, b.DeviceID, res.SettledTime); err != nil {
		return fmt.Errorf("mark the scans of ticket %s duplicates: %w", ticketID, err)
	}
	res.Outcome = OutcomeAdmitted
	return s.announce(ctx, tx, c, b, res, orderID, e.UserID, true, now)
}

// announce writes the TicketCheckedIn of a scan that is its ticket's
// admission; supersedes says it replaces one announced before.
func (s *Service) announce(ctx context.Context, tx pgx.Tx, c Caller, b Batch, res *Settled, orderID, userID string,
	supersedes bool, now time.Time) error {
	return outbox.Append(ctx, tx, b.ShowID, now, &eventsv1.TicketCheckedIn{
		ShowId: b.ShowID, TicketId: res.TicketID, OrderId: orderID, UserId: userID, Seat: res.Seat, GaArea: res.GAArea,
		Gate: b.Gate, CheckedInBy: c.UserID, OccurredAt: timestamppb.New(res.SettledTime),
		DeviceId: b.DeviceID, Offline: true, Supersedes: supersedes,
	})
}

// lockAdmission reads a ticket's check-in row and locks it until tx ends.
func lockAdmission(ctx context.Context, tx pgx.Tx, ticketID string) (admission, bool, error) {
	var a admission
	err := tx.QueryRow(ctx, `
		SELECT checked_in_at, gate, device_id, scan_id, checked_in_by FROM ticket_checkins WHERE ticket_id = $1 FOR UPDATE`,
		ticketID).Scan(&a.at, &a.gate, &a.deviceID, &a.scanID, &a.by)
	found, err := pg.Found(err)
	if err != nil {
		return a, false, fmt.Errorf("read the check-in of ticket %s: %w", ticketID, err)
	}
	a.at = a.at.UTC()
	return a, found, nil
}

// scanColumns are a settled scan's columns, in scanRow's order.
const scanColumns = `scan_id, device_id, gate, ticket_id, seat, ga_area, outcome, scanned_at, settled_time,
	admitted_gate, admitted_device_id, admitted_at, ticket_status, detail, boarding_stop_id`

// scanRow reads a row of scanColumns.
func scanRow(r pgx.Row) (Settled, error) {
	var (
		s           Settled
		outcome, st string
		admittedAt  *time.Time
	)
	if err := r.Scan(&s.ScanID, &s.DeviceID, &s.Gate, &s.TicketID, &s.Seat, &s.GAArea, &outcome, &s.ScannedAt,
		&s.SettledTime, &s.AdmittedGate, &s.AdmittedDeviceID, &admittedAt, &st, &s.Detail, &s.BoardingStopID); err != nil {
		return Settled{}, err
	}
	s.Outcome, s.TicketStatus = Outcome(outcome), Status(st)
	s.ScannedAt, s.SettledTime = s.ScannedAt.UTC(), s.SettledTime.UTC()
	if admittedAt != nil {
		s.AdmittedAt = admittedAt.UTC()
	}
	return s, nil
}

// readScan reads a scan already settled.
func readScan(ctx context.Context, tx pgx.Tx, showID int64, deviceID, scanID string) (Settled, error) {
	s, err := scanRow(tx.QueryRow(ctx, `SELECT `+scanColumns+` FROM gate_scans
		WHERE show_id = $1 AND device_id = $2 AND scan_id = $3`, showID, deviceID, scanID))
	if err != nil {
		return Settled{}, fmt.Errorf("read scan %s of device %s: %w", scanID, deviceID, err)
	}
	return s, nil
}

// nullTime is t, or NULL when zero.
func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
