package catalog

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/pg"
)

// The reads other packages make of the catalog's tables (decision 0314):
// the catalog owns shows, organizations and the waiting rooms (docs/
// table-owners.txt), so their SQL is here. Each takes q, the caller's
// transaction or pool, so a caller that reads inside its own transaction
// keeps one connection and one snapshot.

// Querier runs queries: a pool, or a caller's transaction.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Terms are a show's terms as its shard keeps them next to its orders:
// what booking, payment and the gate read in their transactions there.
type Terms struct {
	OrganizationID     string // empty: the platform's own show (decision 0075)
	StartsAt           time.Time
	TimeZone           string
	CommissionBps      int64
	CancellationFeeBps int64
	PaymentExtension   time.Duration
	// Cancelled says its operator cancelled the show (decision 0440).
	Cancelled bool
}

// ReadTerms reads a show's terms from its shard: q is the shard's pool or a
// transaction on it. A shard without the show is ErrNotFound.
func ReadTerms(ctx context.Context, q Querier, showID int64) (Terms, error) {
	var (
		t           Terms
		extensionMs int64
	)
	err := q.QueryRow(ctx, `
		SELECT coalesce(organization_id, ''), starts_at, time_zone, commission_bps, cancellation_fee_bps,
		       payment_extension_ms, cancelled_at IS NOT NULL
		FROM shows WHERE show_id = $1`, showID).
		Scan(&t.OrganizationID, &t.StartsAt, &t.TimeZone, &t.CommissionBps, &t.CancellationFeeBps, &extensionMs,
			&t.Cancelled)
	found, err := pg.Found(err)
	if err != nil {
		return Terms{}, fmt.Errorf("read terms of show %d: %w", showID, err)
	}
	if !found {
		return Terms{}, fmt.Errorf("terms of show %d: %w", showID, ErrNotFound)
	}
	t.PaymentExtension = time.Duration(extensionMs) * time.Millisecond
	return t, nil
}

// ShowExists tells whether the catalog (q) has the show.
func ShowExists(ctx context.Context, q Querier, showID int64) (bool, error) {
	var ok bool
	if err := q.QueryRow(ctx, `SELECT EXISTS (SELECT FROM shows WHERE show_id = $1)`, showID).Scan(&ok); err != nil {
		return false, fmt.Errorf("does show %d exist: %w", showID, err)
	}
	return ok, nil
}

// ShowOrganization is the organisation of a show.
type ShowOrganization struct {
	ShowID int64
	// OrganizationID is empty for a show of the platform's own, and for a
	// show that does not exist.
	OrganizationID string
}

// ShowOrganizations returns the organisation of each of showIDs, in their
// order, from the catalog (q).
func ShowOrganizations(ctx context.Context, q Querier, showIDs []int64) ([]ShowOrganization, error) {
	rows, err := q.Query(ctx, `
		SELECT s, coalesce((SELECT organization_id FROM shows WHERE show_id = s), '')
		FROM unnest($1::bigint[]) WITH ORDINALITY AS u(s, n) ORDER BY n`, showIDs)
	if err != nil {
		return nil, fmt.Errorf("organisations of shows: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[ShowOrganization])
	if err != nil {
		return nil, fmt.Errorf("organisations of shows: %w", err)
	}
	return out, nil
}

// FirstMissing returns one of orgs that is no organisation and one of shows
// that is no show of the catalog (q); nil when all exist.
func FirstMissing(ctx context.Context, q Querier, orgs []string, shows []int64) (org *string, show *int64, err error) {
	err = q.QueryRow(ctx, `
		SELECT (SELECT o FROM unnest($1::text[]) o
		         WHERE NOT EXISTS (SELECT FROM organizations WHERE organization_id = o) LIMIT 1),
		       (SELECT s FROM unnest($2::bigint[]) s
		         WHERE NOT EXISTS (SELECT FROM shows WHERE show_id = s) LIMIT 1)`,
		orgs, shows).Scan(&org, &show)
	if err != nil {
		return nil, nil, fmt.Errorf("check organisations and shows exist: %w", err)
	}
	return org, show, nil
}

// ManagedOrganizations returns the ids of the organisations user manages,
// in order, from the catalog (q): what a manager's lists of routes and
// timetables show (server/network).
func ManagedOrganizations(ctx context.Context, q Querier, user string) ([]string, error) {
	rows, err := q.Query(ctx, `
		SELECT organization_id FROM memberships WHERE user_id = $1 AND role = $2 ORDER BY organization_id`,
		user, string(RoleManager))
	if err != nil {
		return nil, fmt.Errorf("organisations %s manages: %w", user, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("organisations %s manages: %w", user, err)
	}
	return out, nil
}
