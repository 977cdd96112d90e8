package catalog

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/pg"
)

// Waiting-room defaults.
const (
	DefaultMinAdmissionRate = 10
	// DefaultMaxAdmissionRate is the seed's admission rate A.
	DefaultMaxAdmissionRate = 400
	// DefaultAdmittedTTL is how long an admitted token is good for.
	DefaultAdmittedTTL = 15 * time.Minute
	// DefaultWaitingRoomWindow is how long after the opening the room stays
	// in front of the sale unless the show starts sooner.
	DefaultWaitingRoomWindow = 2 * time.Hour
)

// WaitingRoom is a show's virtual queue. It opens at the show's
// OnSaleAt; the queue itself lives in Redis (package waitingroom), this is
// its durable configuration. Several shows may share one: a sale, named by
// its first show, with one line (decision 0034).
type WaitingRoom struct {
	// SaleID is the sale the show sells through: its own id when the room
	// is its own. On create, non-zero joins that sale's room.
	SaleID int64 `json:"sale_id"`
	// EndsAt ends the window: afterwards CreateHold needs no Queue-Token.
	EndsAt time.Time `json:"ends_at"`
	// MinRate and MaxRate bound the admission rate A, in users per second.
	MinRate int `json:"min_rate"`
	MaxRate int `json:"max_rate"`
	// AdmittedTTL is how long an admitted token is good for.
	AdmittedTTL time.Duration `json:"admitted_ttl"`
}

// completeWaitingRoom fills the waiting room's defaults and checks it
// against the show.
func completeWaitingRoom(s *Show, now time.Time) error {
	w := s.WaitingRoom
	if w == nil || w.SaleID != 0 {
		return nil // a show joining a sale takes its settings (joinSale)
	}
	if w.MinRate == 0 {
		w.MinRate = DefaultMinAdmissionRate
	}
	if w.MaxRate == 0 {
		w.MaxRate = max(DefaultMaxAdmissionRate, w.MinRate)
	}
	if w.MinRate > w.MaxRate {
		return &fault.Error{Reason: fault.ShowInvalid, Field: "waiting_room.min_admission_rate", Message: "must not exceed max_admission_rate"}
	}
	if w.AdmittedTTL == 0 {
		w.AdmittedTTL = DefaultAdmittedTTL
	}
	if w.EndsAt.IsZero() {
		w.EndsAt = s.OnSaleAt.Add(DefaultWaitingRoomWindow)
		if s.StartsAt.Before(w.EndsAt) {
			w.EndsAt = s.StartsAt
		}
	}
	w.EndsAt = w.EndsAt.UTC().Truncate(time.Microsecond)
	if !w.EndsAt.After(s.OnSaleAt) {
		return &fault.Error{Reason: fault.ShowInvalid, Field: "waiting_room.ends_at", Message: "the window must end after sales open (on_sale_at)"}
	}
	return nil
}

// joinSale checks a show that asks to sell through another show's room
// (a sale of several shows): the room must exist, the caller must manage
// it (a manager of its organisation), and the show goes on sale when the room opens (by default it does).
// It names the sale by its first show even when another of its shows was
// given. Everything it reads but the membership never changes, so a
// replayed request gets the same answer.
func (s *Service) joinSale(ctx context.Context, show *Show, caller string, admin bool) error {
	w := show.WaitingRoom
	if w == nil || w.SaleID == 0 {
		return nil
	}
	if w.MinRate != 0 || w.MaxRate != 0 || w.AdmittedTTL != 0 || !w.EndsAt.IsZero() {
		return &fault.Error{Reason: fault.ShowInvalid, Field: "waiting_room.sale_id", Message: "a show joining a sale takes the sale's settings: " +
			"leave min_admission_rate, max_admission_rate, admitted_token_ttl and ends_at unset"}
	}
	var (
		saleID  int64
		opensAt time.Time
		org     string
	)
	err := s.router.Catalog().QueryRow(ctx, `
		SELECT w.show_id, w.opens_at, coalesce(s.organization_id, '')
		FROM sale_shows m JOIN waiting_rooms w ON w.show_id = m.sale_id JOIN shows s ON s.show_id = w.show_id
		WHERE m.show_id = $1`, w.SaleID).Scan(&saleID, &opensAt, &org)
	found, err := pg.Found(err)
	if err != nil {
		return fmt.Errorf("read sale %d: %w", w.SaleID, err)
	}
	if !found {
		return &fault.Error{Reason: fault.ShowInvalid, Field: "waiting_room.sale_id", Message: fmt.Sprintf("show %d has no waiting room to share", w.SaleID)}
	}
	// The sale is its first show's organisation's: its managers add shows
	// to it (decision 0075), whoever created or is named on it.
	if !admin {
		ok, err := s.HasRole(ctx, org, caller, RoleManager)
		if err != nil {
			return err
		}
		if !ok {
			return ErrNotYourSale
		}
	}
	opensAt = opensAt.UTC()
	if show.OnSaleAt.IsZero() {
		show.OnSaleAt = opensAt
	}
	if !show.OnSaleAt.Equal(opensAt) {
		return &fault.Error{Reason: fault.ShowInvalid, Field: "on_sale_at", Message: fmt.Sprintf(
			"a show of sale %d goes on sale when its waiting room opens, at %s", saleID, opensAt.Format(time.RFC3339Nano))}
	}
	w.SaleID = saleID
	return nil
}

