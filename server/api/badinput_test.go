package api_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/keyset"
)

// TestBadInput: every malformed request gets the right code and a message
// naming the problem, and nothing is written.
func TestBadInput(t *testing.T) {
	env := apptest.New(t, apptest.Options{})
	ctx := context.Background()
	seated := createShow(t, env, seatedShow("bad input", 2, 10))
	gaReq := seatedShow("ga", 1, 1)
	gaReq.Sections = nil
	gaReq.GaAreas = []*catalogv1.GaArea{{Name: "Floor", Capacity: 10}, {Name: "Balcony", Capacity: 5}}
	ga := createShow(t, env, gaReq)
	c := as(t, env, "rumana", auth.RoleUser)
	many := make([]string, 0, 11)
	for i := range 11 {
		many = append(many, "A"+string(rune('1'+i%9))+strings.Repeat("0", i/9))
	}

	tests := []struct {
		name string
		req  *bookingv1.CreateHoldRequest
		code connect.Code
		msg  string
	}{
		{"unknown show", &bookingv1.CreateHoldRequest{ShowId: 999999, Seats: []string{"A1"}}, connect.CodeNotFound, "show 999999 not found"},
		{"zero show", &bookingv1.CreateHoldRequest{ShowId: 0, Seats: []string{"A1"}}, connect.CodeInvalidArgument, "show_id"},
		{"unknown seats", &bookingv1.CreateHoldRequest{ShowId: seated.GetShowId(), Seats: []string{"A1", "Z99"}}, connect.CodeInvalidArgument, "no seats Z99"},
		{"malformed seat", &bookingv1.CreateHoldRequest{ShowId: seated.GetShowId(), Seats: []string{"a1"}}, connect.CodeInvalidArgument, "seats[0]"},
		{"duplicate seats", &bookingv1.CreateHoldRequest{ShowId: seated.GetShowId(), Seats: []string{"A1", "A1"}}, connect.CodeInvalidArgument, "seats"},
		{"too many seats", &bookingv1.CreateHoldRequest{ShowId: seated.GetShowId(), Seats: many}, connect.CodeInvalidArgument, "at most 10 seats"},
		{"neither seats nor quantity", &bookingv1.CreateHoldRequest{ShowId: seated.GetShowId()}, connect.CodeInvalidArgument, "either seats or"},
		{"both seats and quantity", &bookingv1.CreateHoldRequest{ShowId: seated.GetShowId(), Seats: []string{"A1"}, Quantity: proto.Int32(1)}, connect.CodeInvalidArgument, "either seats or"},
		{"zero quantity", &bookingv1.CreateHoldRequest{ShowId: ga.GetShowId(), GaArea: "Floor", Quantity: proto.Int32(0)}, connect.CodeInvalidArgument, "quantity"},
		{"negative quantity", &bookingv1.CreateHoldRequest{ShowId: ga.GetShowId(), GaArea: "Floor", Quantity: proto.Int32(-2)}, connect.CodeInvalidArgument, "quantity"},
		{"area omitted with two areas", &bookingv1.CreateHoldRequest{ShowId: ga.GetShowId(), Quantity: proto.Int32(1)}, connect.CodeInvalidArgument, "name one of: Floor, Balcony"},
		{"unknown area", &bookingv1.CreateHoldRequest{ShowId: ga.GetShowId(), GaArea: "Roof", Quantity: proto.Int32(1)}, connect.CodeInvalidArgument, `no general-admission area "Roof"`},
		// A quantity alone on a seated show is best available's (decision 0383).
		{"GA area on a seated show", &bookingv1.CreateHoldRequest{ShowId: seated.GetShowId(), GaArea: "Floor", Quantity: proto.Int32(1)}, connect.CodeInvalidArgument, "no general-admission areas"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.holds.CreateHold(ctx, connect.NewRequest(tt.req))
			require.Equal(t, tt.code, connect.CodeOf(err), "%v", err)
			require.Contains(t, err.Error(), tt.msg)
		})
	}
	require.Zero(t, countHolds(t, env, seated.GetShowId()))
	require.Zero(t, countHolds(t, env, ga.GetShowId()))

	t.Run("per-account cap", func(t *testing.T) {
		seats := []string{"B1", "B2", "B3", "B4", "B5", "B6", "B7", "B8"}
		_, err := c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: seated.GetShowId(), Seats: seats}))
		require.NoError(t, err)
		_, err = c.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: seated.GetShowId(), Seats: []string{"A1", "A2", "A3"}}))
		require.Equal(t, connect.CodeFailedPrecondition, connect.CodeOf(err), "%v", err)
		require.Contains(t, err.Error(), "at most 10 seats")
		require.Equal(t, 1, countHolds(t, env, seated.GetShowId()))
	})

	t.Run("auth", func(t *testing.T) {
		for name, header := range map[string]string{
			"missing token": "",
			"garbage token": "Bearer not-a-token",
			"wrong scheme":  "Basic cnVtYW5hOng=",
			"forged token":  "Bearer " + forged(t),
		} {
			t.Run(name, func(t *testing.T) {
				req := withKey(&bookingv1.CreateHoldRequest{ShowId: seated.GetShowId(), Seats: []string{"A9"}}, "auth-1")
				if header != "" {
					req.Header().Set("Authorization", header)
				}
				_, err := clientsFor(env.HTTP, env.URL).holds.CreateHold(ctx, req)
				require.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err), "%v", err)
			})
		}
		_, err := c.catalog.CreateShow(ctx, connect.NewRequest(seatedShow("not mine", 1, 1)))
		require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err), "users do not create shows")
	})

	t.Run("oversized request", func(t *testing.T) {
		body := `{"show_id": 1, "seats": ["` + strings.Repeat("A", 2<<20) + `"]}`
		req, err := http.NewRequest(http.MethodPost, env.URL+"/seatghor.booking.v1.HoldService/CreateHold", bytes.NewBufferString(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+env.Token(t, "rumana", auth.RoleUser))
		req.Header.Set(keyHeader, "big-1")
		resp, err := env.HTTP.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		require.Equal(t, http.StatusTooManyRequests, resp.StatusCode, string(b)) // resource_exhausted
		require.Contains(t, string(b), "resource_exhausted")
	})

	t.Run("bad show definitions", func(t *testing.T) {
		admin := as(t, env, "admin", auth.RoleAdmin)
		dupRows := seatedShow("dup rows", 1, 2)
		dupRows.Sections = append(dupRows.Sections, proto.CloneOf(dupRows.Sections[0]))
		noInventory := seatedShow("empty", 1, 1)
		noInventory.Sections = nil
		noRoute := seatedShow("bus", 1, 1)
		noRoute.Kind = catalogv1.ShowKind_SHOW_KIND_BUS_TRIP
		badShard := seatedShow("shard", 1, 1)
		badShard.Shard = proto.Int32(9)
		for name, tc := range map[string]struct {
			req *catalogv1.CreateShowRequest
			msg string
		}{
			"duplicate rows":    {dupRows, `row "A" appears twice`},
			"no inventory":      {noInventory, "at least one section"},
			"bus without route": {noRoute, "origin and destination"},
			"no such shard":     {badShard, "there are 4 shards"},
		} {
			t.Run(name, func(t *testing.T) {
				_, err := admin.catalog.CreateShow(ctx, connect.NewRequest(tc.req))
				require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err), "%v", err)
				require.Contains(t, err.Error(), tc.msg)
			})
		}
		var shows int
		require.NoError(t, env.App.Router.Catalog().QueryRow(ctx, `SELECT count(*) FROM shows`).Scan(&shows))
		require.Equal(t, 2, shows, "refused shows are not written")
	})
}

// forged returns a well-formed token signed with another secret.
func forged(t *testing.T) string {
	other, err := auth.NewTokens(keyset.FromSecret("not-the-server-secret", keyset.Tokens), time.Now)
	require.NoError(t, err)
	tok, err := other.Mint("rumana", auth.RoleAdmin, time.Hour)
	require.NoError(t, err)
	return tok
}
