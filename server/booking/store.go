package booking

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/outbox"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/shard"
)

// showSettings are the booking rules of one show, from its shard.
type showSettings struct {
	ID                 int64
	OrganizationID     string // who runs the show (decision 0075); empty: admins only
	Currency           string
	OnSaleAt           time.Time
	StartsAt           time.Time
	HoldTTL            time.Duration
	MaxSeatsPerAccount int
	MaxSeatsPerHold    int
}

// showColumns are showSettings' columns of the shows row s, as scanShow
// reads them.
const showColumns = `s.show_id, coalesce(s.organization_id, ''), s.currency, s.on_sale_at, s.starts_at, s.hold_ttl_ms,
	s.max_seats_per_account, s.max_seats_per_hold`

func loadShow(ctx context.Context, q pgx.Tx, showID int64) (showSettings, error) {
	return scanShow(q.QueryRow(ctx, `SELECT `+showColumns+` FROM shows s WHERE s.show_id = $1`, showID), showID)
}

// scanShow reads showID's settings (showColumns), then more, from row; no
// row: the show is not found.
func scanShow(row pgx.Row, showID int64, more ...any) (showSettings, error) {
	var (
		s     showSettings
		ttlMs int64
	)
	err := row.Scan(append([]any{&s.ID, &s.OrganizationID, &s.Currency, &s.OnSaleAt, &s.StartsAt, &ttlMs,
		&s.MaxSeatsPerAccount, &s.MaxSeatsPerHold}, more...)...)
	found, err := pg.Found(err)
	if err != nil {
		return s, fmt.Errorf("load show %d: %w", showID, err)
	}
	if !found {
		return s, fault.New(fault.ShowNotFound, "show %d not found", showID)
	}
	s.HoldTTL = time.Duration(ttlMs) * time.Millisecond
	return s, nil
}

// shardOf finds the shard of a show, turning an unknown show into a
// business answer.
func (s *Service) shardOf(ctx context.Context, showID int64) (*pg.Pool, error) {
	pool, err := s.router.ForShow(ctx, showID)
	if errors.Is(err, shard.ErrUnknownShow) {
		return nil, fault.New(fault.ShowNotFound, "show %d not found", showID)
	}
	return pool, err
}

// shardOfID finds the shard of a hold or order id; a malformed or unknown id
// is not found.
func (s *Service) shardOfID(ctx context.Context, what, id string) (*pg.Pool, error) {
	pool, _, err := s.router.ForID(ctx, id)
	if errors.Is(err, shard.ErrBadID) || errors.Is(err, shard.ErrUnknownShow) {
		return nil, notFound(what, id)
	}
	return pool, err
}

const holdColumns = `h.hold_id, h.show_id, h.user_id, h.seats, h.ga_area, h.quantity, h.amount_minor,
	h.currency, h.status, h.expires_at, h.created_at, coalesce(o.order_id, ''), coalesce(h.partner_id, 0), h.women_seats,
	h.from_stop, h.to_stop, h.boarding_counter, h.dropping_counter`

func scanHold(row pgx.Row) (Hold, error) {
	var h Hold
	err := row.Scan(&h.ID, &h.ShowID, &h.UserID, &h.Seats, &h.GAArea, &h.Quantity, &h.AmountMinor,
		&h.Currency, &h.Status, &h.ExpiresAt, &h.CreatedAt, &h.OrderID, &h.PartnerID, &h.WomenSeats,
		&h.Journey.From, &h.Journey.To, &h.Journey.Boarding, &h.Journey.Dropping)
	h.ExpiresAt, h.CreatedAt = h.ExpiresAt.UTC(), h.CreatedAt.UTC()
	h.WomenSeats = nilIfEmpty(h.WomenSeats)
	return h, err
}

func getHold(ctx context.Context, q pgx.Tx, holdID string) (Hold, error) {
	h, err := scanHold(q.QueryRow(ctx, `
		SELECT `+holdColumns+` FROM holds h LEFT JOIN orders o ON o.hold_id = h.hold_id
		WHERE h.hold_id = $1`, holdID))
	found, err := pg.Found(err)
	if err != nil {
		return h, fmt.Errorf("read hold %s: %w", holdID, err)
	}
	if !found {
		return h, notFound("hold", holdID)
	}
	return h, nil
}

// mayRead tells whether the caller may see something of a show owned by
// owner: their own, or any of a show whose organisation they manage (gate
// staff only scan), or anything for admins.
func (s *Service) mayRead(ctx context.Context, c Caller, owner, orgID string) (bool, error) {
	if c.Admin || c.UserID == owner {
		return true, nil
	}
	if !c.Operator {
		return false, nil
	}
	return s.members.HasRole(ctx, orgID, c.UserID, catalog.RoleManager)
}

// seatmapVersion is the version of a show's seat map: the transaction id
// of the show's newest outbox event that tx sees (decision 0130). Every
// change of a seat or GA place writes an event in its own transaction, and
// the seat-map projector applies a shard's events in (xid, id) order with
// no gaps, so a read model whose version is at least this one holds every
// change this transaction saw. One index lookup, not a sum over
// the show's rows, and no per-show counter row (a hot row, decision 0005).
func seatmapVersion(ctx context.Context, q pgx.Tx, showID int64) (int64, error) {
	v, err := outbox.LastXID(ctx, q, showID)
	if err != nil {
		return 0, fmt.Errorf("seat map version of show %d: %w", showID, err)
	}
	return v, nil
}
