// Package loadtest drives a running Seatghor over its real API the way the
// seed's on-sale model describes: a crowd of buyers arrives, each reads
// seat maps, holds seats (retrying on conflicts), and a share of them order
// and pay through the sandbox gateway while the rest walk away and leave
// ghost holds until their TTL. It measures what the model predicts (seats
// sold, ghost seats and the time of the first "sold out" for each hold TTL)
// and what the platform does under it (throughput and latency per RPC, DB
// writes per second, projector lag), and checks the one number that must
// never move: seats sold twice. Given several API processes it spreads the
// buyers over them and sends a call whose process is gone to the next one
// with the same idempotency key; afterwards it checks that no order it saw
// confirmed was lost.
package loadtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"slices"
	"sort"
	"sync"
	"syscall"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	"github.com/seatghor/seatghor/gen/seatghor/booking/v1/bookingv1connect"
	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/gen/seatghor/catalog/v1/catalogv1connect"
	paymentv1 "github.com/seatghor/seatghor/gen/seatghor/payment/v1"
	"github.com/seatghor/seatghor/gen/seatghor/payment/v1/paymentv1connect"
	seatmapv1 "github.com/seatghor/seatghor/gen/seatghor/seatmap/v1"
	"github.com/seatghor/seatghor/gen/seatghor/seatmap/v1/seatmapv1connect"
	waitingroomv1 "github.com/seatghor/seatghor/gen/seatghor/waitingroom/v1"
	"github.com/seatghor/seatghor/gen/seatghor/waitingroom/v1/waitingroomv1connect"
	"github.com/seatghor/seatghor/server/auth"
)

// Config is one load test: the inventory, the crowd and its behaviour.
type Config struct {
	// BaseURLs are the running API processes, e.g. http://127.0.0.1:8080:
	// buyer i starts on the (i mod n)th, and moves to the next when a call
	// finds its process gone.
	BaseURLs []string `json:"-"`
	// AdminURLs are admin listeners (SEATGHOR_ADMIN_ADDR), e.g.
	// http://127.0.0.1:9090, whose /metrics are summed; one that stops
	// answering during the run is left out of the sums.
	AdminURLs []string `json:"-"`
	// Preset names the configuration the run started from.
	Preset string `json:"preset"`
	// Trips × RowsPerTrip × 4 seats are on sale, on fresh bus trips.
	Trips       int `json:"trips"`
	RowsPerTrip int `json:"rows_per_trip"`
	// Buyers arrive within Arrival; FirstShare of them in its first tenth
	// (the seed: half of the crowd in the first minute of ten).
	Buyers     int           `json:"buyers"`
	Arrival    time.Duration `json:"arrival"`
	FirstShare float64       `json:"first_share"`
	// PayShare of the buyers who get a hold order and pay; the rest walk
	// away and their holds stay until the TTL (ghost seats).
	PayShare float64 `json:"pay_share"`
	// SeatsPerOrder is the mean number of seats a buyer wants (1.8: four in
	// five want two, the rest one).
	SeatsPerOrder float64 `json:"seats_per_order"`
	// HoldTries is how often a buyer tries to hold after a conflict.
	HoldTries int `json:"hold_tries"`
	// HoldTTLs are the hold lifetimes to measure, one phase each.
	HoldTTLs []time.Duration `json:"hold_ttls"`
	// PayToken is the sandbox token payers pay with.
	PayToken string `json:"pay_token"`
	// Seed makes the crowd's choices repeatable.
	Seed uint64 `json:"seed"`
	// WaitingRoom puts every trip behind a waiting room that opens
	// when the first tenth of the arrival window is over: the early crowd
	// gets lottery places, later buyers queue, each holds on its own trip
	// with its admitted Queue-Token. MinAdmission and MaxAdmission bound
	// the controller's rate (per second, per trip); PollInterval caps the
	// server's pollAfter.
	WaitingRoom  bool          `json:"waiting_room"`
	MinAdmission int32         `json:"min_admission,omitempty"`
	MaxAdmission int32         `json:"max_admission,omitempty"`
	PollInterval time.Duration `json:"poll_interval,omitempty"`
}

