package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
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
	paymentv1 "github.com/seatghor/seatghor/gen/seatghor/payment/v1"
	"github.com/seatghor/seatghor/gen/seatghor/payment/v1/paymentv1connect"
	waitingroomv1 "github.com/seatghor/seatghor/gen/seatghor/waitingroom/v1"
	"github.com/seatghor/seatghor/gen/seatghor/waitingroom/v1/waitingroomv1connect"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/internal/testkit/pgtest"
	"github.com/seatghor/seatghor/internal/testkit/redistest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/partner"
	"github.com/seatghor/seatghor/server/ratelimit"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Cleanup()
	redistest.Cleanup()
	os.Exit(code)
}

func TestParseLimit(t *testing.T) {
	for in, want := range map[string]ratelimit.Limit{
		"20/1m,10": {Rate: 20, Per: time.Minute, Burst: 10},
		"20/m":     {Rate: 20, Per: time.Minute, Burst: 20},
		" 5/10s ":  {Rate: 5, Per: 10 * time.Second, Burst: 5},
		"off":      {},
	} {
		got, err := ratelimit.ParseLimit(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "20", "x/1m", "20/1m,0", "20/fortnight", "-1/1m"} {
		_, err := ratelimit.ParseLimit(bad)
		require.Error(t, err, bad)
	}
}

type platform struct {
	*apptest.Env
	show, other int64
}

func start(t *testing.T, cfg ratelimit.Config) platform {
	return startOn(t, redistest.New(t), cfg)
}

// startOn is start on the given Redis.
func startOn(t *testing.T, r *redistest.Server, cfg ratelimit.Config) platform {
	e := apptest.New(t, apptest.Options{Shards: 1, RedisURL: r.URL, RedisPrefix: r.Prefix, RateLimits: cfg})
	p := platform{Env: e}
	cat := catalogv1connect.NewCatalogServiceClient(e.HTTP, e.URL, bearer(t, e, "admin", auth.RoleAdmin))
	for _, id := range []*int64{&p.show, &p.other} {
		resp, err := cat.CreateShow(context.Background(), connect.NewRequest(&catalogv1.CreateShowRequest{
			Kind: catalogv1.ShowKind_SHOW_KIND_CONCERT, Title: "Limits", Venue: "Hall", Currency: "BDT",
			StartsAt:           timestamppb.New(time.Now().Add(30 * 24 * time.Hour)),
			Sections:           []*catalogv1.Section{{Name: "Main", Rows: []string{"A", "B", "C", "D"}, SeatsPerRow: 12, PriceMinor: 100}},
			MaxSeatsPerAccount: 100, MaxSeatsPerHold: 10,
		}))
		require.NoError(t, err)
		*id = resp.Msg.GetShow().GetShowId()
	}
	return p
}

func bearer(t *testing.T, e *apptest.Env, sub string, role auth.Role) connect.ClientOption {
	tok := e.Token(t, sub, role)
	return connect.WithInterceptors(connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			req.Header().Set("Authorization", "Bearer "+tok)
			req.Header().Set("Idempotency-Key", fmt.Sprintf("%d", time.Now().UnixNano()))
			return next(ctx, req)
		}
	}))
}

func (p platform) holds(t *testing.T, sub string, role auth.Role) bookingv1connect.HoldServiceClient {
	return bookingv1connect.NewHoldServiceClient(p.HTTP, p.URL, bearer(t, p.Env, sub, role))
}

func hold(c bookingv1connect.HoldServiceClient, show int64, seat string) error {
	_, err := c.CreateHold(context.Background(), connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{seat}}))
	return err
}

// retryAfter checks a refusal and returns its RetryInfo delay.
func retryAfter(t *testing.T, err error) time.Duration {
	t.Helper()
	var ce *connect.Error
	require.True(t, errors.As(err, &ce), "%v", err)
	require.Equal(t, connect.CodeResourceExhausted, ce.Code(), "%v", err)
	require.NotEmpty(t, ce.Meta().Get("Retry-After"))
	for _, d := range ce.Details() {
		if v, derr := d.Value(); derr == nil {
			if ri, ok := v.(*errdetails.RetryInfo); ok {
				return ri.GetRetryDelay().AsDuration()
			}
		}
	}
	t.Fatalf("no RetryInfo in %v", err)
	return 0
}

