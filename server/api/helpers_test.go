package api_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	"github.com/seatghor/seatghor/gen/seatghor/booking/v1/bookingv1connect"
	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/gen/seatghor/catalog/v1/catalogv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/counter/v1/counterv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/ledger/v1/ledgerv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/network/v1/networkv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/payment/v1/paymentv1connect"
	"github.com/seatghor/seatghor/gen/seatghor/seatmap/v1/seatmapv1connect"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/internal/testkit/miniotest"
	"github.com/seatghor/seatghor/internal/testkit/pgtest"
	"github.com/seatghor/seatghor/server/auth"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Cleanup()
	miniotest.Cleanup()
	os.Exit(code)
}

// clients are the API clients of one caller.
type clients struct {
	catalog catalogv1connect.CatalogServiceClient
	holds   bookingv1connect.HoldServiceClient
	orders  bookingv1connect.OrderServiceClient
	seatmap seatmapv1connect.SeatMapServiceClient
	pay     paymentv1connect.PaymentServiceClient
	ledger  ledgerv1connect.LedgerServiceClient
	network networkv1connect.NetworkServiceClient
	counter counterv1connect.CounterServiceClient
}

// keyHeader is set by tests that choose their own idempotency key; other
// writes get a fresh one from the interceptor.
const keyHeader = "Idempotency-Key"

// as returns clients that authenticate as sub with role and send a fresh
// idempotency key with every write that does not carry one.
func as(tb testing.TB, env *apptest.Env, sub string, role auth.Role, opts ...connect.ClientOption) clients {
	opts = append(opts, connect.WithInterceptors(tokenInterceptor(env.Token(tb, sub, role))))
	return clientsFor(env.HTTP, env.URL, opts...)
}

// tokenInterceptor is a client interceptor that sends token on every call, unary
// or streamed, and a fresh idempotency key on every unary write.
type tokenInterceptor string

func (b tokenInterceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		req.Header().Set("Authorization", "Bearer "+string(b))
		if req.Spec().IdempotencyLevel != connect.IdempotencyNoSideEffects && req.Header().Get(keyHeader) == "" {
			req.Header().Set(keyHeader, newKey())
		}
		return next(ctx, req)
	}
}

func (b tokenInterceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		conn := next(ctx, spec)
		conn.RequestHeader().Set("Authorization", "Bearer "+string(b))
		return conn
	}
}

func (b tokenInterceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}

func clientsFor(h connect.HTTPClient, url string, opts ...connect.ClientOption) clients {
	return clients{
		catalog: catalogv1connect.NewCatalogServiceClient(h, url, opts...),
		holds:   bookingv1connect.NewHoldServiceClient(h, url, opts...),
		orders:  bookingv1connect.NewOrderServiceClient(h, url, opts...),
		seatmap: seatmapv1connect.NewSeatMapServiceClient(h, url, opts...),
		pay:     paymentv1connect.NewPaymentServiceClient(h, url, opts...),
		ledger:  ledgerv1connect.NewLedgerServiceClient(h, url, opts...),
		network: networkv1connect.NewNetworkServiceClient(h, url, opts...),
		counter: counterv1connect.NewCounterServiceClient(h, url, opts...),
	}
}

func newKey() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// withKey returns a request carrying the given idempotency key.
func withKey[T any](msg *T, key string) *connect.Request[T] {
	req := connect.NewRequest(msg)
	req.Header().Set(keyHeader, key)
	return req
}

// rowsAZ returns n row labels A, B, … Z, AA, AB, ….
func rowsAZ(n int) []string {
	var rows []string
	for i := range n {
		label := string(rune('A' + i%26))
		if i >= 26 {
			label = string(rune('A'+i/26-1)) + label
		}
		rows = append(rows, label)
	}
	return rows
}

// seatedShow returns a show request with rows × perRow seats at 850 Tk.
func seatedShow(title string, rows, perRow int) *catalogv1.CreateShowRequest {
	return &catalogv1.CreateShowRequest{
		Kind: catalogv1.ShowKind_SHOW_KIND_CONCERT, Title: title, Venue: "Test Hall",
		StartsAt: timestamppb.New(time.Now().Add(30 * 24 * time.Hour)), Currency: "BDT",
		Sections: []*catalogv1.Section{{Name: "Main", Rows: rowsAZ(rows), SeatsPerRow: int32(perRow), PriceMinor: 85000}},
		HoldTtl:  durationpb.New(10 * time.Minute), MaxSeatsPerAccount: 10, MaxSeatsPerHold: 10,
	}
}

// createShow creates a show as an admin.
func createShow(tb testing.TB, env *apptest.Env, req *catalogv1.CreateShowRequest) *catalogv1.Show {
	tb.Helper()
	resp, err := as(tb, env, "admin", auth.RoleAdmin).catalog.CreateShow(context.Background(), connect.NewRequest(req))
	require.NoError(tb, err)
	return resp.Msg.GetShow()
}

// unavailable returns the SeatsUnavailable detail of an ABORTED error.
func unavailable(tb testing.TB, err error) *bookingv1.SeatsUnavailable {
	tb.Helper()
	var ce *connect.Error
	require.True(tb, errors.As(err, &ce), "want a connect error, got %v", err)
	require.Equal(tb, connect.CodeAborted, ce.Code(), "error: %v", err)
	for _, d := range ce.Details() {
		v, derr := d.Value()
		if su, ok := v.(*bookingv1.SeatsUnavailable); derr == nil && ok {
			return su
		}
	}
	tb.Fatalf("aborted error without SeatsUnavailable detail: %v", err)
	return nil
}

// notInChannel returns the SeatsUnavailable detail of a hold refused
// PERMISSION_DENIED with SEATS_NOT_IN_CHANNEL (decision 0325).
func notInChannel(tb testing.TB, err error) *bookingv1.SeatsUnavailable {
	tb.Helper()
	a := answerOf(tb, err)
	require.Equal(tb, connect.CodePermissionDenied, a.code, "error: %v", err)
	require.Equal(tb, "SEATS_NOT_IN_CHANNEL", a.reason, "error: %v", err)
	var ce *connect.Error
	require.True(tb, errors.As(err, &ce))
	for _, d := range ce.Details() {
		v, derr := d.Value()
		if su, ok := v.(*bookingv1.SeatsUnavailable); derr == nil && ok {
			return su
		}
	}
	tb.Fatalf("SEATS_NOT_IN_CHANNEL without SeatsUnavailable detail: %v", err)
	return nil
}

// refusedSeat returns the reason and the detail of a seated hold refused
// either way a seat is refused: taken (SEATS_UNAVAILABLE) or not sold
// through the caller's channel (SEATS_NOT_IN_CHANNEL).
func refusedSeat(tb testing.TB, err error) (string, *bookingv1.SeatsUnavailable) {
	tb.Helper()
	if answerOf(tb, err).reason == "SEATS_NOT_IN_CHANNEL" {
		return "SEATS_NOT_IN_CHANNEL", notInChannel(tb, err)
	}
	return "SEATS_UNAVAILABLE", unavailable(tb, err)
}
