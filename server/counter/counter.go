// Package counter is an operator's ticket counter (issue 25 §3, decision
// 0443): its staff's cash shifts, kept in the catalog, and the cash that
// moves in them, kept on the shards of the shows it moves for. A counter
// sells from the same seats as every other channel (a hold, an order, then
// the order confirmed with cash instead of a payment), takes tickets back
// for cash, and pays out the cash owed for trips the operator cancelled.
// Every movement is a row of cash_entries and a ledger journal on the
// counter's cash account, written in one transaction with the order's
// change; a shift's report adds them up over every shard and checks them
// against the ledger.
package counter

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/idempotency"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/shard"
	"github.com/seatghor/seatghor/server/ticket"
)

// Members answers whether a user holds one of the roles in an
// organisation (catalog.Service).
type Members interface {
	HasRole(ctx context.Context, orgID, userID string, roles ...catalog.Role) (bool, error)
}

// Sales takes the holds and orders a counter sells, and reads them back
// (booking.Service).
type Sales interface {
	CreateHold(ctx context.Context, userID string, req booking.HoldRequest) (booking.Hold, error)
	Checkout(ctx context.Context, userID, holdID string, co booking.Checkout) (booking.Order, error)
	ReleaseHold(ctx context.Context, userID, holdID string) (booking.Hold, error)
	GetOrder(ctx context.Context, caller booking.Caller, orderID string) (booking.Order, error)
	CounterView(ctx context.Context, showID int64) (booking.ChannelView, error)
}

// Shows reads a show of the catalog (catalog.Service).
type Shows interface {
	GetShow(ctx context.Context, showID int64) (catalog.Show, error)
}

// Config is what the counters' service works with.
type Config struct {
	Router  *shard.Router
	Sales   Sales
	Members Members
	// Admitted tells whether an order has a ticket checked in
	// (ticket.OrderAdmitted): such an order is not taken back.
	Admitted booking.AdmittedFunc
	Clock    clock.Clock
	// Shows, Codes and Print make the counter tickets (Receipt); without
	// them GetCounterTicket is not served.
	Shows Shows
	Codes *ticket.Codes
	Print PrintFunc
}

// Service is the counters' service.
type Service struct {
	router   *shard.Router
	sales    Sales
	members  Members
	admitted booking.AdmittedFunc
	clock    clock.Clock
	shows    Shows
	codes    *ticket.Codes
	print    PrintFunc
	wait     time.Duration
}

// NewService returns the counters' service over the catalog and shards of
// cfg.Router.
func NewService(cfg Config) *Service {
	return &Service{router: cfg.Router, sales: cfg.Sales, members: cfg.Members, admitted: cfg.Admitted,
		clock: cfg.Clock, shows: cfg.Shows, codes: cfg.Codes, print: cfg.Print, wait: 3 * time.Second}
}

func (s *Service) now() time.Time { return s.clock.Now().UTC() }

// codec records the counters' business answers with idempotency keys, with
// booking's (a sale or a refund may answer either).
var codec = idempotency.Union(map[string]idempotency.Codec{
	"counter": idempotency.Faults("counter",
		[]fault.Reason{fault.CounterShiftOpen, fault.CounterShiftClosed, fault.CounterForbidden, fault.CounterRefundRefused},
		nil),
	"booking": booking.ErrorCodec,
})

// EntryKind is what moved cash.
type EntryKind string

// The kinds of cash entry.
const (
	// Sale: cash into the drawer for an order sold.
	Sale EntryKind = "sale"
	// Refund: cash out of the drawer for a ticket taken back.
	Refund EntryKind = "refund"
	// Owed: cash the counter owes for a trip its operator cancelled; no
	// drawer moved yet.
	Owed EntryKind = "owed"
	// Payout: cash out of the drawer for what was owed.
	Payout EntryKind = "payout"
)

// Entry is one movement of cash for an order.
type Entry struct {
	Kind    EntryKind `json:"kind"`
	TxnID   string    `json:"txn_id"`
	OrderID string    `json:"order_id"`
	ShowID  int64     `json:"show_id"`
	ShiftID string    `json:"shift_id,omitempty"`
	// OrganizationID and CounterID name the counter whose accounts moved.
	OrganizationID string `json:"organization_id"`
	CounterID      string `json:"counter_id"`
	// AmountMinor is into the drawer (+) or out of it (−); owed: what is
	// owed (+).
	AmountMinor int64     `json:"amount_minor"`
	Currency    string    `json:"currency"`
	By          string    `json:"by"`
	At          time.Time `json:"at"`
}

// buyerID is the account a counter sale's hold and order belong to: one
// per sale, so that the show's per-account cap bounds a sale and not a
// counter's day. With an idempotency key it is the key's (a retried sale
// finds its hold and order again); the buyer is known by the phone the
// tickets are sent to (decision 0443).
func buyerID(ctx context.Context) string {
	if k, ok := idempotency.FromContext(ctx); ok {
		sum := sha256.Sum256([]byte(k.Scope + "\x00" + k.Key))
		return "cb_" + hex.EncodeToString(sum[:12])
	}
	return "cb_" + strings.ToLower(rand.Text())
}

// notOpen is the answer for a shift that is not the caller's open one.
func notOpen(shiftID string) error {
	return fault.New(fault.CounterShiftClosed, "shift %s is not an open shift of yours", shiftID)
}

// shardOf is the shard of a show; an unknown show is not found.
func (s *Service) shardOf(ctx context.Context, showID int64) (*pg.Pool, error) {
	pool, err := s.router.ForShow(ctx, showID)
	if errors.Is(err, shard.ErrUnknownShow) {
		return nil, fault.New(fault.ShowNotFound, "show %d not found", showID)
	}
	return pool, err
}

// shardOfOrder is the shard of an order; a malformed or unknown id is not
// found.
func (s *Service) shardOfOrder(ctx context.Context, orderID string) (*pg.Pool, error) {
	pool, _, err := s.router.ForID(ctx, orderID)
	if errors.Is(err, shard.ErrBadID) || errors.Is(err, shard.ErrUnknownShow) {
		return nil, fault.New(fault.BookingNotFound, "order %s not found", orderID)
	}
	return pool, err
}
