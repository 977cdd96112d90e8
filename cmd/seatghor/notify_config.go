package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"

	"github.com/seatghor/seatghor/server/app"
	"github.com/seatghor/seatghor/server/notify"
	"github.com/seatghor/seatghor/server/notify/smssandbox"
)

// loadNotify reads where `serve` sends the buyers' messages (issue 25;
// dev mode starts its own SMS sandbox and mailpit instead):
//
//   - SEATGHOR_SITE_URL: the site's public base the messages link to
//     (https://seatghor.com.bd); required with either channel.
//   - SMS through an HTTP gateway (decision 0431): SEATGHOR_SMS_GATEWAY_URL,
//     SEATGHOR_SMS_GATEWAY_FORMAT (form or json), SEATGHOR_SMS_GATEWAY_FIELDS
//     and SEATGHOR_SMS_GATEWAY_HEADERS (JSON objects of Go templates over
//     the message: {"to": "{{.International}}", "msg": "{{.Text}}"}),
//     SEATGHOR_SMS_GATEWAY_ID_FIELD, SEATGHOR_SMS_API_KEY and
//     SEATGHOR_SMS_SENDER; or SEATGHOR_SMS_SANDBOX_URL, a running SMS
//     sandbox (staging), which ListSandboxSms then reads. Not both.
//   - E-mail over SMTP: SEATGHOR_SMTP_HOST, SEATGHOR_SMTP_PORT (587),
//     SEATGHOR_SMTP_FROM, SEATGHOR_SMTP_USERNAME, SEATGHOR_SMTP_PASSWORD and
//     SEATGHOR_SMTP_TLS (1, STARTTLS required; 0 for a relay on the host).
//
// Neither channel set: no messages, and no phone sign-in.
func loadNotify(getenv func(string) string) (app.NotifyConfig, error) {
	var c app.NotifyConfig
	// Every variable is read, set or not (TestEnvTableListsEveryVariable).
	vars := map[string]string{}
	for _, name := range []string{"SEATGHOR_SITE_URL", "SEATGHOR_SMS_GATEWAY_URL", "SEATGHOR_SMS_GATEWAY_FORMAT",
		"SEATGHOR_SMS_GATEWAY_FIELDS", "SEATGHOR_SMS_GATEWAY_HEADERS", "SEATGHOR_SMS_GATEWAY_ID_FIELD", "SEATGHOR_SMS_API_KEY",
		"SEATGHOR_SMS_SENDER", "SEATGHOR_SMS_SANDBOX_URL", "SEATGHOR_SMTP_HOST", "SEATGHOR_SMTP_PORT", "SEATGHOR_SMTP_FROM",
		"SEATGHOR_SMTP_USERNAME", "SEATGHOR_SMTP_PASSWORD", "SEATGHOR_SMTP_TLS"} {
		vars[name] = getenv(name)
	}
	getenv = func(name string) string { return vars[name] }
	gatewayURL, sandboxURL := getenv("SEATGHOR_SMS_GATEWAY_URL"), getenv("SEATGHOR_SMS_SANDBOX_URL")
	switch {
	case gatewayURL != "" && sandboxURL != "":
		return c, fmt.Errorf("set SEATGHOR_SMS_GATEWAY_URL or SEATGHOR_SMS_SANDBOX_URL, not both")
	case gatewayURL != "":
		g := notify.GatewayConfig{URL: gatewayURL, Format: getenv("SEATGHOR_SMS_GATEWAY_FORMAT"),
			APIKey: getenv("SEATGHOR_SMS_API_KEY"), Sender: getenv("SEATGHOR_SMS_SENDER"), IDField: getenv("SEATGHOR_SMS_GATEWAY_ID_FIELD")}
		for name, into := range map[string]*map[string]string{"SEATGHOR_SMS_GATEWAY_FIELDS": &g.Fields, "SEATGHOR_SMS_GATEWAY_HEADERS": &g.Headers} {
			if v := getenv(name); v != "" {
				if err := json.Unmarshal([]byte(v), into); err != nil {
					return c, fmt.Errorf("%s: want a JSON object of templates: %w", name, err)
				}
			}
		}
		sms, err := notify.NewGateway(g)
		if err != nil {
			return c, fmt.Errorf("SEATGHOR_SMS_GATEWAY_*: %w", err)
		}
		c.SMS = sms
	case sandboxURL != "":
		if err := httpURL(sandboxURL); err != nil {
			return c, fmt.Errorf("SEATGHOR_SMS_SANDBOX_URL: %w", err)
		}
		sms := smssandbox.NewClient(sandboxURL, nil)
		c.SMS, c.SandboxSMS = sms, sms
	}
	if host := getenv("SEATGHOR_SMTP_HOST"); host != "" {
		s := notify.SMTPConfig{Host: host, Port: 587, From: getenv("SEATGHOR_SMTP_FROM"),
			Username: getenv("SEATGHOR_SMTP_USERNAME"), Password: getenv("SEATGHOR_SMTP_PASSWORD"), TLS: true}
		if v := getenv("SEATGHOR_SMTP_PORT"); v != "" {
			p, err := strconv.Atoi(v)
			if err != nil || p <= 0 || p > 65535 {
				return c, fmt.Errorf("SEATGHOR_SMTP_PORT=%q: want a port", v)
			}
			s.Port = p
		}
		switch v := getenv("SEATGHOR_SMTP_TLS"); v {
		case "", "1":
		case "0":
			s.TLS = false
		default:
			return c, fmt.Errorf("SEATGHOR_SMTP_TLS=%q: want 1 or 0", v)
		}
		if s.From == "" {
			return c, fmt.Errorf("SEATGHOR_SMTP_FROM: the sender's address is required with SEATGHOR_SMTP_HOST")
		}
		mail, err := notify.NewSMTP(s)
		if err != nil {
			return c, fmt.Errorf("SEATGHOR_SMTP_*: %w", err)
		}
		c.Mail = mail
	}
	c.SiteURL = getenv("SEATGHOR_SITE_URL")
	if c.SMS != nil || c.Mail != nil {
		if err := httpURL(c.SiteURL); err != nil {
			return c, fmt.Errorf("SEATGHOR_SITE_URL (the messages' links): %w", err)
		}
	}
	return c, nil
}

// httpURL checks that s is an http(s) URL with a host.
func httpURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q: want http(s)://host", s)
	}
	return nil
}
