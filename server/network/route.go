package network

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	networkv1 "github.com/seatghor/seatghor/gen/seatghor/network/v1"
	"github.com/seatghor/seatghor/server/audit"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/idempotency"
	"github.com/seatghor/seatghor/server/page"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/place"
)

// completeRoute checks a route's stops and counters (what protovalidate
// cannot: order, uniqueness, places) and completes it: each place as the
// gazetteer's official name and id, the stop's id defaulting to the
// place's, the names defaulting to the places'. The output fields of a
// trip's stops are cleared: a route has no times of its own.
func completeRoute(r *networkv1.Route) error {
	stops := r.GetStops()
	if len(stops) < 2 {
		return fault.OnField(fault.NetworkInvalid, "stops", "a route has at least two stops")
	}
	ids := map[string]bool{}
	counters := map[string]bool{}
	for i, st := range stops {
		field := fmt.Sprintf("stops[%d]", i)
		st.DepartsAt, st.DepartsAtLocal, st.PlaceId, st.PlaceBengali = nil, nil, "", ""
		if p, ok := place.Default().Lookup(st.GetPlace()); ok {
			st.Place, st.PlaceId, st.PlaceBengali = p.Name, p.ID, p.Bengali
		}
		if st.GetStopId() == "" {
			if st.GetPlaceId() == "" {
				return fault.OnField(fault.NetworkInvalid, field+".stop_id",
					"the gazetteer does not know %q: name the stop (stop_id) or give a known spelling of the place", st.GetPlace())
			}
			st.StopId = st.GetPlaceId()
		}
		if ids[st.GetStopId()] {
			return fault.OnField(fault.NetworkInvalid, field+".stop_id", "stop %q appears twice", st.GetStopId())
		}
		ids[st.GetStopId()] = true
		switch {
		case i == 0 && st.GetMinutesFromStart() != 0:
			return fault.OnField(fault.NetworkInvalid, field+".minutes_from_start", "the first stop is at minute 0")
		case i > 0 && st.GetMinutesFromStart() <= stops[i-1].GetMinutesFromStart():
			return fault.OnField(fault.NetworkInvalid, field+".minutes_from_start",
				"%d: each stop comes after the one before (%d)", st.GetMinutesFromStart(), stops[i-1].GetMinutesFromStart())
		}
		for j, c := range st.GetCounters() {
			cf := fmt.Sprintf("%s.counters[%d]", field, j)
			c.At, c.AtLocal = nil, nil
			if counters[c.GetCounterId()] {
				return fault.OnField(fault.NetworkInvalid, cf+".counter_id", "counter %q appears twice on the route", c.GetCounterId())
			}
			counters[c.GetCounterId()] = true
			switch {
			case !c.GetBoarding() && !c.GetDropping():
				return fault.OnField(fault.NetworkInvalid, cf, "a counter is a boarding point, a dropping point or both")
			case i == 0 && c.GetDropping():
				return fault.OnField(fault.NetworkInvalid, cf+".dropping", "nobody leaves the coach at its first stop")
			case i == len(stops)-1 && c.GetBoarding():
				return fault.OnField(fault.NetworkInvalid, cf+".boarding", "nobody boards at the last stop")
			case c.GetMinutesAfterDeparture() < st.GetMinutesFromStart():
				return fault.OnField(fault.NetworkInvalid, cf+".minutes_after_departure",
					"%d: a counter is not before its stop (minute %d)", c.GetMinutesAfterDeparture(), st.GetMinutesFromStart())
			case i < len(stops)-1 && c.GetMinutesAfterDeparture() >= stops[i+1].GetMinutesFromStart():
				return fault.OnField(fault.NetworkInvalid, cf+".minutes_after_departure",
					"%d: a counter is before the next stop (minute %d)", c.GetMinutesAfterDeparture(), stops[i+1].GetMinutesFromStart())
			}
		}
	}
	first, last := stops[0], stops[len(stops)-1]
	if r.GetName() == "" {
		r.Name = first.GetPlace() + " – " + last.GetPlace()
	}
	if r.GetNameBn() == "" && first.GetPlaceBengali() != "" && last.GetPlaceBengali() != "" {
		r.NameBn = first.GetPlaceBengali() + " – " + last.GetPlaceBengali()
	}
	return nil
}

// definition is what the database stores of a message: it without its
// output fields, as JSON.
func definition(m proto.Message) ([]byte, error) {
	b, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", m.ProtoReflect().Descriptor().Name(), err)
	}
	return b, nil
}

