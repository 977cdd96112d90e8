package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/page"
	"github.com/seatghor/seatghor/server/pg"
)

const showColumns = `show_id, shard, kind, title, operator, origin, destination, venue, starts_at, on_sale_at,
	currency, layout, hold_ttl_ms, payment_extension_ms, max_seats_per_account, max_seats_per_hold,
	seat_count, created_by, created_at, commission_bps, cancellation_fee_bps, coalesce(organization_id, ''),
	coalesce(origin_place_id, ''), coalesce(destination_place_id, ''), time_zone, stops, fares, coalesce(route_id, ''),
	coalesce(layout_template_id, ''), title_bn, venue_bn, operator_bn, cancelled_at, cancel_reason,
	scheduled_starts_at, reschedule_reason, walk_in_reserve_seats, walk_in_reserve_ms, published_at, departed_at, arrived_at`

// showLayout is what shows.layout holds: the sections and GA areas, and
// how many of the places never sell (absent before issue 24: none).
type showLayout struct {
	Sections []Section `json:"sections"`
	GAAreas  []GAArea  `json:"ga_areas"`
	Blocked  int       `json:"blocked_seats,omitempty"`
}

func scanShow(row pgx.Row) (Show, error) {
	var (
		s               Show
		kind            int16
		layout          []byte
		ttlMs, extendMs int64
		reserveMs       int64
	)
	err := row.Scan(&s.ID, &s.Shard, &kind, &s.Title, &s.Operator, &s.Origin, &s.Destination, &s.Venue,
		&s.StartsAt, &s.OnSaleAt, &s.Currency, &layout, &ttlMs, &extendMs, &s.MaxSeatsPerAccount,
		&s.MaxSeatsPerHold, &s.SeatCount, &s.CreatedBy, &s.CreatedAt, &s.CommissionBps, &s.CancellationFeeBps,
		&s.OrganizationID, &s.OriginPlaceID, &s.DestinationPlaceID, &s.TimeZone, &s.Stops, &s.Fares, &s.RouteID,
		&s.LayoutTemplateID, &s.TitleBn, &s.VenueBn, &s.OperatorBn, &s.CancelledAt, &s.CancelReason,
		&s.ScheduledStartsAt, &s.RescheduleReason, &s.WalkInReserveSeats, &reserveMs, &s.PublishedAt, &s.DepartedAt, &s.ArrivedAt)
	if err != nil {
		return s, err
	}
	if len(s.Stops) == 0 {
		s.Stops = nil // '[]': none, as CreateShow answered
	}
	if len(s.Fares) == 0 {
		s.Fares = nil
	}
	s.Kind = catalogv1.ShowKind(kind)
	s.HoldTTL, s.PaymentExtension = time.Duration(ttlMs)*time.Millisecond, time.Duration(extendMs)*time.Millisecond
	s.WalkInReserve = time.Duration(reserveMs) * time.Millisecond
	s.StartsAt, s.OnSaleAt, s.CreatedAt = s.StartsAt.UTC(), s.OnSaleAt.UTC(), s.CreatedAt.UTC()
	for _, t := range []**time.Time{&s.CancelledAt, &s.ScheduledStartsAt, &s.PublishedAt, &s.DepartedAt, &s.ArrivedAt} {
		if *t != nil {
			at := (*t).UTC()
			*t = &at
		}
	}
	var l showLayout
	if err := json.Unmarshal(layout, &l); err != nil {
		return s, fmt.Errorf("decode layout of show %d: %w", s.ID, err)
	}
	s.Sections, s.GAAreas, s.BlockedSeats = l.Sections, l.GAAreas, l.Blocked
	return s, nil
}

// GetShow returns a show, with the GA places left read from its shard.
func (s *Service) GetShow(ctx context.Context, showID int64) (Show, error) {
	show, err := scanShow(s.router.Catalog().QueryRow(ctx, `SELECT `+showColumns+` FROM shows WHERE show_id = $1`, showID))
	found, err := pg.Found(err)
	if err != nil {
		return Show{}, fmt.Errorf("read show %d: %w", showID, err)
	}
	if !found {
		return Show{}, fmt.Errorf("show %d: %w", showID, ErrNotFound)
	}
	shows := []Show{show}
	if err := s.attachWaitingRooms(ctx, shows); err != nil {
		return Show{}, err
	}
	show = shows[0]
	if len(show.GAAreas) == 0 {
		return show, nil
	}
	pool, err := s.router.Shard(show.Shard)
	if err != nil {
		return Show{}, err
	}
	left, err := s.inventory.GAPlacesLeft(ctx, pool, showID)
	if err != nil {
		return Show{}, err
	}
	for i := range show.GAAreas {
		if n, ok := left[show.GAAreas[i].Name]; ok {
			show.GAAreas[i].Remaining = n
		}
	}
	return show, nil
}

