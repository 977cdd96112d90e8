package api

import (
	"context"
	"log/slog"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	waitingroomv1 "github.com/seatghor/seatghor/gen/seatghor/waitingroom/v1"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/waitingroom"
)

type waitingRoomHandler struct {
	svc *waitingroom.Service // nil without Redis
	log *slog.Logger
}

func (h *waitingRoomHandler) service() (*waitingroom.Service, error) {
	if h.svc == nil {
		return nil, fault.New(fault.NotServed, "this server runs no waiting rooms (no Redis configured)")
	}
	return h.svc, nil
}

func (h *waitingRoomHandler) Join(ctx context.Context, req *connect.Request[waitingroomv1.JoinRequest]) (*connect.Response[waitingroomv1.JoinResponse], error) {
	svc, err := h.service()
	if err != nil {
		return nil, err
	}
	return answer(ctx, h.log, func(c booking.Caller) (waitingroom.Status, error) {
		return svc.Join(ctx, c.UserID, req.Msg.GetShowId())
	}, joinProto)
}

func (h *waitingRoomHandler) GetStatus(ctx context.Context, req *connect.Request[waitingroomv1.GetStatusRequest]) (*connect.Response[waitingroomv1.GetStatusResponse], error) {
	svc, err := h.service()
	if err != nil {
		return nil, err
	}
	return answer(ctx, h.log, func(c booking.Caller) (waitingroom.Status, error) {
		return svc.GetStatus(ctx, c.UserID, req.Msg.GetToken())
	}, func(st waitingroom.Status) *waitingroomv1.GetStatusResponse {
		j := joinProto(st)
		// The two answers have the same fields (buf wants one message per RPC).
		return &waitingroomv1.GetStatusResponse{
			Token: j.Token, Place: j.Place, ShowId: j.ShowId, State: j.State, OpensAt: j.OpensAt,
			TokenExpiresAt: j.TokenExpiresAt, AdmissionNumber: j.AdmissionNumber, Admitted: j.Admitted,
			AdmittedToken: j.AdmittedToken, AdmittedTokenExpiresAt: j.AdmittedTokenExpiresAt,
			EstimatedWait: j.EstimatedWait, PollAfter: j.PollAfter, SoldOut: j.SoldOut, Message: j.Message,
			SaleId: j.SaleId,
		}
	})
}

func joinProto(st waitingroom.Status) *waitingroomv1.JoinResponse {
	r := &waitingroomv1.JoinResponse{}
	fillStatus(st, r)
	return r
}

func (h *waitingRoomHandler) GetSale(ctx context.Context, req *connect.Request[waitingroomv1.GetSaleRequest]) (*connect.Response[waitingroomv1.GetSaleResponse], error) {
	svc, c, err := h.operator(ctx)
	if err != nil {
		return nil, err
	}
	sale, err := svc.GetSale(ctx, c, req.Msg.GetShowId())
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&waitingroomv1.GetSaleResponse{Sale: saleProto(sale)}), nil
}

func (h *waitingRoomHandler) UpdateSale(ctx context.Context, req *connect.Request[waitingroomv1.UpdateSaleRequest]) (*connect.Response[waitingroomv1.UpdateSaleResponse], error) {
	svc, c, err := h.operator(ctx)
	if err != nil {
		return nil, err
	}
	m := req.Msg
	var u waitingroom.Update
	u.Paused = m.Paused
	if m.MinAdmissionRate != nil {
		u.MinRate = new(int(m.GetMinAdmissionRate()))
	}
	if m.MaxAdmissionRate != nil {
		u.MaxRate = new(int(m.GetMaxAdmissionRate()))
	}
	if m.GetEndsAt() != nil {
		u.EndsAt = new(m.GetEndsAt().AsTime())
	}
	if m.GetOpensAt() != nil {
		u.OpensAt = new(m.GetOpensAt().AsTime())
	}
	sale, err := svc.UpdateSale(ctx, c, m.GetShowId(), u)
	if err != nil {
		return nil, toConnect(ctx, h.log, err)
	}
	return connect.NewResponse(&waitingroomv1.UpdateSaleResponse{Sale: saleProto(sale)}), nil
}

