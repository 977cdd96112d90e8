package booking

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/amount"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/pg"
)

// Best available (issue 24 §5, decision 0383): a hold that asks for a
// quantity of a seated show, without naming seats, gets the best seats
// the server can find, by this rule:
//
//  1. Together first: n seats side by side in one row (a block) beat any n
//     seats apart. Apart only when the request allows it (AllowSeparate)
//     and no block is free; otherwise the hold is refused
//     (SEATS_NOT_TOGETHER), or SEATS_UNAVAILABLE when fewer than n seats
//     are free at all.
//  2. Sections in layout order (the first section of the show first),
//     unless the request names one; then rows in layout order, the front
//     row first: the first row, in layout order, that has a block.
//  3. In that row, a block that strands no lone free seat beside it beats
//     one that does (a lone seat seldom sells: two seats of a row of four
//     are its two ends, not its middle, so a 2+2 coach sells its pairs).
//  4. Then the block nearest the centre of its row; then the leftmost.
//
// Apart, the seats are the first rows' free seats, by 2 and 4.
//
// Each pick is one statement (bestTake): it reads the free seats of the
// journey's legs in layout order, at most bestWindow of them from a
// position on (so a pick reads the sold seats before the first free one
// and a bounded window, never the whole of a large show), chooses the best
// block (or seats), locks their rows FOR UPDATE and marks them held only
// when it locked every one of them: all or none, as holdSeats, in the
// order of the seats (no deadlocks). When the window holds no block, the
// next attempt reads the window after it.
//
// A crowd of buyers asking at once would all choose the same block, so the
// first attempts lock with SKIP LOCKED: a block another buyer is taking is
// passed over at once (its seats left out of the next attempt) instead of
// waited for. When those attempts find no block, the next ones wait for
// the locks, so a refusal is never made from seats that were only being
// looked at. Every attempt runs in a savepoint, so one that did not take
// its block leaves no lock behind. Never two holds of one seat: every
// attempt is a conditional write of locked rows.
//
// Positions follow the layout: sections in order, rows in order in a
// section, seats in order in a row (catalog.CreateShow provisions them so),
// so layout order is position order and a row is a run of positions.

// BestAvailable asks the server to pick a hold's seats (CreateHoldRequest
// with a quantity and no seats on a seated show).
type BestAvailable struct {
	// Section: only seats of this section; empty: any, in layout order.
	Section string
	// AllowSeparate: seats apart when no block of Quantity adjacent seats
	// is free; false: refuse instead.
	AllowSeparate bool
	// Women: seats for women may be picked.
	Women bool
}

// The attempts of one best-available hold: the first bestSkipAttempts pass
// over locked seats; up to bestWaitAttempts more wait for them. A wait ends
// with a seat held by someone else only when another hold committed, so
// the waiting attempts end when the seats do.
const (
	bestSkipAttempts = 16
	bestWaitAttempts = 64
	// bestWindow is how many free seats one attempt reads at most: a
	// dozen rows of a stadium's stand, 25 coaches' worth.
	bestWindow = 1000
)

// The statement's parameters.
const (
	bestShow      = "$1::bigint"       // the show
	bestQuantity  = "$2::int"          // n: seats to take
	bestNow       = "$3::timestamptz"  // now: a held seat whose held_until is before it is free
	bestPartner   = "$4::bigint"       // the hold's channel (inChannel)
	bestSection   = "$5::text"         // '' or the one section
	bestWomen     = "$6::bool"         // seats for women may be picked
	bestLegFrom   = "$7::int"          // the journey's legs: [from, to), so stops from → to
	bestLegTo     = "$8::int"          //
	bestExcluded  = "$9::text[]"       // seats left out (found locked by an earlier attempt)
	bestHold      = "$10::text"        // the new hold's id
	bestHeldUntil = "$11::timestamptz" // its expiry
	bestStart     = "$12::int"         // the window's first position
	bestStops     = "$13::int"         // the trip's stops (0: none, priced by sections)
)

// The predicates that follow the seat model: per-leg seat rows (decision
// 0350), seat kinds and drawn positions (decision 0370).

