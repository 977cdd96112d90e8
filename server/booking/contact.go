package booking

import (
	"fmt"
	"net/mail"
	"strings"

	commonv1 "github.com/seatghor/seatghor/gen/seatghor/common/v1"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/phone"
)

// Contact is where the buyer of an order hears about it (issue 25, decision
// 0430): the booking confirmed, the trip cancelled, a refund issued. Kept
// with the order, carried in OrderCreated and BookingConfirmed; read by the
// same callers as the passengers (decision 0381).
type Contact struct {
	// Phone is a Bangladeshi mobile number in E.164; empty: none given.
	Phone string `json:"phone,omitempty"`
	// Email is an e-mail address; empty: none given.
	Email string `json:"email,omitempty"`
	// Language is "en" or "bn"; empty only when no contact was given.
	Language string `json:"language,omitempty"`
}

// The languages a contact may choose.
const (
	LangEnglish = "en"
	LangBengali = "bn"
)

// Given tells whether the order has a contact at all.
func (c Contact) Given() bool { return c != Contact{} }

// maxEmailLen is the longest address SMTP carries (RFC 5321's path limit).
const maxEmailLen = 254

// cleanContact checks a CreateOrder contact as typed and returns it as
// stored: the phone in E.164, the e-mail address bare (no display name)
// with its domain in lower case, the language in lower case ("en" when
// none was named). A refusal names the field (contact.phone,
// contact.email, contact.language). A language alone is kept: the SMS then
// goes to the first passenger's number, in that language.
func cleanContact(c Contact) (Contact, error) {
	var out Contact
	if strings.TrimSpace(c.Phone) == "" && strings.TrimSpace(c.Email) == "" && strings.TrimSpace(c.Language) == "" {
		return Contact{}, nil
	}
	if p := strings.TrimSpace(c.Phone); p != "" {
		tel, err := phone.Bangladesh(p)
		if err != nil {
			return Contact{}, fault.OnField(fault.BookingInvalid, "contact.phone",
				"%q is not a Bangladeshi mobile number: 01 and an operator's digit 3–9, then 8 digits (01711-234567, +880 1711-234567)", c.Phone)
		}
		out.Phone = tel
	}
	if e := strings.TrimSpace(c.Email); e != "" {
		email, err := cleanEmail(e)
		if err != nil {
			return Contact{}, fault.OnField(fault.BookingInvalid, "contact.email", "%q is not an e-mail address: %v", c.Email, err)
		}
		out.Email = email
	}
	switch lang := strings.ToLower(strings.TrimSpace(c.Language)); lang {
	case "", LangEnglish:
		out.Language = LangEnglish
	case LangBengali:
		out.Language = LangBengali
	default:
		return Contact{}, fault.OnField(fault.BookingInvalid, "contact.language",
			"the messages are sent in %q (English) or %q (Bengali), not %q", LangEnglish, LangBengali, c.Language)
	}
	return out, nil
}

// cleanEmail accepts one bare address, local@domain, with a dot in the
// domain (a mail server on the internet); the domain is lowered, the
// local part kept as typed (it may be case-sensitive).
func cleanEmail(s string) (string, error) {
	if len(s) > maxEmailLen {
		return "", fmt.Errorf("at most %d characters", maxEmailLen)
	}
	a, err := mail.ParseAddress(s)
	if err != nil {
		return "", err
	}
	if a.Address != s || a.Name != "" {
		return "", fmt.Errorf("give the address alone, without a name or brackets")
	}
	at := strings.LastIndexByte(s, '@')
	local, domain := s[:at], strings.ToLower(s[at+1:])
	if !strings.Contains(domain, ".") || strings.HasPrefix(domain, ".") || strings.HasSuffix(domain, ".") {
		return "", fmt.Errorf("the domain %q is not a domain on the internet", domain)
	}
	return local + "@" + domain, nil
}

// contactProto is a contact as the API and the events carry it; nil when
// none was given.
func contactProto(c Contact) *commonv1.Contact {
	if !c.Given() {
		return nil
	}
	return &commonv1.Contact{Phone: c.Phone, Email: c.Email, Language: c.Language}
}
