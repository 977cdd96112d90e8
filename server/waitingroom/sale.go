package waitingroom

import (
	"context"
	"math"
	"time"

	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/fault"
)

// Sale is a waiting room as its operators see it.
type Sale struct {
	Room
	// ShowID is the show asked about (any of Room.ShowIDs).
	ShowID int64
	State  State
	// Rate is the admission rate A now in force (users/s).
	Rate float64
	// AdmissionNumber is X.
	AdmissionNumber int64
	// Joined, Waiting and Admitted count places.
	Joined, Waiting, Admitted int64
	// EstimatedWait is for the last place in line; -1 when admission stopped.
	EstimatedWait time.Duration
	Available     int64
	SoldOut       bool
	HoldP99       time.Duration
	HoldErrorRate float64
	UpdatedAt     time.Time
}

// Caller is who asks for a sale.
type Caller struct {
	UserID string
	Admin  bool
}

// mayManage tells whether the caller runs the sale: an admin, or a manager
// of its first show's organisation (gate staff do not).
func (s *Service) mayManage(ctx context.Context, c Caller, r *Room) (bool, error) {
	if c.Admin {
		return true, nil
	}
	return s.members.HasRole(ctx, r.OrganizationID, c.UserID, catalog.RoleManager)
}

// GetSale returns the sale a show sells through to its operators and
// admins.
func (s *Service) GetSale(ctx context.Context, c Caller, showID int64) (Sale, error) {
	room, err := s.rooms.get(ctx, showID)
	if err != nil {
		return Sale{}, err
	}
	if room == nil {
		return Sale{}, fault.New(fault.WaitingRoomNotFound, "show %d has no waiting room", showID)
	}
	if ok, err := s.mayManage(ctx, c, room); err != nil {
		return Sale{}, err
	} else if !ok {
		return Sale{}, fault.New(fault.SaleForbidden, "only the show's operators and admins see its sale")
	}
	return s.sale(ctx, *room, showID)
}

// UpdateSale changes a sale's settings: pause or resume, rate limits, the
// opening (before it comes) and the window's end. For a sale of several shows any of them names it.
func (s *Service) UpdateSale(ctx context.Context, c Caller, showID int64, u Update) (Sale, error) {
	room, err := s.rooms.get(ctx, showID)
	if err != nil {
		return Sale{}, err
	}
	if room == nil {
		return Sale{}, fault.New(fault.WaitingRoomNotFound, "show %d has no waiting room", showID)
	}
	if ok, err := s.mayManage(ctx, c, room); err != nil {
		return Sale{}, err
	} else if !ok {
		return Sale{}, fault.New(fault.SaleForbidden, "only the show's operators and admins change its sale")
	}
	now := s.now()
	if err := u.check(room, now); err != nil {
		return Sale{}, err
	}
	if u.OpensAt != nil {
		if err := s.openings.MoveOpening(ctx, room.SaleID, *u.OpensAt, c.UserID); err != nil {
			return Sale{}, err
		}
	}
	if room, err = s.rooms.update(ctx, room, u, c.UserID, now); err != nil {
		return Sale{}, err
	}
	// Polls see a pause, a new end and a new opening at once, not at the
	// next tick.
	k := s.keys(room.SaleID)
	if err := s.rdb.HSet(ctx, k.live, "paused", b2i(room.Paused), "ends", room.EndsAt.UnixMilli()).Err(); err != nil {
		return Sale{}, unavailable(err)
	}
	if err := openingScript.Run(ctx, s.rdb, []string{k.live}, room.OpensAt.UnixMilli()).Err(); err != nil {
		return Sale{}, unavailable(err)
	}
	if room.Paused {
		if err := s.rdb.HSet(ctx, k.live, "eff", 0).Err(); err != nil {
			return Sale{}, unavailable(err)
		}
	}
	return s.sale(ctx, *room, showID)
}

func (s *Service) sale(ctx context.Context, r Room, showID int64) (Sale, error) {
	k := s.keys(r.SaleID)
	p := s.rdb.Pipeline()
	f := p.HMGet(ctx, k.live, "drawn", "n0", "late", "x", "eff", "soldout", "avail", "p99", "errs", "tick")
	card := p.ZCard(ctx, k.lottery)
	if _, err := p.Exec(ctx); err != nil {
		return Sale{}, unavailable(err)
	}
	v := f.Val()
	now := s.now()
	sale := Sale{Room: r, ShowID: showID, Rate: toFloat(v[4]), SoldOut: toInt(v[5]) == 1, Available: toInt(v[6]),
		HoldP99: time.Duration(toInt(v[7])) * time.Millisecond, HoldErrorRate: toFloat(v[8]), EstimatedWait: -1}
	if tick := toInt(v[9]); tick > 0 {
		sale.UpdatedAt = time.UnixMilli(tick).UTC()
	}
	drawn := toInt(v[0]) > 0
	sale.AdmissionNumber = int64(math.Floor(toFloat(v[3])))
	if drawn {
		sale.Joined = toInt(v[1]) + toInt(v[2])
	} else {
		sale.Joined = card.Val()
	}
	sale.Admitted = min(sale.AdmissionNumber, sale.Joined)
	sale.Waiting = sale.Joined - sale.Admitted
	switch {
	case !r.Active(now):
		sale.State = StateEnded
	case !drawn:
		sale.State = StateScheduled
	case r.Paused:
		sale.State = StatePaused
	case sale.SoldOut:
		sale.State = StateSoldOut
	default:
		sale.State = StateAdmitting
	}
	if sale.State == StateAdmitting && sale.Rate > 0 {
		sale.EstimatedWait = time.Duration(float64(sale.Waiting) / sale.Rate * float64(time.Second))
	}
	return sale, nil
}
