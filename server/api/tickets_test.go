package api_test

import (
	"bytes"
	"context"
	"fmt"
	stdpng "image/png"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/makiuchi-d/gozxing"
	multiqr "github.com/makiuchi-d/gozxing/multi/qrcode"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	paymentv1 "github.com/seatghor/seatghor/gen/seatghor/payment/v1"
	ticketsv1 "github.com/seatghor/seatghor/gen/seatghor/tickets/v1"
	"github.com/seatghor/seatghor/gen/seatghor/tickets/v1/ticketsv1connect"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/internal/testkit/miniotest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/ticket"
)

// ticketsAs returns a TicketService client that authenticates as sub and
// sends a fresh idempotency key with every write that has none.
func ticketsAs(tb testing.TB, env *apptest.Env, sub string, role auth.Role) ticketsv1connect.TicketServiceClient {
	token := env.Token(tb, sub, role)
	return ticketsv1connect.NewTicketServiceClient(env.HTTP, env.URL, connect.WithInterceptors(connect.UnaryInterceptorFunc(
		func(next connect.UnaryFunc) connect.UnaryFunc {
			return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
				req.Header().Set("Authorization", "Bearer "+token)
				if req.Spec().IdempotencyLevel != connect.IdempotencyNoSideEffects && req.Header().Get(keyHeader) == "" {
					req.Header().Set(keyHeader, newKey())
				}
				return next(ctx, req)
			}
		})))
}

// myTickets waits until the caller's list satisfies ok (the read model is
// built from the outbox, a moment after the write) and returns it.
func myTickets(t *testing.T, c ticketsv1connect.TicketServiceClient, ok func([]*ticketsv1.Ticket) bool) []*ticketsv1.Ticket {
	t.Helper()
	var got []*ticketsv1.Ticket
	require.Eventually(t, func() bool {
		resp, err := c.ListMyTickets(context.Background(), connect.NewRequest(&ticketsv1.ListMyTicketsRequest{}))
		require.NoError(t, err)
		got = resp.Msg.GetTickets()
		return ok(got)
	}, 20*time.Second, 20*time.Millisecond, "my tickets never reached the wanted state: %v", got)
	return got
}

// fetch GETs a presigned URL.
func fetch(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	return body
}

func paid(t *testing.T, b buyer, showID int64, seats ...string) *bookingv1.Order {
	t.Helper()
	o := b.order(showID, seats...)
	p, err := b.pay(o.GetOrderId(), "tok_success")
	require.NoError(t, err)
	require.Equal(t, paymentv1.PaymentState_PAYMENT_STATE_SUCCEEDED, p.GetStatus())
	return o
}

func allReady(n int) func([]*ticketsv1.Ticket) bool {
	return func(ts []*ticketsv1.Ticket) bool {
		if len(ts) != n {
			return false
		}
		for _, t := range ts {
			if !t.GetDownloadReady() {
				return false
			}
		}
		return true
	}
}