// Presets are the named configurations: "small" runs in seconds (make
// test), "full" is the documented run (docs/loadtest.md).
func Presets() map[string]Config {
	return map[string]Config{
		"small": {
			Preset: "small", Trips: 2, RowsPerTrip: 10, Buyers: 120, Arrival: 2 * time.Second, FirstShare: 0.5,
			PayShare: 0.7, SeatsPerOrder: 1.8, HoldTries: 3, HoldTTLs: []time.Duration{30 * time.Second},
			PayToken: "tok_success", Seed: 1,
		},
		// The seed's model at a scale one machine carries: buyers arrive
		// evenly, as a waiting room admits them, at 10 per second; 1,600
		// seats sell out in about 90 s, so hold TTLs shorter and longer than
		// that show what R-2's table shows.
		"full": {
			Preset: "full", Trips: 40, RowsPerTrip: 10, Buyers: 1200, Arrival: 120 * time.Second, FirstShare: 0.1,
			PayShare: 0.7, SeatsPerOrder: 1.8, HoldTries: 3,
			HoldTTLs: []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute},
			PayToken: "tok_success", Seed: 1,
		},
	}
}

func (c Config) validate() error {
	switch {
	case len(c.BaseURLs) == 0:
		return errors.New("loadtest: no server URL")
	case len(c.AdminURLs) == 0:
		return errors.New("loadtest: no admin URL (the server's metrics)")
	case c.Trips < 1 || c.RowsPerTrip < 1 || c.Buyers < 1:
		return errors.New("loadtest: trips, rows per trip and buyers must be positive")
	case c.SeatsPerOrder < 1 || c.SeatsPerOrder > 4:
		return errors.New("loadtest: seats per order must be from 1 to 4")
	case len(c.HoldTTLs) == 0:
		return errors.New("loadtest: no hold TTL to measure")
	case c.PayShare < 0 || c.PayShare > 1 || c.FirstShare < 0 || c.FirstShare > 1:
		return errors.New("loadtest: shares are from 0 to 1")
	}
	return nil
}

// Tokens mints API tokens for the crowd and for the admin that creates the
// trips.
type Tokens interface {
	Token(sub string, admin bool) (string, error)
}

// Signer mints the tokens with the server's own signer (its secret).
func Signer(t *auth.Tokens) Tokens { return signer{t} }

type signer struct{ *auth.Tokens }

func (s signer) Token(sub string, admin bool) (string, error) {
	role := auth.RoleUser
	if admin {
		role = auth.RoleAdmin
	}
	return s.Mint(sub, role, 24*time.Hour)
}

