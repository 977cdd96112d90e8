package ledger_test

import (
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/internal/testkit/pgtest"
	"github.com/seatghor/seatghor/internal/testkit/schematest"
	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/ledger"
	"github.com/seatghor/seatghor/server/migrations"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/shard"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Cleanup()
	os.Exit(code)
}

// shardDB is one fresh shard database, opened twice: as the application
// (role seatghor_app, as app.Open does) and as the login role that owns the
// schema (as the migrations run).
type shardDB struct {
	app, owner *pg.Pool
}

func newShard(t *testing.T, name string) shardDB {
	t.Helper()
	url := schematest.Fresh(t, migrations.Shard)
	app, err := pg.Open(t.Context(), name, url, 4, pg.WithRole(pg.AppRole))
	require.NoError(t, err)
	t.Cleanup(app.Close)
	owner, err := pg.Open(t.Context(), name+"-owner", url, 2)
	require.NoError(t, err)
	t.Cleanup(owner.Close)
	return shardDB{app: app, owner: owner}
}

// post posts j in a transaction of its own.
func post(t *testing.T, db pg.Beginner, j ledger.Journal, now time.Time) (bool, error) {
	t.Helper()
	var posted bool
	err := pg.InTx(t.Context(), db, func(tx pgx.Tx) (err error) {
		posted, err = ledger.Post(t.Context(), tx, j, now)
		return err
	})
	return posted, err
}

func pgCode(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}

const bdt = "BDT"

// tk is taka in paisa, as the seed's tk().
func tk(taka int64) int64 { return taka * 100 }

func TestCommission(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		amount, bps, want int64
	}{
		{tk(1700), 1000, tk(170)},
		{tk(850), 1000, tk(85)},
		{0, 1000, 0},
		{1, 1000, 0},       // 0.1 paisa: the platform gets nothing, the operator the paisa
		{9, 1000, 0},       // 0.9 paisa: floor, never rounded up in the platform's favour
		{10, 1000, 1},      // exact
		{19, 1000, 1},      // 1.9
		{12345, 250, 308},  // 308.625
		{99999, 333, 3329}, // 3329.9667
		{tk(1700), 0, 0},
		{tk(1700), 10000, tk(1700)},
		{tk(1700), -5, 0},                      // clamped to 0 %
		{tk(1700), 20000, tk(1700)},            // clamped to 100 %
		{-19, 1000, -1},                        // symmetric
		{1 << 62, 10000, 1 << 62},              // no overflow in amount × bps
		{1<<62 + 1, 9999, 4611224849825545166}, // floor((2^62+1) × 9999 / 10000)
	} {
		t.Run(fmt.Sprintf("%d@%d", tc.amount, tc.bps), func(t *testing.T) {
			got := ledger.Commission(tc.amount, tc.bps)
			require.Equal(t, tc.want, got)
			if tc.amount >= 0 && tc.amount < 1e12 && tc.bps >= 0 && tc.bps <= 10000 {
				// Never more than the exact share, and short of it by less
				// than one paisa.
				exact := tc.amount * tc.bps // in 1/10000 paisa
				require.LessOrEqual(t, got*10000, exact)
				require.Less(t, exact-got*10000, int64(10000))
			}
		})
	}
}

// sumByAccount adds the lines of journals per account.
func sumByAccount(js ...ledger.Journal) map[string]int64 {
	m := map[string]int64{}
	for _, j := range js {
		for _, l := range j.Lines {
			m[l.Account] += l.AmountMinor
			if m[l.Account] == 0 {
				delete(m, l.Account)
			}
		}
	}
	return m
}

