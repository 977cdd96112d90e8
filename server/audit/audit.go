// Package audit is the platform's audit log: who changed what, and when,
// kept in the catalog database's audit_log table (decision 0276). A change
// is recorded by Record in the transaction that makes it, so the log holds
// exactly the changes that committed. Issue 22 records every change of a
// partner's webhook endpoint and every API key revocation; the operator
// console (a later issue) reads and serves the log. Rows are never changed
// or removed: the application role may only add and read them.
package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	// Detail is what else the change needs said, as a JSON object.
	Detail map[string]any
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
	if e.Actor.Kind == "" || e.Actor.ID == "" || e.Action == "" || e.Target == "" {
		return errors.New("audit entry without actor, action or target")
	}
	detail := e.Detail
	if detail == nil {
		detail = map[string]any{}
	}
	raw, err := json.Marshal(detail)
	if err != nil {
		return fmt.Errorf("audit %s of %s: %w", e.Action, e.Target, err)
	}
	if _, err := tx.Exec(ctx, `
		INSERT INTO audit_log (at, actor_kind, actor_id, action, target, detail)
		VALUES ($1, $2, $3, $4, $5, $6)`,
		e.At.UTC(), string(e.Actor.Kind), e.Actor.ID, e.Action, e.Target, raw); err != nil {
		return fmt.Errorf("audit %s of %s: %w", e.Action, e.Target, err)
	}
	return nil
}

// Filter selects entries; zero fields select everything.
type Filter struct {
	// Target: only the entries about it.
	Target string
	// Limit: at most this many; default and maximum 1000.
	Limit int
}

// Read returns the entries f selects, oldest first.
func Read(ctx context.Context, db Querier, f Filter) ([]Entry, error) {
	if f.Limit <= 0 || f.Limit > 1000 {
		f.Limit = 1000
	}
	rows, err := db.Query(ctx, `
		SELECT audit_id, at, actor_kind, actor_id, action, target, detail FROM audit_log
		WHERE $1 = '' OR target = $1
		ORDER BY audit_id LIMIT $2`, f.Target, f.Limit)
	if err != nil {
		return nil, fmt.Errorf("read the audit log: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Entry, error) {
		var e Entry
		var kind string
		err := r.Scan(&e.ID, &e.At, &kind, &e.Actor.ID, &e.Action, &e.Target, &e.Detail)
		e.Actor.Kind, e.At = ActorKind(kind), e.At.UTC()
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("read the audit log: %w", err)
	}
	return out, nil
}
