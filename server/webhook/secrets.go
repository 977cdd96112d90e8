package webhook

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/seal"
)

// SealLabel derives the sealing keys of the signing secrets from the key
// set (seal.New).
const SealLabel = "seatghor seal aes-256-gcm v1"

// secretPurpose binds a sealed signing secret to the endpoint's secret
// columns (secret and previous_secret: a rotation moves one into the other
// in SQL, so both take the same purpose).
const secretPurpose = "webhook_endpoints.secret"

// openSecret returns the signing secret stored as v: sealed (decision
// 0273), or as it was stored before secrets were sealed, until Reseal
// seals it.
func openSecret(box *seal.Box, v string) (string, error) {
	s, err := box.Open(v, secretPurpose)
	if errors.Is(err, seal.ErrNotSealed) && strings.HasPrefix(v, secretPrefix) {
		return v, nil
	}
	return s, err
}

// resealSecret is v sealed under the sealing key (v itself when it is).
func resealSecret(box *seal.Box, v string) (string, error) {
	if box.Current(v) {
		return v, nil
	}
	plain, err := openSecret(box, v)
	if err != nil {
		return "", err
	}
	return box.Seal(plain, secretPurpose)
}

// Reseal seals under the sealing key every stored signing secret that is
// not: those stored before secrets were sealed, and those sealed under a
// key a rotation has since put second (decision 0273). A row is changed
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
		if s.box.Current(e.secret) && (e.previous == nil || s.box.Current(*e.previous)) {
			continue
		}
		secret, err := resealSecret(s.box, e.secret)
		if err != nil {
			return changed, fmt.Errorf("reseal the secret of webhook endpoint %d: %w", e.id, err)
		}
		var previous *string
		if e.previous != nil {
			p, err := resealSecret(s.box, *e.previous)
			if err != nil {
				return changed, fmt.Errorf("reseal the previous secret of webhook endpoint %d: %w", e.id, err)
			}
			previous = &p
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
