package export

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/display"
	"github.com/seatghor/seatghor/server/ledger"
	"github.com/seatghor/seatghor/server/place"
)

// Times and amounts keep ASCII digits in either language (decision 0449):
// a spreadsheet sorts the times and sums the amounts; the words around
// them (headers, statuses, kinds) are the reader's language.
const timeForm = "2006-01-02 15:04"

// words are an export's column names and values in a language.
type words struct {
	orders, ledger []string
	status         map[string]string
	channel        map[string]string
	kind           map[ledger.Kind]string
}

var labels = map[display.Lang]words{
	display.English: {
		orders: []string{"Order", "Created", "Status", "Channel", "Buyer", "Phone", "Email", "From", "To", "Seats",
			"Passengers", "Amount", "Refunded", "Currency", "Payment", "Cancel reason", "Show", "Show starts"},
		ledger: []string{"Journal", "Posted", "Kind", "Reference", "Show", "Account", "Debit", "Credit", "Currency",
			"Description"},
		status: map[string]string{"pending_payment": "awaiting payment", "confirmed": "confirmed",
			"cancelled": "cancelled", "expired": "expired", "refunded": "refunded"},
		channel: map[string]string{"web": "web", "partner": "partner", "counter": "counter"},
		kind: map[ledger.Kind]string{ledger.KindBooking: "booking", ledger.KindGatewayFee: "gateway fee",
			ledger.KindRefund: "refund", ledger.KindCancellationFee: "cancellation fee", ledger.KindPayout: "payout",
			ledger.KindReversal: "reversal", ledger.KindSettlement: "settlement"},
	},
	display.Bengali: {
		orders: []string{"অর্ডার", "সময়", "অবস্থা", "মাধ্যম", "ক্রেতা", "ফোন", "ই-মেইল", "কোথা থেকে", "কোথায়", "আসন",
			"যাত্রী", "টাকা", "ফেরত", "মুদ্রা", "পেমেন্ট", "বাতিলের কারণ", "শো", "শো শুরু"},
		ledger: []string{"জার্নাল", "সময়", "ধরন", "রেফারেন্স", "শো", "হিসাব", "ডেবিট", "ক্রেডিট", "মুদ্রা", "বিবরণ"},
		status: map[string]string{"pending_payment": "পেমেন্টের অপেক্ষায়", "confirmed": "নিশ্চিত",
			"cancelled": "বাতিল", "expired": "মেয়াদোত্তীর্ণ", "refunded": "ফেরত"},
		channel: map[string]string{"web": "ওয়েব", "partner": "পার্টনার", "counter": "কাউন্টার"},
		kind: map[ledger.Kind]string{ledger.KindBooking: "বুকিং", ledger.KindGatewayFee: "গেটওয়ে ফি",
			ledger.KindRefund: "ফেরত", ledger.KindCancellationFee: "বাতিল ফি", ledger.KindPayout: "পরিশোধ",
			ledger.KindReversal: "উল্টো এন্ট্রি", ledger.KindSettlement: "নিষ্পত্তি"},
	},
}

func wordsOf(lang display.Lang) words {
	if w, ok := labels[lang]; ok {
		return w
	}
	return labels[display.English]
}

// amount is minor units as a decimal a spreadsheet reads: 60000 → 600.00.
func amount(minor int64) string {
	sign := ""
	if minor < 0 {
		sign, minor = "-", -minor
	}
	return fmt.Sprintf("%s%d.%02d", sign, minor/100, minor%100)
}

// Orders writes a show's orders file.
type Orders struct {
	file *CSV
	w    words
	lang display.Lang
	loc  *time.Location
	// show and starts name the show of the rows written next (a file of
	// an organisation's period has many).
	show, starts string
}

// Show names the show of the orders written next: its title in the
// file's language and when it starts.
func (o *Orders) Show(title string, startsAt time.Time) {
	o.show, o.starts = title, startsAt.In(o.loc).Format(timeForm)
}

// NewOrders starts an orders file on w in lang, times in loc.
func NewOrders(w io.Writer, lang display.Lang, loc *time.Location) (*Orders, error) {
	ws := wordsOf(lang)
	file, err := NewCSV(w, ws.orders)
	if err != nil {
		return nil, fmt.Errorf("orders: %w", err)
	}
	return &Orders{file: file, w: ws, lang: lang, loc: loc}, nil
}

// Write writes a page of orders, one row each.
func (o *Orders) Write(page []booking.ExportedOrder) error {
	stop := func(p string) string {
		if o.lang == display.Bengali {
			if bn := place.Bengali(p); bn != "" {
				return bn
			}
		}
		return p
	}
	for _, x := range page {
		seats := make([]string, 0, len(x.Lines))
		for _, l := range x.Lines {
			if l.GAArea != "" {
				seats = append(seats, fmt.Sprintf("%s ×%d", l.GAArea, l.Quantity))
			} else {
				seats = append(seats, l.Seat)
			}
		}
		channel := o.w.channel[x.Channel]
		if x.PartnerID != 0 {
			channel += fmt.Sprintf(" %d", x.PartnerID)
		}
		status := o.w.status[x.Status]
		if status == "" {
			status = x.Status
		}
		if err := o.file.Row(x.ID, x.CreatedAt.In(o.loc).Format(timeForm), status, channel, Text(x.UserID),
			Text(x.Phone), Text(x.Email), stop(x.From), stop(x.To), strings.Join(seats, " "),
			Text(strings.Join(x.Passengers, "; ")), amount(x.AmountMinor), amount(x.RefundedMinor), x.Currency,
			x.PaymentID, Text(x.CancelReason), Text(o.show), o.starts); err != nil {
			return fmt.Errorf("order %s: %w", x.ID, err)
		}
	}
	return o.file.Flush()
}

// Ledger writes a ledger statement: a row per line of each journal, a
// debit (+) or a credit (−) in its own column, as a statement reads.
type Ledger struct {
	file *CSV
	w    words
	loc  *time.Location
}

// NewLedger starts a ledger statement on w in lang, times in loc.
func NewLedger(w io.Writer, lang display.Lang, loc *time.Location) (*Ledger, error) {
	ws := wordsOf(lang)
	file, err := NewCSV(w, ws.ledger)
	if err != nil {
		return nil, fmt.Errorf("ledger statement: %w", err)
	}
	return &Ledger{file: file, w: ws, loc: loc}, nil
}

// Write writes a page of journals.
func (l *Ledger) Write(page []ledger.Posted) error {
	for _, j := range page {
		kind := l.w.kind[j.Kind]
		if kind == "" {
			kind = string(j.Kind)
		}
		for _, line := range j.Lines {
			debit, credit := "", ""
			if line.AmountMinor > 0 {
				debit = amount(line.AmountMinor)
			} else {
				credit = amount(-line.AmountMinor)
			}
			if err := l.file.Row(j.TxnID, j.CreatedAt.In(l.loc).Format(timeForm), kind, j.Reference,
				fmt.Sprint(j.ShowID), line.Account, debit, credit, j.Currency, Text(j.Description)); err != nil {
				return fmt.Errorf("journal %s: %w", j.TxnID, err)
			}
		}
	}
	return l.file.Flush()
}
