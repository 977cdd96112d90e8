package api_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/catalog"
)

// TestDraftShowIsItsManagersUntilPublished (decision 0455): a manager
// keeps a show as a draft while she gets it right. Until she publishes
// it, buyers, other organisations' managers and the public list see no
// such show and nobody can hold a seat of it; it cannot be cancelled or
// moved (nothing was sold), but it can be renamed. Eight publishes at
// once put it on sale once: one audit entry, one time, and the seats the
// draft described, with its new name, sell.
func TestDraftShowIsItsManagersUntilPublished(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 2})
	ctx := context.Background()
	env.Member(t, "dhaka-express", "planner", catalog.RoleManager)
	env.Member(t, "rival-lines", "rival", catalog.RoleManager)
	planner := as(t, env, "planner", auth.RoleOperator)
	rival := as(t, env, "rival", auth.RoleOperator)
	buyer := as(t, env, "buyer", auth.RoleUser)

	req := seatedShow("Baul night (draft)", 3, 4)
	req.OrganizationId, req.Draft = "dhaka-express", true
	created, err := planner.catalog.CreateShow(ctx, connect.NewRequest(req))
	require.NoError(t, err)
	draft := created.Msg.GetShow()
	require.Equal(t, catalogv1.ShowStatus_SHOW_STATUS_DRAFT, draft.GetStatus())
	require.Nil(t, draft.GetPublishedAt())
	id := draft.GetShowId()

	listed := func(c clients, includeDrafts bool) (bool, error) {
		resp, err := c.catalog.ListShows(ctx, connect.NewRequest(&catalogv1.ListShowsRequest{
			OrganizationId: "dhaka-express", IncludeDrafts: includeDrafts, PageSize: 100}))
		if err != nil {
			return false, err
		}
		for _, s := range resp.Msg.GetShows() {
			if s.GetShowId() == id {
				return true, nil
			}
		}
		return false, nil
	}
	for name, c := range map[string]clients{"buyer": buyer, "rival": rival} {
		_, err := c.catalog.GetShow(ctx, connect.NewRequest(&catalogv1.GetShowRequest{ShowId: id}))
		require.Equal(t, connect.CodeNotFound, connect.CodeOf(err), "%s reads the draft: %v", name, err)
		seen, err := listed(c, false)
		require.NoError(t, err)
		require.False(t, seen, "%s lists the draft", name)
		_, err = listed(c, true)
		require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err), "%s lists drafts: %v", name, err)
		_, err = c.catalog.PublishShow(ctx, connect.NewRequest(&catalogv1.PublishShowRequest{ShowId: id}))
		require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err), "%s publishes: %v", name, err)
	}
	_, err = planner.catalog.ListShows(ctx, connect.NewRequest(&catalogv1.ListShowsRequest{IncludeDrafts: true}))
	requireReason(t, err, connect.CodeInvalidArgument, "SHOW_INVALID")
	require.Equal(t, []string{"include_drafts"}, answerOf(t, err).fields)
	seen, err := listed(planner, true)
	require.NoError(t, err)
	require.True(t, seen, "the manager's drafts list misses the draft")
	seen, err = listed(planner, false)
	require.NoError(t, err)
	require.False(t, seen, "the published list has the draft")

	_, err = buyer.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: id, Seats: []string{"A1"}}))
	require.Equal(t, connect.CodeNotFound, connect.CodeOf(err), "a hold on a draft: %v", err)
	_, err = planner.catalog.CancelShow(ctx, connect.NewRequest(&catalogv1.CancelShowRequest{ShowId: id, Reason: "changed our mind"}))
	requireReason(t, err, connect.CodeFailedPrecondition, "SHOW_DRAFT")
	_, err = planner.catalog.RescheduleShow(ctx, connect.NewRequest(&catalogv1.RescheduleShowRequest{ShowId: id,
		StartsAt: timestamppb.New(draft.GetStartsAt().AsTime().Add(2 * time.Hour)), Reason: "later"}))
	requireReason(t, err, connect.CodeFailedPrecondition, "SHOW_DRAFT")
	_, err = planner.catalog.UpdateShow(ctx, connect.NewRequest(&catalogv1.UpdateShowRequest{ShowId: id, Title: proto.String("Baul night")}))
	require.NoError(t, err)

	var (
		wg    sync.WaitGroup
		times sync.Map
		errs  = make(chan error, 8)
	)
	for i := range 8 {
		wg.Go(func() {
			resp, err := planner.catalog.PublishShow(ctx, connect.NewRequest(&catalogv1.PublishShowRequest{ShowId: id}))
			if err != nil {
				errs <- fmt.Errorf("publish %d: %w", i, err)
				return
			}
			times.Store(resp.Msg.GetShow().GetPublishedAt().AsTime(), true)
			if s := resp.Msg.GetShow().GetStatus(); s != catalogv1.ShowStatus_SHOW_STATUS_SCHEDULED {
				errs <- fmt.Errorf("publish %d answers %v", i, s)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	n := 0
	times.Range(func(any, any) bool { n++; return true })
	require.Equal(t, 1, n, "the publishes answer different times")

	got, err := buyer.catalog.GetShow(ctx, connect.NewRequest(&catalogv1.GetShowRequest{ShowId: id}))
	require.NoError(t, err)
	require.Equal(t, "Baul night", got.Msg.GetShow().GetTitle())
	seen, err = listed(buyer, false)
	require.NoError(t, err)
	require.True(t, seen, "the published show is not listed")
	b := newBuyer(t, env, "baul-fan")
	b.orderWith(id, nil, "A1", "A2")

	audit, err := planner.catalog.ListAuditEntries(ctx, connect.NewRequest(&catalogv1.ListAuditEntriesRequest{
		OrganizationId: "dhaka-express", Action: "show.publish"}))
	require.NoError(t, err)
	require.Len(t, audit.Msg.GetEntries(), 1)
	require.Equal(t, "planner", audit.Msg.GetEntries()[0].GetActorId())
}

// TestDraftIsDeletedOnceAndAPublishedShowNever (decision 0462): a draft
// that will never run is deleted by its manager, not by a buyer or another
// organisation's manager; the audit log keeps what it was; deleting it
// again finds nothing. A published show is kept (SHOW_KEPT). A delete
// racing publishes of the same draft: either it is published and kept, or
// it is gone and every publish finds nothing; never a deleted show on sale.
func TestDraftIsDeletedOnceAndAPublishedShowNever(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 2})
	ctx := context.Background()
	env.Member(t, "dhaka-express", "planner", catalog.RoleManager)
	env.Member(t, "rival-lines", "rival", catalog.RoleManager)
	planner := as(t, env, "planner", auth.RoleOperator)
	draft := func(title string) int64 {
		req := seatedShow(title, 2, 4)
		req.OrganizationId, req.Draft = "dhaka-express", true
		created, err := planner.catalog.CreateShow(ctx, connect.NewRequest(req))
		require.NoError(t, err)
		return created.Msg.GetShow().GetShowId()
	}
	del := func(c clients, id int64) error {
		_, err := c.catalog.DeleteShow(ctx, connect.NewRequest(&catalogv1.DeleteShowRequest{ShowId: id, Reason: "the venue fell through"}))
		return err
	}

	id := draft("Jatra (never)")
	for name, c := range map[string]clients{"buyer": as(t, env, "buyer", auth.RoleUser), "rival": as(t, env, "rival", auth.RoleOperator)} {
		require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(del(c, id)), "%s deletes the draft", name)
	}
	require.NoError(t, del(planner, id))
	_, err := planner.catalog.GetShow(ctx, connect.NewRequest(&catalogv1.GetShowRequest{ShowId: id}))
	require.Equal(t, connect.CodeNotFound, connect.CodeOf(err), "the deleted draft is read: %v", err)
	require.Equal(t, connect.CodeNotFound, connect.CodeOf(del(planner, id)), "deleted twice")
	entries, err := planner.catalog.ListAuditEntries(ctx, connect.NewRequest(&catalogv1.ListAuditEntriesRequest{
		OrganizationId: "dhaka-express", Action: "show.delete"}))
	require.NoError(t, err)
	require.Len(t, entries.Msg.GetEntries(), 1)
	e := entries.Msg.GetEntries()[0]
	require.Equal(t, fmt.Sprintf("show:%d", id), e.GetTarget())
	before, ok := e.GetDetail().AsMap()["before"].(map[string]any)
	require.True(t, ok, "the entry keeps what the draft was: %v", e.GetDetail())
	require.Equal(t, "Jatra (never)", before["title"])

	published := draft("Jatra (on sale)")
	_, err = planner.catalog.PublishShow(ctx, connect.NewRequest(&catalogv1.PublishShowRequest{ShowId: published}))
	require.NoError(t, err)
	requireReason(t, del(planner, published), connect.CodeFailedPrecondition, "SHOW_KEPT")
	b := newBuyer(t, env, "jatra-fan")
	b.orderWith(published, nil, "A1")

	for round := range 4 {
		id := draft(fmt.Sprintf("Jatra race %d", round))
		var (
			wg        sync.WaitGroup
			deleted   = make(chan error, 1)
			publishes = make(chan error, 4)
		)
		wg.Go(func() { deleted <- del(planner, id) })
		for range 4 {
			wg.Go(func() {
				_, err := planner.catalog.PublishShow(ctx, connect.NewRequest(&catalogv1.PublishShowRequest{ShowId: id}))
				publishes <- err
			})
		}
		wg.Wait()
		close(publishes)
		delErr := <-deleted
		_, readErr := as(t, env, "buyer", auth.RoleUser).catalog.GetShow(ctx, connect.NewRequest(&catalogv1.GetShowRequest{ShowId: id}))
		if delErr == nil {
			require.Equal(t, connect.CodeNotFound, connect.CodeOf(readErr), "round %d: deleted, yet read", round)
			for err := range publishes {
				if err != nil {
					require.Equal(t, connect.CodeNotFound, connect.CodeOf(err), "round %d: %v", round, err)
				}
			}
			// A publish that won before the delete would have kept it.
			continue
		}
		requireReason(t, delErr, connect.CodeFailedPrecondition, "SHOW_KEPT")
		require.NoError(t, readErr, "round %d: kept, yet not on sale", round)
		for err := range publishes {
			require.NoError(t, err, "round %d", round)
		}
	}
}
