package waitingroom

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/seatghor/seatghor/server/fault"
)

// Status is where one caller stands in the queue of one sale.
type Status struct {
	// SaleID is the room; ShowID the show joined through.
	SaleID, ShowID int64
	Token          string
	TokenExpiresAt time.Time
	// Place is 1-based; 0 until the lottery is drawn.
	Place   int64
	State   State
	OpensAt time.Time
	// AdmissionNumber is X, rounded down.
	AdmissionNumber   int64
	Admitted          bool
	AdmittedToken     string
	AdmittedExpiresAt time.Time
	// EstimatedWait is -1 when unknown (admission stopped) and 0 when
	// admitted.
	EstimatedWait time.Duration
	PollAfter     time.Duration
	SoldOut       bool
	Message       string
}

// Join puts subject in the queue of the sale a show sells through
// and says where it stands. Joining again, through any show of the sale,
// gives the same place: a sale of several shows has one line.
func (s *Service) Join(ctx context.Context, subject string, showID int64) (Status, error) {
	now := s.now()
	room, err := s.rooms.cachedGet(ctx, showID)
	if err != nil {
		return Status{}, err
	}
	if room == nil || !room.Active(now) {
		if room == nil {
			// A show without a room (or no show at all: CreateHold says
			// which) is a calm sale: admitted at once.
			return s.unqueued(showID, subject, now, StateNoQueue, 0), nil
		}
		return s.unqueued(showID, subject, now, StateEnded, room.AdmittedTTL), nil
	}
	t := ticket{SaleID: room.SaleID, ShowID: showID, Subject: subject, OpensAt: room.OpensAt.UnixMilli(),
		EndsAt: room.EndsAt.UnixMilli(), AdmittedTTL: room.AdmittedTTL.Milliseconds()}
	// The queue's keys outlive the window by a day, for the operators' view.
	v, err := s.runVisit(ctx, room.SaleID, subject, now, room.OpensAt, true, room.AdmittedTTL,
		room.EndsAt.Sub(now)+24*time.Hour)
	if err != nil {
		return Status{}, err
	}
	return s.status(t, v, now), nil
}

// GetStatus reads where a queue token stands, from Redis only. The
// token must be the caller's.
func (s *Service) GetStatus(ctx context.Context, subject, token string) (Status, error) {
	now := s.now()
	t, err := s.sign.open(queuePrefix, token, now)
	if err != nil {
		return Status{}, tokenError("queue token", err)
	}
	if t.Subject != subject {
		return Status{}, fault.New(fault.QueueTokenWrongCaller, "this queue token belongs to another caller")
	}
	v, err := s.runVisit(ctx, t.SaleID, subject, now, time.UnixMilli(t.OpensAt), false,
		time.Duration(t.AdmittedTTL)*time.Millisecond, 0)
	if err != nil {
		return Status{}, err
	}
	if v.place < 0 {
		return Status{}, fault.New(fault.NotInLine,
			"there is no place in the queue of sale %d for this token: join again", t.SaleID)
	}
	return s.status(t, v, now), nil
}

// tokenError explains why a token was refused.
func tokenError(what string, err error) error {
	switch {
	case errors.Is(err, errExpired):
		return fault.New(fault.QueueTokenExpired, "the %s has expired", what)
	case errors.Is(err, errForged):
		return fault.New(fault.QueueTokenInvalid, "the %s is not valid (bad signature)", what)
	default:
		return fault.New(fault.QueueTokenInvalid, "the %s is malformed", what)
	}
}

// unqueued is the answer for a show whose holds need no queue: admitted at
// once, with an admitted token anyway so clients can always send one.
func (s *Service) unqueued(showID int64, subject string, now time.Time, state State, ttl time.Duration) Status {
	if ttl == 0 {
		ttl = 15 * time.Minute
	}
	adm := ticket{SaleID: showID, ShowID: showID, Subject: subject, IssuedAt: now.UnixMilli(), ExpiresAt: now.Add(ttl).UnixMilli()}
	q := adm
	q.ExpiresAt = now.Add(s.cfg.TokenTTL).UnixMilli()
	msg := "This sale has no queue: go ahead."
	if state == StateEnded {
		msg = "The waiting room has closed: go ahead, no queue token is needed."
	}
	return Status{SaleID: showID, ShowID: showID, Token: s.sign.mint(queuePrefix, q), TokenExpiresAt: time.UnixMilli(q.ExpiresAt),
		State: state, Admitted: true, AdmittedToken: s.sign.mint(admittedPrefix, adm),
		AdmittedExpiresAt: time.UnixMilli(adm.ExpiresAt), PollAfter: s.cfg.PollMax, Message: msg}
}

