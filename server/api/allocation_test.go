package api_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	partnerv1 "github.com/seatghor/seatghor/gen/seatghor/partner/v1"
	"github.com/seatghor/seatghor/gen/seatghor/partner/v1/partnerv1connect"
	paymentv1 "github.com/seatghor/seatghor/gen/seatghor/payment/v1"
	seatmapv1 "github.com/seatghor/seatghor/gen/seatghor/seatmap/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/internal/testkit/redistest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/clock"
)

// channel is one caller's clients, the allocation service's included.
type channel struct {
	clients
	alloc partnerv1connect.AllocationServiceClient
}

// withToken returns clients that send token and a fresh idempotency key
// with every write.
func withToken(env *apptest.Env, token string) channel {
	opt := connect.WithInterceptors(connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			req.Header().Set("Authorization", "Bearer "+token)
			if req.Spec().IdempotencyLevel != connect.IdempotencyNoSideEffects {
				req.Header().Set(keyHeader, newKey())
			}
			return next(ctx, req)
		}
	}))
	return channel{clientsFor(env.HTTP, env.URL, opt), partnerv1connect.NewAllocationServiceClient(env.HTTP, env.URL, opt)}
}

// allocationEnv is a platform with an operator (a manager of organisation
// "org"), an admin-made show of that organisation, and the callers.
type allocationEnv struct {
	env      *apptest.Env
	clk      *clock.Fake
	show     *catalogv1.Show
	operator channel
	public   channel
}

func newAllocationEnv(t *testing.T, opts apptest.Options, req *catalogv1.CreateShowRequest) allocationEnv {
	t.Helper()
	clk := clock.NewFake(time.Now().UTC().Truncate(time.Second))
	opts.Clock = clk
	env := apptest.New(t, opts)
	if opts.Partners == nil {
		registerPartners(t, env, 8)
	}
	env.Member(t, "org", "op", catalog.RoleManager)
	req.OrganizationId = "org"
	return allocationEnv{
		env: env, clk: clk, show: createShow(t, env, req),
		operator: withToken(env, env.Token(t, "op", auth.RoleOperator)),
		public:   withToken(env, env.Token(t, "rumana", auth.RoleUser)),
	}
}

// registerPartners has an admin register n partners, so that the ids 1…n
// the tests allocate to are partners the platform knows (decision 0185).
func registerPartners(t *testing.T, env *apptest.Env, n int) {
	t.Helper()
	for i := 1; i <= n; i++ {
		p := newPartner(t, env, fmt.Sprintf("Agency %d", i), 500)
		require.Equal(t, int64(i), p.GetPartnerId(), "a fresh catalog numbers partners from 1")
	}
}

// partner returns the clients of a reseller's caller acting for id.
func (a allocationEnv) partner(t *testing.T, sub string, id int64) channel {
	return withToken(a.env, a.env.PartnerToken(t, sub, id))
}

func (a allocationEnv) allocate(t *testing.T, req *partnerv1.AllocateSeatsRequest) *partnerv1.Allocation {
	t.Helper()
	req.ShowId = a.show.GetShowId()
	resp, err := a.operator.alloc.AllocateSeats(context.Background(), connect.NewRequest(req))
	require.NoError(t, err)
	return resp.Msg.GetAllocation()
}

func (c channel) hold(showID int64, seats ...string) (*bookingv1.Hold, error) {
	resp, err := c.holds.CreateHold(context.Background(), connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: showID, Seats: seats}))
	if err != nil {
		return nil, err
	}
	return resp.Msg.GetHold(), nil
}

func (c channel) holdGA(showID int64, n int32) (*bookingv1.Hold, error) {
	resp, err := c.holds.CreateHold(context.Background(), connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: showID, Quantity: proto.Int32(n)}))
	if err != nil {
		return nil, err
	}
	return resp.Msg.GetHold(), nil
}

// stateOf reads the public seat map and returns each seat's 2-bit state.
func stateOf(t *testing.T, c channel, showID int64) map[string]int {
	t.Helper()
	m, err := c.seatmap.GetSeatMap(context.Background(), connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: showID}))
	require.NoError(t, err)
	return seatStates(m.Msg)
}

