package sandbox

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"

	"github.com/seatghor/seatghor/server/gateway"
)

// The hosted approval page of the redirect flow, shaped like an MFS
// (bKash/Nagad-style) confirmation: the buyer sees the amount and approves
// or declines on the gateway's side, so Seatghor never sees card or wallet
// credentials and learns the outcome only from the webhook or a
// status query.

// payPageHTML is parsed once per Server (New), not at init.
const payPageHTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sandbox Pay</title>
<style>
body{font-family:system-ui,sans-serif;background:#f4f4f6;margin:0;display:flex;justify-content:center}
main{background:#fff;margin:3rem 1rem;padding:2rem;border-radius:12px;max-width:22rem;width:100%;box-shadow:0 2px 12px #0002}
h1{font-size:1.1rem;color:#e2136e;margin:0 0 1rem}
.amount{font-size:2rem;font-weight:600;margin:.5rem 0}
.muted{color:#666;font-size:.9rem}
form{display:inline}
button{font-size:1rem;padding:.7rem 1.4rem;border:0;border-radius:8px;margin:1rem .5rem 0 0;cursor:pointer}
.approve{background:#e2136e;color:#fff}.decline{background:#ddd}
</style></head><body><main>
<h1>Sandbox Pay — test mode</h1>
{{if .Missing}}<p>No such payment.</p>{{else}}
<p class="muted">Pay to merchant, reference {{.Reference}}</p>
<div class="amount">{{.Amount}} {{.Currency}}</div>
{{if .Pending}}
<form method="post" action="{{.ID}}/approve"><button class="approve" type="submit">Approve</button></form>
<form method="post" action="{{.ID}}/decline"><button class="decline" type="submit">Decline</button></form>
{{else}}<p>This payment is {{.Status}}.{{if .Done}} You may close this page.{{end}}</p>{{end}}
{{end}}
</main></body></html>
`

type payPageData struct {
	Missing   bool
	ID        string
	Reference string
	Amount    string
	Currency  string
	Status    string
	Pending   bool
	Done      bool
}

func (s *Server) handlePayPage(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	var c chargeJSON
	p, found := s.chargeByID[r.PathValue("id")]
	if found {
		c = *p
	}
	s.mu.Unlock()
	if !found {
		s.renderPay(w, http.StatusNotFound, payPageData{Missing: true})
		return
	}
	s.renderPay(w, http.StatusOK, pageData(c, false))
}

// handlePayDecision approves or declines and sends the buyer back. A second
// click on an already decided payment is not an error: it just goes back.
func (s *Server) handlePayDecision(approve bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		_, err := s.decide(id, approve)
		switch {
		case errors.Is(err, gateway.ErrNotFound):
			s.renderPay(w, http.StatusNotFound, payPageData{Missing: true})
			return
		case err != nil && !errors.Is(err, ErrNotPending):
			s.log.Error("decide payment", slog.String("charge_id", id), slog.Any("error", err))
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		s.mu.Lock()
		c := *s.chargeByID[id]
		s.mu.Unlock()
		if c.ReturnURL != "" {
			http.Redirect(w, r, returnURL(c), http.StatusSeeOther)
			return
		}
		s.renderPay(w, http.StatusOK, pageData(c, true))
	}
}

// returnURL is the charge's return_url with charge_id and status added, as
// hosted pages do; the merchant must still trust only the webhook or a
// status query, never these parameters.
func returnURL(c chargeJSON) string {
	u, err := url.Parse(c.ReturnURL)
	if err != nil {
		return c.ReturnURL
	}
	q := u.Query()
	q.Set("charge_id", c.ID)
	q.Set("status", c.Status)
	u.RawQuery = q.Encode()
	return u.String()
}

func pageData(c chargeJSON, done bool) payPageData {
	return payPageData{
		ID:        c.ID,
		Reference: c.Reference,
		Amount:    formatMinor(c.AmountMinor),
		Currency:  c.Currency,
		Status:    c.Status,
		Pending:   c.Status == string(gateway.StatusPending),
		Done:      done,
	}
}

// formatMinor shows minor units as major.minor with two decimals (taka and
// paisa).
func formatMinor(m int64) string {
	sign := ""
	if m < 0 {
		sign, m = "-", -m
	}
	return fmt.Sprintf("%s%d.%02d", sign, m/100, m%100)
}

func (s *Server) renderPay(w http.ResponseWriter, status int, d payPageData) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if err := s.page.Execute(w, d); err != nil {
		s.log.Error("render payment page", slog.Any("error", err))
	}
}
