package api_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/timestamppb"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	ticketsv1 "github.com/seatghor/seatghor/gen/seatghor/tickets/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/internal/testkit/mailpittest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/display"
	"github.com/seatghor/seatghor/server/notify"
)

// TestRescheduleShowTellsEveryPassengerOnce: an admin delays a coach
// through Dhaka, Cumilla and Feni by two hours (decision 0441). The show,
// its stops and the orders' journeys answer the new times; the three
// paying passengers each get one "delayed" SMS in the language of their
// checkout, naming their own boarding counter's new and old times, and an
// e-mail with the reason when they gave an address; the one who never paid
// and the one who cancelled hear nothing. The same request again tells
// nobody twice; a second delay tells them again and keeps the first time
// as the one sold.
func TestRescheduleShowTellsEveryPassengerOnce(t *testing.T) {
	mail := mailpittest.Start(t)
	smtp, err := notify.NewSMTP(notify.SMTPConfig{Host: mail.SMTPHost, Port: mail.SMTPPort, From: "Seatghor <tickets@seatghor.test>"})
	require.NoError(t, err)
	env := apptest.New(t, apptest.Options{Shards: 2, Clock: clock.Real{}, Tickets: true, Projectors: true, Mail: smtp})
	ctx := context.Background()
	req := tripShow("Dhaka to Chattogram 08:00", 4, 30000, "Dhaka", "Cumilla", "Feni", "Chattogram")
	req.Stops[1].Counters = []*catalogv1.Counter{{CounterId: "cantonment", Name: "Cantonment", NameBn: "ক্যান্টনমেন্ট",
		MinutesAfterDeparture: 65, Boarding: true}}
	show := createShow(t, env, req)
	sold := show.GetStartsAt().AsTime()

	type passenger struct {
		journey *commonv1.Journey
		contact *commonv1.Contact
		pay     bool
		cancel  bool
	}
	passengers := []passenger{
		{journey("dhaka", "feni"), &commonv1.Contact{Phone: "01711-000001", Email: "rahim@example.com", Language: "en"}, true, false},
		{&commonv1.Journey{FromStopId: "cumilla", ToStopId: "chattogram", BoardingCounterId: "cantonment"},
			&commonv1.Contact{Phone: "01711-000002", Language: "bn"}, true, false},
		{journey("dhaka", "chattogram"), &commonv1.Contact{Phone: "01711-000003", Language: "en"}, true, false},
		{journey("dhaka", "cumilla"), &commonv1.Contact{Phone: "01711-000004", Language: "en"}, false, false},
		{journey("feni", "chattogram"), &commonv1.Contact{Phone: "01711-000005", Email: "gone@example.com", Language: "en"}, true, true},
	}
	orders := make([]string, len(passengers))
	buyers := make([]buyer, len(passengers))
	for i, p := range passengers {
		b := newBuyer(t, env, "traveller-"+p.contact.GetPhone())
		h, err := b.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show.GetShowId(),
			Seats: []string{rowsAZ(4)[i%4] + "1"}, Journey: p.journey}))
		require.NoError(t, err)
		o, err := b.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: h.Msg.GetHold().GetHoldId(), Contact: p.contact}))
		require.NoError(t, err)
		orders[i], buyers[i] = o.Msg.GetOrder().GetOrderId(), b
		if p.pay {
			_, err := b.pay(orders[i], "tok_success")
			require.NoError(t, err)
		}
	}
	settle(t, env)
	_, err = buyers[4].orders.CancelOrder(ctx, connect.NewRequest(&bookingv1.CancelOrderRequest{OrderId: orders[4]}))
	require.NoError(t, err)
	settle(t, env)

	admin := as(t, env, "ops-admin", auth.RoleAdmin)
	reschedule := func(at time.Time) (*catalogv1.Show, error) {
		resp, err := admin.catalog.RescheduleShow(ctx, connect.NewRequest(&catalogv1.RescheduleShowRequest{
			ShowId: show.GetShowId(), StartsAt: timestamppb.New(at), Reason: "Fog on the Meghna bridge"}))
		if err != nil {
			return nil, err
		}
		return resp.Msg.GetShow(), nil
	}
	later := sold.Add(2 * time.Hour)
	moved, err := reschedule(later)
	require.NoError(t, err)
	require.Equal(t, later, moved.GetStartsAt().AsTime())
	require.Equal(t, sold, moved.GetScheduledStartsAt().AsTime())
	require.Equal(t, catalogv1.ShowStatus_SHOW_STATUS_DELAYED, moved.GetStatus())
	require.Equal(t, "Fog on the Meghna bridge", moved.GetRescheduleReason())
	require.Equal(t, later.Add(65*time.Minute), moved.GetStops()[1].GetCounters()[0].GetAt().AsTime(), "every counter's time moves")

	// The order answers its journey at the new times (the hold path's trip
	// cache follows within seconds).
	require.Eventually(t, func() bool {
		return buyers[1].getOrder(orders[1]).GetJourney().GetBoardingAt().AsTime().Equal(later.Add(65 * time.Minute))
	}, 10*time.Second, 200*time.Millisecond)

	// "My tickets" follows: the show's time and the journey's.
	myTickets(t, ticketsAs(t, env, "traveller-"+passengers[1].contact.GetPhone(), auth.RoleUser), func(ts []*ticketsv1.Ticket) bool {
		return len(ts) == 1 && ts[0].GetStartsAt().AsTime().Equal(later) &&
			ts[0].GetJourney().GetBoardingAt().AsTime().Equal(later.Add(65*time.Minute))
	})

	delayedSMS := func() map[string][]string {
		all, err := env.SMS.List(ctx, "", 1000)
		require.NoError(t, err)
		out := map[string][]string{}
		for _, m := range all {
			if strings.Contains(m.Text, "is delayed") || strings.Contains(m.Text, "দেরিতে") {
				out[m.To] = append(out[m.To], m.Text)
			}
		}
		return out
	}
	delayedMail := func() map[string][]string {
		all, err := mail.Messages(ctx)
		require.NoError(t, err)
		out := map[string][]string{}
		for _, m := range all {
			if strings.HasPrefix(m.Subject, "Trip delayed") {
				for _, to := range m.To {
					out[to.Address] = append(out[to.Address], m.ID)
				}
			}
		}
		return out
	}
	to := func(i int) string { return "+88" + strings.ReplaceAll(passengers[i].contact.GetPhone(), "-", "") }
	waitFor := func(each int) map[string][]string {
		t.Helper()
		require.Eventually(t, func() bool {
			sms := delayedSMS()
			return len(sms[to(0)]) == each && len(sms[to(1)]) == each && len(sms[to(2)]) == each &&
				len(delayedMail()["rahim@example.com"]) == each
		}, 60*time.Second, 200*time.Millisecond, "every paying passenger told")
		time.Sleep(2 * time.Second) // anything sent twice, or to the wrong people, would have come by now
		return delayedSMS()
	}
	sms := waitFor(1)
	require.Len(t, sms, 3, "the unpaid and the cancelled order hear nothing: %v", sms)
	loc := display.ZoneOrDefault("Asia/Dhaka")
	bnTime := func(at time.Time) string { return display.Digits(at.In(loc).Format("02/01 15:04"), display.Bengali) }
	require.Contains(t, sms[to(1)][0], "নতুন সময় "+bnTime(later.Add(65*time.Minute))+", ক্যান্টনমেন্ট", "Bengali, the counter's new time")
	require.Contains(t, sms[to(1)][0], "আগে "+bnTime(sold.Add(65*time.Minute)))
	require.Contains(t, sms[to(0)][0], "now "+later.In(loc).Format("2 Jan 15:04")+" (was "+sold.In(loc).Format("2 Jan 15:04")+")")
	body, err := mail.Text(ctx, delayedMail()["rahim@example.com"][0])
	require.NoError(t, err)
	require.Contains(t, body, "Reason: Fog on the Meghna bridge")
	require.Empty(t, delayedMail()["gone@example.com"])

	// The same request again changes nothing and tells nobody.
	again, err := reschedule(later)
	require.NoError(t, err)
	require.Equal(t, later, again.GetStartsAt().AsTime())
	sms = waitFor(1)
	require.Len(t, sms, 3)

	// A second delay tells them again; the time sold stays the first.
	latest := later.Add(time.Hour)
	moved, err = reschedule(latest)
	require.NoError(t, err)
	require.Equal(t, sold, moved.GetScheduledStartsAt().AsTime())
	sms = waitFor(2)
	require.Contains(t, strings.Join(sms[to(0)], "\n"), "now "+latest.In(loc).Format("2 Jan 15:04")+" (was "+later.In(loc).Format("2 Jan 15:04")+")",
		"was: the time before this move")

	// Earlier is not a delay, and a cancelled show runs at no time.
	_, err = reschedule(latest.Add(-time.Minute))
	got := answerOf(t, err)
	require.Equal(t, connect.CodeInvalidArgument, got.code, "%v", err)
	require.Equal(t, []string{"starts_at"}, got.fields)
	_, err = admin.catalog.CancelShow(ctx, connect.NewRequest(&catalogv1.CancelShowRequest{ShowId: show.GetShowId(), Reason: "Hartal"}))
	require.NoError(t, err)
	_, err = reschedule(latest.Add(time.Hour))
	require.Equal(t, "SHOW_CANCELLED", answerOf(t, err).reason, "%v", err)
}

