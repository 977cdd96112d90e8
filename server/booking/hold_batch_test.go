package booking

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/seatghor/seatghor/gen/seatghor/events/v1"
	"github.com/seatghor/seatghor/internal/testkit/schematest"
	"github.com/seatghor/seatghor/server/idempotency"
	"github.com/seatghor/seatghor/server/migrations"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/shard"
)

// TestBatchTakesOnlyWholeHoldsAndNeverWaits: one batch of nine seated holds
// on a real shard (decision 0270), each refused for a different reason
// except two. The batch takes exactly those two, writes for each its seats,
// its row, one outbox event and (with a key) its record, and writes nothing
// of the seven others, which it leaves to the one-hold path; it does so
// while another transaction holds a key's lock and a seat's row lock,
// without waiting for either.
func TestBatchTakesOnlyWholeHoldsAndNeverWaits(t *testing.T) {
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	pool := shardWith(t, now, `
		INSERT INTO shows (show_id, currency, on_sale_at, starts_at, hold_ttl_ms, payment_extension_ms,
		                   max_seats_per_account, max_seats_per_hold, created_at)
		VALUES (1, 'BDT', $1::timestamptz - interval '1 hour', $1::timestamptz + interval '30 days', 600000, 0, 2, 4, $1),
		       (2, 'BDT', $1::timestamptz + interval '1 hour', $1::timestamptz + interval '30 days', 600000, 0, 2, 4, $1)`, `
		INSERT INTO seats (show_id, seat, position, section, row_label, price_minor)
		SELECT show_id, 'A' || n, n, 'S', 'A', 1000 * n FROM generate_series(1, 9) n, (VALUES (1), (2)) s(show_id)
		WHERE $1::timestamptz IS NOT NULL`, `
		-- A3 is someone else's.
		UPDATE seats SET status = 'held', hold_id = 'hld_1_other', held_until = $1::timestamptz + interval '1 hour'
		WHERE show_id = 1 AND seat = 'A3'`, `
		-- u3 already has the two seats of its cap.
		INSERT INTO holds (hold_id, show_id, user_id, status, seats, quantity, amount_minor, currency,
		                   expires_at, created_at, updated_at)
		VALUES ('hld_1_u3', 1, 'u3', 'confirmed', '{}', 2, 0, 'BDT', $1, $1, $1)`,
	)

	keyed := func(user, key string) context.Context {
		return idempotency.WithKey(ctx, idempotency.Key{Scope: user, Key: key, Procedure: "/hold",
			Fingerprint: sha256.Sum256([]byte(key))})
	}
	call := func(ctx context.Context, user string, show int64, seats ...string) *holdCall {
		return &holdCall{ctx: ctx, userID: user, req: HoldRequest{ShowID: show, Seats: seats}, now: now,
			id:    shard.NewID("hld", show),
			claim: idempotency.ClaimOf(ctx, idempotency.Options{Now: now, Target: idempotency.Show(show)})}
	}
	batch := []*holdCall{
		call(ctx, "u1", 1, "A1"),                        // taken
		call(ctx, "u2", 1, "A2", "A3"),                  // A3 is held: neither is taken
		call(ctx, "u3", 1, "A4"),                        // over the account's cap
		call(keyed("u4", "answered"), "u4", 1, "A5"),    // the key has a record
		call(keyed("u5", "running"), "u5", 1, "A6"),     // the key is locked elsewhere
		call(ctx, "u6", 2, "A1"),                        // the sale has not opened
		call(ctx, "u7", 1, "A7"),                        // the seat's row is locked elsewhere
		call(ctx, "u8", 1, "Z9"),                        // no such seat
		call(keyed("u9", "fresh"), "u9", 1, "A9", "A8"), // taken, with its record
	}
	answered := batch[3].claim
	scope, procedure, target, key := answered.Columns()
	_, err := pool.Exec(ctx, `
		INSERT INTO idempotency_keys (scope, procedure, target, key, fingerprint, outcome, created_at, expires_at)
		VALUES ($1, $2, $3, $4, '\x00', '{}', $5, $5::timestamptz + interval '1 day')`, scope, procedure, target, key, now)
	require.NoError(t, err)

	// Another transaction holds u5's key and seat A7, and keeps them.
	other, err := pool.Begin(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { _ = other.Rollback(context.Background()) })
	_, err = other.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, batch[4].claim.LockName())
	require.NoError(t, err)
	_, err = other.Exec(ctx, `SELECT FROM seats WHERE show_id = 1 AND seat = 'A7' FOR UPDATE`)
	require.NoError(t, err)

	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	held, err := writeBatch(wctx, pool, batch)
	require.NoError(t, err, "the batch waits for no lock")
	var ids []string
	for i, h := range held {
		if i == 0 || i == 8 {
			require.NotEmpty(t, h.ID, "hold %d is taken", i)
			ids = append(ids, h.ID)
			continue
		}
		require.Empty(t, h.ID, "hold %d is left to the one-hold path", i)
	}
	require.Equal(t, []string{"A1"}, held[0].Seats)
	require.Equal(t, []string{"A8", "A9"}, held[8].Seats, "in seat order")
	require.EqualValues(t, 17000, held[8].AmountMinor)
	require.Equal(t, now.Add(10*time.Minute), held[8].ExpiresAt)
	require.NoError(t, other.Rollback(ctx))

	rows, err := pool.Query(ctx, `SELECT seat, coalesce(hold_id, '') FROM seats WHERE show_id = 1 AND status <> 'available' ORDER BY seat`)
	require.NoError(t, err)
	taken := map[string]string{}
	for rows.Next() {
		var seat, hold string
		require.NoError(t, rows.Scan(&seat, &hold))
		taken[seat] = hold
	}
	require.NoError(t, rows.Err())
	require.Equal(t, map[string]string{"A1": held[0].ID, "A3": "hld_1_other", "A8": held[8].ID, "A9": held[8].ID}, taken,
		"only the two holds' seats changed")
	var holds, events int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM holds WHERE hold_id = ANY($1)`, ids).Scan(&holds))
	require.Equal(t, 2, holds)
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM holds`).Scan(&holds))
	require.Equal(t, 3, holds, "no row of a refused hold")

	outbox, err := pool.Query(ctx, `SELECT payload FROM outbox ORDER BY id`)
	require.NoError(t, err)
	for outbox.Next() {
		var payload []byte
		require.NoError(t, outbox.Scan(&payload))
		var e eventsv1.SeatsHeld
		require.NoError(t, proto.Unmarshal(payload, &e))
		require.Equal(t, ids[events], e.GetHoldId(), "one event per hold, in the batch's order")
		events++
	}
	require.NoError(t, outbox.Err())
	require.Equal(t, 2, events)

	scope, procedure, target, key = batch[8].claim.Columns()
	var outcome []byte
	require.NoError(t, pool.QueryRow(ctx, `
		SELECT outcome FROM idempotency_keys WHERE scope = $1 AND procedure = $2 AND target = $3 AND key = $4`,
		scope, procedure, target, key).Scan(&outcome))
	var rec struct{ Value Hold }
	require.NoError(t, json.Unmarshal(outcome, &rec))
	require.Equal(t, held[8].ID, rec.Value.ID, "a retry replays the batch's answer")
	require.Equal(t, held[8].Seats, rec.Value.Seats)
}

