// Package notifications is the projector that tells buyers about their
// orders (issue 25 §1): a booking confirmed, a trip the operator delayed
// or cancelled (with its refund), a refund issued; by SMS to the order's
// contact phone (else its first passenger's) and by e-mail to its contact
// address, in the language the buyer chose. Each (event, channel,
// recipient) is sent at least once and never twice: a row of its own in
// the read database is claimed before the provider is called and marked
// sent after (decision 0433). What a message needs comes from the events:
// the order's contact from OrderCreated and BookingConfirmed, the show's
// names from ShowPublished (or, when that has not been read yet, the
// catalog's read API, as "my tickets" does), the journey from the event.
package notifications

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"

	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	eventsv1 "github.com/seatghor/seatghor/gen/seatghor/events/v1"
	"github.com/seatghor/seatghor/projections"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/display"
	"github.com/seatghor/seatghor/server/notify"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/ticket"
)

// Name is the projector's name (`seatghor rebuild notifications`).
const Name = "notifications"

// ShowCancelled is the OrderCancelled reason of an order whose show the
// operator cancelled (the cancellation of shows writes it).
const ShowCancelled = "show_cancelled"

// Shows looks a show up in the catalog, for an order whose ShowPublished
// has not been read yet.
type Shows interface {
	GetShow(ctx context.Context, showID int64) (catalog.Show, error)
}

// Config wires the projector.
type Config struct {
	// SMS and Mail send; a nil one sends nothing on its channel.
	SMS  notify.SMS
	Mail notify.Mail
	// SiteURL is the site's base ("https://seatghor.com.bd"): the links
	// open SiteURL/order/<order id>.
	SiteURL string
	Shows   Shows
	Now     func() time.Time
	Log     *slog.Logger
}

// Projector sends the notifications.
type Projector struct {
	db  *pgxpool.Pool
	cfg Config
}

// NewProjector returns the projector keeping its tables in the read
// database db.
func NewProjector(db *pgxpool.Pool, cfg Config) *Projector {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	cfg.SiteURL = strings.TrimRight(cfg.SiteURL, "/")
	return &Projector{db: db, cfg: cfg}
}

// Name implements projections.Projector.
func (p *Projector) Name() string { return Name }

// Reset implements projections.Projector: it forgets the orders' contacts
// and the shows, not what was sent, so a rebuild tells nobody twice.
func (p *Projector) Reset(ctx context.Context) error {
	if _, err := p.db.Exec(ctx, `TRUNCATE notify_orders, notify_shows`); err != nil {
		return fmt.Errorf("reset notifications: %w", err)
	}
	return nil
}

// Apply handles a batch in order. A provider that fails fails the batch
// (retried with backoff); what was sent before stays sent and is skipped
// on the retry.
func (p *Projector) Apply(ctx context.Context, events []projections.Event) error {
	for _, e := range events {
		if err := p.apply(ctx, e); err != nil {
			return fmt.Errorf("notifications: event %s (%s): %w", e.EventID, e.Type, err)
		}
	}
	return nil
}

