// Package booking owns the buy world's inventory: seats and general-admission
// places, the holds that keep them for a buyer, and the orders made from
// holds. Every change of a seat is one conditional write on the show's shard
// correctness never depends on a cache, a lock service or a sweeper.
package booking

import (
	"context"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/idempotency"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/shard"
)

// Errors lists the sentinel errors of booking; the API answers each by its
// reason (docs/errors.md).
var Errors = []error{ErrNotConfirmable}

// codecReasons are booking's answers recorded with idempotency keys: those
// it makes for a request (a *fault.Error; decision 0318).
var codecReasons = []fault.Reason{fault.SeatsUnavailable, fault.BookingNotFound, fault.ShowNotFound,
	fault.BookingInvalid, fault.BookingNotAllowed, fault.OrderCheckedIn, fault.AllocationForbidden,
	fault.PartnerNotFound, fault.SeatsNotAllocatable, fault.SeatsNotInChannel, fault.SeatsBlocked, fault.WomenSeatUndeclared,
	fault.JourneyNotSold, fault.SeatsNotTogether, fault.WalkInReserve, fault.PaidAtCounter}

// ErrorCodec records booking's business errors with idempotency keys; work
// of other domains that may answer them joins it (idempotency.Union). The
// kinds are those of booking's own error type before decision 0318, so that
// the answers recorded then replay.
var ErrorCodec = idempotency.Faults("booking", codecReasons, map[string]fault.Reason{
	"unavailable": fault.SeatsUnavailable, "not_found": fault.BookingNotFound, "invalid": fault.BookingInvalid,
	"precondition": fault.BookingNotAllowed, "checked_in": fault.OrderCheckedIn, "forbidden": fault.AllocationForbidden,
	"partner_not_found": fault.PartnerNotFound, "not_allocatable": fault.SeatsNotAllocatable,
})

// HoldStatus is where a hold is in its life.
type HoldStatus string

// The hold statuses, as stored.
const (
	HoldActive    HoldStatus = "active"
	HoldOrdered   HoldStatus = "ordered"
	HoldConfirmed HoldStatus = "confirmed"
	HoldReleased  HoldStatus = "released"
	HoldExpired   HoldStatus = "expired"
)

// Hold is seats or GA places kept for one buyer until ExpiresAt.
type Hold struct {
	ID          string     `json:"id"`
	ShowID      int64      `json:"show_id"`
	UserID      string     `json:"user_id"`
	Seats       []string   `json:"seats,omitempty"`
	GAArea      string     `json:"ga_area,omitempty"`
	Quantity    int        `json:"quantity"`
	AmountMinor int64      `json:"amount_minor"`
	Currency    string     `json:"currency"`
	Status      HoldStatus `json:"status"`
	ExpiresAt   time.Time  `json:"expires_at"`
	CreatedAt   time.Time  `json:"created_at"`
	OrderID     string     `json:"order_id,omitempty"`
	// PartnerID is the channel the hold came through: the partner's id, 0
	// for Seatghor's own (decision 0185).
	PartnerID int64 `json:"partner_id,omitempty"`
	// WomenSeats are the hold's seats whose passenger was declared a woman,
	// in layout order (decision 0371).
	WomenSeats []string `json:"women_seats,omitempty"`
	// Journey is the stretch of the trip the seats are held for (decision
	// 0350); View is it as buyers read it (names, times), set on a trip
	// with stops when the hold is answered.
	Journey Journey           `json:"journey"`
	View    *commonv1.Journey `json:"-"`

	// takes is what a new GA hold took from which bucket.
	takes map[int]int
}

// EffectiveStatus is the status as of now: a live hold past its expiry is
// expired even before the sweeper marks it.
func (h Hold) EffectiveStatus(now time.Time) HoldStatus {
	if (h.Status == HoldActive || h.Status == HoldOrdered) && now.After(h.ExpiresAt) {
		return HoldExpired
	}
	return h.Status
}

// OrderStatus is where an order is in its life.
type OrderStatus string

// The order statuses, as stored.
const (
	OrderPendingPayment OrderStatus = "pending_payment"
	OrderConfirmed      OrderStatus = "confirmed"
	OrderCancelled      OrderStatus = "cancelled"
	OrderExpired        OrderStatus = "expired"
	// OrderRefunded: paid after the hold was gone; the money went back
	//
	OrderRefunded OrderStatus = "refunded"
)

// Line is one priced line of an order.
type Line struct {
	Seat        string `json:"seat,omitempty"`
	GAArea      string `json:"ga_area,omitempty"`
	Quantity    int    `json:"quantity"`
	AmountMinor int64  `json:"amount_minor"`
}

