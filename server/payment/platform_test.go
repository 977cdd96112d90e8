package payment_test

import (
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	eventsv1 "github.com/seatghor/seatghor/gen/seatghor/events/v1"
	paymentv1 "github.com/seatghor/seatghor/gen/seatghor/payment/v1"
	"github.com/seatghor/seatghor/internal/testkit/pgtest"
	"github.com/seatghor/seatghor/internal/testkit/schematest"
	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/gateway"
	"github.com/seatghor/seatghor/server/gateway/sandbox"
	"github.com/seatghor/seatghor/server/ledger"
	"github.com/seatghor/seatghor/server/migrations"
	"github.com/seatghor/seatghor/server/payment"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/shard"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Cleanup()
	os.Exit(code)
}

// t0 is the platform's time when a test starts.
var t0 = time.Date(2026, 3, 1, 6, 0, 0, 0, time.UTC)

// platform is what the payment service runs on, for one test: a fresh
// catalog database and shard (opened as the application opens them), the
// catalog and booking services that make shows and orders, and the sandbox
// gateway over HTTP, all on one fake clock.
type platform struct {
	router  *shard.Router
	clock   *clock.Fake
	catalog *catalog.Service
	booking *booking.Service
	gw      *sandbox.Server
	client  *sandbox.Client
	ledger  *ledger.Service
	// pay is the payment service of the platform's Config.
	pay *payment.Service
}

func newPlatform(t *testing.T, cfg payment.Config) *platform {
	t.Helper()
	open := func(name string, kind migrations.Kind) *pg.Pool {
		pool, err := pg.Open(t.Context(), name, schematest.Fresh(t, kind), 8, pg.WithRole(pg.AppRole))
		require.NoError(t, err)
		t.Cleanup(pool.Close)
		return pool
	}
	p := &platform{clock: clock.NewFake(t0)}
	p.router = shard.NewRouter(open("catalog", migrations.Catalog), []*pg.Pool{open("shard-0", migrations.Shard)})
	p.catalog = catalog.NewService(p.router, p.clock, booking.Inventory{})
	p.booking = booking.NewService(p.router, p.catalog, p.clock, booking.Config{})
	p.ledger = ledger.NewService(p.router, p.clock)
	p.gw = sandbox.New(sandbox.Config{Now: p.clock.Now})
	srv := httptest.NewServer(p.gw)
	t.Cleanup(func() {
		srv.Close()
		p.gw.Close()
	})
	client, err := sandbox.NewClient(sandbox.ClientConfig{BaseURL: srv.URL})
	require.NoError(t, err)
	p.client = client
	p.pay = p.service(cfg)
	return p
}

// service returns another payment service over the same platform, with
// cfg.
func (p *platform) service(cfg payment.Config) *payment.Service {
	return payment.NewService(p.router, p.client, p.clock, slog.New(slog.DiscardHandler), cfg)
}

// show creates a show on sale now: one row of seats at price, with the
// cancellation fee feeBps and the default commission (10 %).
func (p *platform) show(t *testing.T, seats int, price int64, feeBps int) catalog.Show {
	t.Helper()
	show, err := p.catalog.CreateShow(t.Context(), "admin", catalog.NewShow{Admin: true, Show: catalog.Show{
		Kind: catalogv1.ShowKind_SHOW_KIND_CONCERT, Title: "concert", Venue: "Hall", Currency: "BDT",
		StartsAt: p.clock.Now().Add(30 * 24 * time.Hour), CancellationFeeBps: new(feeBps),
		Sections: []catalog.Section{{Name: "Main", Rows: []string{"A"}, SeatsPerRow: seats, PriceMinor: price}},
	}})
	require.NoError(t, err)
	return show
}

// order holds seats of a show for user and orders them.
func (p *platform) order(t *testing.T, showID int64, user string, seats ...string) booking.Order {
	t.Helper()
	h, err := p.booking.CreateHold(t.Context(), user, booking.HoldRequest{ShowID: showID, Seats: seats})
	require.NoError(t, err)
	o, err := p.booking.CreateOrder(t.Context(), user, h.ID)
	require.NoError(t, err)
	return o
}

// start starts paying an order with a sandbox token ("" takes the
// redirect flow).
func (p *platform) start(t *testing.T, o booking.Order, token string) payment.Payment {
	t.Helper()
	pay, err := p.pay.StartPayment(t.Context(), o.UserID, payment.StartRequest{OrderID: o.ID, Method: "card", Token: token})
	require.NoError(t, err)
	return pay
}

