package chaos

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/search"
	"github.com/seatghor/seatghor/server/ticket"
)

// Check is one invariant: how many things it looked at and how many broke
// it (must be 0).
type Check struct {
	// Req is the item it belongs to (R1 races … R6 bad input).
	Req        string `json:"req"`
	Name       string `json:"name"`
	Checked    int64  `json:"checked"`
	Violations int64  `json:"violations"`
	Detail     string `json:"detail,omitempty"`
}

// Convergence is how long after the last write each read model took to
// equal the databases.
type Convergence struct {
	Within    time.Duration            `json:"within"`
	Took      time.Duration            `json:"took"`
	Converged bool                     `json:"converged"`
	Models    map[string]time.Duration `json:"models"`
	// Left says what still differed when the run stopped looking.
	Left map[string]string `json:"left,omitempty"`
	// Moved says what differed again at the last look and was equal once
	// more within the target (a hold lapsing after the load).
	Moved map[string]string `json:"moved,omitempty"`
}

// The read models, as the run names them.
const (
	modelSeatMaps  = "seat maps (Redis)"
	modelTickets   = "my tickets"
	modelTrips     = "trip index"
	modelPDFs      = "e-ticket PDFs"
	modelWebhooks  = "partner webhooks"
	looksPerSecond = 1
)

// truth is the databases' view of the run's orders at one moment.
type truth struct {
	byUser map[string][]booking.Order
	// booked are the orders confirmed (or confirmed, then cancelled): each
	// was announced to the partner's endpoint.
	booked []string
}

// readTruth reads every order of every caller of the run from the shards.
func (r *run) readTruth(ctx context.Context) (truth, error) {
	r.mu.Lock()
	users := map[string]bool{}
	for _, o := range r.orders {
		users[o.user] = true
	}
	r.mu.Unlock()
	t := truth{byUser: map[string][]booking.Order{}}
	for u := range users {
		for page := ""; ; {
			orders, next, err := r.d.App.Booking.ListMyOrders(ctx, u, 100, page)
			if err != nil {
				return t, err
			}
			for _, o := range orders {
				if !r.ours(o.ShowID) {
					continue
				}
				t.byUser[u] = append(t.byUser[u], o)
				if o.Status == booking.OrderConfirmed || o.Status == booking.OrderCancelled {
					t.booked = append(t.booked, o.ID)
				}
			}
			if page = next; page == "" {
				break
			}
		}
	}
	return t, nil
}

// ours tells whether a show is one of the run's.
func (r *run) ours(showID int64) bool {
	return slices.ContainsFunc(r.shows, func(s show) bool { return s.ID == showID })
}

// tickets is how many tickets an order has: one per seat or place.
func tickets(o booking.Order) int {
	n := 0
	for _, l := range o.Lines {
		if l.Seat != "" {
			n++
		} else {
			n += l.Quantity
		}
	}
	return n
}

// watchFor is how long after the last write the run watches the read
// models converge, in multiples of the target (Config.ConvergeWithin): a
// read model that equals the databases later than the target is reported
// with its time, one that never does within the watch is a violation. The
// target itself is not asserted: wall-clock limits on a shared machine fail
// for the neighbours' load, not the platform's (docs/performance.md: ratios, never timed assertions).
const watchFor = 4

// converge looks, once a second, whether each read model equals the
// databases, from the last write (the end of settling) until all do or the
// watch is over, and reports when each first did.
func (r *run) converge(ctx context.Context, _ time.Duration) Convergence {
	r.say("comparing the read models with the databases (target %s, watched for %s)", r.cfg.ConvergeWithin, watchFor*r.cfg.ConvergeWithin)
	c := Convergence{Within: r.cfg.ConvergeWithin, Models: map[string]time.Duration{}, Left: map[string]string{}}
	start := time.Now()
	deadline := start.Add(watchFor * r.cfg.ConvergeWithin)
	models := r.models()
	for {
		t, err := r.readTruth(ctx)
		if err == nil {
			for name, equal := range models {
				if _, done := c.Models[name]; done {
					continue
				}
				if why := equal(ctx, t); why == "" {
					c.Models[name] = time.Since(start).Round(10 * time.Millisecond)
					delete(c.Left, name)
				} else {
					c.Left[name] = why
				}
			}
		} else {
			c.Left["databases"] = err.Error()
		}
		if len(c.Models) == len(models) || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(time.Second / looksPerSecond)
	}
	// Once more, all at one moment: nothing moved back apart for good. The
	// load's last write is not the databases' last: a hold a buyer walked
	// away from lapses later, and its seats count as available in the shard
	// at once while the sweeper's release reaches the read models after. A
	// model that differs here gets the target again to follow; one that
	// does not is a violation, one that does is reported as moved.
	if len(c.Models) == len(models) {
		c.Moved = map[string]string{}
		apart := map[string]string{}
		if t, err := r.readTruth(ctx); err == nil {
			for name, equal := range models {
				if why := equal(ctx, t); why != "" {
					apart[name] = why
				}
			}
		}
		until := time.Now().Add(r.cfg.ConvergeWithin)
		for len(apart) > 0 && time.Now().Before(until) && ctx.Err() == nil {
			time.Sleep(time.Second / looksPerSecond)
			t, err := r.readTruth(ctx)
			if err != nil {
				continue
			}
			for name, why := range apart {
				if models[name](ctx, t) == "" {
					c.Moved[name] = why
					delete(apart, name)
				}
			}
		}
		for name, why := range apart {
			c.Left[name] = "differs again: " + why
		}
		if len(c.Moved) == 0 {
			c.Moved = nil
		}
	}
	for _, d := range c.Models {
		c.Took = max(c.Took, d)
	}
	c.Converged = len(c.Models) == len(models) && len(c.Left) == 0
	if len(c.Left) == 0 {
		c.Left = nil
	}
	r.say("read models: %v (converged %v, in %s)", c.Models, c.Converged, c.Took)
	return c
}

