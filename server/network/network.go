// Package network owns a bus operator's network (issue 24 §1, §4): its
// routes (the stops in order, each a place of the gazetteer with its
// counters) and the timetables that run them, after GTFS (calendar and
// calendar_dates), and the job that makes each timetable's trips N days
// ahead through the catalog's CreateShow, idempotently, in the timetable's
// own wall clock, never rewriting a trip that has sales (decisions
// 0360-0363). It owns the catalog database's routes, timetables and
// timetable_trips tables.
//
// A route and a timetable are the API's messages (network.v1), checked and
// completed here and stored whole as JSON: they are read and written
// whole, and the contract is the model (decision 0360).
package network

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seatghor/seatghor/server/audit"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/idempotency"
	"github.com/seatghor/seatghor/server/pg"
)

// DefaultDays is how many days ahead, today included, the job makes a
// timetable's trips unless configured (SEATGHOR_TIMETABLE_DAYS).
const DefaultDays = 30

// MaxDays bounds the days ahead a run may make trips for.
const MaxDays = 120

// DefaultZone is the zone of a timetable that names none.
const DefaultZone = "Asia/Dhaka"

// Errors lists the sentinel errors of network that reach the API; it
// answers each by its reason (docs/errors.md).
var Errors = []error{ErrRouteNotFound, ErrTimetableNotFound, ErrForbidden, ErrVersionConflict}

// ErrRouteNotFound means there is no such route.
var ErrRouteNotFound = fault.Sentinel(fault.RouteNotFound, "route not found")

// ErrTimetableNotFound means there is no such timetable.
var ErrTimetableNotFound = fault.Sentinel(fault.TimetableNotFound, "timetable not found")

// ErrForbidden refuses a caller who does not manage the organisation.
var ErrForbidden = fault.Sentinel(fault.NetworkForbidden, "only managers of the organisation and admins")

// ErrVersionConflict refuses an update made to an older version.
var ErrVersionConflict = fault.Sentinel(fault.NetworkVersionConflict,
	"expected_version is not the current version: read it again and apply the change to it")

// Catalog is what the network asks of the catalog (catalog.Service): who
// manages an organisation, and the trips, made and withdrawn through the
// catalog's own paths.
type Catalog interface {
	HasRole(ctx context.Context, orgID, userID string, roles ...catalog.Role) (bool, error)
	CreateShow(ctx context.Context, createdBy string, in catalog.NewShow) (catalog.Show, error)
	WithdrawUnsold(ctx context.Context, showID int64, w catalog.Withdrawal) (catalog.Sales, error)
}

// Caller is who asks.
type Caller struct {
	UserID string
	// Admin may act on every organisation's network.
	Admin bool
}

func (c Caller) actor() audit.Actor {
	if c.UserID == "" {
		return audit.Actor{Kind: audit.ActorSystem, ID: jobActor}
	}
	if c.Admin {
		return audit.Actor{Kind: audit.ActorAdmin, ID: c.UserID}
	}
	return audit.Actor{Kind: audit.ActorUser, ID: c.UserID}
}

// jobActor names the job in the audit log and as the creator of its trips.
const jobActor = "timetables"

// Config tunes the service.
type Config struct {
	// Days is how many days ahead, today included, runs make trips;
	// default DefaultDays.
	Days int
	// Registerer receives the job's metrics; nil registers nothing.
	Registerer prometheus.Registerer
	Log        *slog.Logger
}

// Service keeps routes and timetables and runs the timetables.
type Service struct {
	db      *pg.Pool
	catalog Catalog
	clock   clock.Clock
	days    int
	log     *slog.Logger
	metrics metrics
}

// NewService returns the network over the catalog database db.
func NewService(db *pg.Pool, cat Catalog, clk clock.Clock, cfg Config) (*Service, error) {
	if cfg.Days == 0 {
		cfg.Days = DefaultDays
	}
	if cfg.Days < 1 || cfg.Days > MaxDays {
		return nil, fmt.Errorf("timetable days %d: want 1 to %d", cfg.Days, MaxDays)
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	s := &Service{db: db, catalog: cat, clock: clk, days: cfg.Days, log: cfg.Log, metrics: newMetrics()}
	if cfg.Registerer != nil {
		for _, c := range s.metrics.collectors() {
			if err := cfg.Registerer.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return s, nil
}

// Days is how many days ahead runs make trips unless asked otherwise.
func (s *Service) Days() int { return s.days }

// authorize lets c act on org's network: an admin on any, a manager on
// their organisation's.
func (s *Service) authorize(ctx context.Context, c Caller, org string) error {
	if c.Admin {
		return nil
	}
	ok, err := s.catalog.HasRole(ctx, org, c.UserID, catalog.RoleManager)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("organisation %q: %w", org, ErrForbidden)
	}
	return nil
}

// errorCodec records the refusals of the writes with their idempotency
// keys.
var errorCodec = idempotency.Faults("network", []fault.Reason{fault.NetworkInvalid, fault.NetworkExists,
	fault.NetworkVersionConflict}, nil)

// now is the service's time, as the database stores it.
func (s *Service) now() time.Time { return s.clock.Now().UTC().Truncate(time.Microsecond) }
