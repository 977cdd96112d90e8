// Package waitingroom owns the virtual waiting room in front of a busy
// on-sale: the signed queue and admitted tokens, the queue in
// Redis with its opening lottery, and the admission controller that
// moves the admission number X by A per second, with A chosen from the seat
// database's latency, errors and what is left to hold.
//
// The durable part of a room (its window and the operators' settings) is a
// row in the catalog database; everything that changes per second lives in
// Redis, so a poll touches no database.
package waitingroom

import (
	"context"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/keyset"
)

// State is where a sale stands.
type State int

// The states of a sale.
const (
	StateNoQueue State = iota + 1
	StateScheduled
	StateAdmitting
	StatePaused
	StateSoldOut
	StateEnded
)

// Config tunes the waiting room; zero fields take the defaults.
type Config struct {
	// Controller is how the admission rate follows the seat database.
	Controller ControllerConfig
	// Tick is how often the admitter moves every open room; default 1 s.
	Tick time.Duration
	// MaxStep bounds the time one tick accounts for, so a new leader after
	// a pause does not admit a burst; default 5 s.
	MaxStep time.Duration
	// PollMin and PollMax bound poll_after; defaults 2 s and 20 s (R-2:
	// one poll per 20 s far back in line).
	PollMin, PollMax time.Duration
	// TokenTTL is how long a queue token lasts (each poll renews it);
	// default 1 h.
	TokenTTL time.Duration
	// RoomCacheTTL is how long a process trusts its copy of a room's
	// settings (they change only by UpdateSale); default 2 s.
	RoomCacheTTL time.Duration
	// RoomCacheSize bounds the rooms cached per process, and separately the
	// "no room" answers for show ids newer than the list of shows with a
	// room (show ids come from callers); default 10,000 each.
	RoomCacheSize int
}

func (c *Config) defaults() {
	c.Controller.defaults()
	if c.Tick <= 0 {
		c.Tick = time.Second
	}
	if c.MaxStep <= 0 {
		c.MaxStep = 5 * time.Second
	}
	if c.PollMin <= 0 {
		c.PollMin = 2 * time.Second
	}
	if c.PollMax <= 0 {
		c.PollMax = 20 * time.Second
	}
	if c.TokenTTL <= 0 {
		c.TokenTTL = time.Hour
	}
	if c.RoomCacheTTL <= 0 {
		c.RoomCacheTTL = 2 * time.Second
	}
	if c.RoomCacheSize <= 0 {
		c.RoomCacheSize = 10_000
	}
}

// Seats tells how much of a show can be held now (booking.Service).
type Seats interface {
	Available(ctx context.Context, showID int64) (int64, error)
}

// Rooms reads and changes the rooms' settings, which the catalog keeps
// (catalog.Service, the owner of the waiting_rooms table).
type Rooms interface {
	SaleRoom(ctx context.Context, showID int64) (catalog.SaleRoom, bool, error)
	OpenSaleRooms(ctx context.Context, now time.Time) ([]catalog.SaleRoom, error)
	RoomedShows(ctx context.Context) (newest int64, showIDs []int64, err error)
	UpdateSaleRoom(ctx context.Context, saleID int64, c catalog.RoomChange, by string, now time.Time) error
}

// Openings moves when the shows of a sale go on sale (catalog.Service):
// the room's opening and every show's on_sale_at together.
type Openings interface {
	MoveOpening(ctx context.Context, saleID int64, at time.Time, by string) error
}

// Members answers whether a user has one of roles in an organisation
// (catalog.Service.HasRole): managers of a sale's organisation run it.
type Members interface {
	HasRole(ctx context.Context, orgID, userID string, roles ...catalog.Role) (bool, error)
}

// Service is the waiting room of every show.
type Service struct {
	rdb      redis.UniversalClient
	prefix   string
	rooms    *roomStore
	seats    Seats
	openings Openings
	members  Members
	sign     signer
	clock    clock.Clock
	log      *slog.Logger
	cfg      Config
	// id names this process as the admitter's leader.
	id      string
	metrics metrics
}

// NewService returns the waiting room over Redis (keys under prefix), the
// catalog's rooms (their settings), the seat counts of booking and
// the catalog's openings and memberships. keys is the queue key set
// (SEATGHOR_QUEUE_KEYS), which signs and verifies the queue and admitted
// tokens.
func NewService(rdb redis.UniversalClient, prefix string, rooms Rooms, seats Seats, openings Openings,
	members Members, keys *keyset.Set, clk clock.Clock, log *slog.Logger, cfg Config) *Service {
	cfg.defaults()
	return &Service{
		rdb: rdb, prefix: prefix, rooms: newRoomStore(rooms, cfg.RoomCacheTTL, cfg.RoomCacheSize), seats: seats, openings: openings, members: members,
		sign: newSigner(keys), clock: clk, log: log, cfg: cfg, id: randomID(), metrics: newMetrics(),
	}
}

func (s *Service) now() time.Time { return s.clock.Now() }
