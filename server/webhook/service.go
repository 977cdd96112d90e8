package webhook

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/seatghor/seatghor/server/audit"
	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/idempotency"
	"github.com/seatghor/seatghor/server/page"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/seal"
)

// Retry is how long a delivery is retried before it is given up (the
// Standard Webhooks practice; issue 12: up to three days). It is also how
// long the events of an endpoint disabled after failures are kept for it
// (decision 0277).
const Retry = 72 * time.Hour

// DefaultMaxEndpoints is how many endpoints a partner may have unless the
// service is told otherwise (decision 0278).
const DefaultMaxEndpoints = 5

// DefaultOverlap is how long a rotated-out secret still signs.
const DefaultOverlap = 24 * time.Hour

// MaxOverlap bounds a rotation's overlap.
const MaxOverlap = 7 * 24 * time.Hour

// Service manages endpoints and reads and replays deliveries. Its tables
// are in the catalog database (decision 0190).
type Service struct {
	db    *pg.Pool
	clock clock.Clock
	// box seals the signing secrets the catalog keeps (decision 0273).
	box *seal.Box
	// allowLoopback lets endpoints use plain http to a loopback address
	// (dev and tests); otherwise only https is taken.
	allowLoopback bool
	// maxEndpoints caps each partner's endpoints (decision 0278).
	maxEndpoints int
	dropped      *prometheus.CounterVec
}

// Option is an optional setting of NewService.
type Option func(*Service)

// WithMaxEndpoints caps each partner's endpoints at n (default
// DefaultMaxEndpoints; n <= 0 keeps the default). Admins' endpoints are
// not capped.
func WithMaxEndpoints(n int) Option {
	return func(s *Service) {
		if n > 0 {
			s.maxEndpoints = n
		}
	}
}

// WithRegisterer registers the service's metrics (the deliveries it drops)
// with reg.
func WithRegisterer(reg prometheus.Registerer) Option {
	return func(s *Service) { s.dropped = droppedCounter(reg) }
}

// NewService returns the webhook service over the catalog database, whose
// endpoints' signing secrets box seals. allowLoopback admits
// http://127.0.0.1… and http://localhost… endpoints (dev and tests only:
// in production they would reach the server's own host).
func NewService(db *pg.Pool, c clock.Clock, box *seal.Box, allowLoopback bool, opts ...Option) *Service {
	s := &Service{db: db, clock: c, box: box, allowLoopback: allowLoopback, maxEndpoints: DefaultMaxEndpoints}
	for _, o := range opts {
		o(s)
	}
	if s.dropped == nil {
		s.dropped = droppedCounter(nil)
	}
	return s
}

// errorCodec records a refused endpoint request with its idempotency key
// (decision 0318); "" reads webhook's InvalidError recorded before.
var errorCodec = idempotency.Faults("webhook", []fault.Reason{fault.WebhookInvalid},
	map[string]fault.Reason{"": fault.WebhookInvalid})

func (s *Service) now() time.Time { return s.clock.Now().UTC().Truncate(time.Microsecond) }

// NewEndpoint is what CreateEndpoint takes.
type NewEndpoint struct {
	PartnerID   int64
	URL         string
	EventTypes  []string
	Description string
}

// Created is a new endpoint (or a rotated one) and its secret, which is
// shown to the request that made it (and to its retries) only.
type Created struct {
	Endpoint Endpoint
	// Secret is the signing secret in the clear; it is never stored so.
	Secret string `json:"-"`
	// Sealed is Secret sealed: what the request's idempotency record keeps,
	// so a retry answers the same secret (records made before decision
	// 0273 hold it in the clear, under the same name).
	Sealed string `json:"Secret"`
}

// sealedSecret is a fresh signing secret, sealed to endpoint id's row.
func (s *Service) sealedSecret(id int64) (string, error) {
	sealed, err := s.box.Seal(newSecret(), secretPurpose(id))
	if err != nil {
		return "", fmt.Errorf("seal a webhook secret: %w", err)
	}
	return sealed, nil
}

// shown is c with its secret opened: the answer of the request that made
// it, or of a retry from its idempotency record.
func (s *Service) shown(c Created, err error) (Created, error) {
	if err != nil {
		return Created{}, err
	}
	if c.Secret, _, err = openSecret(s.box, c.Sealed, c.Endpoint.ID); err != nil {
		return Created{}, fmt.Errorf("open the secret of webhook endpoint %d: %w", c.Endpoint.ID, err)
	}
	return c, nil
}