func (p *Projector) apply(ctx context.Context, e projections.Event) error {
	switch e.Type {
	case "seatghor.events.v1.ShowPublished":
		var ev eventsv1.ShowPublished
		if err := proto.Unmarshal(e.Payload, &ev); err != nil {
			return err
		}
		s := ev.GetShow()
		_, err := p.db.Exec(ctx, `
			INSERT INTO notify_shows AS s (show_id, title, title_bn, time_zone, starts_at, published_at)
			VALUES ($1, $2, $3, coalesce(nullif($4, ''), 'Asia/Dhaka'), $5, $6)
			ON CONFLICT (show_id) DO UPDATE SET title = excluded.title, title_bn = excluded.title_bn,
			    time_zone = excluded.time_zone, starts_at = excluded.starts_at, published_at = excluded.published_at
			WHERE s.published_at <= excluded.published_at`,
			ev.GetShowId(), s.GetTitle(), s.GetTitleBn(), s.GetTimeZone(), s.GetStartsAt().AsTime(), ev.GetOccurredAt().AsTime())
		return err
	case "seatghor.events.v1.OrderCreated":
		var ev eventsv1.OrderCreated
		if err := proto.Unmarshal(e.Payload, &ev); err != nil {
			return err
		}
		return p.keep(ctx, ev.GetOrderId(), ev.GetShowId(), ev.GetContact(), nil, e.OccurredAt)
	case "seatghor.events.v1.BookingConfirmed":
		var ev eventsv1.BookingConfirmed
		if err := proto.Unmarshal(e.Payload, &ev); err != nil {
			return err
		}
		if err := p.keep(ctx, ev.GetOrderId(), ev.GetShowId(), ev.GetContact(), ev.GetPassengers(), e.OccurredAt); err != nil {
			return err
		}
		if err := p.keepBooking(ctx, &ev); err != nil {
			return err
		}
		return p.confirmed(ctx, e.EventID, &ev)
	case "seatghor.events.v1.OrderCancelled":
		var ev eventsv1.OrderCancelled
		if err := proto.Unmarshal(e.Payload, &ev); err != nil {
			return err
		}
		// The operator's cancellation of the trip is told here, and a
		// cash ticket taken back at a counter (no RefundIssued follows: the
		// cash was given there); a buyer who cancelled online hears of the
		// refund (RefundIssued).
		switch {
		case !ev.GetWasConfirmed():
			return nil
		case ev.GetReason() == ShowCancelled:
			return p.cancelled(ctx, e.EventID, &ev)
		case ev.GetPaidAtCounter():
			return p.takenBack(ctx, e.EventID, &ev)
		}
		return nil
	case "seatghor.events.v1.OrderRescheduled":
		var ev eventsv1.OrderRescheduled
		if err := proto.Unmarshal(e.Payload, &ev); err != nil {
			return err
		}
		// A booking's SMS sent again names the journey at its new times.
		if err := p.keepJourney(ctx, ev.GetOrderId(), ev.GetJourney()); err != nil {
			return err
		}
		return p.delayed(ctx, e.EventID, &ev)
	case "seatghor.events.v1.RefundIssued":
		var ev eventsv1.RefundIssued
		if err := proto.Unmarshal(e.Payload, &ev); err != nil {
			return err
		}
		// The refund of a cancelled trip is told in the cancellation's
		// message: the passenger hears once (decision 0432).
		if ev.GetReason() == eventsv1.RefundReason_REFUND_REASON_SHOW_CANCELLED {
			return nil
		}
		return p.refunded(ctx, e.EventID, &ev)
	}
	return nil
}

// keep records an order's contact and first passenger's number. A later
// event's contact replaces an earlier one (they are the same: a contact
// never changes); passengers come with BookingConfirmed only.
func (p *Projector) keep(ctx context.Context, orderID string, showID int64, c *commonv1.Contact, ps []*commonv1.Passenger, at time.Time) error {
	passenger := ""
	if len(ps) > 0 {
		passenger = ps[0].GetPhone()
	}
	_, err := p.db.Exec(ctx, `
		INSERT INTO notify_orders AS o (order_id, show_id, phone, email, lang, passenger_phone, updated_at)
		VALUES ($1, $2, $3, $4, coalesce(nullif($5, ''), 'en'), $6, $7)
		ON CONFLICT (order_id) DO UPDATE SET phone = excluded.phone, email = excluded.email, lang = excluded.lang,
		    passenger_phone = coalesce(nullif(excluded.passenger_phone, ''), o.passenger_phone),
		    updated_at = greatest(o.updated_at, excluded.updated_at)`,
		orderID, showID, c.GetPhone(), c.GetEmail(), c.GetLanguage(), passenger, at)
	return err
}

// recipients are an order's: where its SMS and e-mail go, in which language.
type recipients struct {
	phone, email string
	lang         display.Lang
}

