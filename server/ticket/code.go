package ticket

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
)

// ErrBadCode means a scanned code was not signed by this platform, or was
// altered (a forged or damaged ticket).
var ErrBadCode = errors.New("not a ticket code this platform signed")

// codePrefix versions the code format, so a later format can coexist.
const codePrefix = "SGT1"

// Codes signs and verifies the payloads of tickets' QR codes with HMAC-SHA256
// and a server secret, like the queue token of: the gate verifies a
// code without the database, and nobody can make or alter one.
//
// A code is "SGT1.<base64url(ticket id|place)>.<base64url(mac)>". The
// ticket id carries the show and the order, the place the seat or GA area,
// so the gate can show what the ticket is for before it checks it in.
type Codes struct{ key []byte }

// NewCodes returns codes signed with a key derived from secret (the
// platform's auth secret): a separate key per purpose, so a ticket code can
// never pass as a token or the other way round.
func NewCodes(secret string) *Codes {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("seatghor ticket codes v1"))
	return &Codes{key: m.Sum(nil)}
}

// Sign returns the code of a ticket.
func (c *Codes) Sign(ticketID, place string) string {
	payload := base64.RawURLEncoding.EncodeToString([]byte(ticketID + "|" + place))
	return codePrefix + "." + payload + "." + base64.RawURLEncoding.EncodeToString(c.mac(payload))
}

// Verify returns the ticket id and place of a code, or ErrBadCode.
func (c *Codes) Verify(code string) (ticketID, place string, err error) {
	parts := strings.Split(code, ".")
	if len(parts) != 3 || parts[0] != codePrefix {
		return "", "", ErrBadCode
	}
	mac, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || !hmac.Equal(mac, c.mac(parts[1])) {
		return "", "", ErrBadCode
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", "", ErrBadCode
	}
	ticketID, place, ok := strings.Cut(string(raw), "|")
	if !ok {
		return "", "", ErrBadCode
	}
	return ticketID, place, nil
}

func (c *Codes) mac(payload string) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte(codePrefix + "." + payload))
	return m.Sum(nil)
}
