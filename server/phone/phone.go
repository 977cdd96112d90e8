// Package phone reads Bangladeshi mobile numbers as people write them
// ("01711-234567", "+880 1711 234567", "8801711234567", in Bengali digits
// too) and spells them one way, E.164 ("+8801711234567"), for storing,
// comparing and sending SMS (decision 0382).
package phone

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// ErrNotMobile means a number is not a Bangladeshi mobile number.
var ErrNotMobile = errors.New("not a Bangladeshi mobile number")

// operators are the mobile prefixes in use after 01: 3 and 7
// Grameenphone, 4 and 9 Banglalink, 5 Teletalk, 6 Airtel, 8 Robi. 011
// (Citycell) closed in 2016 and 010 and 012 were never given out.
const operators = "3456789"

// Bangladesh returns s, a Bangladeshi mobile number in any common
// spelling, in E.164: "+880" and the ten digits after the national
// number's leading 0. Spaces, dashes, dots and brackets between the
// digits are ignored, Bengali digits read as digits; the country code may
// be written +880, 880, 00880 or +88 before the national 0 ("+88
// 01711-234567"), or left out ("01711234567"). Anything else, and an
// operator prefix not in use (012, 011), is ErrNotMobile.
func Bangladesh(s string) (string, error) {
	var b strings.Builder
	plus := false
	for _, r := range strings.TrimSpace(s) {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case r >= '০' && r <= '৯':
			b.WriteRune('0' + (r - '০'))
		case r == '+' && !plus && b.Len() == 0: // before the digits only
			plus = true
		case r == '-' || r == '.' || r == '(' || r == ')' || r == '/' || unicode.IsSpace(r):
		default:
			return "", fmt.Errorf("%q: %w", s, ErrNotMobile)
		}
	}
	d := b.String()
	switch {
	case plus && !strings.HasPrefix(d, "880"):
		return "", fmt.Errorf("%q: %w (the country code is +880)", s, ErrNotMobile)
	case strings.HasPrefix(d, "00880"):
		d = d[5:]
	case strings.HasPrefix(d, "880"):
		d = d[3:]
	}
	// "+88 017…": the national number's 0 after the country code.
	if len(d) == 11 && d[0] == '0' {
		d = d[1:]
	}
	if len(d) != 10 || d[0] != '1' || !strings.ContainsRune(operators, rune(d[1])) {
		return "", fmt.Errorf("%q: %w (01 and an operator's digit 3–9, then 8 digits: 01711-234567)", s, ErrNotMobile)
	}
	return "+880" + d, nil
}

// National returns an E.164 Bangladeshi number as Bangladeshis write it:
// "01711-234567". Anything else is returned as it is.
func National(e164 string) string {
	if len(e164) != 14 || !strings.HasPrefix(e164, "+880") {
		return e164
	}
	return "0" + e164[4:8] + "-" + e164[8:]
}
