package booking

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/fault"
)

// Seat kinds a hold may not take as any other seat (decision 0371): a crew
// or blocked seat is never sold, and a seat for women only to a passenger
// declared a woman (CreateHold's women_seats). The numbers are the shard's
// seats.kind (catalog.SeatKind); TestSeatKindNumbers keeps them equal.
const (
	womenKind      = "3"
	wheelchairKind = "4"
	blockedKind    = "5"
)

// womenAmong is those of seats (of show showID) that are for women, in
// layout order: the seats best available picked whose passengers its
// request declared women.
func womenAmong(ctx context.Context, tx pgx.Tx, showID int64, seats []string) ([]string, error) {
	rows, err := tx.Query(ctx, `
		SELECT seat FROM seats WHERE show_id = $1 AND seat = ANY($2) AND leg = 0 AND kind = `+womenKind+`
		ORDER BY position`, showID, seats)
	if err != nil {
		return nil, fmt.Errorf("seats for women among %v: %w", seats, err)
	}
	women, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("seats for women among %v: %w", seats, err)
	}
	return women, nil
}

// holdableKind is the condition that the seats row alias is of a kind the
// hold may take: never a blocked seat; a seat for women only when declared,
// an SQL boolean of the statement saying that the seat's passenger is
// declared a woman. It is the one definition of the rule: the one-hold
// path (holdSeats), the pipelined statement (holdSeatsSQL) and the batch
// (holdBatchSQL) each join it next to their channel's condition
// (inChannel, inPublicChannel), inside the hold's one conditional write.
func holdableKind(alias, declared string) string {
	return `(` + alias + `.kind NOT IN (` + womenKind + `, ` + blockedKind + `) OR (` + alias + `.kind = ` + womenKind +
		` AND ` + declared + `))`
}

// checkWomenSeats refuses a declaration of a seat the hold does not ask
// for, or of a hold without seats: the declaration is of the asked-for
// seats' passengers.
func checkWomenSeats(req HoldRequest) error {
	for _, seat := range req.WomenSeats {
		if !slices.Contains(req.Seats, seat) {
			return fault.OnField(fault.BookingInvalid, "women_seats", "seat %s is declared but not asked for", seat)
		}
	}
	return nil
}

// kindProblem explains a refused seated hold by the kinds of the seats it
// asked for, before seatsProblem: blocked seats are refused SEATS_BLOCKED,
// seats for women not in women WOMEN_SEAT_UNDECLARED (decision 0371); nil
// when the kinds are not why.
func kindProblem(ctx context.Context, tx pgx.Tx, showID int64, asked, women []string) error {
	rows, err := tx.Query(ctx, `
		SELECT DISTINCT seat, kind FROM seats
		WHERE show_id = $1 AND seat = ANY($2) AND kind IN (`+womenKind+`, `+blockedKind+`)`, showID, asked)
	if err != nil {
		return fmt.Errorf("check the kinds of seats: %w", err)
	}
	kinds := map[string]catalog.SeatKind{}
	var (
		seat string
		kind int16
	)
	if _, err := pgx.ForEachRow(rows, []any{&seat, &kind}, func() error {
		kinds[seat] = catalog.SeatKind(kind)
		return nil
	}); err != nil {
		return fmt.Errorf("check the kinds of seats: %w", err)
	}
	var blocked, undeclared []string
	for _, seat := range asked {
		switch kinds[seat] {
		case catalog.KindBlocked:
			blocked = append(blocked, seat)
		case catalog.KindWomen:
			if !slices.Contains(women, seat) {
				undeclared = append(undeclared, seat)
			}
		}
	}
	switch {
	case len(blocked) > 0:
		return &fault.Error{Reason: fault.SeatsBlocked, Field: "seats", Seats: blocked,
			Message: fmt.Sprintf("seats %s are for the crew or blocked: never sold", joinSeats(blocked))}
	case len(undeclared) > 0:
		return &fault.Error{Reason: fault.WomenSeatUndeclared, Field: "women_seats", Seats: undeclared,
			Message: fmt.Sprintf("seats %s are for women: name them in women_seats when their passenger is a woman", joinSeats(undeclared))}
	}
	return nil
}

// checkWomenPassengers refuses an order whose passengers, when given, do
// not match its hold's declaration: the passenger of each of its seats for
// women must be declared a woman (decision 0371). Without passengers (a
// venue's order, or a client that names none) the hold's declaration
// stands.
func checkWomenPassengers(ctx context.Context, tx pgx.Tx, h Hold, passengers []Passenger) error {
	if len(passengers) == 0 || len(h.WomenSeats) == 0 {
		return nil // a hold with no declared seat has no seat for women
	}
	forWomen, err := womenAmong(ctx, tx, h.ShowID, h.WomenSeats)
	if err != nil {
		return fmt.Errorf("hold %s: %w", h.ID, err)
	}
	var undeclared []string
	for _, seat := range h.WomenSeats {
		if !slices.Contains(forWomen, seat) {
			continue
		}
		if !slices.ContainsFunc(passengers, func(p Passenger) bool { return p.Seat == seat && p.Woman }) {
			undeclared = append(undeclared, seat)
		}
	}
	if len(undeclared) > 0 {
		return &fault.Error{Reason: fault.WomenSeatUndeclared, Field: "passengers", Seats: undeclared,
			Message: fmt.Sprintf("seats %s are for women: their passengers must be declared women", joinSeats(undeclared))}
	}
	return nil
}

// nilIfEmpty is seats, nil when empty: a hold without declared seats
// answers none, whichever path read it.
func nilIfEmpty(seats []string) []string {
	if len(seats) == 0 {
		return nil
	}
	return seats
}