// TestBatchesKeepHoldsThatWouldMeetApart: two holds that share a seat, an
// account or a key never go in one batch (a transaction's own locks do not
// stop it), and a later hold that fits goes ahead of one that waits.
func TestBatchesKeepHoldsThatWouldMeetApart(t *testing.T) {
	ctx := context.Background()
	keyed := idempotency.WithKey(ctx, idempotency.Key{Scope: "u1", Key: "k", Procedure: "/hold"})
	call := func(ctx context.Context, user string, show int64, seats ...string) *holdCall {
		return &holdCall{ctx: ctx, userID: user, req: HoldRequest{ShowID: show, Seats: seats},
			claim: idempotency.ClaimOf(ctx, idempotency.Options{Target: idempotency.Show(show)})}
	}
	gone, cancel := context.WithCancel(ctx)
	cancel()
	q := []*holdCall{
		call(keyed, "u1", 1, "A1"),
		call(ctx, "u2", 1, "A1"),   // A1 again
		call(ctx, "u1", 1, "A2"),   // u1 on show 1 again
		call(keyed, "u3", 2, "A1"), // the same key
		call(ctx, "u1", 2, "A1"),   // another show: fits
		call(gone, "u4", 1, "A9"),  // its caller is gone: dropped
		call(ctx, "u5", 1, "A3"),   // fits, but the batch is full
	}
	b := &holdBatcher{all: &holdBatches{size: 2}, queue: q}
	require.Equal(t, []*holdCall{q[0], q[4]}, b.take())
	require.Equal(t, []*holdCall{q[1], q[2], q[3], q[6]}, b.queue)
	require.Equal(t, []*holdCall{q[1], q[2]}, b.take())
	require.Equal(t, []*holdCall{q[3], q[6]}, b.take())
	require.Empty(t, b.take())
}

