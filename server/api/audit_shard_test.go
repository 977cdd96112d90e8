package api_test

import (
	"context"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	eventsv1 "github.com/seatghor/seatghor/gen/seatghor/events/v1"
	paymentv1 "github.com/seatghor/seatghor/gen/seatghor/payment/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/projections"
	"github.com/seatghor/seatghor/projections/auditlog"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/payment"
)

// TestShardWritesAreAudited (issue 26 §8, decision 0452): the staff writes
// made on a shard are in the audit log the console searches. Ana asks for
// a large refund and Bob approves it; a refund the gateway failed is
// settled in cash. Each is in its shard's audit_log, written with the
// refund, and gathered through the outbox into the catalog's log with the
// show's organisation, where the organisation's manager finds them by
// action kind. An event delivered twice is gathered once.
func TestShardWritesAreAudited(t *testing.T) {
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Shards: 2, Projectors: true, Payments: payment.Config{RefundApprovalMinor: 100000}})
	env.Member(t, "audit-org", "audit-mgr", catalog.RoleManager)
	req := seatedShow("Audited", 1, 4)
	req.OrganizationId = "audit-org"
	show := createShow(t, env, req).GetShowId()
	p := paidOrder(t, env, show, "audit-buyer", "A1", "A2") // 1,700 Tk
	ana, bob := as(t, env, "ana", auth.RoleAdmin), as(t, env, "bob", auth.RoleAdmin)
	large, err := ana.pay.RefundPayment(ctx, connect.NewRequest(&paymentv1.RefundPaymentRequest{
		PaymentId: p.GetPaymentId(), AmountMinor: 120000, Note: "the concert moved halls"}))
	require.NoError(t, err)
	refund := large.Msg.GetRefund().GetRefundId()
	require.Equal(t, paymentv1.RefundStatus_REFUND_STATUS_AWAITING_APPROVAL, large.Msg.GetRefund().GetStatus())
	_, err = bob.pay.ApproveRefund(ctx, connect.NewRequest(&paymentv1.ApproveRefundRequest{RefundId: refund}))
	require.NoError(t, err)

	pool, err := env.App.Router.ForShow(ctx, show)
	require.NoError(t, err)
	var onShard int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM audit_log WHERE target = $1`, "refund:"+refund).Scan(&onShard))
	require.Equal(t, 2, onShard, "asked for and approved, in the shard's log")

	mgr := as(t, env, "audit-mgr", auth.RoleOperator)
	var entries []*catalogv1.AuditEntry
	require.Eventually(t, func() bool {
		resp, err := mgr.catalog.ListAuditEntries(ctx, connect.NewRequest(&catalogv1.ListAuditEntriesRequest{
			OrganizationId: "audit-org", Action: "refund."}))
		require.NoError(t, err)
		entries = resp.Msg.GetEntries()
		return len(entries) == 2
	}, 10*time.Second, 50*time.Millisecond, "gathered into the catalog's log")
	require.Equal(t, "refund.approve", entries[0].GetAction(), "newest first")
	require.Equal(t, "bob", entries[0].GetActorId())
	require.Equal(t, "admin", entries[0].GetActorKind())
	require.Equal(t, "refund.request", entries[1].GetAction())
	require.Equal(t, "ana", entries[1].GetActorId())
	require.Equal(t, "refund:"+refund, entries[1].GetTarget())
	require.Equal(t, "the concert moved halls", entries[1].GetDetail().AsMap()["reason"])

	// Delivered twice, an event is gathered once.
	var id, raw string
	require.NoError(t, pool.QueryRow(ctx, `SELECT audit_id, detail::text FROM audit_log WHERE target = $1 ORDER BY at LIMIT 1`,
		"refund:"+refund).Scan(&id, &raw))
	payload, err := proto.Marshal(&eventsv1.AuditRecorded{AuditId: id, ShowId: show, ActorKind: "admin", ActorId: "ana",
		Action: "refund.request", Target: "refund:" + refund, DetailJson: raw})
	require.NoError(t, err)
	again := auditlog.NewProjector(env.App.Router.Catalog(), env.App.Catalog)
	ev := projections.Event{EventID: "replayed", ShowID: show, Type: "seatghor.events.v1.AuditRecorded", Payload: payload}
	require.NoError(t, again.Apply(ctx, []projections.Event{ev, ev}))
	resp, err := mgr.catalog.ListAuditEntries(ctx, connect.NewRequest(&catalogv1.ListAuditEntriesRequest{
		OrganizationId: "audit-org", Action: "refund."}))
	require.NoError(t, err)
	require.Len(t, resp.Msg.GetEntries(), 2, "nothing gathered twice")

	// A failed refund settled in cash.
	failing := failingRefunds(t)
	failing.Member(t, "audit-org", "audit-mgr", catalog.RoleManager)
	req = seatedShow("Audited, failing", 1, 4)
	req.OrganizationId = "audit-org"
	fshow := createShow(t, failing, req).GetShowId()
	fp := paidOrder(t, failing, fshow, "audit-buyer", "A1")
	fana := as(t, failing, "ana", auth.RoleAdmin)
	failed := failedRefund(t, failing, fana, fp.GetPaymentId(), 10000)
	_, err = settleFailed(fana, failed.GetRefundId(), "")
	require.NoError(t, err)
	fpool, err := failing.App.Router.ForShow(ctx, fshow)
	require.NoError(t, err)
	var action string
	require.NoError(t, fpool.QueryRow(ctx, `SELECT action FROM audit_log WHERE target = $1 ORDER BY at DESC LIMIT 1`,
		"refund:"+failed.GetRefundId()).Scan(&action))
	require.Equal(t, "refund.settle", action, "the settlement, in the shard's log with the refund's journal")
}

// shardAudit reads the audit entries about target in the log of show's
// shard, oldest first, as "action by actor".
func shardAudit(t *testing.T, env *apptest.Env, show int64, target string) []string {
	t.Helper()
	pool, err := env.App.Router.ForShow(context.Background(), show)
	require.NoError(t, err)
	rows, err := pool.Query(context.Background(), `SELECT action || ' by ' || actor_id FROM audit_log WHERE target = $1 ORDER BY at, audit_id`, target)
	require.NoError(t, err)
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return out
}
