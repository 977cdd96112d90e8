package api

import (
	"context"
	"fmt"
	"time"

	"connectrpc.com/connect"

	ledgerv1 "github.com/seatghor/seatghor/gen/seatghor/ledger/v1"
	"github.com/seatghor/seatghor/server/booking"
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
// (decision 0449): the show's managers and admins; a period of every show
// is the admins'. Rows are read a page at a time and sent in pieces as
// they are written, so a large show's file is never whole in memory. An
// error after the first piece ends the stream with it: the caller has an
// incomplete file and is told so.
func (h *ledgerHandler) ExportSales(ctx context.Context, req *connect.Request[ledgerv1.ExportSalesRequest], stream *connect.ServerStream[ledgerv1.ExportSalesResponse]) error {
	m := req.Msg
	showID, lang := m.GetShowId(), display.ParseLang(m.GetLanguage())
	if showID != 0 {
		if _, err := h.manager(ctx, showID, "export the sales of"); err != nil {
			return err
		}
	} else if err := ledgerAdminOnly(ctx); err != nil {
		return err
	}
	name := fmt.Sprintf("%d", showID)
	if showID == 0 {
		name = m.GetPeriodStart().AsTime().Format("20060102") + "-" + m.GetPeriodEnd().AsTime().Format("20060102")
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
	// Bangladesh time: the platform's shows are there (display.DefaultZone).
	loc := display.ZoneOrDefault(display.DefaultZone)
	var err error
	switch m.GetKind() {
	case ledgerv1.ExportKind_EXPORT_KIND_ORDERS:
		err = h.exportOrders(ctx, showID, lang, loc, pieces)
	default:
		err = h.exportLedger(ctx, ledger.Filter{ShowID: showID, CreatedAfter: ledgerTime(m.GetPeriodStart()),
			CreatedBefore: ledgerTime(m.GetPeriodEnd())}, lang, loc, pieces)
	}
	if err != nil {
		return err
	}
	if err := pieces.Flush(); err != nil {
		return fmt.Errorf("send the file: %w", err)
	}
	return nil
}

func (h *ledgerHandler) exportOrders(ctx context.Context, showID int64, lang display.Lang, loc *time.Location, pieces *export.Pieces) error {
	if h.booking == nil {
		return fault.New(fault.NotServed, "this server does not read bookings")
	}
	file, err := export.NewOrders(pieces, lang, loc)
	if err != nil {
		return err
	}
	return h.booking.EachOrderPage(ctx, showID, exportPage, func(page []booking.ExportedOrder) error { return file.Write(page) })
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
