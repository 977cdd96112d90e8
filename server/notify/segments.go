package notify

import "unicode/utf16"

// Encoding is how an SMS's text travels on the air (3GPP TS 23.038).
type Encoding string

const (
	// GSM7 is the GSM 7-bit default alphabet: 160 characters in one
	// message, 153 in each part of a longer one (the 7 others carry the
	// part's header).
	GSM7 Encoding = "GSM-7"
	// UCS2 is 16-bit UCS-2, for any text with a character outside the GSM
	// alphabet (Bengali always): 70 characters in one message, 67 in each
	// part of a longer one.
	UCS2 Encoding = "UCS-2"
)

// The capacities of one message and of each part of a longer one, in
// septets (GSM-7) or 16-bit units (UCS-2).
const (
	gsmSingle, gsmPart   = 160, 153
	ucs2Single, ucs2Part = 70, 67
)

// gsmBasic is the GSM 03.38 default alphabet; gsmExtension the characters
// of its extension table, which cost two septets (an escape and the
// character).
const (
	gsmBasic = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?" +
		"¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
	gsmExtension = "^{}\\[~]|€\f"
)

var gsmCost = func() map[rune]int {
	m := map[rune]int{}
	for _, r := range gsmBasic {
		m[r] = 1
	}
	for _, r := range gsmExtension {
		m[r] = 2
	}
	return m
}()

// Count says how text is sent: its encoding, its length in that encoding's
// units (septets, or UTF-16 code units for UCS-2, as phones count them)
// and the number of messages it takes. An empty text is one message.
func Count(text string) (enc Encoding, units, segments int) {
	units, gsm := 0, true
	for _, r := range text {
		c, ok := gsmCost[r]
		if !ok {
			gsm = false
			break
		}
		units += c
	}
	if gsm {
		return GSM7, units, split(units, gsmSingle, gsmPart)
	}
	units = len(utf16.Encode([]rune(text)))
	return UCS2, units, split(units, ucs2Single, ucs2Part)
}

func split(units, single, part int) int {
	if units <= single {
		return 1
	}
	return (units + part - 1) / part
}
