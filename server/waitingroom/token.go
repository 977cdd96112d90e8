package waitingroom

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"
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

// signer mints and checks tokens with a key derived from the server secret.
type signer struct{ key []byte }

// newSigner derives the waiting room's own key from the platform secret, so
// a token of one kind (an auth JWT) can never be replayed as another.
func newSigner(secret []byte) signer {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("seatghor waiting room tokens v1"))
	return signer{key: m.Sum(nil)}
}

var b64 = base64.RawURLEncoding

func (s signer) mac(prefix, payload string) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(prefix))
	m.Write([]byte(payload))
	return m.Sum(nil)
}

func (s signer) mint(prefix string, t ticket) string {
	raw, _ := json.Marshal(t) // a struct of numbers and a string: cannot fail
	payload := b64.EncodeToString(raw)
	return prefix + payload + "." + b64.EncodeToString(s.mac(prefix, payload))
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
	payload, sig, ok := strings.Cut(rest, ".")
	if !ok {
		return ticket{}, errMalformed
	}
	got, err := b64.DecodeString(sig)
	if err != nil {
		return ticket{}, errMalformed
	}
	if !hmac.Equal(got, s.mac(prefix, payload)) {
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
