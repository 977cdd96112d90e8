// Package phonesignin signs buyers in with their mobile number and a
// one-time code by SMS (issue 25 §2, decision 0436). A code is six digits,
// lives 5 minutes and is kept only as an HMAC under the token keys; five
// wrong tries lock the number for 15 minutes. Codes are sent at most a
// minute apart and 5 an hour to a number, and 10 an hour to one client
// address. Any number may sign in (its buyer is made at the first sign-in),
// so no answer says whether a number was known. Its tables are the
// catalog's (phone_accounts, phone_codes, phone_code_sends).
package phonesignin

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/display"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/keyset"
	"github.com/seatghor/seatghor/server/notify"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/phone"
	"github.com/seatghor/seatghor/server/ratelimit"
)

// The rules of decision 0436.
const (
	CodeTTL       = 5 * time.Minute
	MaxAttempts   = 5
	LockFor       = 15 * time.Minute
	ResendAfter   = time.Minute
	SendsPerHour  = 5
	ClientPerHour = 10
	// TokenTTL is how long a phone sign-in's token lasts.
	TokenTTL = 24 * time.Hour
	// GuestTTL is how long a guest's token lasts: a checkout, with time to
	// pay (decision 0437).
	GuestTTL = 2 * time.Hour
	// GuestsPerHour bounds the guests' tokens given to one client address
	// in an hour.
	GuestsPerHour = 30
)

// Service sends and checks the codes.
type Service struct {
	db            *pg.Pool
	sms           notify.SMS
	tokens        *auth.Tokens
	keys          *keyset.Set
	clock         clock.Clock
	clientPerHour int
	guestsPerHour int
}

// Config wires the service.
type Config struct {
	// DB is the catalog database.
	DB  *pg.Pool
	SMS notify.SMS
	// Tokens mint the buyers' tokens; Keys (the token keys) key the
	// codes' HMACs.
	Tokens *auth.Tokens
	Keys   *keyset.Set
	Clock  clock.Clock
	// ClientPerHour bounds the codes sent for one client address in an
	// hour; default ClientPerHour. Tests whose callers share an address
	// raise it.
	ClientPerHour int
	// GuestsPerHour bounds the guests' tokens given to one client address
	// in an hour; default GuestsPerHour.
	GuestsPerHour int
}

// New returns the service.
func New(cfg Config) *Service {
	if cfg.ClientPerHour <= 0 {
		cfg.ClientPerHour = ClientPerHour
	}
	if cfg.GuestsPerHour <= 0 {
		cfg.GuestsPerHour = GuestsPerHour
	}
	return &Service{db: cfg.DB, sms: cfg.SMS, tokens: cfg.Tokens, keys: cfg.Keys, clock: cfg.Clock,
		clientPerHour: cfg.ClientPerHour, guestsPerHour: cfg.GuestsPerHour}
}

// Sent is SendCode's answer.
type Sent struct {
	Phone       string
	ExpiresIn   time.Duration
	ResendAfter time.Duration
}

