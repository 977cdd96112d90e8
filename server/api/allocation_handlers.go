package api

import (
	"context"
	"log/slog"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	partnerv1 "github.com/seatghor/seatghor/gen/seatghor/partner/v1"
	"github.com/seatghor/seatghor/server/booking"
)

// allocationHandler serves AllocationService: partners' ring-fenced
// inventory (decision 0185).
type allocationHandler struct {
	svc *booking.Service
	log *slog.Logger
}

func (h *allocationHandler) AllocateSeats(ctx context.Context, req *connect.Request[partnerv1.AllocateSeatsRequest]) (*connect.Response[partnerv1.AllocateSeatsResponse], error) {
	m := req.Msg
	in := booking.AllocationRequest{ShowID: m.GetShowId(), PartnerID: m.GetPartnerId(), Seats: m.GetSeats(),
		GAArea: m.GetGaArea(), Quantity: int(m.GetQuantity()), ReturnAt: m.GetReturnAt().AsTime(), GeneralSale: m.GetGeneralSale()}
	return answer(ctx, h.log, func(c booking.Caller) (booking.Allocation, error) { return h.svc.AllocateSeats(ctx, c, in) },
		func(a booking.Allocation) *partnerv1.AllocateSeatsResponse {
			return &partnerv1.AllocateSeatsResponse{Allocation: allocationProto(a)}
		})
}

func (h *allocationHandler) ReleaseAllocation(ctx context.Context, req *connect.Request[partnerv1.ReleaseAllocationRequest]) (*connect.Response[partnerv1.ReleaseAllocationResponse], error) {
	m := req.Msg
	return answer(ctx, h.log, func(c booking.Caller) (booking.Allocation, error) {
		return h.svc.ReleaseAllocation(ctx, c, m.GetAllocationId(), m.GetSeats(), int(m.GetQuantity()))
	}, func(a booking.Allocation) *partnerv1.ReleaseAllocationResponse {
		return &partnerv1.ReleaseAllocationResponse{Allocation: allocationProto(a)}
	})
}

func (h *allocationHandler) ListAllocations(ctx context.Context, req *connect.Request[partnerv1.ListAllocationsRequest]) (*connect.Response[partnerv1.ListAllocationsResponse], error) {
	return answer(ctx, h.log, func(c booking.Caller) ([]booking.Allocation, error) {
		return h.svc.ListAllocations(ctx, c, req.Msg.GetShowId())
	}, func(list []booking.Allocation) *partnerv1.ListAllocationsResponse {
		resp := &partnerv1.ListAllocationsResponse{}
		for _, a := range list {
			resp.Allocations = append(resp.Allocations, allocationProto(a))
		}
		return resp
	})
}

var allocationStatuses = map[booking.AllocationStatus]partnerv1.AllocationStatus{
	booking.AllocationActive:   partnerv1.AllocationStatus_ALLOCATION_STATUS_ACTIVE,
	booking.AllocationReleased: partnerv1.AllocationStatus_ALLOCATION_STATUS_RELEASED,
	booking.AllocationReturned: partnerv1.AllocationStatus_ALLOCATION_STATUS_RETURNED,
}

func allocationProto(a booking.Allocation) *partnerv1.Allocation {
	return &partnerv1.Allocation{
		AllocationId: a.ID, ShowId: a.ShowID, PartnerId: a.PartnerID, Seats: a.Seats, GaArea: a.GAArea,
		Quantity: int32(a.Quantity), Available: int32(a.Available), GeneralSale: a.GeneralSale,
		ReturnAt: timestamppb.New(a.ReturnAt), Status: allocationStatuses[a.Status], CreatedAt: timestamppb.New(a.CreatedAt),
	}
}
