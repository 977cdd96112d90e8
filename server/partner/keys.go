package partner

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/audit"
	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/idempotency"
	"github.com/seatghor/seatghor/server/pg"
)

// Scope is what a key may call.
type Scope string

// The scopes.
const (
	// ScopeReadOnly may call only procedures without side effects.
	ScopeReadOnly Scope = "read_only"
	// ScopeBooking may do everything the partner role may, but change its
	// webhook endpoints (decision 0276).
	ScopeBooking Scope = "booking"
	// ScopeWebhooks may change the partner's webhook endpoints, and
	// otherwise only call procedures without side effects: its principal
	// is ReadOnly with the grant of the same name, which the API opens to
	// the webhook endpoint changes.
	ScopeWebhooks Scope = "webhooks"
)

// Valid tells a scope from a typo.
func (s Scope) Valid() bool { return s == ScopeReadOnly || s == ScopeBooking || s == ScopeWebhooks }

// Mode is which API processes accept a key: a key's mode is its secret's
// prefix (sk_live_, sk_test_), and each process accepts one mode.
type Mode string

// The modes.
const (
	ModeLive Mode = "live"
	ModeTest Mode = "test"
)

// Valid tells a mode from a typo.
func (m Mode) Valid() bool { return m == ModeLive || m == ModeTest }

// ParseMode reads a mode's name.
func ParseMode(s string) (Mode, error) {
	if m := Mode(s); m.Valid() {
		return m, nil
	}
	return "", fmt.Errorf("API key mode %q: want live or test", s)
}

func (m Mode) prefix() string { return "sk_" + string(m) + "_" }

// Key is an API key as stored: never its secret.
type Key struct {
	ID        string
	PartnerID int64
	Name      string
	Scope     Scope
	Mode      Mode
	// Prefix and Last4 are the secret's first and last characters, to tell
	// keys apart.
	Prefix, Last4 string
	CreatedBy     string
	CreatedAt     time.Time
	// LastUsedAt is when it last authenticated a call, to lastUsedEvery;
	// zero: never.
	LastUsedAt time.Time
	// RevokedAt is when it was revoked; zero: it works.
	RevokedAt time.Time
}

// NewKey is what CreateKey needs.
type NewKey struct {
	PartnerID int64
	Name      string
	// Scope defaults to booking, Mode to the service's.
	Scope Scope
	Mode  Mode
}

// lastUsedEvery is how stale last_used_at may be: a key's row is written
// at most once per this, not on every call.
const lastUsedEvery = time.Minute

// secretBytes of crypto/rand make a secret: 256 bits, so a fast hash of it
// cannot be searched.
const secretBytes = 32

// lower-case base32 without padding: only letters and digits, so a secret
// is one word to copy and can never look like a JWT.
var secretEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// newSecret returns a fresh secret of mode, e.g. sk_live_…(52 chars).
func newSecret(m Mode) (string, error) {
	b := make([]byte, secretBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random secret: %w", err)
	}
	return m.prefix() + secretEncoding.EncodeToString(b), nil
}

// newKeyID returns a key's public id.
func newKeyID() (string, error) {
	b := make([]byte, 10)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random key id: %w", err)
	}
	return "key_" + secretEncoding.EncodeToString(b), nil
}

func hashSecret(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// CreateKey makes a key for a partner and returns it with its secret; only
// the secret's hash is stored. A retry of the request (the same
// Idempotency-Key) answers ErrSecretShown with the key, since the secret
// is nowhere to be read again. Who may create keys for the partner is the
// API's check.
func (s *Service) CreateKey(ctx context.Context, by string, in NewKey) (Key, string, error) {
	if in.Scope == "" {
		in.Scope = ScopeBooking
	}
	if in.Mode == "" {
		in.Mode = s.mode
	}
	if !in.Scope.Valid() {
		return Key{}, "", &fault.Error{Reason: fault.PartnerInvalid, Field: "scope", Message: fmt.Sprintf("%q is not a scope", in.Scope)}
	}
	if !in.Mode.Valid() {
		return Key{}, "", &fault.Error{Reason: fault.PartnerInvalid, Field: "mode", Message: fmt.Sprintf("%q is not a mode", in.Mode)}
	}
	now := s.now()
	// secret is set by the run that commits; a replayed answer leaves it
	// empty.
	var secret string
	k, err := idempotency.Do(ctx, s.router.Catalog(), errorCodec, idempotency.Options{
		Now: now, Wait: 3 * time.Second, Target: partnerTarget(in.PartnerID),
	}, func(tx pgx.Tx) (Key, error) {
		secret = ""
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT FROM partners WHERE partner_id = $1)`, in.PartnerID).
			Scan(&exists); err != nil {
			return Key{}, fmt.Errorf("read partner %d: %w", in.PartnerID, err)
		}
		if !exists {
			return Key{}, fmt.Errorf("partner %d: %w", in.PartnerID, ErrNotFound)
		}
		id, err := newKeyID()
		if err != nil {
			return Key{}, err
		}
		sec, err := newSecret(in.Mode)
		if err != nil {
			return Key{}, err
		}
		k := Key{ID: id, PartnerID: in.PartnerID, Name: in.Name, Scope: in.Scope, Mode: in.Mode,
			Prefix: sec[:len(in.Mode.prefix())+4], Last4: sec[len(sec)-4:], CreatedBy: by, CreatedAt: now}
		if _, err := tx.Exec(ctx, `
			INSERT INTO api_keys (key_id, partner_id, secret_hash, name, scope, mode, prefix, last4, created_by, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			k.ID, k.PartnerID, hashSecret(sec), k.Name, string(k.Scope), string(k.Mode), k.Prefix, k.Last4,
			k.CreatedBy, k.CreatedAt); err != nil {
			return Key{}, fmt.Errorf("insert API key: %w", err)
		}
		secret = sec
		return k, nil
	})
	if err != nil {
		return Key{}, "", err
	}
	if secret == "" {
		return k, "", fmt.Errorf("key %s: %w", k.ID, ErrSecretShown)
	}
	return k, secret, nil
}

