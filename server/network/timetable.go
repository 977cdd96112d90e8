package network

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	networkv1 "github.com/seatghor/seatghor/gen/seatghor/network/v1"
	"github.com/seatghor/seatghor/server/audit"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/idempotency"
	"github.com/seatghor/seatghor/server/page"
	"github.com/seatghor/seatghor/server/pg"
)

// DefaultCurrency is the currency of a timetable that names none.
const DefaultCurrency = "BDT"

// completeTimetable checks a timetable against its route (what
// protovalidate cannot: dates and times that parse, a zone that exists,
// fares naming the route's stops in order, once each) and fills its
// defaults and its route's organisation.
func completeTimetable(t *networkv1.Timetable, r *networkv1.Route) error {
	t.OrganizationId, t.Version, t.CreatedAt, t.UpdatedAt = r.GetOrganizationId(), 0, nil, nil
	if t.GetTimeZone() == "" {
		t.TimeZone = DefaultZone
	}
	if t.GetCurrency() == "" {
		t.Currency = DefaultCurrency
	}
	sch, err := parseSchedule(t)
	if err != nil {
		return err
	}
	t.TimeZone = sch.loc.String()
	if t.GetLayoutTemplateId() != "" && len(t.GetSections()) > 0 {
		return fault.OnField(fault.NetworkInvalid, "sections", "give a layout_template_id or sections, not both")
	}
	rows := map[string]bool{}
	for i, sec := range t.GetSections() {
		for _, row := range sec.GetRows() {
			if rows[row] {
				return fault.OnField(fault.NetworkInvalid, fmt.Sprintf("sections[%d].rows", i), "row %q appears twice", row)
			}
			rows[row] = true
		}
	}
	return checkFares(t, r)
}

// checkFares checks that t's fares name r's stops, the boarding stop
// before the dropping one, each pair and class once, and that with plain
// sections (which have no seat class) they are for every class.
func checkFares(t *networkv1.Timetable, r *networkv1.Route) error {
	idx := stopIndex(r)
	seen := map[[3]string]bool{}
	for i, f := range t.GetFares() {
		field := fmt.Sprintf("fares[%d]", i)
		from, ok := idx[f.GetFromStopId()]
		if !ok {
			return fault.OnField(fault.NetworkInvalid, field+".from_stop_id", "route %q has no stop %q", r.GetRouteId(), f.GetFromStopId())
		}
		to, ok := idx[f.GetToStopId()]
		if !ok {
			return fault.OnField(fault.NetworkInvalid, field+".to_stop_id", "route %q has no stop %q", r.GetRouteId(), f.GetToStopId())
		}
		if from >= to {
			return fault.OnField(fault.NetworkInvalid, field+".to_stop_id", "%q is not after %q on the route", f.GetToStopId(), f.GetFromStopId())
		}
		k := [3]string{f.GetFromStopId(), f.GetToStopId(), f.GetSeatClass()}
		if seen[k] {
			return fault.OnField(fault.NetworkInvalid, field, "a second fare from %q to %q in class %q", k[0], k[1], k[2])
		}
		seen[k] = true
		if len(t.GetSections()) > 0 && f.GetSeatClass() != "" {
			return fault.OnField(fault.NetworkInvalid, field+".seat_class", "sections have no seat class: leave it empty, or use a layout template")
		}
	}
	return nil
}

func timetableDefinition(t *networkv1.Timetable) ([]byte, error) {
	d := proto.CloneOf(t)
	d.TimetableId, d.RouteId, d.OrganizationId, d.Version, d.CreatedAt, d.UpdatedAt = "", "", "", 0, nil, nil
	return definition(d)
}

// CreateTimetable creates a timetable of a route of an organisation c
// manages, and runs it at once (the run is not part of the idempotent
// answer: a retry runs it again, which makes nothing new).
func (s *Service) CreateTimetable(ctx context.Context, c Caller, t *networkv1.Timetable) (*networkv1.Timetable, *networkv1.TimetableRun, error) {
	stored, err := s.DefineTimetable(ctx, c, t)
	if err != nil {
		return nil, nil, err
	}
	run, err := s.runOne(idempotency.WithoutKey(ctx), c, stored.GetTimetableId(), s.days, true)
	if err != nil {
		return nil, nil, err
	}
	return stored, run, nil
}

