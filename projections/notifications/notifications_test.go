package notifications_test

import (
	"context"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	eventsv1 "github.com/seatghor/seatghor/gen/seatghor/events/v1"
	"github.com/seatghor/seatghor/internal/testkit/mailpittest"
	"github.com/seatghor/seatghor/internal/testkit/pgtest"
	"github.com/seatghor/seatghor/internal/testkit/schematest"
	"github.com/seatghor/seatghor/projections"
	"github.com/seatghor/seatghor/projections/notifications"
	"github.com/seatghor/seatghor/server/migrations"
	"github.com/seatghor/seatghor/server/notify"
	"github.com/seatghor/seatghor/server/notify/smssandbox"
	"github.com/seatghor/seatghor/server/shard"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Cleanup()
	os.Exit(code)
}

func event(t *testing.T, showID int64, msg proto.Message) projections.Event {
	t.Helper()
	b, err := proto.Marshal(msg)
	require.NoError(t, err)
	return projections.Event{ShowID: showID, EventID: shard.NewID("evt", showID),
		Type: string(msg.ProtoReflect().Descriptor().FullName()), Payload: b, OccurredAt: time.Now()}
}

// world is the projector on a fresh read database, sending SMS to a real
// sandbox over HTTP and e-mail to a real mailpit.
type world struct {
	p    *notifications.Projector
	db   *pgxpool.Pool
	sms  *smssandbox.Client
	mail *mailpittest.Server
}

func newWorld(t *testing.T) *world {
	t.Helper()
	ctx := context.Background()
	db, err := pgxpool.New(ctx, schematest.Fresh(t, migrations.Read))
	require.NoError(t, err)
	t.Cleanup(db.Close)
	srv := httptest.NewServer(smssandbox.New(nil))
	t.Cleanup(srv.Close)
	mp := mailpittest.Start(t)
	smtp, err := notify.NewSMTP(notify.SMTPConfig{Host: mp.SMTPHost, Port: mp.SMTPPort, From: "Seatghor <tickets@seatghor.test>"})
	require.NoError(t, err)
	sms := smssandbox.NewClient(srv.URL, nil)
	return &world{p: notifications.NewProjector(db, notifications.Config{SMS: sms, Mail: smtp, SiteURL: "https://seatghor.test/"}),
		db: db, sms: sms, mail: mp}
}

const showID = 7

func published(t *testing.T) projections.Event {
	return event(t, showID, &eventsv1.ShowPublished{ShowId: showID, OccurredAt: timestamppb.Now(), Show: &catalogv1.Show{
		Title: "Dhaka to Chattogram", TitleBn: "ঢাকা থেকে চট্টগ্রাম", TimeZone: "Asia/Dhaka",
		StartsAt: timestamppb.New(time.Date(2026, 12, 30, 2, 0, 0, 0, time.UTC))}})
}

func journey() *commonv1.Journey {
	return &commonv1.Journey{BoardingCounterName: "Kalabagan", BoardingCounterNameBn: "কলাবাগান",
		BoardingAt: timestamppb.New(time.Date(2026, 12, 30, 1, 30, 0, 0, time.UTC))}
}

func confirmed(t *testing.T, orderID string, c *commonv1.Contact) []projections.Event {
	total := &commonv1.Money{AmountMinor: 240000, Currency: "BDT"}
	return []projections.Event{
		event(t, showID, &eventsv1.OrderCreated{ShowId: showID, OrderId: orderID, Seats: []string{"A1", "A2"}, Total: total, Contact: c}),
		event(t, showID, &eventsv1.BookingConfirmed{ShowId: showID, OrderId: orderID, Seats: []string{"A1", "A2"}, Total: total,
			Contact: c, Journey: journey(), Passengers: []*commonv1.Passenger{
				{Seat: "A1", Name: "Rahim", Phone: "+8801819000000"}, {Seat: "A2", Name: "Karim", Phone: "+8801911000000"}}}),
	}
}

// TestBookingConfirmedTellsOnceEachWay (issue 25 §1, decision 0433): a
// confirmed booking sends one SMS to the contact's phone and one e-mail to
// its address, with the link to the order's e-tickets; the same batch
// delivered again, and a rebuild's replay, send nothing more.
func TestBookingConfirmedTellsOnceEachWay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t)
	batch := append([]projections.Event{published(t)}, confirmed(t, "ord_7_aaaaaaaaaaaaaaaa",
		&commonv1.Contact{Phone: "+8801711234567", Email: "rumana@example.com", Language: "en"})...)
	require.NoError(t, w.p.Apply(ctx, batch))
	require.NoError(t, w.p.Apply(ctx, batch), "at least once: the batch again")
	require.NoError(t, w.p.Reset(ctx))
	require.NoError(t, w.p.Apply(ctx, batch), "a rebuild replays it")

	sms, err := w.sms.List(ctx, "", 0)
	require.NoError(t, err)
	require.Len(t, sms, 1, "one SMS per order, to the contact, not the passengers")
	require.Equal(t, "+8801711234567", sms[0].To)
	require.Equal(t, notify.GSM7, sms[0].Encoding)
	require.Contains(t, sms[0].Text, "Dhaka to Chattogram, 30 Dec 07:30, seat A1,A2. Board at: Kalabagan.")
	require.Contains(t, sms[0].Text, "https://seatghor.test/t/AAAAAAAAAA")

	mails, err := w.mail.Messages(ctx)
	require.NoError(t, err)
	require.Len(t, mails, 1)
	require.Equal(t, "rumana@example.com", mails[0].To[0].Address)
	require.Equal(t, "Booking confirmed: Dhaka to Chattogram, 30 Dec 07:30", mails[0].Subject)
	text, err := w.mail.Text(ctx, mails[0].ID)
	require.NoError(t, err)
	require.Contains(t, text, "Ticket number: AAAAAAAAAA")
	require.Contains(t, text, "https://seatghor.test/t/AAAAAAAAAA")

	var sent int
	require.NoError(t, w.db.QueryRow(ctx, `SELECT count(*) FROM notifications WHERE status = 'sent'`).Scan(&sent))
	require.Equal(t, 2, sent)
}