// TestTicketsLifecycle: book and pay → the tickets appear in "my tickets"
// with their show → the e-ticket PDF downloads from MinIO through a
// presigned URL → the gate admits each ticket once, a second scan
// says when it was used, a forged code is refused → the buyer cannot cancel
// the used order but cancels the other, whose ticket shows refunded and the
// gate refuses. Owner only throughout.
func TestTicketsLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dhaka, err := time.LoadLocation("Asia/Dhaka")
	require.NoError(t, err)
	env := apptest.New(t, apptest.Options{Shards: 2, Projectors: true, Tickets: true,
		S3: miniotest.Shared(t).Config(miniotest.Bucket()), ProjectorMaxBackoff: 500 * time.Millisecond})
	show := createShow(t, env, seatedShow("Ticket night", 2, 4))
	other := createShow(t, env, seatedShow("Other night", 1, 4))
	rumana := newBuyer(t, env, "rumana")
	mine := ticketsAs(t, env, "rumana", auth.RoleUser)
	older := paid(t, rumana, other.GetShowId(), "A4")
	o := paid(t, rumana, show.GetShowId(), "A1", "A2")

	list := myTickets(t, mine, allReady(3))
	// Newest first; an order's tickets in seat order.
	require.Equal(t, o.GetOrderId(), list[0].GetOrderId())
	require.Equal(t, older.GetOrderId(), list[2].GetOrderId())
	a1, a2 := list[0], list[1]
	require.Equal(t, "A1", a1.GetSeat())
	require.Equal(t, "A2", a2.GetSeat())
	require.Equal(t, []string{"A1"}, a1.GetSeats(), "the contract's seats[]")
	for _, tk := range list[:2] {
		require.Equal(t, ticketsv1.TicketStatus_TICKET_STATUS_VALID, tk.GetStatus())
		require.Equal(t, show.GetShowId(), tk.GetShowId())
		require.Equal(t, "Ticket night", tk.GetShowTitle())
		require.Equal(t, "Test Hall", tk.GetVenue())
		require.Equal(t, show.GetStartsAt().AsTime().Truncate(time.Microsecond), tk.GetStartsAt().AsTime())
		// What people read: the show's zone (the default), named (decision 0170).
		local := tk.GetStartsAtLocal()
		require.Equal(t, "Asia/Dhaka", local.GetTimeZone())
		require.Equal(t, tk.GetStartsAt().AsTime().In(dhaka).Format(time.RFC3339), local.GetWallTime())
		require.Equal(t, tk.GetStartsAt().AsTime().In(dhaka).Format("Mon 2 Jan 2006, 15:04")+" (Asia/Dhaka, +06)", local.GetEn())
		require.True(t, strings.HasSuffix(local.GetBn(), "(Asia/Dhaka, +০৬)"), local.GetBn())
		require.Equal(t, "admin", tk.GetOperator())
		require.EqualValues(t, 85000, tk.GetPrice().GetAmountMinor())
		require.Equal(t, "rumana", tk.GetUserId())
		require.NotEmpty(t, tk.GetCode())
	}

	// Paging: one at a time, the same order.
	var paged []string
	token := ""
	for {
		resp, err := mine.ListMyTickets(ctx, connect.NewRequest(&ticketsv1.ListMyTicketsRequest{PageSize: 1, PageToken: token}))
		require.NoError(t, err)
		for _, tk := range resp.Msg.GetTickets() {
			paged = append(paged, tk.GetTicketId())
		}
		if token = resp.Msg.GetNextPageToken(); token == "" {
			break
		}
	}
	require.Equal(t, []string{a1.GetTicketId(), a2.GetTicketId(), list[2].GetTicketId()}, paged)
	resp, err := mine.ListMyTickets(ctx, connect.NewRequest(&ticketsv1.ListMyTicketsRequest{ShowId: other.GetShowId()}))
	require.NoError(t, err)
	require.Len(t, resp.Msg.GetTickets(), 1)

	// The PDF: fetched through the presigned URL, with both seats' codes.
	dl, err := mine.GetTicketDownload(ctx, connect.NewRequest(&ticketsv1.GetTicketDownloadRequest{TicketId: a1.GetTicketId()}))
	require.NoError(t, err)
	require.True(t, dl.Msg.GetReady())
	require.Equal(t, "application/pdf", dl.Msg.GetContentType())
	// Named for the order: the file holds every seat of it (decision 0305).
	require.Equal(t, "seatghor-"+o.GetOrderId()+".pdf", dl.Msg.GetFileName())
	pdf := fetch(t, dl.Msg.GetUrl())
	require.True(t, bytes.HasPrefix(pdf, []byte("%PDF")), "a PDF")
	// The QR codes printed in it decode to the tickets' signed codes; the
	// gate below scans exactly those.
	scanned := qrCodes(t, pdf)
	require.ElementsMatch(t, []string{a1.GetCode(), a2.GetCode()}, scanned)
	// In Bengali too (decision 0171): its own file, the same codes.
	dl, err = mine.GetTicketDownload(ctx, connect.NewRequest(&ticketsv1.GetTicketDownloadRequest{TicketId: a1.GetTicketId(), Lang: "bn"}))
	require.NoError(t, err)
	require.True(t, dl.Msg.GetReady())
	require.Equal(t, "seatghor-"+o.GetOrderId()+"-bn.pdf", dl.Msg.GetFileName())
	// A2's download is the same file, under the same name.
	dl2, err := mine.GetTicketDownload(ctx, connect.NewRequest(&ticketsv1.GetTicketDownloadRequest{TicketId: a2.GetTicketId()}))
	require.NoError(t, err)
	require.Equal(t, "seatghor-"+o.GetOrderId()+".pdf", dl2.Msg.GetFileName())
	bn := fetch(t, dl.Msg.GetUrl())
	require.NotEqual(t, pdf, bn)
	require.ElementsMatch(t, []string{a1.GetCode(), a2.GetCode()}, qrCodes(t, bn))
	if scanned[0] != a1.GetCode() {
		scanned[0], scanned[1] = scanned[1], scanned[0]
	}

	// Owner only: another user sees none of it.
	karim := ticketsAs(t, env, "karim", auth.RoleUser)
	resp, err = karim.ListMyTickets(ctx, connect.NewRequest(&ticketsv1.ListMyTicketsRequest{}))
	require.NoError(t, err)
	require.Empty(t, resp.Msg.GetTickets())
	_, err = karim.GetTicketDownload(ctx, connect.NewRequest(&ticketsv1.GetTicketDownloadRequest{TicketId: a1.GetTicketId()}))
	require.Equal(t, connect.CodeNotFound, connect.CodeOf(err), "%v", err)

	// The gate: an admin (the show's operator would do) scans A1.
	gate := ticketsAs(t, env, "admin", auth.RoleAdmin)
	scan := func(c ticketsv1connect.TicketServiceClient, showID int64, code string) (*ticketsv1.CheckInTicketResponse, error) {
		r, err := c.CheckInTicket(ctx, connect.NewRequest(&ticketsv1.CheckInTicketRequest{ShowId: showID,
			Ticket: &ticketsv1.CheckInTicketRequest_Code{Code: code}, Gate: "north-1"}))
		if err != nil {
			return nil, err
		}
		return r.Msg, nil
	}
	key := newKey()
	first, err := gate.CheckInTicket(ctx, withKey(&ticketsv1.CheckInTicketRequest{ShowId: show.GetShowId(),
		Ticket: &ticketsv1.CheckInTicketRequest_Code{Code: scanned[0]}, Gate: "north-1"}, key))
	require.NoError(t, err)
	require.True(t, first.Msg.GetAdmitted())
	require.False(t, first.Msg.GetAlreadyCheckedIn())
	require.Equal(t, a1.GetTicketId(), first.Msg.GetTicket().GetTicketId())
	require.Equal(t, "A1", first.Msg.GetTicket().GetSeat())
	require.Equal(t, ticketsv1.TicketStatus_TICKET_STATUS_CHECKED_IN, first.Msg.GetTicket().GetStatus())
	// The same request retried (same key, weak gate network): the first answer.
	retried, err := gate.CheckInTicket(ctx, withKey(&ticketsv1.CheckInTicketRequest{ShowId: show.GetShowId(),
		Ticket: &ticketsv1.CheckInTicketRequest_Code{Code: a1.GetCode()}, Gate: "north-1"}, key))
	require.NoError(t, err)
	require.True(t, retried.Msg.GetAdmitted())
	// A second scan (a copy of the ticket): refused, with when and where.
	second, err := scan(gate, show.GetShowId(), a1.GetCode())
	require.NoError(t, err)
	require.False(t, second.GetAdmitted())
	require.True(t, second.GetAlreadyCheckedIn())
	require.Equal(t, first.Msg.GetTicket().GetCheckedInAt().AsTime(), second.GetTicket().GetCheckedInAt().AsTime())
	// The gate reads when, in the show's zone.
	require.Equal(t, first.Msg.GetTicket().GetCheckedInAt().AsTime().In(dhaka).Format(time.RFC3339),
		second.GetTicket().GetCheckedInAtLocal().GetWallTime())
	require.Equal(t, "north-1", second.GetTicket().GetCheckedInGate())
	// Typed in by hand: the ticket id works too.
	byID, err := gate.CheckInTicket(ctx, connect.NewRequest(&ticketsv1.CheckInTicketRequest{ShowId: show.GetShowId(),
		Ticket: &ticketsv1.CheckInTicketRequest_TicketId{TicketId: a1.GetTicketId()}}))
	require.NoError(t, err)
	require.True(t, byID.Msg.GetAlreadyCheckedIn())

	// Forged or altered codes, the wrong show, the wrong people.
	forged := []string{"SGT1.eA.eA", a2.GetCode()[:len(a2.GetCode())-2] + "xx",
		strings.Replace(a2.GetCode(), ".", ".A", 1)}
	for _, code := range forged {
		_, err = scan(gate, show.GetShowId(), code)
		require.Equal(t, connect.CodeNotFound, connect.CodeOf(err), "%s: %v", code, err)
	}
	_, err = scan(gate, other.GetShowId(), a2.GetCode())
	require.Equal(t, connect.CodeFailedPrecondition, connect.CodeOf(err), "a ticket of another show: %v", err)
	_, err = scan(ticketsAs(t, env, "rumana", auth.RoleUser), show.GetShowId(), a2.GetCode())
	require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err), "%v", err)
	_, err = scan(ticketsAs(t, env, "someone-else", auth.RoleOperator), show.GetShowId(), a2.GetCode())
	require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err), "an operator of other shows: %v", err)

	// The check-in reaches "my tickets".
	myTickets(t, mine, func(ts []*ticketsv1.Ticket) bool {
		return len(ts) == 3 && ts[0].GetStatus() == ticketsv1.TicketStatus_TICKET_STATUS_CHECKED_IN &&
			ts[0].GetCheckedInGate() == "north-1" && ts[1].GetStatus() == ticketsv1.TicketStatus_TICKET_STATUS_VALID
	})

	// An order with a ticket used at the gate is not cancellable (decision
	// 0065). The buyer cancels her other order: refunded; the gate
	// and the download refuse its ticket.
	_, err = rumana.orders.CancelOrder(ctx, connect.NewRequest(&bookingv1.CancelOrderRequest{OrderId: o.GetOrderId()}))
	require.Equal(t, connect.CodeFailedPrecondition, connect.CodeOf(err), "A1 was checked in: %v", err)
	_, err = rumana.orders.CancelOrder(ctx, connect.NewRequest(&bookingv1.CancelOrderRequest{OrderId: older.GetOrderId()}))
	require.NoError(t, err)
	_, err = scan(gate, other.GetShowId(), list[2].GetCode())
	require.Equal(t, connect.CodeFailedPrecondition, connect.CodeOf(err), "a cancelled ticket: %v", err)
	settle(t, env)
	list = myTickets(t, mine, func(ts []*ticketsv1.Ticket) bool {
		return len(ts) == 3 && ts[2].GetStatus() == ticketsv1.TicketStatus_TICKET_STATUS_REFUNDED
	})
	require.Equal(t, ticketsv1.TicketStatus_TICKET_STATUS_CHECKED_IN, list[0].GetStatus(), "the used order stands")
	require.Equal(t, ticketsv1.TicketStatus_TICKET_STATUS_VALID, list[1].GetStatus(), "the used order stands")
	_, err = mine.GetTicketDownload(ctx, connect.NewRequest(&ticketsv1.GetTicketDownloadRequest{TicketId: list[2].GetTicketId()}))
	require.Equal(t, connect.CodeFailedPrecondition, connect.CodeOf(err), "%v", err)
}

