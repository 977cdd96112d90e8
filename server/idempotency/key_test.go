package idempotency_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/idempotency"
)

// TestNewKey: the key's checks, its scope and its fingerprint, as the edge
// asks for them.
func TestNewKey(t *testing.T) {
	ctx := auth.WithPrincipal(context.Background(), auth.Principal{UserID: "rumana", Role: auth.RoleUser})
	msg := wrapperspb.String("A1")
	const proc = "/seatghor.booking.v1.HoldService/CreateHold"

	for _, tc := range []struct {
		name string
		ctx  context.Context
		raw  string
		want error
	}{
		{"no key", ctx, "", idempotency.ErrKeyMissing},
		{"too long", ctx, strings.Repeat("k", idempotency.MaxKeyLen+1), idempotency.ErrKeyTooLong},
		{"no caller", context.Background(), "k1", idempotency.ErrNoCaller},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := idempotency.NewKey(tc.ctx, tc.raw, proc, msg)
			require.ErrorIs(t, err, tc.want)
		})
	}

	k, err := idempotency.NewKey(ctx, strings.Repeat("k", idempotency.MaxKeyLen), proc, msg)
	require.NoError(t, err, "a key of MaxKeyLen bytes is taken")
	require.Equal(t, "rumana", k.Scope)
	require.Equal(t, proc, k.Procedure)

	same, err := idempotency.NewKey(ctx, "k1", proc, wrapperspb.String("A1"))
	require.NoError(t, err)
	require.Equal(t, k.Fingerprint, same.Fingerprint, "the fingerprint is the request's, not the key's")
	other, err := idempotency.NewKey(ctx, "k1", proc, wrapperspb.String("A2"))
	require.NoError(t, err)
	require.NotEqual(t, same.Fingerprint, other.Fingerprint, "another request")
	otherProc, err := idempotency.NewKey(ctx, "k1", "/seatghor.payment.v1.PaymentService/StartPayment", msg)
	require.NoError(t, err)
	require.NotEqual(t, same.Fingerprint, otherProc.Fingerprint, "another procedure")
}
