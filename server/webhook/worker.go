package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/seatghor/seatghor/server/audit"
	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/seal"
)

// WorkerConfig tunes the delivery workers.
type WorkerConfig struct {
	// Concurrency is how many deliveries one process sends at once;
	// default 16.
	Concurrency int
	// PerEndpoint is how many deliveries of one endpoint are in flight at
	// once, over all processes; default 2. A slow endpoint holds at most
	// that many sending slots.
	PerEndpoint int
	// PerPartner is how many deliveries of one partner's endpoints are in
	// flight at once, over all processes; admins' endpoints share one
	// such bucket (decision 0280). A partner whose endpoints are slow
	// holds at most that many sending slots, and the claim takes the
	// partners with due work in turn, so the other slots stay free for
	// the others. Default a quarter of Concurrency, at least PerEndpoint;
	// with several processes, set it with their total slots in mind.
	PerPartner int
	// Timeout bounds one POST, connection included; default 10 s. A slow
	// endpoint holds its slot that long, within its partner's share.
	Timeout time.Duration
	// Lease is how long a claimed delivery stays claimed: a worker that
	// dies leaves it to be claimed again after that; default 2×Timeout+5 s.
	Lease time.Duration
	// Poll is how often an idle worker looks for due deliveries; default
	// 200 ms.
	Poll time.Duration
	// RetryBase and RetryMax shape the backoff after a failed attempt: the
	// n-th waits RetryBase·2^(n-1) capped at RetryMax, of which the upper
	// half is random (jitter); defaults 5 s and 2 h.
	RetryBase, RetryMax time.Duration
	// DisableAfter and DisableFailures say when an endpoint is disabled:
	// when every attempt to it has failed for DisableAfter and at least
	// DisableFailures in a row; defaults 24 h and 10 (decision 0190).
	DisableAfter    time.Duration
	DisableFailures int
	// MaxEndpoints caps each partner's endpoints (decision 0278); default
	// DefaultMaxEndpoints. The Service enforces it (WithMaxEndpoints): it
	// is here with the other webhook settings the binary reads.
	MaxEndpoints int
	// AllowLoopback lets deliveries go to loopback addresses (dev and
	// tests). Every other special-purpose address (private, shared,
	// link-local, documentation, IPv4-embedding IPv6 …) is refused always,
	// loopback ones unless this is set (decision 0281).
	AllowLoopback bool
	// Resolver looks up endpoints' host names; nil: the system's. Tests
	// give one that asks a DNS server of their own.
	Resolver *net.Resolver
	// Registerer receives the metrics; nil registers nothing.
	Registerer prometheus.Registerer
	Log        *slog.Logger
}

func (c *WorkerConfig) defaults() {
	if c.Concurrency <= 0 {
		c.Concurrency = 16
	}
	if c.PerEndpoint <= 0 {
		c.PerEndpoint = 2
	}
	if c.PerPartner <= 0 {
		c.PerPartner = max(c.Concurrency/4, c.PerEndpoint)
	}
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Second
	}
	if c.Lease <= 0 {
		c.Lease = 2*c.Timeout + 5*time.Second
	}
	if c.Poll <= 0 {
		c.Poll = 200 * time.Millisecond
	}
	if c.RetryBase <= 0 {
		c.RetryBase = 5 * time.Second
	}
	if c.RetryMax <= 0 {
		c.RetryMax = 2 * time.Hour
	}
	if c.DisableAfter <= 0 {
		c.DisableAfter = 24 * time.Hour
	}
	if c.DisableFailures <= 0 {
		c.DisableFailures = 10
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
}

// Worker sends due deliveries. Any number may run, in any processes: a
// delivery is claimed with FOR UPDATE SKIP LOCKED and a lease.
type Worker struct {
	db     *pg.Pool
	clock  clock.Clock
	box    *seal.Box
	cfg    WorkerConfig
	client *http.Client
	log    *slog.Logger
	m      *metrics
	// wake is signalled when a slot frees up.
	wake chan struct{}
}

