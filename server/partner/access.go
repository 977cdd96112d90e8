package partner

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/idempotency"
	"github.com/seatghor/seatghor/server/pg"
)

// ErrAccessForbidden refuses a change of a partner's access to a caller
// who may not make it: an organisation's managers allow and withdraw their
// organisation and its shows; everything else is the admins'.
var ErrAccessForbidden = fault.Sentinel(fault.PartnerAccessForbidden, "only admins, and managers of an organisation for its own shows, change what a partner may sell")

// AccessChange changes what a partner may sell (decision 0284). Allowing
// what is allowed and withdrawing what is not change nothing, so a change
// repeated is the change once, and changes by several callers never undo
// each other's.
type AccessChange struct {
	PartnerID             int64
	AllowOrganizations    []string
	AllowShows            []int64
	WithdrawOrganizations []string
	WithdrawShows         []int64
	// SellsEveryShow and ShowHoldCap replace the partner's when set
	// (admins only); a ShowHoldCap of 0 is the platform's default.
	SellsEveryShow *bool
	ShowHoldCap    *int
}

// Caller is who changes a partner's access.
type Caller struct {
	UserID string
	Admin  bool
}

// UpdateAccess applies a change of what a partner may sell and answers the
// partner as it is after. Admins change anything; a manager of an
// organisation allows and withdraws that organisation and its shows only,
// and is answered only what concerns them (seen). The organisations and
// shows allowed must exist.
func (s *Service) UpdateAccess(ctx context.Context, c Caller, ch AccessChange) (Partner, error) {
	if ch.ShowHoldCap != nil && *ch.ShowHoldCap < 0 {
		return Partner{}, &fault.Error{Reason: fault.PartnerInvalid, Field: "show_hold_cap", Message: "must not be negative"}
	}
	now := s.now()
	return idempotency.Do(ctx, s.router.Catalog(), errorCodec,
		idempotency.Options{Now: now, Wait: 3 * time.Second, Target: partnerTarget(ch.PartnerID)},
		func(tx pgx.Tx) (Partner, error) {
			if _, err := getPartner(ctx, tx, ch.PartnerID); err != nil {
				return Partner{}, err
			}
			if err := s.mayChange(ctx, tx, c, ch); err != nil {
				return Partner{}, err
			}
			if err := checkAllowed(ctx, tx, ch.AllowOrganizations, ch.AllowShows); err != nil {
				return Partner{}, err
			}
			// One statement: concurrent changes each apply whole, in turn.
			if _, err := tx.Exec(ctx, `
				UPDATE partners SET
					allowed_organization_ids = ARRAY(
						SELECT DISTINCT o FROM unnest(allowed_organization_ids || $2::text[]) o
						WHERE o <> ALL ($4::text[]) ORDER BY o),
					allowed_show_ids = ARRAY(
						SELECT DISTINCT v FROM unnest(allowed_show_ids || $3::bigint[]) v
						WHERE v <> ALL ($5::bigint[]) ORDER BY v),
					sells_every_show = coalesce($6, sells_every_show),
					show_hold_cap = CASE WHEN $7::int IS NULL THEN show_hold_cap ELSE nullif($7, 0) END
				WHERE partner_id = $1`,
				ch.PartnerID, nonNil(ch.AllowOrganizations), nonNil(ch.AllowShows),
				nonNil(ch.WithdrawOrganizations), nonNil(ch.WithdrawShows), ch.SellsEveryShow, ch.ShowHoldCap); err != nil {
				return Partner{}, fmt.Errorf("update access of partner %d: %w", ch.PartnerID, err)
			}
			p, err := getPartner(ctx, tx, ch.PartnerID)
			if err != nil || c.Admin {
				return p, err
			}
			return seen(p, ch), nil
		})
}

// seen is what a manager is told of a partner after changing its access:
// who it is, whether an admin lets it sell every show (which no
// organisation's withdrawal overrides), and which of the organisations and
// shows the change named it may sell; not its terms, contact or other
// organisations' grants, which are the admins' and the partner's.
func seen(p Partner, ch AccessChange) Partner {
	orgs := slices.Concat(ch.AllowOrganizations, ch.WithdrawOrganizations)
	shows := slices.Concat(ch.AllowShows, ch.WithdrawShows)
	out := Partner{ID: p.ID, Name: p.Name, SellsEveryShow: p.SellsEveryShow, CreatedAt: p.CreatedAt,
		AllowedOrganizations: []string{}, AllowedShows: []int64{}}
	for _, o := range p.AllowedOrganizations {
		if slices.Contains(orgs, o) {
			out.AllowedOrganizations = append(out.AllowedOrganizations, o)
		}
	}
	for _, v := range p.AllowedShows {
		if slices.Contains(shows, v) {
			out.AllowedShows = append(out.AllowedShows, v)
		}
	}
	return out
}

func nonNil[T any](v []T) []T {
	if v == nil {
		return []T{}
	}
	return v
}

// mayChange refuses a change the caller may not make: a non-admin must
// manage every organisation it names and the organisation of every show.
func (s *Service) mayChange(ctx context.Context, tx pgx.Tx, c Caller, ch AccessChange) error {
	if c.Admin {
		return nil
	}
	if ch.SellsEveryShow != nil || ch.ShowHoldCap != nil {
		return fmt.Errorf("sells_every_show and show_hold_cap: %w", ErrAccessForbidden)
	}
	orgs := slices.Concat(ch.AllowOrganizations, ch.WithdrawOrganizations)
	shows := slices.Concat(ch.AllowShows, ch.WithdrawShows)
	if len(orgs) == 0 && len(shows) == 0 {
		return fmt.Errorf("a change naming no organisation or show: %w", ErrAccessForbidden)
	}
	// A show of the platform's own (no organisation) is the admins'.
	showOrgs, err := catalog.ShowOrganizations(ctx, tx, shows)
	if err != nil {
		return err
	}
	named := map[string]string{}
	for _, o := range orgs {
		named[o] = "organization " + o
	}
	for _, so := range showOrgs {
		named[so.OrganizationID] = "show " + strconv.FormatInt(so.ShowID, 10)
	}
	for org, what := range named {
		ok, err := s.members.HasRole(ctx, org, c.UserID, catalog.RoleManager)
		if err != nil {
			return fmt.Errorf("may %s change access to %s: %w", c.UserID, what, err)
		}
		if !ok {
			return fmt.Errorf("%s: %w", what, ErrAccessForbidden)
		}
	}
	return nil
}

// ShowHoldCap is how many places of one show a partner may hold or have
// bought at once: its own cap, or the platform's default (decision 0286).
func (s *Service) ShowHoldCap(ctx context.Context, partnerID int64) (int, error) {
	var limit int
	err := s.router.Catalog().QueryRow(ctx, `
		SELECT coalesce(show_hold_cap, $2) FROM partners WHERE partner_id = $1`, partnerID, s.defaultCap).Scan(&limit)
	found, err := pg.Found(err)
	if err != nil {
		return 0, fmt.Errorf("per-show cap of partner %d: %w", partnerID, err)
	}
	if !found {
		return 0, fmt.Errorf("partner %d: %w", partnerID, ErrNotFound)
	}
	return limit, nil
}
