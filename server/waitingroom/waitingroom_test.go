package waitingroom_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/types/known/timestamppb"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	"github.com/seatghor/seatghor/gen/seatghor/booking/v1/bookingv1connect"
	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/gen/seatghor/catalog/v1/catalogv1connect"
	waitingroomv1 "github.com/seatghor/seatghor/gen/seatghor/waitingroom/v1"
	"github.com/seatghor/seatghor/gen/seatghor/waitingroom/v1/waitingroomv1connect"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/internal/testkit/pgtest"
	"github.com/seatghor/seatghor/internal/testkit/redistest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/keyset"
	"github.com/seatghor/seatghor/server/waitingroom"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Cleanup()
	redistest.Cleanup()
	os.Exit(code)
}

// start is the fake clock's starting point; sales open a minute later.
var start = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

type env struct {
	*apptest.Env
	clock *clock.Fake
	rooms *waitingroom.Service
}

func newEnv(t *testing.T, cfg waitingroom.Config) *env {
	t.Helper()
	return newEnvOn(t, 1, cfg)
}

// newEnvOn is newEnv over several shard databases.
func newEnvOn(t *testing.T, shards int, cfg waitingroom.Config) *env {
	t.Helper()
	return newEnvOnRedis(t, redistest.New(t), shards, cfg)
}

// redisKinds are the Redis deployments a test runs on: a single
// redis-server and a Redis Cluster (decision 0200).
var redisKinds = map[string]func(testing.TB) *redistest.Server{
	"redis-server":  redistest.New,
	"redis-cluster": redistest.NewCluster,
}

// newEnvOnRedis is newEnvOn with the platform's Redis given.
func newEnvOnRedis(t *testing.T, r *redistest.Server, shards int, cfg waitingroom.Config) *env {
	t.Helper()
	clk := clock.NewFake(start)
	e := apptest.New(t, apptest.Options{Shards: shards, Clock: clk, RedisURL: r.URL, RedisPrefix: r.Prefix, WaitingRoom: cfg})
	require.NotNil(t, e.App.WaitingRooms)
	// The organiser manages the shows of "organisers"; the rival manages
	// another organisation's (decision 0075).
	e.Member(t, "organisers", "organiser", catalog.RoleManager)
	e.Member(t, "rivals", "rival", catalog.RoleManager)
	return &env{Env: e, clock: clk, rooms: e.App.WaitingRooms}
}

// caller is one signed-in client of the API.
type caller struct {
	sub   string
	wr    waitingroomv1connect.WaitingRoomServiceClient
	holds bookingv1connect.HoldServiceClient
	cat   catalogv1connect.CatalogServiceClient
}

func (e *env) as(t *testing.T, sub string, role auth.Role) caller {
	tok := e.Token(t, sub, role)
	i := connect.WithInterceptors(connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			req.Header().Set("Authorization", "Bearer "+tok)
			req.Header().Set("Idempotency-Key", fmt.Sprintf("%s-%d", sub, time.Now().UnixNano()))
			return next(ctx, req)
		}
	}))
	return caller{sub: sub,
		wr:    waitingroomv1connect.NewWaitingRoomServiceClient(e.HTTP, e.URL, i),
		holds: bookingv1connect.NewHoldServiceClient(e.HTTP, e.URL, i),
		cat:   catalogv1connect.NewCatalogServiceClient(e.HTTP, e.URL, i)}
}

// show creates a seated show (rows × 4 seats) whose sale opens a minute
// after start, behind a waiting room when room is set.
func (e *env) show(t *testing.T, rows int, room *catalogv1.WaitingRoom) int64 {
	t.Helper()
	var labels []string
	for i := range rows {
		labels = append(labels, string(rune('A'+i)))
	}
	resp, err := e.as(t, "organiser", auth.RoleOperator).cat.CreateShow(context.Background(), connect.NewRequest(&catalogv1.CreateShowRequest{
		Kind: catalogv1.ShowKind_SHOW_KIND_CONCERT, Title: "On sale", Venue: "Bashundhara", Currency: "BDT", OrganizationId: "organisers",
		StartsAt: timestamppb.New(start.Add(30 * 24 * time.Hour)), OnSaleAt: timestamppb.New(start.Add(time.Minute)),
		Sections:           []*catalogv1.Section{{Name: "Main", Rows: labels, SeatsPerRow: 4, PriceMinor: 85000}},
		MaxSeatsPerAccount: 10, MaxSeatsPerHold: 10, WaitingRoom: room,
	}))
	require.NoError(t, err)
	return resp.Msg.GetShow().GetShowId()
}