// owner is the partner an endpoint of caller's request belongs to (0: an
// admin's endpoint for every partner).
func owner(c Caller, requested int64) (int64, error) {
	switch {
	case c.Admin:
		return requested, nil
	case c.PartnerID <= 0:
		return 0, ErrForbidden
	case requested != 0 && requested != c.PartnerID:
		return 0, fmt.Errorf("partner %d: %w", requested, ErrForbidden)
	}
	return c.PartnerID, nil
}

// manager refuses a caller that may not change endpoints: neither an admin
// nor a partner's credential allowed to manage them (decision 0276).
func manager(c Caller) error {
	switch {
	case c.Admin:
		return nil
	case c.PartnerID <= 0:
		return ErrForbidden
	case !c.Manages:
		return ErrNotManager
	}
	return nil
}

// CreateEndpoint subscribes a URL to event types and returns its secret.
// A partner has at most the service's cap of endpoints, disabled ones
// included; two creates at once cannot both take the last place.
func (s *Service) CreateEndpoint(ctx context.Context, c Caller, in NewEndpoint) (Created, error) {
	partner, err := owner(c, in.PartnerID)
	if err != nil {
		return Created{}, err
	}
	if err := manager(c); err != nil {
		return Created{}, err
	}
	if err := s.checkURL(in.URL); err != nil {
		return Created{}, err
	}
	types, err := checkEventTypes(in.EventTypes)
	if err != nil {
		return Created{}, err
	}
	now := s.now()
	return s.shown(idempotency.Do(ctx, s.db, errorCodec, idempotency.Options{Now: now, Wait: 3 * time.Second},
		func(tx pgx.Tx) (Created, error) {
			if partner != 0 {
				if err := s.checkCap(ctx, tx, partner); err != nil {
					return Created{}, err
				}
			}
			// The id is drawn first: the secret is sealed to its row
			// (decision 0279), so it must be known before the INSERT.
			var id int64
			if err := tx.QueryRow(ctx, `SELECT nextval(pg_get_serial_sequence('webhook_endpoints', 'endpoint_id'))`).
				Scan(&id); err != nil {
				return Created{}, fmt.Errorf("create webhook endpoint: %w", err)
			}
			secret, err := s.sealedSecret(id)
			if err != nil {
				return Created{}, err
			}
			row := tx.QueryRow(ctx, `
				INSERT INTO webhook_endpoints (endpoint_id, partner_id, url, event_types, description, secret, created_by,
					created_by_key, created_at)
				OVERRIDING SYSTEM VALUE
				VALUES ($1, nullif($2, 0), $3, $4, $5, $6, $7, nullif($8, ''), $9)
				RETURNING `+endpointColumns, id, partner, in.URL, types, in.Description, secret, c.UserID, c.APIKey, now)
			e, err := scanEndpoint(row)
			if err != nil {
				return Created{}, fmt.Errorf("create webhook endpoint: %w", err)
			}
			if err := s.audit(ctx, tx, c, "webhook_endpoint.create", e.ID, map[string]any{
				"partner_id": e.PartnerID, "url": e.URL, "event_types": e.EventTypes}); err != nil {
				return Created{}, err
			}
			return Created{Endpoint: e, Sealed: secret}, nil
		}))
}

// checkCap takes partner's endpoint lock for the rest of tx and refuses a
// new endpoint when the partner has its cap already. The lock is an
// advisory one on the partner (a partner with no endpoint has no row to
// lock), so concurrent creates of one partner count one after the other.
func (s *Service) checkCap(ctx context.Context, tx pgx.Tx, partner int64) error {
	// Two statements: the count's snapshot must be taken after the lock is
	// held (read committed), or it would miss a create that committed
	// while this one waited.
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('webhook_endpoints.partner:' || $1::bigint, 0))`,
		partner); err != nil {
		return fmt.Errorf("lock the webhook endpoints of partner %d: %w", partner, err)
	}
	var n int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM webhook_endpoints WHERE partner_id = $1`, partner).Scan(&n); err != nil {
		return fmt.Errorf("count the webhook endpoints of partner %d: %w", partner, err)
	}
	if n >= s.maxEndpoints {
		return fmt.Errorf("partner %d has %d endpoints, the most it may have: %w", partner, n, ErrEndpointLimit)
	}
	return nil
}

