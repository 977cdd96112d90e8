package api_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"connectrpc.com/connect"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/catalog"
)

// pricedShow is a venue of three sections of two rows of four: Front at
// 1,000 taka, Middle and Back at 500, of org "price-org".
func pricedShow(t *testing.T, env *apptest.Env) int64 {
	t.Helper()
	req := seatedShow("Three prices", 1, 1)
	req.OrganizationId, req.MaxSeatsPerAccount, req.MaxSeatsPerHold = "price-org", 2, 2
	req.Sections = []*catalogv1.Section{
		{Name: "Front", Rows: []string{"A", "B"}, SeatsPerRow: 4, PriceMinor: 100000},
		{Name: "Middle", Rows: []string{"C", "D"}, SeatsPerRow: 4, PriceMinor: 50000},
		{Name: "Back", Rows: []string{"E", "F"}, SeatsPerRow: 4, PriceMinor: 50000},
	}
	return createShow(t, env, req).GetShowId()
}

// sectionPrices is a show's price of each section, as GetShow answers.
func sectionPrices(t *testing.T, c clients, show int64) map[string]int64 {
	sections, _ := showPrices(t, c, show)
	return sections
}

// areaPrices is a show's price of each general-admission area.
func areaPrices(t *testing.T, c clients, show int64) map[string]int64 {
	_, areas := showPrices(t, c, show)
	return areas
}

func showPrices(t *testing.T, c clients, show int64) (sections, areas map[string]int64) {
	t.Helper()
	got, err := c.catalog.GetShow(context.Background(), connect.NewRequest(&catalogv1.GetShowRequest{ShowId: show}))
	require.NoError(t, err)
	sections, areas = map[string]int64{}, map[string]int64{}
	for _, s := range got.Msg.GetShow().GetSections() {
		sections[s.GetName()] = s.GetPriceMinor()
	}
	for _, a := range got.Msg.GetShow().GetGaAreas() {
		areas[a.GetName()] = a.GetPriceMinor()
	}
	return sections, areas
}

// buyAtHeldPrice holds with req and orders the hold as user, while
// prices may change: it returns what the order charged, or what went
// wrong (the hold or the order refused, or the order charged other than
// the amount of the hold the buyer was shown).
func buyAtHeldPrice(ctx context.Context, t *testing.T, env *apptest.Env, user string, req *bookingv1.CreateHoldRequest) (int64, string) {
	b := newBuyer(t, env, user)
	h, err := b.holds.CreateHold(ctx, connect.NewRequest(req))
	if err != nil {
		return 0, fmt.Sprintf("hold of %s: %v", user, err)
	}
	o, err := b.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: h.Msg.GetHold().GetHoldId()}))
	if err != nil {
		return 0, fmt.Sprintf("order of %s: %v", user, err)
	}
	charged, held := o.Msg.GetOrder().GetTotal().GetAmountMinor(), h.Msg.GetHold().GetAmount().GetAmountMinor()
	if charged != held {
		return 0, fmt.Sprintf("%s held at %d, charged %d", user, held, charged)
	}
	return charged, ""
}

// TestSectionPriceChangesOnlyWhileUnsold (decision 0459): a manager
// changes the price of a section nobody has held; a request that also
// changes a section with a seat held is refused whole (PRICE_FROZEN),
// nothing written; a seat held before the change is ordered at the price
// it was held at, one held after at the new price; a section the show
// has not is refused with its field.
func TestSectionPriceChangesOnlyWhileUnsold(t *testing.T) {
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Shards: 2})
	env.Member(t, "price-org", "price-mgr", catalog.RoleManager)
	mgr := as(t, env, "price-mgr", auth.RoleOperator)
	show := pricedShow(t, env)
	update := func(prices ...*catalogv1.SectionPrice) error {
		_, err := mgr.catalog.UpdateShow(ctx, connect.NewRequest(&catalogv1.UpdateShowRequest{ShowId: show,
			SectionPrices: prices, Reason: "demand"}))
		return err
	}
	early := newBuyer(t, env, "early-fan")
	held, err := early.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{"A1"}}))
	require.NoError(t, err)

	err = update(&catalogv1.SectionPrice{Section: "Middle", PriceMinor: 60000}, &catalogv1.SectionPrice{Section: "Front", PriceMinor: 120000})
	requireReason(t, err, connect.CodeFailedPrecondition, "PRICE_FROZEN")
	require.Equal(t, map[string]int64{"Front": 100000, "Middle": 50000, "Back": 50000}, sectionPrices(t, mgr, show), "nothing written")
	err = update(&catalogv1.SectionPrice{Section: "Balcony", PriceMinor: 1})
	requireReason(t, err, connect.CodeInvalidArgument, "SHOW_INVALID")
	require.Equal(t, []string{"section_prices[0].section"}, answerOf(t, err).fields)

	require.NoError(t, update(&catalogv1.SectionPrice{Section: "Middle", PriceMinor: 60000}))
	require.NoError(t, update(&catalogv1.SectionPrice{Section: "Middle", PriceMinor: 60000}), "the same again changes nothing")
	require.Equal(t, map[string]int64{"Front": 100000, "Middle": 60000, "Back": 50000}, sectionPrices(t, mgr, show))

	first, err := early.orders.CreateOrder(ctx, connect.NewRequest(&bookingv1.CreateOrderRequest{HoldId: held.Msg.GetHold().GetHoldId()}))
	require.NoError(t, err)
	require.EqualValues(t, 100000, first.Msg.GetOrder().GetTotal().GetAmountMinor(), "held before: the price it was held at")
	late := newBuyer(t, env, "late-fan").orderWith(show, nil, "C1")
	require.EqualValues(t, 60000, late.GetTotal().GetAmountMinor(), "held after: the new price")

	audit, err := mgr.catalog.ListAuditEntries(ctx, connect.NewRequest(&catalogv1.ListAuditEntriesRequest{
		OrganizationId: "price-org", Action: "show.update"}))
	require.NoError(t, err)
	require.Len(t, audit.Msg.GetEntries(), 1, "one change recorded: the refused and the repeated requests wrote none")
	after := audit.Msg.GetEntries()[0].GetDetail().GetFields()["after"].GetStructValue().GetFields()
	require.EqualValues(t, 60000, after["price_minor:Middle"].GetNumberValue())
}

