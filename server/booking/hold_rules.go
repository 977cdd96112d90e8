package booking

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/fault"
)

// The rules every hold of a show passes, whichever path takes it (decision
// 0311): the one-hold path (holdOne), the pipelined statements
// (holdSeatsSQL, holdGASQL) and the batch (holdBatchSQL, holdBatchGASQL)
// all read them from holdRulesSQL, so they cannot drift apart.
// TestHoldRulesAreTheSameOnEveryPath sends the same requests through the
// three and compares the answers and the rows.

// holdRulesSQL is a LATERAL subquery, rules, of one row: the verdicts of
// the rules on a hold of n places by account user at now of the show
// whose shows row is show, for the journey j (each an SQL expression of
// the statement that uses it):
//
//   - opened: the sale has opened (on_sale_at);
//   - not_started: the coach has not left the journey's boarding stop
//     (starts_at plus the stop's minutes; the start for a show without
//     stops), nor has its supervisor marked it gone from that stop or a
//     later one (trip_marks, decision 0468): every channel's sales of a
//     journey end then (issue 25 §3), and a no-show's later legs sell
//     until the coach reaches them;
//   - not_cancelled: its operator has not cancelled it (cancelled_at,
//     decision 0440): no hold from the moment the cancellation commits;
//   - before_reserve, reserve_seats: the walk-in reserve (decision
//     0444): the time before departure online and partner sales stop has
//     not come, and the seats they leave to the counters. The fast paths
//     allow a hold only on a show without a seat reserve: the count of
//     free seats is exact only under the reserve's lock, which the
//     one-hold path takes (checkWalkInReserve); a counter's hold takes
//     that path and is not refused by either;
//   - within_hold_limit: n is within max_seats_per_hold;
//   - held: the places the account holds, awaits payment for or bought of
//     the show (heldOrBought), found by key (holds_user);
//   - within_account_cap: held and n together are within
//     max_seats_per_account: places, so a seat held for a journey
//     of several legs counts once;
//   - the journey's columns (journeySQL: its stops and counters, from_stop
//     and to_stop) and journey_ok, the journey is one the trip has;
//   - allowed: all of them.
//
// The fast paths take only the holds it allows and leave the others to the
// one-hold path, which reads the verdicts to say which rule a refusal
// broke. held is right only under the account's lock (accountLock), taken
// by an earlier statement of the transaction: READ COMMITTED takes each
// statement's snapshot when it starts.
func holdRulesSQL(show, now, n, user string, j journeyArgs) string {
	return `LATERAL (
		SELECT v.*, v.opened AND v.not_started AND v.not_cancelled AND v.within_hold_limit AND v.within_account_cap AND v.journey_ok
		            AND v.before_reserve AND v.reserve_seats = 0 AS allowed
		FROM (SELECT ` + show + `.on_sale_at <= ` + now + ` AS opened,
		             ` + show + `.starts_at + make_interval(mins => journey.from_minutes) > ` + now + ` AND NOT journey.departed AS not_started,
		             ` + show + `.starts_at + make_interval(mins => journey.from_minutes)
		               - make_interval(secs => ` + show + `.walk_in_reserve_ms / 1000.0) > ` + now + ` AS before_reserve,
		             ` + show + `.walk_in_reserve_seats AS reserve_seats,
		             ` + show + `.cancelled_at IS NULL AS not_cancelled,
		             ` + show + `.max_seats_per_hold >= ` + n + ` AS within_hold_limit,
		             c.held,
		             ` + show + `.max_seats_per_account >= ` + n + ` + c.held AS within_account_cap,
		             journey.*
		      FROM (SELECT coalesce(sum(h.quantity), 0) AS held FROM holds h
		            WHERE h.show_id = ` + show + `.show_id AND h.user_id = ` + user + `
		              AND ` + heldOrBought("h", now) + `) c
		      CROSS JOIN ` + journeySQL(show+".show_id", j) + `) v
	) rules`
}

// heldOrBought is the condition that the hold alias counts against a cap
// at now (R-3.8, decision 0286): a live hold, one whose order awaits
// payment (the hold is ordered until the order's pay-by) and a paid one.
// Expired, released and cancelled ones do not.
func heldOrBought(alias, now string) string {
	return `(` + alias + `.status = 'confirmed' OR (` + alias + `.status IN ('active', 'ordered') AND ` +
		alias + `.expires_at >= ` + now + `))`
}

// accountLock is the advisory lock of account user on show (SQL
// expressions), which serialises its holds of the show so that two
// concurrent ones cannot both slip under its cap: every path takes
// it before it counts.
func accountLock(user, show string) string {
	return `hashtextextended(` + user + `, ` + show + `)`
}

// holdVerdicts are holdRulesSQL's verdicts on one hold.
type holdVerdicts struct {
	opened, notStarted, notCancelled, withinHoldLimit, withinAccountCap bool
	held                                                                int
	journey                                                             journeyVerdicts
	// beforeReserve and reserveSeats: the walk-in reserve (decision 0444).
	beforeReserve bool
	reserveSeats  int
}

