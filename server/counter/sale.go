package counter

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/audit"
	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/idempotency"
	"github.com/seatghor/seatghor/server/ledger"
	"github.com/seatghor/seatghor/server/pg"
)

const entryColumns = `kind, txn_id, order_id, show_id, coalesce(shift_id, ''), organization_id, counter_id,
	amount_minor, currency, by_user, created_at`

func scanEntry(row pgx.Row) (Entry, error) {
	var e Entry
	err := row.Scan(&e.Kind, &e.TxnID, &e.OrderID, &e.ShowID, &e.ShiftID, &e.OrganizationID, &e.CounterID,
		&e.AmountMinor, &e.Currency, &e.By, &e.At)
	e.At = e.At.UTC()
	return e, err
}

func insertEntry(ctx context.Context, tx pgx.Tx, e Entry) error {
	_, err := tx.Exec(ctx, `
		INSERT INTO cash_entries (txn_id, order_id, show_id, kind, shift_id, organization_id, counter_id,
		                          amount_minor, currency, by_user, created_at)
		VALUES ($1, $2, $3, $4, nullif($5, ''), $6, $7, $8, $9, $10, $11)`,
		e.TxnID, e.OrderID, e.ShowID, e.Kind, e.ShiftID, e.OrganizationID, e.CounterID, e.AmountMinor, e.Currency, e.By, e.At)
	if err != nil {
		return fmt.Errorf("record %s of order %s: %w", e.Kind, e.OrderID, err)
	}
	return nil
}

// querier runs one query: a shard's pool or a transaction on it.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// entryOf reads an order's entry of one kind in q, found false when none.
func entryOf(ctx context.Context, q querier, orderID string, kind EntryKind) (Entry, bool, error) {
	e, err := scanEntry(q.QueryRow(ctx, `SELECT `+entryColumns+` FROM cash_entries WHERE order_id = $1 AND kind = $2`, orderID, kind))
	found, err := pg.Found(err)
	if err != nil {
		return e, false, fmt.Errorf("read the %s of order %s: %w", kind, orderID, err)
	}
	return e, found, nil
}

// SaleRequest is what a counter sells.
type SaleRequest struct {
	ShiftID    string
	ShowID     int64
	Seats      []string
	GAArea     string
	Quantity   int
	Journey    booking.JourneyRequest
	Passengers []booking.Passenger
	Contact    booking.Contact
}

// Sell sells for cash, in userID's open shift, seats of a show of the
// shift's organisation: a hold of the counter's channel (the walk-in
// reserve does not stop it, decision 0444), the order with its passengers
// and the buyer's phone, and the order confirmed with the cash in one
// transaction with its journal and entry. The sale is for a buyer of its
// own (buyerID), known by the phone. A free order needs no cash and has no
// entry.
func (s *Service) Sell(ctx context.Context, userID string, req SaleRequest) (booking.Order, Entry, error) {
	var (
		order booking.Order
		entry Entry
	)
	err := s.inShift(ctx, userID, req.ShiftID, func(sh Shift) error {
		pool, err := s.shardOf(ctx, req.ShowID)
		if err != nil {
			return err
		}
		terms, err := catalog.ReadTerms(ctx, pool, req.ShowID)
		if err != nil {
			return err
		}
		if terms.OrganizationID != sh.OrganizationID {
			return fault.New(fault.CounterForbidden, "show %d is not one of %s's", req.ShowID, sh.OrganizationID)
		}
		buyer := buyerID(ctx)
		hold, err := s.sales.CreateHold(ctx, buyer, booking.HoldRequest{ShowID: req.ShowID, Seats: req.Seats, GAArea: req.GAArea,
			Quantity: req.Quantity, Journey: req.Journey, WomenSeats: womenSeats(req.Passengers), Counter: true})
		if err != nil {
			return err
		}
		order, err = s.sales.Checkout(ctx, buyer, hold.ID, booking.Checkout{Passengers: req.Passengers, Contact: req.Contact, Guest: true})
		if err == nil && order.Currency != sh.Currency {
			err = fault.New(fault.BookingInvalid, "show %d sells in %s; the counter takes %s", req.ShowID, order.Currency, sh.Currency)
		}
		if err != nil {
			// Nothing was paid: the seats go back at once rather than when
			// the hold runs out.
			if _, rerr := s.sales.ReleaseHold(context.WithoutCancel(ctx), buyer, hold.ID); rerr != nil && fault.ReasonOf(rerr) == "" {
				err = errors.Join(err, rerr)
			}
			return err
		}
		if order.Status == booking.OrderConfirmed && order.TotalMinor == 0 {
			return nil // a free order is confirmed without payment (decision 0070)
		}
		order, entry, err = s.takeCash(ctx, pool, sh, userID, order.ID, terms.CommissionBps)
		return err
	})
	return order, entry, err
}

