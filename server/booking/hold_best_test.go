package booking

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/internal/testkit/schematest"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/migrations"
	"github.com/seatghor/seatghor/server/pg"
)

// bestCase is one show and one best-available hold on it.
type bestCase struct {
	name string
	// layout is the show's sections in order, each "name:row=seats,row=seats".
	layout []string
	// taken seats are held by someone else (or, with a "~" prefix, were
	// held by a hold that ran out; with a "@" prefix, allocated to
	// partner 7).
	taken string
	n     int
	best  *BestAvailable
	// want is the seats held in layout order, or the refusal's reason
	// (and field).
	want string
}

// TestBestAvailablePicks is the rule of decision 0383, case by case: a
// block side by side before seats apart; sections and rows in layout
// order (the front first); in a row, a block that strands no lone seat,
// then the one nearest the centre, then the leftmost; seats apart only when
// allowed, the best one by one; never a seat someone holds or another
// channel's; refusals that say why.
func TestBestAvailablePicks(t *testing.T) {
	coach := []string{"Coach:A=4,B=4,C=4,D=4"}
	hall := []string{"Stalls:A=10,B=10"}
	cases := []bestCase{
		{"an empty coach: the front row's left pair", coach, "", 2, nil, "A1 A2"},
		{"the front row's other pair", coach, "A1 A2", 2, nil, "A3 A4"},
		{"the front row whole", coach, "", 4, nil, "A1 A2 A3 A4"},
		{"a full front row: the next", coach, "A1 A2 A3 A4", 2, nil, "B1 B2"},
		{"the front row before a better block behind", coach, "A1", 2, nil, "A2 A3"},
		{"a lone seat left in a row of four: the next row", coach, "A1 A2 A3", 2, nil, "B1 B2"},
		{"an empty row of ten: the centre", hall, "", 2, nil, "A5 A6"},
		{"three in a row of ten: the centre, then the left", hall, "", 3, nil, "A4 A5 A6"},
		{"no lone seat stranded before the centre", []string{"S:A=5"}, "A1", 2, nil, "A2 A3"},
		{"a block of a seat whose hold ran out", coach, "~A1 ~A2 A3 A4", 2, nil, "A1 A2"},
		{"never another channel's seats", coach, "@A1 @A2", 2, nil, "A3 A4"},
		{"sections in layout order", []string{"Front:A=2", "Back:K=2"}, "", 2, nil, "A1 A2"},
		{"the next section when the first is full", []string{"Front:A=2", "Back:K=2"}, "A1", 2, nil, "K1 K2"},
		{"the section asked for", []string{"Front:A=2", "Back:K=2"}, "", 2, &BestAvailable{Section: "Back"}, "K1 K2"},
		{"a section without seats", []string{"Front:A=2"}, "", 2, &BestAvailable{Section: "Roof"}, "BOOKING_INVALID best_available.section"},
		{"no pair left, apart not allowed", coach, "A2 A4 B2 B4 C2 C4 D2 D4", 2, nil, "SEATS_NOT_TOGETHER"},
		{"no pair left, apart allowed: the best one by one", coach, "A2 A4 B2 B4 C2 C4 D2 D4", 2,
			&BestAvailable{AllowSeparate: true}, "A1 A3"},
		{"apart allowed but a pair free: the pair", coach, "A2 A4 B2 B4 C2", 2, &BestAvailable{AllowSeparate: true}, "C3 C4"},
		{"fewer free seats than asked", []string{"S:A=3"}, "A1 A2", 2, &BestAvailable{AllowSeparate: true}, "SEATS_UNAVAILABLE"},
		{"fewer free seats in the section asked for", []string{"Front:A=2", "Back:K=2"}, "K1", 2,
			&BestAvailable{Section: "Back", AllowSeparate: true}, "SEATS_UNAVAILABLE"},
	}
	ctx := context.Background()
	now := time.Date(2030, 3, 1, 10, 0, 0, 0, time.UTC)
	pool := shardWith(t, now)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			show := int64(i + 1)
			seedBestShow(t, pool, now, show, c.layout, c.taken)
			var h Hold
			err := pg.InTx(ctx, pool, func(tx pgx.Tx) error {
				var err error
				h, err = holdOne(ctx, tx, "buyer", HoldRequest{ShowID: show, Quantity: c.n, Best: c.best}, now, 0, catalog.Trip{})
				return err
			})
			if err != nil {
				e, ok := fault.As(err)
				require.True(t, ok, "%v", err)
				got := string(e.Reason)
				if e.Field != "" {
					got += " " + e.Field
				}
				require.Equal(t, c.want, got, "%v", err)
				return
			}
			require.Equal(t, c.want, strings.Join(h.Seats, " "))
			require.EqualValues(t, 100*c.n, h.AmountMinor)
			var held []string
			require.NoError(t, pg.InTx(ctx, pool, func(tx pgx.Tx) error {
				rows, err := tx.Query(ctx, `SELECT seat FROM seats WHERE show_id = $1 AND hold_id = $2 ORDER BY position`, show, h.ID)
				if err != nil {
					return err
				}
				held, err = pgx.CollectRows(rows, pgx.RowTo[string])
				return err
			}))
			require.Equal(t, h.Seats, held, "the seats' rows name the hold")
		})
	}
}