// TestRescheduleShowMovesTheSale: sales follow the new time (a hold between
// the old time and the new one is taken), the status reads boarding,
// departed and arrived as the clock runs, and a trip gone more than three
// hours cannot be moved.
func TestRescheduleShowMovesTheSale(t *testing.T) {
	start := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	clk := clock.NewFake(start)
	env := apptest.New(t, apptest.Options{Shards: 1, Clock: clk})
	ctx := context.Background()
	req := tripShow("Dhaka to Feni 13:00", 2, 0, "Dhaka", "Cumilla", "Feni")
	req.OnSaleAt = timestamppb.New(start.Add(-time.Hour))
	req.StartsAt = timestamppb.New(start.Add(time.Hour))
	show := createShow(t, env, req)
	admin, b := as(t, env, "ops-admin", auth.RoleAdmin), newBuyer(t, env, "late-traveller")
	status := func() catalogv1.ShowStatus {
		got, err := b.catalog.GetShow(ctx, connect.NewRequest(&catalogv1.GetShowRequest{ShowId: show.GetShowId()}))
		require.NoError(t, err)
		return got.Msg.GetShow().GetStatus()
	}
	hold := func(seat string) error {
		_, err := b.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show.GetShowId(),
			Seats: []string{seat}, Journey: journey("dhaka", "feni")}))
		return err
	}
	require.Equal(t, catalogv1.ShowStatus_SHOW_STATUS_SCHEDULED, status())
	clk.Advance(40 * time.Minute)
	require.Equal(t, catalogv1.ShowStatus_SHOW_STATUS_BOARDING, status())
	clk.Advance(30 * time.Minute) // 10 minutes past its time: the coach has not come
	require.Equal(t, "BOOKING_NOT_ALLOWED", answerOf(t, hold("A1")).reason, "sales end at the time")

	_, err := admin.catalog.RescheduleShow(ctx, connect.NewRequest(&catalogv1.RescheduleShowRequest{
		ShowId: show.GetShowId(), StartsAt: timestamppb.New(start.Add(2 * time.Hour)), Reason: "Coach broke down at Jatrabari"}))
	require.NoError(t, err)
	require.Equal(t, catalogv1.ShowStatus_SHOW_STATUS_DELAYED, status())
	require.NoError(t, hold("A1"), "the sale runs until the new time")
	clk.Advance(time.Hour) // 10 minutes past the new time
	require.Equal(t, catalogv1.ShowStatus_SHOW_STATUS_DEPARTED, status())
	require.Equal(t, "BOOKING_NOT_ALLOWED", answerOf(t, hold("A2")).reason)
	clk.Advance(2 * time.Hour) // its last stop, Feni, at 2 h
	require.Equal(t, catalogv1.ShowStatus_SHOW_STATUS_ARRIVED, status())
	clk.Advance(time.Hour) // 3 h 10 past its time
	_, err = admin.catalog.RescheduleShow(ctx, connect.NewRequest(&catalogv1.RescheduleShowRequest{
		ShowId: show.GetShowId(), StartsAt: timestamppb.New(start.Add(8 * time.Hour)), Reason: "Too late"}))
	got := answerOf(t, err)
	require.Equal(t, connect.CodeFailedPrecondition, got.code, "%v", err)
	require.Equal(t, "SHOW_ALREADY_STARTED", got.reason)
}