// Run runs one phase per hold TTL against the server and returns what it
// measured.
func Run(ctx context.Context, cfg Config, tokens Tokens, log *slog.Logger) (Result, error) {
	if err := cfg.validate(); err != nil {
		return Result{}, err
	}
	if cfg.HoldTries < 1 {
		cfg.HoldTries = 1
	}
	res := Result{Config: cfg, StartedAt: time.Now().UTC()}
	httpClient := &http.Client{Transport: &http.Transport{
		MaxIdleConnsPerHost: 1024, IdleConnTimeout: time.Minute,
		DialContext: (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
	}}
	for i, ttl := range cfg.HoldTTLs {
		log.Info("loadtest phase", "hold_ttl", ttl, "buyers", cfg.Buyers, "seats", cfg.Trips*cfg.RowsPerTrip*4)
		ph, err := runPhase(ctx, cfg, ttl, uint64(i), httpClient, tokens)
		if err != nil {
			return res, fmt.Errorf("phase with hold TTL %s: %w", ttl, err)
		}
		res.Phases = append(res.Phases, ph)
	}
	res.FinishedAt = time.Now().UTC()
	return res, nil
}

// phase is the state of one phase while it runs.
type phase struct {
	cfg    Config
	ttl    time.Duration
	http   *http.Client
	tokens Tokens
	trips  []int64
	runID  string
	start  time.Time
	// opensAt is when the trips' waiting rooms open.
	opensAt time.Time
	rpc     *recorder
	mu      sync.Mutex
	holds   []heldSeats
	sold    map[string]int // "<show>/<seat>" → confirmed orders holding it
	// confirmed are the orders the buyers saw confirmed, with the clients
	// that may read them.
	confirmed []confirmedOrder
	failovers int
	soldOut   time.Time // when a buyer first found no seats on any trip
	// exhausted is when a trip was last seen without enough free seats.
	exhausted map[int64]time.Time
	gaveUp    int
	admission []AdmissionSample
}

// confirmedOrder is an order a buyer saw confirmed.
type confirmedOrder struct {
	id string
	c  *buyerClients
}

// heldSeats is one hold a buyer got.
type heldSeats struct {
	at    time.Time
	seats int
	payer bool
}

func runPhase(ctx context.Context, cfg Config, ttl time.Duration, n uint64, hc *http.Client, tokens Tokens) (Phase, error) {
	p := &phase{cfg: cfg, ttl: ttl, http: hc, tokens: tokens, rpc: newRecorder(), sold: map[string]int{},
		exhausted: map[int64]time.Time{}, runID: randomID()}
	if cfg.WaitingRoom {
		// Time to create the trips, then the early crowd's tenth.
		p.opensAt = time.Now().Add(time.Duration(cfg.Trips)*200*time.Millisecond + 2*time.Second + cfg.Arrival/10)
	}
	if err := p.createTrips(ctx); err != nil {
		return Phase{}, err
	}
	// A process killed before the phase (a failover test's kill may fall
	// before a later phase) is left out of the counts, as after the phase;
	// a phase with no process answering is an error.
	before, err := scrapeAll(ctx, hc, cfg.AdminURLs)
	if len(before) == 0 && err != nil {
		return Phase{}, err
	}
	rnd := mrand.New(mrand.NewPCG(cfg.Seed, n))
	arrivals := arrivalTimes(cfg, rnd)
	p.start = time.Now()
	if cfg.WaitingRoom {
		p.start = p.opensAt.Add(-cfg.Arrival / 10)
		time.Sleep(time.Until(p.start))
	}
	lag := p.sampleLag(ctx)
	admission := p.sampleAdmission(ctx)
	var wg sync.WaitGroup
	for i, at := range arrivals {
		seed := rnd.Uint64()
		select {
		case <-ctx.Done():
			wg.Wait()
			lag()
			admission()
			return Phase{}, ctx.Err()
		case <-time.After(time.Until(p.start.Add(at))):
		}
		wg.Go(func() { p.buyer(ctx, i, mrand.New(mrand.NewPCG(seed, uint64(i)))) })
	}
	wg.Wait()
	elapsed := time.Since(p.start)
	after, _ := scrapeAll(ctx, hc, cfg.AdminURLs) // those that still answer
	writes, statements := after.since(before)
	lagMax := max(after.projectorLag(), lag())
	p.admission = admission()
	booked, err := p.bookedOnServer(ctx)
	if err != nil {
		return Phase{}, err
	}
	lost, err := p.lostOrders(ctx)
	if err != nil {
		return Phase{}, err
	}
	out := p.result(elapsed, writes, statements, lagMax, booked)
	out.Lost = lost
	return out, nil
}

// sampleLag reads the projectors' lag from /metrics every second while the
// phase runs; the returned function stops it and gives the largest seen.
func (p *phase) sampleLag(ctx context.Context) func() float64 {
	ctx, stop := context.WithCancel(ctx)
	done := make(chan float64)
	go func() {
		worst := 0.0
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				done <- worst
				return
			case <-tick.C:
				m, _ := scrapeAll(ctx, p.http, p.cfg.AdminURLs)
				worst = max(worst, m.projectorLag())
			}
		}
	}()
	return func() float64 { stop(); return <-done }
}

