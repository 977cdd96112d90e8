package booking

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/amount"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/idempotency"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/shard"
)

// HoldRequest asks for seats, or for a quantity of a general-admission area.
type HoldRequest struct {
	ShowID   int64
	Seats    []string
	GAArea   string
	Quantity int
	// PartnerID is the caller's channel: the partner it sells for, 0 for
	// Seatghor's own (decision 0185). It decides which seats it may hold
	// and is recorded on the hold, its order and its payments.
	PartnerID int64
	// Best: pick Quantity seats (decision 0383). A quantity without seats
	// or an area on a show without general admission picks too, with
	// the zero BestAvailable.
	Best *BestAvailable
	// WomenSeats are those of Seats whose passenger is declared a woman:
	// every seat for women asked for must be among them (decision 0371).
	WomenSeats []string
	// Journey is the stretch of a bus trip with stops the seats are held
	// for (decision 0350); empty: the whole trip (a show without stops has
	// one leg).
	Journey JourneyRequest
	// Counter: an operator's counter sells (decision 0443), which the
	// walk-in reserve does not stop (decision 0444).
	Counter bool
}

// CreateHold holds the seats (all or none, R-3.2) or GA places of the
// request for the caller until the show's hold TTL passes.
func (s *Service) CreateHold(ctx context.Context, userID string, req HoldRequest) (Hold, error) {
	if err := checkWomenSeats(req); err != nil {
		return Hold{}, err
	}
	pool, err := s.shardOf(ctx, req.ShowID)
	if err != nil {
		return Hold{}, err
	}
	now := s.now()
	partnerCap, err := s.partnerCap(ctx, req.PartnerID)
	if err != nil {
		return Hold{}, err
	}
	// slow is the one-hold path, for every case the batch and pipelined
	// paths below leave (refusals, duplicates, a GA hold no single free
	// bucket serves), and every partner's hold.
	// The trip's stops name the journey in the hold's event and answer
	// (read once per show, before the hold's transaction).
	var trip catalog.Trip
	if len(req.Seats) > 0 || req.Best != nil || !req.Journey.empty() {
		if trip, err = s.trip(ctx, req.ShowID); err != nil {
			return Hold{}, err
		}
	}
	slow := func(tx pgx.Tx) (Hold, error) {
		return holdOneCounted(ctx, tx, userID, req, now, partnerCap, trip, &s.best)
	}
	h, err := s.takeHold(ctx, pool, userID, req, now, trip, slow)
	if err != nil {
		return Hold{}, err
	}
	// The answer names the journey (the events name it in the write).
	return h, s.describeHold(ctx, &h)
}

// takeHold takes the hold by the first path that may: the one-hold path
// for a partner's or a best-available one, the batch, or the pipelined
// statements, each falling back to slow.
func (s *Service) takeHold(ctx context.Context, pool *pg.Pool, userID string, req HoldRequest, now time.Time, trip catalog.Trip,
	slow func(pgx.Tx) (Hold, error)) (Hold, error) {
	target := holdTarget(req.ShowID, req.Journey)
	// A partner's hold counts against its per-show cap under its own lock,
	// which only this path takes (decision 0286): the other paths serve
	// Seatghor's own channel only. Best available picks its seats there
	// too (decision 0383).
	if (len(req.Seats) == 0 && req.Quantity <= 0) || req.PartnerID != 0 || req.Best != nil || req.Counter {
		return idempotencyDo(ctx, s, pool, target, now, slow)
	}
	// A hold goes with the others of its shard that arrive with it
	// (decision 0270); what its batch leaves or does not take takes two
	// round trips in the common case (decision 0125); every refusal is
	// answered by slow, as before.
	if h, held, err := s.holdInBatch(ctx, pool, userID, req, now, trip); held || err != nil {
		return h, err
	}
	return idempotency.DoPipelined(ctx, pool, ErrorCodec, idempotency.Options{
		Now: now, Wait: s.cfg.IdempotencyWait, Target: target,
	}, pipelinedHold(userID, req, now, trip, slow))
}

// holdOne is the one-hold path: the hold's work in tx, which applies every
// rule and explains every refusal. partnerCap is the per-show cap of the
// hold's partner (0: none); trip is the show's stops (none for a GA hold:
// a trip with stops has no GA area).
func holdOne(ctx context.Context, tx pgx.Tx, userID string, req HoldRequest, now time.Time, partnerCap int, trip catalog.Trip) (Hold, error) {
	return holdOneCounted(ctx, tx, userID, req, now, partnerCap, trip, nil)
}

