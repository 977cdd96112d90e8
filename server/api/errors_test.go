package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	ledgerv1 "github.com/seatghor/seatghor/gen/seatghor/ledger/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/api"
	"github.com/seatghor/seatghor/server/auth"
)

// answer is what a client acts on: the code, the ErrorInfo reason (and its
// domain), the fields a BadRequest names, and the other details.
type answer struct {
	code   connect.Code
	reason string
	fields []string
	other  []string
}

func answerOf(tb testing.TB, err error) answer {
	tb.Helper()
	var ce *connect.Error
	require.True(tb, errors.As(err, &ce), "want a connect error, got %v", err)
	a := answer{code: ce.Code()}
	for _, d := range ce.Details() {
		v, derr := d.Value()
		require.NoError(tb, derr)
		switch v := v.(type) {
		case *errdetails.ErrorInfo:
			require.Equal(tb, api.ErrorDomain, v.GetDomain())
			require.Empty(tb, a.reason, "one ErrorInfo: %v", err)
			a.reason = v.GetReason()
		case *errdetails.BadRequest:
			for _, f := range v.GetFieldViolations() {
				a.fields = append(a.fields, f.GetField())
			}
		default:
			a.other = append(a.other, d.Type())
		}
	}
	return a
}

// TestErrorsCarryAReasonAndTheFieldsAtFault: every refusal carries its code,
// an ErrorInfo reason of the one domain, and a BadRequest naming the fields
// at fault — protovalidate's rules in the same shape as the domain's —
// besides its own details, over Connect and REST alike.
func TestErrorsCarryAReasonAndTheFieldsAtFault(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 1})
	ctx := context.Background()
	show := createShow(t, env, seatedShow("errors", 1, 4))
	c := as(t, env, "rumana", auth.RoleUser)
	other := as(t, env, "nila", auth.RoleUser)
	_, err := other.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show.GetShowId(), Seats: []string{"A2"}}))
	require.NoError(t, err)

	hold := func(cl clients, req *bookingv1.CreateHoldRequest) error {
		_, err := cl.holds.CreateHold(ctx, connect.NewRequest(req))
		return err
	}
	for name, tc := range map[string]struct {
		err  error
		want answer
	}{
		"protovalidate": {hold(c, &bookingv1.CreateHoldRequest{ShowId: show.GetShowId(), Seats: []string{"a1"}}),
			answer{connect.CodeInvalidArgument, "INVALID_ARGUMENT", []string{"seats[0]"}, nil}},
		"domain field": {hold(c, &bookingv1.CreateHoldRequest{ShowId: show.GetShowId(), Seats: []string{"Z9"}}),
			answer{connect.CodeInvalidArgument, "BOOKING_INVALID", []string{"seats"}, nil}},
		"taken seat": {hold(c, &bookingv1.CreateHoldRequest{ShowId: show.GetShowId(), Seats: []string{"A2"}}),
			answer{connect.CodeAborted, "SEATS_UNAVAILABLE", nil, []string{"seatghor.booking.v1.SeatsUnavailable"}}},
		// A hold on a show that does not exist says so (issue 29).
		"no such show": {hold(c, &bookingv1.CreateHoldRequest{ShowId: 999999, Seats: []string{"A1"}}),
			answer{connect.CodeNotFound, "SHOW_NOT_FOUND", nil, nil}},
		"no token": {hold(clientsFor(env.HTTP, env.URL), &bookingv1.CreateHoldRequest{ShowId: show.GetShowId(), Seats: []string{"A1"}}),
			answer{connect.CodeUnauthenticated, "UNAUTHENTICATED", nil, nil}},
		"role": {func() error {
			_, err := c.ledger.GetTrialBalance(ctx, connect.NewRequest(&ledgerv1.GetTrialBalanceRequest{}))
			return err
		}(), answer{connect.CodePermissionDenied, "PERMISSION_DENIED", nil, nil}},
	} {
		t.Run(name, func(t *testing.T) {
			require.Equal(t, tc.want, answerOf(t, tc.err), "%v", tc.err)
		})
	}

	t.Run("idempotency key", func(t *testing.T) {
		req := connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show.GetShowId(), Seats: []string{"A1"}})
		req.Header().Set("Authorization", "Bearer "+env.Token(t, "rumana", auth.RoleUser))
		_, err := clientsFor(env.HTTP, env.URL).holds.CreateHold(ctx, req)
		require.Equal(t, answer{connect.CodeInvalidArgument, "IDEMPOTENCY_KEY_MISSING", []string{"Idempotency-Key"}, nil},
			answerOf(t, err), "%v", err)
	})

	t.Run("rest", func(t *testing.T) {
		r, err := http.NewRequest(http.MethodPost, env.URL+"/v1/holds",
			strings.NewReader(`{"show_id": "`+itoa(show.GetShowId())+`", "seats": ["a1"]}`))
		require.NoError(t, err)
		r.Header.Set("Authorization", "Bearer "+env.Token(t, "rumana", auth.RoleUser))
		r.Header.Set(keyHeader, newKey())
		resp, err := env.HTTP.Do(r)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusBadRequest, resp.StatusCode)
		got := restAnswer(t, resp.Body)
		require.Equal(t, answer{connect.CodeInvalidArgument, "INVALID_ARGUMENT", []string{"seats[0]"}, nil}, got)
	})
}