func (p *Projector) recipientsOf(ctx context.Context, orderID string) (recipients, bool, error) {
	var r recipients
	var phone, passenger, lang string
	err := p.db.QueryRow(ctx, `SELECT phone, email, lang, passenger_phone FROM notify_orders WHERE order_id = $1`, orderID).
		Scan(&phone, &r.email, &lang, &passenger)
	found, err := pg.Found(err)
	if err != nil {
		return r, false, fmt.Errorf("read the contact of order %s: %w", orderID, err)
	}
	if !found {
		return r, false, nil
	}
	r.phone = phone
	if r.phone == "" {
		r.phone = passenger // one SMS per order: the first passenger's
	}
	r.lang = display.ParseLang(lang)
	return r, true, nil
}

// trip is what the messages say about the show, with the journey's
// boarding counter and time when there is one.
func (p *Projector) trip(ctx context.Context, showID int64, j *commonv1.Journey) (notify.Trip, error) {
	var t notify.Trip
	err := p.db.QueryRow(ctx, `SELECT title, title_bn, time_zone, starts_at FROM notify_shows WHERE show_id = $1`, showID).
		Scan(&t.Title, &t.TitleBn, &t.Zone, &t.StartsAt)
	found, err := pg.Found(err)
	if err == nil && !found && p.cfg.Shows == nil {
		err = fmt.Errorf("show %d not published yet: %w", showID, catalog.ErrNotFound)
	}
	if err == nil && !found && p.cfg.Shows != nil {
		s, lerr := p.cfg.Shows.GetShow(ctx, showID)
		switch {
		case lerr == nil:
			t = notify.Trip{Title: s.Title, TitleBn: s.TitleBn, Zone: s.TimeZone, StartsAt: s.StartsAt}
			err = nil
		case errors.Is(lerr, catalog.ErrNotFound):
			t, err = notify.Trip{Title: fmt.Sprintf("show %d", showID)}, nil
		default:
			err = lerr
		}
	}
	if err != nil {
		return t, fmt.Errorf("look up show %d: %w", showID, err)
	}
	if j != nil {
		t.Boarding, t.BoardingBn = j.GetBoardingCounterName(), j.GetBoardingCounterNameBn()
		if j.GetBoardingAt() != nil {
			t.BoardingAt = j.GetBoardingAt().AsTime()
		} else if j.GetDepartsAt() != nil {
			t.BoardingAt = j.GetDepartsAt().AsTime()
		}
	}
	return t, nil
}

func (p *Projector) link(orderID string) string { return p.cfg.SiteURL + "/t/" + ticket.Label(orderID) }

func (p *Projector) confirmed(ctx context.Context, eventID string, ev *eventsv1.BookingConfirmed) error {
	r, ok, err := p.recipientsOf(ctx, ev.GetOrderId())
	if err != nil || !ok {
		return err
	}
	b, err := p.booking(ctx, ev.GetOrderId(), ev.GetShowId(), ev.GetSeats(), int(ev.GetQuantity()), ev.GetJourney())
	if err != nil {
		return err
	}
	mail := notify.BookingEmail(r.lang, b)
	return p.send(ctx, eventID, "booking_confirmed", ev.GetOrderId(), r, notify.BookingSMS(r.lang, b), mail)
}

// booking is what a booking's messages tell of an order.
func (p *Projector) booking(ctx context.Context, orderID string, showID int64, seats []string, quantity int, j *commonv1.Journey) (notify.Booking, error) {
	t, err := p.trip(ctx, showID, j)
	if err != nil {
		return notify.Booking{}, err
	}
	return notify.Booking{OrderID: orderID, Trip: t, Seats: seats, Quantity: quantity, Link: p.link(orderID)}, nil
}

// keepBooking records what a confirmed order's SMS says, to send it again
// on request (Resend).
func (p *Projector) keepBooking(ctx context.Context, ev *eventsv1.BookingConfirmed) error {
	seats := ev.GetSeats()
	if seats == nil {
		seats = []string{}
	}
	_, err := p.db.Exec(ctx, `UPDATE notify_orders SET seats = $2, quantity = $3, confirmed_at = $4 WHERE order_id = $1`,
		ev.GetOrderId(), seats, ev.GetQuantity(), ev.GetOccurredAt().AsTime())
	if err != nil {
		return fmt.Errorf("keep the booking of order %s: %w", ev.GetOrderId(), err)
	}
	return p.keepJourney(ctx, ev.GetOrderId(), ev.GetJourney())
}

