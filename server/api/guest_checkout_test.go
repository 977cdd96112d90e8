package api_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	signinv1 "github.com/seatghor/seatghor/gen/seatghor/signin/v1"
	"github.com/seatghor/seatghor/gen/seatghor/signin/v1/signinv1connect"
	ticketsv1 "github.com/seatghor/seatghor/gen/seatghor/tickets/v1"
	"github.com/seatghor/seatghor/gen/seatghor/tickets/v1/ticketsv1connect"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/ticket"
)

// bearer returns a buyer whose calls carry token, with a fresh
// idempotency key on every write.
func bearer(t *testing.T, env *apptest.Env, token string) (buyer, ticketsv1connect.TicketServiceClient) {
	opt := connect.WithInterceptors(tokenInterceptor(token))
	return buyer{clients: clientsFor(env.HTTP, env.URL, opt), t: t}, ticketsv1connect.NewTicketServiceClient(env.HTTP, env.URL, opt)
}

// TestGuestCheckoutFindsTicketsByPhone walks decision 0437 through the
// API: a guest (no account) holds a coach seat, is refused an order with
// no phone, orders with one and pays; the booking SMS names the ticket
// number (the order id); anyone with that number and the phone finds the
// tickets and their codes, nobody with another number or order; of eight
// concurrent requests to send the SMS again exactly one goes; the tickets
// scan at the gate; and a phone sign-in with the number lists them under
// "my tickets", checked in, where another number sees none. Last, a client
// address that misses twenty times is refused, the right pair too.
func TestGuestCheckoutFindsTicketsByPhone(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 2, Clock: clock.Real{}, Tickets: true, Projectors: true})
	ctx := context.Background()
	show := createShow(t, env, tripShow("Dhaka to Cumilla 07:30", 2, 45000, "Dhaka", "Cumilla"))

	signin := signinv1connect.NewPhoneSignInServiceClient(env.HTTP, env.URL)
	anonTickets := ticketsv1connect.NewTicketServiceClient(env.HTTP, env.URL)
	started, err := signin.StartGuest(ctx, connect.NewRequest(&signinv1.StartGuestRequest{}))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(started.Msg.GetUserId(), auth.GuestPrefix), started.Msg.GetUserId())
	require.Equal(t, "no-store", started.Header().Get("Cache-Control"))
	require.WithinDuration(t, time.Now().Add(2*time.Hour), started.Msg.GetExpiresAt().AsTime(), time.Minute)
	guest, guestTickets := bearer(t, env, started.Msg.GetToken())

	h, err := guest.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show.GetShowId(),
		Seats: []string{"A1", "A2"}, Journey: journey("dhaka", "cumilla")}))
	require.NoError(t, err)
	_, err = guest.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: h.Msg.GetHold().GetHoldId(),
		Contact: &commonv1.Contact{Email: "guest@example.com"}}))
	got := answerOf(t, err)
	require.Equal(t, connect.CodeInvalidArgument, got.code)
	require.Equal(t, []string{"contact.phone"}, got.fields, "a guest's tickets are found by the phone")
	o, err := guest.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: h.Msg.GetHold().GetHoldId(),
		Contact: &commonv1.Contact{Phone: "01711-222333", Language: "bn"}}))
	require.NoError(t, err)
	orderID := o.Msg.GetOrder().GetOrderId()
	_, err = guest.pay(orderID, "tok_success")
	require.NoError(t, err)
	settle(t, env)

	const number = "+8801711222333"
	bookingSMS := func() []string {
		all, err := env.SMS.List(ctx, number, 100)
		require.NoError(t, err)
		var out []string
		for _, m := range all {
			if strings.Contains(m.Text, ticket.Number(orderID)) {
				out = append(out, m.Text)
			}
		}
		return out
	}
	require.Eventually(t, func() bool { return len(bookingSMS()) == 1 }, 20*time.Second, 50*time.Millisecond)
	require.Contains(t, bookingSMS()[0], "বুকিং নিশ্চিত", "in the language of the checkout")

	find := func(order, phone string) (*ticketsv1.FindTicketsResponse, error) {
		resp, err := anonTickets.FindTickets(ctx, connect.NewRequest(&ticketsv1.FindTicketsRequest{OrderId: order, Phone: phone, Lang: "bn"}))
		if err != nil {
			return nil, err
		}
		return resp.Msg, nil
	}
	// Projected (the guest's own list says so), the tickets are found by
	// ticket number and phone, as typed.
	myTickets(t, guestTickets, func(ts []*ticketsv1.Ticket) bool { return len(ts) == 2 })
	found, err := find(" "+orderID+" ", "01711222333")
	require.NoError(t, err)
	require.Len(t, found.GetTickets(), 2)
	for _, tk := range found.GetTickets() {
		require.Equal(t, orderID, tk.GetOrderId())
		require.NotEmpty(t, tk.GetCode(), "the code the gate scans")
		require.Equal(t, ticketsv1.TicketStatus_TICKET_STATUS_VALID, tk.GetStatus())
		require.Equal(t, "dhaka", tk.GetJourney().GetFromStopId())
	}
	require.NotNil(t, found.GetDownload(), "the e-ticket, or when to ask again")
	// And by the ticket number the SMS names (decision 0471), as a person
	// types it.
	number10 := ticket.Number(orderID)
	typedNumber := strings.ToLower(number10[:5]) + "-" + number10[5:]
	byNumber, err := find(typedNumber, "01711222333")
	require.NoError(t, err)
	require.Len(t, byNumber.GetTickets(), 2)
	require.Equal(t, orderID, byNumber.GetTickets()[0].GetOrderId())
	for _, wrong := range [][2]string{{orderID, "01711-222334"}, {"ord_1_nosuchorder", "01711222333"},
		{number10, "01711-222334"}, {"ZZZZZZZZZZ", "01711222333"}} {
		_, err := find(wrong[0], wrong[1])
		require.Equal(t, connect.CodeNotFound, connect.CodeOf(err), "%v: %v", wrong, err)
	}
	_, err = find(orderID, "12345")
	require.Equal(t, []string{"phone"}, answerOf(t, err).fields)

	// Eight concurrent requests to send the SMS again: one goes.
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = anonTickets.ResendTicketSms(ctx, connect.NewRequest(&ticketsv1.ResendTicketSmsRequest{OrderId: number10, Phone: "01711222333"}))
		}()
	}
	wg.Wait()
	sent := 0
	for _, err := range errs {
		if err == nil {
			sent++
			continue
		}
		require.Equal(t, connect.CodeResourceExhausted, connect.CodeOf(err), "%v", err)
	}
	require.Equal(t, 1, sent, "%v", errs)
	require.Len(t, bookingSMS(), 2, "the booking's SMS went once more")
	require.Equal(t, bookingSMS()[0], bookingSMS()[1], "the same text")
	_, err = anonTickets.ResendTicketSms(ctx, connect.NewRequest(&ticketsv1.ResendTicketSmsRequest{OrderId: orderID, Phone: "01711222334"}))
	require.Equal(t, connect.CodeNotFound, connect.CodeOf(err), "never to another number")

	// The found code scans at the gate.
	gate := ticketsAs(t, env, "gate-admin", auth.RoleAdmin)
	in, err := gate.CheckInTicket(ctx, connect.NewRequest(&ticketsv1.CheckInTicketRequest{ShowId: show.GetShowId(),
		Ticket: &ticketsv1.CheckInTicketRequest_Code{Code: found.GetTickets()[0].GetCode()}, Gate: "kallyanpur"}))
	require.NoError(t, err)
	require.True(t, in.Msg.GetAdmitted())

	// Signed in by phone with the number, the guest's tickets are theirs.
	signIn := func(number string) string {
		t.Helper()
		req := connect.NewRequest(&signinv1.SendCodeRequest{Phone: number})
		_, err := signin.SendCode(ctx, req)
		require.NoError(t, err)
		msgs, err := env.SMS.List(ctx, number, 1)
		require.NoError(t, err)
		code := regexp.MustCompile(`[0-9]{6}`).FindString(msgs[0].Text)
		tok, err := signin.VerifyCode(ctx, connect.NewRequest(&signinv1.VerifyCodeRequest{Phone: number, Code: code}))
		require.NoError(t, err)
		return tok.Msg.GetToken()
	}
	_, mine := bearer(t, env, signIn(number))
	list := myTickets(t, mine, func(ts []*ticketsv1.Ticket) bool {
		return len(ts) == 2 && (ts[0].GetStatus() == ticketsv1.TicketStatus_TICKET_STATUS_CHECKED_IN ||
			ts[1].GetStatus() == ticketsv1.TicketStatus_TICKET_STATUS_CHECKED_IN)
	})
	require.Equal(t, orderID, list[0].GetOrderId())
	_, err = mine.GetTicketDownload(ctx, connect.NewRequest(&ticketsv1.GetTicketDownloadRequest{TicketId: list[0].GetTicketId()}))
	require.NotEqual(t, connect.CodeNotFound, connect.CodeOf(err), "the ticket is the phone buyer's: %v", err)
	_, other := bearer(t, env, signIn("+8801711999888"))
	resp, err := other.ListMyTickets(ctx, connect.NewRequest(&ticketsv1.ListMyTicketsRequest{}))
	require.NoError(t, err)
	require.Empty(t, resp.Msg.GetTickets(), "another number sees none")
	_, err = other.GetTicketDownload(ctx, connect.NewRequest(&ticketsv1.GetTicketDownloadRequest{TicketId: list[0].GetTicketId()}))
	require.Equal(t, connect.CodeNotFound, connect.CodeOf(err))

	// Misses from one address: twenty, counted under its lock, then every
	// lookup is refused for a while, the right one too (the wrong ones
	// above counted already).
	var mu sync.Mutex
	misses, limited := 0, 0
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := find(orderID, fmt.Sprintf("0181100%04d", i))
			mu.Lock()
			defer mu.Unlock()
			switch connect.CodeOf(err) {
			case connect.CodeNotFound:
				misses++
			case connect.CodeResourceExhausted:
				limited++
			default:
				t.Errorf("a miss answered %v", err)
			}
		}()
	}
	wg.Wait()
	require.Equal(t, 20-5, misses, "20 misses an hour, the 5 above included")
	require.Equal(t, 15, limited)
	_, err = find(orderID, "01711222333")
	require.Equal(t, connect.CodeResourceExhausted, connect.CodeOf(err))
	var rl *connect.Error
	require.ErrorAs(t, err, &rl)
	require.NotEmpty(t, rl.Meta().Get("Retry-After"))
}