// ShowListings returns the shows of ids that exist, as GetShow does but
// without their waiting rooms and GA places left: what a trip-index document
// is made of (FromShow), for a whole batch in one query (decision 0246).
func (s *Service) ShowListings(ctx context.Context, ids []int64) (map[int64]Show, error) {
	rows, err := s.router.Catalog().Query(ctx, `SELECT `+showColumns+` FROM shows WHERE show_id = ANY($1)`, ids)
	if err != nil {
		return nil, fmt.Errorf("read %d shows: %w", len(ids), err)
	}
	defer rows.Close()
	out := make(map[int64]Show, len(ids))
	for rows.Next() {
		show, err := scanShow(rows)
		if err != nil {
			return nil, fmt.Errorf("read %d shows: %w", len(ids), err)
		}
		out[show.ID] = show
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read %d shows: %w", len(ids), err)
	}
	return out, nil
}

// ShowFilter narrows ListShows; its zero value lists every show.
type ShowFilter struct {
	// Kind: only shows of this kind, when set.
	Kind catalogv1.ShowKind
	// StartsFrom: only shows that start at or after it, when set.
	StartsFrom time.Time
	// StaffOf: only the shows of the organisations this user is a manager
	// or gate staff of (whose tickets they check in), when set.
	StaffOf string
	// OrganizationID: only its shows, when set.
	OrganizationID string
	// Drafts: the drafts too (decision 0455); else only published shows.
	Drafts bool
}

// ListShows pages through shows by start time, those of f.
func (s *Service) ListShows(ctx context.Context, pageSize int, pageToken string, f ShowFilter) ([]Show, string, error) {
	if pageSize <= 0 {
		pageSize = 50
	}
	after, _, err := page.Decode(pageToken)
	if err != nil {
		return nil, "", &fault.Error{Reason: fault.ShowInvalid, Field: "page_token", Message: page.ErrBadToken.Message}
	}
	afterID := int64(0)
	if after.ID != "" {
		if afterID, err = strconv.ParseInt(after.ID, 10, 64); err != nil {
			return nil, "", &fault.Error{Reason: fault.ShowInvalid, Field: "page_token", Message: page.ErrBadToken.Message}
		}
	}
	var from *time.Time
	if !f.StartsFrom.IsZero() {
		from = &f.StartsFrom
	}
	rows, err := s.router.Catalog().Query(ctx, `
		SELECT `+showColumns+` FROM shows
		WHERE (starts_at, show_id) > ($1, $2) AND ($3 = 0 OR kind = $3)
		  AND ($5::timestamptz IS NULL OR starts_at >= $5)
		  AND ($6 = '' OR organization_id IN (
		    SELECT organization_id FROM memberships WHERE user_id = $6 AND role = ANY($7)))
		  AND ($8 = '' OR organization_id = $8)
		  AND ($9 OR published_at IS NOT NULL)
		ORDER BY starts_at, show_id LIMIT $4`, after.At, afterID, int16(f.Kind), pageSize+1,
		from, f.StaffOf, []string{string(RoleManager), string(RoleGate), string(RoleCounter)}, f.OrganizationID, f.Drafts)
	if err != nil {
		return nil, "", fmt.Errorf("list shows: %w", err)
	}
	shows, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Show, error) { return scanShow(r) })
	if err != nil {
		return nil, "", fmt.Errorf("list shows: %w", err)
	}
	if err := s.attachWaitingRooms(ctx, shows); err != nil {
		return nil, "", err
	}
	if len(shows) <= pageSize {
		return shows, "", nil
	}
	last := shows[pageSize-1]
	return shows[:pageSize], page.Encode(page.Cursor{At: last.StartsAt, ID: strconv.FormatInt(last.ID, 10)}), nil
}

// readPlaces reads a show's places from its catalog row in tx; nil for a
// show of straight rows of its sections.
func readPlaces(ctx context.Context, tx pgx.Tx, showID int64) (*Layout, error) {
	var raw []byte
	if err := tx.QueryRow(ctx, `SELECT places FROM shows WHERE show_id = $1`, showID).Scan(&raw); err != nil {
		return nil, fmt.Errorf("read places of show %d: %w", showID, err)
	}
	if raw == nil {
		return nil, nil
	}
	places := new(Layout)
	if err := json.Unmarshal(raw, places); err != nil {
		return nil, fmt.Errorf("decode places of show %d: %w", showID, err)
	}
	return places, nil
}

// withWaitingRoom is show with its waiting room filled in.
func (s *Service) withWaitingRoom(ctx context.Context, show Show) (Show, error) {
	one := []Show{show}
	err := s.attachWaitingRooms(ctx, one)
	return one[0], err
}

// attachWaitingRooms fills in the waiting rooms of a page of shows, in one
// query.
func (s *Service) attachWaitingRooms(ctx context.Context, shows []Show) error {
	ids := make([]int64, len(shows))
	for i, sh := range shows {
		ids[i] = sh.ID
	}
	rooms, err := s.waitingRooms(ctx, ids...)
	if err != nil {
		return err
	}
	for i := range shows {
		shows[i].WaitingRoom = rooms[shows[i].ID]
	}
	return nil
}