func routeDefinition(r *networkv1.Route) ([]byte, error) {
	d := proto.CloneOf(r)
	d.RouteId, d.OrganizationId, d.Version, d.CreatedAt, d.UpdatedAt = "", "", 0, nil, nil
	return definition(d)
}

// CreateRoute creates a route of an organisation c manages. The same
// route again answers it as stored; another under its id is
// NETWORK_EXISTS.
func (s *Service) CreateRoute(ctx context.Context, c Caller, r *networkv1.Route) (*networkv1.Route, error) {
	r = proto.CloneOf(r)
	if err := s.authorize(ctx, c, r.GetOrganizationId()); err != nil {
		return nil, err
	}
	if err := completeRoute(r); err != nil {
		return nil, err
	}
	def, err := routeDefinition(r)
	if err != nil {
		return nil, err
	}
	now := s.now()
	return idempotency.Do(ctx, s.db, errorCodec, idempotency.Options{Now: now, Target: "route:" + r.GetRouteId()},
		func(tx pgx.Tx) (*networkv1.Route, error) {
			tag, err := tx.Exec(ctx, `
				INSERT INTO routes (route_id, organization_id, definition, created_by, created_at, updated_at)
				VALUES ($1, $2, $3, $4, $5, $5) ON CONFLICT (route_id) DO NOTHING`,
				r.GetRouteId(), r.GetOrganizationId(), def, c.UserID, now)
			if pg.IsForeignKeyViolation(err) {
				return nil, fault.OnField(fault.NetworkInvalid, "organization_id", "there is no organisation %q", r.GetOrganizationId())
			}
			if err != nil {
				return nil, fmt.Errorf("insert route %s: %w", r.GetRouteId(), err)
			}
			if tag.RowsAffected() == 0 {
				return sameRoute(ctx, tx, r, def)
			}
			if err := audit.Record(ctx, tx, audit.Entry{At: now, Actor: c.actor(), Action: "route.create",
				Target: "route:" + r.GetRouteId(), OrganizationID: r.GetOrganizationId(), Detail: map[string]any{"organization_id": r.GetOrganizationId()}}); err != nil {
				return nil, err
			}
			return readRoute(ctx, tx, r.GetRouteId())
		})
}

// sameRoute answers a create of a route that exists: the route when it is
// the same, NETWORK_EXISTS otherwise.
func sameRoute(ctx context.Context, tx pgx.Tx, r *networkv1.Route, def []byte) (*networkv1.Route, error) {
	cur, err := readRoute(ctx, tx, r.GetRouteId())
	if err != nil {
		return nil, err
	}
	curDef, err := routeDefinition(cur)
	if err != nil {
		return nil, err
	}
	if cur.GetOrganizationId() != r.GetOrganizationId() || !jsonEqual(curDef, def) {
		return nil, fault.OnField(fault.NetworkExists, "route_id", "route %q exists with another definition", r.GetRouteId())
	}
	return cur, nil
}

// GetRoute returns a route of an organisation c manages.
func (s *Service) GetRoute(ctx context.Context, c Caller, id string) (*networkv1.Route, error) {
	r, err := readRoute(ctx, s.db, id)
	if err != nil {
		return nil, err
	}
	if err := s.authorize(ctx, c, r.GetOrganizationId()); err != nil {
		return nil, err
	}
	return r, nil
}

const routeColumns = `route_id, organization_id, definition, version, created_at, updated_at`

func scanRoute(row pgx.Row) (*networkv1.Route, error) {
	var (
		r                = &networkv1.Route{}
		def              []byte
		id, org          string
		ver              int64
		created, updated time.Time
	)
	if err := row.Scan(&id, &org, &def, &ver, &created, &updated); err != nil {
		return nil, err
	}
	if err := protojson.Unmarshal(def, r); err != nil {
		return nil, fmt.Errorf("decode route %s: %w", id, err)
	}
	r.RouteId, r.OrganizationId, r.Version = id, org, ver
	r.CreatedAt, r.UpdatedAt = timestamppb.New(created), timestamppb.New(updated)
	return r, nil
}

func readRoute(ctx context.Context, q catalog.Querier, id string) (*networkv1.Route, error) {
	r, err := scanRoute(q.QueryRow(ctx, `SELECT `+routeColumns+` FROM routes WHERE route_id = $1`, id))
	found, err := pg.Found(err)
	if err != nil {
		return nil, fmt.Errorf("read route %s: %w", id, err)
	}
	if !found {
		return nil, fmt.Errorf("route %q: %w", id, ErrRouteNotFound)
	}
	return r, nil
}