// result is a sale's or a refund's answer, as an idempotency key records it.
type result struct {
	Order booking.Order `json:"order"`
	Entry Entry         `json:"entry"`
}

// womenSeats are the seats whose passengers are declared women: the hold
// declares them (decision 0371).
func womenSeats(ps []booking.Passenger) []string {
	var out []string
	for _, p := range ps {
		if p.Woman {
			out = append(out, p.Seat)
		}
	}
	return out
}

// takeCash confirms an order paid in cash in shift sh: the order, the
// booking journal on the counter's cash account and the entry commit
// together.
func (s *Service) takeCash(ctx context.Context, pool *pg.Pool, sh Shift, userID, orderID string, commissionBps int64) (booking.Order, Entry, error) {
	now := s.now()
	r, err := idempotency.Do(ctx, pool, codec, idempotency.Options{Now: now, Wait: s.wait, Target: orderID},
		func(tx pgx.Tx) (result, error) {
			txn := "booking:" + orderID
			o, err := booking.ConfirmAtCounter(ctx, tx, orderID, sh.ID, txn, now)
			if errors.Is(err, booking.ErrNotConfirmable) {
				return result{}, fault.New(fault.BookingNotAllowed, "order %s can no longer be paid: %v", orderID, err)
			}
			if err != nil {
				return result{}, err
			}
			j := ledger.OnAccount(ledger.BookingJournal(txn, o.ID, o.ShowID, o.Currency, o.TotalMinor, commissionBps), sh.Cash())
			j.Description = fmt.Sprintf("cash sale %s at %s", o.ID, sh.CounterID)
			if _, err := ledger.Post(ctx, tx, j, now); err != nil {
				return result{}, err
			}
			// The entry records what the journal posts (saleCash): a shift's
			// report adds up both, and they must agree.
			e := Entry{Kind: Sale, TxnID: txn, OrderID: o.ID, ShowID: o.ShowID, ShiftID: sh.ID, OrganizationID: sh.OrganizationID,
				CounterID: sh.CounterID, AmountMinor: saleCash(o.TotalMinor), Currency: o.Currency, By: userID, At: now}
			return result{o, e}, insertEntry(ctx, tx, e)
		})
	return r.Order, r.Entry, err
}