// bestLayoutRow selects the row of a seat that carries its layout (section,
// row, position, kind): its leg-0 row.
func bestLayoutRow(alias string) string { return alias + `.leg = 0` }

// bestOnLegs selects the rows of a seat for the journey's legs [from, to).
func bestOnLegs(alias string) string { return legsSQL(alias, bestLegFrom, bestLegTo) }

// bestFreeOnLegs is the condition that the seat whose layout row is alias
// may be taken for every leg of the journey and is sold for it (a fare of
// its class, on a trip with stops). A seat sold Dhaka → Cumilla is free
// for Cumilla → Chattogram, whatever its leg-0 row says; the one-leg
// journey of a show without stops reads the layout row alone.
func bestFreeOnLegs(alias string) string {
	return bestKind(alias) + ` AND ` + seatPriceSQL(alias, bestStops, bestLegFrom, bestLegTo) + ` IS NOT NULL
		AND CASE WHEN ` + bestLegFrom + ` = 0 AND ` + bestLegTo + ` = 1 THEN ` + bestFree(alias) + `
		    ELSE NOT EXISTS (SELECT FROM seats o WHERE o.show_id = ` + alias + `.show_id AND o.seat = ` + alias + `.seat
		                     AND ` + bestOnLegs("o") + ` AND NOT (` + bestFree("o") + `)) END`
}

// bestLegKey is the columns besides the seat that name one row of
// bestOnLegs.
func bestLegKey(alias string) string { return `, ` + alias + `.leg` }

// bestLegJoin joins two aliases of those rows on bestLegKey.
func bestLegJoin(a, b string) string { return ` AND ` + a + `.leg = ` + b + `.leg` }

// bestKind is the condition that best available may pick the seat whose
// layout row is alias by its kind: never a blocked seat nor a wheelchair
// place (a space, not a seat), a seat for women only when $6.
func bestKind(alias string) string {
	return `(` + alias + `.kind NOT IN (` + blockedKind + `, ` + wheelchairKind + `) AND (` + alias + `.kind <> ` + womenKind + ` OR ` + bestWomen + `))`
}

// bestNext is the condition that the free seat o is right after the free
// seat before it in its row (window w: the same row in position order):
// the next place of the drawing (x one place, 10 units, further: an aisle
// or a gap breaks a block), or the next position for seats drawn in
// straight rows (no x).
func bestNext(o, w string) string {
	return `CASE WHEN ` + o + `.x IS NULL THEN lag(` + o + `.position) OVER ` + w + ` = ` + o + `.position - 1
	             ELSE lag(` + o + `.x) OVER ` + w + ` = ` + o + `.x - 10 END`
}

// bestFree is the condition that the row alias may be taken by the hold:
// free at now (an expired hold's included, R-3.3) and in the hold's
// channel.
func bestFree(alias string) string {
	return `(` + alias + `.status = 'available' OR (` + alias + `.status = 'held' AND ` + alias + `.held_until < ` + bestNow + `))
		AND ` + inChannel(alias, bestShow, bestPartner)
}

// bestRowExtent is the first and the last position of the row (section
// sec, row row) of the seat at position at: two index probes, each
// walking the row's own seats to the seat of another row before or after
// it.
func bestRowExtent(at, sec, row string) string {
	other := func(cmp, order string) string {
		return `(SELECT xo.position FROM seats xo
		         WHERE xo.show_id = ` + bestShow + ` AND ` + bestLayoutRow("xo") + ` AND xo.position ` + cmp + ` ` + at + `
		           AND (xo.section, xo.row_label) IS DISTINCT FROM (` + sec + `, ` + row + `)
		         ORDER BY xo.position ` + order + ` LIMIT 1)`
	}
	return `(SELECT min(xf.position) FROM seats xf WHERE xf.show_id = ` + bestShow + ` AND ` + bestLayoutRow("xf") + `
	           AND xf.position > coalesce(` + other("<", "DESC") + `, -1)) AS row_first,
	        (SELECT max(xl.position) FROM seats xl WHERE xl.show_id = ` + bestShow + ` AND ` + bestLayoutRow("xl") + `
	           AND xl.position < coalesce(` + other(">", "ASC") + `, 2147483647)) AS row_last`
}