// keepJourney records an order's journey as its newest event gives it.
func (p *Projector) keepJourney(ctx context.Context, orderID string, j *commonv1.Journey) error {
	if j == nil {
		return nil
	}
	b, err := proto.Marshal(j)
	if err != nil {
		return fmt.Errorf("encode the journey of order %s: %w", orderID, err)
	}
	if _, err := p.db.Exec(ctx, `UPDATE notify_orders SET journey = $2 WHERE order_id = $1`, orderID, b); err != nil {
		return fmt.Errorf("keep the journey of order %s: %w", orderID, err)
	}
	return nil
}

func (p *Projector) cancelled(ctx context.Context, eventID string, ev *eventsv1.OrderCancelled) error {
	r, ok, err := p.recipientsOf(ctx, ev.GetOrderId())
	if err != nil || !ok {
		return err
	}
	t, err := p.trip(ctx, ev.GetShowId(), ev.GetJourney())
	if err != nil {
		return err
	}
	// The operator cancels with no fee: the refund is the order's total.
	m := notify.TripCancelled(r.lang, notify.Cancellation{OrderID: ev.GetOrderId(), Trip: t,
		Refund:    notify.Money{Minor: ev.GetTotal().GetAmountMinor(), Currency: ev.GetTotal().GetCurrency()},
		AtCounter: ev.GetPaidAtCounter()})
	return p.send(ctx, eventID, "trip_cancelled", ev.GetOrderId(), r, m.Text, m)
}

// delayed tells an order's passenger its trip's new time (decision 0441).
// The event names the journey at the new times; the times it was sold for
// are those less the move, whatever the show's row here says by now.
func (p *Projector) delayed(ctx context.Context, eventID string, ev *eventsv1.OrderRescheduled) error {
	r, ok, err := p.recipientsOf(ctx, ev.GetOrderId())
	if err != nil || !ok {
		return err
	}
	now, err := p.trip(ctx, ev.GetShowId(), ev.GetJourney())
	if err != nil {
		return err
	}
	now.StartsAt = ev.GetStartsAt().AsTime()
	shift := now.StartsAt.Sub(ev.GetPreviousStartsAt().AsTime())
	was := now
	was.StartsAt = now.StartsAt.Add(-shift)
	if !now.BoardingAt.IsZero() {
		was.BoardingAt = now.BoardingAt.Add(-shift)
	}
	d := notify.Delay{OrderID: ev.GetOrderId(), Was: was, Now: now, Reason: ev.GetReason()}
	return p.send(ctx, eventID, "trip_delayed", ev.GetOrderId(), r, notify.TripDelayed(r.lang, d).Text, notify.DelayEmail(r.lang, d))
}

// takenBack tells the passenger of a cash ticket taken back at a counter
// that it is void and what was given back in cash, should someone else
// have brought it there.
func (p *Projector) takenBack(ctx context.Context, eventID string, ev *eventsv1.OrderCancelled) error {
	r, ok, err := p.recipientsOf(ctx, ev.GetOrderId())
	if err != nil || !ok {
		return err
	}
	total, fee := ev.GetTotal(), ev.GetFee().GetAmountMinor()
	m := notify.RefundIssued(r.lang, notify.Refund{OrderID: ev.GetOrderId(), AtCounter: true,
		Amount: notify.Money{Minor: max(total.GetAmountMinor()-fee, 0), Currency: total.GetCurrency()},
		Fee:    notify.Money{Minor: fee, Currency: total.GetCurrency()}})
	return p.send(ctx, eventID, "refund_issued", ev.GetOrderId(), r, m.Text, m)
}