// TestSectionPriceRaceWithHolds (decision 0459): eight buyers hold and
// order the eight seats of Back while four requests raise its price. A
// change either comes first, and every later hold pays it, or finds a
// seat held and is refused; no buyer is ever charged other than the price
// of the hold they were shown.
func TestSectionPriceRaceWithHolds(t *testing.T) {
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Shards: 1})
	env.Member(t, "price-org", "price-mgr", catalog.RoleManager)
	mgr := as(t, env, "price-mgr", auth.RoleOperator)
	show := pricedShow(t, env)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		changed  int
		problems []string
	)
	for i := range 8 {
		wg.Go(func() {
			seat := fmt.Sprintf("%c%d", 'E'+rune(i/4), i%4+1)
			_, problem := buyAtHeldPrice(ctx, t, env, fmt.Sprintf("racing-fan-%d", i),
				&bookingv1.CreateHoldRequest{ShowId: show, Seats: []string{seat}})
			if problem != "" {
				mu.Lock()
				problems = append(problems, problem)
				mu.Unlock()
			}
		})
	}
	for range 4 {
		wg.Go(func() {
			_, err := mgr.catalog.UpdateShow(ctx, connect.NewRequest(&catalogv1.UpdateShowRequest{ShowId: show,
				SectionPrices: []*catalogv1.SectionPrice{{Section: "Back", PriceMinor: 70000}}}))
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				changed++
				return
			}
			if a := answerOf(t, err); a.reason != "PRICE_FROZEN" {
				problems = append(problems, fmt.Sprintf("price change: %v", err))
			}
		})
	}
	wg.Wait()
	require.Empty(t, problems)
	want := int64(50000)
	if changed > 0 {
		want = 70000
	}
	require.Equal(t, want, sectionPrices(t, mgr, show)["Back"], "the catalog says what the shard sells at")
	pool, err := env.App.Router.Shard(0)
	require.NoError(t, err)
	rows, err := pool.Query(ctx, `SELECT DISTINCT price_minor FROM seats WHERE show_id = $1 AND section = 'Back'`, show)
	require.NoError(t, err)
	sold, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	require.NoError(t, err)
	require.Equal(t, []int64{want}, sold, "every seat of the section at the one price")
}

// gaPricedShow is a venue with seats (Main) and two general-admission
// areas of 12 places, Floor at 1,500 taka and Balcony at 800, of org
// "price-org".
func gaPricedShow(t *testing.T, env *apptest.Env) int64 {
	t.Helper()
	req := seatedShow("Two areas", 1, 2)
	req.OrganizationId = "price-org"
	req.GaAreas = []*catalogv1.GaArea{{Name: "Floor", Capacity: 12, PriceMinor: 150000, Buckets: 3},
		{Name: "Balcony", Capacity: 12, PriceMinor: 80000, Buckets: 3}}
	return createShow(t, env, req).GetShowId()
}

