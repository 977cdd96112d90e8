package notify

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/seatghor/seatghor/server/display"
	"github.com/seatghor/seatghor/server/ticket"
)

// MaxBookingSegments bounds the booking SMS (decision 0434): a Bengali
// text travels as UCS-2, 67 characters a part, so the message is shortened
// (the title first, then the counter, then the seats) until it fits two
// parts. An English one is GSM-7 and fits one or two.
const MaxBookingSegments = 2

// Trip is what a message says about the show or trip.
type Trip struct {
	// Title and TitleBn name it in English and in Bengali script (TitleBn
	// may be empty: the English is used).
	Title, TitleBn string
	// StartsAt is when it starts; Zone where (IANA; empty: Asia/Dhaka).
	StartsAt time.Time
	Zone     string
	// Boarding and BoardingBn name the boarding counter, BoardingAt when
	// to be there: bus trips with stops, from the order's journey; empty
	// otherwise.
	Boarding, BoardingBn string
	BoardingAt           time.Time
}

// Booking is a confirmed order, as its messages tell it.
type Booking struct {
	OrderID string
	Trip    Trip
	// Seats booked, or Quantity places of a general-admission area.
	Seats    []string
	Quantity int
	// Link opens the order and its e-tickets on the site: a short one,
	// ending with the ticket number (decision 0471).
	Link string
}

// Money is an amount in minor units.
type Money struct {
	Minor    int64
	Currency string
}

// Message is a rendered notification: Text for SMS and the e-mail's body,
// Subject for the e-mail.
type Message struct {
	Subject, Text string
}

// BookingSMS is the SMS of a confirmed booking, within MaxBookingSegments.
func BookingSMS(lang display.Lang, b Booking) string {
	title, counter, seats := pick(lang, b.Trip.Title, b.Trip.TitleBn), pick(lang, b.Trip.Boarding, b.Trip.BoardingBn), seatText(lang, b)
	render := func(title, counter, seats string) string {
		at, where := when(lang, b.Trip)
		if lang == display.Bengali {
			// No brand: the sender id says who it is from (decision
			// 0434); 67 characters a part leave no room for it.
			s := fmt.Sprintf("বুকিং নিশ্চিত, টিকিট %s। %s, %s, %s।", ticket.Label(b.OrderID), title, shortWhen(b.Trip), seats)
			if counter != "" {
				s += fmt.Sprintf(" %s: %s।", where, counter)
			}
			return s + " " + b.Link // the link is the ticket's: no label to spare
		}
		s := fmt.Sprintf("Seatghor: ticket %s confirmed. %s, %s, %s.", ticket.Label(b.OrderID), title, at, seats)
		if counter != "" {
			s += fmt.Sprintf(" %s: %s.", where, counter)
		}
		return s + " Tickets: " + b.Link
	}
	s := render(title, counter, seats)
	// Shorten what may be long, least needed first: a long title to a
	// few words, then the counter's name, then the seat list.
	for _, cut := range []func(){
		func() { title = shorten(title, 16) },
		func() { counter = shorten(counter, 12) },
		func() { counter = "" },
		func() { seats = countText(lang, len(b.Seats), b.Quantity) },
		func() { title = shorten(title, 8) },
	} {
		if _, _, n := Count(s); n <= MaxBookingSegments {
			break
		}
		cut()
		s = render(title, counter, seats)
	}
	return s
}

// BookingEmail is the e-mail of a confirmed booking: everything the SMS
// says, unshortened, and the link to the e-tickets (decision 0435).
func BookingEmail(lang display.Lang, b Booking) Message {
	at, where := when(lang, b.Trip)
	title, counter := pick(lang, b.Trip.Title, b.Trip.TitleBn), pick(lang, b.Trip.Boarding, b.Trip.BoardingBn)
	var t strings.Builder
	if lang == display.Bengali {
		fmt.Fprintf(&t, "আপনার বুকিং নিশ্চিত হয়েছে।\n\nটিকিট নম্বর: %s\n%s\nসময়: %s\n%s\n", ticket.Label(b.OrderID), title, at, seatText(lang, b))
		if counter != "" {
			fmt.Fprintf(&t, "%s: %s\n", where, counter)
		}
		fmt.Fprintf(&t, "\nআপনার ই-টিকিট (PDF) এখানে: %s\n\nসিটঘর\n", b.Link)
		return Message{Subject: fmt.Sprintf("বুকিং নিশ্চিত: %s, %s", title, at), Text: t.String()}
	}
	fmt.Fprintf(&t, "Your booking is confirmed.\n\nTicket number: %s\n%s\nWhen: %s\n%s\n", ticket.Label(b.OrderID), title, at, seatText(lang, b))
	if counter != "" {
		fmt.Fprintf(&t, "%s: %s\n", where, counter)
	}
	fmt.Fprintf(&t, "\nYour e-tickets (PDF) are here: %s\n\nSeatghor\n", b.Link)
	return Message{Subject: fmt.Sprintf("Booking confirmed: %s, %s", title, at), Text: t.String()}
}

