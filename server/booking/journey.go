package booking

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/idempotency"
)

// A seat of a bus trip with stops is sold per leg (decision 0350): leg i is
// the stretch from stop i to stop i+1, and a seat has one row per leg. A
// hold for the journey from stop f to stop t takes rows f … t-1 of each of
// its seats, all or none, in the one conditional write every path makes;
// release, confirmation, cancellation and expiry work by hold id, so they
// free only the hold's own legs. A venue, and a trip without stops, has
// leg 0 only, and every hold is 0 → 1: exactly as before.

// Journey is the stretch of a trip a hold's (and its order's) seats are
// for: stops From to To in route order, so legs From … To-1, and the
// counters named there ("" when none). A show without stops: 0 → 1.
type Journey struct {
	From     int    `json:"from"`
	To       int    `json:"to"`
	Boarding string `json:"boarding,omitempty"`
	Dropping string `json:"dropping,omitempty"`
}

// Legs is how many legs the journey covers.
func (j Journey) Legs() int { return j.To - j.From }

// JourneyRequest is the journey a hold asks for by the trip's ids: each
// empty when not named (the first stop, the last stop, no counter).
type JourneyRequest struct {
	From, To, Boarding, Dropping string
}

// empty says whether the request names nothing: the whole trip (and the
// only leg of a show without stops).
func (r JourneyRequest) empty() bool { return r == JourneyRequest{} }

// holdTarget is the idempotency target of a hold (decision 0087): the show,
// and the journey when the request names one (decision 0353), so the same
// key for another journey of a trip is another request. The form keeps the
// show where the placement fence and a show's move look for it (its second
// "_" field; stop ids have no "_").
func holdTarget(showID int64, j JourneyRequest) string {
	if j.From == "" && j.To == "" {
		return idempotency.Show(showID)
	}
	return fmt.Sprintf("journey_%d_%s_%s", showID, j.From, j.To)
}

// journeyArgs are the SQL expressions of a hold's journey as asked (text:
// the stop ids and counter ids of JourneyRequest).
type journeyArgs struct{ from, to, boarding, dropping string }

// journeySQL is a LATERAL subquery, journey, of one row: the journey of a
// hold of the show whose id is show, asked for as j (decision 0350):
//
//   - stops: how many stops the trip has (0: none, one leg, priced by its
//     sections);
//   - from_stop, to_stop: the asked stops' places in route order, the
//     first and the last when not named (0 and 1 without stops); NULL for
//     a stop the trip lacks;
//   - from_known, to_known, in_order, boards, drops: the stops are the
//     trip's, the second after the first, and a named counter boards (or
//     drops) at its stop;
//   - boarding_counter, dropping_counter: the counters as asked;
//   - journey_ok: all of them.
//
// holdRulesSQL joins it, so every path of a hold reads the journey from
// here (decision 0311). Every row it reads is found by key.
func journeySQL(show string, j journeyArgs) string {
	stop := func(id string) string {
		return `(SELECT st.stop FROM trip_stops st WHERE st.show_id = ` + show + ` AND st.stop_id = ` + id + `)`
	}
	counter := func(id, at, role string) string {
		return `(` + id + ` = '' OR EXISTS (SELECT FROM trip_stops st WHERE st.show_id = ` + show + ` AND st.stop = ` + at + `
		          AND st.counters @> jsonb_build_array(jsonb_build_object('id', ` + id + `, '` + role + `', true))))`
	}
	return `LATERAL (
		SELECT k.*, k.from_known AND k.to_known AND k.in_order AND k.boards AND k.drops AS journey_ok
		FROM (SELECT e.stops, e.from_stop, e.to_stop,
		             e.from_stop IS NOT NULL AS from_known, e.to_stop IS NOT NULL AS to_known,
		             coalesce(e.from_stop < e.to_stop, false) AS in_order,
		             ` + counter(j.boarding, "e.from_stop", "boarding") + ` AS boards,
		             ` + counter(j.dropping, "e.to_stop", "dropping") + ` AS drops,
		             ` + j.boarding + `::text AS boarding_counter, ` + j.dropping + `::text AS dropping_counter,
		             coalesce((SELECT st.minutes FROM trip_stops st WHERE st.show_id = ` + show + ` AND st.stop = e.from_stop), 0) AS from_minutes,
		             EXISTS (SELECT FROM trip_marks m WHERE m.show_id = ` + show + ` AND m.stop >= e.from_stop) AS departed
		      FROM (SELECT coalesce(l.last + 1, 0) AS stops,
		                   CASE WHEN ` + j.from + ` = '' THEN 0 ELSE ` + stop(j.from) + ` END AS from_stop,
		                   CASE WHEN ` + j.to + ` = '' THEN greatest(l.last, 1) ELSE ` + stop(j.to) + ` END AS to_stop
		            FROM (SELECT max(st.stop)::int AS last FROM trip_stops st WHERE st.show_id = ` + show + `) l
		            -- OFFSET 0 keeps the stops looked up once: flattened into
		            -- the statement, each use of from_stop and to_stop would
		            -- look them up again.
		            OFFSET 0) e) k
	) journey`
}

