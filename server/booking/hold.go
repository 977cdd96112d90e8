package booking

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/amount"
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
}

// CreateHold holds the seats (all or none, R-3.2) or GA places of the
// request for the caller until the show's hold TTL passes.
func (s *Service) CreateHold(ctx context.Context, userID string, req HoldRequest) (Hold, error) {
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
	slow := func(tx pgx.Tx) (Hold, error) { return holdOne(ctx, tx, userID, req, now, partnerCap) }
	// A partner's hold counts against its per-show cap under its own lock,
	// which only this path takes (decision 0286): the other paths serve
	// Seatghor's own channel only.
	if (len(req.Seats) == 0 && req.Quantity <= 0) || req.PartnerID != 0 {
		return idempotencyDo(ctx, s, pool, idempotency.Show(req.ShowID), now, slow)
	}
	// A hold goes with the others of its shard that arrive with it
	// (decision 0270); what its batch leaves or does not take takes two
	// round trips in the common case (decision 0125); every refusal is
	// answered by slow, as before.
	if h, held, err := s.holdInBatch(ctx, pool, userID, req, now); held || err != nil {
		return h, err
	}
	return idempotency.DoPipelined(ctx, pool, ErrorCodec, idempotency.Options{
		Now: now, Wait: s.cfg.IdempotencyWait, Target: idempotency.Show(req.ShowID),
	}, pipelinedHold(userID, req, now, slow))
}

// holdOne is the one-hold path: the hold's work in tx, which applies every
// rule and explains every refusal. partnerCap is the per-show cap of the
// hold's partner (0: none).
func holdOne(ctx context.Context, tx pgx.Tx, userID string, req HoldRequest, now time.Time, partnerCap int) (Hold, error) {
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
	show, rules, err := loadShowRules(ctx, tx, req.ShowID, userID, n, now)
	if err != nil {
		return Hold{}, err
	}
	if len(req.Seats) == 0 && n <= 0 {
		return Hold{}, fault.OnField(fault.BookingInvalid, "quantity", "a general-admission hold needs a quantity of at least 1")
	}
	if err := rules.refusal(show, n, account); err != nil {
		return Hold{}, err
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
	}
	if len(req.Seats) > 0 {
		err = holdSeats(ctx, tx, &h, req.Seats, now)
	} else {
		err = holdGA(ctx, tx, &h, req.GAArea, now)
	}
	if err != nil {
		return Hold{}, err
	}
	if _, err := tx.Exec(ctx, `
		INSERT INTO holds (hold_id, show_id, user_id, status, seats, ga_area, quantity,
		                   amount_minor, currency, expires_at, created_at, updated_at, partner_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11, nullif($12, 0))`,
		h.ID, h.ShowID, h.UserID, h.Status, append([]string{}, h.Seats...), h.GAArea, h.Quantity,
		h.AmountMinor, h.Currency, h.ExpiresAt, h.CreatedAt, h.PartnerID); err != nil {
		return Hold{}, fmt.Errorf("insert hold: %w", err)
	}
	if err := insertTakes(ctx, tx, h); err != nil {
		return Hold{}, err
	}
	if err := appendEvent(ctx, tx, now, seatsHeld(h)); err != nil {
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

// holdSeats takes every asked-for seat or none. One statement locks
// the free ones in seat order (the same order in every transaction, so no
// deadlocks) and marks them held; expiry lives in the condition, so a seat
// whose hold ran out is free again without any sweeper, and so does
// the hold's channel (inChannel).
func holdSeats(ctx context.Context, tx pgx.Tx, h *Hold, seats []string, now time.Time) error {
	var taken []string
	err := pg.InTx(ctx, tx, func(sp pgx.Tx) error {
		rows, err := sp.Query(ctx, `
			WITH free AS (
				SELECT show_id, seat FROM seats s
				WHERE show_id = $1 AND seat = ANY($2)
				  AND (status = 'available' OR (status = 'held' AND held_until < $3))
				  AND `+inChannel("s", "$1", "$6")+`
				ORDER BY seat
				FOR UPDATE
			)
			UPDATE seats s
			SET status = 'held', hold_id = $4, held_until = $5, version = s.version + 1
			FROM free
			WHERE s.show_id = free.show_id AND s.seat = free.seat
			  AND (s.status = 'available' OR (s.status = 'held' AND s.held_until < $3))
			  AND `+inChannel("s", "$1", "$6")+`
			RETURNING s.seat, s.position, s.price_minor`,
			h.ShowID, seats, now, h.ID, h.ExpiresAt, h.PartnerID)
		if err != nil {
			return fmt.Errorf("hold seats: %w", err)
		}
		type got struct {
			seat  string
			pos   int
			price int64
		}
		held, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (got, error) {
			var g got
			return g, r.Scan(&g.seat, &g.pos, &g.price)
		})
		if err != nil {
			return fmt.Errorf("hold seats: %w", err)
		}
		if len(held) != len(seats) {
			for _, g := range held {
				taken = append(taken, g.seat)
			}
			return errAllOrNothing
		}
		slices.SortFunc(held, func(a, b got) int { return a.pos - b.pos })
		for _, g := range held {
			h.Seats = append(h.Seats, g.seat)
			// Prices are bounded (decision 0071), so this cannot overflow;
			// if a price ever slipped past the bound, no wrapped total is sold.
			if h.AmountMinor, err = amount.Add(h.AmountMinor, g.price); err != nil {
				return &fault.Error{Reason: fault.BookingInvalid, Field: "seats", Seats: seats,
					Message: fmt.Sprintf("the total price of seats %s is out of range", joinSeats(seats))}
			}
		}
		return nil
	})
	if err != errAllOrNothing {
		return err
	}
	// The partial update is rolled back; tell which seats were the problem.
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
	return h, nil
}

// ReleaseHold gives the seats of one of the caller's live holds back.
func (s *Service) ReleaseHold(ctx context.Context, userID, holdID string) (Hold, error) {
	pool, err := s.shardOfID(ctx, "hold", holdID)
	if err != nil {
		return Hold{}, err
	}
	now := s.now()
	return idempotencyDo(ctx, s, pool, holdID, now, func(tx pgx.Tx) (Hold, error) {
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
}
