package partner

import (
	"context"
	"fmt"

	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/pg"
)

// ErrShowNotAllowed refuses a partner a show it was not allowed to sell.
var ErrShowNotAllowed = fault.Sentinel(fault.PartnerShowForbidden, "this partner may not sell this show: an admin or the show's organisation allows it (UpdatePartnerAccess)")

// MaySell refuses partnerID a show it may not sell: partner_may_sell (the
// catalog's SQL function, migration 00140) is the one definition of what a
// partner may sell, which the webhooks' audience uses too. A partner sells
// nothing it was not allowed (decision 0284). A show that does not exist
// is left to the booking to answer: only a refusal asks the catalog whether
// the show exists.
func (s *Service) MaySell(ctx context.Context, partnerID, showID int64) error {
	var allowed bool
	err := s.router.Catalog().QueryRow(ctx, `
		SELECT partner_may_sell($1, $2) FROM partners WHERE partner_id = $1`, partnerID, showID).Scan(&allowed)
	found, err := pg.Found(err)
	switch {
	case err != nil:
		return fmt.Errorf("may partner %d sell show %d: %w", partnerID, showID, err)
	case !found:
		return fmt.Errorf("partner %d: %w", partnerID, ErrNotFound)
	case allowed:
		return nil
	}
	exists, err := catalog.ShowExists(ctx, s.router.Catalog(), showID)
	switch {
	case err != nil:
		return fmt.Errorf("may partner %d sell show %d: %w", partnerID, showID, err)
	case exists:
		return fmt.Errorf("partner %d, show %d: %w", partnerID, showID, ErrShowNotAllowed)
	}
	return nil
}
