package booking

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/idempotency"
	"github.com/seatghor/seatghor/server/pg"
)

// holdPath takes one hold as one of CreateHold's paths does, falling back
// to the one-hold path where CreateHold would, and tells whether the
// one-hold path's work ran.
type holdPath func(ctx context.Context, s *Service, pool *pg.Pool, userID string, req HoldRequest, now time.Time) (Hold, bool, error)

// holdPaths are the three ways CreateHold takes a public hold: the one-hold
// path alone (holdOne, as for a GA hold without a quantity or a partner's),
// the pipelined statements (decision 0125) and the batch (decision 0270).
var holdPaths = []struct {
	name string
	take holdPath
}{
	{"one-hold", func(ctx context.Context, s *Service, pool *pg.Pool, userID string, req HoldRequest, now time.Time) (Hold, bool, error) {
		ran := false
		h, err := idempotencyDo(ctx, s, pool, holdTarget(req.ShowID, req.Journey), now, func(tx pgx.Tx) (Hold, error) {
			ran = true
			return holdOne(ctx, tx, userID, req, now, 0, catalog.Trip{})
		})
		return h, ran, err
	}},
	{"pipelined", func(ctx context.Context, s *Service, pool *pg.Pool, userID string, req HoldRequest, now time.Time) (Hold, bool, error) {
		ran := false
		slow := func(tx pgx.Tx) (Hold, error) {
			ran = true
			return holdOne(ctx, tx, userID, req, now, 0, catalog.Trip{})
		}
		h, err := idempotency.DoPipelined(ctx, pool, ErrorCodec, idempotency.Options{
			Now: now, Wait: s.cfg.IdempotencyWait, Target: holdTarget(req.ShowID, req.Journey),
		}, pipelinedHold(userID, req, now, catalog.Trip{}, slow))
		return h, ran, err
	}},
	{"batch", func(ctx context.Context, s *Service, pool *pg.Pool, userID string, req HoldRequest, now time.Time) (Hold, bool, error) {
		h, held, err := s.holdInBatch(ctx, pool, userID, req, now, catalog.Trip{})
		if held || err != nil {
			return h, false, err
		}
		ran := false
		h, err = idempotencyDo(ctx, s, pool, holdTarget(req.ShowID, req.Journey), now, func(tx pgx.Tx) (Hold, error) {
			ran = true
			return holdOne(ctx, tx, userID, req, now, 0, catalog.Trip{})
		})
		return h, ran, err
	}},
}

