package booking

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/idempotency"
	"github.com/seatghor/seatghor/server/outbox"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/shard"
)

// Holds that arrive together on one shard are written together (decision
// 0270): one transaction, one statement that takes the seats of every
// seated hold of the batch and one for its GA holds, one INSERT of their
// outbox rows and one of their keys' records. On an on-sale morning that divides the per-transaction
// work of PostgreSQL (BEGIN, COMMIT and its WAL flush, the round trips,
// starting each statement's executor, the fence's trigger) by the batch's
// size.
//
// The batch never waits for a lock: keys' and accounts' locks are tried,
// seats another transaction has locked are skipped. A hold the batch could
// not take whole, for any reason — a seat gone or locked, the account's
// cap, the key in use or answered, the sale not open — is left out, and its
// caller answers it with the one-hold path (pipelinedHold and slow), which
// waits for locks and explains refusals exactly as before. A batch that
// fails as a whole (a moving show, any error) is rolled back and every
// caller takes that path. So a batch only ever does what each of its holds
// would have done alone, and never refuses anything itself.
//
// Batches form without a timer: a caller queues its hold, and a goroutine
// of its shard takes whatever is queued when it is free, up to
// HoldBatchSize holds. A lone hold goes at once, alone; under a crowd, the
// holds that arrived during the last batch go in the next. A second
// goroutine (up to HoldBatchRunners) starts only when a whole batch is
// waiting: more batches at once would make each smaller.

// holdBatches keeps one batcher per shard pool.
type holdBatches struct {
	size, runners int
	mu            sync.Mutex
	byPool        map[*pg.Pool]*holdBatcher
	buckets       map[gaArea]int
	// held counts holds taken in a batch, left those a batch left to the
	// one-hold path, failed the batches that failed as a whole, batches all.
	held, left, failed, batches atomic.Int64
}

// HoldBatchStats counts what the hold batches did since the service
// started (decision 0270).
type HoldBatchStats struct {
	// Held is the holds taken in a batch; Left the holds a batch left to
	// the one-hold path (refusals and contention included); Failed the
	// batches rolled back as a whole; Batches all batches.
	Held, Left, Failed, Batches int64
}

// HoldBatchStats reports the hold batches' counts.
func (s *Service) HoldBatchStats() HoldBatchStats {
	return HoldBatchStats{Held: s.batches.held.Load(), Left: s.batches.left.Load(), Failed: s.batches.failed.Load(),
		Batches: s.batches.batches.Load()}
}

func (hb *holdBatches) of(pool *pg.Pool) *holdBatcher {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	b, ok := hb.byPool[pool]
	if !ok {
		b = &holdBatcher{pool: pool, all: hb}
		hb.byPool[pool] = b
	}
	return b
}

// holdBatcher is the queue and the running batches of one shard.
type holdBatcher struct {
	pool    *pg.Pool
	all     *holdBatches
	mu      sync.Mutex
	queue   []*holdCall
	running int
}

// holdCall is one caller's hold, waiting for its batch.
type holdCall struct {
	ctx    context.Context // the caller's: a call whose caller is gone is dropped
	userID string
	req    HoldRequest
	claim  idempotency.Claim
	id     string
	now    time.Time
	// buckets is, for a GA hold, how many public buckets its area had when
	// last counted: how many holds of the area one batch may carry.
	buckets int
	// out gets the hold when the batch took it, or false when the caller
	// must answer it with the one-hold path.
	out chan batchAnswer
	// trip is the show's stops, which name the journey in its event.
	trip catalog.Trip
}

type batchAnswer struct {
	hold Hold
	held bool
}

// holdInBatch offers a public hold (not a partner's: CreateHold sends
// those to the one-hold path) to its shard's batch: a seated one, or a GA
// one of a named area with more than one public bucket (one bucket
// serves one hold at a time, so a batch could not carry two of them, and
// the area's crowd queues on its row in the one-hold path as before). held
// is false when the batch left it or does not take it: the caller then
// answers it with the one-hold path.
func (s *Service) holdInBatch(ctx context.Context, pool *pg.Pool, userID string, req HoldRequest, now time.Time, trip catalog.Trip) (Hold, bool, error) {
	buckets := 0
	switch {
	case len(req.Seats) > 0:
		// A seat asked for twice is the one-hold path's to refuse.
		if len(distinct(req.Seats)) != len(req.Seats) {
			return Hold{}, false, nil
		}
	case req.GAArea != "" && req.Quantity > 0:
		n, err := s.batches.bucketsOf(ctx, pool, req.ShowID, req.GAArea)
		if err != nil || n < 2 {
			return Hold{}, false, err
		}
		buckets = n
	default:
		return Hold{}, false, nil
	}
	c := &holdCall{
		ctx: ctx, userID: userID, req: req, now: now, id: shard.NewID("hld", req.ShowID), buckets: buckets,
		claim: idempotency.ClaimOf(ctx, idempotency.Options{Now: now, Target: holdTarget(req.ShowID, req.Journey)}),
		out:   make(chan batchAnswer, 1), trip: trip,
	}
	s.batches.of(pool).submit(c)
	select {
	case a := <-c.out:
		return a.hold, a.held, nil
	case <-ctx.Done():
		return Hold{}, false, ctx.Err()
	}
}

