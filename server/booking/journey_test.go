package booking

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	eventsv1 "github.com/seatghor/seatghor/gen/seatghor/events/v1"
	"github.com/seatghor/seatghor/internal/testkit/schematest"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/migrations"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/shard"
)

// These tests make a trip the way the platform does (catalog.CreateShow,
// which writes its seats per leg, stops and fares through Inventory) and
// sell it per leg (decision 0350).

var journeyNow = time.Date(2030, 3, 1, 4, 0, 0, 0, time.UTC)

// tripWorld is a catalog and one shard with a coach on it: Dhaka → Cumilla
// → Feni → Chattogram, seats A1..C4 economy and K1..K4 business; fares
// Dhaka → Chattogram (1,200 Tk, business 2,000), Dhaka → Cumilla (400),
// Cumilla → Chattogram (900), Cumilla → Feni (300); none from Feni.
type tripWorld struct {
	svc   *Service
	pool  *pg.Pool
	clock *clock.Fake
	show  catalog.Show
}

func newTripWorld(t *testing.T) *tripWorld {
	t.Helper()
	open := func(name string, kind migrations.Kind) *pg.Pool {
		pool, err := pg.Open(t.Context(), name, schematest.Fresh(t, kind), 4, pg.WithRole(pg.AppRole))
		require.NoError(t, err)
		t.Cleanup(pool.Close)
		return pool
	}
	cat, sh := open("catalog", migrations.Catalog), open("shard-0", migrations.Shard)
	router := shard.NewRouter(cat, []*pg.Pool{sh})
	clk := clock.NewFake(journeyNow)
	show, err := catalog.NewService(router, clk, Inventory{}).CreateShow(t.Context(), "admin", catalog.NewShow{Admin: true, Show: catalog.Show{
		Kind: catalogv1.ShowKind_SHOW_KIND_BUS_TRIP, Title: "Dhaka to Chattogram 08:00", Currency: "BDT",
		StartsAt: journeyNow.Add(30 * 24 * time.Hour), MaxSeatsPerAccount: 6, MaxSeatsPerHold: 4,
		Sections: []catalog.Section{{Name: "Economy", Rows: []string{"A", "B", "C"}, SeatsPerRow: 4},
			{Name: "Business", Rows: []string{"K"}, SeatsPerRow: 4, SeatClass: "business"}},
		Stops: []catalog.TripStop{
			{Place: "Dhaka", Counters: []catalog.Counter{{ID: "kalabagan", Name: "Kalabagan", NameBn: "কলাবাগান"}}},
			{Place: "Comilla", Minutes: 120, Counters: []catalog.Counter{{ID: "cantonment", Name: "Cantonment", Minutes: 125}}},
			{Place: "Feni", Minutes: 180},
			{Place: "Chittagong", Minutes: 330, Counters: []catalog.Counter{{ID: "garib-e-newaz", Name: "Garib-e-Newaz", Minutes: 330}}},
		},
		Fares: []catalog.Fare{{From: "dhaka", To: "chattogram", PriceMinor: 120000},
			{From: "dhaka", To: "chattogram", SeatClass: "business", PriceMinor: 200000},
			{From: "dhaka", To: "cumilla", PriceMinor: 40000}, {From: "cumilla", To: "chattogram", PriceMinor: 90000},
			{From: "cumilla", To: "feni", PriceMinor: 30000}},
	}})
	require.NoError(t, err)
	return &tripWorld{svc: NewService(router, nil, clk, Config{}), pool: sh, clock: clk, show: show}
}

func (w *tripWorld) hold(t *testing.T, user, from, to string, seats ...string) (Hold, error) {
	t.Helper()
	return w.svc.CreateHold(t.Context(), user, HoldRequest{ShowID: w.show.ID, Seats: seats, Journey: JourneyRequest{From: from, To: to}})
}

// legs is each leg's state of seat on the shard: "-" free, "h" held, "b"
// booked.
func (w *tripWorld) legs(t *testing.T, seat string) string {
	t.Helper()
	var s string
	require.NoError(t, w.pool.QueryRow(t.Context(), `
		SELECT string_agg(CASE status WHEN 'available' THEN '-' WHEN 'held' THEN 'h' ELSE 'b' END, '' ORDER BY leg)
		FROM seats WHERE show_id = $1 AND seat = $2`, w.show.ID, seat).Scan(&s))
	return s
}

