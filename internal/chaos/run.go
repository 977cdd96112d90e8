package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	ledgerv1 "github.com/seatghor/seatghor/gen/seatghor/ledger/v1"
	partnerv1 "github.com/seatghor/seatghor/gen/seatghor/partner/v1"
	"github.com/seatghor/seatghor/projections/seatmap"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/booking"
)

// show is one of the run's shows.
type show struct {
	ID    int64
	Bus   bool
	Seats []string // in layout order
	GA    string   // the general-admission area, if any
	// Payers is the payers' own general-admission area (Config.Payers).
	Payers string
	// Allocated are the seats given to the partner's channel.
	Allocated []string
}

// run is one chaos run while it goes.
type run struct {
	cfg   Config
	d     Deps
	tag   string // names the run's shows and callers
	began time.Time
	hc    *http.Client
	rec   *recorder
	store *seatmap.Store

	admin, gate *caller
	partner     partner
	desk        *desk
	edits       edits
	shows       []show
	receiver    *receiver
	schedule    []Fault

	loadStart, loadEnd time.Time

	mu       sync.Mutex
	buyers   map[string]*caller // by user id: every caller that got a hold
	holds    map[string]*heldBy // by hold id
	orders   map[string]*orderSeen
	payments int // StartPayment calls made
	gaveUp   int
	injected []Injected
	windows  map[FaultKind]window
	catchUp  map[FaultKind]time.Duration
	catching sync.WaitGroup    // the catch-up timers
	watched  chan struct{}     // closed when the convergence watch is over
	monitor  booking.HoldCheck // the worst the hold monitor saw during the load
	twice    int64
	maxLoad  float64
	bad      badRequests
	hooks    gatewayHooks
}

// partner is the run's reseller: its API key's caller and allocation.
type partner struct {
	ID     int64
	caller *caller
}

// heldBy is a hold a buyer got.
type heldBy struct {
	user    string
	show    int64
	ordered bool
	done    bool // confirmed, released, or given up for good
}

// orderSeen is what the run saw of an order.
type orderSeen struct {
	id, user, hold string
	show           int64
	c              *caller
	// confirmed: the API answered it confirmed (a payment SUCCEEDED or
	// the order CONFIRMED).
	confirmed bool
	// cancelTried: a cancellation was sent, whatever its answer;
	// checkedIn: a ticket of it was admitted at the gate.
	cancelTried, checkedIn bool
	statuses               []string // as GetOrder answered, in order
	payments               []string
}

// window is when a fault's outage lasted.
type window struct{ from, to time.Time }

func newRun(cfg Config, d Deps) (*run, error) {
	apis := d.Cluster.APIs()
	if len(apis) == 0 {
		return nil, fmt.Errorf("chaos: the cluster has no API process")
	}
	r := &run{cfg: cfg, d: d, tag: randomID()[:6], began: time.Now(), rec: &recorder{},
		buyers: map[string]*caller{}, holds: map[string]*heldBy{}, orders: map[string]*orderSeen{},
		windows: map[FaultKind]window{}, catchUp: map[FaultKind]time.Duration{}, watched: make(chan struct{}),
		edits: edits{asked: map[string]bool{}, answered: map[string]bool{}}}
	r.hc = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute,
		DialContext: (&net.Dialer{Timeout: 3 * time.Second}).DialContext,
	}}
	if d.App.Redis != nil {
		r.store = seatmap.NewStore(d.App.Redis, d.RedisPrefix, 0)
	}
	admin, err := r.token("chaos-admin", auth.RoleAdmin, 0)
	if err != nil {
		return nil, err
	}
	r.admin = newCaller(r.hc, apis, admin, 0)
	gate, err := r.token(d.Gate, auth.RoleOperator, 0)
	if err != nil {
		return nil, err
	}
	r.gate = newCaller(r.hc, apis, gate, 1)
	return r, nil
}

func (r *run) close() {
	if r.receiver != nil {
		r.receiver.close()
	}
	r.hc.CloseIdleConnections()
}

// token mints a day's token.
func (r *run) token(sub string, role auth.Role, partnerID int64) (string, error) {
	return r.d.Tokens.MintPrincipal(auth.Principal{UserID: sub, Role: role, PartnerID: partnerID}, 24*time.Hour)
}

// user returns the caller of a buyer (made on first use).
func (r *run) user(id string, home int) (*caller, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.buyers[id]; ok {
		return c, nil
	}
	tok, err := r.token(id, auth.RoleUser, 0)
	if err != nil {
		return nil, err
	}
	c := newCaller(r.hc, r.d.Cluster.APIs(), tok, home)
	r.buyers[id] = c
	return c, nil
}

