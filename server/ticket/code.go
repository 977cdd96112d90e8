package ticket

import (
	"crypto/ed25519"
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
	// signedPrefix starts the codes signed today, with Ed25519: anyone with
	// the public keys verifies them (decision 0390).
	signedPrefix = "SGT3"
	// macPrefix started the codes signed with HMAC-SHA256 and a key id
	// (decision 0085); they verify at the server while their key is listed.
	macPrefix = "SGT2"
	// legacyPrefix started the codes signed before key sets: no key id,
	// signed with the key derived from SEATGHOR_AUTH_SECRET (decision 0085).
	legacyPrefix = "SGT1"
)

// ed25519Label derives a ticket key's Ed25519 seed from its secret:
// HMAC-SHA256(secret, label) is the seed, so each listed key signs both
// formats without a second secret to keep, and the HMAC key and the
// signing key differ (decision 0390).
const ed25519Label = "seatghor ticket codes ed25519 v1"

// Algorithm names the signature of the codes signed today.
const Algorithm = "Ed25519"

// PublicKey is a public key of the ticket codes, named by its key id.
type PublicKey struct {
	ID  string
	Key ed25519.PublicKey
	// Signing: this key signs the codes issued now.
	Signing bool
}

// Codes signs and verifies the payloads of tickets' QR codes with the
// ticket key set (SEATGHOR_TICKET_KEYS): the gate verifies a code without
// the database, and nobody can make or alter one.
//
// A code is "SGT3.<kid>.<base64url(ticket id|place)>.<base64url(sig)>",
// sig being the Ed25519 signature of the text before its last dot, by the
// key derived from kid's secret; a gate device verifies it with the public
// keys (PublicKeys) and no secret (decision 0390). The ticket id carries
// the show and the order, the place the seat or GA area, so the gate can
// show what the ticket is for before it checks it in; the kid names the
// key, so a code stays valid while its key is listed, however often the
// signing key changes (decision 0085). The HMAC-signed codes of before
// ("SGT2.<kid>.<payload>.<mac>", "SGT1.<payload>.<mac>") still verify here.
type Codes struct {
	keys *keyset.Set
	// private holds each listed key's Ed25519 key, by id.
	private map[string]ed25519.PrivateKey
}

// NewCodes returns codes signed with the first key of keys and verified
// with any of them. The set is the tickets' own, so rotating the API's
// token keys never voids a printed ticket.
func NewCodes(keys *keyset.Set) *Codes {
	c := &Codes{keys: keys, private: map[string]ed25519.PrivateKey{}}
	for _, id := range keys.IDs() {
		secret, _ := keys.Secret(id)
		m := hmac.New(sha256.New, secret)
		m.Write([]byte(ed25519Label))
		c.private[id] = ed25519.NewKeyFromSeed(m.Sum(nil))
	}
	return c
}

// PublicKeys returns the public key of every listed key, the signing key
// first: what a gate needs to verify codes offline.
func (c *Codes) PublicKeys() []PublicKey {
	ids := c.keys.IDs()
	out := make([]PublicKey, 0, len(ids))
	for i, id := range ids {
		out = append(out, PublicKey{ID: id, Key: c.private[id].Public().(ed25519.PublicKey), Signing: i == 0})
	}
	return out
}

// Sign returns the code of a ticket, signed with Ed25519.
func (c *Codes) Sign(ticketID, place string) string {
	id := c.keys.Signing().ID
	head := signedPrefix + "." + id + "." + base64.RawURLEncoding.EncodeToString([]byte(ticketID+"|"+place))
	return head + "." + base64.RawURLEncoding.EncodeToString(ed25519.Sign(c.private[id], []byte(head)))
}

// SignMAC returns the code of a ticket in the HMAC format of decision 0085
// (SGT2), as codes were signed before Ed25519: tests of the codes already
// printed use it.
func (c *Codes) SignMAC(ticketID, place string) string {
	k := c.keys.Signing()
	head := macPrefix + "." + k.ID
	payload := base64.RawURLEncoding.EncodeToString([]byte(ticketID + "|" + place))
	return head + "." + payload + "." + base64.RawURLEncoding.EncodeToString(mac(k.Secret, head, payload))
}

// Verify returns the ticket id and place of a code, or ErrBadCode.
func (c *Codes) Verify(code string) (ticketID, place string, err error) {
	parts := strings.Split(code, ".")
	var payload string
	switch {
	case len(parts) == 4 && parts[0] == signedPrefix:
		key, ok := c.private[parts[1]]
		sig, err := base64.RawURLEncoding.DecodeString(parts[3])
		if !ok || err != nil || !ed25519.Verify(key.Public().(ed25519.PublicKey), []byte(code[:strings.LastIndexByte(code, '.')]), sig) {
			return "", "", ErrBadCode
		}
		payload = parts[2]
	case len(parts) == 4 && parts[0] == macPrefix:
		if !c.macValid(parts[1], parts[0]+"."+parts[1], parts[2], parts[3]) {
			return "", "", ErrBadCode
		}
		payload = parts[2]
	case len(parts) == 3 && parts[0] == legacyPrefix:
		// A code of the first format verifies while the key it was signed
		// with, the one derived from the shorthand secret, is listed.
		if !c.macValid(keyset.SharedID, parts[0], parts[1], parts[2]) {
			return "", "", ErrBadCode
		}
		payload = parts[1]
	default:
		return "", "", ErrBadCode
	}
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return "", "", ErrBadCode
	}
	ticketID, place, ok := strings.Cut(string(raw), "|")
	if !ok {
		return "", "", ErrBadCode
	}
	return ticketID, place, nil
}

// macValid checks the HMAC of an SGT2 or SGT1 code with key kid.
func (c *Codes) macValid(kid, head, payload, sig string) bool {
	key, ok := c.keys.Secret(kid)
	if !ok {
		return false
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	return err == nil && hmac.Equal(got, mac(key, head, payload))
}

// mac signs the head (the prefix and the key id) with the payload, so
// neither can be swapped.
func mac(key []byte, head, payload string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(head + "." + payload))
	return m.Sum(nil)
}
