package shard

import (
	"crypto/rand"
	"encoding/base32"
	"fmt"
	"strconv"
	"strings"

	"github.com/seatghor/seatghor/server/fault"
)

// ErrBadID means a string is not an id this system handed out.
var ErrBadID = fault.Sentinel(fault.IDNotFound, "malformed id")

// IDAlphabet is the base32 alphabet of ids' random parts: digits and
// lower-case letters but i, l, o and u, which are read as digits or words.
const IDAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

var idEncoding = base32.NewEncoding(IDAlphabet).WithPadding(base32.NoPadding)

// NewID returns a fresh id of the given kind ("hld", "ord", …) for something
// of show showID. The show id is part of the id, so the id alone leads to the
// shard; 80 random bits make ids unguessable and collision-free.
func NewID(prefix string, showID int64) string {
	var b [10]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return prefix + "_" + strconv.FormatInt(showID, 10) + "_" + idEncoding.EncodeToString(b[:])
}

// ShowOf returns the show an id belongs to. Only the spelling NewID writes
// is an id: "ord_012_…" or "ord_+12_…" is not, so an id is one string
// wherever it is stored or compared.
func ShowOf(id string) (int64, error) {
	parts := strings.Split(id, "_")
	if len(parts) != 3 || parts[0] == "" || len(parts[2]) != 16 {
		return 0, fmt.Errorf("%q: %w", id, ErrBadID)
	}
	showID, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil || showID <= 0 || parts[1] != strconv.FormatInt(showID, 10) {
		return 0, fmt.Errorf("%q: %w", id, ErrBadID)
	}
	if b, err := idEncoding.DecodeString(parts[2]); err != nil || len(b) != 10 || idEncoding.EncodeToString(b) != parts[2] {
		return 0, fmt.Errorf("%q: %w", id, ErrBadID)
	}
	return showID, nil
}