// TestHoldRulesAreTheSameOnEveryPath: the same requests, one after another,
// through each of the three paths of a public hold (holdPaths), each on its
// own copy of one shard: holds in the sale window, at its edges and outside
// it, at and over the per-hold limit, at and over the per-account cap with
// live, awaiting-payment, paid, expired and ended holds, seated and GA, GA
// that no single bucket serves, seats asked twice and requests retried with
// their key. Every path gives every request the same answer (what was
// held, or the same refusal) and leaves the same rows, and each fast path
// takes itself exactly the holds the rules allow and one bucket or the
// asked-for seats serve: a fast path whose rules were looser would hold
// what the others refuse, and one whose rules were stricter would leave
// its holds to the one-hold path, which looks the same from outside.
func TestHoldRulesAreTheSameOnEveryPath(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2030, 3, 1, 10, 0, 0, 0, time.UTC)
	// Show 1 is on sale; show 2 opens at now; show 3 a microsecond after;
	// show 4 starts at now. Each has seats A1..A30 and a GA area, Floor,
	// of five buckets of two places (so no bucket serves three). A hold may
	// have 4 places, an account 6 of a show.
	seed := []string{`
		INSERT INTO shows (show_id, currency, on_sale_at, starts_at, hold_ttl_ms, payment_extension_ms,
		                   max_seats_per_account, max_seats_per_hold, created_at)
		VALUES (1, 'BDT', $1::timestamptz - interval '1 hour', $1::timestamptz + interval '30 days', 600000, 0, 6, 4, $1),
		       (2, 'BDT', $1, $1::timestamptz + interval '1 day', 600000, 0, 6, 4, $1),
		       (3, 'BDT', $1::timestamptz + interval '1 microsecond', $1::timestamptz + interval '1 day', 600000, 0, 6, 4, $1),
		       (4, 'BDT', $1::timestamptz - interval '1 day', $1, 600000, 0, 6, 4, $1)`, `
		INSERT INTO seats (show_id, seat, position, section, row_label, price_minor)
		SELECT s, 'A' || n, n, 'S', 'A', 100 * n FROM generate_series(1, 4) s, generate_series(1, 30) n
		WHERE $1::timestamptz IS NOT NULL`, `
		INSERT INTO ga_buckets (show_id, area, bucket, position, capacity, remaining, price_minor)
		SELECT s, 'Floor', b, b, 2, 2, 500 FROM generate_series(1, 4) s, generate_series(0, 4) b
		WHERE $1::timestamptz IS NOT NULL`, `
		-- A30 is someone else's; A29's hold ran out a microsecond ago.
		UPDATE seats SET status = 'held', hold_id = 'hld_1_other', held_until = $1::timestamptz + interval '1 hour'
		WHERE show_id = 1 AND seat = 'A30'`, `
		UPDATE seats SET status = 'held', hold_id = 'hld_1_lapsed', held_until = $1::timestamptz - interval '1 microsecond'
		WHERE show_id = 1 AND seat = 'A29'`, `
		-- A25, A26 and A28 are seats for women, A27 the crew's (decision 0371).
		UPDATE seats SET kind = CASE seat WHEN 'A27' THEN 5 ELSE 3 END
		WHERE show_id = 1 AND seat IN ('A25', 'A26', 'A27', 'A28') AND $1::timestamptz IS NOT NULL`, `
		-- capped and capped2 hold, await payment for (its hold's expiry,
		-- the order's pay-by, is now: it still counts) or bought 5 places;
		-- lapsed 2 (the rest ran out, were released or expired); gacap 5.
		INSERT INTO holds (hold_id, show_id, user_id, status, seats, quantity, amount_minor, currency,
		                   expires_at, created_at, updated_at)
		SELECT 'hld_1_' || u || '_' || k, 1, u, status, '{}', q, 0, 'BDT', $1::timestamptz + expires, $1, $1
		FROM (VALUES ('capped', 'a', 'active', 3, interval '5 minutes'),
		             ('capped', 'o', 'ordered', 1, interval '0'),
		             ('capped', 'c', 'confirmed', 1, interval '-1 day'),
		             ('capped2', 'a', 'active', 3, interval '5 minutes'),
		             ('capped2', 'o', 'ordered', 1, interval '0'),
		             ('capped2', 'c', 'confirmed', 1, interval '-1 day'),
		             ('lapsed', 'a', 'active', 4, interval '-1 microsecond'),
		             ('lapsed', 'o', 'ordered', 3, interval '-1 minute'),
		             ('lapsed', 'r', 'released', 5, interval '5 minutes'),
		             ('lapsed', 'e', 'expired', 5, interval '5 minutes'),
		             ('lapsed', 'c', 'confirmed', 2, interval '-1 day'),
		             ('gacap', 'c', 'confirmed', 5, interval '-1 day')) v(u, k, status, q, expires)`,
	}
	seed = append(seed, tripSeed...)
	trip := func(from, to string, seats ...string) HoldRequest {
		return HoldRequest{ShowID: 5, Seats: seats, Journey: JourneyRequest{From: from, To: to}}
	}
	counters := func(r HoldRequest, boarding, dropping string) HoldRequest {
		r.Journey.Boarding, r.Journey.Dropping = boarding, dropping
		return r
	}
	seats := func(s ...string) HoldRequest { return HoldRequest{ShowID: 1, Seats: s} }
	floor := func(n int) HoldRequest { return HoldRequest{ShowID: 1, GAArea: "Floor", Quantity: n} }
	on := func(show int64, r HoldRequest) HoldRequest { r.ShowID = show; return r }
	women := func(r HoldRequest, w ...string) HoldRequest { r.WomenSeats = w; return r }
	cases := []struct {
		name, user, key string
		req             HoldRequest
		// want is "held" or the refusal's reason (and field).
		want string
		// by is who answers on a fast path: "fast" (the path itself),
		// "slow" (the one-hold path) or "replay" (the key's record).
		by string
	}{
		{"seats on sale", "u1", "", seats("A1", "A2"), "held", "fast"},
		{"GA on sale", "u2", "", floor(2), "held", "fast"},
		{"seats as the sale opens", "u1", "", on(2, seats("A1")), "held", "fast"},
		{"GA as the sale opens", "u2", "", on(2, floor(1)), "held", "fast"},
		{"seats before the sale", "u1", "", on(3, seats("A1")), "BOOKING_NOT_ALLOWED", "slow"},
		{"GA before the sale", "u1", "", on(3, floor(1)), "BOOKING_NOT_ALLOWED", "slow"},
		{"GA no bucket serves before the sale", "u1", "", on(3, floor(3)), "BOOKING_NOT_ALLOWED", "slow"},
		{"seats as the show starts", "u1", "", on(4, seats("A1")), "BOOKING_NOT_ALLOWED", "slow"},
		{"GA as the show starts", "u1", "", on(4, floor(1)), "BOOKING_NOT_ALLOWED", "slow"},
		{"seats at the per-hold limit", "u3", "", seats("A3", "A4", "A5", "A6"), "held", "fast"},
		{"seats over the per-hold limit", "u4", "", seats("A7", "A8", "A9", "A10", "A11"), "BOOKING_INVALID seats", "slow"},
		{"GA over the per-hold limit", "u4", "", floor(5), "BOOKING_INVALID seats", "slow"},
		{"seats up to the cap with live holds", "capped", "", seats("A12"), "held", "fast"},
		{"seats over the cap with live holds", "capped2", "", seats("A13", "A14"), "BOOKING_NOT_ALLOWED", "slow"},
		{"seats up to the cap past ended holds", "lapsed", "", seats("A15", "A16", "A17", "A18"), "held", "fast"},
		{"GA over the cap", "gacap", "", floor(2), "BOOKING_NOT_ALLOWED", "slow"},
		{"GA up to the cap", "gacap", "", floor(1), "held", "fast"},
		{"seats up to the cap with the account's new holds", "u3", "", seats("A19", "A20"), "held", "fast"},
		{"seats over the cap with the account's new holds", "u3", "", seats("A21"), "BOOKING_NOT_ALLOWED", "slow"},
		{"GA no bucket serves", "u5", "", floor(3), "held", "slow"},
		{"GA no bucket serves over the cap", "capped", "", floor(3), "BOOKING_NOT_ALLOWED", "slow"},
		{"a seat asked twice", "u6", "", seats("A22", "A22"), "SEATS_UNAVAILABLE", "slow"},
		{"a seat asked five times", "u6", "", seats("A23", "A23", "A23", "A23", "A23"), "BOOKING_INVALID seats", "slow"},
		{"a seat someone holds", "u7", "", seats("A30"), "SEATS_UNAVAILABLE", "slow"},
		{"a seat whose hold ran out", "u7", "", seats("A29"), "held", "fast"},
		{"seats with a key", "u8", "k1", seats("A24"), "held", "fast"},
		{"seats with a key again", "u8", "k1", seats("A24"), "held", "replay"},
		{"GA with a key", "u9", "k2", floor(1), "held", "fast"},
		{"GA with a key again", "u9", "k2", floor(1), "held", "replay"},
		// Seat kinds (decision 0371): a seat for women only with its
		// passenger declared a woman, a blocked seat never.
		{"a seat for women declared", "u10", "", women(seats("A25"), "A25"), "held", "fast"},
		{"a seat for women undeclared", "u11", "", seats("A26"), "WOMEN_SEAT_UNDECLARED women_seats", "slow"},
		{"a seat for women undeclared with an ordinary one", "u11", "", seats("A14", "A28"), "WOMEN_SEAT_UNDECLARED women_seats", "slow"},
		{"a seat for women declared with an ordinary one declared too", "u11", "", women(seats("A26", "A13"), "A26", "A13"), "held", "fast"},
		{"a blocked seat", "u12", "", seats("A27"), "SEATS_BLOCKED seats", "slow"},
		{"a blocked seat declared", "u12", "", women(seats("A27"), "A27"), "SEATS_BLOCKED seats", "slow"},
		{"a blocked seat and a seat for women undeclared", "u12", "", seats("A28", "A27"), "SEATS_BLOCKED seats", "slow"},
		// Journeys (decision 0350): a seat is held per leg, priced by the
		// journey's fare (decision 0352), the journey checked on every path.
		{"a journey's first leg", "j1", "", trip("dhaka", "cumilla", "B1"), "held", "fast"},
		{"the same seat for the legs after", "j2", "", trip("cumilla", "chattogram", "B1"), "held", "fast"},
		{"the same seat over a leg it is held for", "j3", "", trip("dhaka", "chattogram", "B1"), "SEATS_UNAVAILABLE", "slow"},
		{"the whole trip", "j3", "", trip("", "", "B2"), "held", "fast"},
		{"from a stop to the end", "j4", "", trip("cumilla", "", "B3"), "held", "fast"},
		{"with counters", "j4", "", counters(trip("dhaka", "chattogram", "B4"), "kalabagan", "garib-e-newaz"), "held", "fast"},
		{"a leg before one someone holds", "j5", "", trip("dhaka", "cumilla", "B5"), "held", "fast"},
		{"over a leg someone holds", "j5", "", trip("dhaka", "chattogram", "B5"), "SEATS_UNAVAILABLE", "slow"},
		{"a business seat's own fare", "j6", "", trip("dhaka", "chattogram", "B11"), "held", "fast"},
		{"a business seat at the every-class fare", "j6", "", trip("dhaka", "cumilla", "B12"), "held", "fast"},
		{"a pair without a fare", "j7", "", trip("feni", "chattogram", "B6"), "JOURNEY_NOT_SOLD", "slow"},
		{"an unknown stop", "j7", "", trip("sylhet", "chattogram", "B6"), "BOOKING_INVALID journey.from_stop_id", "slow"},
		{"an unknown last stop", "j7", "", trip("dhaka", "sylhet", "B6"), "BOOKING_INVALID journey.to_stop_id", "slow"},
		{"stops the wrong way", "j7", "", trip("cumilla", "dhaka", "B6"), "BOOKING_INVALID journey.to_stop_id", "slow"},
		{"one stop", "j7", "", trip("feni", "feni", "B6"), "BOOKING_INVALID journey.to_stop_id", "slow"},
		{"a counter that does not board there", "j7", "", counters(trip("dhaka", "chattogram", "B6"), "garib-e-newaz", ""),
			"BOOKING_INVALID journey.boarding_counter_id", "slow"},
		{"a counter of another stop", "j7", "", counters(trip("cumilla", "chattogram", "B6"), "kalabagan", ""),
			"BOOKING_INVALID journey.boarding_counter_id", "slow"},
		{"a counter that does not drop there", "j7", "", counters(trip("dhaka", "chattogram", "B6"), "", "kalabagan"),
			"BOOKING_INVALID journey.dropping_counter_id", "slow"},
		{"a journey of a show without stops", "j7", "", HoldRequest{ShowID: 1, Seats: []string{"A25"},
			Journey: JourneyRequest{From: "dhaka", To: "cumilla"}}, "BOOKING_INVALID journey.from_stop_id", "slow"},
		{"an unknown seat of a journey", "j7", "", trip("dhaka", "cumilla", "B99"), "BOOKING_INVALID seats", "slow"},
		{"seats of several legs count once against the cap", "j8", "", trip("", "", "B6", "B7", "B8", "B9"), "held", "fast"},
		{"up to the cap", "j8", "", trip("dhaka", "cumilla", "B10", "B3"), "held", "fast"},
		{"over the cap", "j8", "", trip("dhaka", "cumilla", "B4"), "BOOKING_NOT_ALLOWED", "slow"},
		{"a journey with a key", "j9", "k3", trip("cumilla", "chattogram", "B12"), "held", "fast"},
		{"a journey with a key again", "j9", "k3", trip("cumilla", "chattogram", "B12"), "held", "replay"},
	}

	// The seats each held hold answers declared, in layout order.
	declared := map[string][]string{
		"a seat for women declared":                                   {"A25"},
		"a seat for women declared with an ordinary one declared too": {"A13", "A26"},
	}
	type answer struct {
		By   string
		Hold Hold
		Err  *fault.Error
	}
	var (
		answers [][]answer
		states  []holdsState
	)
	for _, path := range holdPaths {
		pool := shardWith(t, now, seed...)
		s := NewService(nil, nil, clock.NewFake(now), Config{})
		names := map[string]string{}
		var got []answer
		for _, c := range cases {
			ctx := ctx
			if c.key != "" {
				ctx = idempotency.WithKey(ctx, idempotency.Key{Scope: c.user, Key: c.key,
					Procedure: "/seatghor.booking.v1.HoldService/CreateHold", Fingerprint: sha256.Sum256([]byte(c.key))})
			}
			h, slow, err := path.take(ctx, s, pool, c.user, c.req, now)
			a := answer{By: "fast"}
			if err != nil {
				e, ok := fault.As(err)
				require.True(t, ok, "%s, %s: %v", path.name, c.name, err)
				e2 := *e
				if e2.SeatmapVersion != 0 {
					e2.SeatmapVersion = 1 // a transaction id: each path's own
				}
				a.Err = &e2
			} else {
				if _, ok := names[h.ID]; ok {
					a.By = "replay"
				} else {
					names[h.ID] = fmt.Sprintf("new hold %d", len(names)+1)
				}
				h.ID, h.takes = names[h.ID], nil
				a.Hold = h
			}
			switch {
			case slow:
				a.By = "slow"
			case err != nil:
				a.By = "replay"
			}

			want := c.by
			if path.name == "one-hold" && want == "fast" {
				want = "slow"
			}
			require.Equal(t, want, a.By, "%s, %s: who answers", path.name, c.name)
			if c.want == "held" {
				require.NoError(t, err, "%s, %s", path.name, c.name)
				require.Equal(t, declared[c.name], h.WomenSeats, "%s, %s: the seats declared", path.name, c.name)
			} else {
				require.NotNil(t, a.Err, "%s, %s: held", path.name, c.name)
				require.Equal(t, c.want, string(a.Err.Reason)+map[bool]string{true: " " + a.Err.Field}[a.Err.Field != ""],
					"%s, %s: %v", path.name, c.name, a.Err)
			}
			got = append(got, a)
		}
		answers = append(answers, got)
		states = append(states, stateOf(t, pool, names))
	}
	for i := range holdPaths[1:] {
		for j, c := range cases {
			one, other := answers[0][j], answers[i+1][j]
			one.By, other.By = "", ""
			require.Equal(t, one, other, "%s, %s: the answer", holdPaths[i+1].name, c.name)
		}
		require.Equal(t, states[0], states[i+1], "%s: the rows left", holdPaths[i+1].name)
	}
}