// tick advances the clock by d and moves every room once.
func (e *env) tick(t *testing.T, d time.Duration) {
	t.Helper()
	e.clock.Advance(d)
	require.NoError(t, e.rooms.Tick(context.Background()))
}

func (e *env) sale(t *testing.T, show int64) *waitingroomv1.Sale {
	t.Helper()
	resp, err := e.as(t, "admin", auth.RoleAdmin).wr.GetSale(context.Background(),
		connect.NewRequest(&waitingroomv1.GetSaleRequest{ShowId: show}))
	require.NoError(t, err)
	return resp.Msg.GetSale()
}

func hold(c caller, show int64, queueToken string, seats ...string) (*bookingv1.Hold, error) {
	req := connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: seats})
	if queueToken != "" {
		req.Header().Set("Queue-Token", queueToken)
	}
	resp, err := c.holds.CreateHold(context.Background(), req)
	if err != nil {
		return nil, err
	}
	return resp.Msg.GetHold(), nil
}

// reason returns the code and the ErrorInfo reason of an error.
func reason(t *testing.T, err error) (connect.Code, string) {
	t.Helper()
	var ce *connect.Error
	require.True(t, errors.As(err, &ce), "want a connect error, got %v", err)
	for _, d := range ce.Details() {
		if v, derr := d.Value(); derr == nil {
			if info, ok := v.(*errdetails.ErrorInfo); ok {
				return ce.Code(), info.GetReason()
			}
		}
	}
	return ce.Code(), ""
}

// fieldOf returns the field an invalid_argument error names.
func fieldOf(t *testing.T, err error) string {
	t.Helper()
	var ce *connect.Error
	require.True(t, errors.As(err, &ce), "want a connect error, got %v", err)
	for _, d := range ce.Details() {
		if v, derr := d.Value(); derr == nil {
			if br, ok := v.(*errdetails.BadRequest); ok && len(br.GetFieldViolations()) > 0 {
				return br.GetFieldViolations()[0].GetField()
			}
		}
	}
	return ""
}

var enabled = &catalogv1.WaitingRoom{Enabled: true}