// loadShowRules reads showID's settings and the rules' verdicts on a hold
// of n places by userID at now for journey j: one statement, after the
// account's lock.
func loadShowRules(ctx context.Context, tx pgx.Tx, showID int64, userID string, n int, j JourneyRequest, now time.Time) (showSettings, holdVerdicts, error) {
	var v holdVerdicts
	show, err := scanShow(tx.QueryRow(ctx, `
		SELECT `+showColumns+`,
		       rules.opened, rules.not_started, rules.not_cancelled, rules.within_hold_limit, rules.within_account_cap, rules.held,
		       rules.before_reserve, rules.reserve_seats, `+journeyColumns+`
		FROM shows s CROSS JOIN `+holdRulesSQL("s", "$2::timestamptz", "$3::int", "$4::text",
		journeyArgs{"$5::text", "$6::text", "$7::text", "$8::text"})+`
		WHERE s.show_id = $1`, showID, now, n, userID, j.From, j.To, j.Boarding, j.Dropping),
		showID, append([]any{&v.opened, &v.notStarted, &v.notCancelled, &v.withinHoldLimit, &v.withinAccountCap, &v.held,
			&v.beforeReserve, &v.reserveSeats}, v.journey.dest()...)...)
	return show, v, err
}

// refusal says which rule a hold of n places of show broke, nil when none
// did; account: the hold is an account's, which has a cap (a partner's
// has its own, checkPartnerCap: a partner sells for many buyers, decision
// 0185).
func (v holdVerdicts) refusal(show showSettings, n int, account bool) error {
	switch {
	case !v.notCancelled:
		return fault.New(fault.ShowCancelled, "show %d was cancelled by its operator", show.ID)
	case !v.opened:
		return fault.New(fault.BookingNotAllowed, "sales for show %d open at %s", show.ID, show.OnSaleAt.Format(time.RFC3339))
	case !v.notStarted:
		return fault.New(fault.BookingNotAllowed, "show %d has already started, or the coach has left the journey's boarding stop", show.ID)
	case !v.withinHoldLimit:
		return fault.OnField(fault.BookingInvalid, "seats", "at most %d seats in one hold for show %d (R-3.8)", show.MaxSeatsPerHold, show.ID)
	case account && !v.withinAccountCap:
		e := fault.New(fault.BookingNotAllowed, "an account may hold or buy at most %d seats of show %d; you have %d (R-3.8)",
			show.MaxSeatsPerAccount, show.ID, v.held)
		e.AccountCap = &fault.AccountCap{ShowID: show.ID, Max: show.MaxSeatsPerAccount, Held: v.held, Asked: n}
		return e
	}
	return nil
}

// lockAccount takes accountLock in tx, for the statements after it.
func lockAccount(ctx context.Context, tx pgx.Tx, showID int64, userID string) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(`+accountLock("$1::text", "$2::bigint")+`)`, userID, showID); err != nil {
		return fmt.Errorf("lock account %s on show %d: %w", userID, showID, err)
	}
	return nil
}

// checkWalkInReserve refuses an online or partner hold of n seats inside
// the walk-in reserve (issue 25 §3, decision 0444): after the time before
// departure the counters keep, or when it would leave fewer free seats on
// the journey's legs than the seats they keep. The count is taken under
// the show's reserve lock, held until the hold commits, so two online
// holds cannot both take the last seat before the reserve; a counter's
// hold (which never calls this) may take any free seat meanwhile, which
// only spends the reserve it is for. The seats kept are seats: a
// general-admission hold (seated false) is stopped by the time only.
func checkWalkInReserve(ctx context.Context, tx pgx.Tx, show showSettings, v holdVerdicts, n int, seated bool, now time.Time) error {
	if !v.beforeReserve {
		return fault.New(fault.WalkInReserve, "online sales of show %d have ended before its departure; the operator's counters sell the rest", show.ID)
	}
	if v.reserveSeats == 0 || !seated {
		return nil
	}
	from, to := 0, 1
	if v.journey.from != nil && v.journey.to != nil {
		from, to = *v.journey.from, *v.journey.to
	}
	var free int
	err := tx.QueryRow(ctx, `
		WITH locked AS (SELECT pg_advisory_xact_lock(hashtextextended('walk-in-reserve', $1)))
		SELECT count(*) FROM (
			SELECT s.seat FROM locked, seats s
			WHERE s.show_id = $1 AND `+legsSQL("s", "$2", "$3")+`
			GROUP BY s.seat HAVING bool_and(`+seatFree("s", "$4")+`)) f`, show.ID, from, to, now).Scan(&free)
	if err != nil {
		return fmt.Errorf("count the free seats of show %d for its walk-in reserve: %w", show.ID, err)
	}
	if free-n < v.reserveSeats {
		return fault.New(fault.WalkInReserve, "show %d keeps its last %d seats for the operator's counters; %d are free", show.ID, v.reserveSeats, free)
	}
	return nil
}