// models are the read models' comparisons with the databases: each says
// what differs, or "".
func (r *run) models() map[string]func(context.Context, truth) string {
	a := r.d.App
	out := map[string]func(context.Context, truth) string{}
	if r.store != nil {
		out[modelSeatMaps] = func(ctx context.Context, _ truth) string {
			for _, s := range r.shows {
				want, err := a.Booking.SeatMap(ctx, s.ID)
				if err != nil {
					return err.Error()
				}
				got, ok, err := r.store.GetAvailability(ctx, s.ID, want.AsOf)
				switch {
				case err != nil:
					return err.Error()
				case !ok:
					return fmt.Sprintf("show %d is not in Redis", s.ID)
				case !slices.Equal(want.States, got.States):
					return fmt.Sprintf("show %d: the seats differ", s.ID)
				}
				for i, ga := range want.GAAreas {
					if i >= len(got.GAAreas) || got.GAAreas[i].Remaining != ga.Remaining {
						return fmt.Sprintf("show %d: area %s differs", s.ID, ga.Name)
					}
				}
			}
			return ""
		}
	}
	if a.MyTickets != nil {
		views := func(ctx context.Context, user string) ([]ticket.View, error) {
			var out []ticket.View
			for page := ""; ; {
				vs, next, err := a.MyTickets.ListTickets(ctx, ticket.Holder{UserID: user}, ticket.ListFilter{Now: time.Now(), PageSize: 200, PageToken: page})
				if err != nil {
					return nil, err
				}
				out = append(out, vs...)
				if page = next; page == "" {
					return out, nil
				}
			}
		}
		out[modelTickets] = func(ctx context.Context, t truth) string {
			for user, orders := range t.byUser {
				vs, err := views(ctx, user)
				if err != nil {
					return err.Error()
				}
				good := map[string]int{}
				for _, v := range vs {
					if v.GoodForEntry() {
						good[v.OrderID]++
					}
				}
				for _, o := range orders {
					want := 0
					if o.Status == booking.OrderConfirmed {
						want = tickets(o)
					}
					if good[o.ID] != want {
						return fmt.Sprintf("order %s (%s): %d tickets good for entry, want %d", o.ID, o.Status, good[o.ID], want)
					}
				}
			}
			return ""
		}
		if a.Objects != nil {
			out[modelPDFs] = func(ctx context.Context, t truth) string {
				for user := range t.byUser {
					vs, err := views(ctx, user)
					if err != nil {
						return err.Error()
					}
					for _, v := range vs {
						if !v.GoodForEntry() {
							continue
						}
						if v.PDFKey == "" {
							return fmt.Sprintf("ticket %s has no PDF yet", v.ID)
						}
						if ok, err := a.Objects.Exists(ctx, v.PDFKey); err != nil || !ok {
							return fmt.Sprintf("ticket %s: PDF %s not in the bucket (%v)", v.ID, v.PDFKey, err)
						}
					}
				}
				return ""
			}
		}
	}
	if a.Trips != nil {
		out[modelTrips] = func(ctx context.Context, _ truth) string {
			var ids []int64
			for _, s := range r.shows {
				ids = append(ids, s.ID)
			}
			want, err := a.Booking.AvailableMany(ctx, ids)
			if err != nil {
				return err.Error()
			}
			res, err := a.Trips.Search(ctx, search.Query{Text: "Chaos " + r.tag, Limit: 100})
			if err != nil {
				return err.Error()
			}
			got := map[int64]int{}
			for _, trip := range res.Trips {
				got[trip.ShowID] = trip.SeatsAvailable
			}
			for _, id := range ids {
				if g, ok := got[id]; !ok || int64(g) != want[id] {
					return fmt.Sprintf("show %d: %d available in the index, %d in the shard", id, g, want[id])
				}
			}
			return ""
		}
	}
	out[modelWebhooks] = func(_ context.Context, t truth) string {
		if missing := r.receiver.missing(t.booked); len(missing) > 0 {
			return fmt.Sprintf("%d of %d bookings not announced (%s…)", len(missing), len(t.booked), missing[0])
		}
		return ""
	}
	return out
}