// run is the whole run: set up, load and faults, settle, converge, check.
func (r *run) run(ctx context.Context) (Result, error) {
	res := Result{Config: r.cfg, StartedAt: time.Now().UTC(), Machine: machine()}
	r.maxLoad = res.Machine.LoadBefore[0]
	if err := r.setup(ctx); err != nil {
		return res, err
	}
	r.schedule = Schedule(r.cfg, len(r.shows))
	res.Schedule = r.schedule
	r.say("shows %d (%d seats, %d general-admission places), partner %d; the schedule:", len(r.shows), r.seatCount(),
		r.cfg.GAPlaces, r.partner.ID)
	for _, f := range r.schedule {
		r.say("  %s", f)
	}

	r.load(ctx)
	r.say("load done: %d requests; %d faults applied", len(r.rec.snapshot()), len(r.injected))
	if err := ctx.Err(); err != nil {
		return res, err
	}
	settled := r.settle(ctx)
	conv := r.converge(ctx, settled)
	close(r.watched)
	r.catching.Wait()
	res.Checks = r.check(ctx, conv)
	res.Convergence = conv
	res.Settled = settled.Round(time.Millisecond)
	res.Faults = r.injected
	res.Outages = r.outages()
	res.Load = r.loadSummary()
	res.Machine.LoadMax = r.maxLoad
	res.FinishedAt = time.Now().UTC()
	return res, nil
}

// seatCount is how many seats the run's shows have.
func (r *run) seatCount() int {
	n := 0
	for _, s := range r.shows {
		n += len(s.Seats)
	}
	return n
}