// holdsState is what holds left in a shard, with the new holds' ids named
// by the order of their answers (the ids are random) and GA takes counted
// per hold (the buckets are chosen at random).
type holdsState struct {
	Holds, Seats, Areas, Takes, Events, Keys []string
}

func stateOf(t *testing.T, pool *pg.Pool, names map[string]string) holdsState {
	t.Helper()
	name := func(id string) string {
		if n, ok := names[id]; ok {
			return n
		}
		return id
	}
	rows := func(sql string, scan func(pgx.CollectableRow) (string, error)) []string {
		r, err := pool.Query(context.Background(), sql)
		require.NoError(t, err)
		out, err := pgx.CollectRows(r, scan)
		require.NoError(t, err, sql)
		slices.Sort(out)
		return out
	}
	var s holdsState
	s.Holds = rows(`
		SELECT hold_id, show_id, user_id, status, seats, ga_area, quantity, amount_minor, currency,
		       expires_at, created_at, updated_at, coalesce(partner_id, 0), women_seats,
		       format('%s-%s %s %s', from_stop, to_stop, boarding_counter, dropping_counter)
		FROM holds`, func(r pgx.CollectableRow) (string, error) {
		var (
			id, user, status, area, currency, journey string
			show, amount, partner                     int64
			quantity                                  int
			seats, women                              []string
			expires, created, updated                 time.Time
		)
		err := r.Scan(&id, &show, &user, &status, &seats, &area, &quantity, &amount, &currency,
			&expires, &created, &updated, &partner, &women, &journey)
		return fmt.Sprint(name(id), show, user, status, seats, area, quantity, amount, currency,
			expires.UTC(), created.UTC(), updated.UTC(), partner, women, journey), err
	})
	s.Seats = rows(`
		SELECT show_id, seat, leg, status, coalesce(hold_id, ''), held_until, version FROM seats
		WHERE status <> 'available' OR version <> 0`, func(r pgx.CollectableRow) (string, error) {
		var (
			show, version    int64
			leg              int
			seat, status, id string
			until            *time.Time
		)
		err := r.Scan(&show, &seat, &leg, &status, &id, &until, &version)
		if until != nil {
			*until = until.UTC()
		}
		return fmt.Sprint(show, seat, leg, status, name(id), until, version), err
	})
	s.Areas = rows(`
		SELECT format('%s %s %s of %s', show_id, area, sum(remaining), sum(capacity)) FROM ga_buckets
		GROUP BY show_id, area`, pgx.RowTo[string])
	s.Takes = rows(`SELECT hold_id, area, sum(quantity) FROM hold_ga_takes GROUP BY hold_id, area`,
		func(r pgx.CollectableRow) (string, error) {
			var (
				id, area string
				n        int64
			)
			err := r.Scan(&id, &area, &n)
			return fmt.Sprint(name(id), area, n), err
		})
	s.Events = rows(`SELECT format('%s %s %s', show_id, event_type, count(*)) FROM outbox GROUP BY show_id, event_type`,
		pgx.RowTo[string])
	s.Keys = rows(`SELECT format('%s %s %s', scope, key, procedure) FROM idempotency_keys`, pgx.RowTo[string])
	return s
}