// audit records a change of endpoint id by c in tx.
func (s *Service) audit(ctx context.Context, tx pgx.Tx, c Caller, action string, id int64, detail map[string]any) error {
	return audit.Record(ctx, tx, audit.Entry{At: s.now(), Actor: c.actor(), Action: action, Target: target(id), Detail: detail})
}

// checkURL takes https URLs, and plain http to a loopback host when the
// service allows it.
func (s *Service) checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return &fault.Error{Reason: fault.WebhookInvalid, Field: "url", Message: "want an absolute https URL"}
	}
	if u.User != nil {
		return &fault.Error{Reason: fault.WebhookInvalid, Field: "url", Message: "credentials in the URL are not taken; verify the signature instead"}
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if s.allowLoopback && isLoopback(u.Hostname()) {
			return nil
		}
	}
	return &fault.Error{Reason: fault.WebhookInvalid, Field: "url", Message: "want an https URL"}
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

const endpointColumns = `endpoint_id, coalesce(partner_id, 0), url, event_types, description, status,
	disabled_reason, disabled_at, consecutive_failures, failing_since, created_at, previous_secret_expires_at,
	coalesce(created_by_key, ''), needs_confirmation, disabled_by`

func scanEndpoint(r pgx.Row) (Endpoint, error) {
	var e Endpoint
	var disabledAt, failingSince, prevExpires *time.Time
	var status, disabledBy string
	err := r.Scan(&e.ID, &e.PartnerID, &e.URL, &e.EventTypes, &e.Description, &status, &e.DisabledReason,
		&disabledAt, &e.ConsecutiveFailures, &failingSince, &e.CreatedAt, &prevExpires,
		&e.CreatedByKey, &e.NeedsConfirmation, &disabledBy)
	e.Status, e.DisabledBy = Status(status), DisabledBy(disabledBy)
	e.DisabledAt, e.FailingSince, e.PreviousSecretExpiresAt = deref(disabledAt), deref(failingSince), deref(prevExpires)
	return e, err
}

