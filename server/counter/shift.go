package counter

import (
	"context"
	"crypto/rand"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/audit"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/ledger"
	"github.com/seatghor/seatghor/server/pg"
)

// Shift is one person's cash shift at a counter.
type Shift struct {
	ID, OrganizationID, CounterID, UserID string
	Currency                              string
	OpeningFloatMinor                     int64
	OpenedAt                              time.Time
	// ClosedAt is zero while the shift is open; CountedMinor is the cash
	// counted at the close.
	ClosedAt     time.Time
	CountedMinor int64
}

// Open tells whether the shift still sells.
func (sh Shift) Open() bool { return sh.ClosedAt.IsZero() }

// Cash is the shift's counter's cash account in the ledger.
func (sh Shift) Cash() string { return ledger.CounterCash(sh.OrganizationID, sh.CounterID) }

const shiftColumns = `shift_id, organization_id, counter_id, user_id, currency, opening_float_minor, opened_at,
	coalesce(closed_at, 'epoch'::timestamptz), coalesce(counted_minor, 0)`

func scanShift(row pgx.Row) (Shift, error) {
	var sh Shift
	err := row.Scan(&sh.ID, &sh.OrganizationID, &sh.CounterID, &sh.UserID, &sh.Currency, &sh.OpeningFloatMinor,
		&sh.OpenedAt, &sh.ClosedAt, &sh.CountedMinor)
	sh.OpenedAt, sh.ClosedAt = sh.OpenedAt.UTC(), sh.ClosedAt.UTC()
	if sh.ClosedAt.Equal(time.Unix(0, 0)) {
		sh.ClosedAt = time.Time{}
	}
	return sh, err
}

// Currency of the counters: Bangladeshi taka.
const Currency = "BDT"