// setup creates the run's shows (fresh bus trips, one stadium with a
// general-admission area, all of the demo organisation, so its gate staff
// may check tickets in), the partner with its booking key and an
// allocation, and an admin's webhook endpoint at the run's receiver.
func (r *run) setup(ctx context.Context) error {
	r.say("setting up (run %s)", r.tag)
	starts := time.Now().Add(30 * 24 * time.Hour).Truncate(time.Hour)
	create := func(req *catalogv1.CreateShowRequest) (*catalogv1.Show, error) {
		req.Currency, req.OrganizationId = "BDT", r.d.Organization
		req.StartsAt = timestamppb.New(starts)
		req.HoldTtl = durationpb.New(r.cfg.HoldTTL)
		req.MaxSeatsPerAccount, req.MaxSeatsPerHold = 8, 4
		resp, err := call(ctx, r.rec, r.admin, "CreateShow", func(ctx context.Context, c clients) (*connect.Response[catalogv1.CreateShowResponse], error) {
			return c.catalog.CreateShow(ctx, connect.NewRequest(req))
		})
		if err != nil {
			return nil, fmt.Errorf("chaos: create show %q: %w", req.GetTitle(), err)
		}
		return resp.Msg.GetShow(), nil
	}
	for i := range r.cfg.BusTrips {
		s, err := create(&catalogv1.CreateShowRequest{
			Kind: catalogv1.ShowKind_SHOW_KIND_BUS_TRIP, Title: fmt.Sprintf("Chaos %s bus %d", r.tag, i+1),
			Origin: "Dhaka", Destination: "Chattogram",
			Sections: []*catalogv1.Section{{Name: "Main", Rows: rowLabels(10), SeatsPerRow: 4, PriceMinor: 85000}},
		})
		if err != nil {
			return err
		}
		r.shows = append(r.shows, show{ID: s.GetShowId(), Bus: true, Seats: seatNames(10, 4)})
	}
	rows := r.cfg.StadiumSeats / 20
	s, err := create(&catalogv1.CreateShowRequest{
		Kind: catalogv1.ShowKind_SHOW_KIND_SPORT, Title: fmt.Sprintf("Chaos %s stadium", r.tag), Venue: "Mirpur",
		Sections: []*catalogv1.Section{{Name: "Stand", Rows: rowLabels(rows), SeatsPerRow: 20, PriceMinor: 150000}},
		GaAreas:  r.gaAreas(),
	})
	if err != nil {
		return err
	}
	stadium := show{ID: s.GetShowId(), Seats: seatNames(rows, 20), GA: "Hill"}
	if r.cfg.Payers > 0 {
		stadium.Payers = "Terrace"
	}
	r.shows = append(r.shows, stadium)
	// The show the console's edits change (not one of the load's).
	edited, err := create(&catalogv1.CreateShowRequest{
		Kind: catalogv1.ShowKind_SHOW_KIND_CONCERT, Title: fmt.Sprintf("Chaos %s recital", r.tag), Venue: "Shilpakala Academy",
		Sections: []*catalogv1.Section{{Name: "Hall", Rows: rowLabels(2), SeatsPerRow: 10, PriceMinor: 50000}},
	})
	if err != nil {
		return err
	}
	r.edits.show = edited.GetShowId()

	// The partner: sells the run's shows; its booking key holds among 8
	// seats of the first bus allocated to it, and in general sale.
	var ids []int64
	for _, s := range r.shows {
		ids = append(ids, s.ID)
	}
	p, err := call(ctx, r.rec, r.admin, "CreatePartner", func(ctx context.Context, c clients) (*connect.Response[partnerv1.CreatePartnerResponse], error) {
		return c.partner.CreatePartner(ctx, connect.NewRequest(&partnerv1.CreatePartnerRequest{
			Name: "Chaos Travels " + r.tag, CommissionBps: 500, AllowedShowIds: ids,
			Contact: &partnerv1.Contact{Name: "Chaos", Email: "chaos@partner.example"}}))
	})
	if err != nil {
		return fmt.Errorf("chaos: create partner: %w", err)
	}
	r.partner.ID = p.Msg.GetPartner().GetPartnerId()
	staff, err := r.token("chaos-partner-staff", auth.RolePartner, r.partner.ID)
	if err != nil {
		return err
	}
	k, err := call(ctx, r.rec, newCaller(r.hc, r.d.Cluster.APIs(), staff, 0), "CreateApiKey", func(ctx context.Context, c clients) (*connect.Response[partnerv1.CreateApiKeyResponse], error) {
		return c.partner.CreateApiKey(ctx, connect.NewRequest(&partnerv1.CreateApiKeyRequest{PartnerId: r.partner.ID,
			Name: "chaos booking", Scope: partnerv1.ApiKeyScope_API_KEY_SCOPE_BOOKING}))
	})
	if err != nil {
		return fmt.Errorf("chaos: create the partner's key: %w", err)
	}
	r.partner.caller = newCaller(r.hc, r.d.Cluster.APIs(), k.Msg.GetSecret(), 1)
	bus := &r.shows[0]
	bus.Allocated = bus.Seats[len(bus.Seats)-8:]
	if _, err := call(ctx, r.rec, r.admin, "AllocateSeats", func(ctx context.Context, c clients) (*connect.Response[partnerv1.AllocateSeatsResponse], error) {
		return c.alloc.AllocateSeats(ctx, connect.NewRequest(&partnerv1.AllocateSeatsRequest{ShowId: bus.ID, PartnerId: r.partner.ID,
			Seats: bus.Allocated, GeneralSale: true, ReturnAt: timestamppb.New(starts.Add(-24 * time.Hour))}))
	}); err != nil {
		return fmt.Errorf("chaos: allocate seats to the partner: %w", err)
	}

	// Partners' webhooks: an admin's endpoint gets every event.
	if r.receiver, err = newReceiver(); err != nil {
		return err
	}
	ep, err := call(ctx, r.rec, r.admin, "CreateEndpoint", func(ctx context.Context, c clients) (*connect.Response[partnerv1.CreateEndpointResponse], error) {
		return c.webhooks.CreateEndpoint(ctx, connect.NewRequest(&partnerv1.CreateEndpointRequest{
			Url: r.receiver.url, EventTypes: []string{"booking.confirmed"}, Description: "chaos " + r.tag}))
	})
	if err != nil {
		return fmt.Errorf("chaos: create a webhook endpoint: %w", err)
	}
	if err := r.receiver.setSecret(ep.Msg.GetSecret()); err != nil {
		return err
	}
	// The counter sells for cash from the same seats (issue 25).
	return r.openDesk(ctx)
}

// gaAreas are the stadium's general-admission areas: the Hill the buyers
// race for, and the payers' Terrace, four places a payer.
func (r *run) gaAreas() []*catalogv1.GaArea {
	areas := []*catalogv1.GaArea{{Name: "Hill", Capacity: int32(r.cfg.GAPlaces), PriceMinor: 50000}}
	if r.cfg.Payers > 0 {
		areas = append(areas, &catalogv1.GaArea{Name: "Terrace", Capacity: int32(4 * r.cfg.Payers), PriceMinor: 30000})
	}
	return areas
}

// rowLabels are n row labels A, B, … Z, AA, AB, ….
func rowLabels(n int) []string {
	var rows []string
	for i := range n {
		label := string(rune('A' + i%26))
		if i >= 26 {
			label = string(rune('A'+i/26-1)) + label
		}
		rows = append(rows, label)
	}
	return rows
}