// TestJourneysShareASeatAndFreeOnlyTheirOwnLegs: one seat sold to two
// buyers on journeys that share no leg, refused to a third whose journey
// overlaps both; priced by the fares, one order line per seat; its buyers'
// cancellation, release and expiry each free their own legs only; the
// seat check counts seat-legs, so the two sales are not a double booking;
// and the answers and events name the journey.
func TestJourneysShareASeatAndFreeOnlyTheirOwnLegs(t *testing.T) {
	w := newTripWorld(t)
	ctx := t.Context()
	first, err := w.hold(t, "rahim", "dhaka", "cumilla", "A1")
	require.NoError(t, err)
	second, err := w.hold(t, "karim", "cumilla", "chattogram", "A1")
	require.NoError(t, err)
	require.Equal(t, "hhh", w.legs(t, "A1"), "one seat, three legs, two holds")
	_, err = w.hold(t, "salma", "dhaka", "chattogram", "A1")
	require.Equal(t, fault.SeatsUnavailable, fault.ReasonOf(err), "%v", err)
	_, err = w.hold(t, "salma", "feni", "chattogram", "A1")
	require.Equal(t, fault.JourneyNotSold, fault.ReasonOf(err), "%v", err)

	require.EqualValues(t, 40000, first.AmountMinor, "Dhaka → Cumilla's fare")
	require.EqualValues(t, 90000, second.AmountMinor, "Cumilla → Chattogram's fare")
	require.Equal(t, Journey{From: 0, To: 1}, first.Journey)
	require.Equal(t, "Dhaka", first.View.GetFromName())
	require.Equal(t, "কুমিল্লা", second.View.GetFromNameBn())
	require.Equal(t, w.show.StartsAt.Add(2*time.Hour), second.View.GetDepartsAt().AsTime())
	require.Equal(t, "2030-03-31T12:00:00+06:00", second.View.GetDepartsAtLocal().GetWallTime())

	// An order: one line per seat, the fare; the journey on it.
	order, err := w.svc.CreateOrder(ctx, "rahim", first.ID)
	require.NoError(t, err)
	require.Equal(t, []Line{{Seat: "A1", Quantity: 1, AmountMinor: 40000}}, order.Lines)
	require.Equal(t, first.Journey, order.Journey)
	require.Equal(t, "cumilla", order.View.GetToStopId())
	require.NoError(t, pg.InTx(ctx, w.pool, func(tx pgx.Tx) error {
		_, err := ConfirmOrder(ctx, tx, order.ID, "pay_x", "txn_x", journeyNow)
		return err
	}))
	require.Equal(t, "bhh", w.legs(t, "A1"))
	second2, err := w.svc.CreateOrder(ctx, "karim", second.ID)
	require.NoError(t, err)
	require.NoError(t, pg.InTx(ctx, w.pool, func(tx pgx.Tx) error {
		_, err := ConfirmOrder(ctx, tx, second2.ID, "pay_y", "txn_y", journeyNow)
		return err
	}))
	require.Equal(t, "bbb", w.legs(t, "A1"))
	twice, err := w.svc.CheckSeats(ctx)
	require.NoError(t, err)
	require.Zero(t, twice, "two journeys on one seat share no leg")

	// Cancelling the first order frees its leg only.
	none := func(context.Context, pgx.Tx, string) (bool, error) { return false, nil }
	require.NoError(t, pg.InTx(ctx, w.pool, func(tx pgx.Tx) error {
		o, err := CancelConfirmed(ctx, tx, "rahim", order.ID, journeyNow, none)
		require.Equal(t, "dhaka", o.View.GetFromStopId())
		return err
	}))
	require.Equal(t, "-bb", w.legs(t, "A1"))

	// A release frees its legs only; so does an expiry.
	third, err := w.hold(t, "salma", "dhaka", "cumilla", "A1")
	require.NoError(t, err)
	other, err := w.hold(t, "nila", "", "", "A2")
	require.NoError(t, err)
	require.EqualValues(t, 120000, other.AmountMinor, "the whole trip's fare")
	_, err = w.hold(t, "tania", "cumilla", "feni", "A3")
	require.NoError(t, err)
	_, err = w.hold(t, "tania", "dhaka", "cumilla", "A3")
	require.NoError(t, err)
	_, err = w.svc.ReleaseHold(ctx, "salma", third.ID)
	require.NoError(t, err)
	require.Equal(t, "-bb", w.legs(t, "A1"))
	w.clock.Advance(11 * time.Minute)
	n, err := w.svc.Sweep(ctx, 100)
	require.NoError(t, err)
	require.Equal(t, 3, n, "nila's and tania's holds ran out")
	require.Equal(t, "---", w.legs(t, "A2"))
	require.Equal(t, "---", w.legs(t, "A3"))
	require.Equal(t, "-bb", w.legs(t, "A1"), "the sold legs stay sold")

	// The events name the journey.
	held := outboxEvents(t, w.pool, func() *eventsv1.SeatsHeld { return &eventsv1.SeatsHeld{} })
	require.Equal(t, "cumilla", held[1].GetJourney().GetFromStopId())
	require.Equal(t, "Chattogram", held[1].GetJourney().GetToName())
	confirmed := outboxEvents(t, w.pool, func() *eventsv1.BookingConfirmed { return &eventsv1.BookingConfirmed{} })
	require.Equal(t, "Cumilla", confirmed[0].GetJourney().GetToName())
	expired := outboxEvents(t, w.pool, func() *eventsv1.HoldExpired { return &eventsv1.HoldExpired{} })
	require.Len(t, expired, 3)
	require.NotNil(t, expired[0].GetJourney())
}