// OpenShift opens a cash shift for userID at counter counterID of
// organisation orgID with floatMinor in the drawer. The user must be
// counter staff or a manager of the organisation; one open shift per
// counter and per person.
func (s *Service) OpenShift(ctx context.Context, userID, orgID, counterID string, floatMinor int64, currency string) (Shift, error) {
	if currency == "" {
		currency = Currency
	}
	if currency != Currency {
		return Shift{}, fault.OnField(fault.BookingInvalid, "opening_float.currency", "counters take %s", Currency)
	}
	if floatMinor < 0 {
		return Shift{}, fault.OnField(fault.BookingInvalid, "opening_float.amount_minor", "a float is not negative")
	}
	if err := s.mayStaff(ctx, orgID, userID); err != nil {
		return Shift{}, err
	}
	sh := Shift{ID: "cs_" + strings.ToLower(rand.Text()), OrganizationID: orgID, CounterID: counterID, UserID: userID,
		Currency: currency, OpeningFloatMinor: floatMinor, OpenedAt: s.now()}
	err := pg.InTx(ctx, s.router.Catalog(), func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `
			INSERT INTO counter_shifts (shift_id, organization_id, counter_id, user_id, currency, opening_float_minor, opened_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			sh.ID, sh.OrganizationID, sh.CounterID, sh.UserID, sh.Currency, sh.OpeningFloatMinor, sh.OpenedAt); err != nil {
			return err
		}
		return audit.Record(ctx, tx, audit.Entry{At: sh.OpenedAt, Actor: audit.Actor{Kind: audit.ActorUser, ID: userID},
			Action: "counter_shift.open", Target: "counter_shift:" + sh.ID, OrganizationID: orgID,
			Detail: map[string]any{"counter_id": counterID, "after": map[string]any{"opening_float_minor": floatMinor}}})
	})
	switch {
	case pg.IsUniqueViolation(err, "counter_shifts_open_counter"):
		return Shift{}, fault.New(fault.CounterShiftOpen, "counter %s of %s has a shift open", counterID, orgID)
	case pg.IsUniqueViolation(err, "counter_shifts_open_person"):
		return Shift{}, fault.New(fault.CounterShiftOpen, "you have a shift open")
	case err != nil:
		return Shift{}, fmt.Errorf("open a shift at %s of %s: %w", counterID, orgID, err)
	}
	return sh, nil
}

// mayStaff refuses a user who is neither counter staff nor a manager of
// the organisation.
func (s *Service) mayStaff(ctx context.Context, orgID, userID string) error {
	ok, err := s.members.HasRole(ctx, orgID, userID, catalog.RoleCounter, catalog.RoleManager)
	if err != nil {
		return err
	}
	if !ok {
		return fault.New(fault.CounterForbidden, "you are not counter staff or a manager of %s", orgID)
	}
	return nil
}

// inShift runs fn while userID's shift shiftID is open and stays so: the
// shift's row is share-locked in the catalog until fn returns, so a close
// waits for the sales in flight and none lands after it (fn's shard
// transactions commit before the lock is let go).
func (s *Service) inShift(ctx context.Context, userID, shiftID string, fn func(Shift) error) error {
	return pg.InTx(ctx, s.router.Catalog(), func(tx pgx.Tx) error {
		sh, err := scanShift(tx.QueryRow(ctx, `SELECT `+shiftColumns+` FROM counter_shifts WHERE shift_id = $1 FOR SHARE`, shiftID))
		found, err := pg.Found(err)
		if err != nil {
			return fmt.Errorf("read shift %s: %w", shiftID, err)
		}
		if !found || sh.UserID != userID || !sh.Open() {
			return notOpen(shiftID)
		}
		return fn(sh)
	})
}

// Report is what a shift took and gave, from its entries and the ledger.
type Report struct {
	Shift Shift
	// Entries are the shift's movements of cash, oldest first.
	Entries []Entry
	// Sales, Refunds and Payouts count the entries of each kind; the
	// totals are their cash (refunds and payouts as positive amounts).
	Sales, Refunds, Payouts                int
	SalesMinor, RefundsMinor, PayoutsMinor int64
	// ExpectedMinor is the float plus the sales less the refunds and
	// payouts: what the drawer should hold.
	ExpectedMinor int64
	// LedgerNetMinor is the counter's cash account's movement in the
	// shift's journals, over every shard.
	LedgerNetMinor int64
	// DifferenceMinor is the cash counted less ExpectedMinor, once closed.
	DifferenceMinor int64
}

// GetShift is a shift's report, for its staff, the organisation's
// managers and admins.
func (s *Service) GetShift(ctx context.Context, userID string, admin bool, shiftID string) (Report, error) {
	sh, err := scanShift(s.router.Catalog().QueryRow(ctx, `SELECT `+shiftColumns+` FROM counter_shifts WHERE shift_id = $1`, shiftID))
	found, err := pg.Found(err)
	if err != nil {
		return Report{}, fmt.Errorf("read shift %s: %w", shiftID, err)
	}
	if found && !admin && sh.UserID != userID {
		ok, err := s.members.HasRole(ctx, sh.OrganizationID, userID, catalog.RoleManager)
		if err != nil {
			return Report{}, err
		}
		found = ok
	}
	if !found {
		return Report{}, fault.New(fault.CounterForbidden, "shift %s is not one you may read", shiftID)
	}
	return s.report(ctx, sh)
}

// CloseShift closes userID's open shift shiftID with countedMinor in the
// drawer. Closing a closed shift of theirs answers its report.
func (s *Service) CloseShift(ctx context.Context, userID, shiftID string, countedMinor int64, currency string) (Report, error) {
	if countedMinor < 0 || (currency != "" && currency != Currency) {
		return Report{}, fault.OnField(fault.BookingInvalid, "counted_cash", "the cash counted is a non-negative amount in %s", Currency)
	}
	var sh Shift
	err := pg.InTx(ctx, s.router.Catalog(), func(tx pgx.Tx) error {
		var err error
		sh, err = scanShift(tx.QueryRow(ctx, `SELECT `+shiftColumns+` FROM counter_shifts WHERE shift_id = $1 FOR UPDATE`, shiftID))
		found, err := pg.Found(err)
		if err != nil {
			return fmt.Errorf("read shift %s: %w", shiftID, err)
		}
		if !found || sh.UserID != userID {
			return notOpen(shiftID)
		}
		if !sh.Open() {
			return nil
		}
		sh.ClosedAt, sh.CountedMinor = s.now(), countedMinor
		_, err = tx.Exec(ctx, `UPDATE counter_shifts SET closed_at = $2, counted_minor = $3 WHERE shift_id = $1`,
			shiftID, sh.ClosedAt, countedMinor)
		if err != nil {
			return fmt.Errorf("close shift %s: %w", shiftID, err)
		}
		return audit.Record(ctx, tx, audit.Entry{At: sh.ClosedAt, Actor: audit.Actor{Kind: audit.ActorUser, ID: userID},
			Action: "counter_shift.close", Target: "counter_shift:" + shiftID, OrganizationID: sh.OrganizationID,
			Detail: map[string]any{"counter_id": sh.CounterID, "after": map[string]any{"counted_minor": countedMinor}}})
	})
	if err != nil {
		return Report{}, err
	}
	return s.report(ctx, sh)
}

// report adds up a shift's entries over every shard, and the ledger's
// movement of its counter's cash account in their journals.
func (s *Service) report(ctx context.Context, sh Shift) (Report, error) {
	r := Report{Shift: sh}
	for _, pool := range s.router.Shards() {
		rows, err := pool.Query(ctx, `SELECT `+entryColumns+` FROM cash_entries WHERE shift_id = $1 ORDER BY created_at, txn_id`, sh.ID)
		if err != nil {
			return r, fmt.Errorf("cash of shift %s on %s: %w", sh.ID, pool.Name, err)
		}
		entries, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Entry, error) { return scanEntry(row) })
		if err != nil {
			return r, fmt.Errorf("cash of shift %s on %s: %w", sh.ID, pool.Name, err)
		}
		if len(entries) == 0 {
			continue
		}
		ids := make([]string, len(entries))
		for i, e := range entries {
			ids[i] = e.TxnID
		}
		net, err := ledger.Movement(ctx, pool, sh.Cash(), ids)
		if err != nil {
			return r, err
		}
		r.LedgerNetMinor += net
		r.Entries = append(r.Entries, entries...)
	}
	slices.SortStableFunc(r.Entries, func(a, b Entry) int { return a.At.Compare(b.At) })
	for _, e := range r.Entries {
		switch e.Kind {
		case Sale:
			r.Sales++
			r.SalesMinor += e.AmountMinor
		case Refund:
			r.Refunds++
			r.RefundsMinor -= e.AmountMinor
		case Payout:
			r.Payouts++
			r.PayoutsMinor -= e.AmountMinor
		}
	}
	r.ExpectedMinor = sh.OpeningFloatMinor + r.SalesMinor - r.RefundsMinor - r.PayoutsMinor
	if !sh.Open() {
		r.DifferenceMinor = sh.CountedMinor - r.ExpectedMinor
	}
	return r, nil
}