// TestETicketsWaitForTheStore: with MinIO stopped, bookings still confirm
// and "my tickets" lists them, the PDFs wait (the projector retries); once
// MinIO is back, every PDF appears (R-8.5: no ticket is lost).
func TestETicketsWaitForTheStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := miniotest.Start(t)
	env := apptest.New(t, apptest.Options{Shards: 2, Projectors: true, Tickets: true,
		S3: store.Config(miniotest.Bucket()), ProjectorMaxBackoff: 300 * time.Millisecond})
	show := createShow(t, env, seatedShow("Outage", 2, 4))
	store.Stop(t)

	b := newBuyer(t, env, "sumi")
	mine := ticketsAs(t, env, "sumi", auth.RoleUser)
	paid(t, b, show.GetShowId(), "A1")
	paid(t, b, show.GetShowId(), "A2", "A3")
	paid(t, b, show.GetShowId(), "B1")
	list := myTickets(t, mine, func(ts []*ticketsv1.Ticket) bool { return len(ts) == 4 })
	for _, tk := range list {
		require.False(t, tk.GetDownloadReady())
	}
	dl, err := mine.GetTicketDownload(ctx, connect.NewRequest(&ticketsv1.GetTicketDownloadRequest{TicketId: list[0].GetTicketId()}))
	require.NoError(t, err)
	require.False(t, dl.Msg.GetReady(), "not ready while the store is down")
	require.Positive(t, dl.Msg.GetRetryAfter().AsDuration())

	store.Resume(t)
	list = myTickets(t, mine, allReady(4))
	for _, tk := range list {
		dl, err := mine.GetTicketDownload(ctx, connect.NewRequest(&ticketsv1.GetTicketDownloadRequest{TicketId: tk.GetTicketId()}))
		require.NoError(t, err)
		require.True(t, dl.Msg.GetReady())
		pdf := fetch(t, dl.Msg.GetUrl())
		require.True(t, bytes.HasPrefix(pdf, []byte("%PDF")))
		require.Contains(t, qrCodes(t, pdf), tk.GetCode())
	}
}

