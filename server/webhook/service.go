package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/idempotency"
	"github.com/seatghor/seatghor/server/page"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/seal"
)

// Retry is how long a delivery is retried before it is given up (the
// Standard Webhooks practice; issue 12: up to three days).
const Retry = 72 * time.Hour

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
}

// NewService returns the webhook service over the catalog database, whose
// endpoints' signing secrets box seals. allowLoopback admits
// http://127.0.0.1… and http://localhost… endpoints (dev and tests only:
// in production they would reach the server's own host).
func NewService(db *pg.Pool, c clock.Clock, box *seal.Box, allowLoopback bool) *Service {
	return &Service{db: db, clock: c, box: box, allowLoopback: allowLoopback}
}

var errorCodec = idempotency.ErrorsOf[InvalidError]("webhook")

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

// sealedSecret is a fresh signing secret, sealed.
func (s *Service) sealedSecret() (string, error) {
	sealed, err := s.box.Seal(newSecret(), secretPurpose)
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
	if c.Secret, err = openSecret(s.box, c.Sealed); err != nil {
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

// CreateEndpoint subscribes a URL to event types and returns its secret.
func (s *Service) CreateEndpoint(ctx context.Context, c Caller, in NewEndpoint) (Created, error) {
	partner, err := owner(c, in.PartnerID)
	if err != nil {
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
			secret, err := s.sealedSecret()
			if err != nil {
				return Created{}, err
			}
			row := tx.QueryRow(ctx, `
				INSERT INTO webhook_endpoints (partner_id, url, event_types, description, secret, created_by, created_at)
				VALUES (nullif($1, 0), $2, $3, $4, $5, $6, $7)
				RETURNING `+endpointColumns, partner, in.URL, types, in.Description, secret, c.UserID, now)
			e, err := scanEndpoint(row)
			if err != nil {
				return Created{}, fmt.Errorf("create webhook endpoint: %w", err)
			}
			return Created{Endpoint: e, Sealed: secret}, nil
		}))
}

// checkURL takes https URLs, and plain http to a loopback host when the
// service allows it.
func (s *Service) checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return &InvalidError{Field: "url", Message: "want an absolute https URL"}
	}
	if u.User != nil {
		return &InvalidError{Field: "url", Message: "credentials in the URL are not taken; verify the signature instead"}
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if s.allowLoopback && isLoopback(u.Hostname()) {
			return nil
		}
	}
	return &InvalidError{Field: "url", Message: "want an https URL"}
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

const endpointColumns = `endpoint_id, coalesce(partner_id, 0), url, event_types, description, status,
	disabled_reason, disabled_at, consecutive_failures, failing_since, created_at, previous_secret_expires_at`

func scanEndpoint(r pgx.Row) (Endpoint, error) {
	var e Endpoint
	var disabledAt, failingSince, prevExpires *time.Time
	var status string
	err := r.Scan(&e.ID, &e.PartnerID, &e.URL, &e.EventTypes, &e.Description, &status, &e.DisabledReason,
		&disabledAt, &e.ConsecutiveFailures, &failingSince, &e.CreatedAt, &prevExpires)
	e.Status = Status(status)
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
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && !c.Admin && partner != c.PartnerID) {
		return fmt.Errorf("endpoint %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("read webhook endpoint %d: %w", id, err)
	}
	return nil
}

func target(id int64) string { return "webhook-endpoint:" + strconv.FormatInt(id, 10) }

// RotateSecret gives an endpoint a new secret; the current one keeps
// signing too for overlap (0: not at all).
func (s *Service) RotateSecret(ctx context.Context, c Caller, id int64, overlap time.Duration) (Created, error) {
	if overlap < 0 || overlap > MaxOverlap {
		return Created{}, &InvalidError{Field: "overlap", Message: fmt.Sprintf("want 0 to %s", MaxOverlap)}
	}
	now := s.now()
	return s.shown(idempotency.Do(ctx, s.db, errorCodec, idempotency.Options{Target: target(id), Now: now, Wait: 3 * time.Second},
		func(tx pgx.Tx) (Created, error) {
			if err := mine(ctx, tx, c, id); err != nil {
				return Created{}, err
			}
			secret, err := s.sealedSecret()
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
			return Created{Endpoint: e, Sealed: secret}, nil
		}))
}

// Enable turns an endpoint back on. Its pending deliveries are due now,
// with a fresh retry window.
func (s *Service) Enable(ctx context.Context, c Caller, id int64) (Endpoint, error) {
	now := s.now()
	return idempotency.Do(ctx, s.db, errorCodec, idempotency.Options{Target: target(id), Now: now, Wait: 3 * time.Second},
		func(tx pgx.Tx) (Endpoint, error) {
			if err := mine(ctx, tx, c, id); err != nil {
				return Endpoint{}, err
			}
			if _, err := tx.Exec(ctx, `
				UPDATE webhook_deliveries SET next_attempt_at = $2, give_up_at = $2::timestamptz + $3::float8 * interval '1 second'
				WHERE endpoint_id = $1 AND status = 'pending'`, id, now, Retry.Seconds()); err != nil {
				return Endpoint{}, fmt.Errorf("enable endpoint %d: %w", id, err)
			}
			e, err := scanEndpoint(tx.QueryRow(ctx, `
				UPDATE webhook_endpoints SET status = 'active', disabled_reason = '', disabled_at = NULL,
					consecutive_failures = 0, failing_since = NULL
				WHERE endpoint_id = $1
				RETURNING `+endpointColumns, id))
			if err != nil {
				return Endpoint{}, fmt.Errorf("enable endpoint %d: %w", id, err)
			}
			return e, nil
		})
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
			       d.next_attempt_at, d.occurred_at, d.created_at,
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
		&d.NextAttemptAt, &d.OccurredAt, &d.CreatedAt, &attempts)
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
		return 0, &InvalidError{Field: "range", Message: "until must be after since"}
	}
	now := s.now()
	return idempotency.Do(ctx, s.db, errorCodec, idempotency.Options{Target: target(r.EndpointID), Now: now, Wait: 3 * time.Second},
		func(tx pgx.Tx) (int, error) {
			if err := mine(ctx, tx, c, r.EndpointID); err != nil {
				return 0, err
			}
			tag, err := tx.Exec(ctx, `
				UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = $5,
					give_up_at = $5::timestamptz + $6::float8 * interval '1 second'
				WHERE endpoint_id = $1
				  AND CASE WHEN $2 <> '' THEN event_id = $2 ELSE occurred_at >= $3 AND occurred_at < $4 END`,
				r.EndpointID, r.EventID, r.Since, r.Until, now, Retry.Seconds())
			if err != nil {
				return 0, fmt.Errorf("replay deliveries of endpoint %d: %w", r.EndpointID, err)
			}
			return int(tag.RowsAffected()), nil
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
// subscribed to its type before it occurred and may see it. A message
// enqueued again (the outbox delivers at least once) adds nothing.
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
		ORDER BY m.occurred_at, e.endpoint_id
		ON CONFLICT (endpoint_id, event_id) DO NOTHING`, ids, types, bodies, at, partners, sellers, now, Retry.Seconds(), shows)
	if err != nil {
		return 0, fmt.Errorf("enqueue webhook deliveries: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// describe shortens an error for the delivery log.
func describe(err error) string {
	s := err.Error()
	if len(s) > 300 {
		s = s[:300]
	}
	return strings.ToValidUTF8(s, "?")
}
