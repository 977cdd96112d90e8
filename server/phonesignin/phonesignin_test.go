package phonesignin_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/internal/testkit/pgtest"
	"github.com/seatghor/seatghor/internal/testkit/schematest"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/keyset"
	"github.com/seatghor/seatghor/server/migrations"
	"github.com/seatghor/seatghor/server/notify/smssandbox"
	"github.com/seatghor/seatghor/server/pg"
	"github.com/seatghor/seatghor/server/phonesignin"
	"github.com/seatghor/seatghor/server/ratelimit"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Cleanup()
	os.Exit(code)
}

// world is the service on a fresh catalog database, the SMS sandbox over
// HTTP and a fake clock.
type world struct {
	svc    *phonesignin.Service
	sms    *smssandbox.Client
	clock  *clock.Fake
	tokens *auth.Tokens
	db     *pg.Pool
}

func newWorld(t *testing.T) *world {
	t.Helper()
	db, err := pg.Open(t.Context(), "catalog", schematest.Fresh(t, migrations.Catalog), 8, pg.WithRole(pg.AppRole))
	require.NoError(t, err)
	t.Cleanup(db.Close)
	clk := clock.NewFake(time.Date(2026, 12, 5, 6, 0, 0, 0, time.UTC))
	box := httptest.NewServer(smssandbox.New(clk.Now))
	t.Cleanup(box.Close)
	sms := smssandbox.NewClient(box.URL, nil)
	keys := keyset.FromSecret("phone sign-in tests", keyset.Tokens)
	tokens, err := auth.NewTokens(keys, clk.Now)
	require.NoError(t, err)
	return &world{svc: phonesignin.New(phonesignin.Config{DB: db, SMS: sms, Tokens: tokens, Keys: keys, Clock: clk}),
		sms: sms, clock: clk, tokens: tokens, db: db}
}

var sixDigits = regexp.MustCompile(`[0-9]{6}`)

// lastCode is the code of the newest SMS to e164.
func (w *world) lastCode(t *testing.T, e164 string) string {
	t.Helper()
	all, err := w.sms.List(context.Background(), e164, 1)
	require.NoError(t, err)
	require.NotEmpty(t, all)
	return sixDigits.FindString(all[0].Text)
}

func waitOf(t *testing.T, err error) time.Duration {
	t.Helper()
	var e *ratelimit.ExceededError
	require.True(t, errors.As(err, &e), "want a rate limit, got %v", err)
	return e.Wait
}

// TestSignInWithACode: a code by SMS, in Bengali when asked, signs the
// number in; its token is a buyer's; the same number is the same buyer
// next time; a used code, an expired code and another number's code do
// not sign in. The code is stored only as an HMAC.
func TestSignInWithACode(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	sent, err := w.svc.SendCode(ctx, "01711-234567", "bn", "203.0.113.7")
	require.NoError(t, err)
	require.Equal(t, "+8801711234567", sent.Phone)
	all, err := w.sms.List(ctx, sent.Phone, 1)
	require.NoError(t, err)
	require.Contains(t, all[0].Text, "সিটঘর কোড")
	require.Equal(t, 1, all[0].Segments, "one part")
	code := w.lastCode(t, sent.Phone)
	var stored []byte
	require.NoError(t, w.db.QueryRow(ctx, `SELECT code_mac FROM phone_codes WHERE phone = $1`, sent.Phone).Scan(&stored))
	require.NotContains(t, string(stored), code, "only a keyed hash is kept")

	tok, err := w.svc.VerifyCode(ctx, "+880 1711 234567", code)
	require.NoError(t, err)
	p, err := w.tokens.Verify(tok.Token)
	require.NoError(t, err)
	require.Equal(t, tok.UserID, p.UserID)
	require.True(t, p.Is(auth.RoleUser))
	require.Regexp(t, `^ph_[a-z2-7]{16}$`, tok.UserID, "an opaque id, not the number")

	_, err = w.svc.VerifyCode(ctx, "01711234567", code)
	require.Equal(t, fault.InvalidArgument, fault.ReasonOf(err), "a code is used once")

	w.clock.Advance(phonesignin.ResendAfter)
	_, err = w.svc.SendCode(ctx, "01711234567", "en", "203.0.113.7")
	require.NoError(t, err)
	again, err := w.svc.VerifyCode(ctx, "01711234567", bengaliDigits(w.lastCode(t, sent.Phone)))
	require.NoError(t, err, "Bengali digits are read")
	require.Equal(t, tok.UserID, again.UserID, "the same number is the same buyer")

	w.clock.Advance(phonesignin.ResendAfter)
	_, err = w.svc.SendCode(ctx, "01711234567", "en", "203.0.113.7")
	require.NoError(t, err)
	late := w.lastCode(t, sent.Phone)
	w.clock.Advance(phonesignin.CodeTTL)
	_, err = w.svc.VerifyCode(ctx, "01711234567", late)
	require.Equal(t, fault.InvalidArgument, fault.ReasonOf(err), "an expired code")

	_, err = w.svc.SendCode(ctx, "01811-000000", "en", "203.0.113.7")
	require.NoError(t, err)
	_, err = w.svc.VerifyCode(ctx, "01911-000000", w.lastCode(t, "+8801811000000"))
	require.Equal(t, fault.InvalidArgument, fault.ReasonOf(err), "another number's code, and a number never sent one")
	_, err = w.svc.SendCode(ctx, "12345", "en", "203.0.113.7")
	require.Equal(t, fault.InvalidArgument, fault.ReasonOf(err))
}