// operator admits operators and admins to the sale RPCs; whether this
// operator runs this show is the service's call.
func (h *waitingRoomHandler) operator(ctx context.Context) (*waitingroom.Service, waitingroom.Caller, error) {
	svc, err := h.service()
	if err != nil {
		return nil, waitingroom.Caller{}, err
	}
	p, _ := auth.FromContext(ctx)
	if !p.Is(auth.RoleOperator, auth.RoleAdmin) {
		return nil, waitingroom.Caller{}, fault.New(fault.PermissionDenied, "only the show's operators and admins manage its sale")
	}
	return svc, waitingroom.Caller{UserID: p.UserID, Admin: p.Is(auth.RoleAdmin)}, nil
}

var saleStates = map[waitingroom.State]waitingroomv1.SaleState{
	waitingroom.StateNoQueue:   waitingroomv1.SaleState_SALE_STATE_NO_QUEUE,
	waitingroom.StateScheduled: waitingroomv1.SaleState_SALE_STATE_SCHEDULED,
	waitingroom.StateAdmitting: waitingroomv1.SaleState_SALE_STATE_ADMITTING,
	waitingroom.StatePaused:    waitingroomv1.SaleState_SALE_STATE_PAUSED,
	waitingroom.StateSoldOut:   waitingroomv1.SaleState_SALE_STATE_SOLD_OUT,
	waitingroom.StateEnded:     waitingroomv1.SaleState_SALE_STATE_ENDED,
}

func fillStatus(st waitingroom.Status, r *waitingroomv1.JoinResponse) {
	r.Token, r.Place, r.ShowId, r.SaleId, r.State = st.Token, st.Place, st.ShowID, st.SaleID, saleStates[st.State]
	r.TokenExpiresAt = timestamppb.New(st.TokenExpiresAt)
	if !st.OpensAt.IsZero() {
		r.OpensAt = timestamppb.New(st.OpensAt)
	}
	r.AdmissionNumber, r.Admitted, r.AdmittedToken = st.AdmissionNumber, st.Admitted, st.AdmittedToken
	if st.Admitted {
		r.AdmittedTokenExpiresAt = timestamppb.New(st.AdmittedExpiresAt)
	}
	if st.EstimatedWait >= 0 {
		r.EstimatedWait = durationpb.New(st.EstimatedWait)
	}
	r.PollAfter, r.SoldOut, r.Message = durationpb.New(st.PollAfter), st.SoldOut, st.Message
}

func saleProto(s waitingroom.Sale) *waitingroomv1.Sale {
	p := &waitingroomv1.Sale{
		ShowId: s.ShowID, SaleId: s.SaleID, ShowIds: s.ShowIDs, State: saleStates[s.State], OpensAt: timestamppb.New(s.OpensAt),
		EndsAt: timestamppb.New(s.EndsAt), Paused: s.Paused, MinAdmissionRate: int32(s.MinRate),
		MaxAdmissionRate: int32(s.MaxRate), AdmittedTokenTtl: durationpb.New(s.AdmittedTTL),
		AdmissionRate: s.Rate, AdmissionNumber: s.AdmissionNumber, Joined: s.Joined, Waiting: s.Waiting,
		Admitted: s.Admitted, Available: s.Available, SoldOut: s.SoldOut, HoldP99: durationpb.New(s.HoldP99),
		HoldErrorRate: s.HoldErrorRate,
	}
	if s.EstimatedWait >= 0 {
		p.EstimatedWait = durationpb.New(s.EstimatedWait)
	}
	if !s.UpdatedAt.IsZero() {
		p.UpdatedAt = timestamppb.New(s.UpdatedAt)
	}
	return p
}