// 10,000 people who join before the opening get a uniformly random
// order at the opening instant, not their arrival order. Two statistics
// that any join-order bias breaks: Spearman's rank correlation between
// arrival and place (≈ N(0, 1/(n-1)) for a uniform shuffle; FIFO gives 1,
// a bias as mild as "the first tenth among the first half" about 0.04), and
// a chi-square test of the 10 × 10 table of arrival decile against place
// decile. The thresholds are four standard deviations (|ρ| < 0.04) and the
// 0.9999 quantile of χ²(81), so a correct lottery fails about once in ten
// thousand runs. Then: whoever joins after the draw queues at the end in
// arrival order, and joining twice never gives a second place.
func TestLotteryIsUniformAndLateArrivalsQueueInOrder(t *testing.T) {
	e := newEnv(t, waitingroom.Config{})
	show := e.show(t, 1, enabled)
	ctx := context.Background()
	const n = 10_000
	tokens := make([]string, n)
	for i := range n {
		st, err := e.rooms.Join(ctx, fmt.Sprintf("early-%05d", i), show)
		require.NoError(t, err)
		require.Zero(t, st.Place, "no place before the draw")
		require.Equal(t, waitingroom.StateScheduled, st.State)
		tokens[i] = st.Token
		e.clock.Advance(time.Millisecond) // arrival order is time order
	}
	again, err := e.rooms.Join(ctx, "early-00000", show)
	require.NoError(t, err)
	require.Zero(t, again.Place)

	e.clock.Set(start.Add(time.Minute)) // the opening instant
	places := make([]int64, n)
	seen := make(map[int64]bool, n)
	for i := range n {
		st, err := e.rooms.GetStatus(ctx, fmt.Sprintf("early-%05d", i), tokens[i])
		require.NoError(t, err)
		require.False(t, seen[st.Place], "place %d given twice", st.Place)
		require.True(t, st.Place >= 1 && st.Place <= n, "place %d", st.Place)
		seen[st.Place], places[i] = true, st.Place
	}
	// Spearman: arrival ranks 1..n against places 1..n (a permutation).
	var d2 float64
	for i, p := range places {
		d := float64(i+1) - float64(p)
		d2 += d * d
	}
	rho := 1 - 6*d2/(float64(n)*(float64(n)*float64(n)-1))
	limit := 4 / math.Sqrt(n-1)
	t.Logf("Spearman rho between arrival and place: %.4f (limit ±%.4f)", rho, limit)
	require.Less(t, math.Abs(rho), limit, "places follow arrival order")
	// Chi-square over deciles.
	var table [10][10]float64
	for i, p := range places {
		table[i*10/n][(p-1)*10/n]++
	}
	var chi2 float64
	for _, row := range table {
		for _, o := range row {
			chi2 += (o - n/100) * (o - n/100) / (n / 100)
		}
	}
	crit := chiSquareQuantile(81, 3.719) // z of 0.9999
	t.Logf("chi-square of arrival decile × place decile: %.1f (critical %.1f, df 81)", chi2, crit)
	require.Less(t, chi2, crit, "arrival decile predicts place decile")
	// Sanity: the same statistics do catch a biased order (FIFO).
	require.InDelta(t, 1, spearman(func(i int) int64 { return int64(i + 1) }, n), 1e-9)

	// Joining again after the draw keeps the drawn place.
	st, err := e.rooms.Join(ctx, "early-00042", show)
	require.NoError(t, err)
	require.Equal(t, places[42], st.Place)
	// Late arrivals: the end of the line, in arrival order.
	for i := range 200 {
		e.clock.Advance(time.Millisecond)
		st, err := e.rooms.Join(ctx, fmt.Sprintf("late-%03d", i), show)
		require.NoError(t, err)
		require.Equal(t, int64(n+i+1), st.Place)
		again, err := e.rooms.Join(ctx, fmt.Sprintf("late-%03d", i), show)
		require.NoError(t, err)
		require.Equal(t, st.Place, again.Place, "joining twice gives no second place")
	}
	require.EqualValues(t, n+200, e.sale(t, show).GetJoined())
}

func spearman(place func(int) int64, n int) float64 {
	var d2 float64
	for i := range n {
		d := float64(i+1) - float64(place(i))
		d2 += d * d
	}
	return 1 - 6*d2/(float64(n)*(float64(n)*float64(n)-1))
}

// chiSquareQuantile is the Wilson–Hilferty approximation of the χ²(df)
// quantile at the standard normal quantile z.
func chiSquareQuantile(df, z float64) float64 {
	a := 2 / (9 * df)
	return df * math.Pow(1-a+z*math.Sqrt(a), 3)
}

// admit joins subs before the opening, opens the sale and ticks until every
// one of them is admitted; it returns their admitted tokens.
func (e *env) admit(t *testing.T, show int64, subs ...string) map[string]string {
	t.Helper()
	ctx := context.Background()
	queue := map[string]string{}
	for _, s := range subs {
		st, err := e.rooms.Join(ctx, s, show)
		require.NoError(t, err)
		queue[s] = st.Token
	}
	if e.clock.Now().Before(start.Add(time.Minute)) {
		e.clock.Set(start.Add(time.Minute))
	}
	admitted := map[string]string{}
	for range 100 {
		e.tick(t, time.Second)
		for _, s := range subs {
			st, err := e.rooms.GetStatus(ctx, s, queue[s])
			require.NoError(t, err)
			if st.Admitted {
				admitted[s] = st.AdmittedToken
			}
		}
		if len(admitted) == len(subs) {
			return admitted
		}
	}
	t.Fatalf("only %d of %d admitted", len(admitted), len(subs))
	return nil
}