// gaArea names a GA area of a show.
type gaArea struct {
	show int64
	area string
}

// bucketsOf counts the public buckets of a GA area, once per process: a
// hint for batching only (a batch is right whatever the count), and an
// area's buckets are made with its show.
func (hb *holdBatches) bucketsOf(ctx context.Context, pool *pg.Pool, show int64, area string) (int, error) {
	k := gaArea{show, area}
	hb.mu.Lock()
	n, ok := hb.buckets[k]
	hb.mu.Unlock()
	if ok {
		return n, nil
	}
	if err := pool.QueryRow(ctx, `
		SELECT count(*) FROM ga_buckets WHERE show_id = $1 AND area = $2 AND `+inPublicChannel("ga_buckets"),
		show, area).Scan(&n); err != nil {
		return 0, fmt.Errorf("count buckets of area %q of show %d: %w", area, show, err)
	}
	hb.mu.Lock()
	hb.buckets[k] = n
	hb.mu.Unlock()
	return n, nil
}

func (b *holdBatcher) submit(c *holdCall) {
	b.mu.Lock()
	b.queue = append(b.queue, c)
	// One runner while it keeps up: the holds that arrive during its batch
	// make its next one, and PostgreSQL's per-transaction work is paid once
	// for them all. Another starts only when a whole batch is waiting.
	start := b.running == 0 || (len(b.queue) >= b.all.size && b.running < b.all.runners)
	if start {
		b.running++
	}
	b.mu.Unlock()
	if start {
		go b.loop()
	}
}

