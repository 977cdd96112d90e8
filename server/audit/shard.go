package audit

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/types/known/timestamppb"

	eventsv1 "github.com/seatghor/seatghor/gen/seatghor/events/v1"
	"github.com/seatghor/seatghor/server/outbox"
	"github.com/seatghor/seatghor/server/shard"
)

// RecordOnShard adds e, a change of show showID, to the log of the show's
// shard through tx, the transaction of the change, and appends its
// AuditRecorded event to the shard's outbox in the same transaction: the
// audit projector gathers it into the catalog's log (Record with its
// SourceID), where it is searched with every other entry (decision 0452).
// e's OrganizationID and SourceID are ignored: the gathering finds the
// show's organisation.
func RecordOnShard(ctx context.Context, tx pgx.Tx, showID int64, e Entry) error {
	raw, err := e.detail()
	if err != nil {
		return err
	}
	id := shard.NewID("aud", showID)
	if _, err := tx.Exec(ctx, `
		INSERT INTO audit_log (audit_id, show_id, at, actor_kind, actor_id, action, target, detail)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		id, showID, e.At.UTC(), string(e.Actor.Kind), e.Actor.ID, e.Action, e.Target, raw); err != nil {
		return fmt.Errorf("audit %s of %s: %w", e.Action, e.Target, err)
	}
	return outbox.Append(ctx, tx, showID, e.At, &eventsv1.AuditRecorded{AuditId: id, ShowId: showID,
		At: timestamppb.New(e.At), ActorKind: string(e.Actor.Kind), ActorId: e.Actor.ID, Action: e.Action,
		Target: e.Target, DetailJson: string(raw)})
}