// arrivalTimes spreads the crowd over the arrival window: FirstShare of it
// in the first tenth, the rest evenly after, in random order.
func arrivalTimes(cfg Config, rnd *mrand.Rand) []time.Duration {
	first := int(float64(cfg.Buyers) * cfg.FirstShare)
	tenth := cfg.Arrival / 10
	out := make([]time.Duration, 0, cfg.Buyers)
	for i := range cfg.Buyers {
		if i < first {
			out = append(out, time.Duration(rnd.Int64N(int64(tenth)+1)))
		} else {
			out = append(out, tenth+time.Duration(rnd.Int64N(int64(cfg.Arrival-tenth)+1)))
		}
	}
	slices.Sort(out)
	return out
}

// clientsFor gives a caller its clients of every API process, starting
// with the (home mod n)th.
func (p *phase) clientsFor(sub string, admin bool, home int) (*buyerClients, error) {
	tok, err := p.tokens.Token(sub, admin)
	if err != nil {
		return nil, err
	}
	opts := connect.WithInterceptors(withToken(tok))
	b := &buyerClients{home: home % len(p.cfg.BaseURLs)}
	for _, url := range p.cfg.BaseURLs {
		b.byURL = append(b.byURL, clients{
			catalog: catalogv1connect.NewCatalogServiceClient(p.http, url, opts),
			holds:   bookingv1connect.NewHoldServiceClient(p.http, url, opts),
			orders:  bookingv1connect.NewOrderServiceClient(p.http, url, opts),
			seatmap: seatmapv1connect.NewSeatMapServiceClient(p.http, url, opts),
			pay:     paymentv1connect.NewPaymentServiceClient(p.http, url, opts),
			wr:      waitingroomv1connect.NewWaitingRoomServiceClient(p.http, url, opts),
		})
	}
	return b, nil
}

// buyerClients are one caller's clients of each API process and the one
// it uses now.
type buyerClients struct {
	mu    sync.Mutex
	byURL []clients
	home  int
}

// call makes one call through the caller's API process; when that process
// is gone (connection refused or reset, unavailable), it makes the same
// call, with the same idempotency key, through the next one, which becomes
// the caller's process. The same key makes the retried write the same
// request: a hold or a charge the gone process made is answered again,
// never made twice (R-5.1, decision 0216).
func call[T any](ctx context.Context, p *phase, b *buyerClients, rpc string, fn func(context.Context, clients) (*connect.Response[T], error)) (*connect.Response[T], error) {
	ctx = context.WithValue(ctx, idempotencyKey{}, randomID())
	b.mu.Lock()
	home := b.home
	b.mu.Unlock()
	n := len(b.byURL)
	var err error
	// Each process twice: a process that answers "in progress" for the key
	// of a call its gone peer had begun answers once the peer's
	// transaction is rolled back.
	for try := range 2 * n {
		i := (home + try) % n
		var resp *connect.Response[T]
		resp, err = timed(p.rpc, rpc, func() (*connect.Response[T], error) { return fn(ctx, b.byURL[i]) })
		if err == nil || !(gone(err) || try > 0 && inProgress(err)) || ctx.Err() != nil {
			if try > 0 {
				b.mu.Lock()
				b.home = i
				b.mu.Unlock()
			}
			return resp, err
		}
		p.mu.Lock()
		p.failovers++
		p.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(try+1) * 20 * time.Millisecond):
		}
	}
	return nil, err
}