// TestGATicketsOverEveryProtocol: a general-admission booking gives one
// ticket per place; "my tickets" answers the same over gRPC and REST; a
// place is checked in by its typed ticket id; and a rebuild of both read
// models (`seatghor rebuild mytickets|eticket`) ends in the same view.
func TestGATicketsOverEveryProtocol(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Shards: 1, Projectors: true, Tickets: true, ProjectorMaxBackoff: 500 * time.Millisecond})
	req := seatedShow("Field day", 1, 1)
	req.Sections = nil
	req.GaAreas = []*catalogv1.GaArea{{Name: "Field", Capacity: 50, PriceMinor: 10000, Buckets: 2}}
	show := createShow(t, env, req)
	b := newBuyer(t, env, "nila")
	h, err := b.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show.GetShowId(), GaArea: "Field", Quantity: proto.Int32(3)}))
	require.NoError(t, err)
	o, err := b.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: h.Msg.GetHold().GetHoldId()}))
	require.NoError(t, err)
	_, err = b.pay(o.Msg.GetOrder().GetOrderId(), "tok_success")
	require.NoError(t, err)

	list := myTickets(t, ticketsAs(t, env, "nila", auth.RoleUser), allReady(3))
	for i, tk := range list {
		require.Equal(t, "Field", tk.GetGaArea())
		require.Empty(t, tk.GetSeat())
		require.Empty(t, tk.GetSeats())
		require.True(t, strings.HasSuffix(tk.GetTicketId(), []string{"_001", "_002", "_003"}[i]), tk.GetTicketId())
		require.EqualValues(t, 10000, tk.GetPrice().GetAmountMinor())
	}

	// gRPC (HTTP/2) answers the same list.
	token := env.Token(t, "nila", auth.RoleUser)
	grpc := ticketsv1connect.NewTicketServiceClient(env.H2C, env.URL, connect.WithGRPC())
	greq := connect.NewRequest(&ticketsv1.ListMyTicketsRequest{})
	greq.Header().Set("Authorization", "Bearer "+token)
	gresp, err := grpc.ListMyTickets(ctx, greq)
	require.NoError(t, err)
	require.Len(t, gresp.Msg.GetTickets(), 3)
	require.Equal(t, list[0].GetTicketId(), gresp.Msg.GetTickets()[0].GetTicketId())

	// REST: GET /v1/tickets and GET /v1/tickets/{id}/download.
	get := func(path string) string {
		r, err := http.NewRequest(http.MethodGet, env.URL+path, nil)
		require.NoError(t, err)
		r.Header.Set("Authorization", "Bearer "+token)
		resp, err := env.HTTP.Do(r)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
		return string(body)
	}
	require.Contains(t, get("/v1/tickets"), `"ticket_id":"`+list[2].GetTicketId()+`"`)
	require.Contains(t, get("/v1/tickets/"+list[1].GetTicketId()+"/download"), `"ready":true`)

	// The gate types the second place's id.
	gate := ticketsAs(t, env, "admin", auth.RoleAdmin)
	in, err := gate.CheckInTicket(ctx, connect.NewRequest(&ticketsv1.CheckInTicketRequest{ShowId: show.GetShowId(),
		Ticket: &ticketsv1.CheckInTicketRequest_TicketId{TicketId: list[1].GetTicketId()}, Gate: "east"}))
	require.NoError(t, err)
	require.True(t, in.Msg.GetAdmitted())
	require.Equal(t, "Field", in.Msg.GetTicket().GetGaArea())
	_, err = gate.CheckInTicket(ctx, connect.NewRequest(&ticketsv1.CheckInTicketRequest{ShowId: show.GetShowId(),
		Ticket: &ticketsv1.CheckInTicketRequest_TicketId{TicketId: strings.TrimSuffix(list[2].GetTicketId(), "_003") + "_004"}}))
	require.Equal(t, connect.CodeNotFound, connect.CodeOf(err), "a fourth place of a 3-place order: %v", err)
	mine := ticketsAs(t, env, "nila", auth.RoleUser)
	want := myTickets(t, mine, func(ts []*ticketsv1.Ticket) bool {
		return len(ts) == 3 && ts[1].GetStatus() == ticketsv1.TicketStatus_TICKET_STATUS_CHECKED_IN
	})

	// Rebuild both read models from the outbox: the same view comes back.
	require.NoError(t, env.App.Projections.Rebuild(ctx, "mytickets"))
	require.NoError(t, env.App.Projections.Rebuild(ctx, "eticket"))
	got := myTickets(t, mine, func(ts []*ticketsv1.Ticket) bool {
		return allReady(3)(ts) && ts[1].GetStatus() == ticketsv1.TicketStatus_TICKET_STATUS_CHECKED_IN
	})
	for i := range want {
		require.True(t, proto.Equal(want[i], got[i]), "ticket %d after the rebuild:\n%v\n%v", i, want[i], got[i])
	}
}

