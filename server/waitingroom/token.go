package waitingroom

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/seatghor/seatghor/server/keyset"
)

// The two kinds of token. Their prefixes are part of what is signed, so one
// can never pass for the other.
const (
	// queuePrefix starts a queue token: a place in line.
	queuePrefix = "wr_"
	// admittedPrefix starts an admitted token, the Queue-Token header of
	// CreateHold (R-5.2: "qt_8f2a...").
	admittedPrefix = "qt_"
)

// ticket is what a token carries. It is verified with the HMAC alone: no
// database and no Redis.
type ticket struct {
	// SaleID is the room: its first show's id.
	SaleID int64 `json:"s"`
	// ShowID is the show the caller joined through (any of the sale's).
	ShowID  int64  `json:"h,omitempty"`
	Subject string `json:"u"`
	// Place is the place in line, 0 while the lottery is not drawn.
	Place int64 `json:"p,omitempty"`
	// OpensAt is the opening instant (unix ms): the lottery's draw time.
	OpensAt int64 `json:"o,omitempty"`
	// EndsAt is the end of the room's window (unix ms) when the token was
	// issued; an operator's later change wins (it is in Redis).
	EndsAt int64 `json:"e,omitempty"`
	// AdmittedTTL is how long an admission lasts (ms), from the room.
	AdmittedTTL int64 `json:"t,omitempty"`
	IssuedAt    int64 `json:"i"`
	ExpiresAt   int64 `json:"x"`
}

// signer mints tokens with the first key of the queue key set
// (SEATGHOR_QUEUE_KEYS) and checks them with the key they name, so a token
// stays valid while its key is listed (decision 0085). The set is the
// waiting rooms' own: an auth JWT can never pass as a queue token, and
// rotating the API's token keys sends nobody back to the end of the line.
type signer struct{ keys *keyset.Set }

func newSigner(keys *keyset.Set) signer { return signer{keys: keys} }

var b64 = base64.RawURLEncoding

// mac signs the head (the prefix, and the key id unless the token is of the
// first format) with the payload.
func mac(key []byte, head, payload string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(head))
	m.Write([]byte(payload))
	return m.Sum(nil)
}

// mint returns "<prefix><kid>.<payload>.<mac>".
func (s signer) mint(prefix string, t ticket) string {
	raw, _ := json.Marshal(t) // a struct of numbers and a string: cannot fail
	payload := b64.EncodeToString(raw)
	k := s.keys.Signing()
	head := prefix + k.ID + "."
	return head + payload + "." + b64.EncodeToString(mac(k.Secret, head, payload))
}

// Reasons a token is refused.
var (
	errMalformed = errors.New("malformed")
	errForged    = errors.New("bad signature")
	errExpired   = errors.New("expired")
)

// open checks the signature and expiry of a token of the given kind.
func (s signer) open(prefix, token string, now time.Time) (ticket, error) {
	rest, ok := strings.CutPrefix(token, prefix)
	if !ok {
		return ticket{}, errMalformed
	}
	var head, kid, payload, sig string
	switch parts := strings.Split(rest, "."); len(parts) {
	case 3:
		head, kid, payload, sig = prefix+parts[0]+".", parts[0], parts[1], parts[2]
	case 2:
		// The first format named no key: it was signed with the key derived
		// from the shorthand secret, and verifies while that is listed.
		head, kid, payload, sig = prefix, keyset.SharedID, parts[0], parts[1]
	default:
		return ticket{}, errMalformed
	}
	got, err := b64.DecodeString(sig)
	if err != nil {
		return ticket{}, errMalformed
	}
	key, ok := s.keys.Secret(kid)
	if !ok || !hmac.Equal(got, mac(key, head, payload)) {
		return ticket{}, errForged
	}
	raw, err := b64.DecodeString(payload)
	if err != nil {
		return ticket{}, errMalformed
	}
	var t ticket
	if err := json.Unmarshal(raw, &t); err != nil || t.SaleID <= 0 || t.Subject == "" {
		return ticket{}, errMalformed
	}
	if now.UnixMilli() >= t.ExpiresAt {
		return t, errExpired
	}
	return t, nil
}