// NewWorker returns a delivery worker over the catalog database, whose
// endpoints' signing secrets box opens.
func NewWorker(db *pg.Pool, c clock.Clock, box *seal.Box, cfg WorkerConfig) (*Worker, error) {
	cfg.defaults()
	m, err := newMetrics(cfg.Registerer, db)
	if err != nil {
		return nil, err
	}
	dialer := &net.Dialer{Timeout: cfg.Timeout, Control: guard(cfg.AllowLoopback), Resolver: cfg.Resolver}
	client := &http.Client{
		Timeout: cfg.Timeout,
		Transport: &http.Transport{
			DialContext:           dialer.DialContext,
			TLSHandshakeTimeout:   cfg.Timeout,
			ResponseHeaderTimeout: cfg.Timeout,
			MaxIdleConnsPerHost:   cfg.PerEndpoint,
			IdleConnTimeout:       90 * time.Second,
		},
		// A redirect is an answer, not a success: the endpoint's URL is
		// the one the partner registered.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return &Worker{db: db, clock: c, box: box, cfg: cfg, client: client, log: cfg.Log, m: m, wake: make(chan struct{}, 1)}, nil
}

// Run sends deliveries until ctx ends. Sends in flight then are cut off;
// their leases run out and they are sent again (at least once).
func (w *Worker) Run(ctx context.Context) {
	slots := make(chan struct{}, w.cfg.Concurrency)
	var wg sync.WaitGroup
	defer wg.Wait()
	failures := 0
	for ctx.Err() == nil {
		free := w.cfg.Concurrency - len(slots)
		if free == 0 {
			w.sleep(ctx, w.cfg.Poll)
			continue
		}
		claimed, err := w.claim(ctx, free)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			failures++
			w.log.Warn("webhook deliveries not claimed; retrying", "err", err, "failures", failures)
			w.sleep(ctx, min(w.cfg.Poll<<min(failures, 6), 10*time.Second))
			continue
		}
		failures = 0
		for _, c := range claimed {
			slots <- struct{}{}
			wg.Go(func() {
				defer func() {
					<-slots
					select {
					case w.wake <- struct{}{}:
					default:
					}
				}()
				w.deliver(ctx, c)
			})
		}
		if len(claimed) < free {
			w.sleep(ctx, w.cfg.Poll)
		}
	}
}

// sleep waits d, or less when a send finishes.
func (w *Worker) sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	case <-w.wake:
	}
}

// claimed is a delivery a worker holds the lease of.
type claimed struct {
	id, endpoint int64
	webhookID    string
	body         []byte
	attempt      int
	giveUpAt     time.Time
	url          string
	secrets      []string
	// secretErr says why a stored secret did not open (sealed under a key
	// no longer listed): the delivery fails and is retried, never sent
	// unsigned.
	secretErr error
}

// claimSQL leases up to $4 due deliveries of active endpoints, at most
// $2 (PerEndpoint) in flight per endpoint and $3 (PerPartner) per partner,
// counting the leased rows of every process (decision 0280).
//
// Each endpoint's due deliveries are looked up on their own (LATERAL,
// oldest first), so a backlog at one endpoint never hides another's
// (decision 0190). The candidates then take turns: within a partner its
// endpoints alternate (each one's oldest, then each one's second …), and
// the partners alternate too (each partner's first, then each one's
// second …), oldest first within a turn; a partner at its share offers
// none. So free slots go to every partner with due work and room, never
// all to the one with the most endpoints or the oldest backlog. Rows
// another worker is claiming are skipped, never waited for.
const claimSQL = `
	WITH leased AS (
		SELECT b.endpoint_id, count(*) AS n FROM webhook_deliveries b
		WHERE b.status = 'pending' AND b.locked_until IS NOT NULL AND b.locked_until > $1
		GROUP BY b.endpoint_id
	), busy AS (
		SELECT coalesce(e.partner_id, 0) AS partner, sum(l.n) AS n
		FROM leased l JOIN webhook_endpoints e USING (endpoint_id)
		GROUP BY 1
	), cand AS (
		SELECT coalesce(e.partner_id, 0) AS partner, d.delivery_id, d.next_attempt_at,
		       row_number() OVER (PARTITION BY e.endpoint_id ORDER BY d.next_attempt_at, d.delivery_id) AS turn
		FROM webhook_endpoints e
		LEFT JOIN leased l USING (endpoint_id)
		CROSS JOIN LATERAL (
			SELECT d.delivery_id, d.next_attempt_at FROM webhook_deliveries d
			WHERE d.endpoint_id = e.endpoint_id AND d.status = 'pending' AND d.next_attempt_at <= $1
			  AND (d.locked_until IS NULL OR d.locked_until <= $1)
			ORDER BY d.next_attempt_at LIMIT greatest($2 - coalesce(l.n, 0), 0)
		) d
		WHERE e.status = 'active'
	), ranked AS (
		SELECT c.delivery_id, c.next_attempt_at, greatest($3 - coalesce(b.n, 0), 0) AS room,
		       row_number() OVER (PARTITION BY c.partner ORDER BY c.turn, c.next_attempt_at, c.delivery_id) AS place
		FROM cand c LEFT JOIN busy b USING (partner)
	), pick AS (
		SELECT d.delivery_id FROM webhook_deliveries d
		WHERE d.delivery_id IN (SELECT delivery_id FROM ranked WHERE place <= room
		                        ORDER BY place, next_attempt_at LIMIT $4)
		  AND d.status = 'pending' AND (d.locked_until IS NULL OR d.locked_until <= $1)
		FOR UPDATE OF d SKIP LOCKED
	)
	UPDATE webhook_deliveries d SET locked_until = $5, attempts = d.attempts + 1
	FROM pick, webhook_endpoints e
	WHERE d.delivery_id = pick.delivery_id AND e.endpoint_id = d.endpoint_id
	RETURNING d.delivery_id, d.endpoint_id, d.webhook_id, d.body, d.attempts, d.give_up_at, e.url, e.secret,
	          CASE WHEN e.previous_secret_expires_at > $1 THEN e.previous_secret END`