// outboxEvents decodes the shard's outbox events of one type, in order.
func outboxEvents[M proto.Message](t *testing.T, pool *pg.Pool, newMsg func() M) []M {
	t.Helper()
	rows, err := pool.Query(t.Context(), `SELECT payload FROM outbox WHERE event_type = $1 ORDER BY id`,
		string(newMsg().ProtoReflect().Descriptor().FullName()))
	require.NoError(t, err)
	payloads, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	require.NoError(t, err)
	var out []M
	for _, p := range payloads {
		m := newMsg()
		require.NoError(t, proto.Unmarshal(p, m))
		out = append(out, m)
	}
	return out
}

// TestJourneyPrices: a seat is priced by its journey's fare in its class,
// else the pair's fare for every class; a pair without either is not sold,
// whatever the other seats of the hold (decision 0352).
func TestJourneyPrices(t *testing.T) {
	w := newTripWorld(t)
	for i, tc := range []struct {
		from, to string
		seats    []string
		want     int64  // the hold's amount
		refused  string // or the reason
	}{
		{"", "", []string{"A1"}, 120000, ""},
		{"dhaka", "chattogram", []string{"K1"}, 200000, ""},
		{"dhaka", "chattogram", []string{"A2", "K2"}, 320000, ""},
		{"dhaka", "cumilla", []string{"K3"}, 40000, ""},
		{"cumilla", "", []string{"A3", "A4"}, 180000, ""},
		{"cumilla", "feni", []string{"B1"}, 30000, ""},
		{"dhaka", "feni", []string{"B2"}, 0, "JOURNEY_NOT_SOLD"},
		{"feni", "chattogram", []string{"B3", "B4"}, 0, "JOURNEY_NOT_SOLD"},
		{"dhaka", "cumilla", []string{"B3", "Z9"}, 0, "BOOKING_INVALID"},
	} {
		h, err := w.hold(t, fmt.Sprintf("buyer%d", i), tc.from, tc.to, tc.seats...)
		if tc.refused != "" {
			require.Equal(t, fault.Reason(tc.refused), fault.ReasonOf(err), "%s → %s %v: %v", tc.from, tc.to, tc.seats, err)
			continue
		}
		require.NoError(t, err, "%s → %s %v", tc.from, tc.to, tc.seats)
		require.Equal(t, tc.want, h.AmountMinor, "%s → %s %v", tc.from, tc.to, tc.seats)
	}
}