// holdOneCounted is holdOne counting best available's attempts in stats
// (nil: not counted).
func holdOneCounted(ctx context.Context, tx pgx.Tx, userID string, req HoldRequest, now time.Time, partnerCap int, trip catalog.Trip,
	stats *bestCounters) (Hold, error) {
	n := req.Quantity
	if len(req.Seats) > 0 {
		n = len(req.Seats)
	}
	account := req.PartnerID == 0 // a partner sells for many buyers (decision 0185)
	if account {
		if err := lockAccount(ctx, tx, req.ShowID, userID); err != nil {
			return Hold{}, err
		}
	}
	show, rules, err := loadShowRules(ctx, tx, req.ShowID, userID, n, req.Journey, now)
	if err != nil {
		return Hold{}, err
	}
	if len(req.Seats) == 0 && n <= 0 {
		return Hold{}, fault.OnField(fault.BookingInvalid, "quantity", "a general-admission hold needs a quantity of at least 1")
	}
	if (rules.journey.stops > 0 || !req.Journey.empty()) && len(trip.Stops) != rules.journey.stops {
		// The stops name the refusals and the event (a caller without the
		// trip at hand, or one read before the show had it).
		if trip, err = readTrip(ctx, tx, show.ID); err != nil {
			return Hold{}, err
		}
	}
	if err := rules.journey.refusal(show.ID, req.Journey, trip.StopIDs()); err != nil {
		return Hold{}, err
	}
	if err := rules.refusal(show, n, account); err != nil {
		return Hold{}, err
	}
	if !req.Counter {
		if err := checkWalkInReserve(ctx, tx, show, rules, n, req.GAArea == "", now); err != nil {
			return Hold{}, err
		}
	}
	journey := rules.journey.journey(req.Journey)
	if len(req.Seats) > 0 && rules.journey.stops > 0 {
		if err := checkFares(ctx, tx, show.ID, req.Seats, journey, trip); err != nil {
			return Hold{}, err
		}
	}
	if !account && partnerCap > 0 {
		if err := checkPartnerCap(ctx, tx, show, req.PartnerID, partnerCap, n, now); err != nil {
			return Hold{}, err
		}
	}
	h := Hold{
		ID:        shard.NewID("hld", show.ID),
		ShowID:    show.ID,
		UserID:    userID,
		Quantity:  n,
		Currency:  show.Currency,
		Status:    HoldActive,
		ExpiresAt: now.Add(show.HoldTTL),
		CreatedAt: now,
		PartnerID: req.PartnerID,
		Journey:   journey,
	}
	switch best, pick, perr := bestWanted(ctx, tx, req); {
	case perr != nil:
		err = perr
	case len(req.Seats) > 0:
		err = holdSeats(ctx, tx, &h, req.Seats, req.WomenSeats, rules.journey.stops, req.Counter, now)
	case pick:
		err = holdBest(ctx, tx, &h, best, rules.journey.stops, now, stats)
	default:
		err = holdGA(ctx, tx, &h, req.GAArea, now)
	}
	if err != nil {
		return Hold{}, err
	}
	if _, err := tx.Exec(ctx, `
		INSERT INTO holds (hold_id, show_id, user_id, status, seats, ga_area, quantity,
		                   amount_minor, currency, expires_at, created_at, updated_at, partner_id, women_seats,
		                   from_stop, to_stop, boarding_counter, dropping_counter)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11, nullif($12, 0), $13, $14, $15, $16, $17)`,
		h.ID, h.ShowID, h.UserID, h.Status, append([]string{}, h.Seats...), h.GAArea, h.Quantity,
		h.AmountMinor, h.Currency, h.ExpiresAt, h.CreatedAt, h.PartnerID, append([]string{}, h.WomenSeats...),
		h.Journey.From, h.Journey.To, h.Journey.Boarding, h.Journey.Dropping); err != nil {
		return Hold{}, fmt.Errorf("insert hold: %w", err)
	}
	if err := insertTakes(ctx, tx, h); err != nil {
		return Hold{}, err
	}
	if err := appendEvent(ctx, tx, now, seatsHeld(h, view(trip, h.Journey))); err != nil {
		return Hold{}, err
	}
	return h, nil
}

