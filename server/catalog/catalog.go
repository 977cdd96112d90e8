// Package catalog owns the shows on sale: their description and layout in
// the catalog database, their placement on a shard, their terms
// on that shard, and their waiting rooms' settings. The seats and GA
// buckets a new show gets on its shard are booking's (Inventory).
package catalog

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/server/amount"
	"github.com/seatghor/seatghor/server/audit"
	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/display"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/idempotency"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/place"
	"github.com/seatghor/seatghor/server/shard"
)

// Defaults for the booking rules a request leaves unset.
const (
	DefaultHoldTTL          = 10 * time.Minute
	DefaultPaymentExtension = 5 * time.Minute
	// DefaultCommissionBps is the platform's default commission: 10 %, as
	// in the seed's ledger example.
	DefaultCommissionBps = 1000
	// DefaultCancellationFeeBps is the default fee kept when a buyer cancels
	// a confirmed booking.
	DefaultCancellationFeeBps = 1000
	DefaultSeatCap            = 10
	// MaxSeats bounds one show's seat rows.
	MaxSeats = 100_000
)

// ErrNotFound means there is no such show.
var ErrNotFound = fault.Sentinel(fault.ShowNotFound, "show not found")

// ErrNotYourSale refuses to add a show to a sale the caller does not manage.
var ErrNotYourSale = fault.Sentinel(fault.SaleForbidden, "only managers of the sale's organization and admins add shows to it")

// Errors lists the sentinel errors of catalog that reach the API; it
// answers each by its reason (docs/errors.md).
var Errors = []error{ErrNotFound, ErrNotYourSale, ErrOpeningFrozen, ErrOrganizationNotFound, ErrNotAMember,
	ErrOrganizationExists, ErrLayoutTemplateNotFound, ErrLayoutTemplateExists, ErrLayoutTemplateForbidden}

// Section is a block of seats named row label + number.
type Section struct {
	Name        string   `json:"name"`
	NameBn      string   `json:"name_bn,omitempty"`
	Rows        []string `json:"rows"`
	SeatsPerRow int      `json:"seats_per_row"`
	PriceMinor  int64    `json:"price_minor"`
	// SeatClass is the class a bus trip's fares name (LayoutSection's
	// seat_class); empty: the trip's only class.
	SeatClass string `json:"seat_class,omitempty"`
}

// GAArea is a general-admission area.
type GAArea struct {
	Name       string `json:"name"`
	Capacity   int    `json:"capacity"`
	PriceMinor int64  `json:"price_minor"`
	Buckets    int    `json:"buckets"`
	// Remaining is filled from the shard by GetShow.
	Remaining int `json:"-"`
}

