package notifications

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"

	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	"github.com/seatghor/seatghor/server/display"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/notify"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/ratelimit"
	"github.com/seatghor/seatghor/server/ticket"
)

// The limits of a booking's SMS sent again (decision 0437): a buyer who
// lost it asks, not a script that bills the platform for SMS.
const (
	ResendsPerDay = 3
	ResendAfter   = 2 * time.Minute
)

// resentKind is the notifications row kind of a booking's SMS sent again.
const resentKind = "booking_resent"

// rowQuerier reads a row: the pool or a transaction.
type rowQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Resend sends a confirmed order's booking SMS again, to phone (E.164)
// only when it is the number the SMS went to: an unknown order, one not
// confirmed and another number are the same ticket.ErrNotFound. The
// limits are checked and the message claimed under the order's row lock,
// so concurrent requests cannot pass them together. It answers how long
// before the next may be sent.
func (p *Projector) Resend(ctx context.Context, orderID, phone string) (time.Duration, error) {
	if p.cfg.SMS == nil {
		return 0, fault.New(fault.NotServed, "this server sends no SMS")
	}
	now := p.cfg.Now().UTC().Truncate(time.Microsecond)
	eventID := fmt.Sprintf("resend:%s:%d", orderID, now.UnixMicro())
	var (
		lang, to       string
		showID         int64
		seats          []string
		quantity       int
		journey        []byte
		contact, first string
		confirmedAt    *time.Time
	)
	err := pg.InTx(ctx, p.db, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `
			SELECT show_id, phone, passenger_phone, lang, seats, quantity, journey, confirmed_at
			FROM notify_orders WHERE order_id = $1 FOR UPDATE`, orderID).
			Scan(&showID, &contact, &first, &lang, &seats, &quantity, &journey, &confirmedAt)
		found, err := pg.Found(err)
		if err != nil {
			return fmt.Errorf("read order %s: %w", orderID, err)
		}
		to = contact
		if to == "" {
			to = first
		}
		if !found || confirmedAt == nil || to != phone {
			return ticket.ErrNotFound
		}
		var (
			sent           int
			oldest, newest *time.Time
		)
		if err := tx.QueryRow(ctx, `
			SELECT count(*), min(claimed_at), max(claimed_at) FROM notifications
			WHERE order_id = $1 AND kind = $2 AND status <> 'rejected' AND claimed_at > $3`,
			orderID, resentKind, now.Add(-24*time.Hour)).Scan(&sent, &oldest, &newest); err != nil {
			return fmt.Errorf("count the SMS sent again for order %s: %w", orderID, err)
		}
		if newest != nil && now.Before(newest.Add(ResendAfter)) {
			return ratelimit.Counted("ticket-sms-resend", 1, ResendAfter, newest.Add(ResendAfter).Sub(now))
		}
		if sent >= ResendsPerDay {
			return ratelimit.Counted("ticket-sms-day", ResendsPerDay, 24*time.Hour, oldest.Add(24*time.Hour).Sub(now))
		}
		_, err = claim(ctx, tx, eventID, "sms", to, resentKind, orderID, now)
		return err
	})
	if err != nil {
		return 0, err
	}
	var j *commonv1.Journey
	if journey != nil {
		j = &commonv1.Journey{}
		if err := proto.Unmarshal(journey, j); err != nil {
			return 0, fmt.Errorf("decode the journey of order %s: %w", orderID, err)
		}
	}
	b, err := p.booking(ctx, orderID, showID, seats, quantity, j)
	if err != nil {
		return 0, err
	}
	text := notify.BookingSMS(display.ParseLang(lang), b)
	if err := p.deliver(ctx, eventID, "sms", to, func() (string, error) { return p.cfg.SMS.SendSMS(ctx, to, text) }); err != nil {
		return 0, err
	}
	return ResendAfter, nil
}
