package booking

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"golang.org/x/text/unicode/norm"

	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/phone"
)

// Passenger is who travels on one seat of a bus order (issue 24 §5,
// decisions 0380 and 0381): printed on the ticket, kept for the trip's
// manifest, read by the buyer, the show's organisation and admins only.
type Passenger struct {
	Seat string `json:"seat"`
	// Name as on an identity document: trimmed, inner spaces made one,
	// in Unicode NFC (Bengali names compare and print as one spelling).
	Name string `json:"name"`
	// Phone is a Bangladeshi mobile number in E.164 ("+8801711234567").
	Phone string `json:"phone"`
	// Woman: the passenger declared herself a woman (seats for women).
	Woman bool `json:"woman,omitempty"`
}

// maxNameRunes bounds a passenger's name: long enough for any name on a
// Bangladeshi identity card or passport, short enough for a ticket line.
const maxNameRunes = 100

// cleanPassengers checks the passengers of a CreateOrder request as typed
// and returns them as stored: names cleaned (cleanName), phones in E.164.
// A refusal names the field (passengers[i].name, passengers[i].phone,
// passengers[i].seat). Which seats they must name is the hold's, checked
// by matchPassengers once the hold is read.
func cleanPassengers(in []Passenger) ([]Passenger, error) {
	out := make([]Passenger, 0, len(in))
	for i, p := range in {
		name, err := cleanName(p.Name)
		if err != nil {
			return nil, fault.OnField(fault.BookingInvalid, fmt.Sprintf("passengers[%d].name", i), "%v", err)
		}
		tel, err := phone.Bangladesh(p.Phone)
		if err != nil {
			return nil, fault.OnField(fault.BookingInvalid, fmt.Sprintf("passengers[%d].phone", i),
				"%q is not a Bangladeshi mobile number: 01 and an operator's digit 3–9, then 8 digits (01711-234567, +880 1711-234567)", p.Phone)
		}
		seat := strings.ToUpper(strings.TrimSpace(p.Seat))
		if seat == "" {
			return nil, fault.OnField(fault.BookingInvalid, fmt.Sprintf("passengers[%d].seat", i), "name the seat the passenger travels on")
		}
		out = append(out, Passenger{Seat: seat, Name: name, Phone: tel, Woman: p.Woman})
	}
	return out, nil
}

// cleanName is a name as stored: spaces around it gone, every run of white
// space inside one space, in NFC. It must have a letter, at most
// maxNameRunes characters, and no control or formatting characters but
// the zero-width joiner and non-joiner Bengali conjuncts need.
func cleanName(s string) (string, error) {
	s = strings.Join(strings.Fields(norm.NFC.String(s)), " ")
	if s == "" {
		return "", errors.New("name the passenger as on an identity document")
	}
	if n := utf8.RuneCountInString(s); n > maxNameRunes {
		return "", fmt.Errorf("a name has at most %d characters; this one has %d", maxNameRunes, n)
	}
	letter := false
	for _, r := range s {
		switch {
		case r == 0x200C || r == 0x200D: // ZWNJ, ZWJ: Bengali conjuncts
		case r == utf8.RuneError, unicode.Is(unicode.C, r):
			return "", fmt.Errorf("a name has no control characters (%U)", r)
		case unicode.IsLetter(r):
			letter = true
		}
	}
	if !letter {
		return "", errors.New("a name has letters")
	}
	return s, nil
}

// matchPassengers puts the cleaned passengers in the order of the hold's
// seats and checks them against the hold: each names a seat of it, once;
// none for a general-admission hold; when any is given, or when required
// (decision 0380), one for every seat.
func matchPassengers(h Hold, in []Passenger, required bool) ([]Passenger, error) {
	if len(in) == 0 && !required {
		return nil, nil
	}
	if h.GAArea != "" || len(h.Seats) == 0 {
		return nil, fault.OnField(fault.BookingInvalid, "passengers", "hold %s is for general admission: its tickets name no passengers", h.ID)
	}
	bySeat := make(map[string]Passenger, len(in))
	for i, p := range in {
		if !slices.Contains(h.Seats, p.Seat) {
			return nil, fault.OnField(fault.BookingInvalid, fmt.Sprintf("passengers[%d].seat", i),
				"seat %s is not in hold %s (%s)", p.Seat, h.ID, joinSeats(h.Seats))
		}
		if _, dup := bySeat[p.Seat]; dup {
			return nil, fault.OnField(fault.BookingInvalid, fmt.Sprintf("passengers[%d].seat", i),
				"seat %s has two passengers", p.Seat)
		}
		bySeat[p.Seat] = p
	}
	var missing []string
	out := make([]Passenger, 0, len(h.Seats))
	for _, seat := range h.Seats {
		p, ok := bySeat[seat]
		if !ok {
			missing = append(missing, seat)
			continue
		}
		out = append(out, p)
	}
	if len(missing) > 0 {
		return nil, fault.OnField(fault.BookingInvalid, "passengers",
			"name a passenger (name and mobile number) for every seat of the trip; %s has none", joinSeats(missing))
	}
	return out, nil
}