// TestWrongCodesLockTheNumber: twenty wrong guesses at once get five
// counted between them, whatever the interleaving; the fifth locks the
// number, and then even the right code is refused until the lock ends and
// a new code is sent.
func TestWrongCodesLockTheNumber(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	_, err := w.svc.SendCode(ctx, "01711-234567", "en", "203.0.113.7")
	require.NoError(t, err)
	code := w.lastCode(t, "+8801711234567")
	wrong := "000000"
	if code == wrong {
		wrong = "111111"
	}
	var (
		mu             sync.Mutex
		invalid, limit int
		wg             sync.WaitGroup
	)
	for range 20 {
		wg.Go(func() {
			_, err := w.svc.VerifyCode(ctx, "01711234567", wrong)
			mu.Lock()
			defer mu.Unlock()
			var e *ratelimit.ExceededError
			switch {
			case errors.As(err, &e):
				limit++
			case fault.ReasonOf(err) == fault.InvalidArgument:
				invalid++
			default:
				t.Errorf("unexpected answer %v", err)
			}
		})
	}
	wg.Wait()
	require.Equal(t, phonesignin.MaxAttempts-1, invalid, "four wrong tries answered as wrong")
	require.Equal(t, 20-phonesignin.MaxAttempts+1, limit, "the fifth locks, and every later one finds the lock")
	_, err = w.svc.VerifyCode(ctx, "01711234567", code)
	require.Greater(t, waitOf(t, err), 14*time.Minute, "the right code is refused while locked")
	_, err = w.svc.SendCode(ctx, "01711234567", "en", "203.0.113.7")
	waitOf(t, err)

	w.clock.Advance(phonesignin.LockFor)
	_, err = w.svc.VerifyCode(ctx, "01711234567", code)
	require.Equal(t, fault.InvalidArgument, fault.ReasonOf(err), "the locked code went with the lock")
	_, err = w.svc.SendCode(ctx, "01711234567", "en", "203.0.113.7")
	require.NoError(t, err)
	_, err = w.svc.VerifyCode(ctx, "01711234567", w.lastCode(t, "+8801711234567"))
	require.NoError(t, err)
}