// tripSeed makes show 5 of a shard seeded at $1: a coach Dhaka → Cumilla →
// Feni → Chattogram (three legs) with seats B1..B12, one row per seat and
// leg (decision 0350), B11 and B12 business class. Fares: Dhaka →
// Chattogram and Dhaka → Cumilla for every class, Cumilla → Chattogram,
// and Dhaka → Chattogram for business; none from Feni. B5's middle leg is
// someone else's.
var tripSeed = []string{
	`INSERT INTO shows (show_id, currency, on_sale_at, starts_at, hold_ttl_ms, payment_extension_ms,
		                   max_seats_per_account, max_seats_per_hold, created_at)
		VALUES (5, 'BDT', $1::timestamptz - interval '1 hour', $1::timestamptz + interval '30 days', 600000, 0, 6, 4, $1)`, `
		INSERT INTO trip_stops (show_id, stop, stop_id, place, place_id, minutes, counters)
		SELECT 5, stop, id, place, id, minutes, counters::jsonb FROM (VALUES
		  (0, 'dhaka', 'Dhaka', 0, '[{"id": "kalabagan", "name": "Kalabagan", "boarding": true, "dropping": false, "minutes": 0}]'),
		  (1, 'cumilla', 'Cumilla', 120, '[{"id": "cantonment", "name": "Cantonment", "boarding": true, "dropping": true, "minutes": 120}]'),
		  (2, 'feni', 'Feni', 180, '[]'),
		  (3, 'chattogram', 'Chattogram', 330, '[{"id": "garib-e-newaz", "name": "Garib-e-Newaz", "boarding": false, "dropping": true, "minutes": 330}]'))
		  v(stop, id, place, minutes, counters) WHERE $1::timestamptz IS NOT NULL`, `
		INSERT INTO fares (show_id, from_stop, to_stop, seat_class, price_minor)
		SELECT 5, f, t, c, p FROM (VALUES (0, 3, '', 120000), (0, 1, '', 40000), (1, 3, '', 90000), (0, 3, 'business', 200000))
		  v(f, t, c, p) WHERE $1::timestamptz IS NOT NULL`, `
		INSERT INTO seats (show_id, seat, position, section, row_label, price_minor, leg, seat_class)
		SELECT 5, 'B' || n, leg * 12 + n - 1, 'Coach', 'B', 0, leg, CASE WHEN n > 10 THEN 'business' ELSE '' END
		FROM generate_series(1, 12) n, generate_series(0, 2) leg WHERE $1::timestamptz IS NOT NULL`, `
		UPDATE seats SET status = 'held', hold_id = 'hld_5_other', held_until = $1::timestamptz + interval '1 hour'
		WHERE show_id = 5 AND seat = 'B5' AND leg = 1`,
}