// Order is what a buyer pays for.
type Order struct {
	ID         string      `json:"id"`
	HoldID     string      `json:"hold_id"`
	ShowID     int64       `json:"show_id"`
	UserID     string      `json:"user_id"`
	Status     OrderStatus `json:"status"`
	Lines      []Line      `json:"lines"`
	TotalMinor int64       `json:"total_minor"`
	Currency   string      `json:"currency"`
	PayBy      time.Time   `json:"pay_by"`
	CreatedAt  time.Time   `json:"created_at"`
	UpdatedAt  time.Time   `json:"updated_at"`
	// PaymentID is the payment that confirmed the order.
	PaymentID string `json:"payment_id,omitempty"`
	// RefundedMinor is the money given back; CancellationFeeMinor the fee
	// kept when a confirmed order was cancelled.
	RefundedMinor        int64 `json:"refunded_minor,omitempty"`
	CancellationFeeMinor int64 `json:"cancellation_fee_minor,omitempty"`
	// PartnerID is the channel the order came through, its hold's.
	PartnerID int64 `json:"partner_id,omitempty"`
	// Passengers are who travel on its seats (bus trips), in seat order;
	// filled only for a caller who may read them (decision 0381).
	Passengers []Passenger `json:"passengers,omitempty"`
	// Journey is its hold's (decision 0350), one line per seat whatever
	// the legs; View is it as buyers read it, on a trip with stops.
	Journey Journey           `json:"journey"`
	View    *commonv1.Journey `json:"-"`
	// Contact is where the buyer hears about the order (decision 0430);
	// zero when none was given.
	Contact Contact `json:"contact,omitzero"`
	// CounterShiftID is the counter shift that sold the order for cash
	// (decision 0443); empty for every other channel.
	CounterShiftID string `json:"counter_shift_id,omitempty"`
	// MovedAt is when its show moved to a later time after the order was
	// paid (decision 0477): its buyer may cancel it for a full refund.
	MovedAt *time.Time `json:"moved_at,omitempty"`
}

// EffectiveStatus is the status as of now: an unpaid order whose hold ran
// out is expired even before the sweeper marks it.
func (o Order) EffectiveStatus(now time.Time) OrderStatus {
	if o.Status == OrderPendingPayment && now.After(o.PayBy) {
		return OrderExpired
	}
	return o.Status
}

// Caller is who asks: the token subject and whether they may see every
// show's holds and orders (admin) or those of shows they operate.
type Caller struct {
	UserID   string
	Admin    bool
	Operator bool
	// PartnerID is the partner the caller acts for, 0 for everyone else.
	PartnerID int64
}

// Config tunes the service.
type Config struct {
	// IdempotencyWait is how long a retry waits for the first request with
	// its key before it is told the first is still running. Default 3s.
	IdempotencyWait time.Duration
	// Partners tells which partners exist, for allocations. Default
	// AnyPartner.
	Partners Partners
	// PartnerCaps tells each partner's per-show cap (decision 0286); nil:
	// partners' holds have none (a booking service built without the
	// platform's partners, server/partner).
	PartnerCaps PartnerCaps
	// HoldBatchSize is how many seated holds of one shard one transaction
	// writes at most (decision 0270); 1 writes each alone, through the
	// batch's statement. Default 32.
	HoldBatchSize int
	// HoldBatchRunners is how many batches of one shard run at once at
	// most: a second starts only when a whole batch waits. Default 4.
	HoldBatchRunners int
}

// Service is the booking core.
type Service struct {
	router *shard.Router
	clock  clock.Clock
	cfg    Config
	// members says who works for a show's organisation.
	members Members
	// check is the last seat check (CheckSeats).
	check *seatCheck
	// batches writes seated holds together (decision 0270).
	batches *holdBatches
	// best counts best-available holds' attempts (decision 0383).
	best bestCounters
	// trips keeps each show's stops and time, read again after tripTTL.
	trips tripCache
}

// Members answers whether a user has one of roles in an organisation
// (catalog.Service.HasRole): managers of a show's organisation read its
// holds and orders.
type Members interface {
	HasRole(ctx context.Context, orgID, userID string, roles ...catalog.Role) (bool, error)
}

// NewService returns the booking service over the shards of router.
func NewService(router *shard.Router, members Members, clk clock.Clock, cfg Config) *Service {
	if cfg.IdempotencyWait <= 0 {
		cfg.IdempotencyWait = 3 * time.Second
	}
	if cfg.Partners == nil {
		cfg.Partners = AnyPartner{}
	}
	if cfg.HoldBatchSize <= 0 {
		cfg.HoldBatchSize = 32
	}
	if cfg.HoldBatchRunners <= 0 {
		cfg.HoldBatchRunners = 4
	}
	return &Service{router: router, members: members, clock: clk, cfg: cfg, check: &seatCheck{},
		batches: &holdBatches{size: cfg.HoldBatchSize, runners: cfg.HoldBatchRunners, byPool: map[*pg.Pool]*holdBatcher{},
			buckets: map[gaArea]int{}}}
}

// now is the service's time, at the precision PostgreSQL stores, so an
// answer replayed from the database equals the first one.
func (s *Service) now() time.Time { return s.clock.Now().UTC().Truncate(time.Microsecond) }

// notFound is the answer for ids that are malformed, unknown, or someone
// else's: the three are indistinguishable to the caller on purpose.
func notFound(what, id string) *fault.Error {
	return fault.New(fault.BookingNotFound, "%s %s not found", what, id)
}

// idempotencyDo runs a write on a shard under the request's idempotency key,
// scoped to target (the show or the hold the request names; decision 0087).
func idempotencyDo[T any](ctx context.Context, s *Service, pool *pg.Pool, target string, now time.Time, fn func(pgx.Tx) (T, error)) (T, error) {
	return idempotency.Do(ctx, pool, ErrorCodec, idempotency.Options{Now: now, Wait: s.cfg.IdempotencyWait, Target: target}, fn)
}

func joinSeats(seats []string) string { return strings.Join(seats, ", ") }