// Cancellation is a trip the operator cancelled, for one order.
type Cancellation struct {
	OrderID string
	Trip    Trip
	// Refund is what goes back: the order's total, no fee kept.
	Refund Money
	// AtCounter: the order was paid in cash at a counter, where the cash
	// is given back (decision 0443).
	AtCounter bool
}

// TripCancelled is the message of a trip the operator cancelled, with the
// refund: the one message the passenger gets about it (decision 0432).
func TripCancelled(lang display.Lang, c Cancellation) Message {
	at, _ := when(lang, c.Trip)
	title := shorten(pick(lang, c.Trip.Title, c.Trip.TitleBn), 24)
	if lang == display.Bengali {
		amount := display.Money(c.Refund.Minor, c.Refund.Currency, display.Bengali)
		back := "পুরো ফেরত দেওয়া হচ্ছে।"
		if c.AtCounter {
			back = "কাউন্টার থেকে নগদ ফেরত নিন।"
		}
		return Message{Subject: "যাত্রা বাতিল: " + title,
			Text: fmt.Sprintf("সিটঘর: %s, %s বাতিল হয়েছে। টিকিট %s-এর %s %s", title, at, ticket.Label(c.OrderID), amount, back)}
	}
	back := "is refunded in full."
	if c.AtCounter {
		back = "is refunded in full in cash at the counter."
	}
	return Message{Subject: "Trip cancelled: " + title,
		Text: fmt.Sprintf("Seatghor: %s, %s is cancelled by the operator. %s of ticket %s %s",
			title, at, smsMoney(c.Refund), ticket.Label(c.OrderID), back)}
}

// Refund is money given back for an order, other than for a cancelled trip.
type Refund struct {
	OrderID string
	Amount  Money
	// Fee is what was kept (a buyer's cancellation); zero when none.
	Fee Money
	// AtCounter: the order was taken back at a counter and Amount given
	// back there in cash; the message says the ticket is void.
	AtCounter bool
}

// RefundIssued is the message of a refund.
func RefundIssued(lang display.Lang, r Refund) Message {
	if lang == display.Bengali {
		s := fmt.Sprintf("সিটঘর: টিকিট %s-এর %s ফেরত দেওয়া হয়েছে।", ticket.Label(r.OrderID), display.Money(r.Amount.Minor, r.Amount.Currency, display.Bengali))
		if r.AtCounter {
			s = fmt.Sprintf("সিটঘর: টিকিট %s কাউন্টারে বাতিল হয়েছে, আর চলবে না। %s নগদে ফেরত দেওয়া হয়েছে।", ticket.Label(r.OrderID),
				display.Money(r.Amount.Minor, r.Amount.Currency, display.Bengali))
		}
		if r.Fee.Minor > 0 {
			s += fmt.Sprintf(" বাতিল ফি %s।", display.Money(r.Fee.Minor, r.Fee.Currency, display.Bengali))
		}
		return Message{Subject: "টাকা ফেরত: টিকিট " + ticket.Label(r.OrderID), Text: s}
	}
	s := fmt.Sprintf("Seatghor: %s of ticket %s is refunded.", smsMoney(r.Amount), ticket.Label(r.OrderID))
	if r.AtCounter {
		s = fmt.Sprintf("Seatghor: ticket %s was cancelled at the counter and is void. %s given back in cash.",
			ticket.Label(r.OrderID), smsMoney(r.Amount))
	}
	if r.Fee.Minor > 0 {
		s += fmt.Sprintf(" Cancellation fee kept: %s.", smsMoney(r.Fee))
	}
	return Message{Subject: "Refund issued: ticket " + ticket.Label(r.OrderID), Text: s}
}

// Delay is a trip moved to a later time (decision 0441), for one order:
// Was at the times it was sold for, Now at the new ones (the boarding
// counter's time too, on a trip with stops).
type Delay struct {
	OrderID  string
	Was, Now Trip
	// Reason is the operator's, for the e-mail (the SMS stays short).
	Reason string
}

