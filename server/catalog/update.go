package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/types/known/timestamppb"

	eventsv1 "github.com/seatghor/seatghor/gen/seatghor/events/v1"
	"github.com/seatghor/seatghor/server/amount"
	"github.com/seatghor/seatghor/server/audit"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/outbox"
	"github.com/seatghor/seatghor/server/pg"
)

// ShowChange is what UpdateShow changes; a nil field stays as it is.
type ShowChange struct {
	Title, TitleBn, Venue, VenueBn *string
	// OnSaleAt moves the opening of a show without a waiting room, while
	// the sale has not opened (a room's opening is the sale's: MoveOpening).
	OnSaleAt *time.Time
	// The hold settings: they apply to the holds taken after the change.
	HoldTTL            *time.Duration
	MaxSeatsPerAccount *int
	MaxSeatsPerHold    *int
	// SectionPrices are new prices of sections of a show without fares,
	// each of a section none of whose seats is held or sold (decision
	// 0459).
	SectionPrices []SectionPrice
	// AreaPrices are new prices of general-admission areas, each of an
	// area none of whose places is held or sold (decision 0474).
	AreaPrices []AreaPrice
}

// lockShow reads a show's row for an update of it in tx, locked.
func lockShow(ctx context.Context, tx pgx.Tx, showID int64) (Show, error) {
	show, err := scanShow(tx.QueryRow(ctx, `SELECT `+showColumns+` FROM shows WHERE show_id = $1 FOR UPDATE`, showID))
	found, err := pg.Found(err)
	if err != nil {
		return show, fmt.Errorf("lock show %d: %w", showID, err)
	}
	if !found {
		return show, fmt.Errorf("show %d: %w", showID, ErrNotFound)
	}
	return show, nil
}

