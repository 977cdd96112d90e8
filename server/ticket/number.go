package ticket

import (
	"strings"

	"github.com/seatghor/seatghor/server/shard"
)

// NumberLength is the length of a ticket number: 10 characters of base32,
// 50 bits, the first of an order id's 80 random bits (decision 0471).
const NumberLength = 10

// Number is the ticket number of an order, what the SMS, the receipts and
// the site show a passenger: the first NumberLength characters of the order
// id's random part, upper case ("ord_1000_mwty306ptd9gg5y7" is MWTY306PTD).
// It is not unique by construction: it finds an order together with the
// phone the tickets went to (FindOrder), where two orders sharing a number
// and a phone is a chance of 2⁻⁵⁰ per pair. "" for what is not an order id.
func Number(orderID string) string {
	if _, err := shard.ShowOf(orderID); err != nil || !strings.HasPrefix(orderID, "ord_") {
		return ""
	}
	random := orderID[strings.LastIndexByte(orderID, '_')+1:]
	return strings.ToUpper(random[:NumberLength])
}

// Label is what a message or a printed ticket calls an order: its ticket
// number, or the id itself for what is not an order id.
func Label(orderID string) string {
	if n := Number(orderID); n != "" {
		return n
	}
	return orderID
}

// ParseNumber reads a ticket number as a person types it: any case, spaces
// and dashes ignored, and the letters the alphabet leaves out for looking
// like digits read as those digits (O as 0, I and L as 1, as Crockford's
// base32 reads them). It answers the number as stored (lower case), or
// false for what cannot be one.
func ParseNumber(s string) (string, bool) {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r == ' ' || r == '-':
			continue
		case r == 'o':
			r = '0'
		case r == 'i' || r == 'l':
			r = '1'
		}
		if !strings.ContainsRune(shard.IDAlphabet, r) {
			return "", false
		}
		b.WriteRune(r)
	}
	if b.Len() != NumberLength {
		return "", false
	}
	return b.String(), true
}