// bestOpen is the window every pick starts from: the free seats of the
// section asked for (or any) in layout order from position $12 on, at
// most bestWindow, less the excluded ones.
var bestOpen = `
	WITH open AS MATERIALIZED (
		SELECT s.seat, s.section, s.row_label, s.position, s.x FROM seats s
		WHERE s.show_id = ` + bestShow + ` AND ` + bestLayoutRow("s") + ` AND s.position >= ` + bestStart + `
		  AND (` + bestSection + ` = '' OR s.section = ` + bestSection + `)
		  AND s.seat <> ALL(` + bestExcluded + `)
		  AND ` + bestFreeOnLegs("s") + `
		ORDER BY s.position
		LIMIT ` + strconv.Itoa(bestWindow) + `
	)`

// bestBlockChoice chooses the best block (the rule's 2 to 4): the free
// seats in runs of adjacent ones per row (bestNext), the first row with a
// run of n, its row's extent, and in it the best block.
var bestBlockChoice = `,
	marked AS (
		SELECT o.*, CASE WHEN ` + bestNext("o", "(PARTITION BY o.section, o.row_label ORDER BY o.position)") + `
		                 THEN 0 ELSE 1 END AS breaks
		FROM open o
	),
	runs AS (
		SELECT m.*, sum(m.breaks) OVER (PARTITION BY m.section, m.row_label ORDER BY m.position) AS run
		FROM marked m
	),
	placed AS MATERIALIZED (
		SELECT r.*,
		       row_number() OVER w - 1 AS k,
		       count(*) OVER (PARTITION BY r.section, r.row_label, r.run) AS len,
		       lead(r.position, ` + bestQuantity + ` - 1) OVER w AS last_position
		FROM runs r
		WINDOW w AS (PARTITION BY r.section, r.row_label, r.run ORDER BY r.position)
	),
	best_row AS MATERIALIZED (
		SELECT p.section, p.row_label, min(p.position) AS at FROM placed p
		WHERE p.k + ` + bestQuantity + ` <= p.len
		GROUP BY p.section, p.row_label
		ORDER BY min(p.position)
		LIMIT 1
	),
	extent AS MATERIALIZED (
		SELECT b.*, ` + bestRowExtent("b.at", "b.section", "b.row_label") + ` FROM best_row b
	),
	best AS MATERIALIZED (
		SELECT p.section, p.row_label, p.run, p.k
		FROM placed p JOIN extent e ON e.section = p.section AND e.row_label = p.row_label
		WHERE p.k + ` + bestQuantity + ` <= p.len
		ORDER BY (p.k = 1)::int + (p.len - p.k - ` + bestQuantity + ` = 1)::int,
		         abs(p.position + p.last_position - e.row_first - e.row_last),
		         p.position
		LIMIT 1
	),
	choice AS MATERIALIZED (
		SELECT p.seat, p.section, p.row_label FROM placed p
		JOIN best b ON b.section = p.section AND b.row_label = p.row_label AND b.run = p.run
		WHERE p.k >= b.k AND p.k < b.k + ` + bestQuantity + `
	)`

// bestApartChoice chooses n seats apart: those of the first rows that have
// n free seats between them, the front row first, in a row nearest its
// centre, then the leftmost.
var bestApartChoice = `,
	first AS MATERIALIZED (
		SELECT o.section, o.row_label, min(o.position) AS at
		FROM (SELECT * FROM open ORDER BY position LIMIT ` + bestQuantity + `) o
		GROUP BY o.section, o.row_label
	),
	extent AS MATERIALIZED (
		SELECT f.*, ` + bestRowExtent("f.at", "f.section", "f.row_label") + ` FROM first f
	),
	choice AS MATERIALIZED (
		SELECT o.seat, o.section, o.row_label FROM open o
		JOIN extent e ON e.section = o.section AND e.row_label = o.row_label
		ORDER BY e.at, abs(2 * o.position - e.row_first - e.row_last), o.position
		LIMIT ` + bestQuantity + `
	)`