// seedBestShow writes a show on sale with layout's seats (100 each) and
// marks the taken ones.
func seedBestShow(t *testing.T, pool *pg.Pool, now time.Time, show int64, layout []string, taken string) {
	t.Helper()
	ctx := context.Background()
	_, err := pool.Exec(ctx, `
		INSERT INTO shows (show_id, currency, on_sale_at, starts_at, hold_ttl_ms, payment_extension_ms,
		                   max_seats_per_account, max_seats_per_hold, created_at)
		VALUES ($1, 'BDT', $2::timestamptz - interval '1 hour', $2::timestamptz + interval '30 days', 600000, 0, 10, 10, $2)`,
		show, now)
	require.NoError(t, err)
	pos := 0
	for _, sec := range layout {
		name, rows, _ := strings.Cut(sec, ":")
		for _, r := range strings.Split(rows, ",") {
			row, count, _ := strings.Cut(r, "=")
			var n int
			_, err := fmt.Sscan(count, &n)
			require.NoError(t, err)
			for k := 1; k <= n; k++ {
				_, err := pool.Exec(ctx, `
					INSERT INTO seats (show_id, seat, position, section, row_label, price_minor) VALUES ($1, $2, $3, $4, $5, 100)`,
					show, fmt.Sprintf("%s%d", row, k), pos, name, row)
				require.NoError(t, err)
				pos++
			}
		}
	}
	for _, seat := range strings.Fields(taken) {
		switch {
		case strings.HasPrefix(seat, "~"):
			_, err = pool.Exec(ctx, `UPDATE seats SET status = 'held', hold_id = 'hld_gone', held_until = $3::timestamptz - interval '1 second'
				WHERE show_id = $1 AND seat = $2`, show, seat[1:], now)
		case strings.HasPrefix(seat, "@"):
			_, err = pool.Exec(ctx, `
				INSERT INTO allocations (allocation_id, show_id, partner_id, general_sale, status, return_at, created_by, created_at, updated_at)
				VALUES ('alc_' || $1::bigint || '_x', $1, 7, true, 'active', $2::timestamptz + interval '1 day', 'admin', $2, $2)
				ON CONFLICT DO NOTHING`, show, now)
			require.NoError(t, err)
			_, err = pool.Exec(ctx, `UPDATE seats SET allocated_partner_id = 7, allocation_id = 'alc_' || $1::bigint || '_x'
				WHERE show_id = $1 AND seat = $2`, show, seat[1:])
		default:
			_, err = pool.Exec(ctx, `UPDATE seats SET status = 'held', hold_id = 'hld_other', held_until = $3::timestamptz + interval '1 hour'
				WHERE show_id = $1 AND seat = $2`, show, seat, now)
		}
		require.NoError(t, err, seat)
	}
}

// BenchmarkBestAvailableLargeShow: best available of 4 seats on a show of
// 50,000 (100 rows of 500), one hold after another, next to the same hold
// of 4 named seats (the baseline, in the same run): each pick reads a
// window of the free seats, never the whole show (decision 0383).
func BenchmarkBestAvailableLargeShow(b *testing.B) {
	ctx := context.Background()
	now := time.Date(2030, 3, 1, 10, 0, 0, 0, time.UTC)
	pool := shardWithTB(b, now, `
		INSERT INTO shows (show_id, currency, on_sale_at, starts_at, hold_ttl_ms, payment_extension_ms,
		                   max_seats_per_account, max_seats_per_hold, created_at)
		SELECT s, 'BDT', $1::timestamptz - interval '1 hour', $1::timestamptz + interval '30 days', 600000, 0, 100000, 10, $1
		FROM generate_series(1, 2) s`, `
		INSERT INTO seats (show_id, seat, position, section, row_label, price_minor)
		SELECT 1, 'R' || r || 'S' || n, r * 500 + n, 'S' || (r / 20), 'R' || r, 100
		FROM generate_series(0, 99) r, generate_series(0, 499) n
		WHERE $1::timestamptz IS NOT NULL`, `
		INSERT INTO seats (show_id, seat, position, section, row_label, price_minor)
		SELECT 2, seat, position, section, row_label, price_minor FROM seats WHERE show_id = 1 AND $1::timestamptz IS NOT NULL`)
	_, err := pool.Exec(ctx, `ANALYZE seats`)
	require.NoError(b, err)
	hold := func(b *testing.B, req func(i int) HoldRequest) {
		for i := range b.N {
			require.NoError(b, pg.InTx(ctx, pool, func(tx pgx.Tx) error {
				_, err := holdOne(ctx, tx, "buyer", req(i), now, 0, catalog.Trip{})
				return err
			}))
		}
	}
	next := 0 // named seats already held by earlier runs are skipped
	b.Run("named", func(b *testing.B) {
		hold(b, func(int) HoldRequest {
			i := next
			next++
			r, n := i/125, i%125*4
			var seats []string
			for k := range 4 {
				seats = append(seats, fmt.Sprintf("R%dS%d", r, n+k))
			}
			return HoldRequest{ShowID: 2, Seats: seats}
		})
	})
	b.Run("best", func(b *testing.B) {
		hold(b, func(int) HoldRequest { return HoldRequest{ShowID: 1, Quantity: 4, Best: &BestAvailable{}} })
	})
}

// shardWithTB is shardWith for benchmarks too.
func shardWithTB(tb testing.TB, now time.Time, sqls ...string) *pg.Pool {
	tb.Helper()
	ctx := context.Background()
	pool, err := pg.Open(ctx, "shard-0", schematest.Fresh(tb, migrations.Shard), 4)
	require.NoError(tb, err)
	tb.Cleanup(pool.Close)
	for _, sql := range sqls {
		_, err = pool.Exec(ctx, sql, now)
		require.NoError(tb, err, sql)
	}
	return pool
}