// RefundTickets takes back, in userID's open shift, an order sold for cash
// at one of the shift's organisation's counters: cancelled with the show's
// fee (booking.CancelAtCounter), the rest given back from the drawer,
// with its journal and entry, in one transaction.
func (s *Service) RefundTickets(ctx context.Context, userID, shiftID, orderID string) (booking.Order, Entry, error) {
	var (
		order booking.Order
		entry Entry
	)
	err := s.inShift(ctx, userID, shiftID, func(sh Shift) error {
		pool, err := s.shardOfOrder(ctx, orderID)
		if err != nil {
			return err
		}
		now := s.now()
		r, err := idempotency.Do(ctx, pool, codec, idempotency.Options{Now: now, Wait: s.wait, Target: orderID},
			func(tx pgx.Tx) (result, error) {
				sale, err := s.saleOf(ctx, tx, sh, orderID)
				if err != nil {
					return result{}, err
				}
				o, err := booking.CancelAtCounter(ctx, tx, userID, orderID, now, s.admitted)
				if err != nil {
					return result{}, err
				}
				terms, err := catalog.ReadTerms(ctx, tx, o.ShowID)
				if err != nil {
					return result{}, err
				}
				back := o.TotalMinor - o.CancellationFeeMinor
				if err := audit.RecordOnShard(ctx, tx, o.ShowID, audit.Entry{At: now,
					Actor: audit.Actor{Kind: audit.ActorUser, ID: userID}, Action: "counter.refund", Target: "order:" + orderID,
					Detail: map[string]any{"counter": sh.CounterID, "shift": sh.ID, "before": map[string]any{"status": "confirmed"},
						"after": map[string]any{"status": "cancelled", "amount_minor": max(back, 0), "fee_minor": o.CancellationFeeMinor}}}); err != nil {
					return result{}, err
				}
				e := Entry{Kind: Refund, TxnID: "refund:cash:" + orderID, OrderID: orderID, ShowID: o.ShowID, ShiftID: sh.ID,
					OrganizationID: sh.OrganizationID, CounterID: sh.CounterID, AmountMinor: -back, Currency: sale.Currency,
					By: userID, At: now}
				if back <= 0 {
					return result{Order: o}, nil // the fee kept it all
				}
				j := ledger.OnAccount(ledger.RefundJournal(e.TxnID, orderID, o.ShowID, o.Currency, o.TotalMinor, back, terms.CommissionBps), sh.Cash())
				j.Description = fmt.Sprintf("cash refund %s at %s", orderID, sh.CounterID)
				if _, err := ledger.Post(ctx, tx, j, now); err != nil {
					return result{}, err
				}
				if err := booking.MarkRefunded(ctx, tx, orderID, back, now); err != nil {
					return result{}, err
				}
				o.RefundedMinor += back
				return result{o, e}, insertEntry(ctx, tx, e)
			})
		order, entry = r.Order, r.Entry
		return err
	})
	return order, entry, err
}

// saleOf is the cash sale of orderID, refused unless it was made at a
// counter of sh's organisation.
func (s *Service) saleOf(ctx context.Context, tx pgx.Tx, sh Shift, orderID string) (Entry, error) {
	sale, found, err := entryOf(ctx, tx, orderID, Sale)
	if err != nil {
		return sale, err
	}
	if !found {
		return sale, fault.New(fault.CounterRefundRefused, "order %s was not sold for cash at a counter; it is refunded online", orderID)
	}
	if sale.OrganizationID != sh.OrganizationID {
		return sale, fault.New(fault.CounterForbidden, "order %s was sold by another organisation's counter", orderID)
	}
	return sale, nil
}

// RecordOwed records, in tx, the cash owed for o, an order sold for cash
// that its operator's cancellation of the show just cancelled (decision
// 0443): the whole total, owed at the counter that sold it, in the ledger
// (the booking mirrored onto the counter's owed account) until its staff
// pay it out (PayOwed). Recording it twice records it once.
func RecordOwed(ctx context.Context, tx pgx.Tx, o booking.Order, by string, now time.Time) error {
	if _, found, err := entryOf(ctx, tx, o.ID, Owed); err != nil || found {
		return err
	}
	sale, found, err := entryOf(ctx, tx, o.ID, Sale)
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("order %s of shift %s has no cash sale", o.ID, o.CounterShiftID)
	}
	terms, err := catalog.ReadTerms(ctx, tx, o.ShowID)
	if err != nil {
		return err
	}
	e := Entry{Kind: Owed, TxnID: "refund:owed:" + o.ID, OrderID: o.ID, ShowID: o.ShowID, OrganizationID: sale.OrganizationID,
		CounterID: sale.CounterID, AmountMinor: sale.AmountMinor, Currency: sale.Currency, By: by, At: now}
	owed := ledger.CounterOwed(sale.OrganizationID, sale.CounterID)
	j := ledger.OnAccount(ledger.RefundJournal(e.TxnID, o.ID, o.ShowID, o.Currency, sale.AmountMinor, sale.AmountMinor, terms.CommissionBps), owed)
	j.Description = fmt.Sprintf("cash owed at %s for %s: the show was cancelled", sale.CounterID, o.ID)
	if _, err := ledger.Post(ctx, tx, j, now); err != nil {
		return err
	}
	return insertEntry(ctx, tx, e)
}

