// Package seal encrypts with AES-256-GCM under a key set (server/keyset):
// the first key seals, every listed key opens, so a key is rotated by
// listing a new one first, letting what it sealed be resealed or expire,
// and removing the old one. It seals the few secrets the platform must
// keep readable in its database, the partners' webhook signing secrets
// (which sign every delivery, so they cannot be hashed as API keys are;
// decision 0273), as text values (Seal, Open), and the sign-in's state
// cookie (SealBytes, OpenBytes, in the cookie's own format).
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

// prefix starts every sealed text value: the format's version, then the
// key id and the nonce and ciphertext in unpadded base64url,
// colon-separated (key ids never hold a colon).
const prefix = "seal1:"

// Box seals and opens values under one key set. It is safe for concurrent
// use.
type Box struct {
	sealing string
	aeads   map[string]cipher.AEAD
}

// New returns the box of the key set: its first key seals. Each key's AES
// key is HMAC-SHA256(its secret, label), so the bytes of a listed secret
// are never a cipher key themselves and boxes of different labels share
// none.
func New(keys *keyset.Set, label string) (*Box, error) {
	if keys == nil {
		return nil, errors.New("seal: no key set")
	}
	b := &Box{sealing: keys.Signing().ID, aeads: map[string]cipher.AEAD{}}
	for _, id := range keys.IDs() {
		secret, _ := keys.Secret(id)
		mac := hmac.New(sha256.New, secret)
		mac.Write([]byte(label))
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

// SealBytes encrypts plaintext with the sealing key, bound to ad (the
// additional data: what the value is for); it returns the key's id and the
// nonce followed by the ciphertext.
func (b *Box) SealBytes(plaintext, ad []byte) (kid string, sealed []byte, err error) {
	aead := b.aeads[b.sealing]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plaintext)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", nil, fmt.Errorf("seal: nonce: %w", err)
	}
	return b.sealing, aead.Seal(nonce, nonce, plaintext, ad), nil
}

// OpenBytes decrypts what SealBytes made under key kid, for the same ad. A
// key the set no longer lists, or a value changed in any way, is an error.
func (b *Box) OpenBytes(kid string, sealed, ad []byte) ([]byte, error) {
	aead, ok := b.aeads[kid]
	if !ok {
		return nil, fmt.Errorf("seal: sealed under key %q, which the key set does not list", kid)
	}
	if len(sealed) < aead.NonceSize()+aead.Overhead() {
		return nil, errors.New("seal: a sealed value that is cut")
	}
	plain, err := aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], ad)
	if err != nil {
		return nil, fmt.Errorf("seal: value sealed under key %q does not open: %w", kid, err)
	}
	return plain, nil
}

// Seal encrypts plaintext with the sealing key into the sealed text form.
// purpose is bound to the result as additional data (the column it is
// kept in, say), so a value copied into another column does not open
// there.
func (b *Box) Seal(plaintext, purpose string) (string, error) {
	kid, sealed, err := b.SealBytes([]byte(plaintext), []byte(purpose))
	if err != nil {
		return "", err
	}
	return prefix + kid + ":" + base64.RawURLEncoding.EncodeToString(sealed), nil
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
	raw, err := base64.RawURLEncoding.DecodeString(data)
	if err != nil {
		return "", errors.New("seal: a sealed value that is not base64")
	}
	plain, err := b.OpenBytes(id, raw, []byte(purpose))
	if err != nil {
		return "", err
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