func (p *platform) payment(t *testing.T, id string) payment.Payment {
	t.Helper()
	pay, err := p.pay.GetPayment(t.Context(), "", true, id)
	require.NoError(t, err)
	return pay
}

func (p *platform) getOrder(t *testing.T, id string) booking.Order {
	t.Helper()
	o, err := p.booking.GetOrder(t.Context(), booking.Caller{UserID: "admin", Admin: true}, id)
	require.NoError(t, err)
	return o
}

// view is the gateway's current view of the charge sent with key.
func (p *platform) view(t *testing.T, key string) gateway.Charge {
	t.Helper()
	c, err := p.client.GetCharge(t.Context(), key)
	require.NoError(t, err)
	return c
}

func (p *platform) shard(t *testing.T) *pg.Pool {
	t.Helper()
	pool, err := p.router.Shard(0)
	require.NoError(t, err)
	return pool
}

// refundRow is a refund of a payment as stored.
type refundRow struct {
	Reason string
	Amount int64
	Status string
}

// refunds returns the refunds of a payment, in the order they were recorded.
func (p *platform) refunds(t *testing.T, paymentID string) []refundRow {
	t.Helper()
	rows, err := p.shard(t).Query(t.Context(), `
		SELECT reason, amount_minor, status FROM refunds WHERE payment_id = $1 ORDER BY created_at, refund_id`, paymentID)
	require.NoError(t, err)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[refundRow])
	require.NoError(t, err)
	return out
}

// showEvents returns a show's outbox events of one type, decoded, in order.
func showEvents[M proto.Message](t *testing.T, p *platform, showID int64, newMsg func() M) []M {
	t.Helper()
	rows, err := p.shard(t).Query(t.Context(), `SELECT payload FROM outbox WHERE show_id = $1 AND event_type = $2 ORDER BY id`,
		showID, string(newMsg().ProtoReflect().Descriptor().FullName()))
	require.NoError(t, err)
	payloads, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	require.NoError(t, err)
	var out []M
	for _, b := range payloads {
		m := newMsg()
		require.NoError(t, proto.Unmarshal(b, m))
		out = append(out, m)
	}
	return out
}

// transitions lists the state changes a payment's events announce, as
// "from→to" with the stored statuses ("→pending" for a new attempt).
func (p *platform) transitions(t *testing.T, showID int64, paymentID string) []string {
	t.Helper()
	name := map[paymentv1.PaymentState]payment.Status{}
	for s, v := range payment.States {
		name[v] = s
	}
	out := []string{}
	for _, e := range showEvents(t, p, showID, func() *eventsv1.PaymentStateChanged { return &eventsv1.PaymentStateChanged{} }) {
		if e.GetPaymentId() == paymentID {
			out = append(out, fmt.Sprintf("%s→%s", name[e.GetFromState()], name[e.GetToState()]))
		}
	}
	return out
}

// journals lists the kinds of a show's journals by their txn id's prefix
// ("booking", "fee", "capture", "refund", "refund-settled"), sorted, and
// checks that the show's books balance.
func (p *platform) journals(t *testing.T, showID int64) []string {
	t.Helper()
	posted, _, err := p.ledger.ListJournal(t.Context(), ledger.Filter{ShowID: showID, PageSize: 500})
	require.NoError(t, err)
	out := []string{}
	for _, j := range posted {
		var sum int64
		for _, l := range j.Lines {
			sum += l.AmountMinor
		}
		require.Zero(t, sum, "journal %s balances", j.TxnID)
		kind, _, _ := strings.Cut(j.TxnID, ":")
		out = append(out, kind)
	}
	slices.Sort(out)
	return out
}

// balances sums a show's journal lines by account.
func (p *platform) balances(t *testing.T, showID int64) map[string]int64 {
	t.Helper()
	posted, _, err := p.ledger.ListJournal(t.Context(), ledger.Filter{ShowID: showID, PageSize: 500})
	require.NoError(t, err)
	out := map[string]int64{}
	for _, j := range posted {
		for _, l := range j.Lines {
			out[l.Account] += l.AmountMinor
		}
	}
	return out
}

// chargedOnce checks over the whole shard: no order charged twice,
// none confirmed without its one charge.
func (p *platform) chargedOnce(t *testing.T) {
	t.Helper()
	_, problems, err := p.pay.CheckChargedOnce(t.Context(), 10)
	require.NoError(t, err)
	require.Empty(t, problems)
}

// kindOf returns the reason and field of a payment error.
func kindOf(t *testing.T, err error) (fault.Reason, string) {
	t.Helper()
	pe, ok := fault.As(err)
	require.True(t, ok, "want a payment error, got %v", err)
	return pe.Reason, pe.Field
}
