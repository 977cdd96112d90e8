// Package smssandbox is a fake SMS provider that behaves like a real one
// over HTTP (decision 0431): it accepts sends, answers a message id, and
// records every message with how it travels on the air (GSM-7 or UCS-2,
// segments), so dev mode and the tests see exactly what a phone would get.
// A page lists the messages for people; the admin RPC ListSandboxSms reads
// them through Client.List. Client is also the notify.SMS adapter that
// sends to it, the same way the adapter of a real gateway does.
//
//	POST /v1/messages   {"to": "+8801711234567", "text": "…"}  → {"message_id", "encoding", "segments"}
//	GET  /v1/messages?to=+8801711234567&limit=100                → {"data": [messages, newest first]}
//	GET  /                                                       the page
package smssandbox

import (
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/seatghor/seatghor/server/notify"
)

// Message is one message the sandbox received.
type Message struct {
	ID         string          `json:"message_id"`
	To         string          `json:"to"`
	Text       string          `json:"text"`
	Encoding   notify.Encoding `json:"encoding"`
	Segments   int             `json:"segments"`
	ReceivedAt time.Time       `json:"received_at"`
}

// Server is the sandbox provider: an http.Handler, safe for concurrent
// use. Messages are kept in memory, like the payment sandbox's charges.
type Server struct {
	mux  *http.ServeMux
	now  func() time.Time
	page *template.Template

	mu       sync.Mutex
	messages []Message
}

// e164 is what the sandbox accepts as a number, as a real gateway would.
var e164 = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)

// New returns a sandbox; now stamps the messages (nil: time.Now).
func New(now func() time.Time) *Server {
	if now == nil {
		now = time.Now
	}
	s := &Server{mux: http.NewServeMux(), now: now, page: template.Must(template.New("sms").Parse(pageHTML))}
	s.mux.HandleFunc("POST /v1/messages", s.send)
	s.mux.HandleFunc("GET /v1/messages", s.list)
	s.mux.HandleFunc("GET /{$}", s.show)
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Messages returns the messages to one number (all when to is empty),
// newest first, at most limit (0: all).
func (s *Server) Messages(to string, limit int) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for i := len(s.messages) - 1; i >= 0; i-- {
		if m := s.messages[i]; to == "" || m.To == to {
			out = append(out, m)
			if limit > 0 && len(out) == limit {
				break
			}
		}
	}
	return out
}

type sendRequest struct {
	To   string `json:"to"`
	Text string `json:"text"`
}

func (s *Server) send(w http.ResponseWriter, r *http.Request) {
	var req sendRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "request body: "+err.Error())
		return
	}
	if !e164.MatchString(req.To) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("to %q is not an E.164 number", req.To))
		return
	}
	if req.Text == "" {
		writeError(w, http.StatusBadRequest, "no text")
		return
	}
	enc, _, segments := notify.Count(req.Text)
	s.mu.Lock()
	m := Message{ID: "sms_" + strconv.Itoa(len(s.messages)+1), To: req.To, Text: req.Text, Encoding: enc,
		Segments: segments, ReceivedAt: s.now().UTC()}
	s.messages = append(s.messages, m)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, m)
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	writeJSON(w, http.StatusOK, map[string][]Message{"data": s.Messages(r.URL.Query().Get("to"), max(limit, 0))})
}

func (s *Server) show(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = s.page.Execute(w, s.Messages(r.URL.Query().Get("to"), 500))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, message string) {
	writeJSON(w, status, map[string]map[string]string{"error": {"message": message}})
}

const pageHTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="5">
<title>Sandbox SMS</title>
<style>
body{font-family:system-ui,"Noto Sans Bengali",sans-serif;background:#f4f4f6;margin:0;padding:1rem}
h1{font-size:1.1rem;color:#0a7d4f}
table{border-collapse:collapse;background:#fff;width:100%}
td,th{border-bottom:1px solid #ddd;padding:.4rem .6rem;text-align:left;vertical-align:top}
.text{white-space:pre-wrap;max-width:40rem}
</style></head><body>
<h1>Sandbox SMS — what the phones got (newest first)</h1>
<form><input name="to" placeholder="+8801711234567"> <button>Filter</button></form>
{{if not .}}<p>No messages yet.</p>{{else}}
<table><tr><th>to</th><th>text</th><th>encoding</th><th>segments</th><th>received</th></tr>
{{range .}}<tr><td>{{.To}}</td><td class="text">{{.Text}}</td><td>{{.Encoding}}</td><td>{{.Segments}}</td><td>{{.ReceivedAt.Format "2006-01-02 15:04:05Z07:00"}}</td></tr>
{{end}}</table>{{end}}
</body></html>
`