// gone tells whether err says the API process did not answer: it is down
// or went down during the call, or says it is unavailable.
func gone(err error) bool {
	return connect.CodeOf(err) == connect.CodeUnavailable || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// inProgress tells whether err says another request with the same key runs.
func inProgress(err error) bool {
	var ce *connect.Error
	if !errors.As(err, &ce) || ce.Code() != connect.CodeAborted {
		return false
	}
	for _, d := range ce.Details() {
		if v, err := d.Value(); err == nil {
			if info, ok := v.(*errdetails.ErrorInfo); ok && info.GetReason() == "IDEMPOTENCY_KEY_IN_PROGRESS" {
				return true
			}
		}
	}
	return false
}

// idempotencyKey carries a call's Idempotency-Key in its context, so that
// its retries through other processes send the same.
type idempotencyKey struct{}

type clients struct {
	catalog catalogv1connect.CatalogServiceClient
	holds   bookingv1connect.HoldServiceClient
	orders  bookingv1connect.OrderServiceClient
	seatmap seatmapv1connect.SeatMapServiceClient
	pay     paymentv1connect.PaymentServiceClient
	wr      waitingroomv1connect.WaitingRoomServiceClient
}

// withToken adds the token, and an Idempotency-Key to every write: the
// call's (see call), else a fresh one.
func withToken(token string) connect.UnaryInterceptorFunc {
	return func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			req.Header().Set("Authorization", "Bearer "+token)
			if req.Spec().IdempotencyLevel != connect.IdempotencyNoSideEffects {
				key, ok := ctx.Value(idempotencyKey{}).(string)
				if !ok {
					key = randomID()
				}
				req.Header().Set("Idempotency-Key", key)
			}
			return next(ctx, req)
		}
	}
}

func (p *phase) createTrips(ctx context.Context) error {
	admin, err := p.clientsFor("loadtest-admin", true, 0)
	if err != nil {
		return err
	}
	rows := make([]string, p.cfg.RowsPerTrip)
	for i := range rows { // A … Z, AA, AB, …
		rows[i] = string(rune('A' + i%26))
		if i >= 26 {
			rows[i] = string(rune('A'+i/26-1)) + rows[i]
		}
	}
	for i := range p.cfg.Trips {
		req := &catalogv1.CreateShowRequest{
			Kind: catalogv1.ShowKind_SHOW_KIND_BUS_TRIP, Title: fmt.Sprintf("Load test %s trip %d", p.runID[:6], i+1),
			Origin: "Dhaka", Destination: "Chattogram", StartsAt: timestamppb.New(time.Now().Add(72 * time.Hour)),
			Currency: "BDT", HoldTtl: durationpb.New(p.ttl), MaxSeatsPerAccount: 4, MaxSeatsPerHold: 4,
			Sections: []*catalogv1.Section{{Name: "Main", Rows: rows, SeatsPerRow: 4, PriceMinor: 85000}},
		}
		if p.cfg.WaitingRoom {
			// Sales open when the first tenth of the window is over; who
			// comes before gets a lottery place.
			req.OnSaleAt = timestamppb.New(p.opensAt)
			req.WaitingRoom = &catalogv1.WaitingRoom{Enabled: true,
				MinAdmissionRate: p.cfg.MinAdmission, MaxAdmissionRate: p.cfg.MaxAdmission}
		}
		resp, err := call(ctx, p, admin, "CreateShow", func(ctx context.Context, c clients) (*connect.Response[catalogv1.CreateShowResponse], error) {
			return c.catalog.CreateShow(ctx, connect.NewRequest(req))
		})
		if err != nil {
			return fmt.Errorf("create trip: %w", err)
		}
		p.trips = append(p.trips, resp.Msg.GetShow().GetShowId())
	}
	return nil
}