// while the room is active a hold needs the caller's own
// admitted token for that show; forged, altered, expired, other-caller,
// other-sale and not-yet-admitted tokens are refused with
// permission_denied and a reason; after the window a hold needs none. On a
// single Redis and on a Redis Cluster.
func TestHoldNeedsOwnAdmittedToken(t *testing.T) {
	for name, kind := range redisKinds {
		t.Run(name, func(t *testing.T) { holdNeedsOwnAdmittedToken(t, newEnvOnRedis(t, kind(t), 1, waitingroom.Config{})) })
	}
}

func holdNeedsOwnAdmittedToken(t *testing.T, e *env) {
	end := start.Add(2 * time.Hour)
	show := e.show(t, 3, &catalogv1.WaitingRoom{Enabled: true, EndsAt: timestamppb.New(end)})
	other := e.show(t, 1, enabled)
	calm := e.show(t, 1, nil)
	rumana, karim, sumi := e.as(t, "rumana", auth.RoleUser), e.as(t, "karim", auth.RoleUser), e.as(t, "sumi", auth.RoleUser)
	ctx := context.Background()
	sumiQueue, err := e.rooms.Join(ctx, "sumi", other) // waits in the other show's line
	require.NoError(t, err)
	tok := e.admit(t, show, "rumana", "karim")
	otherTok := e.admit(t, other, "rumana")

	refused := func(token, want string, seats ...string) {
		t.Helper()
		_, err := hold(rumana, show, token, seats...)
		code, why := reason(t, err)
		require.Equal(t, connect.CodePermissionDenied, code, "%v", err)
		require.Equal(t, want, why, "%v", err)
	}
	refused("", "QUEUE_TOKEN_REQUIRED", "A1")
	forged := tok["rumana"][:len(tok["rumana"])-2] + "AA"
	refused(forged, "QUEUE_TOKEN_INVALID", "A1")
	refused("qt_bm90IGEgdG9rZW4.AAAA", "QUEUE_TOKEN_INVALID", "A1")
	refused(tok["karim"], "QUEUE_TOKEN_WRONG_CALLER", "A1")
	refused(otherTok["rumana"], "QUEUE_TOKEN_WRONG_SALE", "A1")
	st, err := e.rooms.GetStatus(ctx, "sumi", sumiQueue.Token)
	require.NoError(t, err)
	_, err = hold(sumi, other, st.Token, "A1")
	code, why := reason(t, err)
	require.Equal(t, connect.CodePermissionDenied, code)
	require.Equal(t, "QUEUE_TOKEN_NOT_ADMITTED", why, "a queue token is not an admitted one")
	// Someone else's queue token is no use either.
	_, err = e.rooms.GetStatus(ctx, "karim", sumiQueue.Token)
	var we *fault.Error
	require.ErrorAs(t, err, &we)
	require.Equal(t, fault.QueueTokenWrongCaller, we.Reason)

	h, err := hold(rumana, show, tok["rumana"], "A1", "A2")
	require.NoError(t, err, "her own admitted token")
	require.Equal(t, []string{"A1", "A2"}, h.GetSeats())
	_, err = hold(karim, show, tok["karim"], "B1")
	require.NoError(t, err)
	_, err = hold(karim, calm, "", "A1")
	require.NoError(t, err, "a show without a room needs no token")

	// 15 minutes after admission the token is spent.
	e.clock.Advance(16 * time.Minute)
	refused(tok["rumana"], "QUEUE_TOKEN_EXPIRED", "A3")
	// After the window, no token is needed.
	e.clock.Set(end)
	_, err = hold(rumana, show, "", "A3")
	require.NoError(t, err, "the window has ended")
	_, err = hold(karim, show, "garbage", "A4")
	require.NoError(t, err, "after the window the header is ignored")
}