// TestJournalsBalanceAndRefundsReturnToZero: every built journal is valid,
// no journal has a zero line, and refunding a booking in parts, however it
// is split, leaves every account exactly at zero.
func TestJournalsBalanceAndRefundsReturnToZero(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		amount  int64
		bps     int64
		refunds []int64 // the last one takes the rest
	}{
		{"R-7.7 full refund", tk(1700), 1000, []int64{tk(1700)}},
		{"odd amount, halves", 12345, 250, []int64{6172, 6173}},
		{"odd amount, thirds", 99999, 333, []int64{33333, 33333, 33333}},
		{"paisa by paisa", 37, 1500, []int64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
		{"no commission", 1001, 0, []int64{500, 501}},
		{"all commission", 1001, 10000, []int64{1, 1000}},
		{"uneven parts", 100003, 725, []int64{7, 99990, 6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			book := ledger.BookingJournal("b", "ord", 7, bdt, tc.amount, tc.bps)
			all := []ledger.Journal{book}
			remaining := tc.amount
			for i, r := range tc.refunds {
				j := ledger.RefundJournal(fmt.Sprintf("r%d", i), "ord", 7, bdt, remaining, r, tc.bps)
				all = append(all, j)
				remaining -= r
				if remaining > 0 {
					// Partially refunded: the shares left are the shares of
					// what is left, as if it had been booked so.
					require.Equal(t, sumByAccount(ledger.BookingJournal("x", "ord", 7, bdt, remaining, tc.bps)),
						sumByAccount(all...), "after refund %d", i+1)
				}
			}
			require.Zero(t, remaining)
			for _, j := range all {
				require.NoError(t, j.Validate(), "%+v", j)
			}
			require.Empty(t, sumByAccount(all...), "a full refund returns every account to zero")
			rev := ledger.Reverse(book, "rev")
			require.NoError(t, rev.Validate())
			require.Empty(t, sumByAccount(book, rev))
		})
	}
	fee := ledger.FeeJournal("f", "pay", 7, bdt, tk(30))
	require.NoError(t, fee.Validate())
	require.Equal(t, map[string]int64{ledger.AccountGatewayFees: tk(30), ledger.AccountGatewayClearing: -tk(30)}, sumByAccount(fee))
}

func TestValidate(t *testing.T) {
	t.Parallel()
	ok := ledger.Journal{TxnID: "t", Kind: ledger.KindPayout, Currency: bdt,
		Lines: []ledger.Line{{ledger.AccountOperatorPayable, tk(765)}, {ledger.AccountBank, -tk(765)}}}
	for _, tc := range []struct {
		name    string
		edit    func(*ledger.Journal)
		wantSum int64
		want    error
	}{
		{"balanced", func(*ledger.Journal) {}, 0, nil},
		{"R-7.7 T5 typo", func(j *ledger.Journal) { j.Lines[1].AmountMinor = -tk(750) }, 1500, ledger.ErrUnbalanced},
		{"one line", func(j *ledger.Journal) { j.Lines = j.Lines[:1] }, 0, ledger.ErrUnbalanced},
		{"no lines", func(j *ledger.Journal) { j.Lines = nil }, 0, ledger.ErrUnbalanced},
		{"zero line", func(j *ledger.Journal) {
			j.Lines = append(j.Lines, ledger.Line{ledger.AccountBank, 0})
		}, 0, ledger.ErrUnbalanced},
		{"no id", func(j *ledger.Journal) { j.TxnID = "" }, 0, ledger.ErrInvalidJournal},
		{"unknown kind", func(j *ledger.Journal) { j.Kind = "gift" }, 0, ledger.ErrInvalidJournal},
		{"bad currency", func(j *ledger.Journal) { j.Currency = "tk" }, 0, ledger.ErrInvalidJournal},
		{"no account", func(j *ledger.Journal) { j.Lines[0].Account = "" }, 0, ledger.ErrInvalidJournal},
		{"reversal without target", func(j *ledger.Journal) { j.Kind = ledger.KindReversal }, 0, ledger.ErrInvalidJournal},
		{"overflow", func(j *ledger.Journal) {
			j.Lines = []ledger.Line{{"a", 1 << 62}, {"b", 1 << 62}, {"c", -(1 << 62)}, {"d", -(1 << 62)}}
		}, 0, ledger.ErrInvalidJournal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := ok
			j.Lines = append([]ledger.Line(nil), ok.Lines...)
			tc.edit(&j)
			err := j.Validate()
			if tc.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.want)
			var ue *ledger.UnbalancedError
			if errors.As(err, &ue) {
				require.Equal(t, tc.wantSum, ue.SumMinor)
			}
		})
	}
}

