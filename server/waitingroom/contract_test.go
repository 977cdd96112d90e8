package waitingroom_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/waitingroom"
)

// post sends a JSON body with a Bearer token and extra headers; it returns
// the status and the decoded JSON answer.
func (e *env) post(t *testing.T, path, token, body string, headers ...string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := e.HTTP.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.NewDecoder(bytes.NewReader(raw)).Decode(&out), "answer: %s", raw)
	return resp.StatusCode, out
}

// The contract examples, verbatim, over Connect JSON and REST.
func TestContractExamples(t *testing.T) {
	e := newEnv(t, waitingroom.Config{})
	admin := e.Token(t, "admin", auth.RoleAdmin)
	rumana, karim := e.Token(t, "rumana", auth.RoleUser), e.Token(t, "karim", auth.RoleUser)
	onSale := start.Add(time.Minute).Format(time.RFC3339)

	// CatalogService/CreateShow accepts "onSaleAt" and "waitingRoom": {"enabled": true}.
	code, out := e.post(t, "/seatghor.catalog.v1.CatalogService/CreateShow", admin, `{"kind": "SHOW_KIND_CONCERT",
		"title": "Arnob live", "venue": "ICCB", "startsAt": "2026-12-24T14:00:00Z", "currency": "BDT",
		"sections": [{"name": "Main", "rows": ["A", "B"], "seatsPerRow": 4, "priceMinor": "150000"}],
		"onSaleAt": "`+onSale+`", "waitingRoom": {"enabled": true}}`, "Idempotency-Key", "create-arnob")
	require.Equal(t, http.StatusOK, code, "%v", out)
	show := out["show"].(map[string]any)
	showID := show["showId"].(string)
	require.Equal(t, true, show["waitingRoom"].(map[string]any)["enabled"])
	require.Equal(t, onSale, show["waitingRoom"].(map[string]any)["opensAt"])

	// WaitingRoomService/Join {"showId": "…"} answers token (place once known).
	join := func(token string) map[string]any {
		code, out := e.post(t, "/seatghor.waitingroom.v1.WaitingRoomService/Join", token, `{"showId": "`+showID+`"}`)
		require.Equal(t, http.StatusOK, code, "%v", out)
		require.NotEmpty(t, out["token"])
		return out
	}
	rj, kj := join(rumana), join(karim)
	require.Nil(t, rj["place"], "no place before the opening lottery")
	require.Equal(t, "SALE_STATE_SCHEDULED", rj["state"])

	// GetStatus {"token": "…"} answers place, pollAfter and, once admitted, admittedToken.
	status := func(token, queue string) map[string]any {
		code, out := e.post(t, "/seatghor.waitingroom.v1.WaitingRoomService/GetStatus", token, `{"token": "`+queue+`"}`)
		require.Equal(t, http.StatusOK, code, "%v", out)
		require.NotEmpty(t, out["pollAfter"])
		return out
	}
	e.clock.Set(start.Add(time.Minute))
	rs := status(rumana, rj["token"].(string))
	require.Contains(t, []any{"1", "2"}, rs["place"])
	require.Nil(t, rs["admittedToken"], "X is 0 at the opening")
	e.tick(t, 0)
	e.tick(t, time.Second) // A starts at 10/s: both admitted
	rs, ks := status(rumana, rs["token"].(string)), status(karim, kj["token"].(string))
	require.Equal(t, true, rs["admitted"])
	own, theirs := rs["admittedToken"].(string), ks["admittedToken"].(string)
	require.True(t, strings.HasPrefix(own, "qt_"), own)

	// POST /v1/holds: refused without a Queue-Token, with a forged one and
	// with another caller's (HTTP 403, permission_denied); accepted with her own.
	body := fmt.Sprintf(`{"show_id": %s, "seats": ["A1", "A2"]}`, showID)
	for name, h := range map[string][]string{
		"none":    nil,
		"forged":  {"Queue-Token", own[:len(own)-4] + "AAAA"},
		"karim's": {"Queue-Token", theirs},
	} {
		code, out := e.post(t, "/v1/holds", rumana, body, append([]string{"Idempotency-Key", "h-" + name}, h...)...)
		require.Equal(t, http.StatusForbidden, code, "%s: %v", name, out)
		require.EqualValues(t, 7, out["code"], "%s: permission_denied", name)
	}
	code, out = e.post(t, "/v1/holds", rumana, body, "Idempotency-Key", "h-own", "Queue-Token", own)
	require.Equal(t, http.StatusOK, code, "%v", out)
	require.Equal(t, []any{"A1", "A2"}, out["seats"])
}