// check checks every invariant against the databases (and what the API
// answered during the run), once the read models had their time.
func (r *run) check(ctx context.Context, conv Convergence) []Check {
	r.say("checking the invariants")
	a := r.d.App
	var out []Check
	add := func(req, name string, checked, violations int64, detail string, err error) {
		if err != nil {
			violations, detail = max(violations, 1), "could not check: "+err.Error()
		}
		out = append(out, Check{Req: req, Name: name, Checked: checked, Violations: violations, Detail: detail})
	}
	r.mu.Lock()
	monitor, twiceSeen := r.monitor, r.twice
	hooks, bad := r.hooks, r.bad
	orders := make([]*orderSeen, 0, len(r.orders))
	for _, o := range r.orders {
		cp := *o
		orders = append(orders, &cp)
	}
	injected := slices.Clone(r.injected)
	r.mu.Unlock()

	// R1: races.
	holds, err := a.Booking.CheckHolds(ctx, time.Now())
	add("R1", "seats in two live holds or orders", holds.Holds, max(holds.SeatsTwice, monitor.SeatsTwice),
		fmt.Sprintf("at the end %d; the worst of %d looks during the load %d", holds.SeatsTwice, monitor.Holds, monitor.SeatsTwice), err)
	twice, err := a.Booking.CheckSeats(ctx)
	add("R1", "seats booked twice", holds.Holds, max(twice, twiceSeen), "", err)
	add("R1", "holds owning part of their seats", holds.Holds, max(holds.Partial, monitor.Partial), "", nil)
	add("R1", "general-admission areas past capacity", 1, max(holds.GAOver, monitor.GAOver), "", nil)
	add("R1", "general-admission buckets off their holds", 1, max(holds.GABuckets, monitor.GABuckets), "", nil)

	// R2: payments, after reconciliation.
	settled, err := a.Payments.CheckSettled(ctx)
	add("R2", "payment attempts left open or unknown", int64(r.payments), settled.Open,
		fmt.Sprintf("%d unknown", settled.Unknown), err)
	add("R2", "refunds left open", settled.OpenRefunds+settled.FailedRefunds, settled.OpenRefunds,
		fmt.Sprintf("%d refused by the gateway: owed and alerted, counted apart", settled.FailedRefunds), nil)
	kept, err := a.Payments.CheckKept(ctx, r.began.Add(-time.Hour), time.Now().Add(time.Hour))
	detail := fmt.Sprintf("%d charged; %d with a refund the gateway refused (owed, counted apart)", kept.Charged, kept.Owed)
	for i, p := range kept.Problems {
		if i == 3 {
			break
		}
		detail += fmt.Sprintf("; %s %s keeps %d of %d in %d of %d charges", p.OrderID, p.Status, p.Kept, p.Expected, p.Keeping, p.Captures)
	}
	add("R2", "orders not keeping one charge, their fee or nothing", int64(kept.Orders), int64(len(kept.Problems)+len(kept.Strays)), detail, err)
	n, problems, err := a.Payments.CheckChargedOnce(ctx, 20)
	add("R2", "orders charged twice or confirmed unpaid", n, int64(len(problems)), "", err)
	tb, err := a.Ledger.Check(ctx)
	bal := int64(0)
	if tb.SumMinor != 0 {
		bal = 1
	}
	add("R2", "trial balance off zero", 1, bal, fmt.Sprintf("sum %d", tb.SumMinor), err)
	add("R2", "journals not summing to zero", 1, tb.UnbalancedJournals, strings.Join(tb.UnbalancedTxnIDs, " "), nil)
	deskChecked, deskProblems := r.deskProblems()
	add("R2", "counter cash off its shift report or ledger", deskChecked, int64(len(deskProblems)), strings.Join(deskProblems[:min(3, len(deskProblems))], "; "), nil)

	// R3: webhooks.
	add("R3", "forged or stale gateway webhooks accepted", int64(hooks.forged+hooks.stale), int64(hooks.accepted),
		fmt.Sprintf("%d forged, %d stale; refused 401: %d and %d; answers %v", hooks.forged, hooks.stale,
			hooks.refusedForged, hooks.refusedStale, hooks.forgedStatusSeen), nil)
	stored, err := a.Payments.EventsStored(ctx, hooks.ids)
	add("R3", "forged or stale gateway webhooks stored", int64(len(hooks.ids)), stored, "", err)
	add("R3", "gateway events stored twice (duplicate processing)", settled.Events, settled.EventsTwice, "", nil)
	back := 0
	for _, o := range orders {
		if backwards(o.statuses) {
			back++
		}
	}
	add("R3", "order states going backwards", int64(len(orders)), int64(back), "", nil)

	// R4: crashes.
	var lost int64
	var confirmed int64
	var lostIDs []string
	for _, o := range orders {
		if !o.confirmed {
			continue
		}
		confirmed++
		got, err := a.Booking.GetOrder(ctx, booking.Caller{UserID: "chaos", Admin: true}, o.id)
		ok := err == nil && (got.Status == booking.OrderConfirmed || got.Status == booking.OrderCancelled && o.cancelTried)
		if !ok {
			lost++
			if len(lostIDs) < 5 {
				lostIDs = append(lostIDs, fmt.Sprintf("%s (%s %v)", o.id, got.Status, err))
			}
		}
	}
	add("R4", "orders answered confirmed, not confirmed in the database", confirmed, lost, strings.Join(lostIDs, ", "), nil)
	editsChecked, editProblems, err := r.editProblems(ctx)
	add("R4", "console edits not audited exactly once", editsChecked, int64(len(editProblems)),
		strings.Join(editProblems[:min(3, len(editProblems))], "; "), err)
	failed := int64(0)
	for _, in := range injected {
		if in.Err != "" {
			failed++
		}
	}
	add("R4", "faults not undone (a process or server not back)", int64(len(injected)), failed, "", nil)
	notEqual := int64(len(conv.Left))
	if !conv.Converged {
		notEqual = max(notEqual, 1)
	}
	add("R4", "read models not equal to the databases after the load", int64(len(r.models())), notEqual,
		fmt.Sprintf("equal %s after the last write (target %s): %v", conv.Took, r.cfg.ConvergeWithin, conv.Left), nil)

	// R5: outages.
	for _, o := range r.outages() {
		add("R5", o.Name+": reads answered internal", int64(o.Reads), int64(o.ReadsInternal),
			fmt.Sprintf("reads answered %v", o.ReadCodes), nil)
		v := int64(0)
		if o.CatchUp < 0 {
			v = 1
		}
		add("R5", o.Name+": read model not caught up", 1, v, fmt.Sprintf("caught up %s after it came back", durationOr(o.CatchUp)), nil)
	}

	// R6: bad input.
	add("R6", "malformed requests answered internal or 5xx", int64(bad.sent), int64(bad.internal), strings.Join(bad.problems, "; "), nil)
	add("R6", "malformed requests accepted", int64(bad.sent), int64(bad.accepted), "", nil)
	written, err := r.writtenBy(ctx, bad.users)
	add("R6", "holds or orders written by refused requests", int64(len(bad.users)), written, "", err)
	panics, files, err := r.panics()
	add("R6", "panics in the processes' logs", int64(files), panics, "", err)
	return out
}

