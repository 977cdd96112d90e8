package booking

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/types/known/timestamppb"

	eventsv1 "github.com/seatghor/seatghor/gen/seatghor/events/v1"
	"github.com/seatghor/seatghor/server/catalog"
)

// AnnounceReschedule marks every paid order of the show r moved as moved
// and appends one OrderRescheduled for each, in tx: the shard's
// transaction that moved it (decision 0441), so every order confirmed before the move hears of it and every
// order confirmed after names the new times in its BookingConfirmed. The
// journeys are read in tx, at the new time. An order awaiting payment is
// told nothing: its confirmation will carry the new times.
func AnnounceReschedule(ctx context.Context, tx pgx.Tx, r catalog.Reschedule) error {
	// A paid order was bought for the old time: its buyer may now cancel
	// it for a full refund (decision 0477). Its first move counts.
	if _, err := tx.Exec(ctx, `UPDATE orders SET moved_at = $2 WHERE show_id = $1 AND status = 'confirmed' AND moved_at IS NULL`,
		r.ShowID, r.At); err != nil {
		return fmt.Errorf("mark the paid orders of show %d moved: %w", r.ShowID, err)
	}
	rows, err := tx.Query(ctx, `SELECT `+orderColumns+` FROM orders WHERE show_id = $1 AND status = 'confirmed' ORDER BY order_id`, r.ShowID)
	if err != nil {
		return fmt.Errorf("list paid orders of show %d: %w", r.ShowID, err)
	}
	orders, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Order, error) { return scanOrder(row) })
	if err != nil {
		return fmt.Errorf("list paid orders of show %d: %w", r.ShowID, err)
	}
	if len(orders) == 0 {
		return nil
	}
	trip, err := readTrip(ctx, tx, r.ShowID)
	if err != nil {
		return err
	}
	for _, o := range orders {
		if err := appendEvent(ctx, tx, r.At, &eventsv1.OrderRescheduled{ShowId: r.ShowID, OrderId: o.ID, UserId: o.UserID,
			PreviousStartsAt: timestamppb.New(r.Previous), StartsAt: timestamppb.New(r.StartsAt),
			Journey: view(trip, o.Journey), Reason: r.Reason, OccurredAt: timestamppb.New(r.At)}); err != nil {
			return err
		}
	}
	return nil
}
