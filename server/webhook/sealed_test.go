package webhook_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	partnerv1 "github.com/seatghor/seatghor/gen/seatghor/partner/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/clock"
	"github.com/seatghor/seatghor/server/keyset"
	"github.com/seatghor/seatghor/server/seal"
	"github.com/seatghor/seatghor/server/webhook"
)

// storedAnywhere counts the catalog's rows that hold secret's key (the
// part after whsec_) in the clear: endpoints and idempotency records.
func storedAnywhere(t *testing.T, env *apptest.Env, secret string) int {
	t.Helper()
	key := strings.TrimPrefix(secret, "whsec_")
	var n int
	require.NoError(t, env.App.Router.Catalog().QueryRow(context.Background(), `
		SELECT (SELECT count(*) FROM webhook_endpoints e WHERE strpos(e::text, $1) > 0)
		     + (SELECT count(*) FROM idempotency_keys k WHERE position(convert_to($1, 'UTF8') IN k.outcome) > 0)`,
		key).Scan(&n))
	return n
}

func storedSecrets(t *testing.T, env *apptest.Env, id int64) (secret string, previous *string) {
	t.Helper()
	require.NoError(t, env.App.Router.Catalog().QueryRow(context.Background(),
		`SELECT secret, previous_secret FROM webhook_endpoints WHERE endpoint_id = $1`, id).Scan(&secret, &previous))
	return secret, previous
}

// TestSecretsAreSealedAtRest: a new or rotated signing secret is shown to
// the caller, and to a retry of the same request, but the catalog keeps it
// only sealed: neither the endpoint's row nor the request's idempotency
// record holds it in the clear (decision 0273).
func TestSecretsAreSealedAtRest(t *testing.T) {
	env := start(t, webhook.WorkerConfig{})
	rc := newReceiver(t, nil)
	ops := as(t, env, admin)
	ctx := context.Background()
	create := func() *partnerv1.CreateEndpointResponse {
		req := connect.NewRequest(&partnerv1.CreateEndpointRequest{Url: rc.URL, EventTypes: []string{"booking.confirmed"}})
		req.Header().Set("Idempotency-Key", "sealed-create-1")
		resp, err := ops.hooks.CreateEndpoint(ctx, req)
		require.NoError(t, err)
		return resp.Msg
	}
	ep := create()
	require.True(t, strings.HasPrefix(ep.GetSecret(), "whsec_"), ep.GetSecret())
	again := create()
	require.Equal(t, ep.GetSecret(), again.GetSecret(), "a retry answers the same secret")
	require.Equal(t, ep.GetEndpoint().GetEndpointId(), again.GetEndpoint().GetEndpointId())
	id := ep.GetEndpoint().GetEndpointId()

	stored, previous := storedSecrets(t, env, id)
	require.True(t, seal.IsSealed(stored), "stored %q", stored)
	require.Nil(t, previous)
	require.Zero(t, storedAnywhere(t, env, ep.GetSecret()), "the secret in the clear in the catalog")

	rotated, err := ops.hooks.RotateEndpointSecret(ctx, connect.NewRequest(&partnerv1.RotateEndpointSecretRequest{EndpointId: id}))
	require.NoError(t, err)
	stored, previous = storedSecrets(t, env, id)
	require.True(t, seal.IsSealed(stored), "stored %q", stored)
	require.NotNil(t, previous)
	require.True(t, seal.IsSealed(*previous), "previous %q", *previous)
	for _, s := range []string{ep.GetSecret(), rotated.Msg.GetSecret()} {
		require.Zero(t, storedAnywhere(t, env, s), "a secret in the clear in the catalog after the rotation")
	}

	order := book(t, env, freeShow(t, env, 2), 1)
	require.Eventually(t, func() bool { return len(tries(rc, "booking.confirmed", order)) == 1 }, 30*time.Second, 20*time.Millisecond)
	g := tries(rc, "booking.confirmed", order)[0]
	require.NoError(t, verify(t, ep.GetSecret(), g), "signed with the opened previous secret")
	require.NoError(t, verify(t, rotated.Msg.GetSecret(), g), "signed with the opened secret")
}

