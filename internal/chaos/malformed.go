package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/seatghor/seatghor/server/auth"
)

// badRequests are the malformed requests the run sent: each must be
// refused with a code that blames the request, never internal or 5xx or a
// dropped connection, and write nothing.
type badRequests struct {
	sent, refused, accepted, internal, unanswered int
	// users sent them; after the run none of them may hold or own
	// anything.
	users []string
	// problems describe the first few answers that broke the rule.
	problems []string
}

// badRequest is one malformed request: a Connect JSON call (path
// /package.Service/Method) or a REST one.
type badRequest struct {
	name, method, path, contentType string
	body                            []byte
	noKey                           bool
	// asUser sends it with a buyer's token; otherwise anonymous.
	asUser bool
}

// badRequests builds the malformed requests, one of each kind in turn;
// the run's own ids stand in where a real one makes the refusal matter (an
// order of another buyer).
func (r *run) badRequestKinds(rnd *rand.Rand) []badRequest {
	show := r.shows[len(r.shows)-1].ID
	other := r.someOrder(rnd)
	connectJSON := func(name, svc, method string, body string) badRequest {
		return badRequest{name: name, method: http.MethodPost, path: "/seatghor." + svc + "/" + method,
			contentType: "application/json", body: []byte(body), asUser: true}
	}
	var seats40 []string
	for i := range 40 {
		seats40 = append(seats40, fmt.Sprintf("A%d", i+1))
	}
	many, _ := json.Marshal(map[string]any{"showId": fmt.Sprint(show), "seats": seats40})
	junk := make([]byte, 64)
	for i := range junk {
		junk[i] = byte(rnd.IntN(256))
	}
	huge := []byte(`{"showId":"` + fmt.Sprint(show) + `","seats":["` + strings.Repeat("A", 2<<20) + `"]}`)
	return []badRequest{
		connectJSON("CreateHold: a negative show", "booking.v1.HoldService", "CreateHold", `{"showId":"-1","seats":["A1"]}`),
		connectJSON("CreateHold: 40 seats", "booking.v1.HoldService", "CreateHold", string(many)),
		connectJSON("CreateHold: seats and an area", "booking.v1.HoldService", "CreateHold",
			fmt.Sprintf(`{"showId":"%d","seats":["A1"],"gaArea":"Hill","quantity":2}`, show)),
		connectJSON("CreateHold: a seat named like SQL", "booking.v1.HoldService", "CreateHold",
			fmt.Sprintf(`{"showId":"%d","seats":["A1'; DROP TABLE seats; --"]}`, show)),
		connectJSON("CreateHold: a show id that is not a number", "booking.v1.HoldService", "CreateHold", `{"showId":"abc","seats":["A1"]}`),
		connectJSON("CreateHold: not JSON", "booking.v1.HoldService", "CreateHold", "\xff\xfe{"),
		connectJSON("CreateHold: no places", "booking.v1.HoldService", "CreateHold",
			fmt.Sprintf(`{"showId":"%d","gaArea":"Hill","quantity":-5}`, show)),
		func() badRequest {
			b := connectJSON("CreateHold: no idempotency key", "booking.v1.HoldService", "CreateHold",
				fmt.Sprintf(`{"showId":"%d","gaArea":"Hill","quantity":1}`, show))
			b.noKey = true
			return b
		}(),
		{name: "CreateHold: junk protobuf", method: http.MethodPost, path: "/seatghor.booking.v1.HoldService/CreateHold",
			contentType: "application/proto", body: junk, asUser: true},
		{name: "CreateHold: a body of 2 MB", method: http.MethodPost, path: "/seatghor.booking.v1.HoldService/CreateHold",
			contentType: "application/json", body: huge, asUser: true},
		connectJSON("CreateOrder: another buyer's hold", "booking.v1.OrderService", "CreateOrder",
			fmt.Sprintf(`{"holdId":%q}`, other.hold)),
		connectJSON("StartPayment: another buyer's order", "payment.v1.PaymentService", "StartPayment",
			fmt.Sprintf(`{"orderId":%q,"sandbox":{"token":"tok_success"}}`, other.id)),
		connectJSON("CancelOrder: another buyer's order", "booking.v1.OrderService", "CancelOrder",
			fmt.Sprintf(`{"orderId":%q}`, other.id)),
		connectJSON("StartPayment: a token of 10 kB", "payment.v1.PaymentService", "StartPayment",
			fmt.Sprintf(`{"orderId":%q,"sandbox":{"token":%q}}`, other.id, strings.Repeat("t", 10<<10))),
		connectJSON("GetTicketDownload: an id of 5,000 characters", "tickets.v1.TicketService", "GetTicketDownload",
			fmt.Sprintf(`{"ticketId":%q}`, strings.Repeat("x", 5000))),
		connectJSON("CheckInTicket: a buyer at the gate", "tickets.v1.TicketService", "CheckInTicket",
			fmt.Sprintf(`{"showId":"%d","ticketId":"tkt_%d_aaaaaaaaaaaaaaaa_001"}`, show, show)),
		connectJSON("CreateShow: a buyer makes a show", "catalog.v1.CatalogService", "CreateShow",
			`{"kind":"SHOW_KIND_CONCERT","title":"mine","venue":"x","currency":"BDT"}`),
		connectJSON("RefundPayment: a buyer refunds", "payment.v1.PaymentService", "RefundPayment",
			fmt.Sprintf(`{"paymentId":"pay_%d_x","amountMinor":"100"}`, show)),
		{name: "REST: a seat map of show abc", method: http.MethodGet, path: "/v1/shows/abc/seatmap", asUser: true},
		{name: "REST: a hold of -5 places", method: http.MethodPost, path: "/v1/holds", contentType: "application/json",
			body: fmt.Appendf(nil, `{"show_id":"%d","ga_area":"Hill","quantity":-5}`, show), asUser: true},
		{name: "REST: a search page of 100,000", method: http.MethodGet, path: "/v1/trips:search?page_size=100000"},
		{name: "REST: a hold without a credential", method: http.MethodPost, path: "/v1/holds", contentType: "application/json",
			body: fmt.Appendf(nil, `{"show_id":"%d","ga_area":"Hill","quantity":1}`, show)},
	}
}