// A burst of holds from one caller, all at once: exactly the burst passes
// (GCRA in Redis is one atomic step per call), the rest get
// resource_exhausted with a retry delay; another caller is not affected,
// and a partner key has its own, larger allowance. On a single Redis and
// on a Redis Cluster (decision 0200: each count is one key, so GCRA's
// script needs no hash tag).
func TestHoldBurstIsLimitedPerCaller(t *testing.T) {
	for name, r := range map[string]func(testing.TB) *redistest.Server{
		"redis-server":  redistest.New,
		"redis-cluster": redistest.NewCluster,
	} {
		t.Run(name, func(t *testing.T) {
			holdBurstIsLimitedPerCaller(t, startOn(t, r(t), ratelimit.Config{
				Holds:        ratelimit.Limit{Rate: 3, Per: time.Hour, Burst: 3},
				PartnerHolds: ratelimit.Limit{Rate: 6, Per: time.Hour, Burst: 6},
			}))
		})
	}
}

func holdBurstIsLimitedPerCaller(t *testing.T, p platform) {
	rumana := p.holds(t, "rumana", auth.RoleUser)
	var wg sync.WaitGroup
	errs := make([]error, 12)
	for i := range errs {
		wg.Go(func() { errs[i] = hold(rumana, p.show, fmt.Sprintf("A%d", i+1)) })
	}
	wg.Wait()
	passed, exhausted, minDelay := 0, 0, time.Hour
	for _, err := range errs {
		if connect.CodeOf(err) == connect.CodeResourceExhausted {
			exhausted++
			minDelay = min(minDelay, retryAfter(t, err))
			continue
		}
		require.NoError(t, err)
		passed++
	}
	require.Equal(t, 3, passed)
	require.Equal(t, 9, exhausted)
	require.Greater(t, minDelay, 10*time.Minute, "3 an hour: the next in about 20 minutes")

	require.NoError(t, hold(p.holds(t, "karim", auth.RoleUser), p.show, "B1"), "karim has his own allowance")
	// A partner token names its partner (decision 0326).
	pa, err := p.App.Partners.CreatePartner(context.Background(), "admin", partner.Partner{Name: "Reseller", SellsEveryShow: true})
	require.NoError(t, err)
	reseller := bookingv1connect.NewHoldServiceClient(p.HTTP, p.URL, credential(p.PartnerToken(t, "reseller", pa.ID)))
	for i := range 6 {
		require.NoError(t, hold(reseller, p.show, fmt.Sprintf("C%d", i+1)), "partner hold %d", i+1)
	}
	retryAfter(t, hold(reseller, p.show, "C7"))
}

// The per-sale cap counts one caller's holds in one sale only; REST
// answers 429 with a Retry-After header.
func TestSaleCapAndRESTRetryAfter(t *testing.T) {
	p := start(t, ratelimit.Config{SaleHolds: ratelimit.Limit{Rate: 2, Per: time.Hour, Burst: 2}})
	sumi := p.holds(t, "sumi", auth.RoleUser)
	require.NoError(t, hold(sumi, p.show, "A1"))
	require.NoError(t, hold(sumi, p.show, "A2"))
	retryAfter(t, hold(sumi, p.show, "A3"))
	require.NoError(t, hold(sumi, p.other, "A1"), "another sale")

	req, err := http.NewRequest(http.MethodPost, p.URL+"/v1/holds", strings.NewReader(fmt.Sprintf(`{"show_id": %d, "seats": ["A4"]}`, p.show)))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+p.Token(t, "sumi", auth.RoleUser))
	req.Header.Set("Idempotency-Key", "rest-1")
	resp, err := p.HTTP.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	require.NotEmpty(t, resp.Header.Get("Retry-After"))
}

