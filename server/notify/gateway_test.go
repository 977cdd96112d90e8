package notify_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/notify"
)

// TestGateway (decision 0431): the HTTP SMS-gateway adapter renders the
// request a Bangladeshi gateway wants, a form or JSON, from its templates;
// reads the message id from the answer; a 4xx is a rejection for good, a
// 5xx an error to retry.
func TestGateway(t *testing.T) {
	type seen struct {
		contentType, auth string
		form              url.Values
		json              map[string]string
	}
	var got seen
	status, answer := http.StatusOK, `{"data": {"id": 4711}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = seen{contentType: r.Header.Get("Content-Type"), auth: r.Header.Get("Authorization")}
		body, _ := io.ReadAll(r.Body)
		if got.contentType == "application/json" {
			require.NoError(t, json.Unmarshal(body, &got.json))
		} else {
			got.form, _ = url.ParseQuery(string(body))
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer)
	}))
	defer srv.Close()
	ctx := context.Background()

	form, err := notify.NewGateway(notify.GatewayConfig{URL: srv.URL + "/api/send", APIKey: "k-123", Sender: "Seatghor",
		Fields: map[string]string{"api_key": "{{.APIKey}}", "senderid": "{{.Sender}}", "number": "{{.National}}",
			"message": "{{.Text}}", "type": `{{if eq .Unicode "1"}}unicode{{else}}text{{end}}`},
		IDField: "data.id"})
	require.NoError(t, err)
	id, err := form.SendSMS(ctx, "+8801711234567", "বুকিং নিশ্চিত")
	require.NoError(t, err)
	require.Equal(t, "4711", id)
	require.Equal(t, "application/x-www-form-urlencoded", got.contentType)
	require.Equal(t, url.Values{"api_key": {"k-123"}, "senderid": {"Seatghor"}, "number": {"01711234567"},
		"message": {"বুকিং নিশ্চিত"}, "type": {"unicode"}}, got.form)

	answer = `{"message_id": "abc"}`
	js, err := notify.NewGateway(notify.GatewayConfig{URL: srv.URL, Format: "json", APIKey: "k-9",
		Headers: map[string]string{"Authorization": "Bearer {{.APIKey}}"},
		Fields:  map[string]string{"to": "{{.International}}", "msg": "{{.Text}}", "parts": "{{.Segments}}"}, IDField: "message_id"})
	require.NoError(t, err)
	id, err = js.SendSMS(ctx, "+8801819000000", "Seat A1 booked")
	require.NoError(t, err)
	require.Equal(t, "abc", id)
	require.Equal(t, "Bearer k-9", got.auth)
	require.Equal(t, map[string]string{"to": "8801819000000", "msg": "Seat A1 booked", "parts": "1"}, got.json)

	status, answer = http.StatusBadRequest, `{"error": "invalid number"}`
	_, err = js.SendSMS(ctx, "+8801819000000", "x")
	require.True(t, errors.Is(err, notify.ErrRejected), "%v", err)
	status = http.StatusBadGateway
	_, err = js.SendSMS(ctx, "+8801819000000", "x")
	require.Error(t, err)
	require.False(t, errors.Is(err, notify.ErrRejected), "a 5xx is retried")

	for _, bad := range []notify.GatewayConfig{
		{URL: "ftp://x", Fields: map[string]string{"a": "b"}},
		{URL: srv.URL, Format: "xml", Fields: map[string]string{"a": "b"}},
		{URL: srv.URL},
		{URL: srv.URL, Fields: map[string]string{"a": "{{.Nope"}},
	} {
		_, err := notify.NewGateway(bad)
		require.Error(t, err, "%+v", bad)
	}
}
