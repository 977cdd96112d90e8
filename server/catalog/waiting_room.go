package catalog

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
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
// its durable configuration.
type WaitingRoom struct {
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
	if w == nil {
		return nil
	}
	if w.MinRate == 0 {
		w.MinRate = DefaultMinAdmissionRate
	}
	if w.MaxRate == 0 {
		w.MaxRate = max(DefaultMaxAdmissionRate, w.MinRate)
	}
	if w.MinRate > w.MaxRate {
		return &InvalidError{Field: "waiting_room.min_admission_rate", Message: "must not exceed max_admission_rate"}
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
		return &InvalidError{Field: "waiting_room.ends_at", Message: "the window must end after sales open (on_sale_at)"}
	}
	return nil
}

func insertWaitingRoom(ctx context.Context, tx pgx.Tx, s Show) error {
	w := s.WaitingRoom
	if w == nil {
		return nil
	}
	_, err := tx.Exec(ctx, `
		INSERT INTO waiting_rooms (show_id, opens_at, ends_at, min_rate, max_rate, admitted_ttl_ms, updated_at, updated_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		s.ID, s.OnSaleAt, w.EndsAt, w.MinRate, w.MaxRate, w.AdmittedTTL.Milliseconds(), s.CreatedAt, s.CreatedBy)
	if err != nil {
		return fmt.Errorf("insert waiting room of show %d: %w", s.ID, err)
	}
	return nil
}

// waitingRooms reads the waiting rooms of shows, by show id; a show
// without one is missing from the map.
func (s *Service) waitingRooms(ctx context.Context, showIDs ...int64) (map[int64]*WaitingRoom, error) {
	rows, err := s.router.Catalog().Query(ctx, `
		SELECT show_id, ends_at, min_rate, max_rate, admitted_ttl_ms FROM waiting_rooms WHERE show_id = ANY($1)`, showIDs)
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
		if err := rows.Scan(&id, &w.EndsAt, &w.MinRate, &w.MaxRate, &ttlMs); err != nil {
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
