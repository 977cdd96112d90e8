package signin

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/seatghor/seatghor/server/keyset"
	"github.com/seatghor/seatghor/server/seal"
)

// loginState is what the browser carries from /auth/login to
// /auth/callback, sealed in a cookie: the values the callback must see
// again (state, nonce) or must never leave our side (the PKCE verifier),
// and the site's one-time value to give back with the token.
type loginState struct {
	State     string `json:"s"`
	Nonce     string `json:"n"`
	Verifier  string `json:"v"`
	ReturnTo  string `json:"r"`
	SiteState string `json:"t"`
	Expires   int64  `json:"e"`
}

// stateLabel derives the cookie's keys from the token keys, so the sign-in
// needs no key of its own and a process behind the same load balancer
// opens what another sealed.
const stateLabel = "seatghor sign-in state v1"

// sealer seals login states with AES-256-GCM under keys derived from a key
// set (server/seal): the signing key's seals, every listed key's opens
// (decision 0085's rotation holds for the cookie too).
type sealer struct{ box *seal.Box }

func newSealer(keys *keyset.Set) (*sealer, error) {
	box, err := seal.New(keys, stateLabel)
	if err != nil {
		return nil, err
	}
	return &sealer{box: box}, nil
}

// seal returns "<kid>.<base64url(nonce|ciphertext)>", bound to name (the
// cookie's name) so a value cannot be replayed under another.
func (s *sealer) seal(name string, st loginState) (string, error) {
	plain, err := json.Marshal(st)
	if err != nil {
		return "", err
	}
	kid, sealed, err := s.box.SealBytes(plain, []byte(name))
	if err != nil {
		return "", err
	}
	return kid + "." + base64.RawURLEncoding.EncodeToString(sealed), nil
}

var errBadState = errors.New("sign-in state missing, forged or expired")

// open reverses seal and checks the state has not expired.
func (s *sealer) open(name, value string, now time.Time) (loginState, error) {
	kid, enc, ok := strings.Cut(value, ".")
	if !ok {
		return loginState{}, errBadState
	}
	sealed, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil {
		return loginState{}, errBadState
	}
	plain, err := s.box.OpenBytes(kid, sealed, []byte(name))
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
