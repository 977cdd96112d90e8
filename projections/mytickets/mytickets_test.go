package mytickets_test

import (
	"context"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	eventsv1 "github.com/seatghor/seatghor/gen/seatghor/events/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/internal/testkit/pgtest"
	"github.com/seatghor/seatghor/projections"
	"github.com/seatghor/seatghor/projections/mytickets"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/shard"
	"github.com/seatghor/seatghor/server/ticket"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Cleanup()
	os.Exit(code)
}

func event(t *testing.T, showID int64, msg proto.Message) projections.Event {
	t.Helper()
	b, err := proto.Marshal(msg)
	require.NoError(t, err)
	return projections.Event{ShowID: showID, EventID: shard.NewID("evt", showID), Type: string(msg.ProtoReflect().Descriptor().FullName()), Payload: b}
}

// TestSinkIsIdempotentAndOrderFree: whatever order the events of an order
// arrive in, in whatever batches, and however often each is delivered, the
// view ends the same (R-8.1; decision 0040). The show's details come from
// ShowPublished or, when a booking arrives first, from the real catalog.
func TestSinkIsIdempotentAndOrderFree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Shards: 1, Tickets: true})
	now := time.Now().UTC().Truncate(time.Microsecond)
	show, err := env.App.Catalog.CreateShow(ctx, "op", catalog.NewShow{Show: catalog.Show{
		Kind: catalogv1.ShowKind_SHOW_KIND_BUS_TRIP, Title: "Dhaka to Chattogram", Origin: "Dhaka", Destination: "Chattogram",
		StartsAt: now.Add(48 * time.Hour), Currency: "BDT",
		Sections: []catalog.Section{{Name: "Main", Rows: []string{"A"}, SeatsPerRow: 4, PriceMinor: 85000}},
	}, Admin: true})
	require.NoError(t, err)
	id := show.ID
	order1, order2 := shard.NewID("ord", id), shard.NewID("ord", id)
	ticket1, err := ticket.ID(order1, 1)
	require.NoError(t, err)
	at := func(s int) *timestamppb.Timestamp { return timestamppb.New(now.Add(time.Duration(s) * time.Second)) }
	money := &commonv1.Money{AmountMinor: 170001, Currency: "BDT"}
	events := []projections.Event{
		event(t, id, &eventsv1.ShowPublished{ShowId: id, Show: show.Proto(), OccurredAt: timestamppb.New(show.CreatedAt)}),
		event(t, id, &eventsv1.BookingConfirmed{ShowId: id, OrderId: order1, UserId: "rumana", Seats: []string{"A1", "A2"},
			Quantity: 2, Total: money, OccurredAt: at(1)}),
		event(t, id, &eventsv1.TicketCheckedIn{ShowId: id, TicketId: ticket1, OrderId: order1, UserId: "rumana",
			Seat: "A1", Gate: "g1", OccurredAt: at(2)}),
		// A gate with no network scanned it earlier and synced later: its
		// admission replaces g1's (docs/gate-offline.md).
		event(t, id, &eventsv1.TicketCheckedIn{ShowId: id, TicketId: ticket1, OrderId: order1, UserId: "rumana",
			Seat: "A1", Gate: "g0", OccurredAt: timestamppb.New(now.Add(1500 * time.Millisecond)), DeviceId: "d0",
			Offline: true, Supersedes: true}),
		event(t, id, &eventsv1.BookingConfirmed{ShowId: id, OrderId: order2, UserId: "rumana", Seats: []string{"A3"},
			Quantity: 1, Total: &commonv1.Money{AmountMinor: 85000, Currency: "BDT"}, OccurredAt: at(3)}),
		event(t, id, &eventsv1.OrderCancelled{ShowId: id, OrderId: order1, UserId: "rumana", Seats: []string{"A1", "A2"},
			OccurredAt: at(4)}),
		event(t, id, &eventsv1.RefundIssued{ShowId: id, OrderId: order1, UserId: "rumana",
			Reason: eventsv1.RefundReason_REFUND_REASON_CANCELLATION, OccurredAt: at(5)}),
		// A duplicate capture given back leaves order 2's ticket valid.
		event(t, id, &eventsv1.RefundIssued{ShowId: id, OrderId: order2, UserId: "rumana",
			Reason: eventsv1.RefundReason_REFUND_REASON_DUPLICATE_CAPTURE, OccurredAt: at(6)}),
		// Someone else's order, cancelled before it was paid: no tickets.
		event(t, id, &eventsv1.OrderCancelled{ShowId: id, OrderId: shard.NewID("ord", id), UserId: "rumana",
			Seats: []string{"A4"}, OccurredAt: at(7)}),
	}
	p := mytickets.NewProjector(env.App.MyTickets, env.App.Catalog, env.App.CheckIn.Codes())
	list := func() []ticket.View {
		got, next, err := env.App.MyTickets.ListTickets(ctx, ticket.Holder{UserID: "rumana"}, ticket.ListFilter{Now: now})
		require.NoError(t, err)
		require.Empty(t, next)
		return got
	}

	require.NoError(t, p.Apply(ctx, events))
	want := list()
	require.Len(t, want, 3)
	require.Equal(t, order2, want[0].OrderID, "newest first")
	require.Equal(t, ticket.StatusValid, want[0].Status)
	require.Equal(t, []string{"A1", "A2"}, []string{want[1].Seat, want[2].Seat})
	require.Equal(t, ticket.StatusRefunded, want[1].Status, "checked in, then refunded: refunded")
	require.Equal(t, "g0", want[1].CheckedInGate, "the earliest admission stays")
	require.Equal(t, now.Add(1500*time.Millisecond), want[1].CheckedInAt)
	require.Equal(t, ticket.StatusRefunded, want[2].Status)
	require.EqualValues(t, 85001, want[1].PriceMinor, "the odd paisa goes to the first ticket")
	require.EqualValues(t, 85000, want[2].PriceMinor)
	require.Equal(t, "Dhaka", want[0].Origin)
	require.Equal(t, "Chattogram", want[0].Destination)
	require.Equal(t, show.StartsAt, want[0].StartsAt)
	// Filters: by show, and upcoming only (the show starts in 48 h).
	got, _, err := env.App.MyTickets.ListTickets(ctx, ticket.Holder{UserID: "rumana"}, ticket.ListFilter{ShowID: id + 1, Now: now})
	require.NoError(t, err)
	require.Empty(t, got)
	got, _, err = env.App.MyTickets.ListTickets(ctx, ticket.Holder{UserID: "rumana"}, ticket.ListFilter{UpcomingOnly: true, Now: now})
	require.NoError(t, err)
	require.Len(t, got, 3)
	got, _, err = env.App.MyTickets.ListTickets(ctx, ticket.Holder{UserID: "rumana"}, ticket.ListFilter{UpcomingOnly: true, Now: now.Add(49 * time.Hour)})
	require.NoError(t, err)
	require.Empty(t, got)
	_, _, err = env.App.MyTickets.ListTickets(ctx, ticket.Holder{UserID: "rumana"}, ticket.ListFilter{PageToken: "nope", Now: now})
	require.ErrorIs(t, err, ticket.ErrBadPageToken)
	other, _, err := env.App.MyTickets.ListTickets(ctx, ticket.Holder{UserID: "karim"}, ticket.ListFilter{Now: now})
	require.NoError(t, err)
	require.Empty(t, other)

	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 25 {
		require.NoError(t, p.Reset(ctx))
		require.Empty(t, list())
		// Every event twice, shuffled, in random batches.
		shuffled := append(append([]projections.Event{}, events...), events...)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		for len(shuffled) > 0 {
			n := 1 + rng.IntN(len(shuffled))
			require.NoError(t, p.Apply(ctx, shuffled[:n]))
			shuffled = shuffled[n:]
		}
		require.Equal(t, want, list(), "round %d", round)
	}
}
