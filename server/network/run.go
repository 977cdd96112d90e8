package network

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/errgroup"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	networkv1 "github.com/seatghor/seatghor/gen/seatghor/network/v1"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/idempotency"
	"github.com/seatghor/seatghor/server/pg"
)

// How a timetable makes its trips (decisions 0361, 0363). A run looks at
// the local dates from today (where the timetable runs) to Days-1 ahead:
//
//   - every run the calendar has then, departing after now, that is not
//     made yet is made: CreateShow with the route's stops and the
//     timetable's fares, layout and sale rules, and in CreateShow's own
//     transaction the trip's key (timetable, local date, departure) is
//     claimed in timetable_trips. A second run, or a second process, finds
//     the key taken and makes nothing; the claim and the show commit or
//     fail together.
//   - every trip made before whose terms are no longer the timetable's
//     (its fares, stops, coach, sale rules, title or departure changed, or
//     it no longer runs) is withdrawn when nobody held, bought or was
//     allocated any of it (catalog.WithdrawUnsold decides that in the
//     statement that deletes its seats), and made again when it still
//     runs; a trip with sales is left alone, and the run says so.
//
// Trips departed, and trips beyond the run's last date, are never looked at.

// errClaimed ends a trip's CreateShow when its key is taken: another run
// made it meanwhile.
var errClaimed = errors.New("the trip's key is taken")

// RunRequest says which timetables Run runs.
type RunRequest struct {
	// OrganizationID: only this organisation's; a manager names one
	// they manage, or TimetableIDs of it.
	OrganizationID string
	// TimetableIDs: only these when set.
	TimetableIDs []string
	// Days ahead, today included; 0: the service's.
	Days int
}

// Run runs timetables now, one after the other, each waiting for a run of
// it already under way, and answers what each did.
func (s *Service) Run(ctx context.Context, c Caller, req RunRequest) ([]*networkv1.TimetableRun, error) {
	ctx = idempotency.WithoutKey(ctx)
	days := cmp.Or(req.Days, s.days)
	if days < 1 || days > MaxDays {
		return nil, fault.OnField(fault.NetworkInvalid, "days", "%d: 1 to %d", days, MaxDays)
	}
	var ids []string
	switch {
	case len(req.TimetableIDs) > 0:
		for _, id := range req.TimetableIDs {
			t, err := readTimetable(ctx, s.db, id)
			if err != nil {
				return nil, err
			}
			if req.OrganizationID != "" && t.GetOrganizationId() != req.OrganizationID {
				return nil, fault.OnField(fault.NetworkInvalid, "timetable_ids", "timetable %q is not of organisation %q", id, req.OrganizationID)
			}
			if err := s.authorize(ctx, c, t.GetOrganizationId()); err != nil {
				return nil, err
			}
			ids = append(ids, id)
		}
		slices.Sort(ids)
	case req.OrganizationID == "" && !c.Admin:
		return nil, fault.OnField(fault.NetworkInvalid, "organization_id", "name the organisation whose timetables to run")
	default:
		if req.OrganizationID != "" {
			if err := s.authorize(ctx, c, req.OrganizationID); err != nil {
				return nil, err
			}
		}
		var err error
		if ids, err = s.timetableIDs(ctx, req.OrganizationID); err != nil {
			return nil, err
		}
	}
	out := make([]*networkv1.TimetableRun, 0, len(ids))
	for _, id := range ids {
		run, err := s.runOne(ctx, c, id, days, true)
		if err != nil {
			return nil, err
		}
		out = append(out, run)
	}
	return out, nil
}

