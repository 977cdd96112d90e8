package booking

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	eventsv1 "github.com/seatghor/seatghor/gen/seatghor/events/v1"
	"github.com/seatghor/seatghor/server/outbox"
)

// event is an outbox event of one show.
type event interface {
	proto.Message
	GetShowId() int64
}

// appendEvent writes a booking event to the shard's outbox in the
// transaction of the change it describes.
func appendEvent(ctx context.Context, tx pgx.Tx, now time.Time, event event) error {
	return outbox.Append(ctx, tx, event.GetShowId(), now, event)
}

func money(amount int64, currency string) *commonv1.Money {
	return &commonv1.Money{AmountMinor: amount, Currency: currency}
}

// The events of a hold or order on a trip with stops carry its journey
// (journey: its view, nil without stops), names and times included, so the
// projections print it without reading the shard (decision 0350).

func seatsHeld(h Hold, journey *commonv1.Journey) *eventsv1.SeatsHeld {
	return &eventsv1.SeatsHeld{
		ShowId: h.ShowID, HoldId: h.ID, UserId: h.UserID, Seats: h.Seats, GaArea: h.GAArea,
		Quantity: int32(h.Quantity), Amount: money(h.AmountMinor, h.Currency),
		ExpiresAt: timestamppb.New(h.ExpiresAt), OccurredAt: timestamppb.New(h.CreatedAt), Journey: journey,
	}
}

func holdEnded(h Hold, to HoldStatus, now time.Time, journey *commonv1.Journey) event {
	if to == HoldExpired {
		return &eventsv1.HoldExpired{
			ShowId: h.ShowID, HoldId: h.ID, UserId: h.UserID, Seats: h.Seats, GaArea: h.GAArea,
			Quantity: int32(h.Quantity), OrderId: h.OrderID, ExpiredAt: timestamppb.New(h.ExpiresAt),
			OccurredAt: timestamppb.New(now), Journey: journey,
		}
	}
	return &eventsv1.HoldReleased{
		ShowId: h.ShowID, HoldId: h.ID, UserId: h.UserID, Seats: h.Seats, GaArea: h.GAArea,
		Quantity: int32(h.Quantity), OrderId: h.OrderID, OccurredAt: timestamppb.New(now), Journey: journey,
	}
}

// orderEvent is o's event of moving to status; its journey is o.View.
func orderEvent(o Order, status OrderStatus, now time.Time) event {
	var seats []string
	var area string
	quantity := 0
	for _, l := range o.Lines {
		if l.Seat != "" {
			seats = append(seats, l.Seat)
		}
		if l.GAArea != "" {
			area = l.GAArea
		}
		quantity += l.Quantity
	}
	total := money(o.TotalMinor, o.Currency)
	at := timestamppb.New(now)
	switch status {
	case OrderCancelled:
		return &eventsv1.OrderCancelled{ShowId: o.ShowID, OrderId: o.ID, HoldId: o.HoldID, UserId: o.UserID,
			Seats: seats, GaArea: area, Quantity: int32(quantity), Total: total, CancelledBy: o.UserID, OccurredAt: at,
			Journey: o.View, PaidAtCounter: o.CounterShiftID != ""}
	case OrderExpired:
		return &eventsv1.OrderExpired{ShowId: o.ShowID, OrderId: o.ID, HoldId: o.HoldID, UserId: o.UserID,
			Seats: seats, GaArea: area, Quantity: int32(quantity), Total: total, OccurredAt: at, Journey: o.View}
	default:
		return &eventsv1.OrderCreated{ShowId: o.ShowID, OrderId: o.ID, HoldId: o.HoldID, UserId: o.UserID,
			Seats: seats, GaArea: area, Quantity: int32(quantity), Total: total,
			PayBy: timestamppb.New(o.PayBy), OccurredAt: at, Journey: o.View, Contact: contactProto(o.Contact)}
	}
}

// cancelEvent is o's OrderCancelled: who cancelled it and why, and whether
// it had been paid (a RefundIssued follows then, when it cost anything).
func cancelEvent(o Order, c cancelled, paid bool, now time.Time) event {
	e := orderEvent(o, OrderCancelled, now).(*eventsv1.OrderCancelled)
	if c.by != "" {
		e.CancelledBy = c.by
	}
	e.Reason, e.WasConfirmed = c.reason, paid
	if o.CancellationFeeMinor > 0 {
		e.Fee = money(o.CancellationFeeMinor, o.Currency)
	}
	return e
}