// TestCheckInOnceUnderConcurrentScans: copies of one ticket scanned at
// many gates at once: the shard's conditional insert admits exactly one
// every other scan is told when it was used.
func TestCheckInOnceUnderConcurrentScans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Shards: 1})
	show := createShow(t, env, seatedShow("Rush", 1, 2))
	o := paid(t, newBuyer(t, env, "rumana"), show.GetShowId(), "A2")
	id, err := ticket.ID(o.GetOrderId(), 1)
	require.NoError(t, err)
	code := env.App.CheckIn.Codes().Sign(id, "A2")

	const gates = 24
	gate := ticketsAs(t, env, "admin", auth.RoleAdmin)
	var (
		wg              sync.WaitGroup
		admitted, again atomic.Int32
	)
	for g := range gates {
		wg.Go(func() {
			r, err := gate.CheckInTicket(ctx, connect.NewRequest(&ticketsv1.CheckInTicketRequest{ShowId: show.GetShowId(),
				Ticket: &ticketsv1.CheckInTicketRequest_Code{Code: code}, Gate: fmt.Sprintf("gate-%d", g)}))
			if !assert.NoError(t, err) {
				return
			}
			if r.Msg.GetAdmitted() {
				admitted.Add(1)
			}
			if r.Msg.GetAlreadyCheckedIn() {
				again.Add(1)
			}
		})
	}
	wg.Wait()
	require.EqualValues(t, 1, admitted.Load())
	require.EqualValues(t, gates-1, again.Load())
}

