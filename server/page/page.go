// Package page encodes the opaque page tokens of list RPCs: a keyset
// cursor (the sort time and the id of the last item of a page).
package page

import (
	"encoding/base64"
	"strings"
	"time"

	"github.com/seatghor/seatghor/server/fault"
)

// ErrBadToken means a token was not issued by this server.
var ErrBadToken = fault.SentinelOnField(fault.PageTokenInvalid, "page_token", "not a page token this server issued")

// Cursor is the position after the last item of a page.
type Cursor struct {
	At time.Time
	ID string
}

// Encode returns the token of c.
func Encode(c Cursor) string {
	return base64.RawURLEncoding.EncodeToString([]byte(c.At.UTC().Format(time.RFC3339Nano) + "|" + c.ID))
}

// Decode returns the cursor of token; ok is false for the empty token (the
// first page).
func Decode(token string) (c Cursor, ok bool, err error) {
	if token == "" {
		return Cursor{}, false, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return Cursor{}, false, ErrBadToken
	}
	at, id, found := strings.Cut(string(raw), "|")
	if !found || id == "" {
		return Cursor{}, false, ErrBadToken
	}
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return Cursor{}, false, ErrBadToken
	}
	return Cursor{At: t, ID: id}, true, nil
}