// DefineTimetable creates a timetable as CreateTimetable does, and leaves
// its trips to the job's next run (the demo's network, which `make run`
// loads without waiting for its trips).
func (s *Service) DefineTimetable(ctx context.Context, c Caller, t *networkv1.Timetable) (*networkv1.Timetable, error) {
	t = proto.CloneOf(t)
	r, err := readRoute(ctx, s.db, t.GetRouteId())
	if err != nil {
		return nil, err
	}
	if err := s.authorize(ctx, c, r.GetOrganizationId()); err != nil {
		return nil, err
	}
	if err := completeTimetable(t, r); err != nil {
		return nil, err
	}
	def, err := timetableDefinition(t)
	if err != nil {
		return nil, err
	}
	now := s.now()
	stored, err := idempotency.Do(ctx, s.db, errorCodec, idempotency.Options{Now: now, Target: "timetable:" + t.GetTimetableId()},
		func(tx pgx.Tx) (*networkv1.Timetable, error) {
			// The route's row is read under a share lock: an update of the
			// route waits, and then checks this timetable too.
			if _, err := tx.Exec(ctx, `SELECT FROM routes WHERE route_id = $1 FOR SHARE`, t.GetRouteId()); err != nil {
				return nil, fmt.Errorf("lock route %s: %w", t.GetRouteId(), err)
			}
			cur, err := readRoute(ctx, tx, t.GetRouteId())
			if err != nil {
				return nil, err
			}
			if err := checkFares(t, cur); err != nil {
				return nil, err
			}
			tag, err := tx.Exec(ctx, `
				INSERT INTO timetables (timetable_id, route_id, organization_id, definition, created_by, created_at, updated_at)
				VALUES ($1, $2, $3, $4, $5, $6, $6) ON CONFLICT (timetable_id) DO NOTHING`,
				t.GetTimetableId(), t.GetRouteId(), r.GetOrganizationId(), def, c.UserID, now)
			if err != nil {
				return nil, fmt.Errorf("insert timetable %s: %w", t.GetTimetableId(), err)
			}
			if tag.RowsAffected() == 0 {
				got, err := readTimetable(ctx, tx, t.GetTimetableId())
				if err != nil {
					return nil, err
				}
				gotDef, err := timetableDefinition(got)
				if err != nil {
					return nil, err
				}
				if got.GetRouteId() != t.GetRouteId() || !jsonEqual(gotDef, def) {
					return nil, fault.OnField(fault.NetworkExists, "timetable.timetable_id", "timetable %q exists with another definition", t.GetTimetableId())
				}
				return got, nil
			}
			if err := audit.Record(ctx, tx, audit.Entry{At: now, Actor: c.actor(), Action: "timetable.create",
				Target: "timetable:" + t.GetTimetableId(), OrganizationID: r.GetOrganizationId(), Detail: map[string]any{"route_id": t.GetRouteId()}}); err != nil {
				return nil, err
			}
			return readTimetable(ctx, tx, t.GetTimetableId())
		})
	if err != nil {
		return nil, err
	}
	return stored, nil
}

// GetTimetable returns a timetable of an organisation c manages.
func (s *Service) GetTimetable(ctx context.Context, c Caller, id string) (*networkv1.Timetable, error) {
	t, err := readTimetable(ctx, s.db, id)
	if err != nil {
		return nil, err
	}
	if err := s.authorize(ctx, c, t.GetOrganizationId()); err != nil {
		return nil, err
	}
	return t, nil
}

// UpdateTimetable replaces a timetable's definition, at expected (0: any)
// version, and runs it at once: its trips nobody bought that no longer
// follow it are withdrawn (and made again when they still run), the sold
// ones are left alone, and the run says which.
func (s *Service) UpdateTimetable(ctx context.Context, c Caller, t *networkv1.Timetable, expected int64) (*networkv1.Timetable, *networkv1.TimetableRun, error) {
	t = proto.CloneOf(t)
	cur, err := readTimetable(ctx, s.db, t.GetTimetableId())
	if err != nil {
		return nil, nil, err
	}
	if err := s.authorize(ctx, c, cur.GetOrganizationId()); err != nil {
		return nil, nil, err
	}
	if t.GetRouteId() != cur.GetRouteId() {
		return nil, nil, fault.OnField(fault.NetworkInvalid, "timetable.route_id", "a timetable keeps its route (%q); make another timetable for another route", cur.GetRouteId())
	}
	r, err := readRoute(ctx, s.db, t.GetRouteId())
	if err != nil {
		return nil, nil, err
	}
	if err := completeTimetable(t, r); err != nil {
		return nil, nil, err
	}
	def, err := timetableDefinition(t)
	if err != nil {
		return nil, nil, err
	}
	now := s.now()
	stored, err := idempotency.Do(ctx, s.db, errorCodec, idempotency.Options{Now: now, Target: "timetable:" + t.GetTimetableId()},
		func(tx pgx.Tx) (*networkv1.Timetable, error) {
			if _, err := tx.Exec(ctx, `SELECT FROM routes WHERE route_id = $1 FOR SHARE`, t.GetRouteId()); err != nil {
				return nil, fmt.Errorf("lock route %s: %w", t.GetRouteId(), err)
			}
			route, err := readRoute(ctx, tx, t.GetRouteId())
			if err != nil {
				return nil, err
			}
			if err := checkFares(t, route); err != nil {
				return nil, err
			}
			tag, err := tx.Exec(ctx, `
				UPDATE timetables SET definition = $2, version = version + 1, updated_at = $3
				WHERE timetable_id = $1 AND ($4 = 0 OR version = $4)`, t.GetTimetableId(), def, now, expected)
			if err != nil {
				return nil, fmt.Errorf("update timetable %s: %w", t.GetTimetableId(), err)
			}
			if tag.RowsAffected() == 0 {
				return nil, fmt.Errorf("timetable %q: %w", t.GetTimetableId(), ErrVersionConflict)
			}
			if err := audit.Record(ctx, tx, audit.Entry{At: now, Actor: c.actor(), Action: "timetable.update",
				Target: "timetable:" + t.GetTimetableId(), OrganizationID: r.GetOrganizationId(), Detail: map[string]any{"route_id": t.GetRouteId()}}); err != nil {
				return nil, err
			}
			return readTimetable(ctx, tx, t.GetTimetableId())
		})
	if err != nil {
		return nil, nil, err
	}
	run, err := s.runOne(idempotency.WithoutKey(ctx), c, stored.GetTimetableId(), s.days, true)
	if err != nil {
		return nil, nil, err
	}
	return stored, run, nil
}

