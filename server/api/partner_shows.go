package api

import (
	"context"

	"connectrpc.com/connect"

	"github.com/seatghor/seatghor/gen/seatghor/booking/v1/bookingv1connect"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/partner"
)

// partnerShows keeps partners to the shows they may sell
// (partner.Service.MaySell): a caller acting for a partner may hold seats
// only of those (orders and payments follow from holds). It runs after
// authentication. Holds are unary; streams pass untouched.
func partnerShows(partners *partner.Service) connect.UnaryInterceptorFunc {
	return func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			if req.Spec().Procedure != bookingv1connect.HoldServiceCreateHoldProcedure {
				return next(ctx, req)
			}
			p, ok := auth.FromContext(ctx)
			show, hasShow := req.Any().(interface{ GetShowId() int64 })
			if !ok || !p.Is(auth.RolePartner) || p.PartnerID == 0 || !hasShow {
				return next(ctx, req)
			}
			if err := partners.MaySell(ctx, p.PartnerID, show.GetShowId()); err != nil {
				return nil, err
			}
			return next(ctx, req)
		}
	}
}
