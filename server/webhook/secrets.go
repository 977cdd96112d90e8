package webhook

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/seal"
)

// SealLabel derives the sealing keys of the signing secrets from the key
// set (seal.New).
const SealLabel = "seatghor seal aes-256-gcm v1"

// legacyPurpose is the additional data secrets were sealed with before
// they were bound to their row (decision 0279): the secret columns only
// (secret and previous_secret: a rotation moves one into the other in
// SQL, so both take the same purpose).
const legacyPurpose = "webhook_endpoints.secret"

// secretPurpose binds a sealed signing secret to its endpoint's row, so a
// value copied into another endpoint's row does not open there (decision
// 0279). Both secret columns of the row take it, as before.
func secretPurpose(endpointID int64) string {
	return legacyPurpose + ":" + strconv.FormatInt(endpointID, 10)
}

// openSecret returns the signing secret stored as v in endpoint id's row:
// sealed to the row, or as it was stored before (sealed to the column
// only, or in the clear) until Reseal seals it to the row. legacy says v
// was stored the old way.
func openSecret(box *seal.Box, v string, id int64) (plain string, legacy bool, err error) {
	plain, err = box.Open(v, secretPurpose(id))
	switch {
	case err == nil:
		return plain, false, nil
	case errors.Is(err, seal.ErrNotSealed) && strings.HasPrefix(v, secretPrefix):
		return v, true, nil
	case errors.Is(err, seal.ErrNotSealed):
		return "", false, err
	}
	// Sealed before decision 0279: bound to the column only. Kept openable
	// so rows and idempotency records made before still work; Reseal binds
	// the rows at the webhooks role's start.
	if old, oerr := box.Open(v, legacyPurpose); oerr == nil {
		return old, true, nil
	}
	return "", false, err
}

// resealSecret is v sealed to endpoint id's row under the sealing key (v
// itself when it is).
func resealSecret(box *seal.Box, v string, id int64) (string, error) {
	plain, legacy, err := openSecret(box, v, id)
	if err != nil {
		return "", err
	}
	if !legacy && box.Current(v) {
		return v, nil
	}
	return box.Seal(plain, secretPurpose(id))
}

// Reseal seals to its row under the sealing key every stored signing
// secret that is not: those stored before secrets were sealed, those
// sealed to the column only (before decision 0279), and those sealed under
// a key a rotation has since put second (decision 0273). A row is changed
// only while it holds what was read, so a secret rotated meanwhile is left
// as its rotation wrote it. It returns how many endpoints it changed.
func (s *Service) Reseal(ctx context.Context) (int, error) {
	type stored struct {
		id       int64
		secret   string
		previous *string
	}
	rows, err := s.db.Query(ctx, `SELECT endpoint_id, secret, previous_secret FROM webhook_endpoints ORDER BY endpoint_id`)
	if err != nil {
		return 0, fmt.Errorf("read webhook secrets: %w", err)
	}
	all, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (stored, error) {
		var e stored
		return e, r.Scan(&e.id, &e.secret, &e.previous)
	})
	if err != nil {
		return 0, fmt.Errorf("read webhook secrets: %w", err)
	}
	changed := 0
	for _, e := range all {
		secret, err := resealSecret(s.box, e.secret, e.id)
		if err != nil {
			return changed, fmt.Errorf("reseal the secret of webhook endpoint %d: %w", e.id, err)
		}
		var previous *string
		if e.previous != nil {
			p, err := resealSecret(s.box, *e.previous, e.id)
			if err != nil {
				return changed, fmt.Errorf("reseal the previous secret of webhook endpoint %d: %w", e.id, err)
			}
			previous = &p
		}
		if secret == e.secret && (previous == nil || *previous == *e.previous) {
			continue
		}
		tag, err := s.db.Exec(ctx, `
			UPDATE webhook_endpoints SET secret = $2, previous_secret = $3
			WHERE endpoint_id = $1 AND secret = $4 AND previous_secret IS NOT DISTINCT FROM $5`,
			e.id, secret, previous, e.secret, e.previous)
		if err != nil {
			return changed, fmt.Errorf("reseal the secrets of webhook endpoint %d: %w", e.id, err)
		}
		changed += int(tag.RowsAffected())
	}
	return changed, nil
}