// legsSQL is the condition that the seat row alias is a leg of the journey
// from stop from to stop to (SQL expressions): the one leg predicate of
// every hold path.
func legsSQL(alias, from, to string) string {
	return alias + `.leg >= ` + from + ` AND ` + alias + `.leg < ` + to
}

// seatPriceSQL is the price of the seat row alias for the journey from stop
// from to stop to of a trip with stops stops (SQL expressions): a show
// without stops prices by the seat's section, a trip with stops by its
// fare of the pair and the seat's class, or of the pair for every class
// (an empty class); NULL when it has neither (the journey is not sold for
// that seat, decision 0352).
func seatPriceSQL(alias, stops, from, to string) string {
	return `CASE WHEN ` + stops + ` = 0 THEN ` + alias + `.price_minor ELSE (
		SELECT fa.price_minor FROM fares fa
		WHERE fa.show_id = ` + alias + `.show_id AND fa.from_stop = ` + from + ` AND fa.to_stop = ` + to + `
		  AND fa.seat_class IN (` + alias + `.seat_class, '')
		ORDER BY fa.seat_class DESC LIMIT 1) END`
}

// journeyVerdicts are journeySQL's columns for one hold.
type journeyVerdicts struct {
	stops                                      int
	from, to                                   *int
	fromKnown, toKnown, inOrder, boards, drops bool
}

// journeyColumns are journeyVerdicts' columns of the rules row, as dest
// scans them.
const journeyColumns = `rules.stops, rules.from_stop, rules.to_stop, rules.from_known, rules.to_known, rules.in_order,
	rules.boards, rules.drops`

func (v *journeyVerdicts) dest() []any {
	return []any{&v.stops, &v.from, &v.to, &v.fromKnown, &v.toKnown, &v.inOrder, &v.boards, &v.drops}
}

// journey is the hold's journey when the verdicts allow it.
func (v journeyVerdicts) journey(r JourneyRequest) Journey {
	j := Journey{Boarding: r.Boarding, Dropping: r.Dropping}
	if v.from != nil {
		j.From = *v.from
	}
	if v.to != nil {
		j.To = *v.to
	}
	return j
}

// refusal says how a hold's journey is wrong (invalid input, on its
// field), nil when it is not; stops names the trip's stops for the answer.
func (v journeyVerdicts) refusal(showID int64, r JourneyRequest, stops []string) error {
	list := "it has none"
	if len(stops) > 0 {
		list = "its stops: " + strings.Join(stops, ", ")
	}
	switch {
	case !v.fromKnown:
		return fault.OnField(fault.BookingInvalid, "journey.from_stop_id", "show %d has no stop %q (%s)", showID, r.From, list)
	case !v.toKnown:
		return fault.OnField(fault.BookingInvalid, "journey.to_stop_id", "show %d has no stop %q (%s)", showID, r.To, list)
	case !v.inOrder:
		from, to := r.From, r.To
		if from == "" && len(stops) > 0 {
			from = stops[0]
		}
		if to == "" && len(stops) > 0 {
			to = stops[len(stops)-1]
		}
		return fault.OnField(fault.BookingInvalid, "journey.to_stop_id", "stop %q is not after %q on the route (%s)", to, from, list)
	case !v.boards:
		return fault.OnField(fault.BookingInvalid, "journey.boarding_counter_id", "counter %q is not a boarding point of the journey's first stop",
			r.Boarding)
	case !v.drops:
		return fault.OnField(fault.BookingInvalid, "journey.dropping_counter_id", "counter %q is not a dropping point of the journey's last stop",
			r.Dropping)
	}
	return nil
}

