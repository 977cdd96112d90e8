package api_test

import (
	"context"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/catalog"
)

// TestUpdateShow (issue 26 §2, decision 0454): a show's manager renames
// it in English and Bengali, moves its opening before the sale opens
// (holds are refused until then, and taken after), and tightens its hold
// settings, which the shard applies to the next hold; each change is in
// the audit log with what it was before. What would hurt a buyer or make
// no sense is refused with its field: an opening after the show starts,
// a hold bigger than an account's share, moving the opening of a show on
// sale. Another organisation's manager and a buyer may not.
func TestUpdateShow(t *testing.T) {
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Shards: 2})
	env.Member(t, "edit-org", "edit-mgr", catalog.RoleManager)
	env.Member(t, "other-org", "other-mgr", catalog.RoleManager)
	req := seatedShow("Draft title", 2, 4)
	req.OrganizationId = "edit-org"
	req.OnSaleAt = timestamppb.New(time.Now().Add(time.Hour))
	show := createShow(t, env, req)
	id := show.GetShowId()
	mgr := as(t, env, "edit-mgr", auth.RoleOperator)
	update := func(c clients, r *catalogv1.UpdateShowRequest) (*catalogv1.Show, error) {
		r.ShowId = id
		resp, err := c.catalog.UpdateShow(ctx, connect.NewRequest(r))
		if err != nil {
			return nil, err
		}
		return resp.Msg.GetShow(), nil
	}
	renamed, err := update(mgr, &catalogv1.UpdateShowRequest{Title: proto.String(" Chirkutt live "), TitleBn: proto.String("চিরকুট লাইভ"),
		Reason: "the band's name"})
	require.NoError(t, err)
	require.Equal(t, "Chirkutt live", renamed.GetTitle(), "trimmed")
	require.Equal(t, "চিরকুট লাইভ", renamed.GetTitleBn())
	got, err := mgr.catalog.GetShow(ctx, connect.NewRequest(&catalogv1.GetShowRequest{ShowId: id}))
	require.NoError(t, err)
	require.Equal(t, "Chirkutt live", got.Msg.GetShow().GetTitle(), "read back")

	buyer := newBuyer(t, env, "edit-fan")
	_, err = buyer.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: id, Seats: []string{"A1"}}))
	requireReason(t, err, connect.CodeFailedPrecondition, "BOOKING_NOT_ALLOWED")
	opened, err := update(mgr, &catalogv1.UpdateShowRequest{OnSaleAt: timestamppb.New(time.Now().Add(-time.Minute)),
		MaxSeatsPerAccount: proto.Int32(3), MaxSeatsPerHold: proto.Int32(2), HoldTtl: durationpb.New(2 * time.Minute)})
	require.NoError(t, err, "a time gone by opens the sale now")
	require.False(t, opened.GetOnSaleAt().AsTime().After(time.Now()))
	_, err = buyer.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: id, Seats: []string{"A1", "A2", "A3"}}))
	require.Error(t, err, "three seats in one hold is over the new limit of two")
	h, err := buyer.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: id, Seats: []string{"A1", "A2"}}))
	require.NoError(t, err, "the shard opened the sale")
	ttl := time.Until(h.Msg.GetHold().GetExpiresAt().AsTime())
	require.Less(t, ttl, 3*time.Minute, "the new hold time, two minutes: %s", ttl)

	for _, tc := range []struct {
		name  string
		req   *catalogv1.UpdateShowRequest
		code  connect.Code
		field string
	}{
		{"an opening once on sale", &catalogv1.UpdateShowRequest{OnSaleAt: timestamppb.New(time.Now().Add(time.Hour))},
			connect.CodeFailedPrecondition, "on_sale_at"},
		{"a hold over an account's share", &catalogv1.UpdateShowRequest{MaxSeatsPerHold: proto.Int32(5)},
			connect.CodeInvalidArgument, "max_seats_per_hold"},
		{"no title", &catalogv1.UpdateShowRequest{Title: proto.String("")}, connect.CodeInvalidArgument, "title"},
		{"a hold of ten seconds", &catalogv1.UpdateShowRequest{HoldTtl: durationpb.New(10 * time.Second)},
			connect.CodeInvalidArgument, "hold_ttl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := update(mgr, tc.req)
			require.Equal(t, tc.code, connect.CodeOf(err), "%v", err)
			require.Equal(t, tc.field, badField(t, err), "%v", err)
		})
	}
	later := seatedShow("Later", 1, 4)
	later.OrganizationId = "edit-org"
	later.OnSaleAt = timestamppb.New(time.Now().Add(time.Hour))
	lid := createShow(t, env, later).GetShowId()
	_, err = mgr.catalog.UpdateShow(ctx, connect.NewRequest(&catalogv1.UpdateShowRequest{ShowId: lid,
		OnSaleAt: timestamppb.New(time.Now().Add(60 * 24 * time.Hour))}))
	require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err), "an opening after the show starts: %v", err)
	require.Equal(t, "on_sale_at", badField(t, err))
	for name, c := range map[string]clients{"another organisation": as(t, env, "other-mgr", auth.RoleOperator), "a buyer": buyer.clients} {
		_, err := update(c, &catalogv1.UpdateShowRequest{Title: proto.String("Hijacked")})
		require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err), "%s: %v", name, err)
	}

	log, err := mgr.catalog.ListAuditEntries(ctx, connect.NewRequest(&catalogv1.ListAuditEntriesRequest{OrganizationId: "edit-org",
		Action: "show.update"}))
	require.NoError(t, err)
	require.Len(t, log.Msg.GetEntries(), 2, "the rename and the opening; refusals write nothing")
	first := log.Msg.GetEntries()[1].GetDetail().AsMap()
	require.Equal(t, "Draft title", first["before"].(map[string]any)["title"])
	require.Equal(t, "the band's name", first["reason"])
	again, err := update(mgr, &catalogv1.UpdateShowRequest{Title: proto.String("Chirkutt live")})
	require.NoError(t, err)
	require.Equal(t, "Chirkutt live", again.GetTitle())
	log, err = mgr.catalog.ListAuditEntries(ctx, connect.NewRequest(&catalogv1.ListAuditEntriesRequest{OrganizationId: "edit-org",
		Action: "show.update"}))
	require.NoError(t, err)
	require.Len(t, log.Msg.GetEntries(), 2, "the same title again changes nothing")
}