// Show is one event on sale.
type Show struct {
	ID          int64              `json:"id"`
	Kind        catalogv1.ShowKind `json:"kind"`
	Title       string             `json:"title"`
	Operator    string             `json:"operator"`
	Origin      string             `json:"origin,omitempty"`
	Destination string             `json:"destination,omitempty"`
	// OriginPlaceID and DestinationPlaceID are the gazetteer's ids of a bus
	// trip's places; empty for a place it does not know (decision 0112).
	OriginPlaceID      string        `json:"origin_place_id,omitempty"`
	DestinationPlaceID string        `json:"destination_place_id,omitempty"`
	Venue              string        `json:"venue,omitempty"`
	StartsAt           time.Time     `json:"starts_at"`
	OnSaleAt           time.Time     `json:"on_sale_at"`
	Currency           string        `json:"currency"`
	Sections           []Section     `json:"sections,omitempty"`
	GAAreas            []GAArea      `json:"ga_areas,omitempty"`
	HoldTTL            time.Duration `json:"hold_ttl"`
	PaymentExtension   time.Duration `json:"payment_extension"`
	MaxSeatsPerAccount int           `json:"max_seats_per_account"`
	MaxSeatsPerHold    int           `json:"max_seats_per_hold"`
	// CommissionBps is the platform's share of each booking;
	// CancellationFeeBps what a cancelling buyer pays. Basis points;
	// nil takes the default.
	CommissionBps      *int `json:"commission_bps"`
	CancellationFeeBps *int `json:"cancellation_fee_bps"`
	Shard              int  `json:"shard"`
	SeatCount          int  `json:"seat_count"`
	// BlockedSeats are the places of SeatCount that never sell (the
	// crew's): a listing's capacity leaves them out.
	BlockedSeats int `json:"blocked_seats,omitempty"`
	// WalkInReserveSeats and WalkInReserve are the walk-in reserve
	// (decision 0444): the seats, and the time before departure, that
	// online and partner sales leave to the operator's counters.
	WalkInReserveSeats int           `json:"walk_in_reserve_seats,omitempty"`
	WalkInReserve      time.Duration `json:"walk_in_reserve,omitempty"`
	CreatedBy          string        `json:"created_by"`
	CreatedAt          time.Time     `json:"created_at"`
	// WaitingRoom is the show's waiting room; nil when it has none.
	WaitingRoom *WaitingRoom `json:"waiting_room,omitempty"`
	// OrganizationID is the organisation whose members act on the show
	// (decision 0075); Operator is only its display name. Empty: a show of
	// the platform's own, which only admins manage.
	OrganizationID string `json:"organization_id,omitempty"`
	// TimeZone is the IANA zone the show takes place in, whose wall clock
	// buyers and gates read (decision 0170); display.DefaultZone when unset.
	TimeZone string `json:"time_zone"`
	// Layout is the drawing of the show's places (decision 0370), when the
	// request gave one or a template: then Sections only summarise it. nil:
	// straight rows of Sections (Places). Not in the show's JSON: the
	// catalog keeps it apart (shows.places) and the shard seat by seat.
	Layout *Layout `json:"-"`
	// LayoutTemplateID is the template the places were made from.
	LayoutTemplateID string `json:"layout_template_id,omitempty"`
	// SectionPrices are, with LayoutTemplateID, this show's prices of the
	// template's sections (the template's own are defaults).
	SectionPrices []SectionPrice `json:"-"`
	// Stops are a bus trip's stops in route order (issue 24): its seats
	// are then sold per leg and priced by Fares. Empty: one leg, priced by
	// the sections.
	Stops []TripStop `json:"stops,omitempty"`
	Fares []Fare     `json:"fares,omitempty"`
	// RouteID is the route a bus trip runs on when a timetable made it
	// (server/network); empty otherwise.
	RouteID string `json:"route_id,omitempty"`
	// TitleBn, VenueBn and OperatorBn are Title, Venue and Operator in
	// Bengali script (decision 0385); empty: the Bengali UI shows them as
	// written.
	TitleBn    string `json:"title_bn,omitempty"`
	VenueBn    string `json:"venue_bn,omitempty"`
	OperatorBn string `json:"operator_bn,omitempty"`
	// CancelledAt is when its operator cancelled the show (CancelShow);
	// nil while it runs. CancelReason is why, for buyers.
	CancelledAt  *time.Time `json:"cancelled_at,omitempty"`
	CancelReason string     `json:"cancel_reason,omitempty"`
	// ScheduledStartsAt is the time the show was first sold for, once its
	// operator has moved it (RescheduleShow, decision 0441); nil while it
	// keeps it. RescheduleReason is why, for buyers.
	ScheduledStartsAt *time.Time `json:"scheduled_starts_at,omitempty"`
	RescheduleReason  string     `json:"reschedule_reason,omitempty"`
	// PublishedAt is when the show was published (decision 0455); nil
	// while it is a draft, which has no seats on its shard yet.
	PublishedAt *time.Time `json:"published_at,omitempty"`
	// DepartedAt and ArrivedAt are when its supervisor marked the coach gone
	// from its first stop and at its last (decision 0468); nil until then.
	DepartedAt *time.Time `json:"departed_at,omitempty"`
	ArrivedAt  *time.Time `json:"arrived_at,omitempty"`
}

// SectionPrice is a show's price of a seat of a template's section.
type SectionPrice struct {
	Section    string
	PriceMinor int64
}