// PartnerCaps tells how many places of one show a partner may hold or
// have bought at once (partner.Service.ShowHoldCap, decision 0286).
type PartnerCaps interface {
	ShowHoldCap(ctx context.Context, partnerID int64) (int, error)
}

// partnerCap is the per-show cap of the hold's partner; 0: none (not a
// partner's hold, or no caps configured).
func (s *Service) partnerCap(ctx context.Context, partnerID int64) (int, error) {
	if partnerID == 0 || s.cfg.PartnerCaps == nil {
		return 0, nil
	}
	n, err := s.cfg.PartnerCaps.ShowHoldCap(ctx, partnerID)
	if err != nil {
		return 0, fmt.Errorf("per-show cap of partner %d: %w", partnerID, err)
	}
	return n, nil
}

// checkPartnerCap enforces a partner's per-show cap (decision 0286) as the
// rules do an account's: under a lock of the partner and the show, taken
// before the count, so two concurrent holds of the partner cannot both
// slip under it. An account whose id spells the lock's name would only
// wait with it.
func checkPartnerCap(ctx context.Context, tx pgx.Tx, show showSettings, partnerID int64, limit, n int, now time.Time) error {
	lock := "partner cap " + strconv.FormatInt(partnerID, 10)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, $2))`, lock, show.ID); err != nil {
		return fmt.Errorf("lock partner %d on show %d: %w", partnerID, show.ID, err)
	}
	var have int
	if err := tx.QueryRow(ctx, `
		SELECT coalesce(sum(h.quantity), 0) FROM holds h
		WHERE h.show_id = $1 AND h.partner_id = $2 AND `+heldOrBought("h", "$3"), show.ID, partnerID, now).Scan(&have); err != nil {
		return fmt.Errorf("count places of partner %d on show %d: %w", partnerID, show.ID, err)
	}
	if have+n > limit {
		return fault.New(fault.BookingNotAllowed, "partner %d may hold or sell at most %d places of show %d at once; it has %d (an admin raises its cap)",
			partnerID, limit, show.ID, have)
	}
	return nil
}

// holdSeats takes every asked-for seat or none, on every leg of
// the hold's journey (decision 0350). One statement locks the free rows in
// (seat, leg) order (the same order in every transaction, so no deadlocks)
// and marks them held; expiry lives in the condition, so a seat whose hold
// ran out is free again without any sweeper, and so do the hold's
// channel (inChannel) and the seats' kinds (holdableKind: women declares
// the passengers of seats for women). A seat's price is its section's, or
// on a trip with stops the journey's fare (seatPriceSQL; checkFares
// refused a seat without one). A counter's hold also takes the legs a
// no-show left for the counters (decision 0482).
func holdSeats(ctx context.Context, tx pgx.Tx, h *Hold, seats, women []string, stops int, counter bool, now time.Time) error {
	var taken []string
	j := h.Journey
	err := pg.InTx(ctx, tx, func(sp pgx.Tx) error {
		rows, err := sp.Query(ctx, `
			WITH free AS (
				SELECT show_id, seat, leg FROM seats s
				WHERE show_id = $1 AND seat = ANY($2) AND `+legsSQL("s", "$7", "$8")+`
				  AND (`+seatFree("", "$3")+` OR `+keptForCounters("", "$11", "$3")+`)
				  AND `+inChannel("s", "$1", "$6")+`
				  AND `+holdableKind("s", "s.seat = ANY($10)")+`
				ORDER BY seat, leg
				FOR UPDATE
			)
			UPDATE seats s
			SET status = 'held', hold_id = $4, held_until = $5, version = s.version + 1
			FROM free
			WHERE s.show_id = free.show_id AND s.seat = free.seat AND s.leg = free.leg
			  AND (`+seatFree("s", "$3")+` OR `+keptForCounters("s", "$11", "$3")+`)
			  AND `+inChannel("s", "$1", "$6")+`
			RETURNING s.seat, s.position, s.leg, CASE WHEN s.leg = $7 THEN `+seatPriceSQL("s", "$9", "$7", "$8")+` END`,
			h.ShowID, seats, now, h.ID, h.ExpiresAt, h.PartnerID, j.From, j.To, stops, women, counter)
		if err != nil {
			return fmt.Errorf("hold seats: %w", err)
		}
		type got struct {
			seat  string
			pos   int
			leg   int
			price *int64
		}
		rowsGot, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (got, error) {
			var g got
			return g, r.Scan(&g.seat, &g.pos, &g.leg, &g.price)
		})
		if err != nil {
			return fmt.Errorf("hold seats: %w", err)
		}
		// A seat is taken when every leg of the journey is.
		legs := map[string]int{}
		for _, g := range rowsGot {
			legs[g.seat]++
		}
		var held []got
		for _, g := range rowsGot {
			if g.leg == j.From && legs[g.seat] == j.Legs() {
				held = append(held, g)
			}
		}
		if len(held) != len(seats) {
			for _, g := range held {
				taken = append(taken, g.seat)
			}
			return errAllOrNothing
		}
		slices.SortFunc(held, func(a, b got) int { return a.pos - b.pos })
		for _, g := range held {
			if g.price == nil { // checkFares refused it first; never written
				return fault.New(fault.JourneyNotSold, "seat %s is not sold for this journey", g.seat)
			}
			h.Seats = append(h.Seats, g.seat)
			if slices.Contains(women, g.seat) {
				h.WomenSeats = append(h.WomenSeats, g.seat)
			}
			// Prices are bounded (decision 0071), so this cannot overflow;
			// if a price ever slipped past the bound, no wrapped total is sold.
			if h.AmountMinor, err = amount.Add(h.AmountMinor, *g.price); err != nil {
				return &fault.Error{Reason: fault.BookingInvalid, Field: "seats", Seats: seats,
					Message: fmt.Sprintf("the total price of seats %s is out of range", joinSeats(seats))}
			}
		}
		return nil
	})
	if err != errAllOrNothing {
		return err
	}
	// The partial update is rolled back; tell which seats were the problem:
	// their kinds first (a seat not for this hold stays so), then
	// unknown or taken ones.
	if err := kindProblem(ctx, tx, h.ShowID, seats, women); err != nil {
		return err
	}
	err = seatsProblem(ctx, tx, h.ShowID, seats, taken)
	e, ok := fault.As(err)
	if !ok || e.Reason != fault.SeatsUnavailable {
		return err
	}
	// A seat the caller's channel may not hold is not a lost race: the
	// seat map read with the same credential shows it taken, and it will
	// stay so, so "reload and choose again" is the wrong advice (decision
	// 0325).
	outside, err := notInChannel(ctx, tx, h.ShowID, h.PartnerID, e.Seats)
	if err != nil {
		return err
	}
	if len(outside) == 0 {
		return e
	}
	e.Reason, e.Seats = fault.SeatsNotInChannel, outside
	if h.PartnerID == 0 {
		e.Message = fmt.Sprintf("seats %s are allocated to a partner, not on general sale", joinSeats(outside))
	} else {
		e.Message = fmt.Sprintf("seats %s are not sold through partner %d's channel: another channel's, or general sale "+
			"its allocation of show %d closes to it; choose among the seats its seat map shows free", joinSeats(outside), h.PartnerID, h.ShowID)
	}
	return e
}

// checkFares refuses a hold on a trip with stops when a seat it asks for
// has no fare for the journey, in its class or for every class (decision
// 0352): the trip does not sell that seat between those stops. Unknown
// seats are left to seatsProblem.
func checkFares(ctx context.Context, tx pgx.Tx, showID int64, seats []string, j Journey, trip catalog.Trip) error {
	rows, err := tx.Query(ctx, `
		SELECT s.seat, s.seat_class FROM seats s
		WHERE s.show_id = $1 AND s.seat = ANY($2) AND s.leg = $3
		  AND `+seatPriceSQL("s", "$5::int", "$3::int", "$4::int")+` IS NULL
		ORDER BY s.position`, showID, seats, j.From, j.To, max(len(trip.Stops), 1))
	if err != nil {
		return fmt.Errorf("price seats of show %d: %w", showID, err)
	}
	type unsold struct{ seat, class string }
	none, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (unsold, error) {
		var u unsold
		return u, r.Scan(&u.seat, &u.class)
	})
	if err != nil {
		return fmt.Errorf("price seats of show %d: %w", showID, err)
	}
	if len(none) == 0 {
		return nil
	}
	var names, classes []string
	for _, u := range none {
		names = append(names, u.seat)
		if u.class != "" && !slices.Contains(classes, u.class) {
			classes = append(classes, u.class)
		}
	}
	from, to := fmt.Sprint(j.From), fmt.Sprint(j.To)
	if j.From < len(trip.Stops) && j.To < len(trip.Stops) {
		from, to = trip.Stops[j.From].StopID, trip.Stops[j.To].StopID
	}
	class := ""
	if len(classes) > 0 {
		class = " (" + strings.Join(classes, ", ") + ")"
	}
	return &fault.Error{Reason: fault.JourneyNotSold, Seats: names, Message: fmt.Sprintf(
		"show %d sells no fare from %s to %s for seats %s%s: choose a journey its fares name", showID, from, to, joinSeats(names), class)}
}

// errAllOrNothing rolls back a partial multi-seat hold.
var errAllOrNothing = fmt.Errorf("not every seat was free")

// seatsProblem explains a refused seated hold: unknown seat ids are invalid
// input; otherwise the seats someone else has are unavailable, with the
// seat-map version the app should redraw from.
func seatsProblem(ctx context.Context, tx pgx.Tx, showID int64, asked, free []string) error {
	rows, err := tx.Query(ctx, `SELECT seat FROM seats WHERE show_id = $1 AND seat = ANY($2)`, showID, asked)
	if err != nil {
		return fmt.Errorf("check seats: %w", err)
	}
	known, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("check seats: %w", err)
	}
	var unknown, unavailable []string
	for _, seat := range asked {
		switch {
		case !slices.Contains(known, seat):
			unknown = append(unknown, seat)
		case !slices.Contains(free, seat):
			unavailable = append(unavailable, seat)
		}
	}
	if len(unknown) > 0 {
		return &fault.Error{Reason: fault.BookingInvalid, Field: "seats", Seats: unknown,
			Message: fmt.Sprintf("show %d has no seats %s", showID, joinSeats(unknown))}
	}
	version, err := seatmapVersion(ctx, tx, showID)
	if err != nil {
		return err
	}
	return &fault.Error{Reason: fault.SeatsUnavailable, Seats: unavailable, SeatmapVersion: version,
		Message: fmt.Sprintf("seats unavailable: %s", joinSeats(unavailable))}
}

// GetHold returns a hold the caller may see.
func (s *Service) GetHold(ctx context.Context, caller Caller, holdID string) (Hold, error) {
	pool, err := s.shardOfID(ctx, "hold", holdID)
	if err != nil {
		return Hold{}, err
	}
	var h Hold
	err = pg.InTx(ctx, pool, func(tx pgx.Tx) error {
		if h, err = getHold(ctx, tx, holdID); err != nil {
			return err
		}
		show, err := loadShow(ctx, tx, h.ShowID)
		if err != nil {
			return err
		}
		ok, err := s.mayRead(ctx, caller, h.UserID, show.OrganizationID)
		if err != nil {
			return err
		}
		if !ok {
			return notFound("hold", holdID)
		}
		return nil
	})
	if err != nil {
		return Hold{}, err
	}
	h.Status = h.EffectiveStatus(s.now())
	return h, s.describeHold(ctx, &h)
}

// ReleaseHold gives the seats of one of the caller's live holds back.
func (s *Service) ReleaseHold(ctx context.Context, userID, holdID string) (Hold, error) {
	pool, err := s.shardOfID(ctx, "hold", holdID)
	if err != nil {
		return Hold{}, err
	}
	now := s.now()
	h, err := idempotencyDo(ctx, s, pool, holdID, now, func(tx pgx.Tx) (Hold, error) {
		h, err := getHold(ctx, tx, holdID)
		if err != nil {
			return Hold{}, err
		}
		if h.UserID != userID {
			return Hold{}, notFound("hold", holdID)
		}
		switch h.EffectiveStatus(now) {
		case HoldActive:
		case HoldOrdered:
			return Hold{}, fault.New(fault.BookingNotAllowed, "hold %s belongs to order %s: cancel the order instead", holdID, h.OrderID)
		default:
			return Hold{}, fault.New(fault.BookingNotAllowed, "hold %s is already %s", holdID, h.EffectiveStatus(now))
		}
		ended, err := endHold(ctx, tx, h, HoldReleased, now)
		if err != nil {
			return Hold{}, err
		}
		if !ended {
			return Hold{}, fault.New(fault.BookingNotAllowed, "hold %s is no longer active", holdID)
		}
		h.Status = HoldReleased
		return h, nil
	})
	if err != nil {
		return Hold{}, err
	}
	return h, s.describeHold(ctx, &h)
}