// PayOwed pays out, in userID's open shift, the cash owed for an order of
// a cancelled show that a counter of the shift's organisation sold.
// Paying again answers the first payout.
func (s *Service) PayOwed(ctx context.Context, userID, shiftID, orderID string) (Entry, error) {
	var entry Entry
	err := s.inShift(ctx, userID, shiftID, func(sh Shift) error {
		pool, err := s.shardOfOrder(ctx, orderID)
		if err != nil {
			return err
		}
		now := s.now()
		entry, err = idempotency.Do(ctx, pool, codec, idempotency.Options{Now: now, Wait: s.wait, Target: orderID},
			func(tx pgx.Tx) (Entry, error) {
				// The order's row lock makes two payouts take turns.
				if _, err := booking.LockOrder(ctx, tx, orderID); err != nil {
					return Entry{}, err
				}
				if paid, found, err := entryOf(ctx, tx, orderID, Payout); err != nil || found {
					if found && paid.OrganizationID != sh.OrganizationID {
						return Entry{}, fault.New(fault.CounterForbidden, "order %s is another organisation's", orderID)
					}
					return paid, err
				}
				owed, found, err := entryOf(ctx, tx, orderID, Owed)
				if err != nil {
					return Entry{}, err
				}
				if !found {
					return Entry{}, fault.New(fault.CounterRefundRefused, "no cash is owed for order %s", orderID)
				}
				if owed.OrganizationID != sh.OrganizationID {
					return Entry{}, fault.New(fault.CounterForbidden, "order %s is another organisation's", orderID)
				}
				e := Entry{Kind: Payout, TxnID: "payout:owed:" + orderID, OrderID: orderID, ShowID: owed.ShowID, ShiftID: sh.ID,
					OrganizationID: sh.OrganizationID, CounterID: sh.CounterID, AmountMinor: -owed.AmountMinor,
					Currency: owed.Currency, By: userID, At: now}
				// Owed at the counter that sold it, paid from whichever of the
				// organisation's drawers the buyer came to.
				j := ledger.CashPayoutJournal(e.TxnID, orderID, owed.ShowID, owed.Currency,
					ledger.CounterOwed(owed.OrganizationID, owed.CounterID), sh.Cash(), owed.AmountMinor)
				if _, err := ledger.Post(ctx, tx, j, now); err != nil {
					return Entry{}, err
				}
				if err := booking.MarkRefunded(ctx, tx, orderID, owed.AmountMinor, now); err != nil {
					return Entry{}, err
				}
				if err := audit.RecordOnShard(ctx, tx, owed.ShowID, audit.Entry{At: now,
					Actor: audit.Actor{Kind: audit.ActorUser, ID: userID}, Action: "counter.pay_owed", Target: "order:" + orderID,
					Detail: map[string]any{"counter": sh.CounterID, "shift": sh.ID, "sold_at": owed.CounterID,
						"after": map[string]any{"amount_minor": owed.AmountMinor}}}); err != nil {
					return Entry{}, err
				}
				return e, insertEntry(ctx, tx, e)
			})
		return err
	})
	return entry, err
}

// SeatView is how a counter sees show showID's seat map in userID's open
// shift shiftID: the seat legs a no-show left are the counters' first and
// show free to it (decision 0482). The show must be of the shift's
// organisation.
func (s *Service) SeatView(ctx context.Context, userID, shiftID string, showID int64) (booking.ChannelView, error) {
	sh, err := scanShift(s.router.Catalog().QueryRow(ctx, `SELECT `+shiftColumns+` FROM counter_shifts WHERE shift_id = $1`, shiftID))
	found, err := pg.Found(err)
	if err != nil {
		return booking.ChannelView{}, fmt.Errorf("read shift %s: %w", shiftID, err)
	}
	if !found || sh.UserID != userID || !sh.Open() {
		return booking.ChannelView{}, notOpen(shiftID)
	}
	pool, err := s.shardOf(ctx, showID)
	if err != nil {
		return booking.ChannelView{}, err
	}
	terms, err := catalog.ReadTerms(ctx, pool, showID)
	if err != nil {
		return booking.ChannelView{}, err
	}
	if terms.OrganizationID != sh.OrganizationID {
		return booking.ChannelView{}, fault.New(fault.CounterForbidden, "show %d is not one of %s's", showID, sh.OrganizationID)
	}
	return s.sales.CounterView(ctx, showID)
}