// TestSendLimits: codes go a minute apart and five an hour to a number,
// ten an hour for one client address; each refusal says how long to wait.
func TestSendLimits(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	_, err := w.svc.SendCode(ctx, "01711-234567", "en", "198.51.100.1")
	require.NoError(t, err)
	_, err = w.svc.SendCode(ctx, "01711-234567", "en", "198.51.100.2")
	require.LessOrEqual(t, waitOf(t, err), phonesignin.ResendAfter+time.Second, "a minute apart, whoever asks")
	for range phonesignin.SendsPerHour - 1 {
		w.clock.Advance(phonesignin.ResendAfter)
		_, err = w.svc.SendCode(ctx, "01711-234567", "en", "198.51.100.1")
		require.NoError(t, err)
	}
	w.clock.Advance(phonesignin.ResendAfter)
	_, err = w.svc.SendCode(ctx, "01711-234567", "en", "198.51.100.1")
	require.Greater(t, waitOf(t, err), 50*time.Minute, "five an hour")
	w.clock.Advance(time.Hour)
	_, err = w.svc.SendCode(ctx, "01711-234567", "en", "198.51.100.1")
	require.NoError(t, err, "a new hour")

	// One address, many numbers: the address's limit.
	for i := range phonesignin.ClientPerHour {
		_, err := w.svc.SendCode(ctx, "0181100000"+string(rune('0'+i)), "en", "192.0.2.9")
		require.NoError(t, err)
	}
	_, err = w.svc.SendCode(ctx, "01911-000000", "en", "192.0.2.9")
	waitOf(t, err)
	_, err = w.svc.SendCode(ctx, "01911-000000", "en", "192.0.2.10")
	require.NoError(t, err, "another address")
}

func bengaliDigits(s string) string {
	out := []rune{}
	for _, r := range s {
		out = append(out, '০'+(r-'0'))
	}
	return string(out)
}

// TestGuests: a guest's token is a buyer's, a new "gs_" id each time,
// lasting GuestTTL. Forty starts at once from one address get exactly
// GuestsPerHour between them (counted under the address's lock), another
// address is not held back, and an hour later the first may start again.
// PhoneOf answers a phone buyer's number and nothing for anyone else.
func TestGuests(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	var (
		mu      sync.Mutex
		wg      sync.WaitGroup
		ids     = map[string]bool{}
		refused int
	)
	for range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tok, err := w.svc.StartGuest(ctx, "203.0.113.9")
			mu.Lock()
			defer mu.Unlock()
			var e *ratelimit.ExceededError
			switch {
			case errors.As(err, &e):
				refused++
			case err != nil:
				t.Errorf("start a guest: %v", err)
			default:
				p, err := w.tokens.Verify(tok.Token)
				require.NoError(t, err)
				require.Equal(t, tok.UserID, p.UserID)
				require.True(t, p.Is(auth.RoleUser))
				require.True(t, p.Guest())
				require.Equal(t, w.clock.Now().Add(phonesignin.GuestTTL), tok.ExpiresAt)
				ids[tok.UserID] = true
			}
		}()
	}
	wg.Wait()
	require.Len(t, ids, phonesignin.GuestsPerHour, "each guest a new id")
	for id := range ids {
		require.Regexp(t, `^gs_[a-z2-7]{16}$`, id)
	}
	require.Equal(t, 40-phonesignin.GuestsPerHour, refused)
	_, err := w.svc.StartGuest(ctx, "198.51.100.1")
	require.NoError(t, err, "another address")
	_, err = w.svc.StartGuest(ctx, "203.0.113.9")
	require.LessOrEqual(t, waitOf(t, err), time.Hour+time.Second)
	w.clock.Advance(time.Hour)
	_, err = w.svc.StartGuest(ctx, "203.0.113.9")
	require.NoError(t, err, "an hour later")

	_, err = w.svc.SendCode(ctx, "01711-424242", "en", "203.0.113.7")
	require.NoError(t, err)
	tok, err := w.svc.VerifyCode(ctx, "01711424242", w.lastCode(t, "+8801711424242"))
	require.NoError(t, err)
	number, err := w.svc.PhoneOf(ctx, tok.UserID)
	require.NoError(t, err)
	require.Equal(t, "+8801711424242", number)
	for _, id := range []string{"ph_nosuchbuyer0000", "rumana", "gs_abcdefghijklmnop"} {
		number, err := w.svc.PhoneOf(ctx, id)
		require.NoError(t, err)
		require.Empty(t, number, id)
	}
}
