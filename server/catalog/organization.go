package catalog

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/idempotency"
	"github.com/seatghor/seatghor/server/pg"
)

// Role is what a member may do for the shows of its organisation
// (decision 0075).
type Role string

// The roles.
const (
	// RoleManager creates the organisation's shows, runs their sales, reads
	// their holds and orders, and checks their tickets in.
	RoleManager Role = "manager"
	// RoleGate (gate staff) only checks the organisation's tickets in.
	RoleGate Role = "gate"
	// RoleCounter (counter staff) sells the organisation's seats for cash
	// in their own shifts at its counters (decision 0443), and checks its
	// tickets in.
	RoleCounter Role = "counter"
)

// Valid tells whether r is one of the roles.
func (r Role) Valid() bool { return r == RoleManager || r == RoleGate || r == RoleCounter }

// ErrOrganizationNotFound means there is no such organisation.
var ErrOrganizationNotFound = fault.Sentinel(fault.OrganizationNotFound, "organization not found")

// ErrOrganizationExists refuses a second organisation with an id in use.
var ErrOrganizationExists = fault.Sentinel(fault.OrganizationExists, "an organization with this id exists")

// ErrNotAMember answers the removal of someone who is not a member.
var ErrNotAMember = fault.Sentinel(fault.MemberNotFound, "not a member of the organization")

// Organization is an operator: a bus company, a promoter, a venue.
type Organization struct {
	ID   string
	Name string
	// NameBn is the name in Bengali script; empty: the Bengali UI shows
	// Name (decision 0385).
	NameBn    string
	CreatedBy string
	CreatedAt time.Time
}

// Member is a user's role in an organisation.
type Member struct {
	OrganizationID string
	UserID         string
	Role           Role
	AddedBy        string
	AddedAt        time.Time
}

// CreateOrganization creates an organisation (admins only: the API checks).
// Its id is chosen by the admin, so a retry or a second admin cannot make a
// twin: a second create with the same id and names answers the first (one
// that gives no Bengali name answers it too), with another name in either
// script ErrOrganizationExists.
func (s *Service) CreateOrganization(ctx context.Context, by, id, name, nameBn string) (Organization, error) {
	now := s.clock.Now().UTC().Truncate(time.Microsecond)
	return idempotency.Do(ctx, s.router.Catalog(), errorCodec, idempotency.Options{Now: now, Wait: 3 * time.Second},
		func(tx pgx.Tx) (Organization, error) {
			o := Organization{ID: id, Name: name, NameBn: nameBn, CreatedBy: by, CreatedAt: now}
			if _, err := tx.Exec(ctx, `
				INSERT INTO organizations (organization_id, name, name_bn, created_by, created_at) VALUES ($1, $2, $3, $4, $5)
				ON CONFLICT (organization_id) DO NOTHING`, o.ID, o.Name, o.NameBn, o.CreatedBy, o.CreatedAt); err != nil {
				return Organization{}, fmt.Errorf("insert organization %s: %w", id, err)
			}
			// An organisation made before its Bengali name was given gets
			// it from the same create (a name added, none changed).
			if _, err := tx.Exec(ctx, `
				UPDATE organizations SET name_bn = $3 WHERE organization_id = $1 AND name = $2 AND name_bn = ''`,
				id, name, nameBn); err != nil {
				return Organization{}, fmt.Errorf("name organization %s in Bengali: %w", id, err)
			}
			got, err := getOrganization(ctx, tx, id)
			if err != nil {
				return Organization{}, err
			}
			if got.Name != name || (nameBn != "" && got.NameBn != nameBn) {
				return Organization{}, fmt.Errorf("organization %s: %w", id, ErrOrganizationExists)
			}
			return got, nil
		})
}

func getOrganization(ctx context.Context, q pgx.Tx, id string) (Organization, error) {
	var o Organization
	err := q.QueryRow(ctx, `SELECT organization_id, name, name_bn, created_by, created_at FROM organizations WHERE organization_id = $1`, id).
		Scan(&o.ID, &o.Name, &o.NameBn, &o.CreatedBy, &o.CreatedAt)
	found, err := pg.Found(err)
	if err != nil {
		return o, fmt.Errorf("read organization %s: %w", id, err)
	}
	if !found {
		return o, fmt.Errorf("organization %s: %w", id, ErrOrganizationNotFound)
	}
	o.CreatedAt = o.CreatedAt.UTC()
	return o, nil
}

