package catalog_test

import (
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	eventsv1 "github.com/seatghor/seatghor/gen/seatghor/events/v1"
	"github.com/seatghor/seatghor/internal/testkit/pgtest"
	"github.com/seatghor/seatghor/internal/testkit/schematest"
	"github.com/seatghor/seatghor/server/audit"
	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/idempotency"
	"github.com/seatghor/seatghor/server/migrations"
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

// platform is a catalog database and its shards, fresh for one test, opened
// as the application opens them (role seatghor_app), with a fake clock.
type platform struct {
	router *shard.Router
	clock  *clock.Fake
}

func newPlatform(t *testing.T, shards int) *platform {
	t.Helper()
	open := func(name string, kind migrations.Kind) *pg.Pool {
		pool, err := pg.Open(t.Context(), name, schematest.Fresh(t, kind), 4, pg.WithRole(pg.AppRole))
		require.NoError(t, err)
		t.Cleanup(pool.Close)
		return pool
	}
	cat := open("catalog", migrations.Catalog)
	var pools []*pg.Pool
	for i := range shards {
		pools = append(pools, open("shard-"+string(rune('0'+i)), migrations.Shard))
	}
	return &platform{router: shard.NewRouter(cat, pools), clock: clock.NewFake(t0)}
}

func (p *platform) service(opts ...catalog.Option) *catalog.Service {
	return catalog.NewService(p.router, p.clock, booking.Inventory{}, opts...)
}

// count counts the rows of a query on db.
func count(t *testing.T, db *pg.Pool, sql string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, db.QueryRow(t.Context(), sql, args...).Scan(&n))
	return n
}

// events returns the catalog's outbox events of one type, decoded into
// messages made by newMsg, in order; each row's show_id must be its
// event's.
func events[M proto.Message](t *testing.T, p *platform, newMsg func() M) []M {
	t.Helper()
	want := string(newMsg().ProtoReflect().Descriptor().FullName())
	type row struct {
		ShowID  int64
		Payload []byte
	}
	rows, err := p.router.Catalog().Query(t.Context(), `SELECT show_id, payload FROM outbox WHERE event_type = $1 ORDER BY id`, want)
	require.NoError(t, err)
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[row])
	require.NoError(t, err)
	var out []M
	for _, r := range got {
		m := newMsg()
		require.NoError(t, proto.Unmarshal(r.Payload, m))
		// Every catalog event names its show; the outbox row is keyed by it.
		showID := m.ProtoReflect().Get(m.ProtoReflect().Descriptor().Fields().ByName("show_id")).Int()
		require.Equal(t, showID, r.ShowID, "the outbox row of %s is its show's", want)
		out = append(out, m)
	}
	return out
}

func published(t *testing.T, p *platform) []*eventsv1.ShowPublished {
	return events(t, p, func() *eventsv1.ShowPublished { return &eventsv1.ShowPublished{} })
}

// concert is a show request an admin may make: two sections of seats and
// two GA areas.
func concert(title string) catalog.NewShow {
	return catalog.NewShow{Admin: true, Show: catalog.Show{
		Kind: catalogv1.ShowKind_SHOW_KIND_CONCERT, Title: title, Venue: "Army Stadium", Currency: "BDT",
		StartsAt: t0.Add(30 * 24 * time.Hour),
		Sections: []catalog.Section{
			{Name: "Front", NameBn: "সামনে", Rows: []string{"A", "B"}, SeatsPerRow: 3, PriceMinor: 150000},
			{Name: "Back", Rows: []string{"C"}, SeatsPerRow: 2, PriceMinor: 90000},
		},
		GAAreas: []catalog.GAArea{
			{Name: "Field", Capacity: 600, PriceMinor: 80000},
			{Name: "Pit", Capacity: 5, Buckets: 2, PriceMinor: 120000},
		},
	}}
}

// fieldOf returns the field a SHOW_INVALID or SHOW_FIELD_FORBIDDEN error
// names, and which of the two it is.
func fieldOf(t *testing.T, err error) (kind, field string) {
	t.Helper()
	e, ok := fault.As(err)
	switch {
	case ok && e.Reason == fault.ShowInvalid:
		return "invalid", e.Field
	case ok && e.Reason == fault.ShowFieldForbidden:
		return "forbidden", e.Field
	}
	t.Fatalf("want SHOW_INVALID or SHOW_FIELD_FORBIDDEN, got %v", err)
	return "", ""
}