// TestDatabaseEnforcesTheLedger: whatever the application sends, through
// Post or around it, the database keeps the ledger append-only and
// every transaction balanced with at least two lines.
func TestDatabaseEnforcesTheLedger(t *testing.T) {
	t.Parallel()
	db := newShard(t, "shard-0")
	ctx := t.Context()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

	var user string
	require.NoError(t, db.app.QueryRow(ctx, `SELECT current_user`).Scan(&user))
	require.Equal(t, pg.AppRole, user, "the application's pool runs as the application role")

	book := ledger.BookingJournal("booking:O1", "O1", 7, bdt, tk(1700), 1000)
	posted, err := post(t, db.app, book, now)
	require.NoError(t, err)
	require.True(t, posted)

	t.Run("no update or delete by the application", func(t *testing.T) {
		for _, sql := range []string{
			`UPDATE ledger_lines SET amount_minor = amount_minor * 2`,
			`UPDATE ledger_transactions SET reference = 'O2'`,
			`DELETE FROM ledger_lines`,
			`DELETE FROM ledger_transactions`,
			`TRUNCATE ledger_lines, ledger_transactions`,
		} {
			_, err := db.app.Exec(ctx, sql)
			require.Equal(t, "42501", pgCode(err), "%s: want permission denied, got %v", sql, err)
		}
	})
	t.Run("no update or delete by the owner either", func(t *testing.T) {
		for _, sql := range []string{
			`UPDATE ledger_lines SET amount_minor = amount_minor * 2`,
			`DELETE FROM ledger_transactions`,
			`TRUNCATE ledger_lines, ledger_transactions`,
		} {
			_, err := db.owner.Exec(ctx, sql)
			require.Error(t, err, sql)
			require.Contains(t, err.Error(), "append-only", sql)
		}
	})

	insertTxn := `INSERT INTO ledger_transactions (txn_id, kind, currency, created_at) VALUES ($1, 'booking', 'BDT', now())`
	insertLine := `INSERT INTO ledger_lines (txn_id, line, account, amount_minor, created_at) VALUES ($1, $2, $3, $4, now())`
	raw := func(txnID string, withTxn bool, firstLine int, lines ...ledger.Line) error {
		return pg.InTx(ctx, db.app, func(tx pgx.Tx) error {
			if withTxn {
				if _, err := tx.Exec(ctx, insertTxn, txnID); err != nil {
					return err
				}
			}
			for i, l := range lines {
				// Each statement alone succeeds: only COMMIT can judge.
				if _, err := tx.Exec(ctx, insertLine, txnID, firstLine+i, l.Account, l.AmountMinor); err != nil {
					return fmt.Errorf("statement, not commit, failed: %w", err)
				}
			}
			return nil
		})
	}
	for _, tc := range []struct {
		name    string
		txnID   string
		withTxn bool
		lines   []ledger.Line
		ok      bool
	}{
		{"balanced, two lines", "raw-ok", true, []ledger.Line{{"gateway_clearing", 100}, {"platform_revenue", -100}}, true},
		{"unbalanced", "raw-unbalanced", true, []ledger.Line{{"gateway_clearing", 100}, {"platform_revenue", -99}}, false},
		{"one line", "raw-one", true, []ledger.Line{{"gateway_clearing", 100}}, false},
		{"no lines", "raw-none", true, nil, false},
		{"the seed's buggy direct write", "booking:O1", false, []ledger.Line{{"platform_revenue", -tk(85)}}, false},
		{"balanced lines appended to a posted journal", "booking:O1", false,
			[]ledger.Line{{"gateway_clearing", 100}, {"platform_revenue", -100}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first := 1
			if !tc.withTxn {
				first = len(book.Lines) + 1 // after the posted lines
			}
			err := raw(tc.txnID, tc.withTxn, first, tc.lines...)
			if tc.ok {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			require.Contains(t, err.Error(), "commit:", "the deferred trigger fires at COMMIT")
			require.Equal(t, "23514", pgCode(err), "%v", err)
		})
	}
	var n int
	require.NoError(t, db.app.QueryRow(ctx, `SELECT count(*) FROM ledger_transactions`).Scan(&n))
	require.Equal(t, 2, n, "only the posted and the balanced raw transactions exist")
}

// TestPost: Post writes a journal once; a retry is ignored; a bad journal
// is refused before anything is written; a reversal undoes a journal.
func TestPost(t *testing.T) {
	t.Parallel()
	db := newShard(t, "shard-0")
	ctx := t.Context()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	book := ledger.BookingJournal("booking:O2", "O2", 7, bdt, tk(850), 1000)
	for i, want := range []bool{true, false, false} {
		posted, err := post(t, db.app, book, now.Add(time.Duration(i)*time.Second))
		require.NoError(t, err)
		require.Equal(t, want, posted, "attempt %d", i+1)
	}
	// A retry inside a savepoint of a bigger transaction, as the payment
	// code may run it: still one journal.
	err := pg.InTx(ctx, db.app, func(tx pgx.Tx) error {
		return pg.InTx(ctx, tx, func(sp pgx.Tx) error {
			posted, err := ledger.Post(ctx, sp, ledger.FeeJournal("fee:O2", "O2", 7, bdt, tk(15)), now)
			require.True(t, posted)
			return err
		})
	})
	require.NoError(t, err)

	bad := book
	bad.TxnID, bad.Lines = "booking:bad", []ledger.Line{{ledger.AccountGatewayClearing, tk(850)}, {ledger.AccountOperatorPayable, -tk(800)}}
	_, err = post(t, db.app, bad, now)
	var ue *ledger.UnbalancedError
	require.ErrorAs(t, err, &ue)
	require.Equal(t, tk(50), ue.SumMinor)

	posted, err := post(t, db.app, ledger.Reverse(book, "reversal:O2"), now)
	require.NoError(t, err)
	require.True(t, posted)
	_, err = post(t, db.app, ledger.Reverse(book, "reversal:again"), now)
	require.Equal(t, "23505", pgCode(err), "a journal is reversed at most once: %v", err)
	_, err = post(t, db.app, ledger.Reverse(ledger.Journal{TxnID: "nothing", Currency: bdt, Kind: ledger.KindBooking,
		Lines: book.Lines}, "reversal:x"), now)
	require.Equal(t, "23503", pgCode(err), "a reversal must name a posted transaction: %v", err)

	svc := ledger.NewService(shard.NewRouter(nil, []*pg.Pool{db.app}), clock.NewFake(now.Add(time.Hour)))
	tb, err := svc.TrialBalance(ctx, nil, time.Time{})
	require.NoError(t, err)
	require.True(t, tb.Balanced())
	got := map[string]int64{}
	for _, a := range tb.Accounts {
		got[a.Account] = a.BalanceMinor
	}
	require.Equal(t, map[string]int64{
		ledger.AccountGatewayClearing: -tk(15), ledger.AccountOperatorPayable: 0, ledger.AccountPlatformRevenue: 0,
		ledger.AccountGatewayFees: tk(15),
	}, got, "the booking is reversed, the fee stays")
}

// TestListJournal pages newest first over two shards, with filters.
func TestListJournal(t *testing.T) {
	t.Parallel()
	shards := []shardDB{newShard(t, "shard-0"), newShard(t, "shard-1")}
	start := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for i := range 7 {
		ref := fmt.Sprintf("O%d", i)
		at := start.Add(time.Duration(i/2) * time.Minute) // pairs share a time
		j := ledger.BookingJournal("booking:"+ref, ref, int64(i), bdt, tk(100+int64(i)), 1000)
		_, err := post(t, shards[i%2].app, j, at)
		require.NoError(t, err)
	}
	_, err := post(t, shards[0].app, ledger.FeeJournal("fee:O0", "O0", 0, bdt, 300), start.Add(-time.Minute))
	require.NoError(t, err)
	svc := ledger.NewService(shard.NewRouter(nil, []*pg.Pool{shards[0].app, shards[1].app}), clock.Real{})

	var got []string
	token := ""
	for {
		page, next, err := svc.ListJournal(t.Context(), ledger.Filter{PageSize: 3, PageToken: token})
		require.NoError(t, err)
		for _, p := range page {
			got = append(got, p.TxnID)
		}
		if token = next; token == "" {
			break
		}
	}
	// Same-time pairs are ordered by txn id descending.
	require.Equal(t, []string{"booking:O6", "booking:O5", "booking:O4", "booking:O3", "booking:O2", "booking:O1",
		"booking:O0", "fee:O0"}, got)

	fees, _, err := svc.ListJournal(t.Context(), ledger.Filter{Account: ledger.AccountGatewayFees})
	require.NoError(t, err)
	require.Len(t, fees, 1)
	require.Equal(t, []ledger.Line{{ledger.AccountGatewayFees, 300}, {ledger.AccountGatewayClearing, -300}}, fees[0].Lines)
	require.Equal(t, 0, fees[0].Shard)
	one := int32(1)
	onShard1, _, err := svc.ListJournal(t.Context(), ledger.Filter{Shard: &one, Kind: ledger.KindBooking,
		CreatedAfter: start.Add(time.Minute), CreatedBefore: start.Add(3 * time.Minute)})
	require.NoError(t, err)
	require.Len(t, onShard1, 2) // O3 and O5
	byRef, _, err := svc.ListJournal(t.Context(), ledger.Filter{Reference: "O4", ShowID: 4})
	require.NoError(t, err)
	require.Len(t, byRef, 1)

	var ie *fault.Error
	_, _, err = svc.ListJournal(t.Context(), ledger.Filter{PageToken: "garbage"})
	require.ErrorAs(t, err, &ie)
	require.Equal(t, fault.LedgerQueryInvalid, ie.Reason)
	two := int32(2)
	_, err = svc.TrialBalance(t.Context(), &two, time.Time{})
	require.ErrorAs(t, err, &ie)
	require.Equal(t, fault.LedgerQueryInvalid, ie.Reason)
}

// TestSettledRefundJournal (decision 0293): a failed refund paid another
// way takes the same shares back as the gateway's refund would have, and
// pays from the bank instead of the gateway clearing account.
func TestSettledRefundJournal(t *testing.T) {
	for _, tc := range []struct {
		name               string
		total, refund, bps int64
		operator, platform int64
	}{
		{name: "part of a booking", total: 170000, refund: 50000, bps: 1000, operator: 45000, platform: 5000},
		{name: "all of what is left", total: 33333, refund: 33333, bps: 750, operator: 30834, platform: 2499},
		{name: "no commission", total: 1000, refund: 1, bps: 0, operator: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := ledger.SettledRefundJournal("refund-settled:r", "r", 7, "BDT", tc.total, tc.refund, tc.bps)
			require.NoError(t, j.Validate())
			got := map[string]int64{}
			for _, l := range j.Lines {
				got[l.Account] = l.AmountMinor
			}
			want := map[string]int64{ledger.AccountOperatorPayable: tc.operator, ledger.AccountBank: -tc.refund}
			if tc.platform != 0 {
				want[ledger.AccountPlatformRevenue] = tc.platform
			}
			require.Equal(t, want, got)
			gw := ledger.RefundJournal("refund:r", "r", 7, "BDT", tc.total, tc.refund, tc.bps)
			require.Equal(t, len(gw.Lines), len(j.Lines), "the gateway's refund's lines, the bank for the clearing account")
		})
	}
}
