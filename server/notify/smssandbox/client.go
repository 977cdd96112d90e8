package smssandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/seatghor/seatghor/server/notify"
)

// Client talks to a sandbox over HTTP: the notify.SMS adapter, and the
// reader of its messages.
type Client struct {
	base string
	http *http.Client
}

// NewClient returns a client of the sandbox at base ("http://127.0.0.1:8082").
func NewClient(base string, hc *http.Client) *Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{base: strings.TrimRight(base, "/"), http: hc}
}

// SendSMS implements notify.SMS.
func (c *Client) SendSMS(ctx context.Context, to, text string) (string, error) {
	body, _ := json.Marshal(sendRequest{To: to, Text: text})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/v1/messages", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	var m Message
	if err := c.do(req, &m); err != nil {
		return "", err
	}
	return m.ID, nil
}

// List returns the messages sent to one number (all when to is empty),
// newest first, at most limit (0: all).
func (c *Client) List(ctx context.Context, to string, limit int) ([]Message, error) {
	q := url.Values{}
	if to != "" {
		q.Set("to", to)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/v1/messages?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	var out struct {
		Data []Message `json:"data"`
	}
	return out.Data, c.do(req, &out)
}

func (c *Client) do(req *http.Request, v any) error {
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("SMS sandbox: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	switch {
	case resp.StatusCode >= 500:
		return fmt.Errorf("SMS sandbox answered %s: %.200s", resp.Status, body)
	case resp.StatusCode >= 300:
		return fmt.Errorf("%w: %s: %.200s", notify.ErrRejected, resp.Status, body)
	}
	return json.Unmarshal(body, v)
}
