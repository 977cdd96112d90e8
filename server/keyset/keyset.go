// Package keyset holds the secret keys of one signing purpose (the API's
// tokens, the tickets' codes, the waiting rooms' queue tokens, the sealing
// of webhook secrets), each key named by a key id that travels in what it
// signs. The first key signs;
// every listed key verifies, so a key is rotated by listing a new one first
// and removing the old one once nothing it signed is still in use
// (docs/decisions/0085-key-sets-per-purpose.md).
package keyset

import (
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// MinSecretLen is the shortest secret a listed key may have (32 bytes, the
// size of an HMAC-SHA256 key).
const MinSecretLen = 32

// SharedID is the key id of the keys derived from the one-line shorthand
// secret (SEATGHOR_AUTH_SECRET).
const SharedID = "shared"

// Purpose is what a set signs. Its label derives the set's key from the
// shorthand secret, so no two purposes share a key.
type Purpose string

// The purposes. The ticket and queue labels are those their keys were
// derived with before key sets existed, so codes and tokens signed then
// still verify with the derived key (decision 0085).
const (
	Tokens      Purpose = "seatghor api tokens v1"
	TicketCodes Purpose = "seatghor ticket codes v1"
	QueueTokens Purpose = "seatghor waiting room tokens v1"
	// WebhookSecrets seals the partners' webhook signing secrets kept in
	// the catalog (server/seal, decision 0273): the first key seals.
	WebhookSecrets Purpose = "seatghor webhook secrets at rest v1"
)

// Key is one secret and its id.
type Key struct {
	ID     string
	Secret []byte
}

// String names the key by id only, so a logged key shows no secret.
func (k Key) String() string { return "key " + k.ID }

// Set is the keys of one purpose, the signing key first. It is immutable.
type Set struct{ keys []Key }

// idPattern keeps key ids short and free of the separators of the formats
// that carry them (".", ":", ",").
var idPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// New returns the set of keys, the first of which signs. Ids must be
// distinct and match [A-Za-z0-9_-]{1,32}; secrets must not be empty.
func New(keys ...Key) (*Set, error) {
	if len(keys) == 0 {
		return nil, errors.New("a key set needs at least one key")
	}
	seen := map[string]bool{}
	out := make([]Key, 0, len(keys))
	for _, k := range keys {
		switch {
		case !idPattern.MatchString(k.ID):
			return nil, fmt.Errorf("key id %q: want 1 to 32 of A-Z a-z 0-9 _ -", k.ID)
		case seen[k.ID]:
			return nil, fmt.Errorf("key id %q is listed twice", k.ID)
		case len(k.Secret) == 0:
			return nil, fmt.Errorf("key %q has an empty secret", k.ID)
		}
		seen[k.ID] = true
		out = append(out, Key{ID: k.ID, Secret: append([]byte(nil), k.Secret...)})
	}
	return &Set{keys: out}, nil
}

// Parse reads "kid:secret" entries separated by commas or newlines (a file
// may hold one a line); blank entries are skipped. The secret is the text
// after the first colon, at least MinSecretLen bytes.
func Parse(s string) (*Set, error) {
	var keys []Key
	for _, e := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' || r == '\r' }) {
		if e = strings.TrimSpace(e); e == "" {
			continue
		}
		id, secret, ok := strings.Cut(e, ":")
		if !ok {
			return nil, errors.New("want kid:secret entries separated by commas")
		}
		if len(secret) < MinSecretLen {
			return nil, fmt.Errorf("key %q: the secret has %d bytes, at least %d are needed", id, len(secret), MinSecretLen)
		}
		keys = append(keys, Key{ID: id, Secret: []byte(secret)})
	}
	return New(keys...)
}

// Derive returns the key of purpose p derived from the shorthand secret:
// HMAC-SHA256(secret, label), with id SharedID.
func Derive(secret string, p Purpose) Key {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(p))
	return Key{ID: SharedID, Secret: m.Sum(nil)}
}

// FromSecret returns the set of purpose p that holds only the key derived
// from the shorthand secret (dev and tests).
func FromSecret(secret string, p Purpose) *Set { return &Set{keys: []Key{Derive(secret, p)}} }

// Resolve returns the set of purpose p: the listed keys (nil when none were
// configured) followed by the key derived from secret when secret is set,
// so moving from the shorthand to listed keys voids nothing until the
// shorthand is removed. One of the two is needed.
func Resolve(listed *Set, secret string, p Purpose) (*Set, error) {
	var keys []Key
	if listed != nil {
		keys = append(keys, listed.keys...)
	}
	if secret != "" {
		keys = append(keys, Derive(secret, p))
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("no keys for %s", p)
	}
	return New(keys...)
}

// Signing returns the key that signs: the first.
func (s *Set) Signing() Key { return s.keys[0] }

// Secret returns the secret of key id, if the set lists it.
func (s *Set) Secret(id string) ([]byte, bool) {
	for _, k := range s.keys {
		if k.ID == id {
			return k.Secret, true
		}
	}
	return nil, false
}

// IDs returns the key ids, the signing one first.
func (s *Set) IDs() []string {
	ids := make([]string, len(s.keys))
	for i, k := range s.keys {
		ids[i] = k.ID
	}
	return ids
}

// String names the keys by id only: a set never prints its secrets.
func (s *Set) String() string { return "keyset[" + strings.Join(s.IDs(), ",") + "]" }