// status turns a visit into the caller's answer and renews the queue token.
func (s *Service) status(t ticket, v visit, now time.Time) Status {
	if v.endsAt == 0 { // no tick yet: the window as the token knows it
		v.endsAt = t.EndsAt
	}
	t.OpensAt = cmp.Or(v.opensAt, t.OpensAt) // an operator may have moved it
	opens, ends := time.UnixMilli(t.OpensAt).UTC(), time.UnixMilli(v.endsAt).UTC()
	ttl := time.Duration(t.AdmittedTTL) * time.Millisecond
	x := int64(math.Floor(v.x))
	st := Status{SaleID: t.SaleID, ShowID: cmp.Or(t.ShowID, t.SaleID), Place: max(v.place, 0), OpensAt: opens, AdmissionNumber: x, SoldOut: v.soldOut,
		EstimatedWait: -1}
	switch {
	case !now.Before(ends):
		st.State = StateEnded
	case !v.drawn:
		st.State = StateScheduled
	case v.paused:
		st.State = StatePaused
	case v.soldOut:
		st.State = StateSoldOut
	default:
		st.State = StateAdmitting
	}
	t.Place, t.IssuedAt, t.ExpiresAt = st.Place, now.UnixMilli(), now.Add(s.cfg.TokenTTL).UnixMilli()
	st.Token, st.TokenExpiresAt = s.sign.mint(queuePrefix, t), time.UnixMilli(t.ExpiresAt).UTC()
	admittedUntil := time.UnixMilli(v.admittedAt + t.AdmittedTTL).UTC()
	switch {
	case st.State == StateEnded:
		// The window is over: nobody needs a token, but one does no harm.
		st.Admitted, st.EstimatedWait = true, 0
		admittedUntil = now.Add(ttl)
	case v.admittedAt >= 0 && now.Before(admittedUntil):
		st.Admitted, st.EstimatedWait = true, 0
	case v.admittedAt >= 0:
		st.Message = "Your admission has run out. Join again for a new place at the end of the line."
	}
	if st.Admitted {
		a := ticket{SaleID: t.SaleID, ShowID: t.ShowID, Subject: t.Subject, Place: st.Place, IssuedAt: now.UnixMilli(),
			ExpiresAt: admittedUntil.UnixMilli()}
		st.AdmittedToken, st.AdmittedExpiresAt = s.sign.mint(admittedPrefix, a), admittedUntil
		st.PollAfter = s.cfg.PollMax
		if st.Message == "" {
			st.Message = fmt.Sprintf("It is your turn: hold seats before %s.", admittedUntil.Format(time.RFC3339))
		}
		return st
	}
	switch st.State {
	case StateScheduled:
		wait := opens.Sub(now)
		st.PollAfter = s.poll(wait)
		st.Message = fmt.Sprintf("You are in. Sales open at %s; everyone who joined before then gets a random place at that moment.",
			opens.Format(time.RFC3339))
	case StatePaused:
		st.PollAfter = s.cfg.PollMax
		st.Message = "Admission is paused by the organiser. Keep your place; it resumes soon."
	case StateSoldOut:
		st.PollAfter = s.cfg.PollMax
		st.Message = "Every seat is held or sold right now, so admission has stopped. Seats that are not paid for come back; keep your place if you want to wait."
	case StateAdmitting:
		if v.rate > 0 {
			st.EstimatedWait = time.Duration(float64(st.Place-x) / v.rate * float64(time.Second))
		}
		st.PollAfter = s.poll(st.EstimatedWait)
		if st.Message == "" {
			st.Message = fmt.Sprintf("You are number %d in line; %d people are ahead of you.", st.Place, max(st.Place-x-1, 0))
		}
	}
	return st
}

// poll is how long to wait before the next poll: half the time left,
// between PollMin and PollMax, with ±10 % jitter so a crowd does not poll in
// step.
func (s *Service) poll(wait time.Duration) time.Duration {
	d := s.cfg.PollMax
	if wait >= 0 {
		d = min(max(wait/2, s.cfg.PollMin), s.cfg.PollMax)
	}
	return time.Duration(float64(d) * (0.9 + 0.2*rand.Float64()))
}

// CheckAdmitted verifies the Queue-Token of a hold of a show that sells
// through sale saleID: an admitted token, signed by us,
// unexpired, for that sale and this caller. It needs nothing but the HMAC
// key.
func (s *Service) CheckAdmitted(subject string, showID, saleID int64, token string) error {
	if token == "" {
		return fault.New(fault.QueueTokenRequired,
			"show %d sells through its waiting room: join it (WaitingRoomService.Join) and send the admitted token in the Queue-Token header", showID)
	}
	t, err := s.sign.open(admittedPrefix, token, s.now())
	if err != nil {
		if _, qerr := s.sign.open(queuePrefix, token, s.now()); qerr == nil || errors.Is(qerr, errExpired) {
			return fault.New(fault.QueueTokenNotAdmitted,
				"this is a queue token, not an admitted one: wait until GetStatus answers an admitted_token")
		}
		return tokenError("Queue-Token", err)
	}
	if t.SaleID != saleID {
		return fault.New(fault.QueueTokenWrongSale,
			"the Queue-Token is for the sale of show %d; show %d sells through the sale of show %d", t.SaleID, showID, saleID)
	}
	if t.Subject != subject {
		return fault.New(fault.QueueTokenWrongCaller, "the Queue-Token belongs to another caller")
	}
	return nil
}

// SaleOf names the sale a show sells through: its waiting room's (the
// room's first show), or the show itself when it has no room.
func (s *Service) SaleOf(ctx context.Context, showID int64) (int64, error) {
	room, err := s.rooms.cachedGet(ctx, showID)
	if err != nil || room == nil {
		return showID, err
	}
	return room.SaleID, nil
}

// ActiveSale tells whether holds of the show need an admitted token now:
// the sale whose token they need, or 0.
func (s *Service) ActiveSale(ctx context.Context, showID int64) (int64, error) {
	room, err := s.rooms.cachedGet(ctx, showID)
	if err != nil || room == nil || !room.Active(s.now()) {
		return 0, err
	}
	return room.SaleID, nil
}
