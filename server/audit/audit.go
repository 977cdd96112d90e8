// Package audit is the platform's audit log: who changed what, and when,
// kept in the catalog database's audit_log table (decision 0276). A change
// is recorded by Record in the transaction that makes it, so the log holds
// exactly the changes that committed: every staff write of the catalog
// (organisations, members, shows, routes, timetables, cancellations,
// delays) and every change of a partner's webhook endpoint or API key. A
// staff write on a shard (refunds by hand, cash at a counter) is recorded
// by RecordOnShard in the shard's own log, in its transaction, and
// gathered into the catalog's through the outbox (decision 0452).
// The console reads it through CatalogService.ListAuditEntries, an
// organisation's managers only its entries (decision 0446). Rows are never
// changed or removed: the application role may only add and read them.
package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// ActorKind is what sort of caller made a change.
type ActorKind string

// The actor kinds.
const (
	// ActorUser is a signed-in account (a partner's, say); ID is its
	// user id.
	ActorUser ActorKind = "user"
	// ActorAdmin is a signed-in admin; ID is its user id.
	ActorAdmin ActorKind = "admin"
	// ActorAPIKey is a partner's API key; ID is the key's id.
	ActorAPIKey ActorKind = "api_key"
	// ActorSystem is the platform itself (a worker); ID names the part.
	ActorSystem ActorKind = "system"
)

// Actor is who made a change.
type Actor struct {
	Kind ActorKind
	ID   string
}

func (a Actor) String() string { return string(a.Kind) + ":" + a.ID }

// Entry is one change.
type Entry struct {
	ID    int64
	At    time.Time
	Actor Actor
	// Action names the change, e.g. "webhook_endpoint.disable".
	Action string
	// Target names what changed, e.g. "webhook_endpoint:42".
	Target string
	// OrganizationID is the organisation whose thing changed; "" for the
	// platform's own.
	OrganizationID string
	// Detail is what else the change needs said, as a JSON object: the
	// reason, and "before" and "after" where something was there before.
	Detail map[string]any
	// SourceID is the shard id of an entry the audit projector gathers
	// from a shard's log (RecordOnShard); "" for the catalog's own.
	SourceID string
}

// Execer runs a statement: the caller's transaction.
type Execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// Querier runs a query.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// Record adds e to the log through tx, the transaction of the change it
// records; ID is ignored.
func Record(ctx context.Context, tx Execer, e Entry) error {
	raw, err := e.detail()
	if err != nil {
		return err
	}
	if !recorded() {
		return nil
	}
	// A gathered entry is added once, however often its event comes.
	if _, err := tx.Exec(ctx, `
		INSERT INTO audit_log (at, actor_kind, actor_id, action, target, organization_id, detail, source_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, nullif($8, ''))
		ON CONFLICT (source_id) WHERE source_id IS NOT NULL DO NOTHING`,
		e.At.UTC(), string(e.Actor.Kind), e.Actor.ID, e.Action, e.Target, e.OrganizationID, raw, e.SourceID); err != nil {
		return fmt.Errorf("audit %s of %s: %w", e.Action, e.Target, err)
	}
	return nil
}

// detail checks that e says who did what to what, and returns its detail
// as a JSON object.
func (e Entry) detail() ([]byte, error) {
	if e.Actor.Kind == "" || e.Actor.ID == "" || e.Action == "" || e.Target == "" {
		return nil, errors.New("audit entry without actor, action or target")
	}
	detail := e.Detail
	if detail == nil {
		detail = map[string]any{}
	}
	raw, err := json.Marshal(detail)
	if err != nil {
		return nil, fmt.Errorf("audit %s of %s: %w", e.Action, e.Target, err)
	}
	return raw, nil
}

// Filter selects entries; zero fields select everything.
type Filter struct {
	// OrganizationID: only its entries.
	OrganizationID string
	// Target: only the entries about it.
	Target string
	// ActorID: only the changes made by this user, key or part.
	ActorID string
	// Action: only this action; one ending in a dot ("show.") is a
	// prefix: every action of that kind.
	Action string
	// Before: only entries older than this id (the next page of a
	// newest-first read); 0 reads from the newest.
	Before int64
	// Limit: at most this many; default and maximum 1000.
	Limit int
}

// Read returns the entries f selects, newest first.
func Read(ctx context.Context, db Querier, f Filter) ([]Entry, error) {
	if f.Limit <= 0 || f.Limit > 1000 {
		f.Limit = 1000
	}
	action, prefix := f.Action, ""
	if strings.HasSuffix(action, ".") {
		action, prefix = "", f.Action
	}
	rows, err := db.Query(ctx, `
		SELECT audit_id, at, actor_kind, actor_id, action, target, organization_id, detail FROM audit_log
		WHERE ($1 = '' OR organization_id = $1) AND ($2 = '' OR target = $2) AND ($3 = '' OR actor_id = $3)
		  AND ($4 = '' OR action = $4) AND ($5 = '' OR starts_with(action, $5)) AND ($6 = 0 OR audit_id < $6)
		ORDER BY audit_id DESC LIMIT $7`,
		f.OrganizationID, f.Target, f.ActorID, action, prefix, f.Before, f.Limit)
	if err != nil {
		return nil, fmt.Errorf("read the audit log: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Entry, error) {
		var e Entry
		var kind string
		err := r.Scan(&e.ID, &e.At, &kind, &e.Actor.ID, &e.Action, &e.Target, &e.OrganizationID, &e.Detail)
		e.Actor.Kind, e.At = ActorKind(kind), e.At.UTC()
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("read the audit log: %w", err)
	}
	return out, nil
}
