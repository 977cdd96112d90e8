package api_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/apptest"
	"github.com/seatghor/seatghor/server/auth"
)

func TestReproTmp(t *testing.T) {
	env := apptest.New(t, apptest.Options{Tickets: true})
	do := func(method, path, body string) {
		r, err := http.NewRequest(method, env.URL+path, strings.NewReader(body))
		require.NoError(t, err)
		r.Header.Set("Authorization", "Bearer "+env.Token(t, "admin", auth.RoleAdmin))
		r.Header.Set("Content-Type", "application/json")
		resp, err := env.HTTP.Do(r)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Logf("%s %s -> %d %s", method, path, resp.StatusCode, b)
	}
	do("POST", "/seatghor.ledger.v1.LedgerService/ListJournal", `{"show_id": 9223372036854775807}`)
	do("GET", "/v1/tickets?page_token=%ff%fe", "")
	do("GET", "/v1/tickets/%ff%fe/download", "")
	do("GET", "/v1/tickets?%ff=1", "")
	do("GET", "/v1/tickets?show_id=abc", "")
	do("GET", "/v1/tickets?show_id=99999999999999999999", "")
	do("POST", "/seatghor.tickets.v1.TicketService/ListMyTickets", "{\"pageToken\": \"\xff\xfe\"}")
	do("POST", "/seatghor.ledger.v1.LedgerService/ListJournal", `{"page_token": "\udc00"}`)
}