// buyer is one person of the crowd.
func (p *phase) buyer(ctx context.Context, i int, rnd *mrand.Rand) {
	c, err := p.clientsFor(fmt.Sprintf("lt-%s-%d", p.runID, i), false, i)
	if err != nil {
		return
	}
	want := int(p.cfg.SeatsPerOrder)
	if rnd.Float64() < p.cfg.SeatsPerOrder-float64(want) {
		want++
	}
	payer := rnd.Float64() < p.cfg.PayShare
	pick := func() (int64, []string) { return p.pickTrip(ctx, c, want, rnd) }
	queueToken := ""
	if p.cfg.WaitingRoom {
		show := p.trips[rnd.IntN(len(p.trips))]
		if queueToken = p.queue(ctx, c, show); queueToken == "" {
			p.noteSoldOut()
			p.mu.Lock()
			p.gaveUp++
			p.mu.Unlock()
			return
		}
		pick = func() (int64, []string) { return p.onTrip(ctx, c, show, want) }
	}
	var hold *bookingv1.Hold
	for range p.cfg.HoldTries {
		show, free := pick()
		if show == 0 {
			break
		}
		rnd.Shuffle(len(free), func(a, b int) { free[a], free[b] = free[b], free[a] })
		resp, err := call(ctx, p, c, "CreateHold", func(ctx context.Context, c clients) (*connect.Response[bookingv1.CreateHoldResponse], error) {
			req := connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: free[:want]})
			if queueToken != "" {
				req.Header().Set("Queue-Token", queueToken)
			}
			return c.holds.CreateHold(ctx, req)
		})
		if err == nil {
			hold = resp.Msg.GetHold()
			break
		}
	}
	p.mu.Lock()
	if hold == nil {
		p.gaveUp++
	} else {
		p.holds = append(p.holds, heldSeats{at: time.Now(), seats: len(hold.GetSeats()), payer: payer})
	}
	p.mu.Unlock()
	if hold == nil || !payer {
		return // a leaver walks away: a ghost hold until the TTL
	}
	order := p.pay(ctx, c, hold)
	if order == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.confirmed = append(p.confirmed, confirmedOrder{id: order, c: c})
	for _, s := range hold.GetSeats() {
		p.sold[fmt.Sprintf("%d/%s", hold.GetShowId(), s)]++
	}
}

// pickTrip finds a trip with enough free seats, reading seat maps the way a
// buyer browses; when every trip is out of seats it records the first
// "sold out".
func (p *phase) pickTrip(ctx context.Context, c *buyerClients, want int, rnd *mrand.Rand) (int64, []string) {
	order := rnd.Perm(len(p.trips))
	for _, j := range order {
		show := p.trips[j]
		p.mu.Lock()
		seen, out := p.exhausted[show]
		p.mu.Unlock()
		if out && time.Since(seen) < time.Second {
			continue // someone just found it full
		}
		m, err := call(ctx, p, c, "GetSeatMap", func(ctx context.Context, c clients) (*connect.Response[seatmapv1.GetSeatMapResponse], error) {
			return c.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: show}))
		})
		if err != nil {
			continue
		}
		if free := seatsIn(m.Msg, 0); len(free) >= want {
			return show, free
		}
		p.mu.Lock()
		p.exhausted[show] = time.Now()
		p.mu.Unlock()
	}
	p.noteSoldOut()
	return 0, nil
}

// noteSoldOut records the first time a buyer found nothing left.
func (p *phase) noteSoldOut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.soldOut.IsZero() {
		p.soldOut = time.Now()
	}
}

// onTrip reads one trip's seat map: a buyer admitted to its waiting room
// holds there or nowhere.
func (p *phase) onTrip(ctx context.Context, c *buyerClients, show int64, want int) (int64, []string) {
	m, err := call(ctx, p, c, "GetSeatMap", func(ctx context.Context, c clients) (*connect.Response[seatmapv1.GetSeatMapResponse], error) {
		return c.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: show}))
	})
	if err != nil {
		return 0, nil
	}
	if free := seatsIn(m.Msg, 0); len(free) >= want {
		return show, free
	}
	p.noteSoldOut()
	return 0, nil
}

