package waitingroom_test

import (
	"context"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	eventsv1 "github.com/seatghor/seatghor/gen/seatghor/events/v1"
	waitingroomv1 "github.com/seatghor/seatghor/gen/seatghor/waitingroom/v1"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/waitingroom"
)

// A sale of several shows (issue 5, decision 0034): two dates of a tour,
// on two shards, sell through the first one's waiting room. There is one
// line whichever show a buyer joins through, an admitted token of the sale
// holds seats of either show, a token of another sale does not, admission
// stops only when both shows are sold out, and only the sale's operators
// add shows to it.
func TestSaleOfSeveralShows(t *testing.T) {
	e := newEnvOn(t, 2, waitingroom.Config{})
	ctx := context.Background()
	org := e.as(t, "organiser", auth.RoleOperator)
	admin := e.as(t, "admin", auth.RoleAdmin)
	// Each creates for the organisation they manage (the admin for the
	// organiser's); only admins choose the shard (decision 0076).
	create := func(c caller, shard int32, room *catalogv1.WaitingRoom, onSaleAt *timestamppb.Timestamp) (*catalogv1.Show, error) {
		req := &catalogv1.CreateShowRequest{
			Kind: catalogv1.ShowKind_SHOW_KIND_CONCERT, Title: "Tour", Venue: "Bashundhara", Currency: "BDT",
			StartsAt: timestamppb.New(start.Add(30 * 24 * time.Hour)), OnSaleAt: onSaleAt,
			Sections:           []*catalogv1.Section{{Name: "Main", Rows: []string{"A"}, SeatsPerRow: 4, PriceMinor: 85000}},
			MaxSeatsPerAccount: 10, MaxSeatsPerHold: 10, WaitingRoom: room, OrganizationId: "organisers",
		}
		switch c.sub {
		case "admin":
			req.Shard = &shard
		case "rival":
			req.OrganizationId = "rivals"
		}
		resp, err := c.cat.CreateShow(ctx, connect.NewRequest(req))
		if err != nil {
			return nil, err
		}
		return resp.Msg.GetShow(), nil
	}
	opens := timestamppb.New(start.Add(time.Minute))
	first, err := create(admin, 0, &catalogv1.WaitingRoom{Enabled: true, MinAdmissionRate: 1, MaxAdmissionRate: 1}, opens)
	require.NoError(t, err)
	a := first.GetShowId()
	require.Equal(t, a, first.GetWaitingRoom().GetSaleId(), "the first show's room is its own sale")
	// The second date names the sale and takes its opening and settings.
	second, err := create(admin, 1, &catalogv1.WaitingRoom{Enabled: true, SaleId: a}, nil)
	require.NoError(t, err)
	b := second.GetShowId()
	require.EqualValues(t, 1, second.GetShard())
	require.Equal(t, a, second.GetWaitingRoom().GetSaleId())
	require.True(t, second.GetOnSaleAt().AsTime().Equal(opens.AsTime()), "on sale when the sale opens")
	require.True(t, second.GetWaitingRoom().GetEndsAt().AsTime().Equal(first.GetWaitingRoom().GetEndsAt().AsTime()))
	require.EqualValues(t, 1, second.GetWaitingRoom().GetMaxAdmissionRate())
	got, err := org.cat.GetShow(ctx, connect.NewRequest(&catalogv1.GetShowRequest{ShowId: b}))
	require.NoError(t, err)
	require.Equal(t, a, got.Msg.GetShow().GetWaitingRoom().GetSaleId(), "GetShow tells the sale")

	// Refusals, with nothing written.
	other, err := create(org, 0, &catalogv1.WaitingRoom{Enabled: true}, opens)
	require.NoError(t, err)
	calm, err := create(org, 0, nil, opens)
	require.NoError(t, err)
	for _, tc := range []struct {
		name  string
		as    caller
		room  *catalogv1.WaitingRoom
		opens *timestamppb.Timestamp
		code  connect.Code
		field string
	}{
		{"another operator's sale", e.as(t, "rival", auth.RoleOperator), &catalogv1.WaitingRoom{Enabled: true, SaleId: a}, nil,
			connect.CodePermissionDenied, ""},
		{"a show without a room", org, &catalogv1.WaitingRoom{Enabled: true, SaleId: calm.GetShowId()}, nil,
			connect.CodeInvalidArgument, "waiting_room.sale_id"},
		{"no such show", org, &catalogv1.WaitingRoom{Enabled: true, SaleId: 1 << 40}, nil,
			connect.CodeInvalidArgument, "waiting_room.sale_id"},
		{"own settings", org, &catalogv1.WaitingRoom{Enabled: true, SaleId: a, MaxAdmissionRate: 50}, nil,
			connect.CodeInvalidArgument, "waiting_room.sale_id"},
		{"another opening", org, &catalogv1.WaitingRoom{Enabled: true, SaleId: a}, timestamppb.New(start.Add(time.Hour)),
			connect.CodeInvalidArgument, "on_sale_at"},
	} {
		_, err := create(tc.as, 0, tc.room, tc.opens)
		require.Equal(t, tc.code, connect.CodeOf(err), "%s: %v", tc.name, err)
		if tc.field != "" {
			require.Equal(t, tc.field, fieldOf(t, err), tc.name)
		}
	}
	// Naming any show of the sale names the sale.
	third, err := create(org, 1, &catalogv1.WaitingRoom{Enabled: true, SaleId: b}, nil)
	require.NoError(t, err, "a manager of the sale's organisation adds to it, naming any of its shows")
	require.Equal(t, a, third.GetWaitingRoom().GetSaleId())
	shows := e.sale(t, b).GetShowIds()
	require.Equal(t, []int64{a, b, third.GetShowId()}, shows, "the sale's shows, the first first; nothing else written")

	// One line: joining through either show gives one place each, and
	// joining again through the other show gives the same place.
	fans := []caller{e.as(t, "fan-1", auth.RoleUser), e.as(t, "fan-2", auth.RoleUser)}
	join := func(c caller, show int64) *waitingroomv1.JoinResponse {
		resp, err := c.wr.Join(ctx, connect.NewRequest(&waitingroomv1.JoinRequest{ShowId: show}))
		require.NoError(t, err)
		require.Equal(t, a, resp.Msg.GetSaleId())
		require.Equal(t, show, resp.Msg.GetShowId())
		return resp.Msg
	}
	join(fans[0], a)
	join(fans[1], b)
	e.clock.Set(start.Add(time.Minute))
	e.tick(t, 0)
	p1, p2 := join(fans[0], b).GetPlace(), join(fans[1], a).GetPlace()
	require.ElementsMatch(t, []int64{1, 2}, []int64{p1, p2}, "two joiners, two places, in one line")
	require.EqualValues(t, 2, e.sale(t, a).GetJoined())

	// X moves by 1/s: both are admitted after two seconds.
	e.tick(t, time.Second)
	e.tick(t, time.Second)
	admitted := make([]string, 2)
	for i, f := range fans {
		st := join(f, b)
		require.True(t, st.GetAdmitted(), "fan-%d", i+1)
		admitted[i] = st.GetAdmittedToken()
	}
	// A token of the sale holds seats of every show of it…
	_, err = hold(fans[0], a, admitted[0], "A1", "A2", "A3", "A4")
	require.NoError(t, err, "show A with the sale's token")
	e.tick(t, time.Second)
	require.False(t, e.sale(t, a).GetSoldOut(), "show A is sold out, the sale is not")
	_, err = hold(fans[1], b, admitted[1], "A1", "A2", "A3", "A4")
	require.NoError(t, err, "show B with the sale's token")
	_, err = hold(fans[1], third.GetShowId(), admitted[1], "A1", "A2", "A3", "A4")
	require.NoError(t, err, "the third show with the sale's token")
	// …but not without one, nor with another sale's.
	_, err = hold(fans[0], b, "", "A1")
	code, why := reason(t, err)
	require.Equal(t, connect.CodePermissionDenied, code)
	require.Equal(t, "QUEUE_TOKEN_REQUIRED", why)
	joinOther := func() *connect.Response[waitingroomv1.JoinResponse] {
		resp, err := fans[0].wr.Join(ctx, connect.NewRequest(&waitingroomv1.JoinRequest{ShowId: other.GetShowId()}))
		require.NoError(t, err)
		require.Equal(t, other.GetShowId(), resp.Msg.GetSaleId())
		return resp
	}
	joinOther()
	e.tick(t, time.Second)
	oth := joinOther()
	require.True(t, oth.Msg.GetAdmitted(), "nobody else is in the other sale's line")
	_, err = hold(fans[0], a, oth.Msg.GetAdmittedToken(), "A1")
	_, why = reason(t, err)
	require.Equal(t, "QUEUE_TOKEN_WRONG_SALE", why)

	// Every show of the sale is held: admission stops.
	e.tick(t, time.Second)
	sale := e.sale(t, b)
	require.True(t, sale.GetSoldOut())
	require.Equal(t, waitingroomv1.SaleState_SALE_STATE_SOLD_OUT, sale.GetState())
	require.Zero(t, sale.GetAvailable())
	require.Equal(t, b, sale.GetShowId())
	require.Equal(t, a, sale.GetSaleId())

	// UpdateSale through any show changes the one sale.
	_, err = org.wr.UpdateSale(ctx, connect.NewRequest(&waitingroomv1.UpdateSaleRequest{ShowId: b, Paused: new(true)}))
	require.NoError(t, err)
	require.True(t, e.sale(t, a).GetPaused())
}

