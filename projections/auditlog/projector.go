// Package auditlog is the projector that gathers the shards' audit logs
// into the catalog's (decision 0452): each AuditRecorded event of a
// shard's outbox, written in the transaction of the staff write it
// records, becomes an entry of the catalog's audit_log with the show's
// organisation, where the console searches every entry. Like every
// projector it runs once per source database, checkpointed and gap-free,
// and is idempotent: an entry keeps its shard id, and the catalog adds an
// id once.
package auditlog

import (
	"context"
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/seatghor/seatghor/gen/seatghor/events/v1"
	"github.com/seatghor/seatghor/projections"
	"github.com/seatghor/seatghor/server/audit"
	"github.com/seatghor/seatghor/server/catalog"
)

// Shows finds a show's organisation (catalog.Service).
type Shows interface {
	GetShow(ctx context.Context, showID int64) (catalog.Show, error)
}

// Projector gathers audit entries into the catalog's log.
type Projector struct {
	log   audit.Execer
	shows Shows
}

// NewProjector returns the projector writing into log, the catalog
// database.
func NewProjector(log audit.Execer, shows Shows) *Projector {
	return &Projector{log: log, shows: shows}
}

// Name implements projections.Projector.
func (p *Projector) Name() string { return "audit" }

// Reset implements projections.Projector: there is nothing to drop. The
// gathered entries are a log: a rebuild replays the outbox, and what was
// gathered stays gathered once.
func (p *Projector) Reset(context.Context) error { return nil }

var recorded = string(proto.MessageName(&eventsv1.AuditRecorded{}))

// Apply implements projections.Projector.
func (p *Projector) Apply(ctx context.Context, events []projections.Event) error {
	orgs := map[int64]string{}
	for _, e := range events {
		if e.Type != recorded {
			continue
		}
		var a eventsv1.AuditRecorded
		if err := proto.Unmarshal(e.Payload, &a); err != nil {
			return fmt.Errorf("audit event %s: %w", e.EventID, err)
		}
		org, ok := orgs[a.GetShowId()]
		if !ok {
			show, err := p.shows.GetShow(ctx, a.GetShowId())
			if err != nil {
				return fmt.Errorf("audit event %s: the show's organisation: %w", e.EventID, err)
			}
			org, orgs[a.GetShowId()] = show.OrganizationID, show.OrganizationID
		}
		var detail map[string]any
		if err := json.Unmarshal([]byte(a.GetDetailJson()), &detail); err != nil {
			return fmt.Errorf("audit event %s: its detail: %w", e.EventID, err)
		}
		if err := audit.Record(ctx, p.log, audit.Entry{At: a.GetAt().AsTime(),
			Actor:  audit.Actor{Kind: audit.ActorKind(a.GetActorKind()), ID: a.GetActorId()},
			Action: a.GetAction(), Target: a.GetTarget(), OrganizationID: org, Detail: detail,
			SourceID: a.GetAuditId()}); err != nil {
			return fmt.Errorf("audit event %s: %w", e.EventID, err)
		}
	}
	return nil
}
