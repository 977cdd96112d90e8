package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"text/template"
)

// GatewayConfig describes an HTTP SMS gateway as Bangladeshi providers
// offer them (decision 0431): one POST per message to URL, a form or a
// JSON body whose fields are templates over the message, an API key and a
// sender id among them. For example a form gateway:
//
//	URL:    https://sms.example.com.bd/api/send
//	Format: "form"
//	Fields: {"api_key": "{{.APIKey}}", "senderid": "{{.Sender}}", "number": "{{.National}}", "message": "{{.Text}}"}
//	IDField: "message_id"
type GatewayConfig struct {
	URL string
	// Format is "form" (application/x-www-form-urlencoded, the default) or
	// "json" (an object of string fields).
	Format string
	// Fields are the body's fields, each a text/template over GatewayData.
	Fields map[string]string
	// Headers are sent with every request, also templates over
	// GatewayData (e.g. "Authorization": "Bearer {{.APIKey}}").
	Headers map[string]string
	// APIKey and Sender fill {{.APIKey}} and {{.Sender}}.
	APIKey, Sender string
	// IDField names the field of the JSON answer holding the message id
	// (dots go into objects: "data.id"); empty: the answer is not read and
	// the id is "".
	IDField string
	// Client sends the requests; nil: http.DefaultClient.
	Client *http.Client
}

// GatewayData is what the templates of a GatewayConfig see.
type GatewayData struct {
	// To is the number in E.164 ("+8801711234567"), International it
	// without the plus ("8801711234567"), National as dialled at home
	// ("01711234567").
	To, International, National string
	Text                        string
	// Encoding is "GSM-7" or "UCS-2", Unicode "0" or "1" (what many
	// gateways call the flag), Segments the parts the text takes.
	Encoding, Unicode string
	Segments          int
	APIKey, Sender    string
}

// Gateway is the SMS port over an HTTP SMS gateway.
type Gateway struct {
	cfg     GatewayConfig
	fields  map[string]*template.Template
	headers map[string]*template.Template
}

// NewGateway checks cfg and parses its templates.
func NewGateway(cfg GatewayConfig) (*Gateway, error) {
	if u, err := url.Parse(cfg.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("SMS gateway URL %q: want http(s)://host/…", cfg.URL)
	}
	switch cfg.Format {
	case "":
		cfg.Format = "form"
	case "form", "json":
	default:
		return nil, fmt.Errorf("SMS gateway format %q: want form or json", cfg.Format)
	}
	if len(cfg.Fields) == 0 {
		return nil, errors.New("SMS gateway: no body fields")
	}
	if cfg.Client == nil {
		cfg.Client = http.DefaultClient
	}
	g := &Gateway{cfg: cfg, fields: map[string]*template.Template{}, headers: map[string]*template.Template{}}
	for _, set := range []struct {
		in  map[string]string
		out map[string]*template.Template
	}{{cfg.Fields, g.fields}, {cfg.Headers, g.headers}} {
		for k, v := range set.in {
			t, err := template.New(k).Option("missingkey=error").Parse(v)
			if err != nil {
				return nil, fmt.Errorf("SMS gateway field %s: %w", k, err)
			}
			set.out[k] = t
		}
	}
	return g, nil
}

// SendSMS implements SMS.
func (g *Gateway) SendSMS(ctx context.Context, to, text string) (string, error) {
	enc, _, segments := Count(text)
	d := GatewayData{To: to, International: strings.TrimPrefix(to, "+"), National: national(to), Text: text,
		Encoding: string(enc), Unicode: "0", Segments: segments, APIKey: g.cfg.APIKey, Sender: g.cfg.Sender}
	if enc == UCS2 {
		d.Unicode = "1"
	}
	fields, err := render(g.fields, d)
	if err != nil {
		return "", err
	}
	var body []byte
	contentType := "application/x-www-form-urlencoded"
	if g.cfg.Format == "json" {
		contentType = "application/json"
		if body, err = json.Marshal(fields); err != nil {
			return "", err
		}
	} else {
		form := url.Values{}
		for k, v := range fields {
			form.Set(k, v)
		}
		body = []byte(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", contentType)
	headers, err := render(g.headers, d)
	if err != nil {
		return "", err
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := g.cfg.Client.Do(req)
	if err != nil {
		return "", fmt.Errorf("SMS gateway: %w", err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	switch {
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		return "", fmt.Errorf("SMS gateway answered %s: %.200s", resp.Status, answer)
	case resp.StatusCode >= 300:
		return "", fmt.Errorf("%w: %s: %.200s", ErrRejected, resp.Status, answer)
	}
	if g.cfg.IDField == "" {
		return "", nil
	}
	return idOf(answer, g.cfg.IDField)
}

// national is a Bangladeshi E.164 number as dialled at home, digits only
// ("+8801711234567" → "01711234567"); any other number stays as it is.
func national(e164 string) string {
	if rest, ok := strings.CutPrefix(e164, "+880"); ok {
		return "0" + rest
	}
	return e164
}

func render(ts map[string]*template.Template, d GatewayData) (map[string]string, error) {
	out := make(map[string]string, len(ts))
	for k, t := range ts {
		var b strings.Builder
		if err := t.Execute(&b, d); err != nil {
			return nil, fmt.Errorf("SMS gateway field %s: %w", k, err)
		}
		out[k] = b.String()
	}
	return out, nil
}

// idOf reads the message id at path (dot-separated) of a JSON answer.
func idOf(answer []byte, path string) (string, error) {
	var v any
	if err := json.Unmarshal(answer, &v); err != nil {
		return "", fmt.Errorf("SMS gateway answer is not JSON: %.200s", answer)
	}
	for part := range strings.SplitSeq(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return "", fmt.Errorf("SMS gateway answer has no %s: %.200s", path, answer)
		}
		v = m[part]
	}
	switch id := v.(type) {
	case string:
		return id, nil
	case float64:
		return strings.TrimSuffix(fmt.Sprintf("%f", id), ".000000"), nil
	case nil:
		return "", fmt.Errorf("SMS gateway answer has no %s: %.200s", path, answer)
	}
	return fmt.Sprint(v), nil
}
