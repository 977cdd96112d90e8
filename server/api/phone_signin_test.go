package api_test

import (
	"context"
	"regexp"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	bookingv1 "github.com/seatghor/seatghor/gen/seatghor/booking/v1"
	"github.com/seatghor/seatghor/gen/seatghor/booking/v1/bookingv1connect"
	signinv1 "github.com/seatghor/seatghor/gen/seatghor/signin/v1"
	"github.com/seatghor/seatghor/gen/seatghor/signin/v1/signinv1connect"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
)

// TestPhoneSignInThroughTheAPI: with no credential, a buyer asks for a
// code, reads it from the SMS (the sandbox), and gets a token the API
// takes; a wrong code is invalid on its field; asking again at once is
// RATE_LIMITED with Retry-After (decision 0436).
func TestPhoneSignInThroughTheAPI(t *testing.T) {
	env := apptest.New(t, apptest.Options{Shards: 1})
	ctx := context.Background()
	anon := signinv1connect.NewPhoneSignInServiceClient(env.HTTP, env.URL)
	send := connect.NewRequest(&signinv1.SendCodeRequest{Phone: "01711-555666", Language: "en"})
	send.Header().Set(keyHeader, newKey())
	sent, err := anon.SendCode(ctx, send)
	require.NoError(t, err)
	require.Equal(t, "+8801711555666", sent.Msg.GetPhone())
	msgs, err := env.SMS.List(ctx, "+8801711555666", 1)
	require.NoError(t, err)
	code := regexp.MustCompile(`[0-9]{6}`).FindString(msgs[0].Text)

	verify := func(code string) (*signinv1.VerifyCodeResponse, error) {
		req := connect.NewRequest(&signinv1.VerifyCodeRequest{Phone: "01711555666", Code: code})
		req.Header().Set(keyHeader, newKey())
		resp, err := anon.VerifyCode(ctx, req)
		if err != nil {
			return nil, err
		}
		return resp.Msg, nil
	}
	wrong := "000000"
	if code == wrong {
		wrong = "111111"
	}
	_, err = verify(wrong)
	got := answerOf(t, err)
	require.Equal(t, connect.CodeInvalidArgument, got.code)
	require.Equal(t, []string{"code"}, got.fields)
	tok, err := verify(code)
	require.NoError(t, err)

	orders := bookingv1connect.NewOrderServiceClient(env.HTTP, env.URL)
	list := connect.NewRequest(&bookingv1.ListMyOrdersRequest{})
	list.Header().Set("Authorization", "Bearer "+tok.GetToken())
	_, err = orders.ListMyOrders(ctx, list)
	require.NoError(t, err, "the token is a buyer's")

	again := connect.NewRequest(&signinv1.SendCodeRequest{Phone: "01711555666"})
	again.Header().Set(keyHeader, newKey())
	_, err = anon.SendCode(ctx, again)
	require.Equal(t, connect.CodeResourceExhausted, connect.CodeOf(err), "%v", err)
	require.Equal(t, "RATE_LIMITED", answerOf(t, err).reason)
}