// the admission controller, through the real service. The seat
// database is made slow (a trigger that sleeps in every hold's INSERT);
// CreateHold's latency, measured by the API and shared in Redis, crosses
// the target and the admitter halves A. Without the trigger the holds are
// fast again and A climbs back to the room's maximum.
func TestAdmitterFollowsTheSeatDatabase(t *testing.T) {
	e := newEnv(t, waitingroom.Config{Controller: waitingroom.ControllerConfig{
		// Wide margins on both sides, so a busy test machine cannot make a
		// fast hold look slow: slow holds sleep 1.6 s (latency bucket
		// ≤ 2.5 s), fast ones need only finish within 1 s.
		TargetP99: 1500 * time.Millisecond, MinSamples: 1, Window: 5 * time.Second, Increase: 0.2}})
	// 80 seats: more than A, so availability does not bound it.
	show := e.show(t, 20, &catalogv1.WaitingRoom{Enabled: true, MinAdmissionRate: 2, MaxAdmissionRate: 50})
	var subs []string
	for i := range 6 {
		subs = append(subs, fmt.Sprintf("buyer-%d", i))
	}
	tok := e.admit(t, show, subs...)
	for range 10 {
		e.tick(t, time.Second)
	}
	require.Equal(t, 50.0, e.sale(t, show).GetAdmissionRate(), "a healthy database: A at the maximum")

	shard := e.App.Router.Shards()[0]
	ctx := context.Background()
	_, err := shard.Exec(ctx, `
		SET ROLE NONE;
		CREATE FUNCTION slow_hold() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(1.6); RETURN NEW; END $$;
		CREATE TRIGGER slow_hold BEFORE INSERT ON holds FOR EACH ROW EXECUTE FUNCTION slow_hold();
		SET ROLE seatghor_app;`)
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, s := range subs[:2] {
		wg.Go(func() { _, errs[i] = hold(e.as(t, s, auth.RoleUser), show, tok[s], fmt.Sprintf("A%d", i+1)) })
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	e.tick(t, time.Second)
	sale := e.sale(t, show)
	require.Equal(t, 25.0, sale.GetAdmissionRate(), "the database slowed down: A halved")
	require.Greater(t, sale.GetHoldP99().AsDuration(), 1500*time.Millisecond)

	_, err = shard.Exec(ctx, `SET ROLE NONE; DROP TRIGGER slow_hold ON holds; DROP FUNCTION slow_hold(); SET ROLE seatghor_app;`)
	require.NoError(t, err)
	e.clock.Advance(6 * time.Second) // the slow holds leave the window
	for i, s := range subs[2:] {
		_, err := hold(e.as(t, s, auth.RoleUser), show, tok[s], fmt.Sprintf("B%d", i+1))
		require.NoError(t, err)
	}
	e.tick(t, time.Second)
	sale = e.sale(t, show)
	require.Greater(t, sale.GetAdmissionRate(), 25.0, "fast again: A climbs back")
	require.LessOrEqual(t, sale.GetHoldP99().AsDuration(), time.Second)
	for range 5 {
		e.tick(t, time.Second)
	}
	require.Equal(t, 50.0, e.sale(t, show).GetAdmissionRate())
}

// when nothing is left to hold admission stops and the people in
// line are told so; a released hold reopens it.
func TestSoldOutStopsAdmissionAndReleasedHoldsReopenIt(t *testing.T) {
	e := newEnv(t, waitingroom.Config{})
	show := e.show(t, 1, &catalogv1.WaitingRoom{Enabled: true, MinAdmissionRate: 1, MaxAdmissionRate: 1})
	ctx := context.Background()
	queue := map[string]string{}
	for i := range 6 {
		s := fmt.Sprintf("fan-%d", i)
		st, err := e.rooms.Join(ctx, s, show)
		require.NoError(t, err)
		queue[s] = st.Token
	}
	e.clock.Set(start.Add(time.Minute))
	e.tick(t, 0)           // the draw
	e.tick(t, time.Second) // X = 1
	var first string
	for s, q := range queue {
		st, err := e.rooms.GetStatus(ctx, s, q)
		require.NoError(t, err)
		if st.Admitted {
			require.Empty(t, first, "one admitted per second")
			first = s
			queue[s] = st.AdmittedToken
		}
	}
	require.NotEmpty(t, first)
	h, err := hold(e.as(t, first, auth.RoleUser), show, queue[first], "A1", "A2", "A3", "A4")
	require.NoError(t, err)

	e.tick(t, time.Second)
	sale := e.sale(t, show)
	require.Equal(t, waitingroomv1.SaleState_SALE_STATE_SOLD_OUT, sale.GetState())
	require.True(t, sale.GetSoldOut())
	x := sale.GetAdmissionNumber()
	for range 5 {
		e.tick(t, time.Second)
	}
	require.Equal(t, x, e.sale(t, show).GetAdmissionNumber(), "admission stopped")
	for s, q := range queue {
		if s == first {
			continue
		}
		resp, err := e.as(t, s, auth.RoleUser).wr.GetStatus(ctx, connect.NewRequest(&waitingroomv1.GetStatusRequest{Token: q}))
		require.NoError(t, err)
		require.True(t, resp.Msg.GetSoldOut())
		require.Equal(t, waitingroomv1.SaleState_SALE_STATE_SOLD_OUT, resp.Msg.GetState())
		require.False(t, resp.Msg.GetAdmitted())
		require.Contains(t, resp.Msg.GetMessage(), "admission has stopped")
		require.Nil(t, resp.Msg.GetEstimatedWait(), "no made-up wait while stopped")
	}

	_, err = e.as(t, first, auth.RoleUser).holds.ReleaseHold(ctx, connect.NewRequest(&bookingv1.ReleaseHoldRequest{HoldId: h.GetHoldId()}))
	require.NoError(t, err)
	e.tick(t, time.Second)
	sale = e.sale(t, show)
	require.False(t, sale.GetSoldOut())
	require.Equal(t, waitingroomv1.SaleState_SALE_STATE_ADMITTING, sale.GetState())
	e.tick(t, time.Second)
	require.Greater(t, e.sale(t, show).GetAdmissionNumber(), x, "admission reopened")
}

// Operators see and steer their sale: pause stops X, resume restarts it,
// rate limits bound A; another operator may not touch it.
func TestOperatorsSteerTheSale(t *testing.T) {
	e := newEnv(t, waitingroom.Config{})
	show := e.show(t, 20, &catalogv1.WaitingRoom{Enabled: true, MinAdmissionRate: 10, MaxAdmissionRate: 10})
	ctx := context.Background()
	org := e.as(t, "organiser", auth.RoleOperator)
	_, err := e.as(t, "someone-else", auth.RoleOperator).wr.GetSale(ctx, connect.NewRequest(&waitingroomv1.GetSaleRequest{ShowId: show}))
	require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err))
	_, err = e.as(t, "rumana", auth.RoleUser).wr.GetSale(ctx, connect.NewRequest(&waitingroomv1.GetSaleRequest{ShowId: show}))
	require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err))

	for i := range 50 {
		_, err := e.rooms.Join(ctx, fmt.Sprintf("p-%d", i), show)
		require.NoError(t, err)
	}
	e.clock.Set(start.Add(time.Minute))
	e.tick(t, 0)
	e.tick(t, time.Second)
	resp, err := org.wr.GetSale(ctx, connect.NewRequest(&waitingroomv1.GetSaleRequest{ShowId: show}))
	require.NoError(t, err)
	s := resp.Msg.GetSale()
	require.Equal(t, waitingroomv1.SaleState_SALE_STATE_ADMITTING, s.GetState())
	require.EqualValues(t, 50, s.GetJoined())
	require.EqualValues(t, 10, s.GetAdmissionNumber(), "one second at 10/s")
	require.EqualValues(t, 40, s.GetWaiting())
	require.Equal(t, 4*time.Second, s.GetEstimatedWait().AsDuration())

	up, err := org.wr.UpdateSale(ctx, connect.NewRequest(&waitingroomv1.UpdateSaleRequest{ShowId: show, Paused: new(true)}))
	require.NoError(t, err)
	require.Equal(t, waitingroomv1.SaleState_SALE_STATE_PAUSED, up.Msg.GetSale().GetState())
	e.tick(t, time.Second)
	require.EqualValues(t, 10, e.sale(t, show).GetAdmissionNumber(), "paused")
	_, err = org.wr.UpdateSale(ctx, connect.NewRequest(&waitingroomv1.UpdateSaleRequest{ShowId: show, Paused: new(false),
		MinAdmissionRate: new(int32(2)), MaxAdmissionRate: new(int32(5))}))
	require.NoError(t, err)
	e.tick(t, time.Second)
	s = e.sale(t, show)
	require.EqualValues(t, 15, s.GetAdmissionNumber(), "resumed at the new maximum, 5/s")
	require.Equal(t, 5.0, s.GetAdmissionRate())
	_, err = org.wr.UpdateSale(ctx, connect.NewRequest(&waitingroomv1.UpdateSaleRequest{ShowId: show,
		MinAdmissionRate: new(int32(9)), MaxAdmissionRate: new(int32(3))}))
	require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err))
	end, err := org.wr.UpdateSale(ctx, connect.NewRequest(&waitingroomv1.UpdateSaleRequest{ShowId: show,
		EndsAt: timestamppb.New(e.clock.Now())}))
	require.NoError(t, err)
	require.Equal(t, waitingroomv1.SaleState_SALE_STATE_ENDED, end.Msg.GetSale().GetState())
	_, err = hold(e.as(t, "p-49", auth.RoleUser), show, "", "A1")
	require.NoError(t, err, "the operator ended the window")
}

