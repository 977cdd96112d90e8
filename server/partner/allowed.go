package partner

import (
	"context"
	"errors"
	"fmt"

	"connectrpc.com/connect"
	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/gen/seatghor/booking/v1/bookingv1connect"
	"github.com/seatghor/seatghor/server/auth"
)

// ErrShowNotAllowed refuses a partner a show outside the organisations and
// shows an admin allowed it.
var ErrShowNotAllowed = errors.New("this partner may not sell this show")

// MaySell refuses partnerID a show it may not sell: one that is neither
// among its allowed shows nor of its allowed organisations, when it has
// any. A show that does not exist is left to the booking to answer.
func (s *Service) MaySell(ctx context.Context, partnerID, showID int64) error {
	var allowed bool
	err := s.router.Catalog().QueryRow(ctx, `
		SELECT (cardinality(p.allowed_organization_ids) = 0 AND cardinality(p.allowed_show_ids) = 0)
		       OR $2 = ANY (p.allowed_show_ids)
		       OR NOT EXISTS (SELECT FROM shows WHERE show_id = $2)
		       OR EXISTS (SELECT FROM shows s WHERE s.show_id = $2 AND s.organization_id = ANY (p.allowed_organization_ids))
		FROM partners p WHERE p.partner_id = $1`, partnerID, showID).Scan(&allowed)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("partner %d: %w", partnerID, ErrNotFound)
	case err != nil:
		return fmt.Errorf("may partner %d sell show %d: %w", partnerID, showID, err)
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