// Operators move a sale's opening before it comes (issue 5): postponed, the
// lottery is not drawn at the old time and the show goes on sale at the new
// one; brought forward to now, it opens now; once open, or within two
// seconds of opening, the opening is fixed; a move that breaks a rule
// changes nothing.
func TestOperatorsMoveTheOpening(t *testing.T) {
	e := newEnv(t, waitingroom.Config{})
	ctx := context.Background()
	room := &catalogv1.WaitingRoom{Enabled: true, MinAdmissionRate: 1, MaxAdmissionRate: 1}
	show, other := e.show(t, 1, room), e.show(t, 1, room) // both open at start+1m
	org := e.as(t, "organiser", auth.RoleOperator)
	move := func(c caller, show int64, opens time.Time, ends *timestamppb.Timestamp) (*waitingroomv1.Sale, error) {
		resp, err := c.wr.UpdateSale(ctx, connect.NewRequest(&waitingroomv1.UpdateSaleRequest{ShowId: show,
			OpensAt: timestamppb.New(opens), EndsAt: ends}))
		if err != nil {
			return nil, err
		}
		return resp.Msg.GetSale(), nil
	}
	onSaleAt := func(show int64) time.Time {
		resp, err := org.cat.GetShow(ctx, connect.NewRequest(&catalogv1.GetShowRequest{ShowId: show}))
		require.NoError(t, err)
		return resp.Msg.GetShow().GetOnSaleAt().AsTime()
	}
	fan := e.as(t, "fan", auth.RoleUser)
	j, err := fan.wr.Join(ctx, connect.NewRequest(&waitingroomv1.JoinRequest{ShowId: show}))
	require.NoError(t, err)
	tok := j.Msg.GetToken()

	// Postponed by an hour: the room and the show move together.
	later := start.Add(time.Hour)
	sale, err := move(org, show, later, nil)
	require.NoError(t, err)
	require.True(t, sale.GetOpensAt().AsTime().Equal(later))
	require.Equal(t, waitingroomv1.SaleState_SALE_STATE_SCHEDULED, sale.GetState())
	require.True(t, onSaleAt(show).Equal(later), "the show goes on sale at the new time")
	// Partners hear of it (their sale.opening_moved webhooks, decision 0190).
	var payload []byte
	require.NoError(t, e.App.Router.Catalog().QueryRow(ctx, `
		SELECT payload FROM outbox WHERE show_id = $1 AND event_type = 'seatghor.events.v1.SaleOpeningMoved'`, show).Scan(&payload))
	var moved eventsv1.SaleOpeningMoved
	require.NoError(t, proto.Unmarshal(payload, &moved))
	require.True(t, moved.GetOpensAt().AsTime().Equal(later))
	require.True(t, moved.GetPreviousOpensAt().AsTime().Equal(start.Add(time.Minute)))
	require.Equal(t, "organiser", moved.GetMovedBy())

	// Refused, with nothing written.
	before := e.sale(t, other)
	for _, tc := range []struct {
		name  string
		as    caller
		opens time.Time
		ends  *timestamppb.Timestamp
		code  connect.Code
	}{
		{"after the window closes", org, start.Add(3 * time.Hour), nil, connect.CodeInvalidArgument},
		{"after the show starts", org, start.Add(31 * 24 * time.Hour), timestamppb.New(start.Add(32 * 24 * time.Hour)),
			connect.CodeInvalidArgument},
		{"not the sale's operator", e.as(t, "rival", auth.RoleOperator), later, nil, connect.CodePermissionDenied},
	} {
		_, err := move(tc.as, other, tc.opens, tc.ends)
		require.Equal(t, tc.code, connect.CodeOf(err), "%s: %v", tc.name, err)
		if tc.code == connect.CodeInvalidArgument {
			require.Equal(t, "opens_at", fieldOf(t, err), tc.name)
		}
	}
	after := e.sale(t, other)
	require.True(t, after.GetOpensAt().AsTime().Equal(before.GetOpensAt().AsTime()))
	require.True(t, after.GetEndsAt().AsTime().Equal(before.GetEndsAt().AsTime()))
	require.True(t, onSaleAt(other).Equal(start.Add(time.Minute)))
	e.clock.Set(start.Add(time.Minute - time.Second))
	_, err = move(org, other, later, nil)
	require.Equal(t, connect.CodeFailedPrecondition, connect.CodeOf(err), "one second before the opening: %v", err)

	// The old opening passes: no draw, and the buyer is told the new time.
	e.clock.Set(start.Add(time.Minute))
	e.tick(t, 0)
	e.tick(t, time.Second)
	st, err := fan.wr.GetStatus(ctx, connect.NewRequest(&waitingroomv1.GetStatusRequest{Token: tok}))
	require.NoError(t, err)
	require.Equal(t, waitingroomv1.SaleState_SALE_STATE_SCHEDULED, st.Msg.GetState())
	require.Zero(t, st.Msg.GetPlace(), "no lottery at the old opening")
	require.True(t, st.Msg.GetOpensAt().AsTime().Equal(later))
	require.Contains(t, st.Msg.GetMessage(), later.Format(time.RFC3339))

	// Brought forward: a time already past opens the sale now.
	sale, err = move(org, show, start, nil)
	require.NoError(t, err)
	now := e.clock.Now()
	require.True(t, sale.GetOpensAt().AsTime().Equal(now))
	require.True(t, onSaleAt(show).Equal(now))
	e.tick(t, 0)
	e.tick(t, time.Second)
	st, err = fan.wr.GetStatus(ctx, connect.NewRequest(&waitingroomv1.GetStatusRequest{Token: st.Msg.GetToken()}))
	require.NoError(t, err)
	require.EqualValues(t, 1, st.Msg.GetPlace())
	require.True(t, st.Msg.GetAdmitted())
	// The shard's on_sale_at moved too: otherwise CreateHold would answer
	// "sales open at …" for another hour.
	_, err = hold(fan, show, st.Msg.GetAdmittedToken(), "A1")
	require.NoError(t, err)

	_, err = move(org, show, later, nil)
	require.Equal(t, connect.CodeFailedPrecondition, connect.CodeOf(err), "open: the opening is fixed")
}