// claim leases up to n due deliveries (claimSQL). Claims take turns, one
// process at a time, under a transaction-level advisory lock: a claim
// counts the leases of the claims committed before it, so the shares hold
// exactly over every process, not up to the race of two claims.
func (w *Worker) claim(ctx context.Context, n int) ([]claimed, error) {
	now := w.clock.Now()
	var rows []claimedRow
	err := pg.InTx(ctx, w.db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('seatghor.webhook-claim', 0))`); err != nil {
			return err
		}
		r, err := tx.Query(ctx, claimSQL, now, w.cfg.PerEndpoint, w.cfg.PerPartner, n, now.Add(w.cfg.Lease))
		if err != nil {
			return err
		}
		rows, err = pgx.CollectRows(r, pgx.RowToStructByPos[claimedRow])
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim webhook deliveries: %w", err)
	}
	out := make([]claimed, len(rows))
	for i, r := range rows {
		out[i] = w.open(r)
	}
	return out, nil
}

// claimedRow is a row claimSQL returns.
type claimedRow struct {
	ID, Endpoint    int64
	WebhookID, Body string
	Attempt         int
	GiveUpAt        time.Time
	URL, Secret     string
	PreviousSecret  *string
}

// open is a claimed row with its endpoint's secrets opened.
func (w *Worker) open(r claimedRow) claimed {
	c := claimed{id: r.ID, endpoint: r.Endpoint, webhookID: r.WebhookID, body: []byte(r.Body), attempt: r.Attempt,
		giveUpAt: r.GiveUpAt, url: r.URL}
	stored := []string{r.Secret}
	if r.PreviousSecret != nil {
		stored = append(stored, *r.PreviousSecret)
	}
	for _, v := range stored {
		plain, _, err := openSecret(w.box, v, c.endpoint)
		if err != nil {
			c.secretErr = fmt.Errorf("%w: webhook endpoint %d: %w", errUnsigned, c.endpoint, err)
			break
		}
		c.secrets = append(c.secrets, plain)
	}
	return c
}

// outcome is what one POST came to.
type outcome struct {
	code     int
	err      error
	duration time.Duration
}

func (o outcome) ok() bool { return o.err == nil && o.code >= 200 && o.code < 300 }

// deliver POSTs one delivery and records the attempt.
func (w *Worker) deliver(ctx context.Context, c claimed) {
	o := w.post(ctx, c)
	if ctx.Err() != nil {
		return // shutting down: the lease runs out and it is sent again
	}
	if o.err != nil {
		// The error in full, with the addresses the name resolved to or
		// the resolver's message, is the operator's; the attempt log says
		// a fixed word (decision 0282).
		level := slog.LevelInfo
		if errors.Is(o.err, errRefused) {
			level = slog.LevelWarn // an endpoint pointed at a network it may not reach
			w.m.refused.Inc()
		}
		w.log.Log(ctx, level, "webhook attempt got no answer", "delivery", c.id, "endpoint", c.endpoint,
			"attempt", c.attempt, "logged_as", describe(o.err), "err", o.err)
	}
	if err := w.record(ctx, c, o); err != nil && ctx.Err() == nil {
		w.log.Warn("webhook attempt not recorded; it will be sent again", "delivery", c.id, "err", err)
	}
}

// post sends the delivery once, signed with the endpoint's secrets.
func (w *Worker) post(ctx context.Context, c claimed) outcome {
	if c.secretErr != nil {
		// An operator's mistake (a key removed from SEATGHOR_SEAL_KEYS
		// too early): said loudly, and retried until the key is back.
		w.log.Error("webhook delivery not signed: its endpoint's secret does not open", "delivery", c.id, "err", c.secretErr)
		return outcome{err: c.secretErr}
	}
	start := time.Now()
	at := w.clock.Now()
	sig, err := Sign(c.secrets, c.webhookID, at, c.body)
	if err != nil {
		return outcome{err: fmt.Errorf("%w: %w", errUnsigned, err)}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(c.body))
	if err != nil {
		return outcome{err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Seatghor-Webhooks/1")
	req.Header.Set("webhook-id", c.webhookID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(at.Unix(), 10))
	req.Header.Set("webhook-signature", sig)
	resp, err := w.client.Do(req)
	if err != nil {
		return outcome{err: err, duration: time.Since(start)}
	}
	// Read a little of the answer so the connection can be reused; what
	// the endpoint says is not kept.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	return outcome{code: resp.StatusCode, duration: time.Since(start)}
}

// record writes the attempt and the delivery's and endpoint's new state in
// one transaction. Only the holder of the attempt changes the delivery: a
// worker whose lease ran out (another claimed it since) only logs its try,
// and so does one whose delivery was replayed meanwhile (the replay lets
// the lease go): the replay is sent, not marked done by the older try.
func (w *Worker) record(ctx context.Context, c claimed, o outcome) error {
	now := w.clock.Now()
	msg := ""
	switch {
	case o.err != nil:
		msg = describe(o.err)
	case !o.ok():
		msg = "HTTP " + strconv.Itoa(o.code)
	}
	result := "succeeded"
	err := pg.InTx(ctx, w.db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `
			INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, status_code, error, duration_ms)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
			c.id, c.attempt, now, o.code, msg, o.duration.Milliseconds()); err != nil {
			return fmt.Errorf("log attempt: %w", err)
		}
		if o.ok() {
			if _, err := tx.Exec(ctx, `
				UPDATE webhook_deliveries SET status = 'succeeded', locked_until = NULL
				WHERE delivery_id = $1 AND attempts = $2 AND status = 'pending' AND locked_until IS NOT NULL`, c.id, c.attempt); err != nil {
				return fmt.Errorf("record success: %w", err)
			}
			_, err := tx.Exec(ctx, `
				UPDATE webhook_endpoints SET consecutive_failures = 0, failing_since = NULL
				WHERE endpoint_id = $1 AND consecutive_failures > 0`, c.endpoint)
			return err
		}
		result = "retry"
		if !now.Before(c.giveUpAt) {
			result = "failed"
		}
		if _, err := tx.Exec(ctx, `
			UPDATE webhook_deliveries
			SET status = CASE WHEN $3 THEN 'failed' ELSE 'pending' END, next_attempt_at = $4, locked_until = NULL
			WHERE delivery_id = $1 AND attempts = $2 AND status = 'pending' AND locked_until IS NOT NULL`,
			c.id, c.attempt, result == "failed", now.Add(w.backoff(c.attempt))); err != nil {
			return fmt.Errorf("record failure: %w", err)
		}
		var disabled bool
		err := tx.QueryRow(ctx, `
			UPDATE webhook_endpoints SET consecutive_failures = consecutive_failures + 1,
				failing_since = coalesce(failing_since, $2),
				status = CASE WHEN consecutive_failures + 1 >= $3 AND coalesce(failing_since, $2) <= $2::timestamptz - $4::float8 * interval '1 second'
				              THEN 'disabled' ELSE status END,
				disabled_by = CASE WHEN status = 'active' AND consecutive_failures + 1 >= $3
				                    AND coalesce(failing_since, $2) <= $2::timestamptz - $4::float8 * interval '1 second'
				              THEN 'failures' ELSE disabled_by END,
				disabled_at = CASE WHEN status = 'active' AND consecutive_failures + 1 >= $3
				                    AND coalesce(failing_since, $2) <= $2::timestamptz - $4::float8 * interval '1 second'
				              THEN $2 ELSE disabled_at END
			WHERE endpoint_id = $1
			RETURNING status = 'disabled' AND disabled_at = $2`,
			c.endpoint, now, w.cfg.DisableFailures, w.cfg.DisableAfter.Seconds()).Scan(&disabled)
		if err != nil {
			return fmt.Errorf("count failure of endpoint %d: %w", c.endpoint, err)
		}
		if disabled {
			reason := fmt.Sprintf("every delivery attempt since %s failed (last: %s); no more are sent until the endpoint is enabled again, "+
				"and events are kept for it for %s", now.Add(-w.cfg.DisableAfter).UTC().Format(time.RFC3339), msg, Retry)
			if _, err := tx.Exec(ctx, `UPDATE webhook_endpoints SET disabled_reason = $2 WHERE endpoint_id = $1`,
				c.endpoint, reason); err != nil {
				return fmt.Errorf("disable endpoint %d: %w", c.endpoint, err)
			}
			if err := audit.Record(ctx, tx, audit.Entry{At: now, Actor: audit.Actor{Kind: audit.ActorSystem, ID: "webhook-worker"},
				Action: "webhook_endpoint.disable", Target: target(c.endpoint),
				Detail: map[string]any{"reason": reason, "disabled_by": string(DisabledByFailures)}}); err != nil {
				return err
			}
			// The partner's notice: ListEndpoints shows the status and the
			// reason; this line is the hook for a mail (decision 0190).
			w.log.Warn("webhook endpoint disabled", "endpoint", c.endpoint, "reason", reason)
			w.m.disabled.Inc()
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record attempt %d of delivery %d: %w", c.attempt, c.id, err)
	}
	w.m.attempts.WithLabelValues(result).Inc()
	return nil
}

