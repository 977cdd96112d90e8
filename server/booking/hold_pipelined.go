package booking

import (
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/idempotency"
	"github.com/seatghor/seatghor/server/outbox"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/shard"
)

// lockAccountSQL takes the account's lock (accountLock: $2 the user, $3
// the show; a Pipelined.Lock, in one statement with the idempotency key's
// lock, decision 0226). It is a statement before the one that counts the
// account's seats (holdRulesSQL), so that count's snapshot is taken with
// the lock held.
//
// It also makes the rest of the transaction use generic plans: PostgreSQL
// would plan holdSeatsSQL anew for every hold (a custom plan, as good as
// the generic one, since every row is found by key) and that planning
// costs more than running it (decision 0125).
//
// And it rules out sequential scans for the rest of the transaction
// (decision 0266): a generic plan is made once per connection, from the
// statistics of that moment, and kept. Made while a table was empty (a
// new shard, a fresh database before its first ANALYZE), it scanned the
// whole holds table to count the account's seats, for every hold, ever
// after: 2 ms a hold at 20,000 holds. Every row the hold reads is found
// by key, so no plan of it wants a sequential scan.
var lockAccountSQL = `pg_advisory_xact_lock(` + accountLock("$2", "$3") + `), ` + holdPlanSettings

// holdPlanSettings are the settings above, for the rest of a hold's
// transaction: generic plans, without sequential scans.
const holdPlanSettings = `set_config('plan_cache_mode', 'force_generic_plan', true), set_config('enable_seqscan', 'off', true)`

// showRulesCTE is the show's row, with the hold's journey (journeySQL),
// when the rules (holdRulesSQL) allow a hold of $6 places by $5 at $3 of
// show $1 for the journey $7 → $8 with counters $9 and $10, counted after
// lockAccountSQL; no row otherwise. The pipelined statements serve
// Seatghor's own channel only (inPublicChannel): a partner's hold takes
// the one-hold path (decision 0286).
var showRulesCTE = `
	WITH show AS (
		SELECT s.currency, s.hold_ttl_ms, $3::timestamptz + s.hold_ttl_ms * interval '1 millisecond' AS expires_at,
		       rules.stops, rules.from_stop, rules.to_stop, rules.boarding_counter, rules.dropping_counter
		FROM shows s CROSS JOIN ` + holdRulesSQL("s", "$3", "$6", "$5", journeyArgs{"$7::text", "$8::text", "$9::text", "$10::text"}) + `
		WHERE s.show_id = $1 AND rules.allowed
	)`