// loop runs batches while holds are queued.
func (b *holdBatcher) loop() {
	for {
		b.mu.Lock()
		batch := b.take()
		if len(batch) == 0 {
			b.running--
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		b.run(batch)
	}
}

// take removes from the queue, in order, up to the batch size of holds
// that cannot meet in the batch: none shares a seat, an account's lock or
// a key with another (each would wait for the other, and a transaction's
// own locks do not), and no GA area gets more holds than it has buckets
// (each takes a bucket of its own). Those that could stay queued, for the
// next batch. Calls whose caller is gone are dropped.
func (b *holdBatcher) take() []*holdCall {
	var (
		batch []*holdCall
		rest  []*holdCall
		used  = map[string]int{}
	)
	for _, c := range b.queue {
		if c.ctx.Err() != nil {
			continue
		}
		if len(batch) == b.all.size || !c.fits(used) {
			rest = append(rest, c)
			continue
		}
		batch = append(batch, c)
	}
	b.queue = rest
	return batch
}

// fits tells whether c's seats, account, key and GA area still have room
// in used (how many holds of the batch use each), and if so counts them.
func (c *holdCall) fits(used map[string]int) bool {
	show := fmt.Sprint(c.req.ShowID)
	type use struct {
		name  string
		limit int
	}
	uses := make([]use, 0, len(c.req.Seats)+3)
	uses = append(uses, use{"account\x00" + show + "\x00" + c.userID, 1})
	if key := c.claim.LockName(); key != "" {
		uses = append(uses, use{"key\x00" + key, 1})
	}
	for _, seat := range c.req.Seats {
		uses = append(uses, use{"seat\x00" + show + "\x00" + seat, 1})
	}
	if c.buckets > 0 {
		uses = append(uses, use{"area\x00" + show + "\x00" + c.req.GAArea, c.buckets})
	}
	for _, u := range uses {
		if used[u.name] >= u.limit {
			return false
		}
	}
	for _, u := range uses {
		used[u.name]++
	}
	return true
}

// holdBatchTimeout bounds one batch: its holds' callers wait for it.
const holdBatchTimeout = 10 * time.Second

// run writes one batch and answers every call of it.
func (b *holdBatcher) run(batch []*holdCall) {
	ctx, cancel := context.WithTimeout(context.Background(), holdBatchTimeout)
	defer cancel()
	b.all.batches.Add(1)
	held, err := writeBatch(ctx, b.pool, batch) // nil when err
	if err != nil {
		b.all.failed.Add(1)
	}
	for i, c := range batch {
		if held != nil && held[i].ID != "" {
			b.all.held.Add(1)
			c.out <- batchAnswer{hold: held[i], held: true}
			continue
		}
		b.all.left.Add(1)
		c.out <- batchAnswer{}
	}
}

// writeBatch takes every hold of batch it can, in one transaction of two
// round trips: the locks, holdBatchSQL and holdBatchGASQL, then the outbox
// rows, the keys' records and COMMIT. It answers the holds taken by index (ID empty for
// those left out).
func writeBatch(ctx context.Context, pool *pg.Pool, batch []*holdCall) ([]Hold, error) {
	n := len(batch)
	var (
		names, users, holdIDs, areas      = make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		scopes, procedures, targets, keys = make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		froms, tos, boardings, droppings  = make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		shows                             = make([]int64, n)
		counts                            = make([]int32, n)
		nows                              = make([]time.Time, n)
		seatOf                            []int32
		seats                             []string
		women                             []bool
		index                             = make(map[string]int, n)
		ga                                bool
	)
	for i, c := range batch {
		names[i], users[i], holdIDs[i] = c.claim.LockName(), c.userID, c.id
		scopes[i], procedures[i], targets[i], keys[i] = c.claim.Columns()
		shows[i], counts[i], nows[i] = c.req.ShowID, int32(len(c.req.Seats)), c.now
		j := c.req.Journey
		froms[i], tos[i], boardings[i], droppings[i] = j.From, j.To, j.Boarding, j.Dropping
		for _, seat := range c.req.Seats {
			seatOf, seats = append(seatOf, int32(i+1)), append(seats, seat)
			women = append(women, slices.Contains(c.req.WomenSeats, seat))
		}
		if c.buckets > 0 {
			areas[i], counts[i], ga = c.req.GAArea, int32(c.req.Quantity), true
		}
		index[c.id] = i
	}
	held := make([]Hold, n)
	// collect reads a statement's taken holds into held.
	taken := 0
	collect := func(br pgx.BatchResults, what string, scan func(pgx.Rows, *Hold, *int64) error) error {
		rows, err := br.Query()
		if err != nil {
			return fmt.Errorf("take the batch's %s: %w", what, err)
		}
		defer rows.Close()
		for rows.Next() {
			var (
				h     Hold
				ttlMs int64
			)
			if err := scan(rows, &h, &ttlMs); err != nil {
				return fmt.Errorf("take the batch's %s: %w", what, err)
			}
			i, ok := index[h.ID]
			if !ok {
				return fmt.Errorf("take the batch's %s: hold %s is not of the batch", what, h.ID)
			}
			c := batch[i]
			h.ShowID, h.UserID, h.Quantity, h.Status = c.req.ShowID, c.userID, int(counts[i]), HoldActive
			h.Journey.Boarding, h.Journey.Dropping = c.req.Journey.Boarding, c.req.Journey.Dropping
			if h.GAArea != "" {
				h.Journey.From, h.Journey.To = 0, 1
			}
			h.CreatedAt = c.now
			h.ExpiresAt = c.now.Add(time.Duration(ttlMs) * time.Millisecond)
			h.WomenSeats = nilIfEmpty(h.WomenSeats)
			held[i] = h
			taken++
		}
		return rows.Err()
	}
	err := pg.InPipe(ctx, pool, func(p *pg.Pipe) error {
		b := &pgx.Batch{}
		b.Queue(holdBatchLockSQL, names, users, shows)
		rules := []any{shows, holdIDs, users, counts, nows, scopes, procedures, targets, keys, areas, froms, tos, boardings, droppings}
		if len(seats) > 0 {
			b.Queue(holdBatchSQL, append(rules, seatOf, seats, distinct(shows), distinct(seats), women)...)
		}
		if ga {
			b.Queue(holdBatchGASQL, rules...)
		}
		err := p.Send(ctx, b, func(br pgx.BatchResults) error {
			if _, err := br.Exec(); err != nil {
				return fmt.Errorf("lock the batch's keys and accounts: %w", err)
			}
			if len(seats) > 0 {
				if err := collect(br, "seats", func(r pgx.Rows, h *Hold, ttlMs *int64) error {
					return r.Scan(&h.ID, &h.Seats, &h.AmountMinor, &h.Currency, ttlMs, &h.WomenSeats, &h.Journey.From, &h.Journey.To)
				}); err != nil {
					return err
				}
			}
			if ga {
				return collect(br, "GA places", func(r pgx.Rows, h *Hold, ttlMs *int64) error {
					var bucket int
					err := r.Scan(&h.ID, &h.GAArea, &h.AmountMinor, &h.Currency, ttlMs, &bucket)
					h.takes = map[int]int{bucket: int(counts[index[h.ID]])}
					return err
				})
			}
			return nil
		})
		if err != nil || taken == 0 {
			return err // InPipe rolls back; nothing was written
		}
		b = &pgx.Batch{}
		var (
			events outbox.Rows
			claims []idempotency.Claim
			answer []Hold
		)
		for i, h := range held {
			if h.ID == "" {
				continue
			}
			if err := events.Add(h.ShowID, h.CreatedAt, seatsHeld(h, view(batch[i].trip, h.Journey))); err != nil {
				return err
			}
			claims, answer = append(claims, batch[i].claim), append(answer, h)
		}
		outbox.QueueRows(b, &events)
		if err := idempotency.RecordAll(b, claims, answer); err != nil {
			return err
		}
		return p.Commit(ctx, b, func(br pgx.BatchResults) error {
			for range b.QueuedQueries {
				if _, err := br.Exec(); err != nil {
					return fmt.Errorf("complete the batch: %w", err)
				}
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return held, nil
}

// holdBatchLockSQL tries, for hold i of the batch, its key's lock (name
// $1[i], none when empty) and its account's (accountLock: user $2[i] on
// show $3[i]), and keeps in seatghor.hold_batch whether it got
// both, for holdBatchSQL and holdBatchGASQL, the next statements, whose snapshot is then taken
// with the locks held. It sets what lockAccountSQL sets for the
// transaction: generic plans without sequential scans (decisions 0125,
// 0266); and joins by nested loops only. A generic plan knows neither how
// many holds a batch has nor, on a new shard, how many seats a show has:
// made on empty tables, it joined the asked-for seats to a hash of every
// seat of the shard, read whole through its index. Every join of the batch
// goes from a few holds to rows found by key.
var holdBatchLockSQL = `
	SELECT set_config('seatghor.hold_batch', string_agg((` + idempotency.TryLockSQL("r.name") + `
	           AND pg_try_advisory_xact_lock(` + accountLock("r.user_id", "r.show_id") + `))::text, ',' ORDER BY r.i), true),
	       ` + holdPlanSettings + `,
	       set_config('enable_hashjoin', 'off', true),
	       set_config('enable_mergejoin', 'off', true)
	FROM unnest($1::text[], $2::text[], $3::bigint[]) WITH ORDINALITY AS r(name, user_id, show_id, i)`

// holdBatchRulesCTE is the start of holdBatchSQL and holdBatchGASQL: the
// batch's holds that may go ahead, as showRulesCTE decides for one. Hold i
// (from 1) is of show $1[i], id $2[i], for user $3[i], $4[i] seats or
// places at $5[i], with key $6..$9[i] (empty: none), in GA area $10[i]
// (empty for a seated hold), for the journey $11[i] → $12[i] with
// counters $13[i] and $14[i] (journeySQL); which a statement takes is
// holds (the SQL condition on r.area). A hold is allowed when it got its
// locks (holdBatchLockSQL), the rules allow it (holdRulesSQL) and its key
// has no record. Every hold of a batch is public (holdInBatch).
func holdBatchRulesCTE(holds string) string {
	return `
	WITH flags AS (
		SELECT string_to_array(current_setting('seatghor.hold_batch'), ',')::bool[] AS locked
	),
	req AS (
		SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::int[], $5::timestamptz[],
		                     $6::text[], $7::text[], $8::text[], $9::text[], $10::text[],
		                     $11::text[], $12::text[], $13::text[], $14::text[])
		     WITH ORDINALITY AS r(show_id, hold_id, user_id, n, now, scope, procedure, target, key, area,
		                          from_id, to_id, boarding, dropping, i)
	),
	allowed AS MATERIALIZED (
		SELECT r.i, r.show_id, r.hold_id, r.user_id, r.n, r.now, r.area, s.currency, s.hold_ttl_ms,
		       r.now + s.hold_ttl_ms * interval '1 millisecond' AS expires_at,
		       rules.stops, rules.from_stop, rules.to_stop, rules.boarding_counter, rules.dropping_counter
		FROM req r JOIN shows s ON s.show_id = r.show_id
		     CROSS JOIN ` + holdRulesSQL("s", "r.now", "r.n", "r.user_id", journeyArgs{"r.from_id", "r.to_id", "r.boarding", "r.dropping"}) + `, flags
		WHERE ` + holds + ` AND flags.locked[r.i::int] AND rules.allowed
		  AND ` + idempotency.UnrecordedSQL("r.scope", "r.procedure", "r.target", "r.key") + `
	),`
}

// holdBatchSQL is holdSeatsSQL for every seated hold of a batch at once
// (holdBatchRulesCTE's $1..$14), the seats being the $16[j] whose $15[j] is
// i, $19[j] saying whether its passenger is declared a woman. An allowed
// hold is taken only if every seat it asks for is free, public, priced, of
// a kind it may take (holdableKind) and not locked by another transaction
// on every leg of its journey (decision 0350); then all of those rows are
// taken and its row written, and it answers a row. Otherwise nothing of it
// is written. Holds of one batch share no seat, account or key
// (holdBatcher.take), so they cannot decide for one another.
//
// Every row it reads is found by key, whatever plan PostgreSQL made (a
// generic plan, made for any batch, perhaps on a new shard's empty
// tables): $17 and $18 are the batch's distinct shows and seat names, so
// the read of seats has its key in its index condition even where the plan
// puts seats on the outer side of a join, and the UPDATE finds the rows it
// locked by their addresses.
var holdBatchSQL = holdBatchRulesCTE(`r.area = ''`) + `
	free AS MATERIALIZED (
		SELECT a.i, s.ctid, s.show_id, s.seat, s.leg, s.position, w.woman,
		       CASE WHEN s.leg = a.from_stop THEN ` + seatPriceSQL("s", "a.stops", "a.from_stop", "a.to_stop") + ` END AS price
		FROM allowed a
		JOIN unnest($15::int[], $16::text[], $19::bool[]) AS w(i, seat, woman) ON w.i = a.i
		JOIN seats s ON s.show_id = a.show_id AND s.seat = w.seat AND ` + legsSQL("s", "a.from_stop", "a.to_stop") + `
		WHERE s.show_id = ANY($17) AND s.seat = ANY($18)
		  AND ` + seatFree("s", "a.now") + `
		  AND ` + inPublicChannel("s") + `
		  AND ` + holdableKind("s", "w.woman") + `
		FOR UPDATE OF s SKIP LOCKED
	),
	whole AS MATERIALIZED (
		-- Prices are bounded (decision 0071); a total past int64 is the
		-- one-hold path's to refuse.
		SELECT f.i FROM free f JOIN allowed a ON a.i = f.i
		GROUP BY f.i, a.n, a.from_stop, a.to_stop
		HAVING count(*) = a.n * (a.to_stop - a.from_stop) AND count(f.price) = a.n
		   AND sum(f.price) <= 9223372036854775807
	),
	taken AS (
		UPDATE seats s
		SET status = 'held', hold_id = a.hold_id, held_until = a.expires_at, version = s.version + 1
		FROM free f JOIN whole USING (i) JOIN allowed a USING (i)
		-- The rows free locked, by their addresses: a TID scan, whatever
		-- the plan's statistics (nobody else can move a locked row).
		WHERE s.ctid = ANY (ARRAY(SELECT free.ctid FROM free JOIN whole USING (i))) AND s.ctid = f.ctid
		RETURNING f.i, s.seat, s.position, f.price, f.woman
	),
	hold AS (
		INSERT INTO holds (hold_id, show_id, user_id, status, seats, ga_area, quantity,
		                   amount_minor, currency, expires_at, created_at, updated_at, women_seats,
		                   from_stop, to_stop, boarding_counter, dropping_counter)
		SELECT a.hold_id, a.show_id, a.user_id, 'active', array_agg(t.seat ORDER BY t.position) FILTER (WHERE t.price IS NOT NULL),
		       '', a.n, sum(t.price), a.currency, a.expires_at, a.now, a.now,
		       coalesce(array_agg(t.seat ORDER BY t.position) FILTER (WHERE t.price IS NOT NULL AND t.woman), '{}'),
		       a.from_stop, a.to_stop, a.boarding_counter, a.dropping_counter
		FROM taken t JOIN allowed a ON a.i = t.i
		GROUP BY a.i, a.hold_id, a.show_id, a.user_id, a.n, a.currency, a.expires_at, a.now,
		         a.from_stop, a.to_stop, a.boarding_counter, a.dropping_counter
		RETURNING hold_id, seats, amount_minor, currency, women_seats, from_stop, to_stop
	)
	SELECT hold.hold_id, hold.seats, hold.amount_minor, hold.currency, a.hold_ttl_ms, hold.women_seats, hold.from_stop, hold.to_stop
	FROM hold JOIN allowed a ON a.hold_id = hold.hold_id`

// holdBatchGASQL is holdGASQL for the GA holds of a batch at once
// (holdBatchRulesCTE's $1..$14). An allowed hold is taken only if a bucket
// of its area with enough places is free: the area's first free public
// buckets from a random start, no more than it has holds in the batch, are
// locked without waiting (SKIP LOCKED), and paired with its holds, the
// largest hold with the fullest bucket. A hold without a bucket is left to
// the one-hold path, which may take its places from several buckets.
var holdBatchGASQL = holdBatchRulesCTE(`r.area <> ''`) + `
	areas AS MATERIALIZED (
		SELECT show_id, area, count(*) AS holds, min(n) AS least,
		       -- Where the area's buckets are first looked at; random() in a
		       -- condition could be drawn again for every row.
		       floor(random() * 1000000)::int AS start
		FROM allowed GROUP BY show_id, area
	),
	locked AS MATERIALIZED (
		SELECT a.show_id, a.area, b.ctid, b.bucket, b.remaining, b.price_minor
		FROM areas a CROSS JOIN LATERAL (
			SELECT b.ctid, b.bucket, b.remaining, b.price_minor FROM ga_buckets b
			WHERE b.show_id = a.show_id AND b.area = a.area AND b.remaining >= a.least
			  AND ` + inPublicChannel("b") + `
			ORDER BY (b.bucket - a.start % (SELECT max(bucket) + 1 FROM ga_buckets
			                                 WHERE show_id = a.show_id AND area = a.area)) < 0, b.bucket
			LIMIT a.holds
			FOR UPDATE SKIP LOCKED) b
	),
	pairs AS MATERIALIZED (
		SELECT h.i, b.ctid, b.bucket, b.price_minor, h.n
		FROM (SELECT *, row_number() OVER (PARTITION BY show_id, area ORDER BY n DESC, i) AS k FROM allowed) h
		JOIN (SELECT *, row_number() OVER (PARTITION BY show_id, area ORDER BY remaining DESC, bucket) AS k FROM locked) b
		  ON b.show_id = h.show_id AND b.area = h.area AND b.k = h.k
		-- Prices and quantities are bounded (decision 0071); a total past
		-- int64 is the one-hold path's to refuse.
		WHERE b.remaining >= h.n AND b.price_minor::numeric * h.n <= 9223372036854775807
	),
	took AS (
		UPDATE ga_buckets b
		SET remaining = b.remaining - p.n, version = b.version + 1
		FROM pairs p
		-- The buckets locked, by their addresses (as in holdBatchSQL).
		WHERE b.ctid = ANY (ARRAY(SELECT ctid FROM pairs)) AND b.ctid = p.ctid
		RETURNING p.i, b.bucket, b.price_minor
	),
	hold AS (
		INSERT INTO holds (hold_id, show_id, user_id, status, seats, ga_area, quantity,
		                   amount_minor, currency, expires_at, created_at, updated_at)
		SELECT a.hold_id, a.show_id, a.user_id, 'active', '{}', a.area, a.n, t.price_minor * a.n,
		       a.currency, a.expires_at, a.now, a.now
		FROM took t JOIN allowed a ON a.i = t.i
		RETURNING hold_id, ga_area, amount_minor, currency
	),
	takes AS (
		INSERT INTO hold_ga_takes (hold_id, show_id, area, bucket, quantity)
		SELECT a.hold_id, a.show_id, a.area, t.bucket, a.n FROM took t JOIN allowed a ON a.i = t.i
		RETURNING hold_id, bucket
	)
	SELECT hold.hold_id, hold.ga_area, hold.amount_minor, hold.currency, a.hold_ttl_ms, takes.bucket
	FROM hold JOIN takes ON takes.hold_id = hold.hold_id JOIN allowed a ON a.hold_id = hold.hold_id`

// distinct is vs without repeats, in first-seen order.
func distinct[T comparable](vs []T) []T {
	seen := make(map[T]bool, len(vs))
	var out []T
	for _, v := range vs {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