// TestSeatMapPerJourney: the shard's seat map keeps every leg; a journey's
// view shows a seat free only when every leg of it is, prices each section
// by its fare, shows a class without one taken, and has a layout etag of
// its own; the whole map and the availability give the same view.
func TestSeatMapPerJourney(t *testing.T) {
	w := newTripWorld(t)
	ctx := t.Context()
	_, err := w.hold(t, "rahim", "cumilla", "feni", "A1")
	require.NoError(t, err)
	_, err = w.hold(t, "karim", "dhaka", "cumilla", "A2")
	require.NoError(t, err)
	m, err := w.svc.SeatMap(ctx, w.show.ID)
	require.NoError(t, err)
	require.Equal(t, 3, m.Legs)
	require.Equal(t, 16, m.SeatCount)
	require.Len(t, m.States, 3*16/4, "three legs of 16 places")
	state := func(v SeatMap, i int) byte { return v.States[i/4] >> (2 * (i % 4)) & 3 }
	for _, tc := range []struct {
		from, to   string
		a1, a2, k1 byte
		economy    int64
		business   int64
	}{
		{"dhaka", "chattogram", SeatHeld, SeatHeld, SeatAvailable, 120000, 200000},
		{"dhaka", "cumilla", SeatAvailable, SeatHeld, SeatAvailable, 40000, 40000},
		{"cumilla", "feni", SeatHeld, SeatAvailable, SeatAvailable, 30000, 30000},
		{"cumilla", "chattogram", SeatHeld, SeatAvailable, SeatAvailable, 90000, 90000},
	} {
		f, to, err := m.JourneyOf(tc.from, tc.to)
		require.NoError(t, err)
		v, err := m.Journey(f, to)
		require.NoError(t, err)
		require.Zero(t, v.Legs, "one leg")
		require.Equal(t, []byte{tc.a1, tc.a2}, []byte{state(v, 0), state(v, 1)}, "%s → %s", tc.from, tc.to)
		require.Equal(t, tc.k1, state(v, 12), "%s → %s", tc.from, tc.to)
		require.Equal(t, tc.economy, v.Sections[0].PriceMinor, "%s → %s", tc.from, tc.to)
		require.Equal(t, tc.business, v.Sections[1].PriceMinor, "%s → %s", tc.from, tc.to)
		a, err := m.Availability().Journey(f, to)
		require.NoError(t, err)
		require.Equal(t, v.States, a.States, "the map's view and the availability's are one")
		require.Equal(t, v.LayoutETag(), a.LayoutETag)
		require.Equal(t, tc.from, a.FromStopID)
	}
	full, _ := m.Journey(0, 3)
	short, _ := m.Journey(0, 1)
	require.NotEqual(t, full.LayoutETag(), short.LayoutETag(), "each journey's prices are a layout of their own")
	require.NotEqual(t, m.LayoutETag(), full.LayoutETag())

	// Unsold: a class without a fare shows taken; a pair without any is
	// refused; stops the trip lacks are invalid.
	_, _, err = m.JourneyOf("feni", "sylhet")
	require.Equal(t, "to_stop_id", fieldOfErr(err))
	_, _, err = m.JourneyOf("feni", "dhaka")
	require.Equal(t, "to_stop_id", fieldOfErr(err))
	_, err = m.Journey(2, 3)
	require.Equal(t, fault.JourneyNotSold, fault.ReasonOf(err))
	withBusinessOnly := m
	withBusinessOnly.Fares = []MapFare{{From: 0, To: 3, SeatClass: "business", PriceMinor: 1}}
	v, err := withBusinessOnly.Journey(0, 3)
	require.NoError(t, err)
	require.Equal(t, byte(SeatBooked), state(v, 5), "economy is not sold for the journey: shown taken")
	require.Equal(t, byte(SeatAvailable), state(v, 13))
	require.Len(t, v.States, 4, "a journey's view: one leg of 16 seats")
}

func fieldOfErr(err error) string {
	e, _ := fault.As(err)
	if e == nil {
		return ""
	}
	return e.Field
}

// TestAllocationIsOfEveryLeg: a partner's allocation takes a seat on every
// leg (decision 0355), so a seat one leg of which is held is not
// allocatable, and an allocated one is no public journey's.
func TestAllocationIsOfEveryLeg(t *testing.T) {
	w := newTripWorld(t)
	ctx := t.Context()
	_, err := w.hold(t, "rahim", "feni", "chattogram", "A1")
	require.Equal(t, fault.JourneyNotSold, fault.ReasonOf(err))
	_, err = w.hold(t, "rahim", "cumilla", "feni", "A1")
	require.NoError(t, err)
	admin := Caller{UserID: "admin", Admin: true}
	_, err = w.svc.AllocateSeats(ctx, admin, AllocationRequest{ShowID: w.show.ID, PartnerID: 7, Seats: []string{"A1", "A2"},
		ReturnAt: journeyNow.Add(24 * time.Hour)})
	require.Equal(t, fault.SeatsNotAllocatable, fault.ReasonOf(err), "%v", err)
	e, _ := fault.As(err)
	require.Equal(t, []string{"A1"}, e.Seats)
	a, err := w.svc.AllocateSeats(ctx, admin, AllocationRequest{ShowID: w.show.ID, PartnerID: 7, Seats: []string{"A2"},
		ReturnAt: journeyNow.Add(24 * time.Hour)})
	require.NoError(t, err)
	require.Equal(t, []string{"A2"}, a.Seats)
	require.Equal(t, 1, a.Available)
	var allocated int
	require.NoError(t, w.pool.QueryRow(ctx, `SELECT count(*) FROM seats WHERE show_id = $1 AND seat = 'A2' AND allocated_partner_id = 7`,
		w.show.ID).Scan(&allocated))
	require.Equal(t, 3, allocated, "every leg")
	_, err = w.hold(t, "karim", "dhaka", "cumilla", "A2")
	require.Equal(t, fault.SeatsNotInChannel, fault.ReasonOf(err))
	released, err := w.svc.ReleaseAllocation(ctx, admin, a.ID, nil, 0)
	require.NoError(t, err)
	require.Equal(t, AllocationReleased, released.Status)
	_, err = w.hold(t, "karim", "dhaka", "cumilla", "A2")
	require.NoError(t, err)
}