func (p *Projector) refunded(ctx context.Context, eventID string, ev *eventsv1.RefundIssued) error {
	r, ok, err := p.recipientsOf(ctx, ev.GetOrderId())
	if err != nil || !ok {
		return err
	}
	m := notify.RefundIssued(r.lang, notify.Refund{OrderID: ev.GetOrderId(),
		Amount: notify.Money{Minor: ev.GetAmount().GetAmountMinor(), Currency: ev.GetAmount().GetCurrency()},
		Fee:    notify.Money{Minor: ev.GetFee().GetAmountMinor(), Currency: ev.GetFee().GetCurrency()}})
	return p.send(ctx, eventID, "refund_issued", ev.GetOrderId(), r, m.Text, m)
}

// send sends the SMS and the e-mail of one event, each at most once
// (claim, send, mark).
func (p *Projector) send(ctx context.Context, eventID, kind, orderID string, r recipients, sms string, mail notify.Message) error {
	if p.cfg.SMS != nil && r.phone != "" {
		if err := p.once(ctx, eventID, "sms", r.phone, kind, orderID, func() (string, error) {
			return p.cfg.SMS.SendSMS(ctx, r.phone, sms)
		}); err != nil {
			return err
		}
	}
	if p.cfg.Mail != nil && r.email != "" {
		id := fmt.Sprintf("%s.%s@seatghor", eventID, kind)
		if err := p.once(ctx, eventID, "email", r.email, kind, orderID, func() (string, error) {
			return id, p.cfg.Mail.SendMail(ctx, notify.Email{To: r.email, Subject: mail.Subject, Text: mail.Text, MessageID: id})
		}); err != nil {
			return err
		}
	}
	return nil
}

// once sends one message unless its row says it was sent (or refused for
// good). The claim commits before the provider is called: a crash after it
// leaves the row claimed, and the replay sends again (at least once); a
// row marked sent is never sent again (never twice).
func (p *Projector) once(ctx context.Context, eventID, channel, recipient, kind, orderID string, do func() (string, error)) error {
	claimed, err := claim(ctx, p.db, eventID, channel, recipient, kind, orderID, p.cfg.Now())
	if err != nil || !claimed {
		return err // or sent, or refused for good, before
	}
	return p.deliver(ctx, eventID, channel, recipient, do)
}

// claim claims a message's row unless it was sent or refused for good.
func claim(ctx context.Context, db rowQuerier, eventID, channel, recipient, kind, orderID string, now time.Time) (bool, error) {
	var status string
	err := db.QueryRow(ctx, `
		INSERT INTO notifications AS n (event_id, channel, recipient, kind, order_id, status, claimed_at)
		VALUES ($1, $2, $3, $4, $5, 'claimed', $6)
		ON CONFLICT (event_id, channel, recipient) DO UPDATE SET attempts = n.attempts + 1, claimed_at = excluded.claimed_at
		WHERE n.status = 'claimed'
		RETURNING status`, eventID, channel, recipient, kind, orderID, now).Scan(&status)
	found, err := pg.Found(err)
	if err != nil {
		return false, fmt.Errorf("claim %s to %s: %w", channel, recipient, err)
	}
	return found, nil
}

// deliver sends a claimed message and marks it sent, or refused for good.
func (p *Projector) deliver(ctx context.Context, eventID, channel, recipient string, do func() (string, error)) error {
	id, sendErr := do()
	if sendErr != nil && !errors.Is(sendErr, notify.ErrRejected) {
		// Left claimed: the batch is retried, and so is this message.
		return fmt.Errorf("send %s of %s: %w", channel, eventID, sendErr)
	}
	status, msg := "sent", ""
	if sendErr != nil {
		// A number or address the provider refuses for good: recorded,
		// not retried, so one bad contact does not stop the outbox.
		status, msg = "rejected", sendErr.Error()
		p.cfg.Log.Warn("notification rejected", "event", eventID, "channel", channel, "err", sendErr)
	}
	if _, err := p.db.Exec(ctx, `
		UPDATE notifications SET status = $4, provider_id = $5, error = $6, sent_at = $7
		WHERE event_id = $1 AND channel = $2 AND recipient = $3`,
		eventID, channel, recipient, status, id, msg, p.cfg.Now()); err != nil {
		return fmt.Errorf("mark %s of %s sent: %w", channel, eventID, err)
	}
	return nil
}
