package api

import (
	"context"
	"fmt"
	"time"

	"connectrpc.com/connect"

	ledgerv1 "github.com/seatghor/seatghor/gen/seatghor/ledger/v1"
	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/display"
	"github.com/seatghor/seatghor/server/export"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/ledger"
)

// exportPiece is the size of a message of the export's stream: big enough
// that framing costs nothing, small enough that the server holds little.
const exportPiece = 32 << 10

// exportPage is how many orders or journals one read of a shard takes.
const exportPage = 500

// ExportSales streams a show's orders or a ledger statement as CSV
// (decision 0449): the show's managers and admins; the orders of an
// organisation's shows starting in a period, its managers and admins
// (decision 0460); a ledger statement of a period of every show, the
// admins'. Rows are read a page at a time and sent in pieces as
// they are written, so a large show's file is never whole in memory. An
// error after the first piece ends the stream with it: the caller has an
// incomplete file and is told so.
func (h *ledgerHandler) ExportSales(ctx context.Context, req *connect.Request[ledgerv1.ExportSalesRequest], stream *connect.ServerStream[ledgerv1.ExportSalesResponse]) error {
	m := req.Msg
	showID, lang, org := m.GetShowId(), display.ParseLang(m.GetLanguage()), m.GetOrganizationId()
	orgFile := showID == 0 && org != ""
	switch {
	case showID != 0:
		if _, err := h.manager(ctx, showID, "export the sales of"); err != nil {
			return err
		}
	case orgFile:
		refused := fault.New(fault.PermissionDenied, "only the organisation's managers export its sales")
		if _, err := h.orgManager(ctx, org, refused); err != nil {
			return err
		}
	default:
		if err := ledgerAdminOnly(ctx); err != nil {
			return err
		}
	}
	// Bangladesh time: the platform's shows are there (display.DefaultZone).
	loc := display.ZoneOrDefault(display.DefaultZone)
	name := fmt.Sprintf("%d", showID)
	if showID == 0 {
		name = m.GetPeriodStart().AsTime().In(loc).Format("20060102") + "-" + m.GetPeriodEnd().AsTime().In(loc).Format("20060102")
		if orgFile {
			name = org + "-" + name
		}
	}
	first := true
	pieces := export.NewPieces(exportPiece, func(b []byte) error {
		msg := &ledgerv1.ExportSalesResponse{Data: b}
		if first {
			kind := "orders"
			if m.GetKind() == ledgerv1.ExportKind_EXPORT_KIND_LEDGER {
				kind = "ledger"
			}
			msg.Filename, msg.ContentType = fmt.Sprintf("%s-%s-%s.csv", kind, name, lang), "text/csv; charset=utf-8"
			first = false
		}
		return stream.Send(msg)
	})
	stream.ResponseHeader().Set("Cache-Control", "private, no-store")
	var err error
	switch m.GetKind() {
	case ledgerv1.ExportKind_EXPORT_KIND_ORDERS:
		err = h.exportOrders(ctx, m, lang, loc, pieces)
	default:
		f := ledger.Filter{ShowID: showID, CreatedAfter: ledgerTime(m.GetPeriodStart()), CreatedBefore: ledgerTime(m.GetPeriodEnd())}
		if orgFile {
			f.ShowIDs, err = h.organizationShowIDs(ctx, org)
		}
		if err == nil {
			err = h.exportLedger(ctx, f, lang, loc, pieces)
		}
	}
	if err != nil {
		return err
	}
	if err := pieces.Flush(); err != nil {
		return fmt.Errorf("send the file: %w", err)
	}
	return nil
}

// exportOrders writes the orders of m's show, or of the shows of m's
// organisation starting in m's period, soonest first, show by show.
func (h *ledgerHandler) exportOrders(ctx context.Context, m *ledgerv1.ExportSalesRequest, lang display.Lang, loc *time.Location, pieces *export.Pieces) error {
	if h.booking == nil || h.catalog == nil {
		return fault.New(fault.NotServed, "this server does not read bookings")
	}
	file, err := export.NewOrders(pieces, lang, loc)
	if err != nil {
		return err
	}
	write := func(show catalog.Show) error {
		title := show.Title
		if lang == display.Bengali && show.TitleBn != "" {
			title = show.TitleBn
		}
		file.Show(title, show.StartsAt)
		return h.booking.EachOrderPage(ctx, show.ID, exportPage, func(page []booking.ExportedOrder) error { return file.Write(page) })
	}
	if m.GetShowId() != 0 {
		show, err := h.catalog.GetShow(ctx, m.GetShowId())
		if err != nil {
			return err
		}
		return write(show)
	}
	end := m.GetPeriodEnd().AsTime()
	return h.eachShow(ctx, catalog.ShowFilter{OrganizationID: m.GetOrganizationId(), StartsFrom: m.GetPeriodStart().AsTime()},
		func(show catalog.Show) (bool, error) {
			if !show.StartsAt.Before(end) {
				return false, nil
			}
			return true, write(show)
		})
}

// organizationShowIDs are the ids of every published show of org, whenever
// it starts: a period's ledger statement has the journals posted in the
// period, of shows past and to come (decision 0464). Empty, not nil, for
// an organisation with none.
func (h *ledgerHandler) organizationShowIDs(ctx context.Context, org string) ([]int64, error) {
	if h.catalog == nil {
		return nil, fault.New(fault.NotServed, "this server does not read the catalog")
	}
	ids := []int64{}
	err := h.eachShow(ctx, catalog.ShowFilter{OrganizationID: org}, func(s catalog.Show) (bool, error) {
		ids = append(ids, s.ID)
		return true, nil
	})
	return ids, err
}

// eachShow calls fn with every show of f, soonest first, read a page at a
// time, until fn answers false or an error.
func (h *ledgerHandler) eachShow(ctx context.Context, f catalog.ShowFilter, fn func(catalog.Show) (bool, error)) error {
	for token := ""; ; {
		shows, next, err := h.catalog.ListShows(ctx, exportPage, token, f)
		if err != nil {
			return err
		}
		for _, show := range shows {
			if more, err := fn(show); err != nil || !more {
				return err
			}
		}
		if next == "" {
			return nil
		}
		token = next
	}
}

func (h *ledgerHandler) exportLedger(ctx context.Context, f ledger.Filter, lang display.Lang, loc *time.Location, pieces *export.Pieces) error {
	file, err := export.NewLedger(pieces, lang, loc)
	if err != nil {
		return err
	}
	f.PageSize = exportPage
	for {
		page, next, err := h.svc.ListJournal(ctx, f)
		if err != nil {
			return err
		}
		if err := file.Write(page); err != nil {
			return err
		}
		if next == "" {
			return nil
		}
		f.PageToken = next
	}
}