// AreaPrice is a show's price of a place of one of its general-admission
// areas.
type AreaPrice struct {
	Area       string
	PriceMinor int64
}

// Places is the drawing of s's places: its Layout, or straight rows of its
// Sections.
func (s Show) Places() *Layout {
	if s.Layout != nil {
		return s.Layout
	}
	return StraightRows(s.Sections)
}

// Proto is the show as the API and events carry it.
func (s Show) Proto() *catalogv1.Show {
	p := &catalogv1.Show{
		ShowId: s.ID, Kind: s.Kind, Title: s.Title, Operator: s.Operator, Origin: s.Origin,
		Destination: s.Destination, Venue: s.Venue, StartsAt: timestamppb.New(s.StartsAt),
		OnSaleAt: timestamppb.New(s.OnSaleAt), Currency: s.Currency, HoldTtl: durationpb.New(s.HoldTTL),
		PaymentExtension:   durationpb.New(s.PaymentExtension),
		MaxSeatsPerAccount: int32(s.MaxSeatsPerAccount), MaxSeatsPerHold: int32(s.MaxSeatsPerHold),
		Shard: int32(s.Shard), SeatCount: int32(s.SeatCount), CreatedAt: timestamppb.New(s.CreatedAt),
		CommissionBps: int32(*s.CommissionBps), CancellationFeeBps: int32(*s.CancellationFeeBps),
		OrganizationId: s.OrganizationID, OriginPlaceId: s.OriginPlaceID, DestinationPlaceId: s.DestinationPlaceID,
		TimeZone: s.TimeZone, StartsAtLocal: display.LocalTime(s.StartsAt, display.ZoneOrDefault(s.TimeZone)),
		OriginBengali: place.Bengali(s.Origin), DestinationBengali: place.Bengali(s.Destination),
		LayoutTemplateId: s.LayoutTemplateID, RouteId: s.RouteID,
		TitleBn: s.TitleBn, VenueBn: s.VenueBn, OperatorBn: s.OperatorBn, CancelReason: s.CancelReason,
		WalkInReserveSeats: int32(s.WalkInReserveSeats),
	}
	if s.WalkInReserve > 0 {
		p.WalkInReserve = durationpb.New(s.WalkInReserve)
	}
	if s.CancelledAt != nil {
		p.CancelledAt = timestamppb.New(*s.CancelledAt)
	}
	if s.ScheduledStartsAt != nil {
		p.ScheduledStartsAt, p.RescheduleReason = timestamppb.New(*s.ScheduledStartsAt), s.RescheduleReason
	}
	if s.PublishedAt != nil {
		p.PublishedAt = timestamppb.New(*s.PublishedAt)
	}
	if s.DepartedAt != nil {
		p.DepartedAt = timestamppb.New(*s.DepartedAt)
	}
	if s.ArrivedAt != nil {
		p.ArrivedAt = timestamppb.New(*s.ArrivedAt)
	}
	if len(s.Stops) > 0 {
		p.Stops, p.Fares = s.Trip().StopsProto(), FaresProto(s.Fares)
	}
	for _, sec := range s.Sections {
		p.Sections = append(p.Sections, &catalogv1.Section{Name: sec.Name, NameBn: sec.NameBn, Rows: sec.Rows,
			SeatsPerRow: int32(sec.SeatsPerRow), PriceMinor: sec.PriceMinor})
	}
	for _, a := range s.GAAreas {
		p.GaAreas = append(p.GaAreas, &catalogv1.GaArea{Name: a.Name, Capacity: int32(a.Capacity),
			PriceMinor: a.PriceMinor, Buckets: int32(a.Buckets), Remaining: int32(a.Remaining)})
	}
	if w := s.WaitingRoom; w != nil {
		p.WaitingRoom = &catalogv1.WaitingRoom{Enabled: true, MinAdmissionRate: int32(w.MinRate),
			MaxAdmissionRate: int32(w.MaxRate), AdmittedTokenTtl: durationpb.New(w.AdmittedTTL),
			EndsAt: timestamppb.New(w.EndsAt), OpensAt: timestamppb.New(s.OnSaleAt), SaleId: w.SaleID}
	}
	return p
}