// bestTake locks the chosen seats' rows of the journey in seat order
// (with SKIP LOCKED, or waiting: lock) and marks them held only when it
// locked every one. It answers the choice, what it locked, what it took
// (seat, position, price in layout order), the free seats of the window,
// the first position of the window's last row (where the next window
// starts), and whether the section asked for has seats at all.
func bestTake(lock string) string {
	return `,
	locked AS MATERIALIZED (
		SELECT s.seat` + bestLegKey("s") + ` FROM seats s
		WHERE s.show_id = ` + bestShow + ` AND s.seat IN (SELECT seat FROM choice) AND ` + bestOnLegs("s") + `
		  AND ` + bestFree("s") + `
		ORDER BY s.seat` + bestLegKey("s") + `
		` + lock + `
	),
	taken AS (
		UPDATE seats s
		SET status = 'held', hold_id = ` + bestHold + `, held_until = ` + bestHeldUntil + `, version = s.version + 1
		FROM locked l
		WHERE s.show_id = ` + bestShow + ` AND s.seat = l.seat` + bestLegJoin("s", "l") + `
		  AND (SELECT count(*) FROM choice) = ` + bestQuantity + `
		  AND (SELECT count(*) FROM locked) = ` + bestQuantity + ` * (` + bestLegTo + ` - ` + bestLegFrom + `)
		RETURNING s.seat, s.position, s.leg, ` + seatPriceSQL("s", bestStops, bestLegFrom, bestLegTo) + ` AS price_minor
	),
	counts AS (SELECT count(*) AS open FROM open)
	SELECT (SELECT coalesce(array_agg(seat ORDER BY seat), '{}') FROM choice),
	       (SELECT coalesce(array_agg(DISTINCT seat), '{}') FROM locked),
	       (SELECT coalesce(array_agg(t.seat ORDER BY t.position), '{}') FROM taken t WHERE t.leg = ` + bestLegFrom + `),
	       (SELECT coalesce(array_agg(t.price_minor ORDER BY t.position), '{}') FROM taken t WHERE t.leg = ` + bestLegFrom + `),
	       counts.open,
	       (SELECT min(o.position) FROM open o
	        WHERE (o.section, o.row_label) = (SELECT section, row_label FROM open ORDER BY position DESC LIMIT 1)),
	       CASE WHEN counts.open > 0 THEN true
	            ELSE EXISTS (SELECT FROM seats a WHERE a.show_id = ` + bestShow + ` AND ` + bestLayoutRow("a") + `
	                         AND (` + bestSection + ` = '' OR a.section = ` + bestSection + `)) END
	FROM counts`
}

// The four statements: a block or seats apart, passing over or waiting for
// locked seats.
var (
	bestBlockSkipSQL = bestOpen + bestBlockChoice + bestTake(`FOR UPDATE SKIP LOCKED`)
	bestBlockWaitSQL = bestOpen + bestBlockChoice + bestTake(`FOR UPDATE`)
	bestApartSkipSQL = bestOpen + bestApartChoice + bestTake(`FOR UPDATE SKIP LOCKED`)
	bestApartWaitSQL = bestOpen + bestApartChoice + bestTake(`FOR UPDATE`)
)

// bestAttempt is what one statement did.
type bestAttempt struct {
	choice, locked, seats []string
	prices                []int64
	// open is the free seats of the window (less the excluded ones);
	// lastRow the first position of its last row; seated whether the
	// section asked for (or the show) has seats at all.
	open    int
	lastRow *int
	seated  bool
}

// full tells whether the window was full: more free seats may follow it.
func (a bestAttempt) full() bool { return a.open >= bestWindow }

// BestStats counts best-available holds' attempts since the service
// started (decision 0383): what the crowd costs.
type BestStats struct {
	// Holds taken, Apart those of seats apart; Attempts the statements run
	// for them and for refusals.
	Holds, Attempts, Apart int64
}

