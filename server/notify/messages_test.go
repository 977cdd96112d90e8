package notify_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/server/display"
	"github.com/seatghor/seatghor/server/notify"
)

func booking(title, titleBn, counter, counterBn string, seats ...string) notify.Booking {
	return notify.Booking{OrderID: "ord_7_abcdefghjkmnpqrs", Seats: seats,
		Link: "https://seatghor.com.bd/t/ABCDEFGHJK",
		Trip: notify.Trip{Title: title, TitleBn: titleBn, Zone: "Asia/Dhaka",
			StartsAt: time.Date(2026, 12, 30, 2, 0, 0, 0, time.UTC), Boarding: counter, BoardingBn: counterBn,
			BoardingAt: time.Date(2026, 12, 30, 1, 30, 0, 0, time.UTC)}}
}

// TestBookingSMS (decision 0434): the English SMS is GSM-7; the Bengali
// one UCS-2, in Bengali digits and names, and never over two parts,
// however long the title, the counter and the seat list; both name the
// ticket number and end with the short link (decision 0471).
func TestBookingSMS(t *testing.T) {
	short := booking("Dhaka to Chattogram", "ঢাকা থেকে চট্টগ্রাম", "Kalabagan", "কলাবাগান", "A1", "A2")
	en := notify.BookingSMS(display.English, short)
	require.Equal(t, "Seatghor: ticket ABCDEFGHJK confirmed. Dhaka to Chattogram, 30 Dec 07:30, seat A1,A2. "+
		"Board at: Kalabagan. Tickets: https://seatghor.com.bd/t/ABCDEFGHJK", en)
	enc, _, n := notify.Count(en)
	require.Equal(t, notify.GSM7, enc)
	require.Equal(t, 1, n, "with the short link, one part")

	bn := notify.BookingSMS(display.Bengali, short)
	require.Contains(t, bn, "৩০/১২ ০৭:৩০")
	require.Contains(t, bn, "কলাবাগান")
	require.Equal(t, "বুকিং নিশ্চিত, টিকিট ABCDEFGHJK। ঢাকা থেকে চট্টগ্রাম, ৩০/১২ ০৭:৩০, সিট A1,A2। কাউন্টার: কলাবাগান। "+
		"https://seatghor.com.bd/t/ABCDEFGHJK", bn)
	enc, _, n = notify.Count(bn)
	require.Equal(t, notify.UCS2, enc)
	require.LessOrEqual(t, n, notify.MaxBookingSegments, bn)

	long := booking(strings.Repeat("Dhaka to Cox's Bazar via Chattogram ", 3), strings.Repeat("ঢাকা থেকে কক্সবাজার চট্টগ্রাম হয়ে ", 3),
		"Arambagh Green Line Counter", "আরামবাগ গ্রিন লাইন কাউন্টার", "A1", "A2", "A3", "A4", "B1", "B2", "B3", "B4")
	for _, lang := range []display.Lang{display.English, display.Bengali} {
		s := notify.BookingSMS(lang, long)
		_, _, n := notify.Count(s)
		require.LessOrEqual(t, n, notify.MaxBookingSegments, "%s: %s", lang, s)
		require.Contains(t, s, long.Link, "the link is never cut")
		require.Contains(t, s, "ABCDEFGHJK"+map[display.Lang]string{display.English: " confirmed", display.Bengali: "।"}[lang],
			"the ticket number is never cut")
	}
	enc, _, _ = notify.Count(notify.BookingSMS(display.English, long))
	require.Equal(t, notify.GSM7, enc, "shortening keeps an English SMS GSM-7")
}

func TestOtherMessages(t *testing.T) {
	trip := booking("Dhaka to Sylhet", "ঢাকা থেকে সিলেট", "", "").Trip
	c := notify.Cancellation{OrderID: "ord_2_xxxxxxxxxxxxxxxx", Trip: trip, Refund: notify.Money{Minor: 240000, Currency: "BDT"}}
	require.Equal(t, "Seatghor: Dhaka to Sylhet, 30 Dec 07:30 is cancelled by the operator. Tk 2,400.00 of ticket XXXXXXXXXX is refunded in full.",
		notify.TripCancelled(display.English, c).Text)
	require.Contains(t, notify.TripCancelled(display.Bengali, c).Text, "৳২,৪০০.০০")
	c.AtCounter = true // paid in cash at a counter (decision 0443)
	require.Equal(t, "Seatghor: Dhaka to Sylhet, 30 Dec 07:30 is cancelled by the operator. Tk 2,400.00 of ticket XXXXXXXXXX is refunded in full in cash at the counter.",
		notify.TripCancelled(display.English, c).Text)
	require.Contains(t, notify.TripCancelled(display.Bengali, c).Text, "কাউন্টার থেকে নগদ ফেরত নিন")
	r := notify.Refund{OrderID: "ord_2_xxxxxxxxxxxxxxxx", Amount: notify.Money{Minor: 90000, Currency: "BDT"}, Fee: notify.Money{Minor: 10000, Currency: "BDT"}}
	require.Equal(t, "Seatghor: Tk 900.00 of ticket XXXXXXXXXX is refunded. Cancellation fee kept: Tk 100.00.", notify.RefundIssued(display.English, r).Text)
	require.Contains(t, notify.RefundIssued(display.Bengali, r).Text, "৳৯০০.০০")
	later := trip
	later.StartsAt, later.BoardingAt = trip.StartsAt.Add(2*time.Hour), trip.BoardingAt.Add(2*time.Hour)
	d := notify.Delay{OrderID: "ord_2_xxxxxxxxxxxxxxxx", Was: trip, Now: later, Reason: "Fog on the Meghna bridge"}
	require.Equal(t, "Seatghor: Dhaka to Sylhet is delayed: now 30 Dec 09:30 (was 30 Dec 07:30). Ticket XXXXXXXXXX.", notify.TripDelayed(display.English, d).Text)
	require.Equal(t, "সিটঘর: ঢাকা থেকে সিলেট দেরিতে ছাড়বে। নতুন সময় ৩০/১২ ০৯:৩০ (আগে ৩০/১২ ০৭:৩০)। টিকিট XXXXXXXXXX",
		notify.TripDelayed(display.Bengali, d).Text)
	require.Contains(t, notify.DelayEmail(display.English, d).Text, "Reason: Fog on the Meghna bridge")
	require.NotContains(t, notify.TripDelayed(display.English, d).Text, "Fog", "the SMS stays short")

	// At a counter, with a long title: one part in English, two in Bengali.
	long := booking(strings.Repeat("Dhaka to Cox's Bazar via Chattogram ", 3), strings.Repeat("ঢাকা থেকে কক্সবাজার চট্টগ্রাম হয়ে ", 3),
		"Arambagh Green Line Counter", "আরামবাগ গ্রিন লাইন কাউন্টার").Trip
	moved := long
	moved.StartsAt, moved.BoardingAt = long.StartsAt.Add(3*time.Hour), long.BoardingAt.Add(3*time.Hour)
	d = notify.Delay{OrderID: "ord_12_abcdefghjkmnpqrs", Was: long, Now: moved}
	for lang, parts := range map[display.Lang]int{display.English: 1, display.Bengali: 2} {
		s := notify.TripDelayed(lang, d).Text
		_, _, n := notify.Count(s)
		require.LessOrEqual(t, n, parts, "%s: %s", lang, s)
		require.Contains(t, s, "ABCDEFGHJK")
	}
}