// backoff is how long to wait after the n-th failed attempt: exponential,
// capped, the upper half random so failed deliveries spread out.
func (w *Worker) backoff(n int) time.Duration {
	d := w.cfg.RetryBase << min(n-1, 30)
	if d <= 0 || d > w.cfg.RetryMax {
		d = w.cfg.RetryMax
	}
	return d/2 + rand.N(d/2+1)
}

// LogRetention is how long finished deliveries (succeeded or given up)
// stay in the delivery log.
const LogRetention = 30 * 24 * time.Hour

// Prune deletes the finished deliveries recorded before olderThan, with
// their attempts; pending ones stay whatever their age. It returns how many.
func (w *Worker) Prune(ctx context.Context, olderThan time.Time) (int64, error) {
	var total int64
	for {
		// Small batches: no long lock on the log while workers record.
		tag, err := w.db.Exec(ctx, `
			DELETE FROM webhook_deliveries WHERE delivery_id IN (
				SELECT delivery_id FROM webhook_deliveries
				WHERE status <> 'pending' AND created_at < $1 LIMIT 1000)`, olderThan)
		if err != nil {
			return total, fmt.Errorf("prune webhook deliveries: %w", err)
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < 1000 {
			return total, nil
		}
	}
}

// DropExpired drops the deliveries kept for endpoints disabled after
// failures longer than Retry (decision 0277) and counts them in
// seatghor_webhook_deliveries_dropped_total{reason="retention"}. It
// returns how many.
func (w *Worker) DropExpired(ctx context.Context) (int, error) {
	n, err := dropExpired(ctx, w.db, 0, w.clock.Now())
	if err != nil {
		return 0, err
	}
	w.m.dropped.WithLabelValues(dropRetention).Add(float64(n))
	return n, nil
}

// RunPruner prunes the delivery log every interval, keeping LogRetention,
// and drops what disabled endpoints were kept too long. Several processes
// may run it; they change the same rows harmlessly.
func (w *Worker) RunPruner(ctx context.Context, every time.Duration) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
		if n, err := w.DropExpired(ctx); err != nil && ctx.Err() == nil {
			w.log.Warn("expired webhook deliveries not dropped", "err", err)
		} else if n > 0 {
			w.log.Info("webhook deliveries of disabled endpoints dropped after their retention", "deliveries", n)
		}
		n, err := w.Prune(ctx, w.clock.Now().Add(-LogRetention))
		if err != nil && ctx.Err() == nil {
			w.log.Warn("webhook delivery log not pruned", "err", err)
		} else if n > 0 {
			w.log.Info("webhook delivery log pruned", "deliveries", n)
		}
	}
}