func partnerTarget(id int64) string { return "partner:" + strconv.FormatInt(id, 10) }

const keyColumns = `key_id, partner_id, name, scope, mode, prefix, last4, created_by, created_at, last_used_at, revoked_at`

func scanKey(row pgx.Row) (Key, error) {
	var (
		k           Key
		scope, mode string
		used, rev   *time.Time
	)
	if err := row.Scan(&k.ID, &k.PartnerID, &k.Name, &scope, &mode, &k.Prefix, &k.Last4, &k.CreatedBy, &k.CreatedAt,
		&used, &rev); err != nil {
		return k, err
	}
	k.Scope, k.Mode, k.CreatedAt = Scope(scope), Mode(mode), k.CreatedAt.UTC()
	if used != nil {
		k.LastUsedAt = used.UTC()
	}
	if rev != nil {
		k.RevokedAt = rev.UTC()
	}
	return k, nil
}

// ListKeys returns a partner's keys, newest first, revoked ones too.
func (s *Service) ListKeys(ctx context.Context, partnerID int64) ([]Key, error) {
	if _, err := s.GetPartner(ctx, partnerID); err != nil {
		return nil, err
	}
	rows, err := s.router.Catalog().Query(ctx, `
		SELECT `+keyColumns+` FROM api_keys WHERE partner_id = $1 ORDER BY created_at DESC, key_id`, partnerID)
	if err != nil {
		return nil, fmt.Errorf("list keys of partner %d: %w", partnerID, err)
	}
	keys, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Key, error) { return scanKey(r) })
	if err != nil {
		return nil, fmt.Errorf("list keys of partner %d: %w", partnerID, err)
	}
	return keys, nil
}

// GetKey reads a key.
func (s *Service) GetKey(ctx context.Context, keyID string) (Key, error) {
	k, err := scanKey(s.router.Catalog().QueryRow(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE key_id = $1`, keyID))
	found, err := pg.Found(err)
	if err != nil {
		return k, fmt.Errorf("read key %s: %w", keyID, err)
	}
	if !found {
		return k, fmt.Errorf("key %s: %w", keyID, ErrKeyNotFound)
	}
	return k, nil
}

// Revocation is what else a key's revocation does, in its transaction:
// the API disables the webhook endpoints the key created (decision 0276).
// It returns what it stopped, for the answer.
type Revocation func(ctx context.Context, tx pgx.Tx, k Key) ([]int64, error)

// RevokeKey revokes a key, and runs also in the same transaction, so the
// key and what it made stop together; a revoked key stays as it was (also
// runs again, and answers what it stopped before). From the commit on,
// Authenticate refuses the key in every process: nothing caches keys. by
// is who revokes it, for the audit log.
func (s *Service) RevokeKey(ctx context.Context, by audit.Actor, keyID string, also Revocation) (Key, []int64, error) {
	var (
		k       Key
		stopped []int64
	)
	err := pg.InTx(ctx, s.router.Catalog(), func(tx pgx.Tx) error {
		now := s.now()
		var revokedNow bool
		err := tx.QueryRow(ctx, `
			WITH was AS (SELECT revoked_at FROM api_keys WHERE key_id = $1 FOR UPDATE)
			UPDATE api_keys SET revoked_at = coalesce(api_keys.revoked_at, $2) FROM was WHERE key_id = $1
			RETURNING was.revoked_at IS NULL`, keyID, now).Scan(&revokedNow)
		found, err := pg.Found(err)
		if err != nil {
			return fmt.Errorf("revoke key %s: %w", keyID, err)
		}
		if !found {
			return fmt.Errorf("key %s: %w", keyID, ErrKeyNotFound)
		}
		if k, err = scanKey(tx.QueryRow(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE key_id = $1`, keyID)); err != nil {
			return fmt.Errorf("read key %s: %w", keyID, err)
		}
		if revokedNow {
			if err := audit.Record(ctx, tx, audit.Entry{At: now, Actor: by, Action: "api_key.revoke", Target: "api_key:" + k.ID,
				Detail: map[string]any{"partner_id": k.PartnerID}}); err != nil {
				return err
			}
		}
		if also != nil {
			stopped, err = also(ctx, tx, k)
		}
		return err
	})
	if err != nil {
		return Key{}, nil, err
	}
	return k, stopped, nil
}