// Service is the catalog.
type Service struct {
	router    *shard.Router
	clock     clock.Clock
	inventory Inventory
	policy    Policy
}

// Inventory writes a new show's seats and GA buckets into its shard and
// counts the GA places left (booking.Inventory): booking owns those tables,
// and booking imports catalog, so the catalog is given it.
type Inventory interface {
	// Provision writes show's seats and GA buckets in tx, the shard
	// transaction that writes its terms: a show is on its shard whole or
	// not at all.
	Provision(ctx context.Context, tx pgx.Tx, show Show) error
	// GAPlacesLeft counts the places of each GA area of a show left for
	// general sale (outside partners' allocations) on q, its shard.
	GAPlacesLeft(ctx context.Context, q Querier, showID int64) (map[string]int, error)
	// Retire deletes a show's seats and GA buckets in tx, its shard's
	// transaction, and says what of them was held, sold or allocated and
	// how many holds the show ever had: WithdrawUnsold commits only when
	// that is nothing, and rolls back otherwise.
	Retire(ctx context.Context, tx pgx.Tx, showID int64) (Sales, error)
	// Reprice gives a section's seats a new price in tx, its shard's
	// transaction, unless one of them is held or sold (fault.PriceFrozen;
	// decision 0459).
	Reprice(ctx context.Context, tx pgx.Tx, showID int64, p SectionPrice) error
	// RepriceArea gives a general-admission area's places a new price in
	// tx, its shard's transaction, unless one of them is held or sold
	// (fault.PriceFrozen; decision 0474).
	RepriceArea(ctx context.Context, tx pgx.Tx, showID int64, p AreaPrice) error
	// MarkStop records in tx, its shard's transaction, that the coach of
	// the show has left stop, or reached it when it is the last (decision
	// 0468); false when it was marked before.
	MarkStop(ctx context.Context, tx pgx.Tx, showID int64, stop int, at time.Time, by string) (bool, error)
}

// Policy bounds what an organisation may set on its own shows; admins may
// set anything the API allows (decision 0076).
type Policy struct {
	// MaxCancellationFeeBps is the highest cancellation fee a
	// manager may set; nil: DefaultCancellationFeeBps, so they may lower
	// the fee, not raise it. The commission and the shard are admins' only.
	MaxCancellationFeeBps *int
}

// Option tunes the catalog.
type Option func(*Service)

// WithPolicy sets the policy; nil fields keep their defaults.
func WithPolicy(p Policy) Option {
	return func(s *Service) {
		if p.MaxCancellationFeeBps != nil {
			s.policy.MaxCancellationFeeBps = p.MaxCancellationFeeBps
		}
	}
}

// NewService returns the catalog over the router's catalog database and
// shards, writing new shows' seats through inventory.
func NewService(router *shard.Router, clk clock.Clock, inventory Inventory, opts ...Option) *Service {
	s := &Service{router: router, clock: clk, inventory: inventory,
		policy: Policy{MaxCancellationFeeBps: new(int(DefaultCancellationFeeBps))}}
	for _, o := range opts {
		o(s)
	}
	return s
}

// errorCodec records a refused show definition with the idempotency key
// (decision 0318); "" reads catalog's InvalidError recorded before.
var errorCodec = idempotency.Faults("catalog", []fault.Reason{fault.ShowInvalid, fault.LayoutTemplateInvalid,
	fault.LayoutTemplateNotFound},
	map[string]fault.Reason{"": fault.ShowInvalid})

// NewShow is what CreateShow needs beyond the show itself.
type NewShow struct {
	Show
	// RequestedShard places the show on a chosen shard.
	RequestedShard *int32
	// Admin says the caller is an admin: it may create shows for any
	// organisation (or none), set the commission and the shard, and add the
	// show to any sale. Anyone else must manage Show.OrganizationID.
	Admin bool
	// InTx, when set, runs in the catalog transaction that publishes the
	// show, after its row is written and before its seats are: what it
	// writes commits with the show, and its error undoes the show (the
	// timetable job claims the trip's key there, decision 0361).
	InTx func(ctx context.Context, tx pgx.Tx, show Show) error
	// Draft keeps the show a draft (decision 0455): its catalog row only,
	// no seats on its shard and no ShowPublished until PublishShow.
	Draft bool
}