// seatStates is each seat's 2-bit state in a seat map's availability.
func seatStates(m *seatmapv1.GetSeatMapResponse) map[string]int {
	states := map[string]int{}
	i := 0
	for _, s := range m.GetSections() {
		for _, r := range s.GetRows() {
			for _, seat := range r.GetSeats() {
				states[seat] = int(m.GetAvailability()[i/4]>>(2*(i%4))) & 3
				i++
			}
		}
	}
	return states
}

func seatList(row string, from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf("%s%d", row, i))
	}
	return out
}

// reasonOf returns an error's Connect code and ErrorInfo reason.
func reasonOf(t *testing.T, err error) (connect.Code, string) {
	t.Helper()
	r := reasonIn(err)
	require.NotEmpty(t, r, "want a connect error with ErrorInfo, got %v", err)
	return connect.CodeOf(err), r
}

// TestAllocationRingFencesSeats: an operator allocates 10 seats to partner
// 7. Public buyers cannot hold them and the projected seat map shows them
// unavailable; partner 7 can, and its hold, order and payment record its
// channel; partner 8 cannot; general sale is closed to partner 7 while its
// allocation forbids it. A release gives seats back at once, and the rest
// returns at return_at (the workers' job, run twice: once is a no-op).
func TestAllocationRingFencesSeats(t *testing.T) {
	r := redistest.New(t)
	a := newAllocationEnv(t, apptest.Options{Shards: 2, RedisURL: r.URL, RedisPrefix: r.Prefix, Projectors: true},
		seatedShow("channels", 4, 5)) // A1…D5
	ctx := context.Background()
	showID := a.show.GetShowId()
	allocated := append(seatList("A", 1, 5), seatList("B", 1, 5)...)
	require.Equal(t, 0, stateOf(t, a.public, showID)["A1"], "the map is in Redis before the allocation")

	returnAt := a.clk.Now().Add(2 * time.Hour) // tokens live 24 h on this clock
	alloc := a.allocate(t, &partnerv1.AllocateSeatsRequest{PartnerId: 7, Seats: allocated, ReturnAt: timestamppb.New(returnAt)})
	require.Equal(t, allocated, alloc.GetSeats())
	require.EqualValues(t, 10, alloc.GetQuantity())
	require.Equal(t, partnerv1.AllocationStatus_ALLOCATION_STATUS_ACTIVE, alloc.GetStatus())

	// The public: refused with the seat named, and a reason of its own
	// (decision 0325); the rest of the show sells as before.
	_, err := a.public.hold(showID, "A1", "C1")
	require.Equal(t, []string{"A1"}, notInChannel(t, err).GetSeats())
	_, err = a.public.hold(showID, "C1")
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		st := stateOf(t, a.public, showID)
		for _, s := range allocated {
			if st[s] != 2 {
				return false
			}
		}
		return st["C2"] == 0
	}, 10*time.Second, 20*time.Millisecond, "the seat-map projector shows the allocation unavailable")

	// Partner 7 sells from its allocation; its channel is on every row.
	agency := a.partner(t, "agency", 7)
	h, err := agency.hold(showID, "A1", "A2")
	require.NoError(t, err)
	o, err := agency.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: h.GetHoldId()}))
	require.NoError(t, err)
	p, err := agency.pay.StartPayment(ctx, connect.NewRequest(&paymentv1.StartPaymentRequest{
		OrderId: o.Msg.GetOrder().GetOrderId(), Sandbox: &paymentv1.SandboxPayment{}}))
	require.NoError(t, err)
	pool, err := a.env.App.Router.ForShow(ctx, showID)
	require.NoError(t, err)
	var holdCh, orderCh, payCh int64
	require.NoError(t, pool.QueryRow(ctx, `
		SELECT (SELECT partner_id FROM holds WHERE hold_id = $1), (SELECT partner_id FROM orders WHERE order_id = $2),
		       (SELECT partner_id FROM payments WHERE payment_id = $3)`,
		h.GetHoldId(), o.Msg.GetOrder().GetOrderId(), p.Msg.GetPayment().GetPaymentId()).Scan(&holdCh, &orderCh, &payCh))
	require.Equal(t, []int64{7, 7, 7}, []int64{holdCh, orderCh, payCh})
	var publicCh *int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT partner_id FROM holds WHERE user_id = 'rumana'`).Scan(&publicCh))
	require.Nil(t, publicCh, "a public hold has no partner")

	// General sale is closed to partner 7 (the allocation says so); partner
	// 8 has no allocation here, so it sells general sale but not 7's seats.
	_, err = agency.hold(showID, "C3")
	require.Equal(t, []string{"C3"}, notInChannel(t, err).GetSeats())
	other := a.partner(t, "bank", 8)
	_, err = other.hold(showID, "A3")
	require.Equal(t, []string{"A3"}, notInChannel(t, err).GetSeats())
	_, err = other.hold(showID, "C3")
	require.NoError(t, err)

	// Who sees what.
	list, err := agency.alloc.ListAllocations(ctx, connect.NewRequest(&partnerv1.ListAllocationsRequest{ShowId: showID}))
	require.NoError(t, err)
	require.Len(t, list.Msg.GetAllocations(), 1)
	require.EqualValues(t, 8, list.Msg.GetAllocations()[0].GetAvailable(), "two of ten are held")
	list, err = other.alloc.ListAllocations(ctx, connect.NewRequest(&partnerv1.ListAllocationsRequest{ShowId: showID}))
	require.NoError(t, err)
	require.Empty(t, list.Msg.GetAllocations())
	_, err = a.public.alloc.ListAllocations(ctx, connect.NewRequest(&partnerv1.ListAllocationsRequest{ShowId: showID}))
	code, reason := reasonOf(t, err)
	require.Equal(t, connect.CodePermissionDenied, code)
	require.Equal(t, "ALLOCATION_FORBIDDEN", reason)

	// A release gives row B back now.
	rel, err := a.operator.alloc.ReleaseAllocation(ctx, connect.NewRequest(&partnerv1.ReleaseAllocationRequest{
		AllocationId: alloc.GetAllocationId(), Seats: seatList("B", 1, 5)}))
	require.NoError(t, err)
	require.Equal(t, seatList("A", 1, 5), rel.Msg.GetAllocation().GetSeats())
	// Both at the test clock's one instant: in either order.
	require.ElementsMatch(t, []string{"allocation.create by op", "allocation.release by op"},
		shardAudit(t, a.env, showID, "allocation:"+alloc.GetAllocationId()), "both in the shard's audit log (decision 0457)")
	_, err = a.public.hold(showID, "B1")
	require.NoError(t, err)
	_, err = a.public.hold(showID, "A3")
	require.Equal(t, []string{"A3"}, notInChannel(t, err).GetSeats())

	// Nothing returns before return_at; at it, the rest goes back once.
	n, err := a.env.App.Booking.ReturnDue(ctx, 100)
	require.NoError(t, err)
	require.Zero(t, n)
	a.clk.Set(returnAt)
	n, err = a.env.App.Booking.ReturnDue(ctx, 100)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	n, err = a.env.App.Booking.ReturnDue(ctx, 100)
	require.NoError(t, err)
	require.Zero(t, n, "a returned allocation is not returned again")
	_, err = a.public.hold(showID, "A3", "A4")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return stateOf(t, a.public, showID)["A5"] == 0 }, 10*time.Second, 20*time.Millisecond,
		"the returned seats are on general sale in the seat map")
	list, err = a.operator.alloc.ListAllocations(ctx, connect.NewRequest(&partnerv1.ListAllocationsRequest{ShowId: showID}))
	require.NoError(t, err)
	require.Equal(t, partnerv1.AllocationStatus_ALLOCATION_STATUS_RETURNED, list.Msg.GetAllocations()[0].GetStatus())
	require.Empty(t, list.Msg.GetAllocations()[0].GetSeats())
	// With no live allocation, partner 7 sells general sale like anyone.
	_, err = agency.hold(showID, "A5")
	require.NoError(t, err)
}

// TestAllocateSeatsRefusals: every refusal of AllocateSeats and
// ReleaseAllocation is a clear Connect error. The partners' records come
// from the partners' branch of issue 12; this test's lookup (Options.
// Partners) stands in for them: partners 7 and 8 exist.
func TestAllocateSeatsRefusals(t *testing.T) {
	a := newAllocationEnv(t, apptest.Options{Shards: 1, Partners: knownPartners{7: true, 8: true}}, seatedShow("refusals", 2, 5))
	ctx := context.Background()
	showID := a.show.GetShowId()
	now := a.clk.Now()
	_, err := a.public.hold(showID, "A1")
	require.NoError(t, err)
	a.allocate(t, &partnerv1.AllocateSeatsRequest{PartnerId: 8, Seats: []string{"A2"}, ReturnAt: timestamppb.New(now.Add(time.Hour))})
	a.env.Member(t, "elsewhere", "other-op", catalog.RoleManager)

	tests := []struct {
		name   string
		as     channel
		req    *partnerv1.AllocateSeatsRequest
		code   connect.Code
		reason string
		field  string
		seats  []string
	}{
		{"return_at in the past", a.operator, &partnerv1.AllocateSeatsRequest{PartnerId: 7, Seats: []string{"B1"},
			ReturnAt: timestamppb.New(now.Add(-time.Minute))}, connect.CodeInvalidArgument, "BOOKING_INVALID", "return_at", nil},
		{"return_at after the show starts", a.operator, &partnerv1.AllocateSeatsRequest{PartnerId: 7, Seats: []string{"B1"},
			ReturnAt: timestamppb.New(a.show.GetStartsAt().AsTime().Add(time.Minute))}, connect.CodeInvalidArgument, "BOOKING_INVALID", "return_at", nil},
		{"an unknown partner", a.operator, &partnerv1.AllocateSeatsRequest{PartnerId: 99, Seats: []string{"B1"},
			ReturnAt: timestamppb.New(now.Add(time.Hour))}, connect.CodeNotFound, "PARTNER_NOT_FOUND", "", nil},
		{"a held seat", a.operator, &partnerv1.AllocateSeatsRequest{PartnerId: 7, Seats: []string{"A1", "B1"},
			ReturnAt: timestamppb.New(now.Add(time.Hour))}, connect.CodeFailedPrecondition, "SEATS_NOT_ALLOCATABLE", "", []string{"A1"}},
		{"an allocated seat", a.operator, &partnerv1.AllocateSeatsRequest{PartnerId: 7, Seats: []string{"A2", "B1"},
			ReturnAt: timestamppb.New(now.Add(time.Hour))}, connect.CodeFailedPrecondition, "SEATS_NOT_ALLOCATABLE", "", []string{"A2"}},
		{"an unknown seat", a.operator, &partnerv1.AllocateSeatsRequest{PartnerId: 7, Seats: []string{"Z9"},
			ReturnAt: timestamppb.New(now.Add(time.Hour))}, connect.CodeInvalidArgument, "BOOKING_INVALID", "seats", nil},
		{"no return_at", a.operator, &partnerv1.AllocateSeatsRequest{PartnerId: 7, Seats: []string{"B1"}},
			connect.CodeInvalidArgument, "INVALID_ARGUMENT", "return_at", nil},
		{"a buyer", a.public, &partnerv1.AllocateSeatsRequest{PartnerId: 7, Seats: []string{"B1"},
			ReturnAt: timestamppb.New(now.Add(time.Hour))}, connect.CodePermissionDenied, "ALLOCATION_FORBIDDEN", "", nil},
		{"another organisation's manager", withToken(a.env, a.env.Token(t, "other-op", auth.RoleOperator)),
			&partnerv1.AllocateSeatsRequest{PartnerId: 7, Seats: []string{"B1"}, ReturnAt: timestamppb.New(now.Add(time.Hour))},
			connect.CodePermissionDenied, "ALLOCATION_FORBIDDEN", "", nil},
		{"the partner itself", a.partner(t, "agency", 7), &partnerv1.AllocateSeatsRequest{PartnerId: 7, Seats: []string{"B1"},
			ReturnAt: timestamppb.New(now.Add(time.Hour))}, connect.CodePermissionDenied, "ALLOCATION_FORBIDDEN", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.ShowId = showID
			_, err := tt.as.alloc.AllocateSeats(ctx, connect.NewRequest(tt.req))
			code, reason := reasonOf(t, err)
			require.Equal(t, tt.code, code, "%v", err)
			require.Equal(t, tt.reason, reason, "%v", err)
			var ce *connect.Error
			require.True(t, errors.As(err, &ce))
			var fields []string
			var seats []string
			for _, d := range ce.Details() {
				v, derr := d.Value()
				require.NoError(t, derr)
				switch v := v.(type) {
				case *errdetails.BadRequest:
					for _, f := range v.GetFieldViolations() {
						fields = append(fields, f.GetField())
					}
				case *bookingv1.SeatsUnavailable:
					seats = v.GetSeats()
				}
			}
			if tt.field != "" {
				require.Contains(t, fields, tt.field)
			}
			require.Equal(t, tt.seats, seats)
		})
	}
	// Nothing of the refused requests stuck: B1 is free for anyone.
	_, err = a.public.hold(showID, "B1")
	require.NoError(t, err)

	t.Run("release", func(t *testing.T) {
		list, err := a.operator.alloc.ListAllocations(ctx, connect.NewRequest(&partnerv1.ListAllocationsRequest{ShowId: showID}))
		require.NoError(t, err)
		id := list.Msg.GetAllocations()[0].GetAllocationId()
		_, err = a.operator.alloc.ReleaseAllocation(ctx, connect.NewRequest(&partnerv1.ReleaseAllocationRequest{AllocationId: id, Seats: []string{"B2"}}))
		code, reason := reasonOf(t, err)
		require.Equal(t, connect.CodeInvalidArgument, code)
		require.Equal(t, "BOOKING_INVALID", reason)
		_, err = a.public.alloc.ReleaseAllocation(ctx, connect.NewRequest(&partnerv1.ReleaseAllocationRequest{AllocationId: id}))
		code, _ = reasonOf(t, err)
		require.Equal(t, connect.CodePermissionDenied, code)
		_, err = a.operator.alloc.ReleaseAllocation(ctx, connect.NewRequest(&partnerv1.ReleaseAllocationRequest{AllocationId: "alc_1_0000000000000000"}))
		code, _ = reasonOf(t, err)
		require.Equal(t, connect.CodeNotFound, code)
		whole, err := a.operator.alloc.ReleaseAllocation(ctx, connect.NewRequest(&partnerv1.ReleaseAllocationRequest{AllocationId: id}))
		require.NoError(t, err)
		require.Equal(t, partnerv1.AllocationStatus_ALLOCATION_STATUS_RELEASED, whole.Msg.GetAllocation().GetStatus())
		_, err = a.operator.alloc.ReleaseAllocation(ctx, connect.NewRequest(&partnerv1.ReleaseAllocationRequest{AllocationId: id}))
		code, reason = reasonOf(t, err)
		require.Equal(t, connect.CodeFailedPrecondition, code)
		require.Equal(t, "BOOKING_NOT_ALLOWED", reason)
		_, err = a.public.hold(showID, "A2")
		require.NoError(t, err)
	})
}

// knownPartners stands in for the partners' records of issue 12's partner
// branch, which this branch does not have.
type knownPartners map[int64]bool

func (k knownPartners) PartnerExists(_ context.Context, id int64) (bool, error) { return k[id], nil }

// TestPartnerGeneralSale: general sale is open to a partner whose
// allocation allows it and closed to one whose allocation forbids it;
// each holds only its own allocated seats.
func TestPartnerGeneralSale(t *testing.T) {
	a := newAllocationEnv(t, apptest.Options{Shards: 1}, seatedShow("general sale", 2, 5))
	showID := a.show.GetShowId()
	returnAt := timestamppb.New(a.clk.Now().Add(time.Hour))
	a.allocate(t, &partnerv1.AllocateSeatsRequest{PartnerId: 7, Seats: []string{"A1"}, ReturnAt: returnAt, GeneralSale: true})
	a.allocate(t, &partnerv1.AllocateSeatsRequest{PartnerId: 8, Seats: []string{"A2"}, ReturnAt: returnAt})
	seven, eight := a.partner(t, "agency", 7), a.partner(t, "bank", 8)

	_, err := seven.hold(showID, "B1")
	require.NoError(t, err, "partner 7 may sell general sale")
	_, err = eight.hold(showID, "B2")
	require.Equal(t, []string{"B2"}, notInChannel(t, err).GetSeats(), "partner 8 may not")
	_, err = seven.hold(showID, "A2")
	require.Equal(t, []string{"A2"}, notInChannel(t, err).GetSeats(), "A2 is partner 8's")
	_, err = eight.hold(showID, "A1")
	require.Equal(t, []string{"A1"}, notInChannel(t, err).GetSeats(), "A1 is partner 7's")
	_, err = seven.hold(showID, "A1", "B3")
	require.NoError(t, err, "its own seat and general sale in one hold")
	_, err = eight.hold(showID, "A2")
	require.NoError(t, err)

	// The same service over gRPC: partner 8 sees its own allocation only.
	grpc := partnerv1connect.NewAllocationServiceClient(a.env.H2C, a.env.URL, connect.WithGRPC())
	req := connect.NewRequest(&partnerv1.ListAllocationsRequest{ShowId: showID})
	req.Header().Set("Authorization", "Bearer "+a.env.PartnerToken(t, "bank", 8))
	list, err := grpc.ListAllocations(context.Background(), req)
	require.NoError(t, err)
	require.Len(t, list.Msg.GetAllocations(), 1)
	require.Equal(t, []string{"A2"}, list.Msg.GetAllocations()[0].GetSeats())
	require.Zero(t, list.Msg.GetAllocations()[0].GetAvailable(), "A2 is held")
}

// TestGAAllocationRelease: a quota of 10 of a 40-place area leaves 30 on
// general sale (the seat map says so); the partner's holds take from the
// quota; releasing 5 gives them to general sale at once; releasing more
// than is unsold is refused; releasing the rest ends the allocation, and
// the places its holds give back later are general sale's.
func TestGAAllocationRelease(t *testing.T) {
	req := seatedShow("ga quota", 1, 1)
	req.Sections = nil
	req.GaAreas = []*catalogv1.GaArea{{Name: "Field", Capacity: 40, PriceMinor: 10000, Buckets: 4}}
	a := newAllocationEnv(t, apptest.Options{Shards: 1}, req)
	ctx := context.Background()
	showID := a.show.GetShowId()
	remaining := func() int32 {
		m, err := a.public.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: showID}))
		require.NoError(t, err)
		require.EqualValues(t, 40, m.Msg.GetGaAreas()[0].GetCapacity(), "the area's capacity never changes")
		return m.Msg.GetGaAreas()[0].GetRemaining()
	}
	alloc := a.allocate(t, &partnerv1.AllocateSeatsRequest{PartnerId: 7, Quantity: proto.Int32(10),
		ReturnAt: timestamppb.New(a.clk.Now().Add(time.Hour))})
	require.EqualValues(t, 30, remaining())

	agency := a.partner(t, "agency", 7)
	h, err := agency.holdGA(showID, 3)
	require.NoError(t, err)
	require.EqualValues(t, 30, remaining(), "the partner's hold took from its quota")

	rel, err := a.operator.alloc.ReleaseAllocation(ctx, connect.NewRequest(&partnerv1.ReleaseAllocationRequest{
		AllocationId: alloc.GetAllocationId(), Quantity: proto.Int32(5)}))
	require.NoError(t, err)
	require.EqualValues(t, 5, rel.Msg.GetAllocation().GetQuantity())
	require.EqualValues(t, 2, rel.Msg.GetAllocation().GetAvailable())
	require.EqualValues(t, 35, remaining())

	_, err = a.operator.alloc.ReleaseAllocation(ctx, connect.NewRequest(&partnerv1.ReleaseAllocationRequest{
		AllocationId: alloc.GetAllocationId(), Quantity: proto.Int32(3)}))
	code, reason := reasonOf(t, err)
	require.Equal(t, connect.CodeFailedPrecondition, code)
	require.Equal(t, "BOOKING_NOT_ALLOWED", reason)

	rel, err = a.operator.alloc.ReleaseAllocation(ctx, connect.NewRequest(&partnerv1.ReleaseAllocationRequest{
		AllocationId: alloc.GetAllocationId()}))
	require.NoError(t, err)
	require.Equal(t, partnerv1.AllocationStatus_ALLOCATION_STATUS_RELEASED, rel.Msg.GetAllocation().GetStatus())
	require.EqualValues(t, 37, remaining())
	_, err = agency.holds.ReleaseHold(ctx, connect.NewRequest(&bookingv1.ReleaseHoldRequest{HoldId: h.GetHoldId()}))
	require.NoError(t, err)
	require.EqualValues(t, 40, remaining(), "the partner's places come back to general sale")
	_, err = a.public.holdGA(showID, 10)
	require.NoError(t, err)
}