// passengersRequired tells whether every order of show showID must name
// its passengers (decision 0380): a bus trip sold per journey, that is
// with intermediate stops. Every other show, a bus trip without stops
// included, behaves as before: passengers optional (all seats or none).
//
// MERGE (issue 24): a show has legs once H1's per-leg seat rows land; then
// this is
//
//	SELECT EXISTS (SELECT FROM seats WHERE show_id = $1 AND leg > 0)
//
// (an index probe). Until then no show has intermediate stops.
func passengersRequired(ctx context.Context, tx pgx.Tx, showID int64) (bool, error) {
	_, _, _ = ctx, tx, showID
	return false, nil
}

// insertPassengers writes an order's passengers in tx, the order's
// transaction.
func insertPassengers(ctx context.Context, tx pgx.Tx, o Order, ps []Passenger) error {
	if len(ps) == 0 {
		return nil
	}
	rows := make([][]any, len(ps))
	for i, p := range ps {
		rows[i] = []any{o.ID, o.ShowID, p.Seat, p.Name, p.Phone, p.Woman}
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"order_passengers"},
		[]string{"order_id", "show_id", "seat", "name", "phone", "woman"}, pgx.CopyFromRows(rows)); err != nil {
		return fmt.Errorf("insert passengers of order %s: %w", o.ID, err)
	}
	return nil
}

// querier reads: a transaction or a pool.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// readPassengers returns the passengers of each of orderIDs (all on q's
// shard) that has any, in the order of its seats.
func readPassengers(ctx context.Context, q querier, orderIDs []string) (map[string][]Passenger, error) {
	if len(orderIDs) == 0 {
		return nil, nil
	}
	rows, err := q.Query(ctx, `
		SELECT p.order_id, p.seat, p.name, p.phone, p.woman
		FROM order_passengers p
		WHERE p.order_id = ANY($1)
		ORDER BY p.order_id, (SELECT s.position FROM seats s WHERE s.show_id = p.show_id AND s.seat = p.seat LIMIT 1), p.seat`,
		orderIDs)
	if err != nil {
		return nil, fmt.Errorf("read passengers: %w", err)
	}
	out := map[string][]Passenger{}
	var (
		id string
		p  Passenger
	)
	if _, err := pgx.ForEachRow(rows, []any{&id, &p.Seat, &p.Name, &p.Phone, &p.Woman}, func() error {
		out[id] = append(out[id], p)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read passengers: %w", err)
	}
	return out, nil
}

// withPassengers fills in the passengers of orders, all of q's shard. Only
// for orders their caller may read whole: the buyer (a partner is the
// buyer of the orders it makes: its buyers' data is its own), the show's
// organisation's managers and admins (decision 0381).
func withPassengers(ctx context.Context, q querier, orders []Order) error {
	ids := make([]string, 0, len(orders))
	for _, o := range orders {
		ids = append(ids, o.ID)
	}
	ps, err := readPassengers(ctx, q, ids)
	if err != nil {
		return err
	}
	for i := range orders {
		orders[i].Passengers = ps[orders[i].ID]
	}
	return nil
}

// passengerProtos are passengers as the events carry them.
func passengerProtos(ps []Passenger) []*commonv1.Passenger {
	out := make([]*commonv1.Passenger, 0, len(ps))
	for _, p := range ps {
		out = append(out, &commonv1.Passenger{Seat: p.Seat, Name: p.Name, Phone: p.Phone, Woman: p.Woman})
	}
	return out
}