// errNotAKey is why Authenticate refused a secret of the right shape that
// matches no key: the interceptor answers it TOKEN_INVALID and no more.
var errNotAKey = errors.New("not an API key of this mode")

// secretLen is a secret's length after its mode's prefix.
var secretLen = secretEncoding.EncodedLen(secretBytes)

// modeOf reads the mode of a credential shaped as newSecret makes them;
// ok is false for anything else.
func modeOf(credential string) (m Mode, ok bool) {
	for _, m := range []Mode{ModeLive, ModeTest} {
		rest, found := strings.CutPrefix(credential, m.prefix())
		if !found || len(rest) != secretLen {
			continue
		}
		if _, err := secretEncoding.DecodeString(rest); err == nil {
			return m, true
		}
	}
	return "", false
}

// Authenticate turns an API key into its partner's principal (a
// Verifier): one indexed read of the catalog per call, so a revoked key is
// refused by every process from the moment the revocation commits
// (decision 0180). A read-only key's principal is ReadOnly; the auth
// interceptor refuses it every procedure with side effects. A webhooks
// key's is ReadOnly with the grant "webhooks" (decision 0276).
//
// A refusal says why when the caller can act on it and a forger learns
// nothing (auth.Refused): a credential not shaped as a key
// (auth.ErrKeyMalformed), a key of the other mode (auth.ErrKeyWrongMode),
// the secret of a revoked key (auth.ErrKeyRevoked). A secret of the right
// shape that matches no key is refused with no more said.
func (s *Service) Authenticate(ctx context.Context, credential string) (auth.Principal, error) {
	mode, ok := modeOf(credential)
	if !ok {
		return auth.Principal{}, auth.Refused(auth.ErrKeyMalformed)
	}
	if mode != s.mode {
		return auth.Principal{}, auth.Refused(fmt.Errorf("%w: this server takes %s keys (%s…), not %s keys",
			auth.ErrKeyWrongMode, s.mode, s.mode.prefix(), mode))
	}
	var (
		keyID     string
		partnerID int64
		scope     string
		used      *time.Time
		revoked   bool
	)
	err := s.router.Catalog().QueryRow(ctx, `
		SELECT key_id, partner_id, scope, last_used_at, revoked_at IS NOT NULL FROM api_keys
		WHERE secret_hash = $1 AND mode = $2`,
		hashSecret(credential), string(s.mode)).Scan(&keyID, &partnerID, &scope, &used, &revoked)
	found, err := pg.Found(err)
	if err != nil {
		return auth.Principal{}, fmt.Errorf("look up API key: %w", err)
	}
	if !found {
		return auth.Principal{}, errNotAKey
	}
	if revoked {
		return auth.Principal{}, auth.Refused(fmt.Errorf("key %s: %w", keyID, auth.ErrKeyRevoked))
	}
	now := s.now()
	if (used == nil || now.Sub(*used) >= lastUsedEvery) && s.claimTouch(keyID, now) {
		s.touch(ctx, keyID, now)
	}
	p := auth.Principal{
		UserID: "partner:" + strconv.FormatInt(partnerID, 10), Role: auth.RolePartner, PartnerID: partnerID,
		APIKey: keyID, ReadOnly: Scope(scope) != ScopeBooking,
	}
	if Scope(scope) == ScopeWebhooks {
		p.Grant = string(ScopeWebhooks)
	}
	return p, nil
}

// claimTouch lets one call per key and process a minute write the key's
// last use, so a burst of calls with a key makes one write, not one each.
func (s *Service) claimTouch(keyID string, now time.Time) bool {
	for {
		v, loaded := s.touched.LoadOrStore(keyID, now)
		if !loaded {
			return true
		}
		prev := v.(time.Time)
		if now.Sub(prev) < lastUsedEvery {
			return false
		}
		if s.touched.CompareAndSwap(keyID, prev, now) {
			return true
		}
	}
}

// touch records a key's use. Processes racing past the read above each
// try once; the condition lets one write. A failure costs only the timestamp.
func (s *Service) touch(ctx context.Context, keyID string, now time.Time) {
	if _, err := s.router.Catalog().Exec(ctx, `
		UPDATE api_keys SET last_used_at = $2
		WHERE key_id = $1 AND (last_used_at IS NULL OR last_used_at <= $3)`,
		keyID, now, now.Add(-lastUsedEvery)); err != nil {
		s.log.WarnContext(ctx, "API key's last use not recorded", "key", keyID, "err", err)
	}
}
