package ticket

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"

	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/keyset"
)

// ErrBadCode means a scanned code was not signed by this platform, or was
// altered (a forged or damaged ticket).
var ErrBadCode = fault.Sentinel(fault.TicketNotFound, "not a ticket code this platform signed")

// The code formats: the prefix versions the format, so formats coexist.
const (
	// codePrefix starts the codes signed today, which name their key.
	codePrefix = "SGT2"
	// legacyPrefix started the codes signed before key sets: no key id,
	// signed with the key derived from SEATGHOR_AUTH_SECRET (decision 0085).
	legacyPrefix = "SGT1"
)

// Codes signs and verifies the payloads of tickets' QR codes with HMAC-SHA256
// and the ticket key set (SEATGHOR_TICKET_KEYS), like the queue token of
// the gate verifies a code without the database, and nobody can make
// or alter one.
//
// A code is "SGT2.<kid>.<base64url(ticket id|place)>.<base64url(mac)>". The
// ticket id carries the show and the order, the place the seat or GA area,
// so the gate can show what the ticket is for before it checks it in; the
// kid names the key, so a code stays valid while its key is listed, however
// often the signing key changes (decision 0085).
type Codes struct{ keys *keyset.Set }

// NewCodes returns codes signed with the first key of keys and verified
// with any of them. The set is the tickets' own, so rotating the API's
// token keys never voids a printed ticket.
func NewCodes(keys *keyset.Set) *Codes { return &Codes{keys: keys} }

// Sign returns the code of a ticket.
func (c *Codes) Sign(ticketID, place string) string {
	k := c.keys.Signing()
	head := codePrefix + "." + k.ID
	payload := base64.RawURLEncoding.EncodeToString([]byte(ticketID + "|" + place))
	return head + "." + payload + "." + base64.RawURLEncoding.EncodeToString(mac(k.Secret, head, payload))
}

// Verify returns the ticket id and place of a code, or ErrBadCode.
func (c *Codes) Verify(code string) (ticketID, place string, err error) {
	parts := strings.Split(code, ".")
	var head, kid, payload, sig string
	switch {
	case len(parts) == 4 && parts[0] == codePrefix:
		head, kid, payload, sig = parts[0]+"."+parts[1], parts[1], parts[2], parts[3]
	case len(parts) == 3 && parts[0] == legacyPrefix:
		// A code of the first format verifies while the key it was signed
		// with, the one derived from the shorthand secret, is listed.
		head, kid, payload, sig = parts[0], keyset.SharedID, parts[1], parts[2]
	default:
		return "", "", ErrBadCode
	}
	key, ok := c.keys.Secret(kid)
	if !ok {
		return "", "", ErrBadCode
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, mac(key, head, payload)) {
		return "", "", ErrBadCode
	}
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return "", "", ErrBadCode
	}
	ticketID, place, ok = strings.Cut(string(raw), "|")
	if !ok {
		return "", "", ErrBadCode
	}
	return ticketID, place, nil
}

// mac signs the head (the prefix and the key id) with the payload, so
// neither can be swapped.
func mac(key []byte, head, payload string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(head + "." + payload))
	return m.Sum(nil)
}
