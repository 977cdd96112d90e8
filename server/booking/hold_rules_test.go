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
		h, err := idempotencyDo(ctx, s, pool, idempotency.Show(req.ShowID), now, func(tx pgx.Tx) (Hold, error) {
			ran = true
			return holdOne(ctx, tx, userID, req, now, 0)
		})
		return h, ran, err
	}},
	{"pipelined", func(ctx context.Context, s *Service, pool *pg.Pool, userID string, req HoldRequest, now time.Time) (Hold, bool, error) {
		ran := false
		slow := func(tx pgx.Tx) (Hold, error) {
			ran = true
			return holdOne(ctx, tx, userID, req, now, 0)
		}
		h, err := idempotency.DoPipelined(ctx, pool, ErrorCodec, idempotency.Options{
			Now: now, Wait: s.cfg.IdempotencyWait, Target: idempotency.Show(req.ShowID),
		}, pipelinedHold(userID, req, now, slow))
		return h, ran, err
	}},
	{"batch", func(ctx context.Context, s *Service, pool *pg.Pool, userID string, req HoldRequest, now time.Time) (Hold, bool, error) {
		h, held, err := s.holdInBatch(ctx, pool, userID, req, now)
		if held || err != nil {
			return h, false, err
		}
		ran := false
		h, err = idempotencyDo(ctx, s, pool, idempotency.Show(req.ShowID), now, func(tx pgx.Tx) (Hold, error) {
			ran = true
			return holdOne(ctx, tx, userID, req, now, 0)
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
	seats := func(s ...string) HoldRequest { return HoldRequest{ShowID: 1, Seats: s} }
	floor := func(n int) HoldRequest { return HoldRequest{ShowID: 1, GAArea: "Floor", Quantity: n} }
	on := func(show int64, r HoldRequest) HoldRequest { r.ShowID = show; return r }
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
		       expires_at, created_at, updated_at, coalesce(partner_id, 0)
		FROM holds`, func(r pgx.CollectableRow) (string, error) {
		var (
			id, user, status, area, currency string
			show, amount, partner            int64
			quantity                         int
			seats                            []string
			expires, created, updated        time.Time
		)
		err := r.Scan(&id, &show, &user, &status, &seats, &area, &quantity, &amount, &currency,
			&expires, &created, &updated, &partner)
		return fmt.Sprint(name(id), show, user, status, seats, area, quantity, amount, currency,
			expires.UTC(), created.UTC(), updated.UTC(), partner), err
	})
	s.Seats = rows(`
		SELECT show_id, seat, status, coalesce(hold_id, ''), held_until, version FROM seats
		WHERE status <> 'available' OR version <> 0`, func(r pgx.CollectableRow) (string, error) {
		var (
			show, version    int64
			seat, status, id string
			until            *time.Time
		)
		err := r.Scan(&show, &seat, &status, &id, &until, &version)
		if until != nil {
			*until = until.UTC()
		}
		return fmt.Sprint(show, seat, status, name(id), until, version), err
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