// orderRank orders the statuses an order goes through: a later one never
// comes before an earlier one.
var orderNext = map[string][]string{
	"ORDER_STATUS_PENDING_PAYMENT": {"ORDER_STATUS_CONFIRMED", "ORDER_STATUS_EXPIRED", "ORDER_STATUS_REFUNDED", "ORDER_STATUS_CANCELLED"},
	"ORDER_STATUS_CONFIRMED":       {"ORDER_STATUS_CANCELLED"},
	"ORDER_STATUS_EXPIRED":         {"ORDER_STATUS_REFUNDED"},
}

// backwards tells whether an order's statuses, as read one after the
// other, went somewhere they cannot come from.
func backwards(statuses []string) bool {
	for i := 1; i < len(statuses); i++ {
		prev, cur := statuses[i-1], statuses[i]
		if prev != cur && !slices.Contains(orderNext[prev], cur) {
			return true
		}
	}
	return false
}

// writtenBy counts the holds (of any status) and orders the users of
// refused requests have: there must be none.
func (r *run) writtenBy(ctx context.Context, users []string) (int64, error) {
	if len(users) == 0 {
		return 0, nil
	}
	return r.d.App.Booking.CountHoldsOf(ctx, users)
}

// panics counts the panics the serve processes logged (a recovered panic
// in a handler, or a crash's trace).
func (r *run) panics() (int64, int, error) {
	var n int64
	files := 0
	for _, path := range r.d.Cluster.Logs() {
		f, err := os.Open(path)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return n, files, err
		}
		files++
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			line := sc.Text()
			// A handler's panic is logged by net/http ("http: panic
			// serving …"); any other ends the process with "panic: …" or
			// "fatal error: …" and its goroutines.
			if strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "fatal error: ") ||
				strings.Contains(line, "http: panic serving") {
				n++
			}
		}
		f.Close()
	}
	return n, files, nil
}