// TestCreateShowWritesTheShowItsSeatsAndItsEvent: a show is written to the
// catalog, its rules, one row per seat and its GA buckets to the shard it is
// placed on, and ShowPublished to the catalog's outbox, all in one go.
func TestCreateShowWritesTheShowItsSeatsAndItsEvent(t *testing.T) {
	t.Parallel()
	p := newPlatform(t, 2)
	svc := p.service()
	ctx := t.Context()

	in := concert("Shironamhin live")
	in.RequestedShard = new(int32(1))
	show, err := svc.CreateShow(ctx, "admin", in)
	require.NoError(t, err)
	require.NotZero(t, show.ID)
	require.Equal(t, 1, show.Shard, "the shard asked for")
	require.Equal(t, 8, show.SeatCount)
	require.Equal(t, "admin", show.Operator)
	require.Equal(t, []int{3, 2}, []int{show.GAAreas[0].Buckets, show.GAAreas[1].Buckets})

	got, err := svc.GetShow(ctx, show.ID)
	require.NoError(t, err)
	want := show
	want.GAAreas = []catalog.GAArea{show.GAAreas[0], show.GAAreas[1]}
	want.GAAreas[0].Remaining, want.GAAreas[1].Remaining = 600, 5
	require.Equal(t, want, got, "the catalog reads back what CreateShow answered, with every GA place left")

	shard1, err := p.router.Shard(1)
	require.NoError(t, err)
	shard0, err := p.router.Shard(0)
	require.NoError(t, err)
	require.Zero(t, count(t, shard0, `SELECT count(*) FROM seats`), "nothing on the other shard")
	type seat struct {
		Seat, Section, Row string
		Position           int
		Price              int64
	}
	rows, err := shard1.Query(ctx, `SELECT seat, section, row_label, position, price_minor FROM seats WHERE show_id = $1 ORDER BY position`, show.ID)
	require.NoError(t, err)
	seats, err := pgx.CollectRows(rows, pgx.RowToStructByPos[seat])
	require.NoError(t, err)
	require.Equal(t, []seat{
		{"A1", "Front", "A", 0, 150000}, {"A2", "Front", "A", 1, 150000}, {"A3", "Front", "A", 2, 150000},
		{"B1", "Front", "B", 3, 150000}, {"B2", "Front", "B", 4, 150000}, {"B3", "Front", "B", 5, 150000},
		{"C1", "Back", "C", 6, 90000}, {"C2", "Back", "C", 7, 90000},
	}, seats)

	type bucket struct {
		Area                string
		Bucket, Position    int
		Capacity, Remaining int
		Price               int64
	}
	rows, err = shard1.Query(ctx, `SELECT area, bucket, position, capacity, remaining, price_minor FROM ga_buckets WHERE show_id = $1 ORDER BY position, bucket`, show.ID)
	require.NoError(t, err)
	buckets, err := pgx.CollectRows(rows, pgx.RowToStructByPos[bucket])
	require.NoError(t, err)
	require.Equal(t, []bucket{
		{"Field", 0, 0, 200, 200, 80000}, {"Field", 1, 0, 200, 200, 80000}, {"Field", 2, 0, 200, 200, 80000},
		{"Pit", 0, 1, 3, 3, 120000}, {"Pit", 1, 1, 2, 2, 120000}, // the remainder goes to the first buckets
	}, buckets)

	var (
		onSale, starts                   time.Time
		ttl, ext, seatCap, perHold, comm int64
		fee                              int64
		zone                             string
	)
	require.NoError(t, shard1.QueryRow(ctx, `
		SELECT on_sale_at, starts_at, hold_ttl_ms, payment_extension_ms, max_seats_per_account, max_seats_per_hold,
		       commission_bps, cancellation_fee_bps, time_zone
		FROM shows WHERE show_id = $1`, show.ID).Scan(&onSale, &starts, &ttl, &ext, &seatCap, &perHold, &comm, &fee, &zone))
	require.Equal(t, []any{t0, in.StartsAt, int64(600000), int64(300000), int64(10), int64(10), int64(1000), int64(1000), "Asia/Dhaka"},
		[]any{onSale.UTC(), starts.UTC(), ttl, ext, seatCap, perHold, comm, fee, zone}, "the shard has the booking rules")

	events := published(t, p)
	require.Len(t, events, 1)
	require.Equal(t, show.ID, events[0].GetShowId())
	require.True(t, proto.Equal(show.Proto(), events[0].GetShow()), "the event carries the show")

	// A show with its own id cannot be made twice.
	in = concert("again")
	in.ID = show.ID
	_, err = svc.CreateShow(ctx, "admin", in)
	kind, field := fieldOf(t, err)
	require.Equal(t, []string{"invalid", "show_id"}, []string{kind, field})
	require.Len(t, published(t, p), 1)
	require.Equal(t, 8, count(t, shard1, `SELECT count(*) FROM seats`)+count(t, shard0, `SELECT count(*) FROM seats`),
		"the refused show's seats were not written")
}