// authorize checks what a caller who is not an admin may ask for
// (decision 0076), and names the show's operator after its organisation
// when the request names none.
func (s *Service) authorize(ctx context.Context, show *Show, createdBy string, in NewShow) error {
	if in.Admin {
		if show.OrganizationID == "" {
			return nil
		}
		name, nameBn, err := s.organizationName(ctx, show.OrganizationID)
		if errors.Is(err, ErrOrganizationNotFound) {
			return &fault.Error{Reason: fault.ShowInvalid, Field: "organization_id", Message: fmt.Sprintf("there is no organization %q", show.OrganizationID)}
		}
		if err != nil {
			return err
		}
		show.nameOperator(name, nameBn)
		return nil
	}
	if show.OrganizationID == "" {
		return &fault.Error{Reason: fault.ShowInvalid, Field: "organization_id", Message: "name the organization the show belongs to (one you manage)"}
	}
	ok, err := s.HasRole(ctx, show.OrganizationID, createdBy, RoleManager)
	if err != nil {
		return err
	}
	if !ok {
		return &fault.Error{Reason: fault.ShowFieldForbidden, Field: "organization_id", Message: fmt.Sprintf("only managers of %q and admins create its shows", show.OrganizationID)}
	}
	if show.CommissionBps != nil {
		return &fault.Error{Reason: fault.ShowFieldForbidden, Field: "commission_bps", Message: "the platform's commission is set by admins only"}
	}
	if in.RequestedShard != nil {
		return &fault.Error{Reason: fault.ShowFieldForbidden, Field: "shard", Message: "placing a show on a shard is for admins only"}
	}
	most := *s.policy.MaxCancellationFeeBps
	switch f := show.CancellationFeeBps; {
	case f == nil && most < DefaultCancellationFeeBps:
		show.CancellationFeeBps = new(most) // unset: the default, within the policy
	case f != nil && *f > most:
		return &fault.Error{Reason: fault.ShowInvalid, Field: "cancellation_fee_bps", Message: fmt.Sprintf(
			"at most %d (the platform's policy); a higher fee needs an admin", most)}
	}
	name, nameBn, err := s.organizationName(ctx, show.OrganizationID)
	if err != nil {
		return err
	}
	show.nameOperator(name, nameBn)
	return nil
}

// nameOperator names a show that names no operator after its
// organisation, in both scripts; a show that names one keeps its own
// operator_bn (the organisation's Bengali name is of another name).
func (s *Show) nameOperator(name, nameBn string) {
	if s.Operator == "" {
		s.Operator, s.OperatorBn = name, cmp.Or(s.OperatorBn, nameBn)
	}
}