// ListRoutes pages through routes by id: org's when set (c must manage
// it), else those of every organisation c manages (an admin: all).
func (s *Service) ListRoutes(ctx context.Context, c Caller, org string, size int, token string) ([]*networkv1.Route, string, error) {
	orgs, err := s.listScope(ctx, c, org)
	if err != nil {
		return nil, "", err
	}
	after, err := afterID(token)
	if err != nil {
		return nil, "", err
	}
	size = pageSize(size)
	rows, err := s.db.Query(ctx, `
		SELECT `+routeColumns+` FROM routes
		WHERE route_id > $1 AND ($2::text[] IS NULL OR organization_id = ANY($2))
		ORDER BY route_id LIMIT $3`, after, orgs, size+1)
	if err != nil {
		return nil, "", fmt.Errorf("list routes: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*networkv1.Route, error) { return scanRoute(r) })
	if err != nil {
		return nil, "", fmt.Errorf("list routes: %w", err)
	}
	if len(out) <= size {
		return out, "", nil
	}
	out = out[:size]
	return out, page.Encode(page.Cursor{ID: out[size-1].GetRouteId()}), nil
}

// UpdateRoute replaces a route's name and stops, at expected (0: any)
// version. Every timetable of the route must still fit it: their fares
// name its stops in order.
func (s *Service) UpdateRoute(ctx context.Context, c Caller, r *networkv1.Route, expected int64) (*networkv1.Route, error) {
	r = proto.CloneOf(r)
	cur, err := readRoute(ctx, s.db, r.GetRouteId())
	if err != nil {
		return nil, err
	}
	if err := s.authorize(ctx, c, cur.GetOrganizationId()); err != nil {
		return nil, err
	}
	if err := completeRoute(r); err != nil {
		return nil, err
	}
	def, err := routeDefinition(r)
	if err != nil {
		return nil, err
	}
	now := s.now()
	return idempotency.Do(ctx, s.db, errorCodec, idempotency.Options{Now: now, Target: "route:" + r.GetRouteId()},
		func(tx pgx.Tx) (*networkv1.Route, error) {
			// The route's row is locked first, so a timetable created
			// meanwhile is checked against this version or the next.
			tag, err := tx.Exec(ctx, `
				UPDATE routes SET definition = $2, version = version + 1, updated_at = $3
				WHERE route_id = $1 AND ($4 = 0 OR version = $4)`, r.GetRouteId(), def, now, expected)
			if err != nil {
				return nil, fmt.Errorf("update route %s: %w", r.GetRouteId(), err)
			}
			if tag.RowsAffected() == 0 {
				if _, err := readRoute(ctx, tx, r.GetRouteId()); err != nil {
					return nil, err
				}
				return nil, fmt.Errorf("route %q: %w", r.GetRouteId(), ErrVersionConflict)
			}
			tts, err := routeTimetables(ctx, tx, r.GetRouteId())
			if err != nil {
				return nil, err
			}
			for _, t := range tts {
				if err := checkFares(t, r); err != nil {
					return nil, fault.OnField(fault.NetworkInvalid, "stops", "timetable %q would no longer fit the route: %s",
						t.GetTimetableId(), message(err))
				}
			}
			if err := audit.Record(ctx, tx, audit.Entry{At: now, Actor: c.actor(), Action: "route.update",
				Target: "route:" + r.GetRouteId(), OrganizationID: cur.GetOrganizationId(), Detail: map[string]any{"organization_id": cur.GetOrganizationId()}}); err != nil {
				return nil, err
			}
			return readRoute(ctx, tx, r.GetRouteId())
		})
}

// stopIndex maps a route's stop ids to their places in its order.
func stopIndex(r *networkv1.Route) map[string]int {
	idx := make(map[string]int, len(r.GetStops()))
	for i, st := range r.GetStops() {
		idx[st.GetStopId()] = i
	}
	return idx
}

// tripStops are a route's stops as a trip's: cloned, so a trip's request
// never shares them.
func tripStops(r *networkv1.Route) []*catalogv1.TripStop {
	out := make([]*catalogv1.TripStop, len(r.GetStops()))
	for i, st := range r.GetStops() {
		out[i] = proto.CloneOf(st)
	}
	return out
}

// routeTitle is a route's default trip title: "Dhaka to Chattogram".
func routeTitle(r *networkv1.Route) string {
	stops := r.GetStops()
	return strings.TrimSpace(stops[0].GetPlace() + " to " + stops[len(stops)-1].GetPlace())
}