// Joins race: the same caller joining many times at once, before and after
// the opening, holds one place; 200 callers joining at once after the draw
// get exactly the places n0+1 … n0+200, none twice, none skipped. On a
// single Redis and on a Redis Cluster.
func TestConcurrentJoins(t *testing.T) {
	for name, kind := range redisKinds {
		t.Run(name, func(t *testing.T) { concurrentJoins(t, newEnvOnRedis(t, kind(t), 1, waitingroom.Config{})) })
	}
}

func concurrentJoins(t *testing.T, e *env) {
	show := e.show(t, 1, enabled)
	ctx := context.Background()
	race := func(n int, sub func(int) string) []waitingroom.Status {
		t.Helper()
		out := make([]waitingroom.Status, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { out[i], errs[i] = e.rooms.Join(ctx, sub(i), show) })
		}
		wg.Wait()
		require.NoError(t, errors.Join(errs...))
		return out
	}
	race(50, func(int) string { return "eager" })
	race(50, func(i int) string { return fmt.Sprintf("early-%d", i) })
	e.clock.Set(start.Add(time.Minute))
	eager := race(50, func(int) string { return "eager" })
	for _, st := range eager {
		require.Equal(t, eager[0].Place, st.Place, "one caller, one place")
	}
	require.True(t, eager[0].Place >= 1 && eager[0].Place <= 51)
	late := race(200, func(i int) string { return fmt.Sprintf("late-%d", i) })
	seen := map[int64]bool{}
	for _, st := range late {
		require.False(t, seen[st.Place], "place %d twice", st.Place)
		seen[st.Place] = true
		require.True(t, st.Place > 51 && st.Place <= 251, "place %d", st.Place)
	}
	require.Len(t, seen, 200)
	require.EqualValues(t, 251, e.sale(t, show).GetJoined())
}