// timetableIDs lists the timetables of org, or every one.
func (s *Service) timetableIDs(ctx context.Context, org string) ([]string, error) {
	rows, err := s.db.Query(ctx, `SELECT timetable_id FROM timetables WHERE $1 = '' OR organization_id = $1 ORDER BY timetable_id`, org)
	if err != nil {
		return nil, fmt.Errorf("list timetables: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("list timetables: %w", err)
	}
	return ids, nil
}

// RunJob runs every timetable at once and then every interval until ctx
// ends (the workers' job): a timetable another process is running is
// passed over until the next time.
func (s *Service) RunJob(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		s.RunAll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// RunAll runs every timetable once, as the job does, a few at once; a
// timetable another process is running is passed over.
func (s *Service) RunAll(ctx context.Context) {
	ids, err := s.timetableIDs(ctx, "")
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("timetables", "err", err)
		}
		return
	}
	start := time.Now()
	var (
		mu                    sync.Mutex
		made, withdrawn, kept int
		g                     errgroup.Group
	)
	g.SetLimit(runAllAtOnce)
	for _, id := range ids {
		g.Go(func() error {
			run, err := s.runOne(ctx, Caller{}, id, s.days, false)
			if err != nil {
				if ctx.Err() == nil {
					s.log.Error("timetable run", "timetable_id", id, "err", err)
				}
				return nil
			}
			if run == nil {
				return nil // another process runs it
			}
			mu.Lock()
			made, withdrawn, kept = made+len(run.GetMade()), withdrawn+len(run.GetWithdrawn()), kept+len(run.GetLeftAlone())
			mu.Unlock()
			return nil
		})
	}
	_ = g.Wait()
	if made+withdrawn > 0 {
		s.log.Info("timetables made their trips", "timetables", len(ids), "made", made, "withdrawn", withdrawn,
			"left_alone", kept, "took", time.Since(start).Round(time.Millisecond))
	}
}

// runAllAtOnce is how many timetables RunAll runs at once, each making
// its trips one by one.
const runAllAtOnce = 4

// runOne runs a timetable under its lease, so two runs of it never
// interleave, in one process or several: wait says whether to wait for a
// run under way, or to pass (answering nil).
func (s *Service) runOne(ctx context.Context, c Caller, id string, days int, wait bool) (*networkv1.TimetableRun, error) {
	lease, err := s.takeLease(ctx, id, wait)
	if err != nil || lease.IsZero() {
		return nil, err
	}
	defer s.giveLease(context.WithoutCancel(ctx), id, lease)
	t, err := readTimetable(ctx, s.db, id)
	if err != nil {
		return nil, err
	}
	r, err := readRoute(ctx, s.db, t.GetRouteId())
	if err != nil {
		return nil, err
	}
	return s.apply(ctx, c, t, r, days)
}

// leaseFor is how long a run may hold its timetable: a run takes seconds;
// a lease a process that died left lapses after it.
const leaseFor = 10 * time.Minute

// takeLease takes timetable id's lease, by the database's clock (the
// processes' clocks need not agree): zero when another run holds it and
// wait is false. Waiting polls until the lease is free or ctx ends.
func (s *Service) takeLease(ctx context.Context, id string, wait bool) (time.Time, error) {
	backoff := 10 * time.Millisecond
	for {
		var until time.Time
		err := s.db.QueryRow(ctx, `
			UPDATE timetables SET run_until = clock_timestamp() + make_interval(secs => $2)
			WHERE timetable_id = $1 AND (run_until IS NULL OR run_until < clock_timestamp())
			RETURNING run_until`, id, leaseFor.Seconds()).Scan(&until)
		found, err := pg.Found(err)
		if err != nil {
			return time.Time{}, fmt.Errorf("take the lease of timetable %s: %w", id, err)
		}
		if found {
			return until, nil
		}
		if _, err := readTimetable(ctx, s.db, id); err != nil {
			return time.Time{}, err
		}
		if !wait {
			return time.Time{}, nil
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("wait for the run of timetable %s under way: %w", id, ctx.Err())
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 250*time.Millisecond)
	}
}

// giveLease gives a lease back (when it is still the one taken).
func (s *Service) giveLease(ctx context.Context, id string, lease time.Time) {
	if _, err := s.db.Exec(ctx, `UPDATE timetables SET run_until = NULL WHERE timetable_id = $1 AND run_until = $2`, id, lease); err != nil {
		s.log.Warn("timetable lease not given back; it lapses", "timetable_id", id, "err", err)
	}
}

// key names a run of a timetable: its local date and departure.
type key struct {
	date date
	time hhmm
}

// planned is a run the timetable has, with the show it makes.
type planned struct {
	run
	req   *catalogv1.CreateShowRequest
	terms terms
}

// made is a trip a timetable made before.
type made struct {
	key
	showID   int64
	startsAt time.Time
	terms    terms
	kept     terms
}

