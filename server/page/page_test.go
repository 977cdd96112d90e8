package page

import (
	"testing"
	"time"
)

func TestRoundTrip(t *testing.T) {
	c := Cursor{At: time.Date(2026, 12, 24, 8, 0, 0, 123456000, time.UTC), ID: "ord_7_abc"}
	got, ok, err := Decode(Encode(c))
	if err != nil || !ok || !got.At.Equal(c.At) || got.ID != c.ID {
		t.Fatalf("Decode(Encode(%v)) = %v, %v, %v", c, got, ok, err)
	}
	if _, ok, err := Decode(""); ok || err != nil {
		t.Fatalf("empty token: ok=%v err=%v, want first page", ok, err)
	}
	for _, bad := range []string{"!!!", "bm9waXBl", Encode(Cursor{At: c.At})} {
		if _, _, err := Decode(bad); err != ErrBadToken {
			t.Errorf("Decode(%q) err = %v, want ErrBadToken", bad, err)
		}
	}
}
