package api

import (
	"context"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	ledgerv1 "github.com/seatghor/seatghor/gen/seatghor/ledger/v1"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/ticket"
)

// GetShowSales answers the console's dashboard (decision 0447): the
// booking service's places and channels and the ledger's money, each read
// in one snapshot of the show's shard. Unlike the rest of the ledger's
// reads it is the show's managers' too.
func (h *ledgerHandler) GetShowSales(ctx context.Context, req *connect.Request[ledgerv1.GetShowSalesRequest]) (*connect.Response[ledgerv1.GetShowSalesResponse], error) {
	showID := req.Msg.GetShowId()
	if _, err := h.manager(ctx, showID, "read the sales of"); err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	if h.booking == nil {
		return nil, toConnect(ctx, h.log, fault.New(fault.NotServed, "this server does not read bookings"))
	}
	bucket := time.Hour
	if req.Msg.GetBucket() != nil {
		bucket = req.Msg.GetBucket().AsDuration()
	}
	sales, err := h.booking.ShowSales(ctx, showID)
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	money, timeline, err := h.svc.ShowSales(ctx, showID, bucket)
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	resp := &ledgerv1.GetShowSalesResponse{ShowId: showID, AsOf: timestamppb.New(sales.AsOf), Currency: sales.Currency,
		Money: &ledgerv1.ShowMoney{SalesMinor: money.Sales, RefundsMinor: money.Refunds,
			CommissionMinor: money.Commission, OperatorMinor: money.Operator}}
	for _, s := range sales.Sections {
		resp.Sections = append(resp.Sections, &ledgerv1.SectionSales{Section: s.Section, Places: int32(s.Places),
			Sold: int32(s.Sold), Held: int32(s.Held)})
	}
	for _, c := range sales.Channels {
		resp.Channels = append(resp.Channels, &ledgerv1.ChannelSales{Channel: salesChannels[ticket.Channel(c.Channel)],
			Orders: int32(c.Orders), AmountMinor: c.AmountMinor})
	}
	for _, b := range timeline {
		resp.Timeline = append(resp.Timeline, &ledgerv1.SalesBucket{Start: timestamppb.New(b.Start),
			Orders: int32(b.Orders), AmountMinor: b.AmountMinor})
	}
	return connect.NewResponse(resp), nil
}