// SetMember gives a user a role in an organisation (admins only: the API
// checks); a member who has another role gets this one instead.
func (s *Service) SetMember(ctx context.Context, by, orgID, userID string, role Role) (Member, error) {
	if !role.Valid() {
		return Member{}, &fault.Error{Reason: fault.ShowInvalid, Field: "role", Message: fmt.Sprintf("%q is not a role (manager or gate)", role)}
	}
	now := s.clock.Now().UTC().Truncate(time.Microsecond)
	return idempotency.Do(ctx, s.router.Catalog(), errorCodec, idempotency.Options{Now: now, Wait: 3 * time.Second},
		func(tx pgx.Tx) (Member, error) {
			// Organisations are never deleted, so the one read here stays.
			if _, err := getOrganization(ctx, tx, orgID); err != nil {
				return Member{}, err
			}
			m := Member{OrganizationID: orgID, UserID: userID, Role: role, AddedBy: by, AddedAt: now}
			_, err := tx.Exec(ctx, `
				INSERT INTO memberships (organization_id, user_id, role, added_by, added_at) VALUES ($1, $2, $3, $4, $5)
				ON CONFLICT (organization_id, user_id) DO UPDATE
				SET role = excluded.role, added_by = excluded.added_by, added_at = excluded.added_at`,
				m.OrganizationID, m.UserID, string(m.Role), m.AddedBy, m.AddedAt)
			if err != nil {
				return Member{}, fmt.Errorf("add member %s to %s: %w", userID, orgID, err)
			}
			return m, nil
		})
}

// RemoveMember takes a user out of an organisation (admins only: the API
// checks). From then on they may do nothing for its shows.
func (s *Service) RemoveMember(ctx context.Context, orgID, userID string) error {
	now := s.clock.Now().UTC().Truncate(time.Microsecond)
	_, err := idempotency.Do(ctx, s.router.Catalog(), errorCodec, idempotency.Options{Now: now, Wait: 3 * time.Second},
		func(tx pgx.Tx) (struct{}, error) {
			if _, err := getOrganization(ctx, tx, orgID); err != nil {
				return struct{}{}, err
			}
			tag, err := tx.Exec(ctx, `DELETE FROM memberships WHERE organization_id = $1 AND user_id = $2`, orgID, userID)
			if err != nil {
				return struct{}{}, fmt.Errorf("remove member %s from %s: %w", userID, orgID, err)
			}
			if tag.RowsAffected() == 0 {
				return struct{}{}, fmt.Errorf("%s in %s: %w", userID, orgID, ErrNotAMember)
			}
			return struct{}{}, nil
		})
	return err
}

// HasRole tells whether a user is a member of an organisation with one of
// roles. It is the one question every permission on an organisation's show
// asks (check-in, sales, the operators' reads, creating shows); an empty
// orgID (a show of the platform's own) has no members.
func (s *Service) HasRole(ctx context.Context, orgID, userID string, roles ...Role) (bool, error) {
	if orgID == "" || userID == "" {
		return false, nil
	}
	var role string
	err := s.router.Catalog().QueryRow(ctx,
		`SELECT role FROM memberships WHERE organization_id = $1 AND user_id = $2`, orgID, userID).Scan(&role)
	found, err := pg.Found(err)
	if err != nil {
		return false, fmt.Errorf("membership of %s in %s: %w", userID, orgID, err)
	}
	if !found {
		return false, nil
	}
	return slices.Contains(roles, Role(role)), nil
}

// organizationName is an organisation's name, in English and in Bengali
// script.
func (s *Service) organizationName(ctx context.Context, id string) (name, nameBn string, err error) {
	err = s.router.Catalog().QueryRow(ctx, `SELECT name, name_bn FROM organizations WHERE organization_id = $1`, id).Scan(&name, &nameBn)
	found, err := pg.Found(err)
	if err != nil {
		return "", "", fmt.Errorf("read organization %s: %w", id, err)
	}
	if !found {
		return "", "", fmt.Errorf("organization %s: %w", id, ErrOrganizationNotFound)
	}
	return name, nameBn, nil
}