// TestAreaPriceChangesOnlyWhileUnsold (decision 0474): a general-admission
// area's price changes as a section's does: refused whole while one of its
// places is held (PRICE_FROZEN), an unknown area refused with its field,
// and a hold taken after the change pays the new price.
func TestAreaPriceChangesOnlyWhileUnsold(t *testing.T) {
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Shards: 2})
	env.Member(t, "price-org", "price-mgr", catalog.RoleManager)
	mgr := as(t, env, "price-mgr", auth.RoleOperator)
	show := gaPricedShow(t, env)
	update := func(prices ...*catalogv1.GaAreaPrice) error {
		_, err := mgr.catalog.UpdateShow(ctx, connect.NewRequest(&catalogv1.UpdateShowRequest{ShowId: show,
			GaAreaPrices: prices, Reason: "demand"}))
		return err
	}
	fan := newBuyer(t, env, "floor-fan")
	_, err := fan.holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show, GaArea: "Floor", Quantity: proto.Int32(2)}))
	require.NoError(t, err)

	err = update(&catalogv1.GaAreaPrice{GaArea: "Balcony", PriceMinor: 100000}, &catalogv1.GaAreaPrice{GaArea: "Floor", PriceMinor: 180000})
	requireReason(t, err, connect.CodeFailedPrecondition, "PRICE_FROZEN")
	require.Equal(t, map[string]int64{"Floor": 150000, "Balcony": 80000}, areaPrices(t, mgr, show), "nothing written")
	err = update(&catalogv1.GaAreaPrice{GaArea: "Roof", PriceMinor: 1})
	requireReason(t, err, connect.CodeInvalidArgument, "SHOW_INVALID")
	require.Equal(t, []string{"ga_area_prices[0].ga_area"}, answerOf(t, err).fields)

	require.NoError(t, update(&catalogv1.GaAreaPrice{GaArea: "Balcony", PriceMinor: 100000}))
	require.NoError(t, update(&catalogv1.GaAreaPrice{GaArea: "Balcony", PriceMinor: 100000}), "the same again changes nothing")
	require.Equal(t, map[string]int64{"Floor": 150000, "Balcony": 100000}, areaPrices(t, mgr, show))
	h, err := newBuyer(t, env, "balcony-fan").holds.CreateHold(ctx, connect.NewRequest(&bookingv1.CreateHoldRequest{ShowId: show,
		GaArea: "Balcony", Quantity: proto.Int32(3)}))
	require.NoError(t, err)
	require.EqualValues(t, 300000, h.Msg.GetHold().GetAmount().GetAmountMinor(), "three places at the new price")

	audit, err := mgr.catalog.ListAuditEntries(ctx, connect.NewRequest(&catalogv1.ListAuditEntriesRequest{
		OrganizationId: "price-org", Action: "show.update"}))
	require.NoError(t, err)
	require.Len(t, audit.Msg.GetEntries(), 1, "one change recorded")
	after := audit.Msg.GetEntries()[0].GetDetail().GetFields()["after"].GetStructValue().GetFields()
	require.EqualValues(t, 100000, after["price_minor:area:Balcony"].GetNumberValue())
}

// TestAreaPriceRaceWithHolds (decision 0474): eight buyers hold and order
// a Balcony place each while four requests raise its price, one after
// another. Each change comes before every hold that pays it or is refused
// by a place held; every order is charged its hold's amount, which is one
// of the prices the area had.
func TestAreaPriceRaceWithHolds(t *testing.T) {
	ctx := context.Background()
	env := apptest.New(t, apptest.Options{Shards: 1})
	env.Member(t, "price-org", "price-mgr", catalog.RoleManager)
	mgr := as(t, env, "price-mgr", auth.RoleOperator)
	show := gaPricedShow(t, env)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		paid     []int64
		problems []string
	)
	for i := range 8 {
		wg.Go(func() {
			charged, problem := buyAtHeldPrice(ctx, t, env, fmt.Sprintf("racing-balcony-%d", i),
				&bookingv1.CreateHoldRequest{ShowId: show, GaArea: "Balcony", Quantity: proto.Int32(1)})
			mu.Lock()
			defer mu.Unlock()
			if problem != "" {
				problems = append(problems, problem)
				return
			}
			paid = append(paid, charged)
		})
	}
	set := []int64{80000}
	wg.Go(func() {
		for _, price := range []int64{90000, 100000, 110000, 120000} {
			_, err := mgr.catalog.UpdateShow(ctx, connect.NewRequest(&catalogv1.UpdateShowRequest{ShowId: show,
				GaAreaPrices: []*catalogv1.GaAreaPrice{{GaArea: "Balcony", PriceMinor: price}}}))
			mu.Lock()
			switch {
			case err == nil:
				set = append(set, price)
			case reasonIn(err) != "PRICE_FROZEN":
				problems = append(problems, fmt.Sprintf("change to %d: %v", price, err))
			}
			mu.Unlock()
		}
	})
	wg.Wait()
	require.Empty(t, problems)
	require.Len(t, paid, 8)
	for _, p := range paid {
		require.Contains(t, set, p, "a price the area had")
	}
	require.Equal(t, set[len(set)-1], areaPrices(t, mgr, show)["Balcony"], "the catalog says the last price set")
}
