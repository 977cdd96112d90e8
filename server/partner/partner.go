// Package partner keeps Seatghor's partner resellers and their API keys in
// the catalog database, turns an API key into the caller (a Verifier for
// auth.Credentials), keeps partners to the shows they were allowed to sell
// (decision 0284) and tells their per-show hold caps (decision 0286), and
// sums a partner's statement from the orders and refunds the shards
// recorded with its partner id. Decision 0180 says how keys are made,
// stored, scoped and revoked.
package partner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/idempotency"
	"github.com/seatghor/seatghor/server/payment"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/shard"
)

// Errors lists the sentinel errors of partner that reach the API; it
// answers each by its reason (docs/errors.md).
var Errors = []error{ErrNotFound, ErrKeyNotFound, ErrSecretShown, ErrShowNotAllowed, ErrAccessForbidden}

// ErrNotFound means no partner has the id.
var ErrNotFound = fault.Sentinel(fault.PartnerNotFound, "partner not found")

// ErrKeyNotFound means no API key has the id.
var ErrKeyNotFound = fault.Sentinel(fault.APIKeyNotFound, "API key not found")

// ErrSecretShown answers a retry of CreateApiKey: the key was made by the
// first request with the Idempotency-Key, and its secret, stored nowhere,
// was shown only then.
var ErrSecretShown = fault.Sentinel(fault.APIKeySecretShown, "the API key's secret was shown only in the first answer; revoke the key if the secret was lost, and create another")

// errorCodec records a refused partner request with its idempotency key
// (decision 0318); "" reads partner's InvalidError recorded before.
var errorCodec = idempotency.Faults("partner", []fault.Reason{fault.PartnerInvalid},
	map[string]fault.Reason{"": fault.PartnerInvalid})

// Partner is a reseller.
type Partner struct {
	ID            int64
	Name          string
	CommissionBps int32
	Contact       Contact
	// SellsEveryShow lets it sell every show; otherwise it sells the shows
	// of AllowedOrganizations and AllowedShows, and nothing while both are
	// empty (decision 0284).
	SellsEveryShow       bool
	AllowedOrganizations []string
	AllowedShows         []int64
	// ShowHoldCap is how many places of one show it may hold or have
	// bought at once (decision 0286); 0: the platform's default.
	ShowHoldCap int
	CreatedBy   string
	CreatedAt   time.Time
}

// Contact is who to reach at a partner.
type Contact struct {
	Name, Email, Phone string
}

// Members answers whether a user has one of roles in an organisation
// (catalog.Service.HasRole): an organisation's managers allow partners its
// shows.
type Members interface {
	HasRole(ctx context.Context, orgID, userID string, roles ...catalog.Role) (bool, error)
}

// Sales sums a partner's sales and refunds per currency over a period, by
// currency, for its statement (payment.Service.PartnerTotals): payment
// posts the journals a statement counts and owns the refunds.
type Sales interface {
	PartnerTotals(ctx context.Context, partnerID int64, from, to time.Time) ([]payment.PartnerTotal, error)
}

// DefaultShowHoldCap is the platform's per-show cap of a partner without
// its own (decision 0286): a partner sells for many buyers, so its cap is
// far above a buyer's, but one partner cannot take a whole show unasked.
const DefaultShowHoldCap = 100

// Option tunes the service.
type Option func(*Service)

// WithDefaultShowHoldCap sets the per-show cap of partners without their
// own (default DefaultShowHoldCap).
func WithDefaultShowHoldCap(n int) Option {
	return func(s *Service) {
		if n > 0 {
			s.defaultCap = n
		}
	}
}

// Service manages partners and keys and authenticates keys.
type Service struct {
	router     *shard.Router
	members    Members
	sales      Sales
	clock      clock.Clock
	mode       Mode
	log        *slog.Logger
	defaultCap int
	// touched is when this process last claimed each key's last-use write
	// (claimTouch); it holds one time per key used.
	touched sync.Map
}