// TestBengaliAndFallbacks: a Bengali contact gets Bengali texts (the SMS
// UCS-2, within two parts); an order without a contact phone texts its
// first passenger, in English, and sends no e-mail.
func TestBengaliAndFallbacks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t)
	batch := []projections.Event{published(t)}
	batch = append(batch, confirmed(t, "ord_7_bbbbbbbbbbbbbbbb", &commonv1.Contact{Phone: "+8801711234567", Email: "x@example.com", Language: "bn"})...)
	batch = append(batch, confirmed(t, "ord_7_cccccccccccccccc", nil)...)
	require.NoError(t, w.p.Apply(ctx, batch))

	bn, err := w.sms.List(ctx, "+8801711234567", 0)
	require.NoError(t, err)
	require.Len(t, bn, 1)
	require.Equal(t, notify.UCS2, bn[0].Encoding)
	require.LessOrEqual(t, bn[0].Segments, notify.MaxBookingSegments, bn[0].Text)
	require.Contains(t, bn[0].Text, "ঢাকা থেকে চট্টগ্রাম")
	require.Contains(t, bn[0].Text, "কলাবাগান")

	first, err := w.sms.List(ctx, "+8801819000000", 0)
	require.NoError(t, err)
	require.Len(t, first, 1, "the first passenger's number")
	require.True(t, strings.HasPrefix(first[0].Text, "Seatghor: ticket CCCCCCCCCC confirmed."), first[0].Text)
	other, err := w.sms.List(ctx, "+8801911000000", 0)
	require.NoError(t, err)
	require.Empty(t, other, "one SMS per order")

	mails, err := w.mail.Messages(ctx)
	require.NoError(t, err)
	require.Len(t, mails, 1)
	require.True(t, strings.HasPrefix(mails[0].Subject, "বুকিং নিশ্চিত"), mails[0].Subject)
}

// TestCancelledTripAndRefunds (decision 0432): the operator's cancellation
// of a trip tells the refund of the whole total, once; its RefundIssued
// (SHOW_CANCELLED) tells nothing more; a buyer's own cancellation is told
// by its RefundIssued, with the fee kept.
func TestCancelledTripAndRefunds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t)
	c := &commonv1.Contact{Phone: "+8801711234567", Language: "en"}
	batch := []projections.Event{published(t)}
	batch = append(batch, confirmed(t, "ord_7_dddddddddddddddd", c)...)
	batch = append(batch, confirmed(t, "ord_7_eeeeeeeeeeeeeeee", c)...)
	total := &commonv1.Money{AmountMinor: 240000, Currency: "BDT"}
	batch = append(batch,
		event(t, showID, &eventsv1.OrderCancelled{ShowId: showID, OrderId: "ord_7_dddddddddddddddd", Total: total,
			WasConfirmed: true, Reason: notifications.ShowCancelled, Journey: journey()}),
		event(t, showID, &eventsv1.RefundIssued{ShowId: showID, OrderId: "ord_7_dddddddddddddddd", Amount: total,
			Reason: eventsv1.RefundReason_REFUND_REASON_SHOW_CANCELLED}),
		event(t, showID, &eventsv1.OrderCancelled{ShowId: showID, OrderId: "ord_7_eeeeeeeeeeeeeeee", Total: total,
			WasConfirmed: true, Reason: "plans changed"}),
		event(t, showID, &eventsv1.RefundIssued{ShowId: showID, OrderId: "ord_7_eeeeeeeeeeeeeeee",
			Amount: &commonv1.Money{AmountMinor: 216000, Currency: "BDT"}, Fee: &commonv1.Money{AmountMinor: 24000, Currency: "BDT"},
			Reason: eventsv1.RefundReason_REFUND_REASON_CANCELLATION}),
	)
	require.NoError(t, w.p.Apply(ctx, batch))
	require.NoError(t, w.p.Apply(ctx, batch))
	got, err := w.sms.List(ctx, "+8801711234567", 0)
	require.NoError(t, err)
	var texts []string
	for i := len(got) - 1; i >= 0; i-- {
		texts = append(texts, got[i].Text)
	}
	require.Len(t, texts, 4, "%q", texts)
	require.Equal(t, "Seatghor: Dhaka to Chattogram, 30 Dec 07:30 is cancelled by the operator. Tk 2,400.00 of ticket DDDDDDDDDD is refunded in full.", texts[2])
	require.Equal(t, "Seatghor: Tk 2,160.00 of ticket EEEEEEEEEE is refunded. Cancellation fee kept: Tk 240.00.", texts[3])
}
