package seal_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/seatghor/seatghor/server/keyset"
	"github.com/seatghor/seatghor/server/seal"
)

func box(t *testing.T, keys ...keyset.Key) *seal.Box {
	t.Helper()
	set, err := keyset.New(keys...)
	if err != nil {
		t.Fatal(err)
	}
	b, err := seal.New(set, "test label")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var (
	oldKey = keyset.Key{ID: "k2025", Secret: []byte("an old secret of at least thirty-two bytes")}
	newKey = keyset.Key{ID: "k2026", Secret: []byte("a new secret of at least thirty-two bytes!")}
)

func TestSealOpens(t *testing.T) {
	b := box(t, oldKey)
	const secret = "whsec_c2VjcmV0IHNlY3JldCBzZWNyZXQgc2VjcmV0IHNlY3JldCE="
	s1, err := b.Seal(secret, "webhook_endpoints.secret")
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := b.Seal(secret, "webhook_endpoints.secret")
	if s1 == s2 {
		t.Error("two seals of one value are equal: the nonce is not fresh")
	}
	if strings.Contains(s1, secret) || strings.Contains(s1, strings.TrimPrefix(secret, "whsec_")) {
		t.Errorf("the sealed value %q shows the secret", s1)
	}
	if !seal.IsSealed(s1) || !b.Current(s1) {
		t.Errorf("IsSealed %v, Current %v of a fresh seal; want both", seal.IsSealed(s1), b.Current(s1))
	}
	for _, s := range []string{s1, s2} {
		if got, err := b.Open(s, "webhook_endpoints.secret"); err != nil || got != secret {
			t.Errorf("Open = %q, %v; want the secret", got, err)
		}
	}
}

func TestSealRotates(t *testing.T) {
	before := box(t, oldKey)
	sealed, err := before.Seal("whsec_x", "p")
	if err != nil {
		t.Fatal(err)
	}
	after := box(t, newKey, oldKey)
	if got, err := after.Open(sealed, "p"); err != nil || got != "whsec_x" {
		t.Fatalf("the rotated set opens %q, %v; want whsec_x", got, err)
	}
	if after.Current(sealed) {
		t.Error("a value sealed under the old key counts as current after the rotation")
	}
	resealed, _ := after.Seal("whsec_x", "p")
	if !after.Current(resealed) || !strings.HasPrefix(resealed, "seal1:k2026:") {
		t.Errorf("resealed %q: want it under k2026", resealed)
	}
	if _, err := box(t, newKey).Open(sealed, "p"); err == nil {
		t.Error("a set without the old key opened what it sealed")
	}
}

func TestSealRefuses(t *testing.T) {
	b := box(t, oldKey)
	sealed, err := b.Seal("whsec_x", "p")
	if err != nil {
		t.Fatal(err)
	}
	flipped := []byte(sealed)
	flipped[len(flipped)-3] ^= 1
	for _, c := range []struct {
		name, value, purpose string
		notSealed            bool
	}{
		{"another purpose", sealed, "q", false},
		{"changed", string(flipped), "p", false},
		{"cut", sealed[:len("seal1:k2025:")+8], "p", false},
		{"not base64", "seal1:k2025:***", "p", false},
		{"unknown key", strings.Replace(sealed, "k2025", "k1999", 1), "p", false},
		{"plain text", "whsec_x", "p", true},
		{"no key id", "seal1::abc", "p", true},
		{"empty", "", "p", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := b.Open(c.value, c.purpose)
			if err == nil {
				t.Fatalf("Open = %q; want an error", got)
			}
			if errors.Is(err, seal.ErrNotSealed) != c.notSealed {
				t.Errorf("Open error %v: ErrNotSealed %v, want %v", err, !c.notSealed, c.notSealed)
			}
		})
	}
}