// someOrder is an order of the run, chosen at random (one of another
// buyer's, for the malformed requests), or a made-up one.
func (r *run) someOrder(rnd *rand.Rand) orderSeen {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, o := range r.orders {
		if rnd.IntN(3) == 0 {
			return *o
		}
	}
	return orderSeen{id: fmt.Sprintf("ord_%d_chaos", r.shows[0].ID), hold: fmt.Sprintf("hld_%d_chaos", r.shows[0].ID)}
}

// malformed sends the malformed requests spread over the load, each from a
// caller of its own.
func (r *run) malformed(ctx context.Context) {
	if r.cfg.Malformed == 0 {
		return
	}
	rnd := rand.New(rand.NewPCG(r.cfg.Seed, 0xbadbad))
	every := r.cfg.Arrival / time.Duration(r.cfg.Malformed+1)
	for i := range r.cfg.Malformed {
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
		kinds := r.badRequestKinds(rnd)
		b := kinds[i%len(kinds)]
		user := fmt.Sprintf("chaos-%s-bad%d", r.tag, i)
		cred := ""
		if b.asUser {
			var err error
			if cred, err = r.token(user, auth.RoleUser, 0); err != nil {
				continue
			}
		}
		status, code, err := r.sendBad(ctx, rnd.IntN(len(r.d.Cluster.APIs())), b, cred)
		r.mu.Lock()
		r.bad.sent++
		if b.asUser {
			r.bad.users = append(r.bad.users, user)
		}
		switch {
		case err != nil:
			r.bad.unanswered++
			r.bad.note(b.name + ": no answer: " + err.Error())
		case status >= 200 && status < 300:
			r.bad.accepted++
			r.bad.note(fmt.Sprintf("%s: accepted (%d)", b.name, status))
		case status >= 500 && status != http.StatusServiceUnavailable || code == "internal" || code == "unknown":
			r.bad.internal++
			r.bad.note(fmt.Sprintf("%s: %d %s", b.name, status, code))
		default:
			r.bad.refused++
		}
		r.mu.Unlock()
	}
}

func (b *badRequests) note(s string) {
	if len(b.problems) < 10 {
		b.problems = append(b.problems, s)
	}
}

// sendBad sends a malformed request to an API process, and to the other
// when that one does not answer or is unavailable (a process killed by the
// schedule is not the request's fault). It returns the HTTP status and the
// error code of the body (Connect's "code", or REST's google.rpc.Status).
func (r *run) sendBad(ctx context.Context, home int, b badRequest, credential string) (int, string, error) {
	apis := r.d.Cluster.APIs()
	var last error
	for try := range 2 * len(apis) {
		req, err := http.NewRequestWithContext(ctx, b.method, apis[(home+try)%len(apis)]+b.path, bytes.NewReader(b.body))
		if err != nil {
			return 0, "", err
		}
		if b.contentType != "" {
			req.Header.Set("Content-Type", b.contentType)
		}
		if credential != "" {
			req.Header.Set("Authorization", "Bearer "+credential)
		}
		if !b.noKey && b.method != http.MethodGet {
			req.Header.Set("Idempotency-Key", randomID())
		}
		start := time.Now()
		resp, err := r.hc.Do(req)
		if err != nil {
			r.rec.add("malformed", start, time.Since(start), "no answer")
			last = err
			time.Sleep(200 * time.Millisecond)
			continue
		}
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		var body struct {
			Code json.RawMessage `json:"code"`
		}
		code := ""
		if json.Unmarshal(raw, &body) == nil && len(body.Code) > 0 {
			code = strings.Trim(string(body.Code), `"`)
			switch code { // google.rpc.Status codes are numbers
			case "13":
				code = "internal"
			case "2":
				code = "unknown"
			}
		}
		r.rec.add("malformed", start, time.Since(start), fmt.Sprint(resp.StatusCode))
		if resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode == http.StatusBadGateway {
			last = fmt.Errorf("%s", resp.Status)
			time.Sleep(200 * time.Millisecond)
			continue
		}
		return resp.StatusCode, code, nil
	}
	return 0, "", last
}