// apply brings a timetable's trips of the days ahead in line with it.
func (s *Service) apply(ctx context.Context, c Caller, t *networkv1.Timetable, r *networkv1.Route, days int) (*networkv1.TimetableRun, error) {
	s.metrics.runs.Inc()
	now := s.now()
	sch, err := parseSchedule(t)
	if err != nil {
		return nil, err
	}
	first := dateOf(now, sch.loc)
	last := first.addDays(days - 1)
	out := &networkv1.TimetableRun{TimetableId: t.GetTimetableId(), FromDate: first.String(), ToDate: last.String()}
	plan := map[key]planned{}
	for _, rn := range sch.runsBetween(first, last) {
		if !rn.startsAt.After(now) {
			continue // departed, or leaving now: too late to sell
		}
		req := tripRequest(t, r, rn)
		plan[key{rn.date, rn.time}] = planned{run: rn, req: req, terms: termsOf(req, t)}
	}
	trips, err := s.madeTrips(ctx, t.GetTimetableId(), now, last)
	if err != nil {
		return nil, err
	}
	for _, m := range trips {
		p, scheduled := plan[m.key]
		change := "no longer runs"
		want := terms{"runs": "no"}
		if scheduled {
			change, want = diff(m.terms, p.terms), p.terms
		}
		if change == "" {
			out.Unchanged++
			delete(plan, m.key)
			continue
		}
		trip := &networkv1.TimetableTrip{ShowId: m.showID, Date: m.date.String(), DepartureTime: m.time.String(),
			StartsAt: timestamppb.New(m.startsAt)}
		sales, err := s.catalog.WithdrawUnsold(ctx, m.showID, catalog.Withdrawal{By: c.actor(),
			Reason: fmt.Sprintf("timetable %s changed: %s", t.GetTimetableId(), change),
			InTx: func(ctx context.Context, tx pgx.Tx) error {
				_, err := tx.Exec(ctx, `DELETE FROM timetable_trips WHERE show_id = $1`, m.showID)
				return err
			}})
		if err != nil && !errors.Is(err, catalog.ErrNotFound) {
			return nil, fmt.Errorf("withdraw trip %d of timetable %s: %w", m.showID, t.GetTimetableId(), err)
		}
		if !sales.Any() {
			out.Withdrawn = append(out.Withdrawn, trip)
			s.metrics.withdrawn.Inc()
			s.log.Info("timetable trip withdrawn", "timetable_id", t.GetTimetableId(), "show_id", m.showID,
				"date", trip.GetDate(), "departure", trip.GetDepartureTime(), "change", change)
			continue
		}
		delete(plan, m.key) // the kept trip is that run
		kept := &networkv1.LeftAlone{Trip: trip, Reason: networkv1.LeftAloneReason_LEFT_ALONE_REASON_HAS_SALES,
			SeatsHeld: int32(sales.SeatsHeld), SeatsSold: int32(sales.SeatsSold), Change: change}
		if sales.SeatsHeld+sales.SeatsSold+sales.PlacesTaken+sales.Holds == 0 {
			kept.Reason = networkv1.LeftAloneReason_LEFT_ALONE_REASON_ALLOCATED
		}
		out.LeftAlone = append(out.LeftAlone, kept)
		if err := s.noteKept(ctx, t.GetTimetableId(), m, want, kept); err != nil {
			return nil, err
		}
	}
	runs := slices.SortedFunc(maps.Values(plan), func(a, b planned) int { return a.startsAt.Compare(b.startsAt) })
	for _, p := range runs {
		show, err := s.makeTrip(ctx, t, r, p)
		if errors.Is(err, errClaimed) {
			out.Unchanged++
			continue
		}
		if _, business := fault.As(err); business {
			out.Failure = fmt.Sprintf("the trip of %s at %s: %s", p.date, p.time, message(err))
			s.metrics.failures.Inc()
			s.log.Warn("timetable run stopped", "timetable_id", t.GetTimetableId(), "date", p.date.String(),
				"departure", p.time.String(), "err", err)
			break
		}
		if err != nil {
			return nil, fmt.Errorf("make the trip of %s at %s of timetable %s: %w", p.date, p.time, t.GetTimetableId(), err)
		}
		out.Made = append(out.Made, &networkv1.TimetableTrip{ShowId: show.ID, Date: p.date.String(),
			DepartureTime: p.time.String(), StartsAt: timestamppb.New(show.StartsAt)})
		s.metrics.made.Inc()
	}
	return out, nil
}