// insertWaitingRoom writes a show's own room, or adds the show to the sale
// it joins while that sale's window is open; either way it fills in the
// room's settings as stored.
func insertWaitingRoom(ctx context.Context, tx pgx.Tx, s Show) error {
	w := s.WaitingRoom
	if w == nil {
		return nil
	}
	if w.SaleID == 0 {
		w.SaleID = s.ID
		_, err := tx.Exec(ctx, `
			WITH room AS (
				INSERT INTO waiting_rooms (show_id, opens_at, ends_at, min_rate, max_rate, admitted_ttl_ms, updated_at, updated_by)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
				RETURNING show_id
			)
			INSERT INTO sale_shows (show_id, sale_id) SELECT show_id, show_id FROM room`,
			s.ID, s.OnSaleAt, w.EndsAt, w.MinRate, w.MaxRate, w.AdmittedTTL.Milliseconds(), s.CreatedAt, s.CreatedBy)
		if err != nil {
			return fmt.Errorf("insert waiting room of show %d: %w", s.ID, err)
		}
		return nil
	}
	// FOR SHARE: an UpdateSale ending the window waits for this show to
	// join (or this waits for it and sees the window closed).
	var ttlMs int64
	err := tx.QueryRow(ctx, `
		WITH room AS (
			SELECT show_id, ends_at, min_rate, max_rate, admitted_ttl_ms FROM waiting_rooms
			WHERE show_id = $2 AND ends_at > $3 FOR SHARE
		), joined AS (
			INSERT INTO sale_shows (show_id, sale_id) SELECT $1, show_id FROM room
		)
		SELECT ends_at, min_rate, max_rate, admitted_ttl_ms FROM room`,
		s.ID, w.SaleID, s.CreatedAt).Scan(&w.EndsAt, &w.MinRate, &w.MaxRate, &ttlMs)
	found, err := pg.Found(err)
	if err != nil {
		return fmt.Errorf("add show %d to sale %d: %w", s.ID, w.SaleID, err)
	}
	if !found {
		return &fault.Error{Reason: fault.ShowInvalid, Field: "waiting_room.sale_id", Message: fmt.Sprintf("the waiting room of sale %d has closed", w.SaleID)}
	}
	w.EndsAt, w.AdmittedTTL = w.EndsAt.UTC(), time.Duration(ttlMs)*time.Millisecond
	return nil
}

// waitingRooms reads the waiting rooms shows sell through, by show id; a
// show without one is missing from the map.
func (s *Service) waitingRooms(ctx context.Context, showIDs ...int64) (map[int64]*WaitingRoom, error) {
	rows, err := s.router.Catalog().Query(ctx, `
		SELECT m.show_id, m.sale_id, w.ends_at, w.min_rate, w.max_rate, w.admitted_ttl_ms
		FROM sale_shows m JOIN waiting_rooms w ON w.show_id = m.sale_id WHERE m.show_id = ANY($1)`, showIDs)
	if err != nil {
		return nil, fmt.Errorf("read waiting rooms: %w", err)
	}
	defer rows.Close()
	rooms := map[int64]*WaitingRoom{}
	for rows.Next() {
		var (
			id    int64
			w     WaitingRoom
			ttlMs int64
		)
		if err := rows.Scan(&id, &w.SaleID, &w.EndsAt, &w.MinRate, &w.MaxRate, &ttlMs); err != nil {
			return nil, fmt.Errorf("read waiting rooms: %w", err)
		}
		w.EndsAt, w.AdmittedTTL = w.EndsAt.UTC(), time.Duration(ttlMs)*time.Millisecond
		rooms[id] = &w
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read waiting rooms: %w", err)
	}
	return rooms, nil
}

