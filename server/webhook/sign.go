package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// secretPrefix starts every signing secret (the Standard Webhooks form:
// whsec_ and the base64 of the key).
const secretPrefix = "whsec_"

// newSecret returns a fresh signing secret: 32 random bytes.
func newSecret() string {
	var key [32]byte
	_, _ = rand.Read(key[:]) // crypto/rand.Read never fails (Go 1.24+)
	return secretPrefix + base64.StdEncoding.EncodeToString(key[:])
}

// Sign returns the webhook-signature header of body for the secrets: one
// space-separated "v1,<base64 HMAC-SHA256>" entry per secret, over
// "<id>.<unix timestamp>.<body>" keyed with the secret's base64-decoded
// part (Standard Webhooks). Several secrets: a rotation's overlap.
func Sign(secrets []string, id string, at time.Time, body []byte) (string, error) {
	sigs := make([]string, 0, len(secrets))
	for _, s := range secrets {
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, secretPrefix))
		if err != nil {
			return "", fmt.Errorf("webhook secret is not base64: %w", err)
		}
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(id))
		mac.Write([]byte{'.'})
		mac.Write([]byte(strconv.FormatInt(at.Unix(), 10)))
		mac.Write([]byte{'.'})
		mac.Write(body)
		sigs = append(sigs, "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	}
	return strings.Join(sigs, " "), nil
}