// noteKept remembers the terms a sold trip was kept against, and tells
// the log and the metric the first time (each run lists it again).
func (s *Service) noteKept(ctx context.Context, timetable string, m made, want terms, kept *networkv1.LeftAlone) error {
	raw, err := json.Marshal(want)
	if err != nil {
		return err
	}
	tag, err := s.db.Exec(ctx, `
		UPDATE timetable_trips SET kept_terms = $2 WHERE show_id = $1 AND kept_terms IS DISTINCT FROM $2`, m.showID, raw)
	if err != nil {
		return fmt.Errorf("note trip %d kept: %w", m.showID, err)
	}
	if tag.RowsAffected() == 0 {
		return nil
	}
	s.metrics.leftAlone.WithLabelValues(strings.ToLower(strings.TrimPrefix(kept.GetReason().String(), "LEFT_ALONE_REASON_"))).Inc()
	s.log.Warn("timetable changed; a trip with sales was left as it was", "timetable_id", timetable, "show_id", m.showID,
		"date", m.date.String(), "departure", m.time.String(), "change", kept.GetChange(),
		"seats_held", kept.GetSeatsHeld(), "seats_sold", kept.GetSeatsSold(), "reason", kept.GetReason().String())
	return nil
}

// madeTrips are the trips a timetable made that depart after now, on
// local dates up to last.
func (s *Service) madeTrips(ctx context.Context, timetable string, now time.Time, last date) ([]made, error) {
	rows, err := s.db.Query(ctx, `
		SELECT local_date::text, to_char(departure, 'HH24:MI'), show_id, starts_at, terms, coalesce(kept_terms, '{}')
		FROM timetable_trips WHERE timetable_id = $1 AND starts_at > $2 AND local_date <= $3::date
		ORDER BY starts_at, show_id`, timetable, now, last.String())
	if err != nil {
		return nil, fmt.Errorf("trips of timetable %s: %w", timetable, err)
	}
	var (
		out            []made
		day, clock     string
		m              made
		termsRaw, kRaw []byte
	)
	_, err = pgx.ForEachRow(rows, []any{&day, &clock, &m.showID, &m.startsAt, &termsRaw, &kRaw}, func() error {
		d, err := parseDate(day)
		if err != nil {
			return err
		}
		h, ok := parseHHMM(clock)
		if !ok {
			return fmt.Errorf("departure %q", clock)
		}
		m.key = key{d, h}
		m.terms, m.kept = terms{}, terms{}
		if err := json.Unmarshal(termsRaw, &m.terms); err != nil {
			return err
		}
		if err := json.Unmarshal(kRaw, &m.kept); err != nil {
			return err
		}
		out = append(out, m)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("trips of timetable %s: %w", timetable, err)
	}
	return out, nil
}

// makeTrip creates a planned run's show through the catalog, claiming its
// key in the catalog's transaction (errClaimed: another run made it).
func (s *Service) makeTrip(ctx context.Context, t *networkv1.Timetable, r *networkv1.Route, p planned) (catalog.Show, error) {
	req := proto.CloneOf(p.req)
	now := s.now()
	if lead := t.GetSaleRules().GetOnSaleBefore(); lead != nil {
		if at := p.startsAt.Add(-lead.AsDuration()); at.After(now) {
			req.OnSaleAt = timestamppb.New(at)
		}
	}
	termsRaw, err := json.Marshal(p.terms)
	if err != nil {
		return catalog.Show{}, err
	}
	in := catalog.FromRequest(req)
	// The job acts for the platform, with what the timetable's manager
	// set (checked when the timetable was written); it sets nothing only
	// admins may.
	in.Admin = true
	in.RouteID = r.GetRouteId()
	in.InTx = func(ctx context.Context, tx pgx.Tx, show catalog.Show) error {
		tag, err := tx.Exec(ctx, `
			INSERT INTO timetable_trips (timetable_id, local_date, departure, show_id, starts_at, terms, made_at)
			VALUES ($1, $2::date, $3::time, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
			t.GetTimetableId(), p.date.String(), p.time.String(), show.ID, show.StartsAt, termsRaw, now)
		if err != nil {
			return fmt.Errorf("claim the trip of %s at %s: %w", p.date, p.time, err)
		}
		if tag.RowsAffected() == 0 {
			return errClaimed
		}
		return nil
	}
	return s.catalog.CreateShow(ctx, "timetable:"+t.GetTimetableId(), in)
}

// tripRequest is the CreateShow request of one run of t on route r.
func tripRequest(t *networkv1.Timetable, r *networkv1.Route, rn run) *catalogv1.CreateShowRequest {
	stops := tripStops(r)
	sale := t.GetSaleRules()
	req := &catalogv1.CreateShowRequest{
		Kind:  catalogv1.ShowKind_SHOW_KIND_BUS_TRIP,
		Title: cmp.Or(t.GetTitle(), routeTitle(r)) + " " + rn.time.String(), Operator: t.GetOperator(),
		Origin: stops[0].GetPlace(), Destination: stops[len(stops)-1].GetPlace(),
		StartsAt: timestamppb.New(rn.startsAt), Currency: cmp.Or(t.GetCurrency(), DefaultCurrency),
		HoldTtl: sale.GetHoldTtl(), MaxSeatsPerAccount: sale.GetMaxSeatsPerAccount(), MaxSeatsPerHold: sale.GetMaxSeatsPerHold(),
		WalkInReserveSeats: sale.GetWalkInReserveSeats(), WalkInReserve: sale.GetWalkInReserve(),
		OrganizationId: r.GetOrganizationId(), TimeZone: cmp.Or(t.GetTimeZone(), DefaultZone),
		LayoutTemplateId: t.GetLayoutTemplateId(), Stops: stops, Fares: cloneAll(t.GetFares()),
	}
	whole := wholeFare(t, r)
	for _, sec := range t.GetSections() {
		sec = proto.CloneOf(sec)
		sec.PriceMinor = whole
		req.Sections = append(req.Sections, sec)
	}
	return req
}

// wholeFare is what a plain section's seat costs: the fare of the whole
// route, else the dearest fare (a seat sold whole is never cheaper than a
// part of the journey).
func wholeFare(t *networkv1.Timetable, r *networkv1.Route) int64 {
	stops := r.GetStops()
	first, last := stops[0].GetStopId(), stops[len(stops)-1].GetStopId()
	var most int64
	for _, f := range t.GetFares() {
		if f.GetFromStopId() == first && f.GetToStopId() == last && f.GetSeatClass() == "" {
			return f.GetPriceMinor()
		}
		most = max(most, f.GetPriceMinor())
	}
	return most
}

func cloneAll[M proto.Message](in []M) []M {
	out := make([]M, len(in))
	for i, m := range in {
		out[i] = proto.CloneOf(m)
	}
	return out
}

// terms fingerprints what a trip is made from, part by part, so a run
// tells what of a trip no longer follows its timetable.
type terms map[string]string

// termParts names the parts of terms in the order a change is told.
var termParts = []struct{ key, name string }{
	{"departure", "departure"}, {"stops", "stops"}, {"fares", "fares"}, {"layout", "coach"},
	{"sale", "sale rules"}, {"listing", "title"}, {"runs", "runs"},
}

// termsOf fingerprints a trip's request; the sale opening is fingerprinted
// as the timetable says it (a lead before departure), not as the instant
// it was when the trip was made.
func termsOf(req *catalogv1.CreateShowRequest, t *networkv1.Timetable) terms {
	return terms{
		"departure": fingerprint(req.GetStartsAt(), text(req.GetTimeZone())),
		"stops":     fingerprint(asMessages(req.GetStops())...),
		"fares":     fingerprint(asMessages(req.GetFares())...),
		"layout":    fingerprint(append([]proto.Message{text(req.GetLayoutTemplateId())}, unpriced(req.GetSections())...)...),
		"sale":      fingerprint(t.GetSaleRules(), text(req.GetCurrency())),
		"listing":   fingerprint(text(req.GetTitle()), text(req.GetOperator())),
	}
}

// unpriced are sections without their prices: a section's price is the
// fares' (tripRequest), so a new fare is a change of fares, not of coach.
func unpriced(in []*catalogv1.Section) []proto.Message {
	out := make([]proto.Message, len(in))
	for i, s := range in {
		s = proto.CloneOf(s)
		s.PriceMinor = 0
		out[i] = s
	}
	return out
}

func asMessages[M proto.Message](in []M) []proto.Message {
	out := make([]proto.Message, len(in))
	for i, m := range in {
		out[i] = m
	}
	return out
}

// text is a string as a message, for fingerprint.
func text(s string) proto.Message { return &catalogv1.Counter{Name: s} }

// fingerprint hashes messages in their deterministic encoding, each
// length-prefixed: 16 hex digits.
func fingerprint(ms ...proto.Message) string {
	h := sha256.New()
	for _, m := range ms {
		var b []byte
		if m != nil && m.ProtoReflect().IsValid() {
			var err error
			if b, err = (proto.MarshalOptions{Deterministic: true}).Marshal(m); err != nil {
				b = []byte(err.Error())
			}
		}
		_, _ = fmt.Fprintf(h, "%d:", len(b))
		_, _ = h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// diff names the parts of want that have differs from; "" when none.
func diff(have, want terms) string {
	var out []string
	for _, p := range termParts {
		if have[p.key] != want[p.key] {
			out = append(out, p.name)
		}
	}
	return strings.Join(out, ", ")
}
