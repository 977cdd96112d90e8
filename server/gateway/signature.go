package gateway

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DefaultSignatureTolerance is how far a webhook's signed timestamp may be
// from now before the event is refused as stale. It bounds how long a
// captured request can be replayed.
const DefaultSignatureTolerance = 300 * time.Second

// The errors VerifySignature returns, wrapped with detail. A webhook endpoint
// maps every one of them to a 4xx and does not store the event.
var (
	// ErrSignatureMissing: the request carries no signature header at all.
	ErrSignatureMissing = errors.New("gateway: webhook signature missing")
	// ErrSignatureMalformed: the header is there but cannot be parsed.
	ErrSignatureMalformed = errors.New("gateway: webhook signature malformed")
	// ErrSignatureMismatch: no v1 signature matches any active secret; the
	// event is forged, altered, or signed with a secret we do not hold.
	ErrSignatureMismatch = errors.New("gateway: webhook signature mismatch")
	// ErrSignatureStale: the signature is genuine but its timestamp is
	// outside the tolerance (a replay, or a badly skewed clock).
	ErrSignatureStale = errors.New("gateway: webhook signature stale")
)

// The errors an adapter's webhook parser returns after the signature is
// verified. They live here, next to the signature errors, so the webhook
// endpoint maps one set of errors whatever the provider.
var (
	// ErrEventMalformed: the signed body is not a well-formed event.
	ErrEventMalformed = errors.New("gateway: webhook event malformed")
	// ErrEventTypeUnknown: a genuine event of a type Seatghor does not
	// understand. Parsers return it together with the Event (ID, Type,
	// CreatedAt set), so the endpoint may store and ignore it.
	ErrEventTypeUnknown = errors.New("gateway: webhook event type unknown")
)

// Sign returns the signature header value for body sent at t:
//
//	t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>[,v1=…]
//
// with one v1 entry per secret, so a receiver still holding only the old
// secret keeps verifying while secrets are rotated. Empty secrets are
// skipped.
func Sign(secrets []string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	var b strings.Builder
	b.WriteString("t=")
	b.WriteString(ts)
	for _, secret := range secrets {
		if secret == "" {
			continue
		}
		b.WriteString(",v1=")
		b.WriteString(hex.EncodeToString(mac(secret, ts, body)))
	}
	return b.String()
}

// VerifySignature checks a signature header made by Sign against the raw
// body (R-6.4: verify the raw payload, before any parsing). It accepts when
// any v1 entry matches any of secrets, then refuses a timestamp further than
// tolerance from now in either direction (0 means
// DefaultSignatureTolerance). The signature is checked before the timestamp:
// an unsigned timestamp says nothing.
func VerifySignature(header string, body []byte, secrets []string, now time.Time, tolerance time.Duration) error {
	if tolerance <= 0 {
		tolerance = DefaultSignatureTolerance
	}
	header = strings.TrimSpace(header)
	if header == "" {
		return ErrSignatureMissing
	}
	ts, sigs, err := parseSignature(header)
	if err != nil {
		return err
	}
	tsText := strconv.FormatInt(ts, 10)
	matched := false
	for _, secret := range secrets {
		if secret == "" {
			continue
		}
		want := mac(secret, tsText, body)
		for _, sig := range sigs {
			// Constant time, so the comparison leaks nothing about how
			// much of a forged signature was right.
			if hmac.Equal(sig, want) {
				matched = true
			}
		}
	}
	if !matched {
		return fmt.Errorf("%w: none of %d signatures matches", ErrSignatureMismatch, len(sigs))
	}
	age := now.Sub(time.Unix(ts, 0))
	if age > tolerance || age < -tolerance {
		return fmt.Errorf("%w: signed at %d, %s from now exceeds %s", ErrSignatureStale, ts, age.Round(time.Second), tolerance)
	}
	return nil
}

// parseSignature splits "t=…,v1=…,v1=…". Unknown keys are ignored so a
// sender may add a newer scheme next to v1.
func parseSignature(header string) (ts int64, sigs [][]byte, err error) {
	haveTS := false
	for part := range strings.SplitSeq(header, ",") {
		key, value, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return 0, nil, fmt.Errorf("%w: element %q is not key=value", ErrSignatureMalformed, part)
		}
		switch key {
		case "t":
			if haveTS {
				return 0, nil, fmt.Errorf("%w: more than one timestamp", ErrSignatureMalformed)
			}
			ts, err = strconv.ParseInt(value, 10, 64)
			if err != nil {
				return 0, nil, fmt.Errorf("%w: timestamp %q: %v", ErrSignatureMalformed, value, err)
			}
			haveTS = true
		case "v1":
			sig, err := hex.DecodeString(value)
			if err != nil || len(sig) != sha256.Size {
				return 0, nil, fmt.Errorf("%w: v1 is not a hex SHA-256 MAC", ErrSignatureMalformed)
			}
			sigs = append(sigs, sig)
		}
	}
	if !haveTS {
		return 0, nil, fmt.Errorf("%w: no timestamp", ErrSignatureMalformed)
	}
	if len(sigs) == 0 {
		return 0, nil, fmt.Errorf("%w: no v1 signature", ErrSignatureMalformed)
	}
	return ts, sigs, nil
}

func mac(secret, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}
