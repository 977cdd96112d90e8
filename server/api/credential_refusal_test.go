package api_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	partnerv1 "github.com/seatghor/seatghor/gen/seatghor/partner/v1"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
)

// TestCredentialRefusalsSayWhy (issue 29, errors a partner can act on): a
// revoked key, an expired token, a malformed key and a live key on a test
// server each get their own reason through the real handlers, where a
// forged token or key is still refused with nothing more said
// (TOKEN_INVALID), and the message of a key of the wrong mode names the
// server's.
func TestCredentialRefusalsSayWhy(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 1})
	ctx := context.Background()
	show := createShow(t, env, seatedShow("Refusals", 1, 4))
	p := newPartner(t, env, "Travel desk", 100)
	get := func(credential string) error {
		_, err := withBearer(env, credential).catalog.GetShow(ctx, connect.NewRequest(&catalogv1.GetShowRequest{ShowId: show.GetShowId()}))
		return err
	}

	revoked := newAPIKey(t, env, p.GetPartnerId(), partnerv1.ApiKeyScope_API_KEY_SCOPE_BOOKING)
	require.NoError(t, get(revoked.GetSecret()))
	_, err := withBearer(env, partnerToken(t, env, p.GetPartnerId())).partners.RevokeApiKey(ctx,
		connect.NewRequest(&partnerv1.RevokeApiKeyRequest{KeyId: revoked.GetApiKey().GetKeyId()}))
	require.NoError(t, err)

	live, err := withBearer(env, partnerToken(t, env, p.GetPartnerId())).partners.CreateApiKey(ctx, connect.NewRequest(
		&partnerv1.CreateApiKeyRequest{PartnerId: p.GetPartnerId(), Name: "production", Mode: partnerv1.ApiKeyMode_API_KEY_MODE_LIVE}))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(live.Msg.GetSecret(), "sk_live_"))

	expired, err := env.App.Tokens.MintPrincipal(auth.Principal{UserID: "staff-of-partner", Role: auth.RolePartner,
		PartnerID: p.GetPartnerId()}, -time.Minute)
	require.NoError(t, err)
	good := env.Token(t, "rumana", auth.RoleUser)
	forged := good[:strings.LastIndex(good, ".")+1] + strings.Repeat("A", 43)
	expiredForged := expired[:strings.LastIndex(expired, ".")+1] + strings.Repeat("A", 43)
	unknownKey := "sk_test_" + strings.Repeat("b", 52)

	for name, tc := range map[string]struct{ credential, reason string }{
		"a revoked key":               {revoked.GetSecret(), "API_KEY_REVOKED"},
		"an expired token":            {expired, "TOKEN_EXPIRED"},
		"a key cut short":             {revoked.GetSecret()[:30], "API_KEY_MALFORMED"},
		"a key in quotes":             {`"` + revoked.GetSecret() + `"`, "API_KEY_MALFORMED"},
		"a live key on a test server": {live.Msg.GetSecret(), "API_KEY_WRONG_MODE"},
		"a forged token":              {forged, "TOKEN_INVALID"},
		"an expired forged token":     {expiredForged, "TOKEN_INVALID"},
		"a key never issued":          {unknownKey, "TOKEN_INVALID"},
	} {
		t.Run(name, func(t *testing.T) {
			err := get(tc.credential)
			requireReason(t, err, connect.CodeUnauthenticated, tc.reason)
			if tc.reason == "API_KEY_WRONG_MODE" {
				require.Contains(t, err.Error(), "this server takes test keys (sk_test_…), not live keys")
			}
			// The same on a write, where the key's scope is checked too.
			_, err = withBearer(env, tc.credential).holds.CreateHold(ctx, connect.NewRequest(
				&bookingv1.CreateHoldRequest{ShowId: show.GetShowId(), Seats: []string{"A1"}}))
			requireReason(t, err, connect.CodeUnauthenticated, tc.reason)
		})
	}
}