// seatNames are the seats of rows × perRow in layout order.
func seatNames(rows, perRow int) []string {
	var out []string
	for _, row := range rowLabels(rows) {
		for n := 1; n <= perRow; n++ {
			out = append(out, fmt.Sprintf("%s%d", row, n))
		}
	}
	return out
}

// load runs the buyers, the other actors and the schedule until the last
// buyer is done and the last fault is undone.
func (r *run) load(ctx context.Context) {
	r.loadStart = time.Now()
	actx, stopActors := context.WithCancel(ctx)
	var actors sync.WaitGroup
	actors.Go(func() { r.monitorHolds(actx) })
	actors.Go(func() { r.readers(actx) })
	actors.Go(func() { r.malformed(actx) })
	actors.Go(func() { r.forge(actx) })
	if r.desk != nil {
		deskRnd := rand.New(rand.NewPCG(r.cfg.Seed, 0xc0de5))
		actors.Go(func() { r.counterSales(actx, deskRnd) })
	}
	actors.Go(func() { r.consoleEdits(actx) })
	faultsDone := make(chan struct{})
	go func() { defer close(faultsDone); r.applyFaults(ctx) }()

	var buyers sync.WaitGroup
	buyers.Go(func() { r.arrive(ctx, r.cfg.Buyers, 0xb0e75, &buyers, r.buyer) })
	buyers.Go(func() { r.arrive(ctx, r.cfg.Payers, 0x9a7e5, &buyers, r.payer) })
	buyers.Wait()
	<-faultsDone
	stopActors()
	actors.Wait()
	r.loadEnd = time.Now()
	r.releaseLeftovers(ctx)
	r.closeDesk(ctx)
}

// arrive starts n people of one kind at seeded moments of the arrival
// window, each with a random stream of its own, and adds them to wg.
func (r *run) arrive(ctx context.Context, n int, stream uint64, wg *sync.WaitGroup, person func(context.Context, int, *rand.Rand)) {
	rnd := rand.New(rand.NewPCG(r.cfg.Seed, stream))
	arrivals := make([]time.Duration, n)
	for i := range arrivals {
		arrivals[i] = time.Duration(rnd.Int64N(int64(r.cfg.Arrival)))
	}
	slices.Sort(arrivals)
	for i, at := range arrivals {
		seed := rnd.Uint64()
		select {
		case <-ctx.Done():
		case <-time.After(time.Until(r.loadStart.Add(at))):
		}
		if ctx.Err() != nil {
			return
		}
		wg.Go(func() { person(ctx, i, rand.New(rand.NewPCG(seed, uint64(i)))) })
	}
}

// settle waits until the payment jobs have nothing left to find out
// (no attempt or refund open, every webhook event applied), has an admin
// run reconciliation over the run, and waits again; it returns when the
// last write was made, as near as it can tell.
func (r *run) settle(ctx context.Context) time.Duration {
	r.say("settling payments (within %s)", r.cfg.SettleWithin)
	began := time.Now()
	deadline := began.Add(r.cfg.SettleWithin)
	wait := func() {
		for time.Now().Before(deadline) && ctx.Err() == nil {
			out, err := r.d.App.Payments.CheckSettled(ctx)
			if err == nil && out.Open == 0 && out.OpenRefunds == 0 && out.Unprocessed == 0 {
				return
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	wait()
	rec, err := call(ctx, r.rec, r.admin, "RunReconciliation", func(ctx context.Context, c clients) (*connect.Response[ledgerv1.RunReconciliationResponse], error) {
		return c.ledger.RunReconciliation(ctx, connect.NewRequest(&ledgerv1.RunReconciliationRequest{
			PeriodStart: timestamppb.New(r.began.Add(-time.Hour)), PeriodEnd: timestamppb.New(time.Now().Add(time.Hour))}))
	})
	if err != nil {
		r.say("reconciliation failed: %v", err)
	} else {
		m := rec.Msg
		r.say("reconciliation: %d local payments, %d gateway records, %d matched, %d mismatches, %d resolved, %d refunds started",
			m.GetLocalPayments(), m.GetGatewayRecords(), m.GetMatched(), len(m.GetMismatches()), m.GetResolved(), m.GetRefundsStarted())
		r.mu.Lock()
		r.hooks.reconciled = reconciliation{Mismatches: len(m.GetMismatches()), Resolved: m.GetResolved(), RefundsStarted: m.GetRefundsStarted()}
		r.mu.Unlock()
	}
	wait()
	return time.Since(began)
}
