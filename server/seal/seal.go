// Package seal encrypts the few secrets the platform must keep readable in
// its database, the partners' webhook signing secrets (which sign every
// delivery, so they cannot be hashed as API keys are), with AES-256-GCM
// under a key set (server/keyset): the first key seals, every listed key
// opens, so a key is rotated by listing a new one first, letting the stored
// values be resealed, and removing the old one (decision 0273).
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/seatghor/seatghor/server/keyset"
)

// prefix starts every sealed value: the format's version, then the key id
// and the nonce and ciphertext in unpadded base64url, colon-separated (key
// ids never hold a colon).
const prefix = "seal1:"

// aesLabel derives the AES key from a listed secret, so the bytes of the
// key set's secret are never used as a cipher key directly.
const aesLabel = "seatghor seal aes-256-gcm v1"

// Box seals and opens values under one key set. It is safe for concurrent
// use.
type Box struct {
	sealing string
	aeads   map[string]cipher.AEAD
}

// New returns the box of the key set: its first key seals.
func New(keys *keyset.Set) (*Box, error) {
	if keys == nil {
		return nil, errors.New("seal: no key set")
	}
	b := &Box{sealing: keys.Signing().ID, aeads: map[string]cipher.AEAD{}}
	for _, id := range keys.IDs() {
		secret, _ := keys.Secret(id)
		mac := hmac.New(sha256.New, secret)
		mac.Write([]byte(aesLabel))
		block, err := aes.NewCipher(mac.Sum(nil))
		if err != nil {
			return nil, fmt.Errorf("seal: key %s: %w", id, err)
		}
		if b.aeads[id], err = cipher.NewGCM(block); err != nil {
			return nil, fmt.Errorf("seal: key %s: %w", id, err)
		}
	}
	return b, nil
}

// Seal encrypts plaintext with the sealing key. purpose is bound to the
// result as additional data (the column it is kept in, say), so a value
// copied into another column does not open there.
func (b *Box) Seal(plaintext, purpose string) (string, error) {
	aead := b.aeads[b.sealing]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plaintext)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("seal: nonce: %w", err)
	}
	out := aead.Seal(nonce, nonce, []byte(plaintext), []byte(purpose))
	return prefix + b.sealing + ":" + base64.RawURLEncoding.EncodeToString(out), nil
}

// ErrNotSealed is Open's answer for a value that is not in the sealed form
// (one stored before sealing, for instance).
var ErrNotSealed = errors.New("seal: not a sealed value")

// Open decrypts a value Seal made with any key of the set, for the same
// purpose. A value sealed under a key the set no longer lists, or changed
// in any way, is an error.
func (b *Box) Open(sealed, purpose string) (string, error) {
	id, data, ok := split(sealed)
	if !ok {
		return "", ErrNotSealed
	}
	aead, ok := b.aeads[id]
	if !ok {
		return "", fmt.Errorf("seal: sealed under key %q, which the key set does not list", id)
	}
	raw, err := base64.RawURLEncoding.DecodeString(data)
	if err != nil || len(raw) < aead.NonceSize()+aead.Overhead() {
		return "", errors.New("seal: a sealed value that is cut or not base64")
	}
	plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], []byte(purpose))
	if err != nil {
		return "", fmt.Errorf("seal: value sealed under key %q does not open: %w", id, err)
	}
	return string(plain), nil
}

// Current says whether value is sealed under the sealing key, so it needs
// no resealing after a rotation.
func (b *Box) Current(value string) bool {
	id, _, ok := split(value)
	return ok && id == b.sealing
}

// IsSealed says whether value has the sealed form.
func IsSealed(value string) bool {
	_, _, ok := split(value)
	return ok
}

func split(value string) (id, data string, ok bool) {
	rest, ok := strings.CutPrefix(value, prefix)
	if !ok {
		return "", "", false
	}
	id, data, ok = strings.Cut(rest, ":")
	return id, data, ok && id != "" && data != ""
}