// holdSeatsSQL is a seated hold in one statement (decision 0125): it reads
// the show's rules and the account's seats, takes every asked-for seat or
// none on every leg of the journey (decision 0350) and writes the
// hold, and answers a row only when all of that happened. Each step is
// gated on the one before, so a refusal answers no row; the caller then
// rolls back whatever the statement did and lets CreateHold's ordinary
// path explain it.
//
// The seats' rows are locked in (seat, leg) order as in holdSeats (no
// deadlocks), and expiry, the channel (inPublicChannel) and the
// seats' kinds (holdableKind: $11 the seats declared for women) live in
// the condition; a seat is priced once, on the journey's first leg
// (seatPriceSQL), and a seat without a price for the journey leaves the
// hold to the ordinary path (decision 0352). Nothing in it grows with the
// show's size: every row it reads is found by key.
var holdSeatsSQL = showRulesCTE + `,
	free AS MATERIALIZED (
		SELECT s.show_id, s.seat, s.leg,
		       CASE WHEN s.leg = j.from_stop THEN ` + seatPriceSQL("s", "j.stops", "j.from_stop", "j.to_stop") + ` END AS price
		FROM seats s CROSS JOIN show j
		WHERE s.show_id = $1 AND s.seat = ANY($2) AND ` + legsSQL("s", "j.from_stop", "j.to_stop") + `
		  AND ` + seatFree("s", "$3") + `
		  AND ` + inPublicChannel("s") + `
		  AND ` + holdableKind("s", "s.seat = ANY($11)") + `
		ORDER BY s.seat, s.leg
		FOR UPDATE OF s
	),
	taken AS (
		UPDATE seats s
		SET status = 'held', hold_id = $4, held_until = (SELECT expires_at FROM show), version = s.version + 1
		FROM free
		WHERE s.show_id = free.show_id AND s.seat = free.seat AND s.leg = free.leg
		  AND ` + seatFree("s", "$3") + `
		  AND ` + inPublicChannel("s") + `
		  AND (SELECT count(*) FROM free) = $6 * (SELECT to_stop - from_stop FROM show)
		  AND (SELECT count(price) FROM free) = $6
		RETURNING s.seat, s.position, s.leg, free.price
	),
	hold AS (
		INSERT INTO holds (hold_id, show_id, user_id, status, seats, ga_area, quantity,
		                   amount_minor, currency, expires_at, created_at, updated_at, women_seats,
		                   from_stop, to_stop, boarding_counter, dropping_counter)
		SELECT $4, $1, $5, 'active', array_agg(taken.seat ORDER BY taken.position) FILTER (WHERE taken.price IS NOT NULL), '', $6,
		       sum(taken.price), show.currency, show.expires_at, $3, $3,
		       coalesce(array_agg(taken.seat ORDER BY taken.position) FILTER (WHERE taken.price IS NOT NULL AND taken.seat = ANY($11)), '{}'),
		       show.from_stop, show.to_stop, show.boarding_counter, show.dropping_counter
		FROM taken, show
		GROUP BY show.currency, show.expires_at, show.from_stop, show.to_stop, show.boarding_counter, show.dropping_counter
		-- Prices are bounded (decision 0071); a total past int64 is
		-- the ordinary path's to refuse.
		HAVING count(*) = $6 * (show.to_stop - show.from_stop) AND count(taken.price) = $6
		   AND sum(taken.price) <= 9223372036854775807
		RETURNING seats, amount_minor, currency, women_seats, from_stop, to_stop
	)
	SELECT hold.seats, hold.amount_minor, hold.currency, show.hold_ttl_ms, hold.women_seats, hold.from_stop, hold.to_stop
	FROM hold, show`

// holdGASQL is holdGA's fast path in one statement (decision 0125): it
// resolves the area ($2, or the show's only one), takes all $6 places from
// one public bucket (inPublicChannel) no one else has locked (SKIP LOCKED
// spreads the crowd, decision 0006), and writes the hold and what it
// took. When no free bucket has enough, it answers nothing and CreateHold's
// ordinary path takes over (holdGASlow); the rollback before it releases any
// bucket this one locked.
//
// It reads as few bucket rows as it can (decision 0235): every hold of an
// area updates one of them, so each is a chain of row versions the readers
// walk. A named area is not looked up (an unknown one finds no bucket, and
// the ordinary path explains it); the bucket is the first free one in
// bucket order from a random start, wrapping around; and the price is the
// taken bucket's, which is its area's (every
// bucket of an area is made with the area's price: catalog.CreateShow,
// allocateGA; none is repriced).
var holdGASQL = showRulesCTE + `,
	area AS (
		SELECT CASE WHEN $2 <> '' THEN $2 ELSE (
		           SELECT min(area) FROM ga_buckets WHERE show_id = $1 HAVING count(DISTINCT area) = 1) END AS area
		WHERE EXISTS (SELECT FROM show)
	),
	start AS MATERIALIZED (
		-- A CTE runs once: random() in a condition could be drawn again for
		-- every row.
		SELECT floor(random() * (max(bucket) + 1))::int AS bucket FROM ga_buckets
		WHERE show_id = $1 AND area = (SELECT area FROM area) AND ` + inPublicChannel("ga_buckets") + `
	),
	pick AS MATERIALIZED (
		-- Each branch walks the area's buckets in key order and stops at the
		-- first it can lock; the second runs only when the first found
		-- nothing.
		SELECT bucket FROM (
			SELECT bucket FROM ga_buckets b
			WHERE show_id = $1 AND area = (SELECT area FROM area) AND remaining >= $6
			  AND bucket >= (SELECT bucket FROM start) AND ` + inPublicChannel("b") + `
			ORDER BY bucket LIMIT 1 FOR UPDATE SKIP LOCKED) after_start
		UNION ALL
		SELECT bucket FROM (
			SELECT bucket FROM ga_buckets b
			WHERE show_id = $1 AND area = (SELECT area FROM area) AND remaining >= $6
			  AND bucket < (SELECT bucket FROM start) AND ` + inPublicChannel("b") + `
			ORDER BY bucket LIMIT 1 FOR UPDATE SKIP LOCKED) before_start
		LIMIT 1
	),
	took AS (
		UPDATE ga_buckets b
		SET remaining = b.remaining - $6, version = b.version + 1
		WHERE b.show_id = $1 AND b.area = (SELECT area FROM area) AND b.bucket = (SELECT bucket FROM pick)
		  -- Prices and quantities are bounded (decision 0071); a total past
		  -- int64 is the ordinary path's to refuse.
		  AND b.price_minor::numeric * $6 <= 9223372036854775807
		RETURNING b.area, b.bucket, b.price_minor
	),
	hold AS (
		INSERT INTO holds (hold_id, show_id, user_id, status, seats, ga_area, quantity,
		                   amount_minor, currency, expires_at, created_at, updated_at)
		SELECT $4, $1, $5, 'active', '{}', took.area, $6, took.price_minor * $6, show.currency, show.expires_at, $3, $3
		FROM took, show
		RETURNING ga_area, amount_minor, currency
	),
	takes AS (
		INSERT INTO hold_ga_takes (hold_id, show_id, area, bucket, quantity)
		SELECT $4, $1, hold.ga_area, took.bucket, $6 FROM hold, took
		RETURNING bucket
	)
	SELECT hold.ga_area, hold.amount_minor, hold.currency, show.hold_ttl_ms, takes.bucket
	FROM hold, show, takes`