const timetableColumns = `timetable_id, route_id, organization_id, definition, version, created_at, updated_at`

func scanTimetable(row pgx.Row) (*networkv1.Timetable, error) {
	var (
		t                = &networkv1.Timetable{}
		def              []byte
		id, route, org   string
		ver              int64
		created, updated time.Time
	)
	if err := row.Scan(&id, &route, &org, &def, &ver, &created, &updated); err != nil {
		return nil, err
	}
	if err := protojson.Unmarshal(def, t); err != nil {
		return nil, fmt.Errorf("decode timetable %s: %w", id, err)
	}
	t.TimetableId, t.RouteId, t.OrganizationId, t.Version = id, route, org, ver
	t.CreatedAt, t.UpdatedAt = timestamppb.New(created), timestamppb.New(updated)
	return t, nil
}

func readTimetable(ctx context.Context, q catalog.Querier, id string) (*networkv1.Timetable, error) {
	t, err := scanTimetable(q.QueryRow(ctx, `SELECT `+timetableColumns+` FROM timetables WHERE timetable_id = $1`, id))
	found, err := pg.Found(err)
	if err != nil {
		return nil, fmt.Errorf("read timetable %s: %w", id, err)
	}
	if !found {
		return nil, fmt.Errorf("timetable %q: %w", id, ErrTimetableNotFound)
	}
	return t, nil
}

// routeTimetables are the timetables of a route.
func routeTimetables(ctx context.Context, q catalog.Querier, routeID string) ([]*networkv1.Timetable, error) {
	rows, err := q.Query(ctx, `SELECT `+timetableColumns+` FROM timetables WHERE route_id = $1 ORDER BY timetable_id`, routeID)
	if err != nil {
		return nil, fmt.Errorf("timetables of route %s: %w", routeID, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*networkv1.Timetable, error) { return scanTimetable(r) })
	if err != nil {
		return nil, fmt.Errorf("timetables of route %s: %w", routeID, err)
	}
	return out, nil
}

// ListTimetables pages through timetables by id: org's and route's when
// set, of the organisations c manages (an admin: all).
func (s *Service) ListTimetables(ctx context.Context, c Caller, org, route string, size int, token string) ([]*networkv1.Timetable, string, error) {
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
		SELECT `+timetableColumns+` FROM timetables
		WHERE timetable_id > $1 AND ($2::text[] IS NULL OR organization_id = ANY($2)) AND ($3 = '' OR route_id = $3)
		ORDER BY timetable_id LIMIT $4`, after, orgs, route, size+1)
	if err != nil {
		return nil, "", fmt.Errorf("list timetables: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*networkv1.Timetable, error) { return scanTimetable(r) })
	if err != nil {
		return nil, "", fmt.Errorf("list timetables: %w", err)
	}
	if len(out) <= size {
		return out, "", nil
	}
	out = out[:size]
	return out, page.Encode(page.Cursor{ID: out[size-1].GetTimetableId()}), nil
}

// listScope is the organisations a list of c's covers: org alone when set
// (c must manage it), every organisation for an admin (nil), else those c
// manages.
func (s *Service) listScope(ctx context.Context, c Caller, org string) ([]string, error) {
	if org != "" {
		if err := s.authorize(ctx, c, org); err != nil {
			return nil, err
		}
		return []string{org}, nil
	}
	if c.Admin {
		return nil, nil
	}
	orgs, err := catalog.ManagedOrganizations(ctx, s.db, c.UserID)
	if err != nil {
		return nil, err
	}
	if orgs == nil {
		orgs = []string{} // none: an empty list, not "every organisation"
	}
	return orgs, nil
}

// afterID is the id a page token continues after ("" for the first page).
func afterID(token string) (string, error) {
	cur, _, err := page.Decode(token)
	if err != nil {
		return "", err
	}
	return cur.ID, nil
}

func pageSize(n int) int {
	if n <= 0 {
		return 50
	}
	return min(n, 500)
}

// jsonEqual compares two JSON documents by value.
func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}

// message is a business error's message for people.
func message(err error) string {
	if e, ok := fault.As(err); ok {
		return e.Message
	}
	return err.Error()
}