// The Queue-Token travels as gRPC metadata too.
func TestQueueTokenOverGRPC(t *testing.T) {
	e := newEnv(t, waitingroom.Config{})
	show := e.show(t, 1, enabled)
	tok := e.admit(t, show, "rumana")
	bearer := e.Token(t, "rumana", auth.RoleUser)
	c := bookingv1connect.NewHoldServiceClient(e.H2C, e.URL, connect.WithGRPC())
	call := func(queueToken, key string) error {
		req := connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"A1"}})
		req.Header().Set("Authorization", "Bearer "+bearer)
		req.Header().Set("Idempotency-Key", key)
		if queueToken != "" {
			req.Header().Set("Queue-Token", queueToken)
		}
		_, err := c.CreateHold(context.Background(), req)
		return err
	}
	code, why := reason(t, call("", "g1"))
	require.Equal(t, connect.CodePermissionDenied, code)
	require.Equal(t, "QUEUE_TOKEN_REQUIRED", why)
	require.NoError(t, call(tok["rumana"], "g2"))
}

// Without Redis (serve with no SEATGHOR_REDIS_URL) there are no waiting
// rooms: a show asking for one is refused, Join answers unavailable.
func TestWithoutRedisNoWaitingRooms(t *testing.T) {
	e := apptest.New(t, apptest.Options{Shards: 1})
	require.Nil(t, e.App.WaitingRooms)
	env := &env{Env: e}
	admin := env.as(t, "admin", auth.RoleAdmin)
	_, err := admin.cat.CreateShow(context.Background(), connect.NewRequest(&catalogv1.CreateShowRequest{
		Kind: catalogv1.ShowKind_SHOW_KIND_CONCERT, Title: "No door", Venue: "Hall", Currency: "BDT",
		StartsAt:    timestamppb.New(time.Now().Add(24 * time.Hour)),
		Sections:    []*catalogv1.Section{{Name: "Main", Rows: []string{"A"}, SeatsPerRow: 4, PriceMinor: 100}},
		WaitingRoom: enabled,
	}))
	require.Equal(t, connect.CodeFailedPrecondition, connect.CodeOf(err), "%v", err)
	_, err = admin.wr.Join(context.Background(), connect.NewRequest(&waitingroomv1.JoinRequest{ShowId: 1}))
	require.Equal(t, connect.CodeUnavailable, connect.CodeOf(err), "%v", err)
}