// NewService returns the partner service over the router's databases.
// mode is the keys this process accepts (decision 0180): live where real
// payments are taken, test with the sandbox gateway. members tells who
// manages an organisation's shows (UpdateAccess); sales sums statements.
func NewService(router *shard.Router, members Members, sales Sales, clk clock.Clock, mode Mode, log *slog.Logger, opts ...Option) (*Service, error) {
	if !mode.Valid() {
		return nil, fmt.Errorf("API key mode %q: want live or test", mode)
	}
	s := &Service{router: router, members: members, sales: sales, clock: clk, mode: mode, log: log, defaultCap: DefaultShowHoldCap}
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

// Mode is the keys this process accepts.
func (s *Service) Mode() Mode { return s.mode }

func (s *Service) now() time.Time { return s.clock.Now().UTC().Truncate(time.Microsecond) }

// CreatePartner registers a partner (admins only: the API checks). The
// organisations and shows it may sell must exist; without any, and without
// SellsEveryShow, it sells nothing until UpdateAccess allows it some.
func (s *Service) CreatePartner(ctx context.Context, by string, p Partner) (Partner, error) {
	now := s.now()
	return idempotency.Do(ctx, s.router.Catalog(), errorCodec, idempotency.Options{Now: now, Wait: 3 * time.Second},
		func(tx pgx.Tx) (Partner, error) {
			if err := checkAllowed(ctx, tx, p.AllowedOrganizations, p.AllowedShows); err != nil {
				return Partner{}, err
			}
			if p.ShowHoldCap < 0 {
				return Partner{}, &fault.Error{Reason: fault.PartnerInvalid, Field: "show_hold_cap", Message: "must not be negative"}
			}
			p.CreatedBy, p.CreatedAt = by, now
			if p.AllowedOrganizations == nil {
				p.AllowedOrganizations = []string{}
			}
			if p.AllowedShows == nil {
				p.AllowedShows = []int64{}
			}
			err := tx.QueryRow(ctx, `
				INSERT INTO partners (name, commission_bps, contact_name, contact_email, contact_phone,
				                      allowed_organization_ids, allowed_show_ids, created_by, created_at,
				                      sells_every_show, show_hold_cap)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, nullif($11, 0)) RETURNING partner_id`,
				p.Name, p.CommissionBps, p.Contact.Name, p.Contact.Email, p.Contact.Phone,
				p.AllowedOrganizations, p.AllowedShows, p.CreatedBy, p.CreatedAt,
				p.SellsEveryShow, p.ShowHoldCap).Scan(&p.ID)
			if err != nil {
				return Partner{}, fmt.Errorf("insert partner: %w", err)
			}
			return p, nil
		})
}

// checkAllowed refuses organisations and shows that do not exist.
func checkAllowed(ctx context.Context, tx pgx.Tx, orgs []string, shows []int64) error {
	missingOrg, missingShow, err := catalog.FirstMissing(ctx, tx, orgs, shows)
	switch {
	case err != nil:
		return fmt.Errorf("check the partner's organisations and shows: %w", err)
	case missingOrg != nil:
		return &fault.Error{Reason: fault.PartnerInvalid, Field: "allowed_organization_ids", Message: fmt.Sprintf("no organisation %q", *missingOrg)}
	case missingShow != nil:
		return &fault.Error{Reason: fault.PartnerInvalid, Field: "allowed_show_ids", Message: fmt.Sprintf("no show %d", *missingShow)}
	}
	return nil
}

// PartnerExists tells whether a partner is registered: allocations name
// one (booking.Partners).
func (s *Service) PartnerExists(ctx context.Context, id int64) (bool, error) {
	_, err := s.GetPartner(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// GetPartner reads a partner.
func (s *Service) GetPartner(ctx context.Context, id int64) (Partner, error) {
	return getPartner(ctx, s.router.Catalog(), id)
}

// querier is a pool or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// partnerColumns are what scanPartner reads.
const partnerColumns = `partner_id, name, commission_bps, contact_name, contact_email, contact_phone,
	sells_every_show, allowed_organization_ids, allowed_show_ids, coalesce(show_hold_cap, 0), created_by, created_at`

func scanPartner(row pgx.Row) (Partner, error) {
	var p Partner
	err := row.Scan(&p.ID, &p.Name, &p.CommissionBps, &p.Contact.Name, &p.Contact.Email, &p.Contact.Phone,
		&p.SellsEveryShow, &p.AllowedOrganizations, &p.AllowedShows, &p.ShowHoldCap, &p.CreatedBy, &p.CreatedAt)
	p.CreatedAt = p.CreatedAt.UTC()
	return p, err
}

// ListPartners pages through the partners by id, after the id afterID
// (0: from the first), at most limit (1 to 500) of them. Admins only (the
// API checks the role): the console's list of partners.
func (s *Service) ListPartners(ctx context.Context, afterID int64, limit int) ([]Partner, error) {
	rows, err := s.router.Catalog().Query(ctx, `SELECT `+partnerColumns+` FROM partners WHERE partner_id > $1
		ORDER BY partner_id LIMIT $2`, afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("list partners: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Partner, error) { return scanPartner(r) })
	if err != nil {
		return nil, fmt.Errorf("list partners: %w", err)
	}
	return out, nil
}

func getPartner(ctx context.Context, q querier, id int64) (Partner, error) {
	p, err := scanPartner(q.QueryRow(ctx, `SELECT `+partnerColumns+` FROM partners WHERE partner_id = $1`, id))
	found, err := pg.Found(err)
	if err != nil {
		return p, fmt.Errorf("read partner %d: %w", id, err)
	}
	if !found {
		return p, fmt.Errorf("partner %d: %w", id, ErrNotFound)
	}
	return p, nil
}