// UpdateShow changes what a show's buyers cannot be hurt by (decision
// 0454): its names, its opening before the sale opens, and the settings of
// holds yet to be taken. Its starts time moves with RescheduleShow, and its
// places and prices never change once it is on sale. The shard's copy of
// the opening and the hold settings (what CreateHold checks) is written
// before the catalog commits, as MoveOpening does: a crash in between
// leaves the shard changed and the catalog not, and the same request again
// finishes it. The catalog row, an audit entry with what changed before
// and after, and a ShowPublished (the read side follows) are one
// transaction. A change to what the show already has changes nothing.
func (s *Service) UpdateShow(ctx context.Context, showID int64, c ShowChange, by audit.Actor, reason string) (Show, error) {
	now := s.clock.Now().UTC().Truncate(time.Microsecond)
	var show Show
	err := pg.InTx(ctx, s.router.Catalog(), func(tx pgx.Tx) error {
		var err error
		if show, err = lockShow(ctx, tx, showID); err != nil {
			return err
		}
		if show.CancelledAt != nil {
			return fault.New(fault.ShowCancelled, "show %d was cancelled: it changes no more", showID)
		}
		if show, err = s.withWaitingRoom(ctx, show); err != nil {
			return err
		}
		before, after := map[string]any{}, map[string]any{}
		next := show
		text := func(name string, to *string, field *string) {
			if to != nil && strings.TrimSpace(*to) != *field {
				before[name], after[name] = *field, strings.TrimSpace(*to)
				*field = strings.TrimSpace(*to)
			}
		}
		text("title", c.Title, &next.Title)
		text("title_bn", c.TitleBn, &next.TitleBn)
		text("venue", c.Venue, &next.Venue)
		text("venue_bn", c.VenueBn, &next.VenueBn)
		if next.Title == "" {
			return fault.OnField(fault.ShowInvalid, "title", "a show needs a title")
		}
		shard := false
		if c.OnSaleAt != nil && !c.OnSaleAt.UTC().Truncate(time.Microsecond).Equal(show.OnSaleAt) {
			at := c.OnSaleAt.UTC().Truncate(time.Microsecond)
			switch {
			case show.WaitingRoom != nil:
				return fault.OnField(fault.SaleOpeningFrozen, "on_sale_at",
					"show %d sells through a waiting room: move the sale's opening (UpdateSale)", showID)
			case show.PublishedAt != nil && !show.OnSaleAt.After(now):
				return fault.OnField(fault.SaleOpeningFrozen, "on_sale_at", "show %d went on sale at %s: its opening can no longer move",
					showID, show.OnSaleAt.Format(time.RFC3339))
			case !at.Before(show.StartsAt):
				return fault.OnField(fault.ShowInvalid, "on_sale_at", "show %d starts at %s: the sale must open before",
					showID, show.StartsAt.Format(time.RFC3339))
			}
			if at.Before(now) {
				at = now // a time gone by opens it now
			}
			before["on_sale_at"], after["on_sale_at"] = show.OnSaleAt, at
			next.OnSaleAt, shard = at, true
		}
		if c.HoldTTL != nil && *c.HoldTTL != show.HoldTTL {
			before["hold_ttl_seconds"], after["hold_ttl_seconds"] = show.HoldTTL.Seconds(), c.HoldTTL.Seconds()
			next.HoldTTL, shard = *c.HoldTTL, true
		}
		if c.MaxSeatsPerAccount != nil && *c.MaxSeatsPerAccount != show.MaxSeatsPerAccount {
			before["max_seats_per_account"], after["max_seats_per_account"] = show.MaxSeatsPerAccount, *c.MaxSeatsPerAccount
			next.MaxSeatsPerAccount, shard = *c.MaxSeatsPerAccount, true
		}
		if c.MaxSeatsPerHold != nil && *c.MaxSeatsPerHold != show.MaxSeatsPerHold {
			before["max_seats_per_hold"], after["max_seats_per_hold"] = show.MaxSeatsPerHold, *c.MaxSeatsPerHold
			next.MaxSeatsPerHold, shard = *c.MaxSeatsPerHold, true
		}
		repriced, err := reprice(&next, c.SectionPrices, before, after)
		if err != nil {
			return err
		}
		areas, err := repriceAreas(&next, c.AreaPrices, before, after)
		if err != nil {
			return err
		}
		if next.MaxSeatsPerHold > next.MaxSeatsPerAccount {
			return fault.OnField(fault.ShowInvalid, "max_seats_per_hold", "a hold of %d seats is more than the %d an account may have",
				next.MaxSeatsPerHold, next.MaxSeatsPerAccount)
		}
		if len(after) == 0 {
			return nil // nothing to change: a retry, or what it has
		}
		if (shard || len(repriced) > 0 || len(areas) > 0) && show.PublishedAt != nil { // a draft's shard has none of it yet
			pool, err := s.router.Shard(show.Shard)
			if err != nil {
				return err
			}
			if err := pg.InTx(ctx, pool, func(stx pgx.Tx) error {
				if _, err := stx.Exec(ctx, `
					UPDATE shows SET on_sale_at = $2, hold_ttl_ms = $3, max_seats_per_account = $4, max_seats_per_hold = $5
					WHERE show_id = $1`, showID, next.OnSaleAt, next.HoldTTL.Milliseconds(), next.MaxSeatsPerAccount,
					next.MaxSeatsPerHold); err != nil {
					return err
				}
				for _, p := range repriced {
					if err := s.inventory.Reprice(ctx, stx, showID, p); err != nil {
						return err
					}
				}
				for _, p := range areas {
					if err := s.inventory.RepriceArea(ctx, stx, showID, p); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				return fmt.Errorf("update show %d in %s: %w", showID, pool.Name, err)
			}
		}
		if len(repriced) > 0 || len(areas) > 0 {
			if err := repricePlaces(ctx, tx, next); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `
			UPDATE shows SET title = $2, title_bn = $3, venue = $4, venue_bn = $5, on_sale_at = $6, hold_ttl_ms = $7,
			                 max_seats_per_account = $8, max_seats_per_hold = $9
			WHERE show_id = $1`, showID, next.Title, next.TitleBn, next.Venue, next.VenueBn, next.OnSaleAt,
			next.HoldTTL.Milliseconds(), next.MaxSeatsPerAccount, next.MaxSeatsPerHold); err != nil {
			return fmt.Errorf("update show %d: %w", showID, err)
		}
		detail := map[string]any{"before": before, "after": after}
		if reason != "" {
			detail["reason"] = reason
		}
		if err := audit.Record(ctx, tx, audit.Entry{At: now, Actor: by, Action: "show.update",
			Target: fmt.Sprintf("show:%d", showID), OrganizationID: show.OrganizationID, Detail: detail}); err != nil {
			return err
		}
		show = next
		if show.PublishedAt == nil {
			return nil // nobody reads a draft but its managers
		}
		if err := announce(ctx, tx, show, now); err != nil {
			return err
		}
		if !renamed(before) {
			return nil
		}
		// What its e-tickets print changed: they are made again.
		return outbox.Append(ctx, tx, showID, now, &eventsv1.ShowRenamed{ShowId: showID, RenamedBy: by.ID,
			OccurredAt: timestamppb.New(now)})
	})
	if err != nil {
		return Show{}, err
	}
	return show, nil
}

// renamed tells whether a change, as its audit's "before" lists it, is of
// what a show's e-tickets print: its titles or venues.
func renamed(before map[string]any) bool {
	for _, name := range []string{"title", "title_bn", "venue", "venue_bn"} {
		if _, ok := before[name]; ok {
			return true
		}
	}
	return false
}

// reprice sets next's sections' new prices (decision 0459), noting each
// change in before and after; it returns the sections whose price
// changes. A show priced by fares (a trip with stops) has none to set.
func reprice(next *Show, prices []SectionPrice, before, after map[string]any) ([]SectionPrice, error) {
	if len(prices) > 0 && len(next.Stops) > 0 {
		return nil, fault.OnField(fault.ShowInvalid, "section_prices", "show %d is priced by its fares, not by section", next.ID)
	}
	var err error
	var changed []SectionPrice
	next.Sections, changed, err = setPrices(next.ID, sectionPart, next.Sections, prices,
		func(s *Section) (string, *int64) { return s.Name, &s.PriceMinor },
		func(p SectionPrice) (string, int64) { return p.Section, p.PriceMinor }, before, after)
	return changed, err
}

// repriceAreas sets next's general-admission areas' new prices (decision
// 0474) as reprice does its sections'.
func repriceAreas(next *Show, prices []AreaPrice, before, after map[string]any) ([]AreaPrice, error) {
	var err error
	var changed []AreaPrice
	next.GAAreas, changed, err = setPrices(next.ID, areaPart, next.GAAreas, prices,
		func(a *GAArea) (string, *int64) { return a.Name, &a.PriceMinor },
		func(p AreaPrice) (string, int64) { return p.Area, p.PriceMinor }, before, after)
	return changed, err
}

// pricedPart is how UpdateShow names one kind of a show's priced parts:
// the request's field, its name's field, what the part is called, and the
// audit's key before the part's name.
type pricedPart struct{ field, nameField, called, key string }

var (
	sectionPart = pricedPart{"section_prices", "section", "section", "price_minor:"}
	areaPart    = pricedPart{"ga_area_prices", "ga_area", "general-admission area", "price_minor:area:"}
)

// setPrices gives parts (a copy, when one changes) the prices asked for,
// checked (a part the show has, a price in range), noting each change in
// before and after, and returns them with the prices that change
// something; part reads a part's name and price, ask a price's name and
// amount.
func setPrices[T, P any](showID int64, kind pricedPart, parts []T, asked []P, part func(*T) (string, *int64),
	ask func(P) (string, int64), before, after map[string]any) ([]T, []P, error) {
	var changed []P
	for i, p := range asked {
		at := fmt.Sprintf("%s[%d]", kind.field, i)
		name, minor := ask(p)
		j := slices.IndexFunc(parts, func(x T) bool { n, _ := part(&x); return n == name })
		if j < 0 {
			return nil, nil, fault.OnField(fault.ShowInvalid, at+"."+kind.nameField, "show %d has no %s %q", showID, kind.called, name)
		}
		if minor < 0 || minor > amount.MaxPriceMinor {
			return nil, nil, fault.OnField(fault.ShowInvalid, at+".price_minor", "price %d is out of range: 0 to %d minor units",
				minor, amount.MaxPriceMinor)
		}
		if _, was := part(&parts[j]); *was != minor {
			key := kind.key + name
			if _, ok := before[key]; !ok {
				before[key] = *was
			}
			after[key] = minor
			parts = slices.Clone(parts)
			_, price := part(&parts[j])
			*price = minor
			changed = append(changed, p)
		}
	}
	return parts, changed, nil
}

// repricePlaces writes next's section and area prices to its catalog row in tx:
// the sections GetShow answers, and the places a draft is published from.
func repricePlaces(ctx context.Context, tx pgx.Tx, next Show) error {
	layout, err := json.Marshal(showLayout{next.Sections, next.GAAreas, next.BlockedSeats})
	if err != nil {
		return fmt.Errorf("encode layout: %w", err)
	}
	places, err := readPlaces(ctx, tx, next.ID)
	if err != nil {
		return err
	}
	var raw []byte // NULL: straight rows of the sections
	if places != nil {
		for i := range places.Sections {
			if j := slices.IndexFunc(next.Sections, func(s Section) bool { return s.Name == places.Sections[i].Name }); j >= 0 {
				places.Sections[i].PriceMinor = next.Sections[j].PriceMinor
			}
		}
		if raw, err = json.Marshal(places); err != nil {
			return fmt.Errorf("encode places of show %d: %w", next.ID, err)
		}
	}
	if _, err := tx.Exec(ctx, `UPDATE shows SET layout = $2, places = $3 WHERE show_id = $1`, next.ID, layout, raw); err != nil {
		return fmt.Errorf("reprice show %d: %w", next.ID, err)
	}
	return nil
}