// Each purpose has its own key set (decision 0085): rotating the API's
// token keys (the new key first, then the old one removed) voids old API
// tokens only when the old key goes, and never a ticket code or a queue
// token, which the ticket and queue keys signed.
func TestRotatingTheTokenKeysVoidsNoTicketCodeOrQueueToken(t *testing.T) {
	ctx := context.Background()
	keys := func(s string) *keyset.Set {
		set, err := keyset.Parse(s)
		require.NoError(t, err)
		return set
	}
	tok1, tok2 := "tok1:"+strings.Repeat("1", 32), "tok2:"+strings.Repeat("2", 32)
	tickets, queue := keys("tik1:"+strings.Repeat("t", 32)), keys("q1:"+strings.Repeat("q", 32))
	r := redistest.New(t)
	clk := clock.NewFake(start)
	platform := func(tokenKeys string) *apptest.Env {
		return apptest.New(t, apptest.Options{Shards: 1, Clock: clk, RedisURL: r.URL, RedisPrefix: r.Prefix,
			TokenKeys: keys(tokenKeys), TicketKeys: tickets, QueueKeys: queue})
	}
	first := platform(tok1)
	first.Member(t, "organisers", "organiser", catalog.RoleManager)
	e := &env{Env: first, clock: clk, rooms: first.App.WaitingRooms}
	show := e.show(t, 1, &catalogv1.WaitingRoom{Enabled: true})
	sale, err := e.rooms.SaleOf(ctx, show)
	require.NoError(t, err)
	admitted := e.admit(t, show, "rumana")["rumana"]
	apiToken := e.Token(t, "rumana", auth.RoleUser)
	code := first.App.CheckIn.Codes().Sign(fmt.Sprintf("tkt_%d_0123456789abcdef_001", show), "A1")

	for _, step := range []struct {
		name, tokenKeys string
		oldTokenValid   bool
	}{
		{"new token key listed first", tok2 + "," + tok1, true},
		{"old token key removed", tok2, false},
	} {
		rotated := platform(step.tokenKeys)
		_, err := rotated.App.Tokens.Verify(apiToken)
		if step.oldTokenValid {
			require.NoError(t, err, step.name)
		} else {
			require.ErrorIs(t, err, auth.ErrInvalidToken, step.name)
		}
		p, err := rotated.App.Tokens.Verify(rotated.Token(t, "karim", auth.RoleUser))
		require.NoError(t, err, "%s: the new key signs", step.name)
		require.Equal(t, "karim", p.UserID)
		id, _, err := rotated.App.CheckIn.Codes().Verify(code)
		require.NoError(t, err, "%s: the printed ticket still scans", step.name)
		require.Contains(t, id, fmt.Sprintf("tkt_%d_", show))
		require.NoError(t, rotated.App.WaitingRooms.CheckAdmitted("rumana", show, sale, admitted),
			"%s: the admitted buyer keeps the place", step.name)
	}
}