// pipelinedHold is CreateHold as an idempotency.Pipelined, for a public
// hold (not a partner's): the account lock (with the key's) and
// holdSeatsSQL or holdGASQL, then the outbox row with the key's
// record and COMMIT. slow answers everything else.
func pipelinedHold(userID string, req HoldRequest, now time.Time, trip catalog.Trip, slow func(pgx.Tx) (Hold, error)) idempotency.Pipelined[Hold] {
	id := shard.NewID("hld", req.ShowID)
	ga := len(req.Seats) == 0
	n := len(req.Seats)
	if ga {
		n = req.Quantity
	}
	return idempotency.Pipelined[Hold]{
		Lock:     lockAccountSQL,
		LockArgs: []any{userID, req.ShowID},
		Work: func(b *pgx.Batch) {
			j := req.Journey
			if ga {
				b.Queue(holdGASQL, req.ShowID, req.GAArea, now, id, userID, n, j.From, j.To, j.Boarding, j.Dropping)
			} else {
				b.Queue(holdSeatsSQL, req.ShowID, req.Seats, now, id, userID, n, j.From, j.To, j.Boarding, j.Dropping, req.WomenSeats)
			}
		},
		Read: func(br pgx.BatchResults) (Hold, bool, error) {
			h := Hold{ID: id, ShowID: req.ShowID, UserID: userID, Quantity: n, Status: HoldActive, CreatedAt: now,
				Journey: Journey{From: 0, To: 1, Boarding: req.Journey.Boarding, Dropping: req.Journey.Dropping}}
			var (
				ttlMs  int64
				bucket int
				err    error
			)
			if ga {
				err = br.QueryRow().Scan(&h.GAArea, &h.AmountMinor, &h.Currency, &ttlMs, &bucket)
				h.takes = map[int]int{bucket: n}
			} else {
				err = br.QueryRow().Scan(&h.Seats, &h.AmountMinor, &h.Currency, &ttlMs, &h.WomenSeats, &h.Journey.From, &h.Journey.To)
			}
			found, err := pg.Found(err)
			if err != nil {
				return Hold{}, false, fmt.Errorf("take places: %w", err)
			}
			if !found {
				return Hold{}, false, nil
			}
			h.ExpiresAt = now.Add(time.Duration(ttlMs) * time.Millisecond)
			h.WomenSeats = nilIfEmpty(h.WomenSeats)
			return h, true, nil
		},
		Finish: func(b *pgx.Batch, h Hold) error {
			return outbox.Queue(b, h.ShowID, now, seatsHeld(h, view(trip, h.Journey)))
		},
		Slow: slow,
	}
}