// TestMovedShowCancelsInFull (decision 0477): a concert is moved a day
// later. An order paid before the move says so (moved_at) and its buyer
// may cancel it for a full refund, whatever the show's fee; an order paid
// after the move was bought for the new time and keeps the fee.
func TestMovedShowCancelsInFull(t *testing.T) {
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Shards: 1})
	req := seatedShow("Moved concert", 1, 4)
	req.CancellationFeeBps = new(int32(1000))
	show := createShow(t, env, req)
	paid := func(b buyer, seat string) string {
		o := b.orderWith(show.GetShowId(), nil, seat)
		_, err := b.pay(o.GetOrderId(), "tok_success")
		require.NoError(t, err)
		return o.GetOrderId()
	}
	early, late := newBuyer(t, env, "moved-early"), newBuyer(t, env, "moved-late")
	before := paid(early, "A1")
	settle(t, env)
	_, err := as(t, env, "ops-admin", auth.RoleAdmin).catalog.RescheduleShow(ctx, connect.NewRequest(&catalogv1.RescheduleShowRequest{
		ShowId: show.GetShowId(), StartsAt: timestamppb.New(show.GetStartsAt().AsTime().Add(24 * time.Hour)), Reason: "the singer is ill"}))
	require.NoError(t, err)
	after := paid(late, "A2")
	settle(t, env)

	got, err := early.orders.GetOrder(ctx, connect.NewRequest(&bookingv1.GetOrderRequest{OrderId: before}))
	require.NoError(t, err)
	require.NotNil(t, got.Msg.GetOrder().GetMovedAt(), "paid before the move")
	gone, err := early.orders.CancelOrder(ctx, connect.NewRequest(&bookingv1.CancelOrderRequest{OrderId: before}))
	require.NoError(t, err)
	require.Nil(t, gone.Msg.GetOrder().GetCancellationFee(), "no fee: the show moved")

	got, err = late.orders.GetOrder(ctx, connect.NewRequest(&bookingv1.GetOrderRequest{OrderId: after}))
	require.NoError(t, err)
	require.Nil(t, got.Msg.GetOrder().GetMovedAt(), "bought for the new time")
	kept, err := late.orders.CancelOrder(ctx, connect.NewRequest(&bookingv1.CancelOrderRequest{OrderId: after}))
	require.NoError(t, err)
	require.EqualValues(t, 8500, kept.Msg.GetOrder().GetCancellationFee().GetAmountMinor(), "10 % of 850 taka")
	settle(t, env)

	for _, c := range []struct {
		b      buyer
		order  string
		refund int64
	}{{early, before, 85000}, {late, after, 76500}} {
		o, err := c.b.orders.GetOrder(ctx, connect.NewRequest(&bookingv1.GetOrderRequest{OrderId: c.order}))
		require.NoError(t, err)
		require.EqualValues(t, c.refund, o.Msg.GetOrder().GetRefunded().GetAmountMinor(), c.order)
	}
}