// qrCodes reads every QR code of a PDF made by eticket.Render the way a
// gate's scanner reads a printed ticket: each page is rendered to an image
// (pdftoppm, from poppler-utils, which scripts/ensure-deps.sh installs)
// and scanned.
func qrCodes(t *testing.T, pdf []byte) []string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "t.pdf"), pdf, 0o600))
	out, err := exec.Command("pdftoppm", "-r", "100", "-gray", "-png", filepath.Join(dir, "t.pdf"), filepath.Join(dir, "page")).CombinedOutput()
	require.NoError(t, err, "pdftoppm: %s", out)
	pages, err := filepath.Glob(filepath.Join(dir, "page*.png"))
	require.NoError(t, err)
	var codes []string
	for _, p := range pages {
		f, err := os.Open(p)
		require.NoError(t, err)
		img, err := stdpng.Decode(f)
		f.Close()
		require.NoError(t, err)
		bmp, err := gozxing.NewBinaryBitmapFromImage(img)
		require.NoError(t, err)
		res, err := multiqr.NewQRCodeMultiReader().DecodeMultiple(bmp, nil)
		require.NoError(t, err)
		for _, r := range res {
			codes = append(codes, r.GetText())
		}
	}
	return codes
}

// TestETicketFollowsADelay (decision 0465): a coach's passenger has the
// e-ticket PDF of a journey boarding at a counter; the operator delays the
// trip three hours; the PDF at the same link is made again and says the
// new boarding time, not the old one.
func TestETicketFollowsADelayAndARename(t *testing.T) {
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Shards: 2, Projectors: true, Tickets: true,
		S3: miniotest.Shared(t).Config(miniotest.Bucket()), ProjectorMaxBackoff: 500 * time.Millisecond})
	req := tripShow("Dhaka to Chattogram, delayed", 2, 0, "Dhaka", "Cumilla", "Chattogram")
	req.Stops[1].Counters = []*catalogv1.Counter{{CounterId: "cantonment", Name: "Cantonment", MinutesAfterDeparture: 65, Boarding: true}}
	show := createShow(t, env, req)
	b := newBuyer(t, env, "delayed-traveller")
	h, err := b.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show.GetShowId(), Seats: []string{"A1"},
		Journey: &commonv1.Journey{FromStopId: "cumilla", ToStopId: "chattogram", BoardingCounterId: "cantonment"}}))
	require.NoError(t, err)
	_, err = b.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: h.Msg.GetHold().GetHoldId()}))
	require.NoError(t, err)
	mine := ticketsAs(t, env, "delayed-traveller", auth.RoleUser)
	tk := myTickets(t, mine, allReady(1))[0]

	dhaka := time.FixedZone("BDT", 6*3600)
	starts := show.GetStartsAt().AsTime()
	say := func(at time.Time) string { return at.In(dhaka).Format("Mon 2 Jan 2006, 15:04") }
	text := func() string {
		dl, err := mine.GetTicketDownload(ctx, connect.NewRequest(&ticketsv1.GetTicketDownloadRequest{TicketId: tk.GetTicketId()}))
		require.NoError(t, err)
		return pdfText(t, fetch(t, dl.Msg.GetUrl()))
	}
	require.Contains(t, text(), "Boarding: Cumilla, Cantonment counter, "+say(starts.Add(65*time.Minute)))

	later := starts.Add(3 * time.Hour)
	_, err = as(t, env, "ops-admin", auth.RoleAdmin).catalog.RescheduleShow(ctx, connect.NewRequest(&catalogv1.RescheduleShowRequest{
		ShowId: show.GetShowId(), StartsAt: timestamppb.New(later), Reason: "fog on the highway"}))
	require.NoError(t, err)
	// Made again by the reprint job, apart from the projector's batch
	// (decision 0484).
	var after string
	require.Eventually(t, func() bool {
		after = text()
		return strings.Contains(after, "Boarding: Cumilla, Cantonment counter, "+say(later.Add(65*time.Minute)))
	}, 20*time.Second, 200*time.Millisecond, "the new boarding time")
	require.NotContains(t, after, say(starts.Add(65*time.Minute)), "the old boarding time")

	// Renamed: the PDF prints the new title (decision 0469).
	renamed := "Dhaka to Chattogram, Green Line"
	_, err = as(t, env, "ops-admin", auth.RoleAdmin).catalog.UpdateShow(ctx, connect.NewRequest(&catalogv1.UpdateShowRequest{
		ShowId: show.GetShowId(), Title: &renamed, Reason: "the operator's own name"}))
	require.NoError(t, err)
	require.Eventually(t, func() bool { after = text(); return strings.Contains(after, renamed) }, 20*time.Second, 200*time.Millisecond,
		"the new title")
	require.NotContains(t, after, "Chattogram, delayed", "the old title")
	require.Contains(t, after, say(later.Add(65*time.Minute)), "the delay kept")
}

// pdfText is a PDF's text as pdftotext (poppler-utils) reads it, lines
// joined by spaces.
func pdfText(t *testing.T, pdf []byte) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "t.pdf"), pdf, 0o600))
	out, err := exec.Command("pdftotext", "-layout", filepath.Join(dir, "t.pdf"), "-").CombinedOutput()
	require.NoError(t, err, "pdftotext: %s", out)
	return strings.Join(strings.Fields(string(out)), " ")
}