// A sale of several shows (decision 0034) is one sale for the cap: holds
// in any of its shows count together.
func TestSaleCapCountsEveryShowOfASale(t *testing.T) {
	p := start(t, ratelimit.Config{SaleHolds: ratelimit.Limit{Rate: 2, Per: time.Hour, Burst: 2}})
	ctx := context.Background()
	admin := bearer(t, p.Env, "admin", auth.RoleAdmin)
	cat := catalogv1connect.NewCatalogServiceClient(p.HTTP, p.URL, admin)
	var tour [2]int64
	for i := range tour {
		resp, err := cat.CreateShow(ctx, connect.NewRequest(&catalogv1.CreateShowRequest{
			Kind: catalogv1.ShowKind_SHOW_KIND_CONCERT, Title: "Tour", Venue: "Hall", Currency: "BDT",
			StartsAt:           timestamppb.New(time.Now().Add(time.Duration(30+i) * 24 * time.Hour)),
			Sections:           []*catalogv1.Section{{Name: "Main", Rows: []string{"A"}, SeatsPerRow: 4, PriceMinor: 100}},
			MaxSeatsPerAccount: 10, MaxSeatsPerHold: 10,
			// The first show opens the room (SaleId 0); the second joins it.
			WaitingRoom: &catalogv1.WaitingRoom{Enabled: true, SaleId: tour[0]},
		}))
		require.NoError(t, err)
		tour[i] = resp.Msg.GetShow().GetShowId()
	}
	// End the window, so the holds need no Queue-Token; the sale stays one.
	_, err := waitingroomv1connect.NewWaitingRoomServiceClient(p.HTTP, p.URL, admin).UpdateSale(ctx,
		connect.NewRequest(&waitingroomv1.UpdateSaleRequest{ShowId: tour[0], EndsAt: timestamppb.Now()}))
	require.NoError(t, err)

	sumi := p.holds(t, "sumi", auth.RoleUser)
	require.NoError(t, hold(sumi, tour[0], "A1"))
	require.NoError(t, hold(sumi, tour[1], "A1"))
	retryAfter(t, hold(sumi, tour[0], "A2"))
	retryAfter(t, hold(sumi, tour[1], "A2"))
	require.NoError(t, hold(sumi, p.show, "A1"), "a show outside the sale")
}

// payment attempts are limited before anything else is looked at.
func TestPaymentAttemptsAreLimited(t *testing.T) {
	p := start(t, ratelimit.Config{Payments: ratelimit.Limit{Rate: 2, Per: time.Hour, Burst: 2}})
	pay := paymentv1connect.NewPaymentServiceClient(p.HTTP, p.URL, bearer(t, p.Env, "rumana", auth.RoleUser))
	try := func() error {
		_, err := pay.StartPayment(context.Background(), connect.NewRequest(&paymentv1.StartPaymentRequest{OrderId: "ord_1_none"}))
		return err
	}
	for range 2 {
		require.NotEqual(t, connect.CodeResourceExhausted, connect.CodeOf(try()))
	}
	retryAfter(t, try())
}

// credential returns a client option that sends a bearer credential (a
// token or an API key) and a fresh idempotency key.
func credential(secret string) connect.ClientOption {
	return connect.WithInterceptors(connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			req.Header().Set("Authorization", "Bearer "+secret)
			req.Header().Set("Idempotency-Key", fmt.Sprintf("%d", time.Now().UnixNano()))
			return next(ctx, req)
		}
	}))
}

// A partner's API keys and its staff's tokens share the partner's limit,
// so making more keys buys no more calls; another partner counts apart.
func TestPartnerKeysShareThePartnersLimit(t *testing.T) {
	p := start(t, ratelimit.Config{PartnerHolds: ratelimit.Limit{Rate: 4, Per: time.Hour, Burst: 4}})
	ctx := context.Background()
	newPartner := func(name string) int64 {
		pa, err := p.App.Partners.CreatePartner(ctx, "admin", partner.Partner{Name: name, SellsEveryShow: true})
		require.NoError(t, err)
		return pa.ID
	}
	newKey := func(partnerID int64) bookingv1connect.HoldServiceClient {
		_, secret, err := p.App.Partners.CreateKey(ctx, "admin", partner.NewKey{PartnerID: partnerID})
		require.NoError(t, err)
		return bookingv1connect.NewHoldServiceClient(p.HTTP, p.URL, credential(secret))
	}
	agency, bank := newPartner("Agency"), newPartner("Bank")
	tok, err := p.App.Tokens.MintPrincipal(auth.Principal{UserID: "agency-staff", Role: auth.RolePartner, PartnerID: agency}, time.Hour)
	require.NoError(t, err)
	callers := []bookingv1connect.HoldServiceClient{newKey(agency), newKey(agency),
		bookingv1connect.NewHoldServiceClient(p.HTTP, p.URL, credential(tok))}
	for i := range 4 {
		require.NoError(t, hold(callers[i%len(callers)], p.show, fmt.Sprintf("D%d", i+1)), "agency hold %d", i+1)
	}
	for i, c := range callers {
		retryAfter(t, hold(c, p.show, fmt.Sprintf("D%d", 5+i)))
	}
	require.NoError(t, hold(newKey(bank), p.show, "D9"), "the bank has its own allowance")
}