// TestBatchTakesGAPlacesFromBucketsOfTheirOwn: one batch of five public GA
// holds of one area (decision 0270), whose three public buckets have 3, 2
// and 1 places, one of them locked by another transaction. The batch locks
// as many free buckets as it has holds, without waiting, pairs the largest
// hold with the fullest bucket, takes each taken hold's places from one
// bucket of its own, and leaves the rest to the one-hold path: nothing of
// them is written, and no bucket gives more than it has.
func TestBatchTakesGAPlacesFromBucketsOfTheirOwn(t *testing.T) {
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	pool := shardWith(t, now, `
		INSERT INTO shows (show_id, currency, on_sale_at, starts_at, hold_ttl_ms, payment_extension_ms,
		                   max_seats_per_account, max_seats_per_hold, created_at)
		VALUES (1, 'BDT', $1::timestamptz - interval '1 hour', $1::timestamptz + interval '30 days', 600000, 0, 4, 4, $1)`, `
		INSERT INTO ga_buckets (show_id, area, bucket, position, capacity, remaining, price_minor)
		SELECT 1, 'Field', b, b, r, r, 500 FROM (VALUES (0, 3), (1, 2), (2, 1), (3, 5)) v(b, r)
		WHERE $1::timestamptz IS NOT NULL`,
	)
	other, err := pool.Begin(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { _ = other.Rollback(context.Background()) })
	_, err = other.Exec(ctx, `SELECT FROM ga_buckets WHERE show_id = 1 AND bucket = 3 FOR UPDATE`)
	require.NoError(t, err)

	call := func(user string, n int) *holdCall {
		return &holdCall{ctx: ctx, userID: user, req: HoldRequest{ShowID: 1, GAArea: "Field", Quantity: n}, now: now,
			id: shard.NewID("hld", 1), buckets: 4,
			claim: idempotency.ClaimOf(ctx, idempotency.Options{Now: now, Target: idempotency.Show(1)})}
	}
	batch := []*holdCall{call("u1", 1), call("u2", 3), call("u3", 2), call("u4", 2), call("u5", 1)}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	held, err := writeBatch(wctx, pool, batch)
	require.NoError(t, err, "the batch waits for no lock")
	require.NoError(t, other.Rollback(ctx))

	// Free buckets 0 (3), 1 (2), 2 (1); holds by size 3 (u2), 2 (u3), 2
	// (u4), 1 (u1), 1 (u5): u2 gets bucket 0, u3 bucket 1, u4 would get
	// bucket 2 (1 place: too few), u1 and u5 none (three buckets locked).
	got := map[string]int{}
	for i, h := range held {
		if h.ID == "" {
			continue
		}
		require.Len(t, h.takes, 1)
		for bucket, n := range h.takes {
			require.Equal(t, batch[i].req.Quantity, n)
			got[batch[i].userID] = bucket
		}
		require.Equal(t, "Field", h.GAArea)
		require.EqualValues(t, 500*batch[i].req.Quantity, h.AmountMinor)
	}
	require.Equal(t, map[string]int{"u2": 0, "u3": 1}, got)

	rows, err := pool.Query(ctx, `SELECT bucket, remaining FROM ga_buckets WHERE show_id = 1 ORDER BY bucket`)
	require.NoError(t, err)
	remaining := map[int]int{}
	for rows.Next() {
		var b, r int
		require.NoError(t, rows.Scan(&b, &r))
		remaining[b] = r
	}
	require.NoError(t, rows.Err())
	require.Equal(t, map[int]int{0: 0, 1: 0, 2: 1, 3: 5}, remaining)
	var holds, takes, events int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM holds`).Scan(&holds))
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM hold_ga_takes`).Scan(&takes))
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM outbox`).Scan(&events))
	require.Equal(t, []int{2, 2, 2}, []int{holds, takes, events}, "rows of the two taken holds only")
}

// TestFenceChecksEachShowOncePerTransaction: the placement fence's function
// runs once per show a transaction writes (shard migration 00125), however
// the rows of its shows alternate, as a batch of holds on many buses writes
// them; a show being moved is still refused after others passed.
func TestFenceChecksEachShowOncePerTransaction(t *testing.T) {
	ctx := context.Background()
	pool := shardWith(t, time.Now(), `
		INSERT INTO shows (show_id, currency, on_sale_at, starts_at, hold_ttl_ms, payment_extension_ms,
		                   max_seats_per_account, max_seats_per_hold, created_at, placement)
		SELECT s, 'BDT', $1, $1::timestamptz + interval '1 day', 600000, 0, 4, 4, $1, 'active'
		FROM generate_series(1, 3) s`, `
		INSERT INTO seats (show_id, seat, position, section, row_label, price_minor)
		SELECT s, 'A' || n, n, 'S', 'A', 100 FROM generate_series(1, 3) s, generate_series(1, 3) n
		WHERE $1::timestamptz IS NOT NULL`, `
		UPDATE shows SET placement = 'moving' WHERE show_id = 3 AND $1::timestamptz IS NOT NULL`,
	)
	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = tx.Exec(ctx, `SET LOCAL track_functions = 'pl'`)
	require.NoError(t, err)
	for _, show := range []int{1, 2, 1, 2, 1} {
		_, err = tx.Exec(ctx, `UPDATE seats SET version = version + 1 WHERE show_id = $1`, show)
		require.NoError(t, err)
	}
	var calls int
	require.NoError(t, tx.QueryRow(ctx, `
		SELECT coalesce(sum(calls), 0) FROM pg_stat_xact_user_functions WHERE funcname = 'show_writable'`).Scan(&calls))
	require.Equal(t, 2, calls, "one check per show")
	_, err = tx.Exec(ctx, `UPDATE seats SET version = version + 1 WHERE show_id = 3`)
	require.ErrorContains(t, err, "show 3 is moving")
}

// shardWith is a pool on a fresh shard database where each of sqls ran,
// with now as $1.
func shardWith(t *testing.T, now time.Time, sqls ...string) *pg.Pool {
	t.Helper()
	ctx := context.Background()
	pool, err := pg.Open(ctx, "shard-0", schematest.Fresh(t, migrations.Shard), 4)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	for _, sql := range sqls {
		_, err = pool.Exec(ctx, sql, now)
		require.NoError(t, err, sql)
	}
	return pool
}