// CreateShow places a new show on a shard and writes its seats and GA
// buckets there, then publishes it in the catalog. The catalog transaction
// stays open while the shard is written, so a show is never visible without
// its seats; a crash in between leaves at worst unreachable rows in the shard
// (no catalog entry points at them). A draft (in.Draft) is only its catalog
// row until PublishShow.
func (s *Service) CreateShow(ctx context.Context, createdBy string, in NewShow) (Show, error) {
	now := s.clock.Now().UTC().Truncate(time.Microsecond)
	show := in.Show
	if err := s.authorize(ctx, &show, createdBy, in); err != nil {
		return Show{}, err
	}
	if err := s.joinSale(ctx, &show, createdBy, in.Admin); err != nil {
		return Show{}, err
	}
	if err := s.layOut(ctx, &show); err != nil {
		return Show{}, err
	}
	if err := complete(&show, createdBy, now); err != nil {
		return Show{}, err
	}
	if !in.Draft {
		show.PublishedAt = &now
	}
	return idempotency.Do(ctx, s.router.Catalog(), errorCodec, idempotency.Options{Now: now, Wait: 3 * time.Second},
		func(tx pgx.Tx) (Show, error) {
			if show.ID == 0 {
				if err := tx.QueryRow(ctx, `SELECT nextval(pg_get_serial_sequence('shows', 'show_id'))`).Scan(&show.ID); err != nil {
					return Show{}, fmt.Errorf("assign show id: %w", err)
				}
			}
			i, err := s.router.Place(ctx, tx, in.RequestedShard)
			if errors.Is(err, shard.ErrNoSuchShard) {
				return Show{}, &fault.Error{Reason: fault.ShowInvalid, Field: "shard", Message: fmt.Sprintf("there are %d shards (0 to %d)",
					len(s.router.Shards()), len(s.router.Shards())-1)}
			}
			if err != nil {
				return Show{}, err
			}
			show.Shard = i
			if err := insertShow(ctx, tx, show); err != nil {
				return Show{}, err
			}
			if err := insertWaitingRoom(ctx, tx, show); err != nil {
				return Show{}, err
			}
			if in.InTx != nil {
				if err := in.InTx(ctx, tx, show); err != nil {
					return Show{}, err
				}
			}
			by := audit.Actor{Kind: audit.ActorUser, ID: createdBy}
			if in.Admin {
				by.Kind = audit.ActorAdmin
			}
			if err := audit.Record(ctx, tx, audit.Entry{At: now, Actor: by, Action: "show.create",
				Target: fmt.Sprintf("show:%d", show.ID), OrganizationID: show.OrganizationID,
				Detail: map[string]any{"after": map[string]any{"title": show.Title, "starts_at": show.StartsAt, "seats": show.SeatCount,
					"draft": in.Draft}}}); err != nil {
				return Show{}, err
			}
			if in.Draft {
				return show, nil
			}
			return show, s.putOnSale(ctx, tx, show, now)
		})
}

// complete checks what protovalidate cannot (uniqueness across sections)
// and fills the defaults.
func complete(s *Show, createdBy string, now time.Time) error {
	s.CreatedBy, s.CreatedAt = createdBy, now
	s.Origin, s.OriginPlaceID = canonicalPlace(s.Origin)
	s.Destination, s.DestinationPlaceID = canonicalPlace(s.Destination)
	if err := completeTrip(s); err != nil {
		return err
	}
	if s.Operator == "" {
		s.Operator = createdBy
	}
	if s.OnSaleAt.IsZero() {
		s.OnSaleAt = now
	}
	loc, err := display.Zone(s.TimeZone)
	if err != nil {
		return &fault.Error{Reason: fault.ShowInvalid, Field: "time_zone", Message: fmt.Sprintf(
			"%q is not an IANA time zone (e.g. %q)", s.TimeZone, display.DefaultZone)}
	}
	s.TimeZone = loc.String()
	s.StartsAt, s.OnSaleAt = s.StartsAt.UTC(), s.OnSaleAt.UTC()
	if !s.OnSaleAt.Before(s.StartsAt) {
		return &fault.Error{Reason: fault.ShowInvalid, Field: "starts_at", Message: "the show must start after sales open"}
	}
	if s.HoldTTL == 0 {
		s.HoldTTL = DefaultHoldTTL
	}
	if s.PaymentExtension == 0 {
		s.PaymentExtension = DefaultPaymentExtension
	}
	if s.MaxSeatsPerAccount == 0 {
		s.MaxSeatsPerAccount = DefaultSeatCap
	}
	if s.CommissionBps == nil {
		s.CommissionBps = new(int(DefaultCommissionBps))
	}
	if s.CancellationFeeBps == nil {
		s.CancellationFeeBps = new(int(DefaultCancellationFeeBps))
	}
	if s.MaxSeatsPerHold == 0 {
		s.MaxSeatsPerHold = min(DefaultSeatCap, s.MaxSeatsPerAccount)
	}
	if err := checkBounds(s); err != nil {
		return err
	}
	rows := map[string]bool{}
	s.SeatCount = 0
	for _, sec := range s.Sections {
		for _, r := range sec.Rows {
			if rows[r] {
				return &fault.Error{Reason: fault.ShowInvalid, Field: "sections", Message: fmt.Sprintf("row %q appears twice", r)}
			}
			rows[r] = true
		}
		s.SeatCount += len(sec.Rows) * sec.SeatsPerRow
	}
	s.BlockedSeats = 0
	if s.Layout != nil {
		s.SeatCount, s.BlockedSeats = s.Layout.SeatCount(), s.Layout.Blocked()
	}
	if s.SeatCount > MaxSeats {
		return &fault.Error{Reason: fault.ShowInvalid, Field: "sections", Message: fmt.Sprintf("%d seats; at most %d per show", s.SeatCount, MaxSeats)}
	}
	// A seat is a row per leg on the shard (decision 0350).
	if legs := s.Trip().Legs(); s.SeatCount*legs > MaxSeats {
		return &fault.Error{Reason: fault.ShowInvalid, Field: "stops", Message: fmt.Sprintf(
			"%d seats sold in %d legs are %d seat-legs; at most %d per show", s.SeatCount, legs, s.SeatCount*legs, MaxSeats)}
	}
	areas := map[string]bool{}
	for i, a := range s.GAAreas {
		if areas[a.Name] {
			return &fault.Error{Reason: fault.ShowInvalid, Field: "ga_areas", Message: fmt.Sprintf("area %q appears twice", a.Name)}
		}
		areas[a.Name] = true
		if a.Buckets == 0 {
			// one counter row takes about 250 writes/s; a bucket per 250
			// places keeps the crowd off a single hot row. At most 64: more
			// buckets than holds in flight on one area (an API process has
			// 20 connections a shard), so the SKIP LOCKED fast path finds a
			// free one instead of falling back (decision 0211).
			s.GAAreas[i].Buckets = min(64, max(1, (a.Capacity+249)/250))
		}
		s.GAAreas[i].Buckets = min(s.GAAreas[i].Buckets, a.Capacity)
	}
	if s.SeatCount == 0 && len(s.GAAreas) == 0 {
		return &fault.Error{Reason: fault.ShowInvalid, Field: "sections", Message: "a show needs seats or a general-admission area"}
	}
	return completeWaitingRoom(s, now)
}