// queue joins a trip's waiting room and polls until admitted; it
// returns the admitted Queue-Token, or "" when the room says sold out.
func (p *phase) queue(ctx context.Context, c *buyerClients, show int64) string {
	j, err := call(ctx, p, c, "Join", func(ctx context.Context, c clients) (*connect.Response[waitingroomv1.JoinResponse], error) {
		return c.wr.Join(ctx, connect.NewRequest(&waitingroomv1.JoinRequest{ShowId: show}))
	})
	if err != nil {
		return ""
	}
	token, admitted, soldOut, wait := j.Msg.GetToken(), j.Msg.GetAdmittedToken(), j.Msg.GetSoldOut(), j.Msg.GetPollAfter().AsDuration()
	for admitted == "" && !soldOut {
		if p.cfg.PollInterval > 0 && (wait <= 0 || wait > p.cfg.PollInterval) {
			wait = p.cfg.PollInterval
		}
		select {
		case <-ctx.Done():
			return ""
		case <-time.After(max(wait, 50*time.Millisecond)):
		}
		st, err := call(ctx, p, c, "GetStatus", func(ctx context.Context, c clients) (*connect.Response[waitingroomv1.GetStatusResponse], error) {
			return c.wr.GetStatus(ctx, connect.NewRequest(&waitingroomv1.GetStatusRequest{Token: token}))
		})
		if err != nil {
			continue
		}
		admitted, soldOut, wait = st.Msg.GetAdmittedToken(), st.Msg.GetSoldOut(), st.Msg.GetPollAfter().AsDuration()
	}
	return admitted
}

// sampleAdmission reads every trip's sale each second while the phase runs
// (the controller's admission rate over time, R-9.4); the returned function
// stops it and gives the samples.
func (p *phase) sampleAdmission(ctx context.Context) func() []AdmissionSample {
	if !p.cfg.WaitingRoom {
		return func() []AdmissionSample { return nil }
	}
	ctx, stop := context.WithCancel(ctx)
	done := make(chan []AdmissionSample)
	admin, err := p.clientsFor("loadtest-admin", true, 0)
	go func() {
		var out []AdmissionSample
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for err == nil {
			select {
			case <-ctx.Done():
				done <- out
				return
			case <-tick.C:
			}
			s := AdmissionSample{At: time.Since(p.start)}
			for _, show := range p.trips {
				resp, err := call(ctx, p, admin, "GetSale", func(ctx context.Context, c clients) (*connect.Response[waitingroomv1.GetSaleResponse], error) {
					return c.wr.GetSale(ctx, connect.NewRequest(&waitingroomv1.GetSaleRequest{ShowId: show}))
				})
				if err != nil {
					continue
				}
				sale := resp.Msg.GetSale()
				s.Rate += sale.GetAdmissionRate()
				s.Admitted += sale.GetAdmitted()
				s.Waiting += sale.GetWaiting()
			}
			out = append(out, s)
		}
		<-ctx.Done()
		done <- out
	}()
	return func() []AdmissionSample { stop(); return <-done }
}

// pay orders the hold and pays it; it returns the order's id when the
// order is confirmed, else "".
func (p *phase) pay(ctx context.Context, c *buyerClients, hold *bookingv1.Hold) string {
	o, err := call(ctx, p, c, "CreateOrder", func(ctx context.Context, c clients) (*connect.Response[bookingv1.CreateOrderResponse], error) {
		return c.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: hold.GetHoldId()}))
	})
	if err != nil {
		return ""
	}
	id := o.Msg.GetOrder().GetOrderId()
	pay, err := call(ctx, p, c, "StartPayment", func(ctx context.Context, c clients) (*connect.Response[paymentv1.StartPaymentResponse], error) {
		return c.pay.StartPayment(ctx, connect.NewRequest(&paymentv1.StartPaymentRequest{
			OrderId: id, Sandbox: &paymentv1.SandboxPayment{Token: p.cfg.PayToken}}))
	})
	if err != nil || pay.Msg.GetPayment().GetStatus() != paymentv1.PaymentState_PAYMENT_STATE_SUCCEEDED {
		return ""
	}
	return id
}

