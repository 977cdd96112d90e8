package signin

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/seatghor/seatghor/server/keyset"
)

// loginState is what the browser carries from /auth/login to
// /auth/callback, sealed in a cookie: the values the callback must see
// again (state, nonce) or must never leave our side (the PKCE verifier).
type loginState struct {
	State    string `json:"s"`
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
	ReturnTo string `json:"r"`
	Expires  int64  `json:"e"`
}

// stateLabel derives the cookie's keys from the token keys, so the sign-in
// needs no key of its own and a process behind the same load balancer
// opens what another sealed.
const stateLabel = "seatghor sign-in state v1"

// sealer seals login states with AES-256-GCM under keys derived from a key
// set: the signing key's seals, every listed key's opens (decision 0085's
// rotation holds for the cookie too).
type sealer struct {
	signing string
	aeads   map[string]cipher.AEAD
}

func newSealer(keys *keyset.Set) (*sealer, error) {
	s := &sealer{signing: keys.Signing().ID, aeads: map[string]cipher.AEAD{}}
	for _, id := range keys.IDs() {
		secret, _ := keys.Secret(id)
		m := hmac.New(sha256.New, secret)
		m.Write([]byte(stateLabel))
		block, err := aes.NewCipher(m.Sum(nil))
		if err != nil {
			return nil, err
		}
		if s.aeads[id], err = cipher.NewGCM(block); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// seal returns "<kid>.<base64url(nonce|ciphertext)>", bound to name (the
// cookie's name) so a value cannot be replayed under another.
func (s *sealer) seal(name string, st loginState) (string, error) {
	plain, err := json.Marshal(st)
	if err != nil {
		return "", err
	}
	aead := s.aeads[s.signing]
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	sealed := aead.Seal(nonce, nonce, plain, []byte(name))
	return s.signing + "." + base64.RawURLEncoding.EncodeToString(sealed), nil
}

var errBadState = errors.New("sign-in state missing, forged or expired")

// open reverses seal and checks the state has not expired.
func (s *sealer) open(name, value string, now time.Time) (loginState, error) {
	kid, enc, ok := strings.Cut(value, ".")
	aead, known := s.aeads[kid]
	if !ok || !known {
		return loginState{}, errBadState
	}
	sealed, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || len(sealed) < aead.NonceSize() {
		return loginState{}, errBadState
	}
	plain, err := aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], []byte(name))
	if err != nil {
		return loginState{}, errBadState
	}
	var st loginState
	if err := json.Unmarshal(plain, &st); err != nil {
		return loginState{}, fmt.Errorf("%w: %v", errBadState, err)
	}
	if now.Unix() >= st.Expires {
		return loginState{}, errBadState
	}
	return st, nil
}