// bestCounters are BestStats as they count.
type bestCounters struct{ holds, attempts, apart atomic.Int64 }

// BestStats reports the best-available counts.
func (s *Service) BestStats() BestStats {
	return BestStats{Holds: s.best.holds.Load(), Attempts: s.best.attempts.Load(), Apart: s.best.apart.Load()}
}

// holdBest takes h.Quantity seats of show h.ShowID for the hold's journey
// (legs h.Journey.From … To-1 of a trip with stops stops) by the rule
// above, marks them held by h and fills in h.Seats (layout order), the
// seats for women among them (best.Women declares their passengers) and
// h.AmountMinor. The caller has applied the hold rules (holdOne). stats
// may be nil.
func holdBest(ctx context.Context, tx pgx.Tx, h *Hold, best BestAvailable, stops int, now time.Time, stats *bestCounters) error {
	legFrom, legTo := h.Journey.From, h.Journey.To
	attempt := func(sql string, start int, excluded []string) (bestAttempt, bool, error) {
		var a bestAttempt
		err := pg.InTx(ctx, tx, func(sp pgx.Tx) error {
			if err := sp.QueryRow(ctx, sql, h.ShowID, h.Quantity, now, h.PartnerID, best.Section, best.Women,
				legFrom, legTo, excluded, h.ID, h.ExpiresAt, start, stops).
				Scan(&a.choice, &a.locked, &a.seats, &a.prices, &a.open, &a.lastRow, &a.seated); err != nil {
				return fmt.Errorf("best available on show %d: %w", h.ShowID, err)
			}
			if len(a.seats) != h.Quantity {
				return errAllOrNothing // roll the savepoint back: no lock stays
			}
			return nil
		})
		if stats != nil {
			stats.attempts.Add(1)
		}
		if err == errAllOrNothing {
			return a, false, nil
		}
		return a, err == nil, err
	}
	// run takes a choice (a block, or seats apart). It passes over locked
	// seats first, leaving them out of the next attempt, then waits for
	// them; a window without a choice is followed by the next (a block
	// only: seats apart are the first free ones). It answers the last
	// attempt, whether it took its seats, and whether some window had n
	// free seats.
	run := func(skipSQL, waitSQL string, windows bool) (bestAttempt, bool, bool, error) {
		var (
			a        bestAttempt
			enough   bool
			excluded = []string{}
			start    = 0
			skips    = 0
			waits    = 0
		)
		for {
			sql := skipSQL
			if skips >= bestSkipAttempts {
				sql = waitSQL
			}
			var (
				ok  bool
				err error
			)
			a, ok, err = attempt(sql, start, excluded)
			enough = enough || a.open >= h.Quantity
			if ok || err != nil {
				return a, ok, enough, err
			}
			switch {
			case len(a.choice) == h.Quantity && sql == skipSQL:
				// Someone else is taking some of these seats.
				skips++
				for _, seat := range a.choice {
					if !slices.Contains(a.locked, seat) {
						excluded = append(excluded, seat)
					}
				}
			case len(a.choice) == h.Quantity:
				// Taken while this one waited: choose again.
				if waits++; waits >= bestWaitAttempts {
					return a, false, enough, nil
				}
			case windows && a.full() && a.lastRow != nil && *a.lastRow > start:
				// No block in this window: the next one, from its last row.
				start = *a.lastRow
			case sql == skipSQL && len(excluded) > 0:
				// Nothing left but what others were taking: wait for it.
				skips, excluded, start = bestSkipAttempts, excluded[:0], 0
			default:
				return a, false, enough, nil // nothing to choose
			}
		}
	}
	take := func(a bestAttempt, apart bool) error {
		h.Seats = a.seats
		if best.Women {
			women, err := womenAmong(ctx, tx, h.ShowID, a.seats)
			if err != nil {
				return err
			}
			h.WomenSeats = women
		}
		for _, p := range a.prices {
			var err error
			// Prices are bounded (decision 0071); a wrapped total is never sold.
			if h.AmountMinor, err = amount.Add(h.AmountMinor, p); err != nil {
				return &fault.Error{Reason: fault.BookingInvalid, Field: "quantity", Seats: a.seats,
					Message: fmt.Sprintf("the total price of seats %s is out of range", joinSeats(a.seats))}
			}
		}
		if stats != nil {
			stats.holds.Add(1)
			if apart {
				stats.apart.Add(1)
			}
		}
		return nil
	}

	a, ok, enough, err := run(bestBlockSkipSQL, bestBlockWaitSQL, true)
	switch {
	case err != nil:
		return err
	case ok:
		return take(a, false)
	case !a.seated && best.Section != "":
		return fault.OnField(fault.BookingInvalid, "best_available.section", "show %d has no seats in section %q", h.ShowID, best.Section)
	case !a.seated:
		return fault.OnField(fault.BookingInvalid, "quantity", "show %d has no seats to pick from; name a general-admission area", h.ShowID)
	case len(a.choice) == h.Quantity:
		return bestUnavailable(ctx, tx, h, a, fmt.Sprintf("the seats best available chose on show %d were taken meanwhile; ask again", h.ShowID))
	case !enough:
		return bestUnavailable(ctx, tx, h, a, fmt.Sprintf("%d seats of show %d are free%s; %d asked for", a.open, h.ShowID, inSection(best), h.Quantity))
	case !best.AllowSeparate:
		return fault.New(fault.SeatsNotTogether, "no %d seats side by side are free on show %d%s; seats apart are (allow_separate takes them)",
			h.Quantity, h.ShowID, inSection(best))
	}
	a, ok, _, err = run(bestApartSkipSQL, bestApartWaitSQL, false)
	switch {
	case err != nil:
		return err
	case ok:
		return take(a, true)
	case len(a.choice) == h.Quantity:
		return bestUnavailable(ctx, tx, h, a, fmt.Sprintf("the seats best available chose on show %d were taken meanwhile; ask again", h.ShowID))
	}
	return bestUnavailable(ctx, tx, h, a, fmt.Sprintf("%d seats of show %d are free%s; %d asked for", a.open, h.ShowID, inSection(best), h.Quantity))
}