// checkBounds refuses prices and seat caps out of range (decision 0071), as
// the API's validation rules do, so no caller of CreateShow can make a
// hold's total overflow: at most amount.MaxPlacesPerHold places of at most
// amount.MaxPriceMinor each.
func checkBounds(s *Show) error {
	price := func(field string, p int64) error {
		if p < 0 || p > amount.MaxPriceMinor {
			return &fault.Error{Reason: fault.ShowInvalid, Field: field, Message: fmt.Sprintf("price %d is out of range: 0 to %d minor units",
				p, amount.MaxPriceMinor)}
		}
		return nil
	}
	for i, sec := range s.Sections {
		if err := price(fmt.Sprintf("sections[%d].price_minor", i), sec.PriceMinor); err != nil {
			return err
		}
	}
	for i, a := range s.GAAreas {
		if err := price(fmt.Sprintf("ga_areas[%d].price_minor", i), a.PriceMinor); err != nil {
			return err
		}
	}
	for _, c := range []struct {
		field string
		n     int
	}{{"max_seats_per_account", s.MaxSeatsPerAccount}, {"max_seats_per_hold", s.MaxSeatsPerHold}} {
		if c.n < 1 || c.n > amount.MaxPlacesPerHold {
			return &fault.Error{Reason: fault.ShowInvalid, Field: c.field, Message: fmt.Sprintf("%d is out of range: 1 to %d (R-3.8)", c.n, amount.MaxPlacesPerHold)}
		}
	}
	return nil
}

// jsonList is vs as a JSON array for a jsonb column: [] when empty.
func jsonList[T any](vs []T) []T {
	if vs == nil {
		return []T{}
	}
	return vs
}