// TripDelayed is the message of a delayed trip: Text is the SMS, at most
// one part in English and two in Bengali (title and counter shortened).
func TripDelayed(lang display.Lang, d Delay) Message {
	was, _ := when(lang, d.Was)
	now, _ := when(lang, d.Now)
	title := shorten(pick(lang, d.Now.Title, d.Now.TitleBn), 24)
	counter := shorten(pick(lang, d.Now.Boarding, d.Now.BoardingBn), 20)
	if lang == display.Bengali {
		// UCS-2 parts are short: the times as dd/mm hh:mm, as the
		// booking's SMS writes them.
		now, was = shortWhen(d.Now), shortWhen(d.Was)
		if counter != "" {
			now += ", " + counter
		}
		return Message{Subject: "যাত্রা দেরিতে: " + title,
			Text: fmt.Sprintf("সিটঘর: %s দেরিতে ছাড়বে। নতুন সময় %s (আগে %s)। টিকিট %s", title, now, was, ticket.Label(d.OrderID))}
	}
	if counter != "" {
		now += " at " + counter
	}
	return Message{Subject: "Trip delayed: " + title,
		Text: fmt.Sprintf("Seatghor: %s is delayed: now %s (was %s). Ticket %s.", title, now, was, ticket.Label(d.OrderID))}
}

// DelayEmail is the e-mail of a delayed trip: the SMS's text and the
// operator's reason.
func DelayEmail(lang display.Lang, d Delay) Message {
	m := TripDelayed(lang, d)
	if d.Reason != "" {
		m.Text += "\n\n" + pick(lang, "Reason: ", "কারণ: ") + d.Reason
	}
	return m
}

// pick is the Bengali text when there is one and the buyer reads Bengali.
func pick(lang display.Lang, en, bn string) string {
	if lang == display.Bengali && bn != "" {
		return bn
	}
	return en
}

// when is the time to tell, short ("30 Dec 07:30" or "৩০ ডিসেম্বর ০৭:৩০"):
// the boarding time when the journey gives one, else the start; and what
// the counter is called.
func when(lang display.Lang, t Trip) (at, where string) {
	loc := display.ZoneOrDefault(t.Zone)
	ts := t.StartsAt
	if !t.BoardingAt.IsZero() {
		ts = t.BoardingAt
	}
	l := ts.In(loc)
	if lang == display.Bengali {
		return display.Digits(fmt.Sprintf("%d %s %s", l.Day(), bnMonths[l.Month()-1], l.Format("15:04")), display.Bengali), "কাউন্টার"
	}
	return l.Format("2 Jan 15:04"), "Board at"
}

// shortWhen is the time in Bengali digits as dd/mm hh:mm, for the SMS.
func shortWhen(t Trip) string {
	ts := t.StartsAt
	if !t.BoardingAt.IsZero() {
		ts = t.BoardingAt
	}
	return display.Digits(ts.In(display.ZoneOrDefault(t.Zone)).Format("02/01 15:04"), display.Bengali)
}

var bnMonths = [...]string{"জানুয়ারি", "ফেব্রুয়ারি", "মার্চ", "এপ্রিল", "মে", "জুন", "জুলাই", "আগস্ট",
	"সেপ্টেম্বর", "অক্টোবর", "নভেম্বর", "ডিসেম্বর"}

func seatText(lang display.Lang, b Booking) string {
	if len(b.Seats) == 0 {
		return countText(lang, 0, b.Quantity)
	}
	if lang == display.Bengali {
		return "সিট " + strings.Join(b.Seats, ",")
	}
	return "seat " + strings.Join(b.Seats, ",")
}

func countText(lang display.Lang, seats, quantity int) string {
	n := max(seats, quantity)
	if lang == display.Bengali {
		if seats > 0 {
			return display.Digits(fmt.Sprint(n), lang) + "টি সিট"
		}
		return display.Digits(fmt.Sprint(n), lang) + " জন"
	}
	if seats > 0 {
		return fmt.Sprintf("%d seats", n)
	}
	return fmt.Sprintf("%d places", n)
}

// smsMoney writes an amount in GSM-7 characters: "Tk 1,200.00" (the taka
// sign would make the whole English SMS UCS-2, 70 characters a part).
func smsMoney(m Money) string {
	s := display.Money(m.Minor, m.Currency, display.English)
	return strings.Replace(s, "৳", "Tk ", 1)
}

// shorten cuts s to at most n characters, ending it with ".." when cut
// (not "…", which is not GSM-7: it would make an English SMS UCS-2).
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-2])) + ".."
}