// SendCode sends a new code to number, in lang, for a caller at client (its
// address). The limits are checked and the code recorded in one
// transaction, under the number's row lock, before the SMS goes: a send
// that fails leaves a code nobody received, which the next send replaces.
func (s *Service) SendCode(ctx context.Context, number, lang, client string) (Sent, error) {
	e164, err := phone.Bangladesh(number)
	if err != nil {
		return Sent{}, fault.OnField(fault.InvalidArgument, "phone", "%v", err)
	}
	now := s.clock.Now().UTC().Truncate(time.Microsecond)
	code, err := newCode()
	if err != nil {
		return Sent{}, err
	}
	key := s.keys.Signing()
	err = pg.InTx(ctx, s.db, func(tx pgx.Tx) error {
		// The number's row is made first so that two sends take turns on
		// its lock.
		if _, err := tx.Exec(ctx, `
			INSERT INTO phone_codes (phone, expires_at, window_start, last_sent_at) VALUES ($1, $2, $2, $3)
			ON CONFLICT (phone) DO NOTHING`, e164, now, now.Add(-ResendAfter)); err != nil {
			return fmt.Errorf("send a code to %s: %w", e164, err)
		}
		var (
			sends        int
			windowStart  time.Time
			lastSent     time.Time
			lockedUntil  *time.Time
			clientRecent int
		)
		if err := tx.QueryRow(ctx, `
			SELECT sends, window_start, last_sent_at, locked_until FROM phone_codes WHERE phone = $1 FOR UPDATE`, e164).
			Scan(&sends, &windowStart, &lastSent, &lockedUntil); err != nil {
			return fmt.Errorf("send a code to %s: %w", e164, err)
		}
		if lockedUntil != nil && now.Before(*lockedUntil) {
			return limited("phone-locked", lockedUntil.Sub(now))
		}
		if wait := lastSent.Add(ResendAfter).Sub(now); wait > 0 {
			return limited("phone-resend", wait)
		}
		if now.Sub(windowStart) >= time.Hour {
			sends, windowStart = 0, now
		}
		if sends >= SendsPerHour {
			return limited("phone-sends", windowStart.Add(time.Hour).Sub(now))
		}
		if err := tx.QueryRow(ctx, `
			SELECT count(*) FROM phone_code_sends WHERE client = $1 AND sent_at > $2`, client, now.Add(-time.Hour)).
			Scan(&clientRecent); err != nil {
			return fmt.Errorf("count the codes sent for %s: %w", client, err)
		}
		if clientRecent >= s.clientPerHour {
			return limited("phone-client", time.Hour/time.Duration(s.clientPerHour))
		}
		if _, err := tx.Exec(ctx, `
			UPDATE phone_codes SET code_mac = $2, key_id = $3, expires_at = $4, attempts = 0, sends = $5,
			       window_start = $6, last_sent_at = $7, locked_until = NULL
			WHERE phone = $1`, e164, mac(key.Secret, e164, code), key.ID, now.Add(CodeTTL), sends+1, windowStart, now); err != nil {
			return fmt.Errorf("record the code of %s: %w", e164, err)
		}
		// The address's log keeps a day; older rows go as it grows.
		if _, err := tx.Exec(ctx, `DELETE FROM phone_code_sends WHERE client = $1 AND sent_at < $2`, client, now.Add(-24*time.Hour)); err != nil {
			return fmt.Errorf("prune the codes sent for %s: %w", client, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO phone_code_sends (client, sent_at) VALUES ($1, $2)`, client, now); err != nil {
			return fmt.Errorf("count the code sent for %s: %w", client, err)
		}
		return nil
	})
	if err != nil {
		return Sent{}, err
	}
	if _, err := s.sms.SendSMS(ctx, e164, Text(display.ParseLang(lang), code)); err != nil {
		return Sent{}, fmt.Errorf("send the code to %s: %w", e164, err)
	}
	return Sent{Phone: e164, ExpiresIn: CodeTTL, ResendAfter: ResendAfter}, nil
}

// Token is VerifyCode's answer.
type Token struct {
	Token     string
	ExpiresAt time.Time
	UserID    string
}

// VerifyCode checks number's code and answers its buyer's token. Each
// wrong try is counted under the number's row lock, so concurrent guesses
// get MaxAttempts between them; the last locks the number. A right code is
// used once.
func (s *Service) VerifyCode(ctx context.Context, number, code string) (Token, error) {
	e164, err := phone.Bangladesh(number)
	if err != nil {
		return Token{}, fault.OnField(fault.InvalidArgument, "phone", "%v", err)
	}
	code = asciiDigits(strings.TrimSpace(code))
	now := s.clock.Now().UTC().Truncate(time.Microsecond)
	wrong := fault.OnField(fault.InvalidArgument, "code", "the code is wrong or has expired; ask for a new one")
	var userID string
	var refusal error
	err = pg.InTx(ctx, s.db, func(tx pgx.Tx) error {
		var (
			stored      []byte
			keyID       string
			expires     time.Time
			attempts    int
			lockedUntil *time.Time
		)
		err := tx.QueryRow(ctx, `
			SELECT code_mac, key_id, expires_at, attempts, locked_until FROM phone_codes WHERE phone = $1 FOR UPDATE`, e164).
			Scan(&stored, &keyID, &expires, &attempts, &lockedUntil)
		found, err := pg.Found(err)
		if err != nil {
			return fmt.Errorf("check the code of %s: %w", e164, err)
		}
		switch {
		case !found:
			refusal = wrong
			return nil
		case lockedUntil != nil && now.Before(*lockedUntil):
			refusal = limited("phone-locked", lockedUntil.Sub(now))
			return nil
		}
		if lockedUntil != nil {
			attempts = 0 // a lock that has ended starts the count again
		}
		secret, known := s.keys.Secret(keyID)
		if stored == nil || !now.Before(expires) || !known || !hmac.Equal(stored, mac(secret, e164, code)) {
			attempts++
			refusal = wrong
			var lock *time.Time
			if attempts >= MaxAttempts {
				until := now.Add(LockFor)
				lock, refusal = &until, limited("phone-locked", LockFor)
			}
			// The wrong try commits: it is what the next one counts. The
			// code goes with a lock: a guess that comes after it finds
			// nothing to guess.
			_, err := tx.Exec(ctx, `
				UPDATE phone_codes SET attempts = $2, locked_until = $3,
				       code_mac = CASE WHEN $3::timestamptz IS NULL THEN code_mac END
				WHERE phone = $1`, e164, attempts, lock)
			if err != nil {
				return fmt.Errorf("count a wrong code of %s: %w", e164, err)
			}
			return nil
		}
		if _, err := tx.Exec(ctx, `UPDATE phone_codes SET code_mac = NULL, attempts = 0 WHERE phone = $1`, e164); err != nil {
			return fmt.Errorf("use the code of %s: %w", e164, err)
		}
		id, err := newID(phonePrefix)
		if err != nil {
			return err
		}
		return tx.QueryRow(ctx, `
			INSERT INTO phone_accounts AS a (phone, user_id, created_at) VALUES ($1, $2, $3)
			ON CONFLICT (phone) DO UPDATE SET phone = a.phone
			RETURNING user_id`, e164, id, now).Scan(&userID)
	})
	if err != nil {
		return Token{}, err
	}
	if refusal != nil {
		return Token{}, refusal
	}
	tok, err := s.tokens.Mint(userID, auth.RoleUser, TokenTTL)
	if err != nil {
		return Token{}, err
	}
	return Token{Token: tok, ExpiresAt: now.Add(TokenTTL), UserID: userID}, nil
}

// StartGuest answers a new guest's token for a caller at client (its
// address): a buyer with no account, who checks out with a mobile number
// and finds the tickets by it (decision 0437). Each start is counted
// against the address, under its lock: GuestsPerHour an hour (raised in
// tests, whose callers share an address).
func (s *Service) StartGuest(ctx context.Context, client string) (Token, error) {
	now := s.clock.Now().UTC().Truncate(time.Microsecond)
	err := pg.InTx(ctx, s.db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('guest-start:' || $1, 0))`, client); err != nil {
			return fmt.Errorf("lock the guests of %s: %w", client, err)
		}
		var started int
		var oldest *time.Time
		if err := tx.QueryRow(ctx, `SELECT count(*), min(started_at) FROM guest_starts WHERE client = $1 AND started_at > $2`,
			client, now.Add(-time.Hour)).Scan(&started, &oldest); err != nil {
			return fmt.Errorf("count the guests of %s: %w", client, err)
		}
		if started >= s.guestsPerHour {
			return limited("guest-client", oldest.Add(time.Hour).Sub(now))
		}
		if _, err := tx.Exec(ctx, `DELETE FROM guest_starts WHERE client = $1 AND started_at < $2`, client, now.Add(-24*time.Hour)); err != nil {
			return fmt.Errorf("prune the guests of %s: %w", client, err)
		}
		_, err := tx.Exec(ctx, `INSERT INTO guest_starts (client, started_at) VALUES ($1, $2)`, client, now)
		return err
	})
	if err != nil {
		return Token{}, err
	}
	id, err := newID(auth.GuestPrefix)
	if err != nil {
		return Token{}, err
	}
	tok, err := s.tokens.Mint(id, auth.RoleUser, GuestTTL)
	if err != nil {
		return Token{}, err
	}
	return Token{Token: tok, ExpiresAt: now.Add(GuestTTL), UserID: id}, nil
}

// PhoneOf answers the number a buyer signed in with (E.164), or "" for a
// user who did not sign in by phone: "my tickets" of that buyer are also
// the orders sent to it (decision 0437).
func (s *Service) PhoneOf(ctx context.Context, userID string) (string, error) {
	if !strings.HasPrefix(userID, phonePrefix) {
		return "", nil
	}
	var number string
	err := s.db.QueryRow(ctx, `SELECT phone FROM phone_accounts WHERE user_id = $1`, userID).Scan(&number)
	found, err := pg.Found(err)
	if err != nil {
		return "", fmt.Errorf("read the number of %s: %w", userID, err)
	}
	if !found {
		return "", nil
	}
	return number, nil
}

// Text is the code's SMS in lang: one part in either language.
func Text(lang display.Lang, code string) string {
	if lang == display.Bengali {
		return "সিটঘর কোড: " + code + "। ৫ মিনিট বৈধ। কাউকে জানাবেন না।"
	}
	return "Seatghor code: " + code + ". Valid 5 minutes. Never share it."
}

// limits are the rate and period each refusal names.
var limits = map[string]struct {
	rate int
	per  time.Duration
}{
	"phone-locked": {MaxAttempts, CodeTTL},
	"phone-resend": {1, ResendAfter},
	"phone-sends":  {SendsPerHour, time.Hour},
	"phone-client": {ClientPerHour, time.Hour},
	"guest-client": {GuestsPerHour, time.Hour},
}

func limited(name string, wait time.Duration) error {
	l := limits[name]
	return ratelimit.Counted(name, l.rate, l.per, wait)
}

// asciiDigits reads Bengali digits (০–৯) as the ASCII ones: a phone set to
// Bengali types them.
func asciiDigits(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '০' && r <= '৯' {
			return '0' + (r - '০')
		}
		return r
	}, s)
}

// mac is the HMAC of a code sent to a number.
func mac(secret []byte, e164, code string) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte("phone-sign-in\x00" + e164 + "\x00" + code))
	return h.Sum(nil)
}

// newCode is six random digits.
func newCode() (string, error) {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		return "", fmt.Errorf("draw a code: %w", err)
	}
	return fmt.Sprintf("%06d", n.Int64()), nil
}

// phonePrefix starts a phone buyer's user id.
const phonePrefix = "ph_"

// newID is an opaque user id: prefix and 16 random characters.
func newID(prefix string) (string, error) {
	b := make([]byte, 10)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("draw a user id: %w", err)
	}
	return prefix + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b)), nil
}