func insertShow(ctx context.Context, tx pgx.Tx, s Show) error {
	layout, err := json.Marshal(showLayout{s.Sections, s.GAAreas, s.BlockedSeats})
	if err != nil {
		return fmt.Errorf("encode layout: %w", err)
	}
	var places []byte // NULL: straight rows of the sections
	if s.Layout != nil {
		if places, err = json.Marshal(s.Layout); err != nil {
			return fmt.Errorf("encode places: %w", err)
		}
	}
	_, err = tx.Exec(ctx, `
		INSERT INTO shows (show_id, shard, kind, title, operator, origin, destination, venue, starts_at,
		                   on_sale_at, currency, layout, hold_ttl_ms, payment_extension_ms,
		                   max_seats_per_account, max_seats_per_hold, seat_count, created_by, created_at,
		                   commission_bps, cancellation_fee_bps, organization_id, origin_place_id, destination_place_id,
		                   time_zone, places, layout_template_id, stops, fares, route_id, title_bn, venue_bn, operator_bn,
		                   walk_in_reserve_seats, walk_in_reserve_ms, published_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21,
		        nullif($22, ''), nullif($23, ''), nullif($24, ''), $25, $26, nullif($27, ''), $28, $29, nullif($30, ''),
		        $31, $32, $33, $34, $35, $36)`,
		s.ID, s.Shard, int16(s.Kind), s.Title, s.Operator, s.Origin, s.Destination, s.Venue, s.StartsAt,
		s.OnSaleAt, s.Currency, layout, s.HoldTTL.Milliseconds(), s.PaymentExtension.Milliseconds(),
		s.MaxSeatsPerAccount, s.MaxSeatsPerHold, s.SeatCount, s.CreatedBy, s.CreatedAt,
		*s.CommissionBps, *s.CancellationFeeBps, s.OrganizationID, s.OriginPlaceID, s.DestinationPlaceID,
		s.TimeZone, places, s.LayoutTemplateID, jsonList(s.Stops), jsonList(s.Fares), s.RouteID,
		s.TitleBn, s.VenueBn, s.OperatorBn, s.WalkInReserveSeats, s.WalkInReserve.Milliseconds(), s.PublishedAt)
	if pg.IsUniqueViolation(err, "shows_pkey") {
		return &fault.Error{Reason: fault.ShowInvalid, Field: "show_id", Message: fmt.Sprintf("show %d exists", s.ID)}
	}
	if err != nil {
		return fmt.Errorf("insert show: %w", err)
	}
	return nil
}

// provision writes the show's terms (its booking rules), and through the
// inventory its seats and GA buckets, into its shard.
func provision(ctx context.Context, tx pgx.Tx, inventory Inventory, s Show) error {
	drawing, err := json.Marshal(s.Places().Drawing())
	if err != nil {
		return fmt.Errorf("encode drawing: %w", err)
	}
	if _, err := tx.Exec(ctx, `
		INSERT INTO shows (show_id, organization_id, currency, on_sale_at, starts_at, hold_ttl_ms,
		                   payment_extension_ms, max_seats_per_account, max_seats_per_hold, created_at,
		                   commission_bps, cancellation_fee_bps, time_zone, drawing, walk_in_reserve_seats, walk_in_reserve_ms)
		VALUES ($1, nullif($2, ''), $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
		s.ID, s.OrganizationID, s.Currency, s.OnSaleAt, s.StartsAt, s.HoldTTL.Milliseconds(),
		s.PaymentExtension.Milliseconds(), s.MaxSeatsPerAccount, s.MaxSeatsPerHold, s.CreatedAt,
		*s.CommissionBps, *s.CancellationFeeBps, s.TimeZone, drawing, s.WalkInReserveSeats, s.WalkInReserve.Milliseconds()); err != nil {
		return fmt.Errorf("insert show rules: %w", err)
	}
	return inventory.Provision(ctx, tx, s)
}

// canonicalPlace is a place as a show stores it: any known spelling
// ("Chittagong", "ctg", "চট্টগ্রাম") as the official name and its place id,
// an unknown one as typed with no id (free text, decision 0112).
func canonicalPlace(name string) (display, id string) {
	if p, ok := place.Default().Lookup(name); ok {
		return p.Name, p.ID
	}
	return name, ""
}