// seatsIn returns the seats of a seat map in one state (0 free, 2 booked).
func seatsIn(m *seatmapv1.GetSeatMapResponse, state byte) []string {
	var out []string
	i := 0
	for _, s := range m.GetSections() {
		for _, r := range s.GetRows() {
			for _, seat := range r.GetSeats() {
				if i/4 < len(m.GetAvailability()) && (m.GetAvailability()[i/4]>>(2*(i%4)))&3 == state {
					out = append(out, seat)
				}
				i++
			}
		}
	}
	return out
}

// bookedOnServer counts the booked seats the server shows once its seat
// maps have caught up with the confirmed orders (the read model is at most
// seconds stale, R-8).
func (p *phase) bookedOnServer(ctx context.Context) (int, error) {
	admin, err := p.clientsFor("loadtest-admin", true, 0)
	if err != nil {
		return 0, err
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		booked := 0
		for _, show := range p.trips {
			m, err := call(ctx, p, admin, "GetSeatMap", func(ctx context.Context, c clients) (*connect.Response[seatmapv1.GetSeatMapResponse], error) {
				return c.seatmap.GetSeatMap(ctx, connect.NewRequest(&seatmapv1.GetSeatMapRequest{ShowId: show}))
			})
			if err != nil {
				return 0, fmt.Errorf("seat map of trip %d: %w", show, err)
			}
			booked += len(seatsIn(m.Msg, 2))
		}
		if booked == len(p.sold) || time.Now().After(deadline) {
			return booked, nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// lostOrders counts the orders a buyer saw confirmed that the server does
// not hold confirmed (must be 0: a confirmation is never taken back, even
// when the process that gave it is gone).
func (p *phase) lostOrders(ctx context.Context) (int, error) {
	p.mu.Lock()
	confirmed := slices.Clone(p.confirmed)
	p.mu.Unlock()
	lost := 0
	for _, o := range confirmed {
		resp, err := call(ctx, p, o.c, "GetOrder", func(ctx context.Context, c clients) (*connect.Response[bookingv1.GetOrderResponse], error) {
			return c.orders.GetOrder(ctx, connect.NewRequest(&bookingv1.GetOrderRequest{OrderId: o.id}))
		})
		switch {
		case connect.CodeOf(err) == connect.CodeNotFound:
			lost++
		case err != nil:
			return 0, fmt.Errorf("order %s: %w", o.id, err)
		case resp.Msg.GetOrder().GetStatus() != bookingv1.OrderStatus_ORDER_STATUS_CONFIRMED:
			lost++
		}
	}
	return lost, nil
}

func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// recorder keeps the latency of every call by RPC and result code.
type recorder struct {
	mu    sync.Mutex
	calls map[string]*calls
}

type calls struct {
	ok     []time.Duration
	errors map[string]int
}

func newRecorder() *recorder { return &recorder{calls: map[string]*calls{}} }

func timed[T any](r *recorder, rpc string, fn func() (T, error)) (T, error) {
	start := time.Now()
	v, err := fn()
	d := time.Since(start)
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.calls[rpc]
	if c == nil {
		c = &calls{errors: map[string]int{}}
		r.calls[rpc] = c
	}
	if err != nil {
		c.errors[connect.CodeOf(err).String()]++
	} else {
		c.ok = append(c.ok, d)
	}
	return v, err
}

func percentile(sorted []time.Duration, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted)-1) + 0.5)
	return float64(sorted[i].Microseconds()) / 1000
}

func (r *recorder) stats(elapsed time.Duration) map[string]RPCStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]RPCStats{}
	for name, c := range r.calls {
		sort.Slice(c.ok, func(a, b int) bool { return c.ok[a] < c.ok[b] })
		n := len(c.ok)
		errs := 0
		for _, e := range c.errors {
			errs += e
		}
		out[name] = RPCStats{
			Calls: n + errs, Errors: c.errors, PerSecond: float64(n+errs) / elapsed.Seconds(),
			P50ms: percentile(c.ok, 0.50), P95ms: percentile(c.ok, 0.95), P99ms: percentile(c.ok, 0.99),
		}
	}
	return out
}