// restAnswer reads a REST error body (a google.rpc.Status in JSON).
func restAnswer(tb testing.TB, body io.Reader) answer {
	tb.Helper()
	var st struct {
		Code    int `json:"code"`
		Details []struct {
			Type            string `json:"@type"`
			Reason          string `json:"reason"`
			Domain          string `json:"domain"`
			FieldViolations []struct {
				Field string `json:"field"`
			} `json:"field_violations"`
		} `json:"details"`
	}
	b, err := io.ReadAll(body)
	require.NoError(tb, err)
	require.NoError(tb, json.Unmarshal(b, &st), "%s", b)
	a := answer{code: connect.Code(st.Code)}
	for _, d := range st.Details {
		switch d.Type {
		case "type.googleapis.com/google.rpc.ErrorInfo":
			require.Equal(tb, api.ErrorDomain, d.Domain)
			a.reason = d.Reason
		case "type.googleapis.com/google.rpc.BadRequest":
			for _, f := range d.FieldViolations {
				a.fields = append(a.fields, f.Field)
			}
		default:
			a.other = append(a.other, d.Type)
		}
	}
	return a
}

// TestMalformedReadsAreTheCallersFault: reads with values no client should
// send — a show id beyond any show, text that is not UTF-8 in a REST query
// or path, a query parameter the route does not take, a NUL in text — are
// invalid_argument naming the field, never internal.
func TestMalformedReadsAreTheCallersFault(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 2, Tickets: true})
	ctx := context.Background()

	admin := as(t, env, "admin", auth.RoleAdmin)
	_, err := admin.ledger.ListJournal(ctx, connect.NewRequest(&ledgerv1.ListJournalRequest{ShowId: 9223372036854775807}))
	require.Equal(t, answer{connect.CodeInvalidArgument, "LEDGER_QUERY_INVALID", []string{"show_id"}, nil}, answerOf(t, err), "%v", err)
	// A real show's id over 2^31 still filters (the query's parameter is a bigint).
	_, err = admin.ledger.ListJournal(ctx, connect.NewRequest(&ledgerv1.ListJournalRequest{ShowId: 1 << 40}))
	require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err))

	for path, field := range map[string]string{
		"/v1/tickets?page_token=%ff%fe":   "page_token",
		"/v1/tickets/%ff%fe/download":     "ticket_id",
		"/v1/tickets?no_such_field=1":     "no_such_field",
		"/v1/tickets/tkt%00x/download":    "ticket_id",
		"/v1/shows/1/seatmap?show_id=%ff": "show_id",
	} {
		t.Run(path, func(t *testing.T) {
			r, err := http.NewRequest(http.MethodGet, env.URL+path, nil)
			require.NoError(t, err)
			r.Header.Set("Authorization", "Bearer "+env.Token(t, "rumana", auth.RoleUser))
			resp, err := env.HTTP.Do(r)
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, http.StatusBadRequest, resp.StatusCode)
			got := restAnswer(t, resp.Body)
			require.Equal(t, connect.CodeInvalidArgument, got.code)
			require.Equal(t, "INVALID_ARGUMENT", got.reason)
			require.Equal(t, []string{field}, got.fields)
		})
	}
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
