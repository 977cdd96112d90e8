package partner

import (
	"context"
	"fmt"

	"connectrpc.com/connect"

	"github.com/seatghor/seatghor/gen/seatghor/booking/v1/bookingv1connect"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/pg"
)

// ErrShowNotAllowed refuses a partner a show it was not allowed to sell.
var ErrShowNotAllowed = fault.Sentinel(fault.PartnerShowForbidden, "this partner may not sell this show: an admin or the show's organisation allows it (UpdatePartnerAccess)")

// MaySell refuses partnerID a show it may not sell: partner_may_sell (the
// catalog's SQL function, migration 00140) is the one definition of what a
// partner may sell, which the webhooks' audience uses too. A partner sells
// nothing it was not allowed (decision 0284). A show that does not exist
// is left to the booking to answer.
func (s *Service) MaySell(ctx context.Context, partnerID, showID int64) error {
	var allowed bool
	err := s.router.Catalog().QueryRow(ctx, `
		SELECT partner_may_sell($1, $2) OR NOT EXISTS (SELECT FROM shows WHERE show_id = $2)
		FROM partners WHERE partner_id = $1`, partnerID, showID).Scan(&allowed)
	found, err := pg.Found(err)
	switch {
	case err != nil:
		return fmt.Errorf("may partner %d sell show %d: %w", partnerID, showID, err)
	case !found:
		return fmt.Errorf("partner %d: %w", partnerID, ErrNotFound)
	case !allowed:
		return fmt.Errorf("partner %d, show %d: %w", partnerID, showID, ErrShowNotAllowed)
	}
	return nil
}

// NewInterceptor returns the interceptor that keeps partners to the shows
// they may sell: a caller acting for a partner may hold seats only of those
// (orders and payments follow from holds). It runs after authentication.
func NewInterceptor(s *Service) connect.Interceptor { return interceptor{s} }

type interceptor struct{ svc *Service }

func (i interceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		if req.Spec().Procedure != bookingv1connect.HoldServiceCreateHoldProcedure {
			return next(ctx, req)
		}
		p, ok := auth.FromContext(ctx)
		show, hasShow := req.Any().(interface{ GetShowId() int64 })
		if !ok || !p.Is(auth.RolePartner) || p.PartnerID == 0 || !hasShow {
			return next(ctx, req)
		}
		if err := i.svc.MaySell(ctx, p.PartnerID, show.GetShowId()); err != nil {
			return nil, err
		}
		return next(ctx, req)
	}
}

func (interceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

// Holds are unary; streams pass untouched.
func (interceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}
