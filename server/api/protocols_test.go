package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	seatmapv1 "github.com/seatghor/seatghor/gen/seatghor/seatmap/v1"
	ticketsv1 "github.com/seatghor/seatghor/gen/seatghor/tickets/v1"
	"github.com/seatghor/seatghor/gen/seatghor/tickets/v1/ticketsv1connect"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
)

// TestProtocols: the same calls over Connect JSON, Connect binary, gRPC,
// gRPC-Web and the REST routes.
func TestProtocols(t *testing.T) {
	env := apptest.New(t, apptest.Options{})
	show := createShow(t, env, seatedShow("protocols", 5, 10))
	id := show.GetShowId()
	ctx := context.Background()

	rpc := []struct {
		name string
		c    clients
		row  string
	}{
		{"connect json", as(t, env, "u-json", auth.RoleUser, connect.WithProtoJSON()), "A"},
		{"connect binary", as(t, env, "u-bin", auth.RoleUser), "B"},
		{"grpc", clientsWithHTTP(t, env, env.H2C, "u-grpc", connect.WithGRPC()), "C"},
		{"grpc-web", as(t, env, "u-web", auth.RoleUser, connect.WithGRPCWeb()), "D"},
	}
	for _, p := range rpc {
		t.Run(p.name, func(t *testing.T) {
			hold, err := p.c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{
				ShowId: id, Seats: []string{p.row + "1", p.row + "2"}}))
			require.NoError(t, err)
			require.EqualValues(t, 170000, hold.Msg.GetHold().GetAmount().GetAmountMinor())
			_, err = p.c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{
				ShowId: id, Seats: []string{p.row + "2", p.row + "3"}}))
			require.Equal(t, []string{p.row + "2"}, unavailable(t, err).GetSeats())
			order, err := p.c.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{
				HoldId: hold.Msg.GetHold().GetHoldId()}))
			require.NoError(t, err)
			require.Equal(t, bookingv1.OrderStatus_ORDER_STATUS_PENDING_PAYMENT, order.Msg.GetOrder().GetStatus())
			m, err := p.c.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: id}))
			require.NoError(t, err)
			require.NotContains(t, freeSeats(m.Msg), p.row+"1")
		})
	}

	t.Run("grpc health", func(t *testing.T) {
		req, err := http.NewRequest(http.MethodPost, env.URL+"/grpc.health.v1.Health/Check", strings.NewReader(`{"service": "seatghor.booking.v1.HoldService"}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		resp, err := env.HTTP.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		require.Contains(t, string(b), "SERVING")
	})

	t.Run("rest", func(t *testing.T) {
		user := env.Token(t, "u-rest", auth.RoleUser)
		other := env.Token(t, "u-rest-2", auth.RoleUser)
		do := func(method, path, token, body string) (int, map[string]any) {
			req, err := http.NewRequest(method, env.URL+path, strings.NewReader(body))
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+token)
			if method == http.MethodPost {
				req.Header.Set(keyHeader, newKey())
			}
			resp, err := env.HTTP.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			var out map[string]any
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
			return resp.StatusCode, out
		}
		sid := strconv.FormatInt(id, 10)
		code, hold := do(http.MethodPost, "/v1/holds", user, `{"show_id": `+sid+`, "seats": ["E1", "E2"]}`)
		require.Equal(t, http.StatusOK, code, "%v", hold)
		holdID, _ := hold["hold_id"].(string)
		require.NotEmpty(t, holdID, "REST answers use proto names: %v", hold)
		require.NotEmpty(t, hold["expires_at"])

		code, conflict := do(http.MethodPost, "/v1/holds", other, `{"show_id": `+sid+`, "seats": ["E2", "E3"]}`)
		require.Equal(t, http.StatusConflict, code, "%v", conflict)
		require.EqualValues(t, connect.CodeAborted, conflict["code"])
		var seats any
		for _, d := range conflict["details"].([]any) {
			if d := d.(map[string]any); d["@type"] == "type.googleapis.com/seatghor.booking.v1.SeatsUnavailable" {
				seats = d["seats"]
			}
		}
		require.Contains(t, seats, "E2", "%v", conflict)

		code, got := do(http.MethodGet, "/v1/holds/"+holdID, user, "")
		require.Equal(t, http.StatusOK, code, "%v", got)
		require.Equal(t, holdID, got["hold_id"])
		code, _ = do(http.MethodGet, "/v1/holds/"+holdID, other, "")
		require.Equal(t, http.StatusNotFound, code, "someone else's hold")

		code, order := do(http.MethodPost, "/v1/orders", user, `{"hold_id": "`+holdID+`"}`)
		require.Equal(t, http.StatusOK, code, "%v", order)
		require.Equal(t, "ORDER_STATUS_PENDING_PAYMENT", order["status"])

		code, m := do(http.MethodGet, "/v1/shows/"+sid+"/seatmap", user, "")
		require.Equal(t, http.StatusOK, code, "%v", m)
		require.EqualValues(t, 50, m["seat_count"])
	})
}

// clientsWithHTTP returns clients of sub over the given HTTP client.
func clientsWithHTTP(t *testing.T, env *apptest.Env, h *http.Client, sub string, opts ...connect.ClientOption) clients {
	c := *env
	c.HTTP = h
	return as(t, &c, sub, auth.RoleUser, opts...)
}

// TestOperationalEndpoints: /readyz pings every database; /metrics, on the
// admin listener, has the per-RPC latency and the per-database statement
// counters.
func TestOperationalEndpoints(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 2})
	createShow(t, env, seatedShow("ops", 1, 2))
	get := func(path string) (int, string) {
		base := env.URL
		if path == "/metrics" {
			base = env.AdminURL
		}
		resp, err := env.HTTP.Get(base + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	code, body := get("/readyz")
	require.Equal(t, http.StatusOK, code)
	require.JSONEq(t, `{"catalog":"ok","shard-0":"ok","shard-1":"ok"}`, body)
	code, body = get("/metrics")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `seatghor_rpc_duration_seconds_count{code="ok",procedure="/seatghor.catalog.v1.CatalogService/CreateShow"} 1`)
	require.Contains(t, body, `seatghor_db_statements_total{database="shard-1"}`)
}

// TestDeclaredServices: a read service whose read model is not configured
// (here "my tickets" without a read database) is in the API and answers
// unavailable, after authentication and validation like the rest.
func TestDeclaredServices(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 1})
	token := env.Token(t, "rumana", auth.RoleUser)
	tickets := ticketsv1connect.NewTicketServiceClient(env.HTTP, env.URL)
	req := connect.NewRequest(&ticketsv1.ListMyTicketsRequest{})
	req.Header().Set("Authorization", "Bearer "+token)
	_, err := tickets.ListMyTickets(context.Background(), req)
	require.Equal(t, connect.CodeUnavailable, connect.CodeOf(err), "%v", err)
	_, err = tickets.ListMyTickets(context.Background(), connect.NewRequest(&ticketsv1.ListMyTicketsRequest{}))
	require.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err))
}

// TestHealthReportsDegradedParts: a part the platform can sell without (the
// Redis of the seat maps) is reported degraded while /readyz stays 200; a
// database of the router that fails makes it 503.
func TestHealthReportsDegradedParts(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 1, RedisURL: "redis://127.0.0.1:1/0"})
	health := func() (int, map[string]string) {
		resp, err := env.HTTP.Get(env.URL + "/readyz")
		require.NoError(t, err)
		defer resp.Body.Close()
		var m map[string]string
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&m))
		return resp.StatusCode, m
	}
	code, status := health()
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, map[string]string{"catalog": "ok", "shard-0": "ok", "redis": "degraded"}, status)

	env.App.Router.Shards()[0].Close() // the shard's pool is gone
	code, status = health()
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Equal(t, "unreachable", status["shard-0"])
}

// TestPublicReads: the static seat layout and trip search are the
// same for everyone, so they answer without a token (an edge may cache
// them); a token that is sent is still checked, and everything else needs
// one.
func TestPublicReads(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 1})
	show := createShow(t, env, seatedShow("public", 1, 4))
	ctx := context.Background()
	anonymous := clientsFor(env.HTTP, env.URL)
	layout, err := anonymous.seatmap.GetSeatLayout(ctx, connect.NewRequest(&seatmapv1.GetSeatLayoutRequest{ShowId: show.GetShowId()}))
	require.NoError(t, err)
	require.EqualValues(t, 4, layout.Msg.GetSeatCount())
	_, err = anonymous.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: show.GetShowId()}))
	require.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err), "availability needs a signed-in caller")

	forged := clientsFor(env.HTTP, env.URL, connect.WithInterceptors(connect.UnaryInterceptorFunc(
		func(next connect.UnaryFunc) connect.UnaryFunc {
			return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
				req.Header().Set("Authorization", "Bearer not-a-token")
				return next(ctx, req)
			}
		})))
	_, err = forged.seatmap.GetSeatLayout(ctx, connect.NewRequest(&seatmapv1.GetSeatLayoutRequest{ShowId: show.GetShowId()}))
	require.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err), "a bad token is refused even where none is needed")
}
