package catalog

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/audit"
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
			tag, err := tx.Exec(ctx, `
				INSERT INTO organizations (organization_id, name, name_bn, created_by, created_at) VALUES ($1, $2, $3, $4, $5)
				ON CONFLICT (organization_id) DO NOTHING`, o.ID, o.Name, o.NameBn, o.CreatedBy, o.CreatedAt)
			if err != nil {
				return Organization{}, fmt.Errorf("insert organization %s: %w", id, err)
			}
			if tag.RowsAffected() == 1 {
				if err := audit.Record(ctx, tx, audit.Entry{At: now, Actor: audit.Actor{Kind: audit.ActorAdmin, ID: by},
					Action: "organization.create", Target: "organization:" + id, OrganizationID: id,
					Detail: map[string]any{"after": map[string]any{"name": name, "name_bn": nameBn}}}); err != nil {
					return Organization{}, err
				}
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

// SetMember gives a user a role in an organisation (admins, and its
// managers for anyone but themselves: the API checks); a member who has
// another role gets this one instead. The audit log keeps the role before
// and after, in the same transaction.
func (s *Service) SetMember(ctx context.Context, by audit.Actor, orgID, userID string, role Role) (Member, error) {
	if !role.Valid() {
		return Member{}, &fault.Error{Reason: fault.ShowInvalid, Field: "role", Message: fmt.Sprintf("%q is not a role (manager, gate or counter)", role)}
	}
	now := s.clock.Now().UTC().Truncate(time.Microsecond)
	return idempotency.Do(ctx, s.router.Catalog(), errorCodec, idempotency.Options{Now: now, Wait: 3 * time.Second},
		func(tx pgx.Tx) (Member, error) {
			// Organisations are never deleted, so the one read here stays.
			if _, err := getOrganization(ctx, tx, orgID); err != nil {
				return Member{}, err
			}
			before, err := memberRole(ctx, tx, orgID, userID)
			if err != nil {
				return Member{}, err
			}
			if before.Role == role {
				return before, nil // no change, nothing to record
			}
			m := Member{OrganizationID: orgID, UserID: userID, Role: role, AddedBy: by.ID, AddedAt: now}
			_, err = tx.Exec(ctx, `
				INSERT INTO memberships (organization_id, user_id, role, added_by, added_at) VALUES ($1, $2, $3, $4, $5)
				ON CONFLICT (organization_id, user_id) DO UPDATE
				SET role = excluded.role, added_by = excluded.added_by, added_at = excluded.added_at`,
				m.OrganizationID, m.UserID, string(m.Role), m.AddedBy, m.AddedAt)
			if err != nil {
				return Member{}, fmt.Errorf("add member %s to %s: %w", userID, orgID, err)
			}
			detail := map[string]any{"user_id": userID, "after": map[string]any{"role": string(role)}}
			if before.Role != "" {
				detail["before"] = map[string]any{"role": string(before.Role)}
			}
			if err := audit.Record(ctx, tx, audit.Entry{At: now, Actor: by, Action: "member.set",
				Target: memberTarget(orgID, userID), OrganizationID: orgID, Detail: detail}); err != nil {
				return Member{}, err
			}
			return m, nil
		})
}

// memberTarget names a membership in the audit log.
func memberTarget(orgID, userID string) string { return "member:" + orgID + ":" + userID }

// memberRole is userID's membership of orgID, locked for the change that
// reads it; its Role is "" when they are not a member.
func memberRole(ctx context.Context, tx pgx.Tx, orgID, userID string) (Member, error) {
	m := Member{OrganizationID: orgID, UserID: userID}
	err := tx.QueryRow(ctx, `SELECT role, added_by, added_at FROM memberships WHERE organization_id = $1 AND user_id = $2 FOR UPDATE`,
		orgID, userID).Scan(&m.Role, &m.AddedBy, &m.AddedAt)
	if _, err := pg.Found(err); err != nil {
		return Member{}, fmt.Errorf("membership of %s in %s: %w", userID, orgID, err)
	}
	m.AddedAt = m.AddedAt.UTC()
	return m, nil
}

// RemoveMember takes a user out of an organisation (admins, and its
// managers for anyone but themselves: the API checks). From then on they
// may do nothing for its shows; the audit log keeps the role they had.
func (s *Service) RemoveMember(ctx context.Context, by audit.Actor, orgID, userID string) error {
	now := s.clock.Now().UTC().Truncate(time.Microsecond)
	_, err := idempotency.Do(ctx, s.router.Catalog(), errorCodec, idempotency.Options{Now: now, Wait: 3 * time.Second},
		func(tx pgx.Tx) (struct{}, error) {
			if _, err := getOrganization(ctx, tx, orgID); err != nil {
				return struct{}{}, err
			}
			before, err := memberRole(ctx, tx, orgID, userID)
			if err != nil {
				return struct{}{}, err
			}
			if before.Role == "" {
				return struct{}{}, fmt.Errorf("%s in %s: %w", userID, orgID, ErrNotAMember)
			}
			if _, err := tx.Exec(ctx, `DELETE FROM memberships WHERE organization_id = $1 AND user_id = $2`, orgID, userID); err != nil {
				return struct{}{}, fmt.Errorf("remove member %s from %s: %w", userID, orgID, err)
			}
			return struct{}{}, audit.Record(ctx, tx, audit.Entry{At: now, Actor: by, Action: "member.remove",
				Target: memberTarget(orgID, userID), OrganizationID: orgID,
				Detail: map[string]any{"user_id": userID, "before": map[string]any{"role": string(before.Role)}}})
		})
	return err
}

// Access is an organisation and a user's role in it.
type Access struct {
	Organization
	// Role is "" for an admin who is not a member.
	Role Role
}

// Organizations lists, by id, every organisation (all is an admin's
// question) or those userID is a member of, each with userID's role.
func (s *Service) Organizations(ctx context.Context, userID string, all bool) ([]Access, error) {
	rows, err := s.router.Catalog().Query(ctx, `
		SELECT o.organization_id, o.name, o.name_bn, o.created_by, o.created_at, coalesce(m.role, '')
		FROM organizations o LEFT JOIN memberships m ON m.organization_id = o.organization_id AND m.user_id = $1
		WHERE $2 OR m.user_id IS NOT NULL
		ORDER BY o.organization_id`, userID, all)
	if err != nil {
		return nil, fmt.Errorf("list organizations of %s: %w", userID, err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Access, error) {
		var a Access
		err := r.Scan(&a.ID, &a.Name, &a.NameBn, &a.CreatedBy, &a.CreatedAt, &a.Role)
		a.CreatedAt = a.CreatedAt.UTC()
		return a, err
	})
	if err != nil {
		return nil, fmt.Errorf("list organizations of %s: %w", userID, err)
	}
	return list, nil
}

// Members lists an organisation's members: managers, then counter and
// gate staff, each by user id.
func (s *Service) Members(ctx context.Context, orgID string) ([]Member, error) {
	if _, _, err := s.organizationName(ctx, orgID); err != nil {
		return nil, err
	}
	rows, err := s.router.Catalog().Query(ctx, `
		SELECT organization_id, user_id, role, added_by, added_at FROM memberships WHERE organization_id = $1
		ORDER BY CASE role WHEN 'manager' THEN 0 WHEN 'counter' THEN 1 ELSE 2 END, user_id`, orgID)
	if err != nil {
		return nil, fmt.Errorf("list members of %s: %w", orgID, err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Member, error) {
		var m Member
		err := r.Scan(&m.OrganizationID, &m.UserID, &m.Role, &m.AddedBy, &m.AddedAt)
		m.AddedAt = m.AddedAt.UTC()
		return m, err
	})
	if err != nil {
		return nil, fmt.Errorf("list members of %s: %w", orgID, err)
	}
	return list, nil
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

// AuditEntries reads the audit log, newest first: the catalog's database
// keeps it, so the catalog serves it (decision 0446).
func (s *Service) AuditEntries(ctx context.Context, f audit.Filter) ([]audit.Entry, error) {
	return audit.Read(ctx, s.router.Catalog(), f)
}