// SaleRoom is a waiting room as package waitingroom runs it: the settings
// of a sale's room and the shows that sell through it.
type SaleRoom struct {
	// SaleID names the room: its first show's id, whose settings it has.
	SaleID int64
	// ShowIDs are the shows that sell through the room, SaleID first.
	ShowIDs []int64
	// OpensAt is the shows' on_sale_at.
	OpensAt time.Time
	// EndsAt ends the window.
	EndsAt time.Time
	// MinRate and MaxRate bound the admission rate (users/s, R-9.4).
	MinRate, MaxRate int
	// AdmittedTTL is how long an admission lasts.
	AdmittedTTL time.Duration
	Paused      bool
	// OrganizationID is the first show's organisation; empty: admins only.
	OrganizationID string
}

// saleRoomQuery selects rooms with their shows; the caller adds the WHERE
// (aliases: w the room, s its first show).
const saleRoomQuery = `
	SELECT w.show_id, w.opens_at, w.ends_at, w.min_rate, w.max_rate, w.admitted_ttl_ms, w.paused,
	       coalesce(s.organization_id, ''),
	       ARRAY(SELECT m.show_id FROM sale_shows m WHERE m.sale_id = w.show_id
	             ORDER BY m.show_id <> w.show_id, m.show_id)
	FROM waiting_rooms w JOIN shows s USING (show_id)`

func scanSaleRoom(row pgx.Row) (SaleRoom, error) {
	var (
		r     SaleRoom
		ttlMs int64
	)
	err := row.Scan(&r.SaleID, &r.OpensAt, &r.EndsAt, &r.MinRate, &r.MaxRate, &ttlMs, &r.Paused, &r.OrganizationID, &r.ShowIDs)
	r.AdmittedTTL = time.Duration(ttlMs) * time.Millisecond
	r.OpensAt, r.EndsAt = r.OpensAt.UTC(), r.EndsAt.UTC()
	return r, err
}

// SaleRoom returns the room a show sells through; ok is false when it has
// none.
func (s *Service) SaleRoom(ctx context.Context, showID int64) (r SaleRoom, ok bool, err error) {
	r, err = scanSaleRoom(s.router.Catalog().QueryRow(ctx, saleRoomQuery+`
		WHERE w.show_id = (SELECT sale_id FROM sale_shows WHERE show_id = $1)`, showID))
	found, err := pg.Found(err)
	if err != nil {
		return SaleRoom{}, false, fmt.Errorf("read waiting room of show %d: %w", showID, err)
	}
	return r, found, nil
}

// OpenSaleRooms lists the rooms whose window has not ended at now, by sale.
func (s *Service) OpenSaleRooms(ctx context.Context, now time.Time) ([]SaleRoom, error) {
	rows, err := s.router.Catalog().Query(ctx, saleRoomQuery+`
		WHERE w.ends_at > $1 ORDER BY w.show_id`, now)
	if err != nil {
		return nil, fmt.Errorf("list open waiting rooms: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (SaleRoom, error) { return scanSaleRoom(r) })
}

// RoomedShows lists every show that sells through a room, with the newest
// show id at the time (0: no show yet), in one query (decision 0267): a show
// joins a room only when it is created, so a show the list leaves out and
// no newer than newest has none.
func (s *Service) RoomedShows(ctx context.Context) (newest int64, showIDs []int64, err error) {
	err = s.router.Catalog().QueryRow(ctx, `
		SELECT coalesce((SELECT max(show_id) FROM shows), 0), ARRAY(SELECT show_id FROM sale_shows)`).
		Scan(&newest, &showIDs)
	if err != nil {
		return 0, nil, fmt.Errorf("list the shows with a waiting room: %w", err)
	}
	return newest, showIDs, nil
}

// RoomChange is an operator's change of a room's settings; nil fields stay.
type RoomChange struct {
	Paused           *bool
	MinRate, MaxRate *int
	EndsAt           *time.Time
}

// UpdateSaleRoom changes the settings of sale's room, by whom at now. A
// sale without a room is ErrNotFound; a minimum rate above the maximum (the
// table's check, for a change racing another) ADMISSION_RATES_INVALID.
func (s *Service) UpdateSaleRoom(ctx context.Context, saleID int64, c RoomChange, by string, now time.Time) error {
	tag, err := s.router.Catalog().Exec(ctx, `
		UPDATE waiting_rooms SET paused = coalesce($2, paused), min_rate = coalesce($3, min_rate),
		       max_rate = coalesce($4, max_rate), ends_at = coalesce($5, ends_at), updated_at = $6, updated_by = $7
		WHERE show_id = $1`, saleID, c.Paused, c.MinRate, c.MaxRate, c.EndsAt, now, by)
	if pg.IsCheckViolation(err) {
		return fault.OnField(fault.AdmissionRatesInvalid, "min_admission_rate", "min_admission_rate must not exceed max_admission_rate")
	}
	if err != nil {
		return fmt.Errorf("update waiting room of sale %d: %w", saleID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("waiting room of sale %d: %w", saleID, ErrNotFound)
	}
	return nil
}