func deref(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

// ListEndpoints lists a partner's endpoints (admins: a partner's, or every
// endpoint when partnerID is 0), oldest first.
func (s *Service) ListEndpoints(ctx context.Context, c Caller, partnerID int64) ([]Endpoint, error) {
	if !c.Admin {
		p, err := owner(c, partnerID)
		if err != nil {
			return nil, err
		}
		partnerID = p
	}
	rows, err := s.db.Query(ctx, `
		SELECT `+endpointColumns+` FROM webhook_endpoints
		WHERE $1 = 0 OR partner_id = $1
		ORDER BY endpoint_id`, partnerID)
	if err != nil {
		return nil, fmt.Errorf("list webhook endpoints: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Endpoint, error) { return scanEndpoint(r) })
	if err != nil {
		return nil, fmt.Errorf("list webhook endpoints: %w", err)
	}
	return out, nil
}

// mine locks endpoint id in tx when the caller may manage it: its own
// partner's, or any for an admin. Another partner's is not found.
func mine(ctx context.Context, tx pgx.Tx, c Caller, id int64) error {
	if !c.Admin && c.PartnerID <= 0 {
		return ErrForbidden
	}
	var partner int64
	err := tx.QueryRow(ctx, `SELECT coalesce(partner_id, 0) FROM webhook_endpoints WHERE endpoint_id = $1 FOR UPDATE`,
		id).Scan(&partner)
	found, err := pg.Found(err)
	if err != nil {
		return fmt.Errorf("read webhook endpoint %d: %w", id, err)
	}
	if !found || (!c.Admin && partner != c.PartnerID) {
		return fmt.Errorf("endpoint %d: %w", id, ErrNotFound)
	}
	return nil
}

// lockDeliveries locks, in tx, the pending deliveries of the endpoints
// where selects (a condition on webhook_endpoints, its arguments from $1),
// in id order. A change of an endpoint that also changes its deliveries
// takes these locks before the endpoint's, the order in which a worker
// recording an attempt takes them (the delivery, then its endpoint's
// failure count), so the two never deadlock.
func lockDeliveries(ctx context.Context, tx pgx.Tx, where string, args ...any) error {
	rows, err := tx.Query(ctx, `
		SELECT delivery_id FROM webhook_deliveries
		WHERE endpoint_id IN (SELECT endpoint_id FROM webhook_endpoints WHERE `+where+`) AND status = 'pending'
		ORDER BY delivery_id FOR UPDATE`, args...)
	if err != nil {
		return fmt.Errorf("lock webhook deliveries: %w", err)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("lock webhook deliveries: %w", err)
	}
	return nil
}

func target(id int64) string { return "webhook-endpoint:" + strconv.FormatInt(id, 10) }

// RotateSecret gives an endpoint a new secret; the current one keeps
// signing too for overlap (0: not at all).
func (s *Service) RotateSecret(ctx context.Context, c Caller, id int64, overlap time.Duration) (Created, error) {
	if overlap < 0 || overlap > MaxOverlap {
		return Created{}, &fault.Error{Reason: fault.WebhookInvalid, Field: "overlap", Message: fmt.Sprintf("want 0 to %s", MaxOverlap)}
	}
	if err := manager(c); err != nil {
		return Created{}, err
	}
	now := s.now()
	return s.shown(idempotency.Do(ctx, s.db, errorCodec, idempotency.Options{Target: target(id), Now: now, Wait: 3 * time.Second},
		func(tx pgx.Tx) (Created, error) {
			if err := mine(ctx, tx, c, id); err != nil {
				return Created{}, err
			}
			secret, err := s.sealedSecret(id)
			if err != nil {
				return Created{}, err
			}
			e, err := scanEndpoint(tx.QueryRow(ctx, `
				UPDATE webhook_endpoints SET previous_secret = CASE WHEN $3::float8 > 0 THEN secret END,
					previous_secret_expires_at = CASE WHEN $3::float8 > 0 THEN $4::timestamptz + $3::float8 * interval '1 second' END,
					secret = $2
				WHERE endpoint_id = $1
				RETURNING `+endpointColumns, id, secret, overlap.Seconds(), now))
			if err != nil {
				return Created{}, fmt.Errorf("rotate secret of endpoint %d: %w", id, err)
			}
			if err := s.audit(ctx, tx, c, "webhook_endpoint.rotate_secret", id, map[string]any{
				"overlap_seconds": overlap.Seconds()}); err != nil {
				return Created{}, err
			}
			return Created{Endpoint: e, Sealed: secret}, nil
		}))
}

// Enable turns an endpoint back on and confirms it (NeedsConfirmation is
// cleared: the caller vouches for it). The deliveries kept while it was
// disabled after failures are due now, with a fresh retry window, except
// those kept longer than Retry, which are dropped (decision 0277); an
// endpoint disabled otherwise had nothing kept.
func (s *Service) Enable(ctx context.Context, c Caller, id int64) (Endpoint, error) {
	if err := manager(c); err != nil {
		return Endpoint{}, err
	}
	now := s.now()
	dropped := 0
	e, err := idempotency.Do(ctx, s.db, errorCodec, idempotency.Options{Target: target(id), Now: now, Wait: 3 * time.Second},
		func(tx pgx.Tx) (Endpoint, error) {
			if err := lockDeliveries(ctx, tx, `endpoint_id = $1`, id); err != nil {
				return Endpoint{}, err
			}
			if err := mine(ctx, tx, c, id); err != nil {
				return Endpoint{}, err
			}
			n, err := dropExpired(ctx, tx, id, now)
			if err != nil {
				return Endpoint{}, fmt.Errorf("enable endpoint %d: %w", id, err)
			}
			dropped = n
			// An endpoint a person or a revocation disabled keeps nothing:
			// an Enqueue that read it active just before the disable
			// committed may have left a delivery, dropped here.
			if _, err := tx.Exec(ctx, `
				UPDATE webhook_deliveries d SET status = 'dropped', locked_until = NULL,
					dropped_reason = 'disabled: recorded as the endpoint was being disabled'
				FROM webhook_endpoints e
				WHERE e.endpoint_id = d.endpoint_id AND d.endpoint_id = $1 AND d.status = 'pending'
				  AND e.status = 'disabled' AND e.disabled_by <> 'failures'`, id); err != nil {
				return Endpoint{}, fmt.Errorf("enable endpoint %d: %w", id, err)
			}
			if _, err := tx.Exec(ctx, `
				UPDATE webhook_deliveries SET next_attempt_at = $2, give_up_at = $2::timestamptz + $3::float8 * interval '1 second'
				WHERE endpoint_id = $1 AND status = 'pending'`, id, now, Retry.Seconds()); err != nil {
				return Endpoint{}, fmt.Errorf("enable endpoint %d: %w", id, err)
			}
			e, err := scanEndpoint(tx.QueryRow(ctx, `
				UPDATE webhook_endpoints SET status = 'active', disabled_reason = '', disabled_at = NULL, disabled_by = '',
					disabled_by_key = NULL, needs_confirmation = false, consecutive_failures = 0, failing_since = NULL
				WHERE endpoint_id = $1
				RETURNING `+endpointColumns, id))
			if err != nil {
				return Endpoint{}, fmt.Errorf("enable endpoint %d: %w", id, err)
			}
			if err := s.audit(ctx, tx, c, "webhook_endpoint.enable", id, map[string]any{"dropped_expired": n}); err != nil {
				return Endpoint{}, err
			}
			return e, nil
		})
	if err == nil {
		s.dropped.WithLabelValues(dropRetention).Add(float64(dropped))
	}
	return e, err
}

// Why deliveries are dropped: the label of the dropped counter and the
// start of a dropped delivery's reason.
const (
	dropRetention = "retention"
	dropDisabled  = "disabled"
)

// execer runs a statement: a pool, or a transaction.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// dropExpired drops the pending deliveries of disabled endpoints (one, or
// every one when endpoint is 0) whose retry window had ended by now: kept
// longer than Retry while the endpoint was disabled after failures
// (decision 0277). It returns how many.
func dropExpired(ctx context.Context, db execer, endpoint int64, now time.Time) (int, error) {
	tag, err := db.Exec(ctx, `
		UPDATE webhook_deliveries d SET status = 'dropped', locked_until = NULL,
			dropped_reason = 'retention: kept for ' || $3 || ' while the endpoint was disabled after failures, and not sent'
		FROM webhook_endpoints e
		WHERE e.endpoint_id = d.endpoint_id AND e.status = 'disabled' AND ($1 = 0 OR d.endpoint_id = $1)
		  AND d.status = 'pending' AND d.give_up_at <= $2`, endpoint, now, Retry.String())
	if err != nil {
		return 0, fmt.Errorf("drop expired webhook deliveries: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// Disable stops endpoint id on behalf of its partner or an admin: no event
// is queued for it any more and its pending deliveries are dropped
// (decision 0277). An endpoint already disabled by a person or a key's
// revocation is answered as it is; one disabled after failures is
// disabled again, this time for good, and loses what was kept. It returns
// the endpoint and how many deliveries it dropped.
func (s *Service) Disable(ctx context.Context, c Caller, id int64, reason string) (Endpoint, int, error) {
	if err := manager(c); err != nil {
		return Endpoint{}, 0, err
	}
	by := DisabledByPartner
	if c.Admin {
		by = DisabledByAdmin
	}
	if reason == "" {
		reason = "disabled by the " + string(by)
	}
	now := s.now()
	type result struct {
		Endpoint Endpoint
		Dropped  int
	}
	r, err := idempotency.Do(ctx, s.db, errorCodec, idempotency.Options{Target: target(id), Now: now, Wait: 3 * time.Second},
		func(tx pgx.Tx) (result, error) {
			if err := lockDeliveries(ctx, tx, `endpoint_id = $1`, id); err != nil {
				return result{}, err
			}
			if err := mine(ctx, tx, c, id); err != nil {
				return result{}, err
			}
			ids, dropped, err := s.disable(ctx, tx, `endpoint_id = $1`, []any{id}, by, "", reason, now)
			if err != nil {
				return result{}, err
			}
			if len(ids) > 0 {
				if err := s.audit(ctx, tx, c, "webhook_endpoint.disable", id, map[string]any{
					"reason": reason, "dropped": dropped}); err != nil {
					return result{}, err
				}
			}
			e, err := scanEndpoint(tx.QueryRow(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints WHERE endpoint_id = $1`, id))
			if err != nil {
				return result{}, fmt.Errorf("read webhook endpoint %d: %w", id, err)
			}
			return result{Endpoint: e, Dropped: dropped}, nil
		})
	return r.Endpoint, r.Dropped, err
}

// disable disables the endpoints matching where (its arguments start at
// $1) that are active or disabled only after failures, and drops their
// pending deliveries, in tx. It returns the endpoints it disabled and how
// many deliveries it dropped.
func (s *Service) disable(ctx context.Context, tx pgx.Tx, where string, args []any, by DisabledBy, byKey, reason string,
	now time.Time) ([]int64, int, error) {
	if err := lockDeliveries(ctx, tx, where, args...); err != nil {
		return nil, 0, err
	}
	n := len(args)
	rows, err := tx.Query(ctx, `
		UPDATE webhook_endpoints SET status = 'disabled', disabled_by = $`+strconv.Itoa(n+1)+`,
			disabled_by_key = nullif($`+strconv.Itoa(n+2)+`, ''), disabled_reason = $`+strconv.Itoa(n+3)+`,
			disabled_at = $`+strconv.Itoa(n+4)+`
		WHERE (`+where+`) AND (status = 'active' OR disabled_by = 'failures')
		RETURNING endpoint_id`, append(args, string(by), byKey, reason, now)...)
	if err != nil {
		return nil, 0, fmt.Errorf("disable webhook endpoints: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, 0, fmt.Errorf("disable webhook endpoints: %w", err)
	}
	if len(ids) == 0 {
		return nil, 0, nil
	}
	tag, err := tx.Exec(ctx, `
		UPDATE webhook_deliveries SET status = 'dropped', locked_until = NULL, dropped_reason = $2
		WHERE endpoint_id = ANY ($1) AND status = 'pending'`,
		ids, dropDisabled+": the endpoint was disabled by the "+strings.ReplaceAll(string(by), "_", " ")+" ("+reason+")")
	if err != nil {
		return nil, 0, fmt.Errorf("drop the deliveries of disabled webhook endpoints: %w", err)
	}
	dropped := int(tag.RowsAffected())
	// Counted before the commit: a rollback overcounts by what it
	// dropped, which the counter's readers tolerate better than a
	// drop never counted.
	s.dropped.WithLabelValues(dropDisabled).Add(float64(dropped))
	return ids, dropped, nil
}

// Delete removes endpoint id with its delivery log; the audit log keeps
// that it existed and who removed it.
func (s *Service) Delete(ctx context.Context, c Caller, id int64) error {
	if err := manager(c); err != nil {
		return err
	}
	now := s.now()
	_, err := idempotency.Do(ctx, s.db, errorCodec, idempotency.Options{Target: target(id), Now: now, Wait: 3 * time.Second},
		func(tx pgx.Tx) (int64, error) {
			if err := lockDeliveries(ctx, tx, `endpoint_id = $1`, id); err != nil {
				return 0, err
			}
			if err := mine(ctx, tx, c, id); err != nil {
				return 0, err
			}
			var partner int64
			var url string
			var types []string
			if err := tx.QueryRow(ctx, `
				DELETE FROM webhook_endpoints WHERE endpoint_id = $1
				RETURNING coalesce(partner_id, 0), url, event_types`, id).Scan(&partner, &url, &types); err != nil {
				return 0, fmt.Errorf("delete webhook endpoint %d: %w", id, err)
			}
			return id, s.audit(ctx, tx, c, "webhook_endpoint.delete", id, map[string]any{
				"partner_id": partner, "url": url, "event_types": types})
		})
	return err
}

// DisableForRevokedKey disables, in tx (the revocation's), the endpoints
// of partner that key created, and those that need confirmation (made
// before the creating key was recorded, decision 0276), dropping their
// pending deliveries. by is who revoked the key. It returns every endpoint
// disabled because key was revoked, by this call or an earlier one, so a
// repeated revocation answers the same.
func (s *Service) DisableForRevokedKey(ctx context.Context, tx pgx.Tx, by audit.Actor, partner int64, key string) ([]int64, error) {
	now := s.now()
	reason := "the API key " + key + " was revoked"
	ids, dropped, err := s.disable(ctx, tx, `partner_id = $1 AND (created_by_key = $2 OR needs_confirmation)`,
		[]any{partner, key}, DisabledByKeyRevocation, key, reason, now)
	if err != nil {
		return nil, fmt.Errorf("disable the webhook endpoints of key %s: %w", key, err)
	}
	for _, id := range ids {
		if err := audit.Record(ctx, tx, audit.Entry{At: now, Actor: by, Action: "webhook_endpoint.disable", Target: target(id),
			Detail: map[string]any{"reason": reason, "key_id": key, "dropped": dropped}}); err != nil {
			return nil, err
		}
	}
	rows, err := tx.Query(ctx, `
		SELECT endpoint_id FROM webhook_endpoints
		WHERE partner_id = $1 AND status = 'disabled' AND disabled_by = 'key_revocation' AND disabled_by_key = $2
		ORDER BY endpoint_id`, partner, key)
	if err != nil {
		return nil, fmt.Errorf("list the webhook endpoints of key %s: %w", key, err)
	}
	all, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("list the webhook endpoints of key %s: %w", key, err)
	}
	return all, nil
}

// DeliveryFilter selects a page of an endpoint's delivery log.
type DeliveryFilter struct {
	EndpointID int64
	Status     DeliveryStatus
	EventID    string
	PageSize   int
	PageToken  string
}

// ListDeliveries pages through an endpoint's deliveries, newest first,
// each with its latest attempts.
func (s *Service) ListDeliveries(ctx context.Context, c Caller, f DeliveryFilter) ([]Delivery, string, error) {
	if f.PageSize <= 0 {
		f.PageSize = 50
	}
	f.PageSize = min(f.PageSize, 200)
	after := int64(1<<63 - 1)
	if cur, ok, err := page.Decode(f.PageToken); err != nil {
		return nil, "", err
	} else if ok {
		if after, err = strconv.ParseInt(cur.ID, 10, 64); err != nil {
			return nil, "", page.ErrBadToken
		}
	}
	var out []Delivery
	err := pg.InTx(ctx, s.db, func(tx pgx.Tx) error {
		if err := mine(ctx, tx, c, f.EndpointID); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `
			SELECT d.delivery_id, d.endpoint_id, d.event_id, d.event_type, d.webhook_id, d.status, d.attempts,
			       d.next_attempt_at, d.occurred_at, d.created_at, d.dropped_reason,
			       coalesce((SELECT json_agg(json_build_object('n', a.attempt, 'at', a.attempted_at, 'code', a.status_code,
			                        'err', a.error, 'ms', a.duration_ms) ORDER BY a.attempt DESC)
			                 FROM (SELECT * FROM webhook_attempts WHERE delivery_id = d.delivery_id
			                       ORDER BY attempt DESC LIMIT 10) a), '[]')
			FROM webhook_deliveries d
			WHERE d.endpoint_id = $1 AND d.delivery_id < $2
			  AND ($3 = '' OR d.status = $3) AND ($4 = '' OR d.event_id = $4)
			ORDER BY d.delivery_id DESC
			LIMIT $5`, f.EndpointID, after, string(f.Status), f.EventID, f.PageSize+1)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, scanDelivery)
		return err
	})
	if err != nil {
		return nil, "", fmt.Errorf("list deliveries of endpoint %d: %w", f.EndpointID, err)
	}
	next := ""
	if len(out) > f.PageSize {
		out = out[:f.PageSize]
		last := out[len(out)-1]
		next = page.Encode(page.Cursor{At: last.CreatedAt, ID: strconv.FormatInt(last.ID, 10)})
	}
	return out, next, nil
}

type attemptJSON struct {
	N    int       `json:"n"`
	At   time.Time `json:"at"`
	Code int       `json:"code"`
	Err  string    `json:"err"`
	Ms   int64     `json:"ms"`
}

func scanDelivery(r pgx.CollectableRow) (Delivery, error) {
	var d Delivery
	var status string
	var attempts []attemptJSON
	err := r.Scan(&d.ID, &d.EndpointID, &d.EventID, &d.EventType, &d.WebhookID, &status, &d.Attempts,
		&d.NextAttemptAt, &d.OccurredAt, &d.CreatedAt, &d.DroppedReason, &attempts)
	d.Status = DeliveryStatus(status)
	for _, a := range attempts {
		d.Recent = append(d.Recent, Attempt{Number: a.N, At: a.At, StatusCode: a.Code, Error: a.Err,
			Duration: time.Duration(a.Ms) * time.Millisecond})
	}
	return d, err
}

// Replay names what ReplayDeliveries sends again: one event, or the events
// that occurred in [Since, Until).
type Replay struct {
	EndpointID   int64
	EventID      string
	Since, Until time.Time
}

// ReplayDeliveries makes an endpoint's matching deliveries pending and due
// now, with a fresh retry window, whatever their state; it returns how
// many. They keep their webhook-id.
func (s *Service) ReplayDeliveries(ctx context.Context, c Caller, r Replay) (int, error) {
	if r.EventID == "" && !r.Until.After(r.Since) {
		return 0, &fault.Error{Reason: fault.WebhookInvalid, Field: "range", Message: "until must be after since"}
	}
	if err := manager(c); err != nil {
		return 0, err
	}
	now := s.now()
	return idempotency.Do(ctx, s.db, errorCodec, idempotency.Options{Target: target(r.EndpointID), Now: now, Wait: 3 * time.Second},
		func(tx pgx.Tx) (int, error) {
			if err := lockDeliveries(ctx, tx, `endpoint_id = $1`, r.EndpointID); err != nil {
				return 0, err
			}
			if err := mine(ctx, tx, c, r.EndpointID); err != nil {
				return 0, err
			}
			tag, err := tx.Exec(ctx, `
				UPDATE webhook_deliveries SET status = 'pending', dropped_reason = '', next_attempt_at = $5,
					give_up_at = $5::timestamptz + $6::float8 * interval '1 second', locked_until = NULL
				WHERE endpoint_id = $1
				  AND CASE WHEN $2 <> '' THEN event_id = $2 ELSE occurred_at >= $3 AND occurred_at < $4 END`,
				r.EndpointID, r.EventID, r.Since, r.Until, now, Retry.Seconds())
			if err != nil {
				return 0, fmt.Errorf("replay deliveries of endpoint %d: %w", r.EndpointID, err)
			}
			n := int(tag.RowsAffected())
			if err := s.audit(ctx, tx, c, "webhook_endpoint.replay", r.EndpointID, map[string]any{
				"event_id": r.EventID, "since": r.Since, "until": r.Until, "replayed": n}); err != nil {
				return 0, err
			}
			return n, nil
		})
}

// Message is an event to deliver to the endpoints subscribed to its type
// that may see it.
type Message struct {
	EventID    string
	Type       string
	OccurredAt time.Time
	// Body is the JSON POSTed, signed as it is.
	Body []byte
	// PartnerID is the partner the event concerns (0: none); Sellers
	// sends it to every partner allowed to sell ShowID (public news, such
	// as a sale's new opening; decision 0285). Admins' endpoints get every
	// event of their types.
	PartnerID int64
	Sellers   bool
	ShowID    int64
}

// Enqueue records a delivery of each message for each endpoint that
// subscribed to its type before it occurred and may see it, and that is
// active or disabled only after failures (whose events are kept for Retry;
// one disabled by a person or a key's revocation gets none, decision
// 0277). A message enqueued again (the outbox delivers at least once) adds
// nothing.
func (s *Service) Enqueue(ctx context.Context, msgs []Message) (int, error) {
	if len(msgs) == 0 {
		return 0, nil
	}
	n := len(msgs)
	ids, types, bodies := make([]string, n), make([]string, n), make([]string, n)
	at, partners, sellers, shows := make([]time.Time, n), make([]int64, n), make([]bool, n), make([]int64, n)
	for i, m := range msgs {
		ids[i], types[i], bodies[i], at[i], partners[i], sellers[i], shows[i] = m.EventID, m.Type, string(m.Body), m.OccurredAt, m.PartnerID, m.Sellers, m.ShowID
	}
	now := s.now()
	// The webhook-id is derived from the event and the endpoint, so it is
	// the same however often the event is enqueued or sent. A show's
	// sellers are those partner_may_sell allows it, the rule holds keep
	// to (partner.Service.MaySell).
	tag, err := s.db.Exec(ctx, `
		INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, webhook_id, body, occurred_at,
			next_attempt_at, give_up_at, created_at)
		SELECT e.endpoint_id, m.event_id, m.type,
		       'msg_' || left(encode(sha256(convert_to(m.event_id || '/' || e.endpoint_id, 'UTF8')), 'hex'), 32),
		       m.body, m.occurred_at, $7, $7::timestamptz + $8::float8 * interval '1 second', $7
		FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::bigint[], $6::bool[], $9::bigint[])
		     AS m(event_id, type, body, occurred_at, partner_id, sellers, show_id)
		JOIN webhook_endpoints e ON m.type = ANY (e.event_types) AND e.created_at <= m.occurred_at
		     AND (e.partner_id IS NULL OR e.partner_id = m.partner_id
		          OR (m.sellers AND partner_may_sell(e.partner_id, m.show_id)))
		     AND (e.status = 'active' OR e.disabled_by = 'failures')
		ORDER BY m.occurred_at, e.endpoint_id
		ON CONFLICT (endpoint_id, event_id) DO NOTHING`, ids, types, bodies, at, partners, sellers, now, Retry.Seconds(), shows)
	if err != nil {
		return 0, fmt.Errorf("enqueue webhook deliveries: %w", err)
	}
	return int(tag.RowsAffected()), nil
}
