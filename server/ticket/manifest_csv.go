package ticket

import (
	"bytes"
	"fmt"
	"time"

	"github.com/seatghor/seatghor/server/display"
	"github.com/seatghor/seatghor/server/export"
)

// manifestWords are the CSV's column names and values in a language.
type manifestWords struct {
	columns  []string
	status   map[Boarding]string
	channel  map[Channel]string
	yes      string
	timeForm string
}

var manifestLabels = map[display.Lang]manifestWords{
	display.English: {
		columns: []string{"Seat", "Ticket", "Passenger", "Phone", "Woman", "From", "To", "Boarding counter",
			"Boarding time", "Channel", "Status", "Boarded at", "Gate", "Order"},
		status:   map[Boarding]string{Expected: "expected", Boarded: "boarded", NoShow: "no-show"},
		channel:  map[Channel]string{ChannelWeb: "web", ChannelPartner: "partner", ChannelCounter: "counter"},
		yes:      "yes",
		timeForm: "2006-01-02 15:04",
	},
	display.Bengali: {
		columns: []string{"আসন", "টিকিট", "যাত্রী", "ফোন", "নারী", "কোথা থেকে", "কোথায়", "ওঠার কাউন্টার",
			"ওঠার সময়", "মাধ্যম", "অবস্থা", "উঠেছেন", "গেট", "অর্ডার"},
		status:   map[Boarding]string{Expected: "অপেক্ষমাণ", Boarded: "উঠেছেন", NoShow: "অনুপস্থিত"},
		channel:  map[Channel]string{ChannelWeb: "ওয়েব", ChannelPartner: "পার্টনার", ChannelCounter: "কাউন্টার"},
		yes:      "হ্যাঁ",
		timeForm: "2006-01-02 15:04",
	},
}

// ManifestTable is m as the rows of a table in lang, under its column
// names: what the CSV holds and the printed manifest shows. Times are in
// the show's zone; a partner's channel names the partner.
func ManifestTable(m Manifest, lang display.Lang) (columns []string, rows [][]string) {
	w, ok := manifestLabels[lang]
	if !ok {
		w = manifestLabels[display.English]
	}
	loc := display.ZoneOrDefault(m.TimeZone)
	at := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return display.Digits(t.In(loc).Format(w.timeForm), lang)
	}
	pick := func(en, bn string) string {
		if lang == display.Bengali && bn != "" {
			return bn
		}
		return en
	}
	for _, e := range m.Entries {
		woman := ""
		if e.Woman {
			woman = w.yes
		}
		seat := e.Seat
		if seat == "" {
			seat = e.GAArea
		}
		var from, to, counter, boarding string
		if j := e.Journey; j != nil {
			from, to = pick(j.GetFromName(), j.GetFromNameBn()), pick(j.GetToName(), j.GetToNameBn())
			counter = pick(j.GetBoardingCounterName(), j.GetBoardingCounterNameBn())
			if j.GetBoardingAt() != nil {
				boarding = at(j.GetBoardingAt().AsTime())
			} else if j.GetDepartsAt() != nil {
				boarding = at(j.GetDepartsAt().AsTime())
			}
		}
		channel := w.channel[e.Channel]
		if e.PartnerID != 0 {
			channel += fmt.Sprintf(" %d", e.PartnerID)
		}
		rows = append(rows, []string{seat, e.TicketID, e.Passenger, e.Phone, woman, from, to, counter, boarding,
			channel, w.status[e.Status], at(e.BoardedAt), e.Gate, e.OrderID})
	}
	return w.columns, rows
}

// The columns of ManifestTable that people type, which a spreadsheet could
// take for a formula.
const (
	passengerColumn = 2
	gateColumn      = 12
)

// ManifestCSV is m as a CSV file in lang (export.CSV: UTF-8 with a
// byte-order mark, so a spreadsheet opens Bengali names as they are); times
// in the show's zone.
func ManifestCSV(m Manifest, lang display.Lang) ([]byte, error) {
	columns, rows := ManifestTable(m, lang)
	var buf bytes.Buffer
	file, err := export.NewCSV(&buf, columns)
	if err != nil {
		return nil, fmt.Errorf("the manifest: %w", err)
	}
	for _, row := range rows {
		row[passengerColumn], row[gateColumn] = export.Text(row[passengerColumn]), export.Text(row[gateColumn])
		if err := file.Row(row...); err != nil {
			return nil, fmt.Errorf("the manifest's line of %s: %w", row[1], err)
		}
	}
	if err := file.Flush(); err != nil {
		return nil, fmt.Errorf("the manifest: %w", err)
	}
	return buf.Bytes(), nil
}
