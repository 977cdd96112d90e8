package api

import (
	"context"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	ledgerv1 "github.com/seatghor/seatghor/gen/seatghor/ledger/v1"
	"github.com/seatghor/seatghor/server/catalog"
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

// orgSalesShows is how many shows an organisation's sales lists.
const orgSalesShows = 200

// GetOrganizationSales answers the console's organisation-wide sales
// (decision 0451): the organisation's shows from the catalog, their places
// from booking and their money from the ledger, each shard asked once.
func (h *ledgerHandler) GetOrganizationSales(ctx context.Context, req *connect.Request[ledgerv1.GetOrganizationSalesRequest]) (*connect.Response[ledgerv1.GetOrganizationSalesResponse], error) {
	orgID := req.Msg.GetOrganizationId()
	if _, err := h.orgManager(ctx, orgID, fault.New(fault.PermissionDenied, "only the organisation's managers read its sales")); err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	if h.booking == nil || h.catalog == nil {
		return nil, toConnect(ctx, h.log, fault.New(fault.NotServed, "this server does not read bookings"))
	}
	from := time.Now().Add(-24 * time.Hour)
	if req.Msg.GetStartsFrom() != nil {
		from = req.Msg.GetStartsFrom().AsTime()
	}
	shows, _, err := h.catalog.ListShows(ctx, orgSalesShows, "", catalog.ShowFilter{OrganizationID: orgID, StartsFrom: from})
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	ids := make([]int64, len(shows))
	for i, s := range shows {
		ids[i] = s.ID
	}
	places, err := h.booking.ShowsOccupancy(ctx, ids)
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	money, err := h.svc.ShowsMoney(ctx, ids)
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	total := &ledgerv1.ShowSalesLine{Money: &ledgerv1.ShowMoney{}}
	resp := &ledgerv1.GetOrganizationSalesResponse{Total: total, AsOf: timestamppb.Now()}
	for _, s := range shows {
		p, m := places[s.ID], money[s.ID]
		line := &ledgerv1.ShowSalesLine{ShowId: s.ID, Title: s.Title, TitleBn: s.TitleBn, StartsAt: timestamppb.New(s.StartsAt),
			Places: int32(p.Places), Sold: int32(p.Sold), Held: int32(p.Held), Currency: s.Currency,
			Money: &ledgerv1.ShowMoney{SalesMinor: m.Sales, RefundsMinor: m.Refunds, CommissionMinor: m.Commission, OperatorMinor: m.Operator}}
		resp.Shows = append(resp.Shows, line)
		total.Places += line.Places
		total.Sold += line.Sold
		total.Held += line.Held
		total.Currency = s.Currency
		total.Money.SalesMinor += m.Sales
		total.Money.RefundsMinor += m.Refunds
		total.Money.CommissionMinor += m.Commission
		total.Money.OperatorMinor += m.Operator
	}
	return connect.NewResponse(resp), nil
}