// TestCreateShowRetriedAnswersTheFirst: a CreateShow with an idempotency key
// sent twice creates one show and answers it both times.
func TestCreateShowRetriedAnswersTheFirst(t *testing.T) {
	t.Parallel()
	p := newPlatform(t, 1)
	svc := p.service()
	ctx := idempotency.WithKey(t.Context(), idempotency.Key{Scope: "admin", Key: "k1", Procedure: "/CreateShow"})
	first, err := svc.CreateShow(ctx, "admin", concert("once"))
	require.NoError(t, err)
	p.clock.Advance(time.Second)
	again, err := svc.CreateShow(ctx, "admin", concert("once"))
	require.NoError(t, err)
	require.Equal(t, first, again)
	require.Equal(t, 1, count(t, p.router.Catalog(), `SELECT count(*) FROM shows`))
	require.Len(t, published(t, p), 1)
}

// TestCreateShowAuthorization (decision 0076): who may create a show for
// which organisation, and what a manager may not set. A refused request
// writes nothing anywhere.
func TestCreateShowAuthorization(t *testing.T) {
	t.Parallel()
	p := newPlatform(t, 2)
	ctx := t.Context()
	admin := p.service()
	_, err := admin.CreateOrganization(ctx, "admin", "hanif", "Hanif Enterprise", "")
	require.NoError(t, err)
	_, err = admin.SetMember(ctx, audit.Actor{Kind: audit.ActorAdmin, ID: "admin"}, "hanif", "mgr", catalog.RoleManager)
	require.NoError(t, err)
	_, err = admin.SetMember(ctx, audit.Actor{Kind: audit.ActorAdmin, ID: "admin"}, "hanif", "gate", catalog.RoleGate)
	require.NoError(t, err)
	strict := p.service(catalog.WithPolicy(catalog.Policy{MaxCancellationFeeBps: new(500)}))
	lenient := p.service(catalog.WithPolicy(catalog.Policy{MaxCancellationFeeBps: new(3000)}))

	type want struct {
		kind, field string // the refusal; empty: created
		operator    string
		fee, comm   int
		shard       int // compared when the request asks for one
	}
	for _, tc := range []struct {
		name string
		svc  *catalog.Service
		by   string
		edit func(*catalog.NewShow)
		want want
	}{
		{"an admin creates a show of the platform's own", admin, "admin", func(n *catalog.NewShow) {},
			want{operator: "admin", fee: 1000, comm: 1000}},
		{"an admin creates an organisation's show, named after it", admin, "admin", func(n *catalog.NewShow) {
			n.OrganizationID = "hanif"
		}, want{operator: "Hanif Enterprise", fee: 1000, comm: 1000}},
		{"an admin's operator name stays", admin, "admin", func(n *catalog.NewShow) {
			n.OrganizationID, n.Operator = "hanif", "Hanif Night Coach"
		}, want{operator: "Hanif Night Coach", fee: 1000, comm: 1000}},
		{"an admin sets the commission, the fee and the shard", admin, "admin", func(n *catalog.NewShow) {
			n.CommissionBps, n.CancellationFeeBps, n.RequestedShard = new(1500), new(9000), new(int32(1))
		}, want{operator: "admin", fee: 9000, comm: 1500, shard: 1}},
		{"an admin names an organisation that does not exist", admin, "admin", func(n *catalog.NewShow) {
			n.OrganizationID = "nobody"
		}, want{kind: "invalid", field: "organization_id"}},
		{"an admin asks for a shard that does not exist", admin, "admin", func(n *catalog.NewShow) {
			n.RequestedShard = new(int32(2))
		}, want{kind: "invalid", field: "shard"}},
		{"a manager creates the organisation's show", admin, "mgr", func(n *catalog.NewShow) {
			n.Admin, n.OrganizationID = false, "hanif"
		}, want{operator: "Hanif Enterprise", fee: 1000, comm: 1000}},
		{"a manager lowers the fee", admin, "mgr", func(n *catalog.NewShow) {
			n.Admin, n.OrganizationID, n.CancellationFeeBps = false, "hanif", new(0)
		}, want{operator: "Hanif Enterprise", fee: 0, comm: 1000}},
		{"a manager may not raise the fee above the default", admin, "mgr", func(n *catalog.NewShow) {
			n.Admin, n.OrganizationID, n.CancellationFeeBps = false, "hanif", new(1001)
		}, want{kind: "invalid", field: "cancellation_fee_bps"}},
		{"a manager sets the policy's highest fee", lenient, "mgr", func(n *catalog.NewShow) {
			n.Admin, n.OrganizationID, n.CancellationFeeBps = false, "hanif", new(3000)
		}, want{operator: "Hanif Enterprise", fee: 3000, comm: 1000}},
		{"under a lenient policy an unset fee is the default", lenient, "mgr", func(n *catalog.NewShow) {
			n.Admin, n.OrganizationID = false, "hanif"
		}, want{operator: "Hanif Enterprise", fee: 1000, comm: 1000}},
		{"under a strict policy an unset fee is the policy's highest", strict, "mgr", func(n *catalog.NewShow) {
			n.Admin, n.OrganizationID = false, "hanif"
		}, want{operator: "Hanif Enterprise", fee: 500, comm: 1000}},
		{"under a strict policy the default fee is too high", strict, "mgr", func(n *catalog.NewShow) {
			n.Admin, n.OrganizationID, n.CancellationFeeBps = false, "hanif", new(1000)
		}, want{kind: "invalid", field: "cancellation_fee_bps"}},
		{"an admin is not bound by the policy", strict, "admin", func(n *catalog.NewShow) {
			n.CancellationFeeBps = new(2000)
		}, want{operator: "admin", fee: 2000, comm: 1000}},
		{"a manager may not set the commission", admin, "mgr", func(n *catalog.NewShow) {
			n.Admin, n.OrganizationID, n.CommissionBps = false, "hanif", new(1000)
		}, want{kind: "forbidden", field: "commission_bps"}},
		{"a manager may not choose the shard", admin, "mgr", func(n *catalog.NewShow) {
			n.Admin, n.OrganizationID, n.RequestedShard = false, "hanif", new(int32(0))
		}, want{kind: "forbidden", field: "shard"}},
		{"a non-admin must name an organisation", admin, "mgr", func(n *catalog.NewShow) {
			n.Admin = false
		}, want{kind: "invalid", field: "organization_id"}},
		{"gate staff may not create shows", admin, "gate", func(n *catalog.NewShow) {
			n.Admin, n.OrganizationID = false, "hanif"
		}, want{kind: "forbidden", field: "organization_id"}},
		{"a stranger may not create an organisation's shows", admin, "stranger", func(n *catalog.NewShow) {
			n.Admin, n.OrganizationID = false, "hanif"
		}, want{kind: "forbidden", field: "organization_id"}},
		{"a manager of an organisation that does not exist", admin, "mgr", func(n *catalog.NewShow) {
			n.Admin, n.OrganizationID = false, "nobody"
		}, want{kind: "forbidden", field: "organization_id"}},
		{"a manager's show is validated too", admin, "mgr", func(n *catalog.NewShow) {
			n.Admin, n.OrganizationID, n.TimeZone = false, "hanif", "Dhaka"
		}, want{kind: "invalid", field: "time_zone"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := concert(tc.name)
			tc.edit(&in)
			before := count(t, p.router.Catalog(), `SELECT count(*) FROM shows`)
			beforeEvents := len(published(t, p))
			show, err := tc.svc.CreateShow(ctx, tc.by, in)
			if tc.want.kind != "" {
				kind, field := fieldOf(t, err)
				require.Equal(t, []string{tc.want.kind, tc.want.field}, []string{kind, field}, "error: %v", err)
				require.Equal(t, before, count(t, p.router.Catalog(), `SELECT count(*) FROM shows`), "no show")
				require.Len(t, published(t, p), beforeEvents, "no event")
				return
			}
			require.NoError(t, err)
			if in.RequestedShard == nil {
				tc.want.shard = show.Shard // the router's choice
			}
			require.Equal(t, tc.want, want{operator: show.Operator, fee: *show.CancellationFeeBps, comm: *show.CommissionBps,
				shard: show.Shard})
			got, err := admin.GetShow(ctx, show.ID)
			require.NoError(t, err)
			require.Equal(t, tc.want, want{operator: got.Operator, fee: *got.CancellationFeeBps, comm: *got.CommissionBps,
				shard: got.Shard}, "as stored")
			require.Len(t, published(t, p), beforeEvents+1)
		})
	}
	for _, pool := range p.router.Shards() {
		var shows, seats int
		require.NoError(t, pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM shows), (SELECT count(*) FROM seats)`).Scan(&shows, &seats))
		require.Equal(t, shows*8, seats, "every show on a shard has its seats, and no refused show wrote any")
	}
}

// TestJoinSale (decision 0034): a show joins another show's sale (its
// waiting room) only as the sale's manager or an admin, with the sale's
// settings and opening.
func TestJoinSale(t *testing.T) {
	t.Parallel()
	p := newPlatform(t, 1)
	ctx := t.Context()
	svc := p.service()
	_, err := svc.CreateOrganization(ctx, "admin", "hanif", "Hanif Enterprise", "")
	require.NoError(t, err)
	_, err = svc.CreateOrganization(ctx, "admin", "green", "Green Line", "")
	require.NoError(t, err)
	_, err = svc.SetMember(ctx, audit.Actor{Kind: audit.ActorAdmin, ID: "admin"}, "hanif", "mgr", catalog.RoleManager)
	require.NoError(t, err)
	_, err = svc.SetMember(ctx, audit.Actor{Kind: audit.ActorAdmin, ID: "admin"}, "green", "other-mgr", catalog.RoleManager)
	require.NoError(t, err)

	opens := t0.Add(time.Hour)
	first := concert("first of the sale")
	first.OrganizationID, first.OnSaleAt = "hanif", opens
	first.WaitingRoom = &catalog.WaitingRoom{MaxRate: 100}
	sale, err := svc.CreateShow(ctx, "admin", first)
	require.NoError(t, err)
	require.Equal(t, sale.ID, sale.WaitingRoom.SaleID, "a room of its own is named by its show")
	plain, err := svc.CreateShow(ctx, "admin", concert("no room"))
	require.NoError(t, err)

	join := func(by string, admin bool, edit func(*catalog.NewShow)) (catalog.Show, error) {
		in := concert("joins")
		in.Admin = admin
		if !admin {
			in.OrganizationID = map[string]string{"mgr": "hanif", "other-mgr": "green"}[by]
		}
		in.WaitingRoom = &catalog.WaitingRoom{SaleID: sale.ID}
		edit(&in)
		return svc.CreateShow(ctx, by, in)
	}
	member, err := join("admin", true, func(*catalog.NewShow) {})
	require.NoError(t, err)
	for _, tc := range []struct {
		name      string
		by        string
		admin     bool
		edit      func(*catalog.NewShow)
		refused   error  // a sentinel
		field     string // or the field of an InvalidError
		wantSale  int64
		wantOpens time.Time
	}{
		{name: "the sale's manager adds a show; it opens with the sale", by: "mgr", edit: func(*catalog.NewShow) {},
			wantSale: sale.ID, wantOpens: opens},
		{name: "an admin adds a show", by: "admin", admin: true, edit: func(*catalog.NewShow) {},
			wantSale: sale.ID, wantOpens: opens},
		{name: "a show naming another show of the sale joins the sale", by: "admin", admin: true,
			edit: func(n *catalog.NewShow) { n.WaitingRoom.SaleID = member.ID }, wantSale: sale.ID, wantOpens: opens},
		{name: "another organisation's manager may not", by: "other-mgr", edit: func(*catalog.NewShow) {},
			refused: catalog.ErrNotYourSale},
		{name: "a show with no room is no sale", by: "admin", admin: true,
			edit: func(n *catalog.NewShow) { n.WaitingRoom.SaleID = plain.ID }, field: "waiting_room.sale_id"},
		{name: "a show that does not exist is no sale", by: "admin", admin: true,
			edit: func(n *catalog.NewShow) { n.WaitingRoom.SaleID = 999999 }, field: "waiting_room.sale_id"},
		{name: "a joining show takes the sale's settings", by: "admin", admin: true,
			edit: func(n *catalog.NewShow) { n.WaitingRoom.MaxRate = 50 }, field: "waiting_room.sale_id"},
		{name: "a joining show opens when the sale opens", by: "admin", admin: true,
			edit: func(n *catalog.NewShow) { n.OnSaleAt = opens.Add(time.Minute) }, field: "on_sale_at"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := count(t, p.router.Catalog(), `SELECT count(*) FROM shows`)
			show, err := join(tc.by, tc.admin, tc.edit)
			switch {
			case tc.refused != nil:
				require.ErrorIs(t, err, tc.refused)
			case tc.field != "":
				kind, field := fieldOf(t, err)
				require.Equal(t, []string{"invalid", tc.field}, []string{kind, field}, "error: %v", err)
			default:
				require.NoError(t, err)
				require.Equal(t, tc.wantSale, show.WaitingRoom.SaleID)
				require.Equal(t, tc.wantOpens, show.OnSaleAt)
				require.Equal(t, sale.WaitingRoom.MaxRate, show.WaitingRoom.MaxRate, "the sale's settings")
				require.Equal(t, sale.WaitingRoom.EndsAt, show.WaitingRoom.EndsAt)
				return
			}
			require.Equal(t, before, count(t, p.router.Catalog(), `SELECT count(*) FROM shows`), "no show")
		})
	}

	// Once the sale's window has closed, no show joins it.
	p.clock.Set(sale.WaitingRoom.EndsAt)
	_, err = join("admin", true, func(*catalog.NewShow) {})
	kind, field := fieldOf(t, err)
	require.Equal(t, []string{"invalid", "waiting_room.sale_id"}, []string{kind, field}, "error: %v", err)
}

// TestGetShowAndListShows: a show reads back with the GA places its shard
// has left; shows are listed by start time, a page at a time, filtered by
// kind, start and staff.
func TestGetShowAndListShows(t *testing.T) {
	t.Parallel()
	p := newPlatform(t, 2)
	ctx := t.Context()
	svc := p.service()
	for id, name := range map[string]string{"hanif": "Hanif Enterprise", "green": "Green Line"} {
		_, err := svc.CreateOrganization(ctx, "admin", id, name, "")
		require.NoError(t, err)
	}
	_, err := svc.SetMember(ctx, audit.Actor{Kind: audit.ActorAdmin, ID: "admin"}, "hanif", "hanif-gate", catalog.RoleGate)
	require.NoError(t, err)
	_, err = svc.SetMember(ctx, audit.Actor{Kind: audit.ActorAdmin, ID: "admin"}, "green", "green-mgr", catalog.RoleManager)
	require.NoError(t, err)

	create := func(title string, kind catalogv1.ShowKind, in time.Duration, org string) int64 {
		n := concert(title)
		n.Kind, n.StartsAt, n.OrganizationID = kind, t0.Add(in), org
		show, err := svc.CreateShow(ctx, "admin", n)
		require.NoError(t, err)
		return show.ID
	}
	day := 24 * time.Hour
	concertKind, bus := catalogv1.ShowKind_SHOW_KIND_CONCERT, catalogv1.ShowKind_SHOW_KIND_BUS_TRIP
	s1 := create("s1", bus, 10*day, "hanif")
	s2 := create("s2", concertKind, 20*day, "")
	s3 := create("s3", concertKind, 5*day, "green")
	s4 := create("s4", concertKind, 20*day, "") // starts with s2: after it, by id
	s5 := create("s5", concertKind, 40*day, "hanif")

	// Four places of the Field are held and two of the Pit ring-fenced for
	// a partner: GetShow reads what is left for sale to everyone.
	bookings := booking.NewService(p.router, svc, p.clock, booking.Config{})
	_, err = bookings.CreateHold(ctx, "rumana", booking.HoldRequest{ShowID: s2, GAArea: "Field", Quantity: 4})
	require.NoError(t, err)
	_, err = bookings.AllocateSeats(ctx, booking.Caller{UserID: "admin", Admin: true}, booking.AllocationRequest{
		ShowID: s2, PartnerID: 7, GAArea: "Pit", Quantity: 2, ReturnAt: t0.Add(10 * day)})
	require.NoError(t, err)
	got, err := svc.GetShow(ctx, s2)
	require.NoError(t, err)
	require.Equal(t, []int{596, 3}, []int{got.GAAreas[0].Remaining, got.GAAreas[1].Remaining})
	_, err = svc.GetShow(ctx, 424242)
	require.ErrorIs(t, err, catalog.ErrNotFound)

	ids := func(shows []catalog.Show) []int64 {
		out := []int64{}
		for _, s := range shows {
			out = append(out, s.ID)
		}
		return out
	}
	var pages [][]int64
	token := ""
	for {
		shows, next, err := svc.ListShows(ctx, 2, token, catalog.ShowFilter{})
		require.NoError(t, err)
		pages = append(pages, ids(shows))
		if token = next; token == "" {
			break
		}
	}
	require.Equal(t, [][]int64{{s3, s1}, {s2, s4}, {s5}}, pages, "by start time, then id, each once")

	for _, tc := range []struct {
		name   string
		filter catalog.ShowFilter
		want   []int64
	}{
		{"every show", catalog.ShowFilter{}, []int64{s3, s1, s2, s4, s5}},
		{"bus trips", catalog.ShowFilter{Kind: bus}, []int64{s1}},
		{"from a start on", catalog.ShowFilter{StartsFrom: t0.Add(20 * day)}, []int64{s2, s4, s5}},
		{"concerts from a start on", catalog.ShowFilter{Kind: concertKind, StartsFrom: t0.Add(6 * day)}, []int64{s2, s4, s5}},
		{"gate staff's", catalog.ShowFilter{StaffOf: "hanif-gate"}, []int64{s1, s5}},
		{"a manager's", catalog.ShowFilter{StaffOf: "green-mgr"}, []int64{s3}},
		{"a buyer works for no one", catalog.ShowFilter{StaffOf: "rumana"}, []int64{}},
	} {
		shows, next, err := svc.ListShows(ctx, 0, "", tc.filter)
		require.NoError(t, err, tc.name)
		require.Empty(t, next, tc.name)
		require.Equal(t, tc.want, ids(shows), tc.name)
	}
	_, _, err = svc.ListShows(ctx, 2, "garbage", catalog.ShowFilter{})
	kind, field := fieldOf(t, err)
	require.Equal(t, []string{"invalid", "page_token"}, []string{kind, field})

	listed, err := svc.ShowListings(ctx, []int64{s1, s4, 424242})
	require.NoError(t, err)
	require.Len(t, listed, 2, "the shows that exist")
	require.Equal(t, "s4", listed[s4].Title)
	require.Equal(t, "Hanif Enterprise", listed[s1].Operator)
}

// TestOrganizationsAndMembers (decision 0075): organisations are made once
// by id; members have one role each, which HasRole answers.
func TestOrganizationsAndMembers(t *testing.T) {
	t.Parallel()
	p := newPlatform(t, 1)
	ctx := t.Context()
	svc := p.service()

	org, err := svc.CreateOrganization(ctx, "admin", "hanif", "Hanif Enterprise", "")
	require.NoError(t, err)
	require.Equal(t, catalog.Organization{ID: "hanif", Name: "Hanif Enterprise", CreatedBy: "admin", CreatedAt: t0}, org)
	p.clock.Advance(time.Minute)
	again, err := svc.CreateOrganization(ctx, "admin2", "hanif", "Hanif Enterprise", "")
	require.NoError(t, err)
	require.Equal(t, org, again, "the same organisation made again answers the first")
	_, err = svc.CreateOrganization(ctx, "admin", "hanif", "Hanif Paribahan", "")
	require.ErrorIs(t, err, catalog.ErrOrganizationExists)

	_, err = svc.SetMember(ctx, audit.Actor{Kind: audit.ActorAdmin, ID: "admin"}, "hanif", "u1", catalog.Role("owner"))
	kind, field := fieldOf(t, err)
	require.Equal(t, []string{"invalid", "role"}, []string{kind, field})
	_, err = svc.SetMember(ctx, audit.Actor{Kind: audit.ActorAdmin, ID: "admin"}, "nobody", "u1", catalog.RoleGate)
	require.ErrorIs(t, err, catalog.ErrOrganizationNotFound)

	roles := func(org, user string) []bool {
		t.Helper()
		var out []bool
		for _, r := range [][]catalog.Role{{catalog.RoleManager}, {catalog.RoleGate}, {catalog.RoleManager, catalog.RoleGate}, nil} {
			ok, err := svc.HasRole(ctx, org, user, r...)
			require.NoError(t, err)
			out = append(out, ok)
		}
		return out
	}
	m, err := svc.SetMember(ctx, audit.Actor{Kind: audit.ActorAdmin, ID: "admin"}, "hanif", "u1", catalog.RoleManager)
	require.NoError(t, err)
	require.Equal(t, catalog.Member{OrganizationID: "hanif", UserID: "u1", Role: catalog.RoleManager, AddedBy: "admin",
		AddedAt: t0.Add(time.Minute)}, m)
	require.Equal(t, []bool{true, false, true, false}, roles("hanif", "u1"), "manager; no role asked is no permission")
	_, err = svc.SetMember(ctx, audit.Actor{Kind: audit.ActorAdmin, ID: "admin"}, "hanif", "u1", catalog.RoleGate)
	require.NoError(t, err)
	require.Equal(t, []bool{false, true, true, false}, roles("hanif", "u1"), "one role: the new one replaces the old")
	require.Equal(t, []bool{false, false, false, false}, roles("hanif", "u2"), "not a member")
	require.Equal(t, []bool{false, false, false, false}, roles("", "u1"), "a show of the platform's own has no members")
	require.Equal(t, []bool{false, false, false, false}, roles("hanif", ""), "nobody")

	require.NoError(t, svc.RemoveMember(ctx, audit.Actor{Kind: audit.ActorAdmin, ID: "admin"}, "hanif", "u1"))
	require.Equal(t, []bool{false, false, false, false}, roles("hanif", "u1"))
	require.ErrorIs(t, svc.RemoveMember(ctx, audit.Actor{Kind: audit.ActorAdmin, ID: "admin"}, "hanif", "u1"), catalog.ErrNotAMember)
	require.ErrorIs(t, svc.RemoveMember(ctx, audit.Actor{Kind: audit.ActorAdmin, ID: "admin"}, "nobody", "u1"), catalog.ErrOrganizationNotFound)
}

// TestMoveOpening (decisions 0035, 0190): a sale's opening moves for every
// show of the sale, in the catalog and on the shards, each republished and
// announced; not once the sale opens within OpeningFreeze, and never to or
// past a show's start.
func TestMoveOpening(t *testing.T) {
	t.Parallel()
	p := newPlatform(t, 2)
	ctx := t.Context()
	svc := p.service()
	opens := t0.Add(time.Hour)

	newSale := func(title string, shard int32) catalog.Show {
		in := concert(title)
		in.OnSaleAt, in.RequestedShard, in.WaitingRoom = opens, new(shard), &catalog.WaitingRoom{}
		show, err := svc.CreateShow(ctx, "admin", in)
		require.NoError(t, err)
		return show
	}
	sale := newSale("first", 0)
	in := concert("second, soon")
	in.StartsAt, in.RequestedShard, in.WaitingRoom = t0.Add(5*time.Hour), new(int32(1)), &catalog.WaitingRoom{SaleID: sale.ID}
	second, err := svc.CreateShow(ctx, "admin", in)
	require.NoError(t, err)
	other := newSale("another sale", 1)
	plain, err := svc.CreateShow(ctx, "admin", concert("no room"))
	require.NoError(t, err)

	// onSale is where each show goes on sale: in the catalog, and on its
	// shard (which CreateHold reads).
	onSale := func(id int64) [2]time.Time {
		t.Helper()
		show, err := svc.GetShow(ctx, id)
		require.NoError(t, err)
		pool, err := p.router.Shard(show.Shard)
		require.NoError(t, err)
		var onShard time.Time
		require.NoError(t, pool.QueryRow(ctx, `SELECT on_sale_at FROM shows WHERE show_id = $1`, id).Scan(&onShard))
		return [2]time.Time{show.OnSaleAt, onShard.UTC()}
	}
	moved := func() []*eventsv1.SaleOpeningMoved {
		return events(t, p, func() *eventsv1.SaleOpeningMoved { return &eventsv1.SaleOpeningMoved{} })
	}
	at := func(ts time.Time) [2]time.Time { return [2]time.Time{ts, ts} }
	republished := len(published(t, p))

	require.ErrorIs(t, svc.MoveOpening(ctx, plain.ID, opens, "admin"), catalog.ErrNotFound, "a show without a room is no sale")
	require.ErrorIs(t, svc.MoveOpening(ctx, 424242, opens, "admin"), catalog.ErrNotFound)

	// Postponed by two hours: both shows of the sale move, the other sale
	// does not.
	later := t0.Add(3 * time.Hour)
	require.NoError(t, svc.MoveOpening(ctx, sale.ID, later, "mgr"))
	require.Equal(t, []any{at(later), at(later), at(opens)}, []any{onSale(sale.ID), onSale(second.ID), onSale(other.ID)})
	ev := moved()
	require.Len(t, ev, 2)
	for i, id := range []int64{sale.ID, second.ID} {
		require.Equal(t, []any{id, sale.ID, opens, later, "mgr"}, []any{ev[i].GetShowId(), ev[i].GetSaleId(),
			ev[i].GetPreviousOpensAt().AsTime(), ev[i].GetOpensAt().AsTime(), ev[i].GetMovedBy()})
	}
	pub := published(t, p)[republished:]
	require.Len(t, pub, 2, "each show of the sale is republished")
	for _, e := range pub {
		require.Equal(t, later, e.GetShow().GetOnSaleAt().AsTime())
		require.Equal(t, later, e.GetShow().GetWaitingRoom().GetOpensAt().AsTime())
	}
	got, err := svc.GetShow(ctx, second.ID)
	require.NoError(t, err)
	require.Equal(t, sale.ID, got.WaitingRoom.SaleID)

	for _, tc := range []struct {
		name  string
		now   time.Time
		to    time.Time
		want  time.Time // where the sale opens after
		err   error
		field string
	}{
		{name: "not when the second show would start", now: t0, to: t0.Add(5 * time.Hour), want: later, field: "opens_at"},
		{name: "not past the second show's start", now: t0, to: t0.Add(6 * time.Hour), want: later, field: "opens_at"},
		{name: "brought forward", now: t0, to: t0.Add(2 * time.Hour), want: t0.Add(2 * time.Hour)},
		{name: "not within the freeze", now: t0.Add(2*time.Hour - catalog.OpeningFreeze), to: later, want: t0.Add(2 * time.Hour),
			err: catalog.ErrOpeningFrozen},
		{name: "a time already gone opens it now", now: t0.Add(time.Hour), to: t0, want: t0.Add(time.Hour)},
		{name: "not once open", now: t0.Add(time.Hour), to: later, want: t0.Add(time.Hour), err: catalog.ErrOpeningFrozen},
	} {
		p.clock.Set(tc.now)
		before := len(moved())
		err := svc.MoveOpening(ctx, sale.ID, tc.to, "mgr")
		switch {
		case tc.err != nil:
			require.ErrorIs(t, err, tc.err, tc.name)
		case tc.field != "":
			kind, field := fieldOf(t, err)
			require.Equal(t, []string{"invalid", tc.field}, []string{kind, field}, tc.name)
		default:
			require.NoError(t, err, tc.name)
		}
		require.Equal(t, []any{at(tc.want), at(tc.want), at(opens)}, []any{onSale(sale.ID), onSale(second.ID), onSale(other.ID)}, tc.name)
		if tc.err != nil || tc.field != "" {
			require.Len(t, moved(), before, "%s: nothing announced", tc.name)
		} else {
			require.Len(t, moved(), before+2, tc.name)
		}
	}
}