// TestResealedSecretsAfterUpgradeAndRotation: secrets stored in the clear
// (before decision 0273) still sign; Reseal seals them, and after a key
// rotation puts them under the new key, so the old key can go. A worker
// whose keys no longer open a secret records failed attempts and sends
// nothing unsigned; one with the key delivers.
func TestResealedSecretsAfterUpgradeAndRotation(t *testing.T) {
	env := start(t, webhook.WorkerConfig{}) // its worker opens with the key derived from apptest.Secret only
	rc := newReceiver(t, nil)
	ops := as(t, env, admin)
	ctx := context.Background()
	cat := env.App.Router.Catalog()
	ep := createEndpoint(t, ops, rc.URL, 0, "booking.confirmed")
	id := ep.GetEndpoint().GetEndpointId()
	const previous = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw6e4mR0yJ9aU="

	// As an endpoint stored before secrets were sealed.
	_, err := cat.Exec(ctx, `UPDATE webhook_endpoints SET secret = $2, previous_secret = $3,
		previous_secret_expires_at = now() + interval '1 hour' WHERE endpoint_id = $1`, id, ep.GetSecret(), previous)
	require.NoError(t, err)
	show := freeShow(t, env, 4)
	first := book(t, env, show, 1)
	require.Eventually(t, func() bool { return len(tries(rc, "booking.confirmed", first)) == 1 }, 30*time.Second, 20*time.Millisecond)
	g := tries(rc, "booking.confirmed", first)[0]
	require.NoError(t, verify(t, ep.GetSecret(), g), "a secret stored in the clear signs")
	require.NoError(t, verify(t, previous, g))

	shared := keyset.Derive(apptest.Secret, keyset.WebhookSecrets)
	fresh := keyset.Key{ID: "k2026", Secret: []byte("the new sealing key, at least thirty-two bytes long")}
	boxOf := func(keys ...keyset.Key) *seal.Box {
		set, err := keyset.New(keys...)
		require.NoError(t, err)
		b, err := seal.New(set, webhook.SealLabel)
		require.NoError(t, err)
		return b
	}
	rotated := webhook.NewService(cat, clock.Real{}, boxOf(fresh, shared), true)
	n, err := rotated.Reseal(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	stored, prev := storedSecrets(t, env, id)
	require.True(t, strings.HasPrefix(stored, "seal1:k2026:"), stored)
	require.NotNil(t, prev)
	require.True(t, strings.HasPrefix(*prev, "seal1:k2026:"), *prev)
	require.Zero(t, storedAnywhere(t, env, ep.GetSecret()))
	require.Zero(t, storedAnywhere(t, env, previous))
	n, err = rotated.Reseal(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "nothing left to reseal")

	// The platform's worker holds the old key only: it cannot sign.
	second := book(t, env, show, 2)
	require.Eventually(t, func() bool {
		for _, d := range deliveries(t, ops, id) {
			if d.GetStatus() == partnerv1.DeliveryStatus_DELIVERY_STATUS_PENDING && d.GetAttempts() >= 2 {
				return true
			}
		}
		return false
	}, 30*time.Second, 20*time.Millisecond, "the old key's worker records failed attempts")
	require.Empty(t, tries(rc, "booking.confirmed", second), "nothing sent unsigned")

	// A worker with the new key alone (the old one removed) delivers it.
	w, err := webhook.NewWorker(cat, clock.Real{}, boxOf(fresh), webhook.WorkerConfig{AllowLoopback: true,
		Timeout: 2 * time.Second, RetryBase: 20 * time.Millisecond, RetryMax: 200 * time.Millisecond, Poll: 20 * time.Millisecond})
	require.NoError(t, err)
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { w.Run(wctx); close(done) }()
	t.Cleanup(func() { stop(); <-done })
	require.Eventually(t, func() bool { return len(tries(rc, "booking.confirmed", second)) == 1 }, 30*time.Second, 20*time.Millisecond)
	g = tries(rc, "booking.confirmed", second)[0]
	require.NoError(t, verify(t, ep.GetSecret(), g))
	require.NoError(t, verify(t, previous, g))
}

// TestSealedSecretIsBoundToItsRow (issue 22 §6, decision 0279): a sealed
// secret copied into another endpoint's row does not open there, so that
// endpoint's deliveries fail and nothing goes out signed with it; the
// endpoint it was sealed for still delivers.
func TestSealedSecretIsBoundToItsRow(t *testing.T) {
	env := start(t, webhook.WorkerConfig{})
	ctx := context.Background()
	ops := as(t, env, admin)
	own, copied := newReceiver(t, nil), newReceiver(t, nil)
	a := createEndpoint(t, ops, own.URL, 0, "booking.confirmed")
	b := createEndpoint(t, ops, copied.URL, 0, "booking.confirmed").GetEndpoint().GetEndpointId()
	stored, _ := storedSecrets(t, env, a.GetEndpoint().GetEndpointId())
	_, err := env.App.Router.Catalog().Exec(ctx, `UPDATE webhook_endpoints SET secret = $2 WHERE endpoint_id = $1`, b, stored)
	require.NoError(t, err)

	order := book(t, env, freeShow(t, env, 2), 1)
	require.Eventually(t, func() bool { return len(tries(own, "booking.confirmed", order)) == 1 }, 30*time.Second, 20*time.Millisecond)
	require.NoError(t, verify(t, a.GetSecret(), tries(own, "booking.confirmed", order)[0]))
	require.Eventually(t, func() bool {
		d := deliveries(t, ops, b)
		return len(d) == 1 && d[0].GetAttempts() >= 2 && d[0].GetStatus() == partnerv1.DeliveryStatus_DELIVERY_STATUS_PENDING
	}, 30*time.Second, 20*time.Millisecond, "the copied secret does not open: attempts fail")
	require.Empty(t, copied.all(), "nothing sent with the copied secret")
}

// TestResealBindsColumnSealedSecretsToTheirRow (decision 0279): a secret
// sealed the way decision 0273 did (bound to the column only) still signs;
// Reseal binds it to its row, after which it opens only there, and a
// second Reseal has nothing to do.
func TestResealBindsColumnSealedSecretsToTheirRow(t *testing.T) {
	env := start(t, webhook.WorkerConfig{})
	ctx := context.Background()
	ops := as(t, env, admin)
	rc := newReceiver(t, nil)
	ep := createEndpoint(t, ops, rc.URL, 0, "booking.confirmed")
	id := ep.GetEndpoint().GetEndpointId()
	const previous = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw6e4mR0yJ9aU="
	box := env.App.Seal
	oldSecret, err := box.Seal(ep.GetSecret(), "webhook_endpoints.secret")
	require.NoError(t, err)
	oldPrevious, err := box.Seal(previous, "webhook_endpoints.secret")
	require.NoError(t, err)
	_, err = env.App.Router.Catalog().Exec(ctx, `UPDATE webhook_endpoints SET secret = $2, previous_secret = $3,
		previous_secret_expires_at = now() + interval '1 hour' WHERE endpoint_id = $1`, id, oldSecret, oldPrevious)
	require.NoError(t, err)

	show := freeShow(t, env, 2)
	first := book(t, env, show, 1)
	require.Eventually(t, func() bool { return len(tries(rc, "booking.confirmed", first)) == 1 }, 30*time.Second, 20*time.Millisecond)
	g := tries(rc, "booking.confirmed", first)[0]
	require.NoError(t, verify(t, ep.GetSecret(), g), "a column-sealed secret still signs")
	require.NoError(t, verify(t, previous, g))

	n, err := env.App.Webhooks.Reseal(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	stored, prev := storedSecrets(t, env, id)
	require.NotNil(t, prev)
	for v, want := range map[string]string{stored: ep.GetSecret(), *prev: previous} {
		_, err := box.Open(v, "webhook_endpoints.secret")
		require.Error(t, err, "no longer bound to the column only")
		plain, err := box.Open(v, "webhook_endpoints.secret:"+strconv.FormatInt(id, 10))
		require.NoError(t, err)
		require.Equal(t, want, plain)
	}
	n, err = env.App.Webhooks.Reseal(ctx)
	require.NoError(t, err)
	require.Zero(t, n)

	second := book(t, env, show, 2)
	require.Eventually(t, func() bool { return len(tries(rc, "booking.confirmed", second)) == 1 }, 30*time.Second, 20*time.Millisecond)
	require.NoError(t, verify(t, ep.GetSecret(), tries(rc, "booking.confirmed", second)[0]))
}

// TestRetryAnswersASecretSealedBeforeRowBinding (decision 0279): the
// idempotency record of a create made before secrets were bound to their
// row holds the secret sealed to the column only; a retry still answers
// it.
func TestRetryAnswersASecretSealedBeforeRowBinding(t *testing.T) {
	env := start(t, webhook.WorkerConfig{})
	ctx := context.Background()
	ops := as(t, env, admin)
	create := func() *partnerv1.CreateEndpointResponse {
		req := connect.NewRequest(&partnerv1.CreateEndpointRequest{Url: "https://ops.example/hooks", EventTypes: []string{"booking.confirmed"}})
		req.Header().Set("Idempotency-Key", "create-before-binding")
		resp, err := ops.hooks.CreateEndpoint(ctx, req)
		require.NoError(t, err)
		return resp.Msg
	}
	first := create()
	stored, _ := storedSecrets(t, env, first.GetEndpoint().GetEndpointId())
	old, err := env.App.Seal.Seal(first.GetSecret(), "webhook_endpoints.secret")
	require.NoError(t, err)
	tag, err := env.App.Router.Catalog().Exec(ctx, `
		UPDATE idempotency_keys SET outcome = convert_to(replace(convert_from(outcome, 'UTF8'), $1, $2), 'UTF8')
		WHERE key = 'create-before-binding'`, stored, old)
	require.NoError(t, err)
	require.Equal(t, int64(1), tag.RowsAffected())

	again := create()
	require.Equal(t, first.GetSecret(), again.GetSecret())
	require.Equal(t, first.GetEndpoint().GetEndpointId(), again.GetEndpoint().GetEndpointId())
}