// inSection is " in section X" when the request names one.
func inSection(best BestAvailable) string {
	if best.Section == "" {
		return ""
	}
	return " in section " + best.Section
}

// bestUnavailable is SEATS_UNAVAILABLE with the free seats seen and the
// seat-map version to redraw from.
func bestUnavailable(ctx context.Context, tx pgx.Tx, h *Hold, a bestAttempt, msg string) error {
	version, err := seatmapVersion(ctx, tx, h.ShowID)
	if err != nil {
		return err
	}
	return &fault.Error{Reason: fault.SeatsUnavailable, Remaining: a.open, SeatmapVersion: version, Message: msg}
}

// bestWanted tells whether a hold without seats is best available's to
// pick (decision 0383): it asks (req.Best), or it names no area of a show
// with seats and no general admission (the contract of CreateHoldRequest's
// quantity). best is the request's, or the zero one.
func bestWanted(ctx context.Context, tx pgx.Tx, req HoldRequest) (BestAvailable, bool, error) {
	if len(req.Seats) > 0 || req.Quantity <= 0 {
		return BestAvailable{}, false, nil
	}
	if req.Best != nil {
		if req.GAArea != "" {
			return BestAvailable{}, false, fault.OnField(fault.BookingInvalid, "best_available", "best available picks seats, not general-admission places: leave ga_area out")
		}
		return *req.Best, true, nil
	}
	if req.GAArea != "" {
		return BestAvailable{}, false, nil
	}
	var seated bool
	if err := tx.QueryRow(ctx, `
		SELECT NOT EXISTS (SELECT FROM ga_buckets WHERE show_id = $1) AND EXISTS (SELECT FROM seats WHERE show_id = $1)`,
		req.ShowID).Scan(&seated); err != nil {
		return BestAvailable{}, false, fmt.Errorf("does show %d have seats only: %w", req.ShowID, err)
	}
	return BestAvailable{}, seated, nil
}
