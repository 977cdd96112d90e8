package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNotifyConfig: serve's SMS and e-mail settings (issue 25). A gateway
// configured by template sends a Bengali SMS to a provider as it says; a
// sandbox is read back; SMTP takes its defaults; every mistake names its
// variable, and nothing set means no messages.
func TestNotifyConfig(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	c, err := loadNotify(env(nil))
	require.NoError(t, err)
	require.Nil(t, c.SMS)
	require.Nil(t, c.Mail)

	var got url.Values
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.NoError(t, r.ParseForm())
		got = r.PostForm
		_, _ = io.WriteString(w, `{"data": {"id": "msg-7"}}`)
	}))
	t.Cleanup(provider.Close)
	c, err = loadNotify(env(map[string]string{
		"SEATGHOR_SITE_URL": "https://seatghor.example", "SEATGHOR_SMS_GATEWAY_URL": provider.URL,
		"SEATGHOR_SMS_GATEWAY_FIELDS":   `{"api_key": "{{.APIKey}}", "senderid": "{{.Sender}}", "number": "{{.International}}", "message": "{{.Text}}", "type": "{{if eq .Unicode \"1\"}}unicode{{else}}text{{end}}"}`,
		"SEATGHOR_SMS_GATEWAY_ID_FIELD": "data.id", "SEATGHOR_SMS_API_KEY": "key-1", "SEATGHOR_SMS_SENDER": "Seatghor",
		"SEATGHOR_SMTP_HOST": "smtp.example", "SEATGHOR_SMTP_FROM": "Seatghor <tickets@seatghor.example>",
	}))
	require.NoError(t, err)
	id, err := c.SMS.SendSMS(context.Background(), "+8801711234567", "আপনার বুকিং নিশ্চিত হয়েছে।")
	require.NoError(t, err)
	require.Equal(t, "msg-7", id)
	require.Equal(t, "8801711234567", got.Get("number"))
	require.Equal(t, "unicode", got.Get("type"))
	require.Equal(t, "key-1", got.Get("api_key"))
	require.NotNil(t, c.Mail)
	require.Nil(t, c.SandboxSMS, "a real gateway has no sandbox to read")

	c, err = loadNotify(env(map[string]string{"SEATGHOR_SITE_URL": "http://127.0.0.1:8080", "SEATGHOR_SMS_SANDBOX_URL": "http://127.0.0.1:9"}))
	require.NoError(t, err)
	require.NotNil(t, c.SandboxSMS)

	for name, kv := range map[string]map[string]string{
		"both SMS":        {"SEATGHOR_SITE_URL": "https://s.example", "SEATGHOR_SMS_GATEWAY_URL": provider.URL, "SEATGHOR_SMS_SANDBOX_URL": "http://127.0.0.1:9"},
		"fields not JSON": {"SEATGHOR_SITE_URL": "https://s.example", "SEATGHOR_SMS_GATEWAY_URL": provider.URL, "SEATGHOR_SMS_GATEWAY_FIELDS": "to=1"},
		"no fields":       {"SEATGHOR_SITE_URL": "https://s.example", "SEATGHOR_SMS_GATEWAY_URL": provider.URL},
		"bad template":    {"SEATGHOR_SITE_URL": "https://s.example", "SEATGHOR_SMS_GATEWAY_URL": provider.URL, "SEATGHOR_SMS_GATEWAY_FIELDS": `{"to": "{{.To"}`},
		"no site":         {"SEATGHOR_SMS_SANDBOX_URL": "http://127.0.0.1:9"},
		"no sender":       {"SEATGHOR_SITE_URL": "https://s.example", "SEATGHOR_SMTP_HOST": "smtp.example"},
		"bad port":        {"SEATGHOR_SITE_URL": "https://s.example", "SEATGHOR_SMTP_HOST": "smtp.example", "SEATGHOR_SMTP_FROM": "a@b.example", "SEATGHOR_SMTP_PORT": "smtp"},
		"bad tls":         {"SEATGHOR_SITE_URL": "https://s.example", "SEATGHOR_SMTP_HOST": "smtp.example", "SEATGHOR_SMTP_FROM": "a@b.example", "SEATGHOR_SMTP_TLS": "yes"},
	} {
		_, err := loadNotify(env(kv))
		require.Error(t, err, name)
	}
}