// readTrip reads a show's stops, departure and zone from its shard (q: the
// shard's pool or a transaction on it); a show without stops has none.
func readTrip(ctx context.Context, q catalog.Querier, showID int64) (catalog.Trip, error) {
	var t catalog.Trip
	rows, err := q.Query(ctx, `
		SELECT s.starts_at, s.time_zone, t.stop_id, t.place, t.place_id, t.minutes, t.counters
		FROM shows s LEFT JOIN trip_stops t ON t.show_id = s.show_id
		WHERE s.show_id = $1 ORDER BY t.stop`, showID)
	if err != nil {
		return t, fmt.Errorf("read the stops of show %d: %w", showID, err)
	}
	var (
		id, place, placeID *string
		minutes            *int
		counters           []byte
		found              bool
	)
	_, err = pgx.ForEachRow(rows, []any{&t.StartsAt, &t.TimeZone, &id, &place, &placeID, &minutes, &counters}, func() error {
		found = true
		if id == nil {
			return nil
		}
		st := catalog.TripStop{StopID: *id, Place: *place, PlaceID: *placeID, Minutes: *minutes}
		if err := json.Unmarshal(counters, &st.Counters); err != nil {
			return fmt.Errorf("decode the counters of stop %s: %w", st.StopID, err)
		}
		t.Stops = append(t.Stops, st)
		return nil
	})
	if err != nil {
		return t, fmt.Errorf("read the stops of show %d: %w", showID, err)
	}
	if !found {
		return t, fault.New(fault.ShowNotFound, "show %d not found", showID)
	}
	t.StartsAt = t.StartsAt.UTC()
	return t, nil
}

// tripCache keeps each show's trip for tripTTL: what a hold's answer names
// its journey with, without reading the shard on every hold. A show's stops
// never change once it is made, but its time may (RescheduleShow, decision
// 0441): a hold's answer names the new times at most tripTTL after the move.
// What is written never comes from here: an order's confirmation reads the
// trip in its own transaction (describeIn).
type tripCache struct {
	m sync.Map // show id → cachedTrip
}

type cachedTrip struct {
	trip catalog.Trip
	read time.Time
}

// tripTTL bounds how long a moved show's old times may be answered.
const tripTTL = 5 * time.Second

// trip is show's trip, from the cache or read from its shard.
func (s *Service) trip(ctx context.Context, showID int64) (catalog.Trip, error) {
	now := s.clock.Now()
	if c, ok := s.trips.m.Load(showID); ok && now.Sub(c.(cachedTrip).read) < tripTTL {
		return c.(cachedTrip).trip, nil
	}
	pool, err := s.shardOf(ctx, showID)
	if err != nil {
		return catalog.Trip{}, err
	}
	t, err := readTrip(ctx, pool, showID)
	if err != nil {
		return t, err
	}
	s.trips.m.Store(showID, cachedTrip{trip: t, read: now})
	return t, nil
}

// view is j as buyers read it on a trip with stops (nil without stops).
func view(t catalog.Trip, j Journey) *commonv1.Journey {
	if len(t.Stops) == 0 {
		return nil
	}
	return t.JourneyProto(j.From, j.To, j.Boarding, j.Dropping)
}

// describeHold fills in h's journey as buyers read it, when its show has
// stops.
func (s *Service) describeHold(ctx context.Context, h *Hold) error {
	if h.GAArea != "" || h.ShowID == 0 {
		return nil
	}
	t, err := s.trip(ctx, h.ShowID)
	if err != nil {
		return err
	}
	h.View = view(t, h.Journey)
	return nil
}

// describeOrder fills in o's journey as buyers read it, when its show has
// stops.
func (s *Service) describeOrder(ctx context.Context, o *Order) error {
	t, err := s.trip(ctx, o.ShowID)
	if err != nil {
		return err
	}
	o.View = view(t, o.Journey)
	return nil
}
